/*
 * The trust store of one token: the files of one configured path, read
 * into entries (certificates, stapled extensions, revocations, stored
 * objects), and the PKCS#11 objects derived from them.
 *
 * Objects are not stored as attribute lists: each is a small record
 * (kind, entry, purpose) and its attributes are computed on request from
 * the entry, whose large values are views into the DER read from the
 * file. Digests are computed when first asked for. Searches use indexes
 * of (type, value), built per attribute type on the first search by it.
 *
 * Not thread-safe: the module holds its lock around every call.
 */
#ifndef PG_TRUST_STORE_H
#define PG_TRUST_STORE_H

#include "der.h"
#include "digest.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <stdint.h>
#include <sys/types.h>

/* How a file's location says to trust what it holds. */
enum { PG_SRC_PLAIN = 0, PG_SRC_ANCHOR = 1, PG_SRC_DISTRUST = 2 };

enum {
	PG_ENTRY_CERT = 1,      /* a certificate read from a file */
	PG_ENTRY_EXT,           /* a stapled certificate extension */
	PG_ENTRY_REVOKED,       /* issuer + serial distrusted without the certificate */
	PG_ENTRY_CRL,           /* a CRL in use (ext_value holds its DER) */
	PG_ENTRY_STORED         /* any other object of the persistence format */
};

/* The eight extended key usages of NSS trust objects, in CKA_TRUST order. */
#define PG_N_PURPOSES 8
extern const char *const pg_std_purposes[PG_N_PURPOSES];

/* Digests of an entry, computed on first use (pg_entry_*()). */
enum { PG_HAVE_SHA1 = 1, PG_HAVE_MD5 = 2, PG_HAVE_SPKI_SHA1 = 4 };

/* An attribute of a stored object: its value is a view (see pg_source). */
typedef struct {
	CK_ATTRIBUTE_TYPE type;
	const unsigned char *value;
	CK_ULONG len;
} pg_attr;

/* An attribute value: len is CK_UNAVAILABLE_INFORMATION when absent. */
typedef struct {
	const void *p;
	CK_ULONG len;
} pg_value;

/* A list of purposes (dotted OIDs), owned by the entry that holds it. */
typedef struct {
	char **oids;
	size_t n;
} pg_oid_list;

typedef struct pg_entry pg_entry;
struct pg_entry {
	uint8_t kind;                  /* PG_ENTRY_* */
	uint8_t src_trust;             /* PG_SRC_* of this copy */
	uint8_t have;                  /* PG_HAVE_* */
	bool explicit_trust;           /* trusted/x-distrusted given by the file */
	bool trusted, distrusted;      /* this copy, after "distrust wins" */
	bool anchored;                 /* some copy anchors it, none distrusts it */
	bool primary;                  /* carries the NSS trust object and assertions */
	bool authority;                /* category 2 (stapled or own basicConstraints) */
	bool own_nss;                  /* a stored NSS trust object replaces ours */
	const char *origin;            /* the file (owned by its source) */
	pg_span label;                 /* view or into label_owned */
	char *label_owned;

	/* PG_ENTRY_CERT */
	pg_cert cert;
	unsigned char sha1[PG_SHA1_LEN], md5[PG_MD5_LEN], spki_sha1[PG_SHA1_LEN];
	char start[8], end[8];
	bool has_dates;
	CK_ULONG category;
	CK_ULONG nss[15];              /* CKA_TRUST_DIGITAL_SIGNATURE .. TIME_STAMPING */
	pg_oid_list own_eku;           /* the certificate's extKeyUsage, parsed */
	bool oids_ok;                  /* own_eku (CERT) or ext_oids (EXT) parsed */
	const pg_oid_list *purposes;   /* restricted purposes, NULL: every purpose */
	const pg_oid_list *rejects;    /* rejected purposes, NULL: none */

	/* PG_ENTRY_EXT: the Extension, its OID (TLV) and the key it is stapled to */
	pg_span ext_value, ext_oid, ext_spki;
	pg_oid_list ext_oids;          /* purposes, for extKeyUsage and reject */

	/* PG_ENTRY_REVOKED and CERT: issuer and serial */
	pg_span issuer, serial;

	/* PG_ENTRY_STORED (and PG_ENTRY_REVOKED from a file): the attributes */
	CK_OBJECT_CLASS klass;
	pg_attr *attrs;
	size_t n_attrs;
};

