/*
 * The trust store of one token: the files of one configured path, read
 * into entries (certificates, stapled extensions, revocations, stored
 * objects; format/trust-format.h), and the PKCS#11 objects derived from
 * them, their trust (trust.c), CRL checks (crl.c) and writing (write.c).
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

#include "trust-format.h"

#include <p11glue/pkcs11.h>

#include <stdint.h>

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
	unsigned create_mode;          /* a default directory, made with this mode on
	                                * the first write; 0 for a configured path */
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
/*
 * A store for one of the default writable directories (common/trust-dirs.h),
 * labelled label: a directory, even before it exists, writable when it
 * could be made, and made (with its missing parents, mode) on the first
 * write.
 */
pg_tstore *pg_tstore_new_default(const char *path, const char *label, unsigned mode);
/* Makes a default directory that is missing (and its parents); true when
 * it exists afterwards. */
bool pg_tstore_make_dir(const pg_tstore *store);
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
/* A directory that we may write to (not under /usr except /usr/local),
 * or a default directory that we may make. */
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
