/*
 * The trust files read into entries, and written: PEM bundles, OpenSSL's
 * TRUSTED CERTIFICATE, DER certificates and CRLs (parse.c), and the
 * persistence format of stored objects (persist.c, names in nicks.h).
 * A file becomes a pg_source holding pg_entry records (certificates,
 * stapled extensions, revocations, other stored objects) whose large
 * values are views into the file's bytes or into blocks it decoded.
 *
 * Deciding what the entries mean (trust, PKCS#11 objects) is the trust
 * store's (src/trust/trust-store.h); this part only reads and writes.
 * Not thread-safe: one source is read by one thread.
 */
#ifndef PG_TRUST_FORMAT_H
#define PG_TRUST_FORMAT_H

#include "der.h"
#include "digest.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

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

/*
 * One thing a file holds. The readers fill kind, src_trust, origin,
 * label and the fields of the kind; the trust fields (trusted through
 * own_nss, category, nss, purposes, rejects) are the trust store's,
 * which sets them when it decides (pg_trust_compute, src/trust).
 */
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

/* One file read into entries. dev, ino, mtime, size and seen are the
 * trust store's, which keeps a source while its file stays the same. */
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

/* ---------------------------------------------------------------------------
 * Sources (source.c), reading files (parse.c) and the persistence format
 * (persist.c): for the store, the tools and the fuzz targets.
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
/* The same as a file of its own, as the trust module writes one: a
 * comment line saying so, then the object. */
void pg_persist_write_file(pg_buf *buf, const CK_ATTRIBUTE *attrs, CK_ULONG n);
/* A certificate with trust flags and label, as the writers store it. */
void pg_persist_write_cert(pg_buf *buf, const unsigned char *der, size_t len,
                           const char *label, size_t label_len,
                           bool trusted, bool distrusted);

/* ---------------------------------------------------------------------------
 * Directories (dirs.c)
 */

/*
 * mkdir -p of dir: what is missing is made with mode (exact_mode: then
 * set to mode, whatever the umask); what is there must be a directory.
 * A failure is reported with pg_message. Thread-safe.
 */
bool pg_trust_make_dirs(const char *dir, mode_t mode, bool exact_mode);

/* ---------------------------------------------------------------------------
 * Templates (template.c): attribute arrays as PKCS#11 passes them. The
 * first attribute of a type counts; a NULL value counts as absent.
 */

/* The attribute `type` of attrs[n], or NULL. */
const CK_ATTRIBUTE *pg_template_find(const CK_ATTRIBUTE *attrs, CK_ULONG n,
                                     CK_ATTRIBUTE_TYPE type);
/* Its CK_ULONG value into *out; false when absent or of another size. */
bool pg_template_ulong(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type,
                       CK_ULONG *out);
/* Its CK_BBOOL value: 1 true, 0 false, -1 absent or of another size. */
int pg_template_bool(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type);

#endif /* PG_TRUST_FORMAT_H */
