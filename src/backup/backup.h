/*
 * `p11glue backup` and `p11glue restore` without their command line: a
 * user's p11glue state (the store's tokens, the trust decisions, the
 * registry files and which setup targets are configured) as one file
 * sealed with a passphrase, and that file put back on another machine.
 *
 * The file (format.c, seal.c; docs/DESIGN.md "Backups"):
 *
 *   header (88 bytes)   magic "P11GBAK\n", version 1, KDF 1 (scrypt),
 *                       AEAD 1 (AES-256-GCM), chunk size log2, scrypt
 *                       log2 N, r, p, a reserved 0, a 32-byte salt;
 *                       HMAC-SHA-256 of those 48 bytes under a key
 *                       derived from the passphrase (a wrong one shows
 *                       here); the first 8 bytes of SHA-256 of the 80
 *                       before (a damaged header shows here)
 *   chunks              u32 (big-endian) length | last << 31, then the
 *                       AES-256-GCM ciphertext and its 16-byte tag;
 *                       nonce: u64 chunk index | u32 last; associated
 *                       data: the header and the length word
 *
 * The chunks carry a stream of records, cut anywhere: u8 kind, u16 name
 * length, the name, u32 mode, u64 size, the data; one END record closes
 * it, in the chunk marked last, and nothing follows.
 *
 * Token databases go in as SQLite made them (the online backup API: a
 * consistent snapshot, the write-ahead log included); what they hold is
 * sealed as at rest. Problems are printed as "p11glue: ..." and returned
 * as PG_EXIT_* codes.
 */
#ifndef PG_BACKUP_H
#define PG_BACKUP_H

#include "common.h"
#include "setup.h"

#include <stdint.h>

/* ---------------------------------------------------------------------------
 * The format (format.c): parsers of untrusted bytes, also for the fuzzer
 */
#define PG_BACKUP_MAGIC "P11GBAK\n"
#define PG_BACKUP_VERSION 1
#define PG_BACKUP_HEADER_LEN 88
#define PG_BACKUP_SALT_LEN 32
#define PG_BACKUP_TAG_LEN 16
#define PG_BACKUP_CHECK_OFFSET 48     /* the HMAC, of the bytes before it */
#define PG_BACKUP_SUM_OFFSET 80       /* the checksum, of the bytes before it */
#define PG_BACKUP_NAME_MAX 1024

/* Bounds a reader accepts (a header past them is refused before any
 * work): scrypt needs 128 * r * 2^log2n bytes, here at most 1 GiB. */
#define PG_BACKUP_LOG2N_MIN 10
#define PG_BACKUP_LOG2N_MAX 22
#define PG_BACKUP_LOG2N_DEFAULT 17
#define PG_BACKUP_MEM_MAX (1ULL << 30)
#define PG_BACKUP_CHUNK_LOG2_MIN 10
#define PG_BACKUP_CHUNK_LOG2_MAX 24
#define PG_BACKUP_CHUNK_LOG2 18

typedef enum {
	PG_BACKUP_END = 0,
	PG_BACKUP_TOKEN = 1,          /* name token-N.sqlite: a database image */
	PG_BACKUP_TRUST = 2,          /* a file of the trust directory */
	PG_BACKUP_REGISTRY = 3,       /* a file of the registry directory */
	PG_BACKUP_SETUP = 4,          /* name a setup target; data its state line,
	                               * then "proxy" when it names the proxy */
	PG_BACKUP_KIND_MAX = 4
} pg_backup_kind;

typedef struct {
	uint8_t version, kdf, aead, chunk_log2, log2n, r, p;
	uint8_t salt[PG_BACKUP_SALT_LEN];
	uint8_t bytes[PG_BACKUP_HEADER_LEN];   /* as read: associated data */
} pg_backup_header;

typedef enum {
	PG_BACKUP_HDR_OK,
	PG_BACKUP_HDR_SHORT,          /* fewer bytes than a header */
	PG_BACKUP_HDR_MAGIC,          /* not a backup */
	PG_BACKUP_HDR_VERSION,        /* a version (or KDF, AEAD) this one cannot read */
	PG_BACKUP_HDR_DAMAGED,        /* the checksum does not match */
	PG_BACKUP_HDR_PARAMS          /* parameters out of bounds */
} pg_backup_hdr_status;

/* Parses a header from len bytes at data; h gets its fields and bytes. */
pg_backup_hdr_status pg_backup_header_parse(pg_backup_header *h, const uint8_t *data, size_t len);

/* Fills the header's bytes from its fields and check (the HMAC seal.c
 * computes over the bytes before it), and the checksum. */
void pg_backup_header_format(pg_backup_header *h, const uint8_t check[32]);

/* The encoding of a record's start (kind, name, mode, size) into out,
 * which holds 15 + PG_BACKUP_NAME_MAX bytes; returns its length. */
size_t pg_backup_record_head(uint8_t *out, pg_backup_kind kind, const char *name, uint32_t mode,
                             uint64_t size);

