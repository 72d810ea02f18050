/*
 * The trust store of one token: the files of one configured path, read
 * into entries (certificates, stapled extensions, revocations), and the
 * PKCS#11 objects derived from them.
 *
 * Objects are not stored as attribute lists: each is a small record
 * (kind, entry, purpose) and its attributes are computed on request from
 * the entry, whose large values are views into the DER read from the
 * file. Searches use a class index and a hash index of (type, value)
 * for CKA_ID, CKA_SUBJECT, CKA_ISSUER+CKA_SERIAL_NUMBER, CKA_VALUE,
 * CKA_CERT_SHA1_HASH and CKA_LABEL.
 *
 * Not thread-safe: the module holds its lock around every call.
 */
#ifndef PG_TRUST_STORE_H
#define PG_TRUST_STORE_H

#include "der.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <stdint.h>
#include <sys/types.h>

/* How a file's location says to trust what it holds. */
enum { PG_SRC_PLAIN = 0, PG_SRC_ANCHOR = 1, PG_SRC_DISTRUST = 2 };

enum {
	PG_ENTRY_CERT = 1,      /* a certificate read from a file */
	PG_ENTRY_EXT,           /* a stapled extension (persistence format) */
	PG_ENTRY_REVOKED,       /* issuer + serial distrusted without the certificate */
	PG_ENTRY_CRL            /* a CRL in use (ext_value holds its DER) */
};

#define PG_N_PURPOSES 8
extern const char *const pg_std_purposes[PG_N_PURPOSES];

typedef struct pg_entry pg_entry;
struct pg_entry {
	int kind;
	const char *origin;            /* the file (owned by its source) */
	pg_span label;                 /* view or into label_owned */
	char *label_owned;
	int src_trust;                 /* PG_SRC_* of this copy */
	bool explicit_trust;           /* trusted/x-distrusted given by the file */
	bool trusted, distrusted;      /* this copy, after "distrust wins" */
	bool anchored;                 /* some copy anchors it, none distrusts it */
	bool primary;                  /* first copy of this DER in the token */

	/* PG_ENTRY_CERT */
	pg_cert cert;
	unsigned char sha1[20], md5[16], spki_sha1[20];
	char start[8], end[8];
	bool has_dates;
	CK_ULONG category;
	CK_ULONG nss[15];              /* CKA_TRUST_DIGITAL_SIGNATURE .. TIME_STAMPING */
	char **trust_oids;             /* restricted purposes (NULL: unrestricted) */
	size_t n_trust;
	bool restricted;
	char **reject_oids;
	size_t n_reject;
	unsigned char *eku_ext, *rej_ext;      /* stapled Extension DER (owned) */
	size_t eku_ext_len, rej_ext_len;

	/* PG_ENTRY_EXT: the extension, its OID and the key it is stapled to */
	pg_span ext_value, ext_oid, ext_spki;
	unsigned char ext_id[20];

	/* PG_ENTRY_REVOKED and CERT: issuer and serial */
	pg_span issuer, serial;
};

/* One file read into entries, kept while its mtime and size stay. */
typedef struct {
	char *path;
	int src_trust;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	unsigned char *data;           /* the file's bytes */
	unsigned char **blobs;         /* decoded DER blocks (owned) */
	size_t n_blobs;
	pg_entry *entries;
	size_t n_entries;
	/* CRLs found in the file (DER views into data or blobs) */
	pg_span *crls;
	size_t n_crls;
	bool seen;                     /* still present at the last scan */
} pg_source;

enum {
	PG_OBJ_CERT = 1, PG_OBJ_NSS_TRUST, PG_OBJ_ANCHORED, PG_OBJ_DISTRUSTED,
	PG_OBJ_EXT, PG_OBJ_ROOT_LIST, PG_OBJ_REV_CERT, PG_OBJ_REV_NSS,
	PG_OBJ_REV_ASSERT, PG_OBJ_CRL
};

typedef struct {
	uint8_t kind;
	uint8_t purpose;               /* assertion: index into the purpose list */
	uint8_t purpose_list;          /* 0 standard, 1 trust_oids, 2 reject_oids */
	pg_entry *entry;
} pg_object;

typedef struct pg_store pg_store;

/*
 * A store for one path (a file or a directory with anchors/, blocklist/,
 * crls/). Nothing is read until pg_store_refresh.
 */
pg_store *pg_store_new(const char *path);
void pg_store_free(pg_store *store);

/*
 * Brings the objects up to date with the files: sources whose mtime or
 * size changed are read again, others kept. Returns true when the object
 * list was rebuilt (handles from before are then invalid).
 */
bool pg_store_refresh(pg_store *store);

const char *pg_store_path(const pg_store *store);
/* "System Trust", "Default Trust" or the path's last component. */
const char *pg_store_label(const pg_store *store);
/* A directory that we may write to (not under /usr except /usr/local). */
bool pg_store_writable(const pg_store *store);

size_t pg_store_count(const pg_store *store);
const pg_object *pg_store_object(const pg_store *store, size_t index);

/*
 * The value of one attribute of an object: true with *value and *len
 * (value valid until the next refresh), false when the object has no
 * such attribute.
 */
bool pg_object_attr(const pg_store *store, const pg_object *obj,
                    CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len);

/*
 * Objects matching a template: appends their indexes to *out (grown with
 * realloc). Uses the indexes when the template has an indexed attribute.
 */
bool pg_store_find(const pg_store *store, const CK_ATTRIBUTE *tmpl, CK_ULONG n,
                   size_t **out, size_t *n_out) PG_MUST_CHECK;

/*
 * Writes an object into the store's directory as a persistence-format
 * file (certificate with trust, or a stapled extension). Errors as CK_RV.
 */
CK_RV pg_store_create(pg_store *store, const CK_ATTRIBUTE *tmpl, CK_ULONG n);
/* Removes the file that holds the object (when it holds only that). */
CK_RV pg_store_destroy(pg_store *store, size_t index);

/* ---------------------------------------------------------------------------
 * Reading files (parse.c): for the store, the tools and the fuzz targets.
 */

/*
 * Reads one file's bytes into src (entries, CRLs). Problems (a corrupt
 * block, a bad DER file) are reported with pg_message as "FILE:LINE: ..."
 * and skipped. Returns false only when out of memory.
 */
bool pg_source_parse(pg_source *src, const unsigned char *data, size_t len);
void pg_source_clear(pg_source *src);

/* Fills the derived fields of a certificate entry (hashes, dates, label). */
void pg_entry_cert_derive(pg_entry *e);

/* Parses the persistence format ([p11-kit-object-v1] sections). */
bool pg_persist_parse(pg_source *src, const unsigned char *data, size_t len);

/*
 * Writes a certificate in the persistence format into buf: trusted and
 * distrusted flags, label, then the PEM block.
 */
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

/* SHA-1 and MD5 through libcrypto; cleanup frees the fetched methods. */
void pg_digest_cleanup(void);
void pg_sha1(const void *data, size_t len, unsigned char out[20]);
void pg_md5(const void *data, size_t len, unsigned char out[16]);

#endif /* PG_TRUST_STORE_H */