/* One file read into entries, kept while its mtime and size stay. */
typedef struct {
	char *path;
	int src_trust;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	unsigned char *data;           /* the file's bytes, kept when entries view them */
	unsigned char **blobs;         /* decoded values (owned) */
	size_t n_blobs;
	pg_entry *entries;
	size_t n_entries, cap_entries;
	size_t n_sections;             /* objects of a persistence-format file */
	/* CRLs found in the file (DER views into data or blobs) */
	pg_span *crls;
	size_t n_crls;
	bool seen;                     /* still present at the last scan */
} pg_source;

enum {
	PG_OBJ_CERT = 1, PG_OBJ_NSS_TRUST, PG_OBJ_ANCHORED, PG_OBJ_DISTRUSTED,
	PG_OBJ_EXT, PG_OBJ_ROOT_LIST, PG_OBJ_REV_CERT, PG_OBJ_REV_NSS,
	PG_OBJ_REV_ASSERT, PG_OBJ_CRL, PG_OBJ_STORED
};

/* Which purpose list an assertion's purpose indexes. */
enum { PG_LIST_STD = 0, PG_LIST_PURPOSES = 1, PG_LIST_REJECTS = 2 };

typedef struct {
	uint8_t kind;                  /* PG_OBJ_* */
	uint8_t list;                  /* assertion: PG_LIST_* */
	uint16_t purpose;              /* assertion: index into that list */
	bool stored;                   /* its entry keeps its file's attributes */
	pg_entry *entry;
} pg_object;

/* An index: (hash of the key's value, object index), sorted by hash. */
typedef struct {
	uint64_t hash;
	uint32_t obj;
} pg_index_slot;

#define PG_STORE_KEYS 9

/* A token's store. Its fields are trust-store.c's; they are here only so that
 * the object accessors below can be inline (the attribute-read path). */
typedef struct pg_tstore {
	char *path;
	char label[33];
	bool is_dir;
	pg_source *sources;
	size_t n_sources;
	bool built;
	pg_entry *revoked;             /* from CRLs, rebuilt with the objects */
	size_t n_revoked;
	pg_object *objects;
	size_t n_objects, cap_objects;
	pg_index_slot *index[PG_STORE_KEYS];
	size_t n_index[PG_STORE_KEYS];
} pg_tstore;

/*
 * A store for one path (a file or a directory with anchors/, blocklist/,
 * crls/). Nothing is read until pg_tstore_refresh.
 */
pg_tstore *pg_tstore_new(const char *path);
void pg_tstore_free(pg_tstore *store);

/*
 * Brings the objects up to date with the files: sources whose mtime or
 * size changed are read again, others kept. Returns true when the object
 * list was rebuilt (handles from before are then invalid).
 */
bool pg_tstore_refresh(pg_tstore *store);

const char *pg_tstore_path(const pg_tstore *store);
/* "System Trust", "Default Trust" or the path's last component. */
const char *pg_tstore_label(const pg_tstore *store);
/* A directory that we may write to (not under /usr except /usr/local). */
bool pg_tstore_writable(const pg_tstore *store);

static inline size_t
pg_tstore_count(const pg_tstore *store)
{
	return store->n_objects;
}

/* The object at index, or NULL past the end. */
static inline pg_object *
pg_tstore_object(pg_tstore *store, size_t index)
{
	return index < store->n_objects ? &store->objects[index] : NULL;
}

/* The source that holds an entry, or NULL (revocations from CRLs). */
const pg_source *pg_tstore_source_of(const pg_tstore *store, const pg_entry *e);

/*
 * The value of one attribute of an object (valid until the next
 * refresh). Computes and keeps digests on first use, hence not const.
 */
pg_value pg_object_value(pg_object *obj, CK_ATTRIBUTE_TYPE type);

/* The same as true with *value and *len, false when absent. */
static inline bool
pg_object_attr(pg_object *obj, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	pg_value v = pg_object_value(obj, type);

	*value = v.p;
	*len = v.len;
	return v.len != CK_UNAVAILABLE_INFORMATION;
}

/*
 * Objects matching a template: appends their indexes to *out (grown with
 * realloc). Uses an index when the template has an indexed attribute.
 */
bool pg_tstore_find(pg_tstore *store, const CK_ATTRIBUTE *tmpl, CK_ULONG n,
                   size_t **out, size_t *n_out) PG_MUST_CHECK;

/*
 * Writes an object into the store's directory as a persistence-format
 * file: a certificate (with trust, or a distrusted issuer and serial), a
 * stapled extension, an NSS trust object or a trust assertion. The store
 * is refreshed; *index gets the new object. Errors as CK_RV.
 */
CK_RV pg_tstore_create(pg_tstore *store, const CK_ATTRIBUTE *tmpl, CK_ULONG n, size_t *index);
/* Removes the file that holds the object (when it holds only that). */
CK_RV pg_tstore_destroy(pg_tstore *store, size_t index);