/* Checks a record name of its kind: a token file name token-N.sqlite, a
 * setup target name, or a relative path of 1 to 4 parts, none empty nor
 * starting with '.', of printable characters but '/' between parts. */
bool pg_backup_name_ok(pg_backup_kind kind, const char *name);

/*
 * A push parser of the record stream: bytes are fed as they are
 * decrypted, in pieces of any size; it calls begin for each record
 * (name NUL-terminated and checked), data for each piece of its data,
 * and end after its last byte. A callback returning false, or bad
 * input, stops it: the error sticks and says why (a fixed text).
 */
typedef struct {
	bool (*begin)(void *data, pg_backup_kind kind, const char *name, uint32_t mode, uint64_t size);
	bool (*data)(void *data, const uint8_t *bytes, size_t len);
	bool (*end)(void *data);
	void *user;
	/* Parser state. */
	uint8_t head[15 + PG_BACKUP_NAME_MAX + 1];
	size_t have;                 /* bytes of head read */
	size_t need;                 /* bytes of head needed (0: in a record's data) */
	uint64_t left;               /* data bytes of the current record */
	bool ended;                  /* the END record was read */
	const char *error;           /* NULL, or why it stopped */
} pg_backup_parser;

void pg_backup_parser_init(pg_backup_parser *p);
/* Feeds len bytes; false when it stopped (p->error). Bytes after the
 * END record are an error. */
bool pg_backup_parser_feed(pg_backup_parser *p, const uint8_t *bytes, size_t len);
/* At the end of the stream: true when the END record closed it. */
bool pg_backup_parser_finish(pg_backup_parser *p);

/* ---------------------------------------------------------------------------
 * What a backup holds, or what a restore did (backup.c, restore.c)
 */
typedef struct {
	pg_backup_kind kind;
	char *name;                   /* as in the record */
	uint64_t size;
	uint32_t mode;
	char label[33];               /* tokens: blank padding removed */
	char serial[17];
	char *state;                  /* setup: the state status gave */
	bool proxy;                   /* setup: it names the proxy */
	const char *action;           /* restore: what became of it (static text) */
	char *detail;                 /* restore: the new name, the label ... */
	pg_buf data;                  /* restore: trust and registry files */
	char *staged;                 /* restore: a token's staged file */
} pg_backup_item;

typedef struct {
	pg_backup_item *items;
	size_t n, cap;
	uint64_t bytes;               /* the file's length */
	unsigned log2n, r, p;
	pg_buf notes;                 /* messages for the user, one a line */
} pg_backup_manifest;

/* Frees the items and notes (staged files are not removed here). */
void pg_backup_manifest_clear(pg_backup_manifest *m);
/* Adds an item (name copied); NULL when out of memory. */
pg_backup_item *pg_backup_manifest_add(pg_backup_manifest *m, pg_backup_kind kind, const char *name);
/* Adds a line to m->notes and prints it as a message. */
void pg_backup_note(pg_backup_manifest *m, const char *fmt, ...) PG_PRINTF(2, 3);

/* ---------------------------------------------------------------------------
 * Backing up and restoring
 */
typedef struct {
	const char *store_dir;        /* NULL: $P11GLUE_STORE_DIR or the user's */
	const uint8_t *pass;          /* the passphrase, pass_len bytes */
	size_t pass_len;
	unsigned log2n;               /* scrypt cost; 0: PG_BACKUP_LOG2N_DEFAULT */
	bool progress;                /* a progress line on standard error */
	const pg_setup_env *setup;    /* what status is asked with */
} pg_backup_opts;

/*
 * Writes a backup of the user's state to out (the caller commits or
 * aborts the file) and lists what went in into m. Returns an exit code;
 * on failure what was written must be thrown away.
 */
int pg_backup_write(const pg_backup_opts *opts, FILE *out, pg_backup_manifest *m);

typedef enum {
	PG_RESTORE_REFUSE,            /* a token that is there already: refused */
	PG_RESTORE_REPLACE,           /* replaced (and files of the user's too) */
	PG_RESTORE_BESIDE             /* put beside it with a new label and serial */
} pg_restore_existing;

typedef struct {
	const char *store_dir;        /* NULL: as for backups */
	const uint8_t *pass;
	size_t pass_len;
	pg_restore_existing existing;
	bool no_setup;                /* leave the setup targets alone */
	bool progress;
	const pg_setup_env *setup;    /* how setup is re-run (trust_compat) */
} pg_restore_opts;

/*
 * Restores the backup in fd (named path in messages): the whole file is
 * read, decrypted and checked into a private directory beside the store
 * first; then, unless something is in the way (see existing), each token
 * is put in place whole, the trust and registry files are written, and
 * setup is re-run for the targets the backup recorded as configured. A
 * refusal or failure before that changes nothing. m says what became of
 * each item. Returns an exit code.
 */
int pg_restore_read(const pg_restore_opts *opts, int fd, const char *path, pg_backup_manifest *m);

#endif /* PG_BACKUP_H */
