/*
 * The seal of a backup file (seal.c): keys derived from the passphrase
 * with scrypt, the header's check, and the chunks written and read with
 * AES-256-GCM. Private to src/backup.
 */
#ifndef PG_BACKUP_SEAL_H
#define PG_BACKUP_SEAL_H

#include "backup.h"

#include <openssl/evp.h>

typedef struct {
	pg_backup_header h;
	EVP_CIPHER_CTX *ctx;
	uint8_t key[32];             /* the payload key (wiped by clear) */
	uint64_t index;              /* the next chunk's number */
	uint8_t *buf;                /* a chunk's plaintext and room for its seal */
	size_t len;                  /* bytes of buf in use */
	size_t chunk;                /* plaintext bytes per chunk */
	FILE *out;                   /* writer */
	int fd;                      /* reader */
	uint64_t offset;             /* bytes written or read so far */
	bool last;                   /* reader: the last chunk was opened */
} pg_seal;

/*
 * Writer: a new header (random salt; scrypt with 2^log2n, r = 8, p = 1),
 * the keys derived from pass, the header written to out. False after a
 * message.
 */
bool pg_seal_write_start(pg_seal *s, FILE *out, const uint8_t *pass, size_t pass_len,
                         unsigned log2n) PG_MUST_CHECK;
/* Adds plaintext; full chunks are sealed and written as more comes. */
bool pg_seal_write(pg_seal *s, const void *data, size_t len) PG_MUST_CHECK;
/* Seals what is left as the last chunk. */
bool pg_seal_write_finish(pg_seal *s) PG_MUST_CHECK;

typedef enum {
	PG_SEAL_OK,
	PG_SEAL_IO,                  /* reading failed (errno) */
	PG_SEAL_HEADER,              /* see *hdr */
	PG_SEAL_PASSPHRASE,          /* the header's check does not match */
	PG_SEAL_NOMEM,
	PG_SEAL_DAMAGED,             /* a chunk does not open */
	PG_SEAL_TRUNCATED,           /* the file ends before the last chunk */
	PG_SEAL_TRAILING             /* bytes after the last chunk */
} pg_seal_status;

/*
 * Reader: reads and checks the header from fd, derives the keys and
 * checks the passphrase. *hdr says what was wrong with a header.
 */
pg_seal_status pg_seal_read_start(pg_seal *s, int fd, const uint8_t *pass, size_t pass_len,
                                  pg_backup_hdr_status *hdr);
/*
 * Opens the next chunk: *data and *len lend its plaintext until the next
 * call. After the last chunk, checks that the file ends there and then
 * gives PG_SEAL_OK with *len 0 and s->last set.
 */
pg_seal_status pg_seal_read(pg_seal *s, const uint8_t **data, size_t *len);

/* Wipes the keys and buffers; a zeroed s is fine. */
void pg_seal_clear(pg_seal *s);

#endif /* PG_BACKUP_SEAL_H */