/* ---------------------------------------------------------------------------
 * Entries (trust-entry.c): digests on demand, derived fields.
 */

const unsigned char *pg_entry_sha1(pg_entry *e);
const unsigned char *pg_entry_md5(pg_entry *e);
/* SHA-1 of the SubjectPublicKeyInfo (a certificate's or a stapled one's). */
const unsigned char *pg_entry_spki_sha1(pg_entry *e);
/* A certificate's CKA_ID: its subjectKeyIdentifier, else the SPKI's SHA-1. */
pg_value pg_entry_cert_id(pg_entry *e);

/* Fills the derived fields of a certificate entry (dates, label, own EKU). */
bool pg_entry_cert_derive(pg_entry *e) PG_MUST_CHECK;
/* Frees what an entry owns (not the entry itself). */
void pg_entry_clear(pg_entry *e);

/* The attribute `type` of a stored object, or NULL. */
const pg_attr *pg_entry_attr(const pg_entry *e, CK_ATTRIBUTE_TYPE type);

/*
 * Appends the dotted purposes of an extKeyUsage-shaped value (SEQUENCE
 * OF OID) to out: 1 done, 0 malformed, -1 out of memory.
 */
int pg_oid_list_parse(const pg_span *value, pg_oid_list *out) PG_MUST_CHECK;
/* The same from the contents of the SEQUENCE (an implicitly tagged one). */
int pg_oid_list_parse_contents(const pg_span *contents, pg_oid_list *out) PG_MUST_CHECK;
void pg_oid_list_clear(pg_oid_list *list);
bool pg_oid_list_has(const pg_oid_list *list, const char *oid);

/* What the trust decisions of a token are made from (arrays are sorted). */
typedef struct {
	pg_entry **certs;              /* every certificate entry, in load order */
	size_t n_certs;
	pg_entry **exts;               /* stapled extensions, in load order */
	size_t n_exts;
	pg_entry **revoked;            /* issuer + serial distrusted (files, CRLs) */
	size_t n_revoked;
	pg_span *keys;                 /* SubjectPublicKeyInfos distrusted */
	size_t n_keys;
} pg_trust_input;

/*
 * Sets the trust of every certificate entry (trust.c): distrusted,
 * trusted, anchored, primary, authority, category, NSS values, purposes
 * and rejects. False when out of memory.
 */
bool pg_trust_compute(pg_trust_input *in) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Reading files (parse.c): for the store, the tools and the fuzz targets.
 */

/*
 * Reads one file's bytes into src (entries, CRLs). Takes data (allocated
 * with malloc): it is freed or kept in src->data. Problems (a corrupt
 * block, a bad DER file) are reported with pg_message as "FILE:LINE: ..."
 * and skipped. Returns false only when out of memory.
 */
bool pg_source_parse(pg_source *src, unsigned char *data, size_t len);
void pg_source_clear(pg_source *src);
/* Keeps a decoded value; false (value freed) when out of memory. */
bool pg_source_take(pg_source *src, unsigned char *blob) PG_MUST_CHECK;
/* A new entry of src, zeroed but for kind, origin and src_trust. */
pg_entry *pg_source_add(pg_source *src, int kind);

/* Parses the persistence format ([p11-kit-object-v1] sections). */
bool pg_persist_parse(pg_source *src, const unsigned char *data, size_t len);

/*
 * Writes one object in the persistence format: every attribute as
 * "name: value" (p11-kit's names and value forms), then a certificate's
 * value or a public key as PEM. Attributes the format never stores
 * (CKA_TOKEN, CKA_X_ORIGIN, CKA_X_GENERATED) are left out.
 */
void pg_persist_write(pg_buf *buf, const CK_ATTRIBUTE *attrs, CK_ULONG n);
/* A certificate with trust flags and label, as the writers store it. */
void pg_persist_write_cert(pg_buf *buf, const unsigned char *der, size_t len,
                           const char *label, size_t label_len,
                           bool trusted, bool distrusted);

/* CRLs (crl.c): checks each against the store's certificates. */
typedef struct {
	pg_span issuer;                /* Name TLV */
	pg_span *serials;              /* INTEGER TLVs */
	size_t n_serials;
} pg_crl_info;

/*
 * Verifies a DER CRL: signed by one of certs (matched by subject) and not
 * expired at `now`. On success fills info (serials allocated, views into
 * der). On failure *why says why (static text).
 */
bool pg_crl_check(const pg_span *der, const pg_cert *const *certs, size_t n_certs,
                  long long now, pg_crl_info *info, const char **why);
void pg_crl_info_clear(pg_crl_info *info);

#endif /* PG_TRUST_STORE_H */
