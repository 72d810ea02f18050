/*
 * Inside `p11glue adopt` (adopt.h): one run's state, what the token
 * holds and how things are written to it (adopt-store.c), programs run
 * and the private temporary directory (adopt-exec.c), and the sources
 * (adopt-ssh.c, adopt-nss.c, adopt-gnupg.c), which adopt.c runs.
 */
#ifndef PG_ADOPT_CORE_H
#define PG_ADOPT_CORE_H

#include "adopt.h"
#include "import.h"
#include "keys.h"

/* A key on the token: its public key (SubjectPublicKeyInfo DER, and the
 * OpenSSH blob when it has one), its CKA_ID, and whether a certificate
 * with that ID is there. */
typedef struct {
	unsigned char *spki, *blob, *id;
	size_t spki_len, blob_len, id_len;
	bool has_cert;
	bool has_private;            /* a private key (not only a public one) */
} pg_adopt_key;

typedef struct {
	const pg_adopt_options *opts;
	pg_adopt_result *result;
	pg_keytoken kt;
	bool loaded;
	char *home;                  /* the user's home */
	/* What the token holds (pg_adopt_index). */
	pg_adopt_key *keys;
	size_t n_keys, cap_keys;
	unsigned char **certs;       /* certificate values (DER) ... */
	size_t *cert_lens;
	size_t n_certs, cap_certs;
	char *tmpdir;                /* private, made on first use */
	int status;                  /* PG_EXIT_FAIL once something failed */
} pg_adopt;

/* ---------------------------------------------------------------------------
 * Items (adopt-store.c)
 */

/* A new item of source (static), from and what (copied, printf for
 * what); NULL when out of memory (result->failed set). */
pg_adopt_item *pg_adopt_add(pg_adopt *a, const char *source, const char *from,
                            const char *what_fmt, ...) PG_PRINTF(4, 5);
/* Sets an item's state and why (printf; fmt may be NULL). */
void pg_adopt_set(pg_adopt *a, pg_adopt_item *it, pg_adopt_state st, const char *fmt, ...)
	PG_PRINTF(4, 5);
/* Sets what the user may remove afterwards (printf). */
void pg_adopt_remove(pg_adopt_item *it, const char *fmt, ...) PG_PRINTF(2, 3);

/* "~/x" for a path under the home, else the path; free(). */
char *pg_adopt_pretty(const pg_adopt *a, const char *path);

/* A passphrase for prompt: from the source, else asked on the terminal;
 * NULL after a message. */
p11glue_pin *pg_adopt_ask(pg_adopt *a, const char *prompt);

/* ---------------------------------------------------------------------------
 * The token (adopt-store.c)
 */

/* Reads what the token holds: its keys (private keys when logged in,
 * else public keys) and certificates. False after a message. */
bool pg_adopt_index(pg_adopt *a);

/* The token's key with this public key / OpenSSH public key blob, or
 * NULL. */
const pg_adopt_key *pg_adopt_find_key(const pg_adopt *a, EVP_PKEY *pub);
const pg_adopt_key *pg_adopt_find_blob(const pg_adopt *a, const unsigned char *blob, size_t len);
/* Is a certificate with this value on the token? */
bool pg_adopt_has_cert(const pg_adopt *a, X509 *cert);

/*
 * Writes what imp holds to the token as `import` does (file names it,
 * label: NULL for the file's own), unless its key is there already:
 * then only the certificate of the key when the token lacks it. Sets
 * the item's state (TAKEN or THERE, or FAILED) and adds what was made to
 * its objects; with dry_run only the state.
 */
void pg_adopt_write(pg_adopt *a, pg_adopt_item *it, pg_import *imp, const char *file,
                    const char *label);

/*
 * Writes the key pair of priv to the token under label, and a
 * certificate for it made and signed by the token (subject CN=label,
 * self-signed) with the key's CKA_ID; when the key is there already,
 * only a missing certificate. cert: whether to make one. State and
 * objects as pg_adopt_write.
 */
void pg_adopt_write_certified(pg_adopt *a, pg_adopt_item *it, EVP_PKEY *priv, const char *label,
                              bool cert);

/* ---------------------------------------------------------------------------
 * Programs and temporary files (adopt-exec.c)
 */

/* The most a program's standard output may give. */
#define PG_ADOPT_MAX_OUTPUT (64 * 1024 * 1024)

/*
 * Runs argv (argv[0] looked up in PATH) with in (may be NULL) on its
 * standard input, collecting its standard output into out (at most
 * PG_ADOPT_MAX_OUTPUT; may be NULL) and its standard error into err (its
 * first 4 KiB; may be NULL). True when it ran and exited 0. A program
 * still running after 10 minutes is killed.
 */
bool pg_adopt_exec(char *const argv[], const void *in, size_t in_len, pg_buf *out, pg_buf *err);

/* Is the program in PATH? */
bool pg_adopt_have(const char *program);

/* A file of the private temporary directory (made 0700 on first use),
 * named name, holding data, mode 0600; its path (free()), or NULL after
 * a message. */
char *pg_adopt_tmpfile(pg_adopt *a, const char *name, const void *data, size_t len);

/* Removes a file pg_adopt_tmpfile made, its contents wiped first. */
void pg_adopt_tmpfile_remove(const char *path);

/* Removes the temporary directory and all in it (contents wiped). */
void pg_adopt_tmp_clear(pg_adopt *a);

/* ---------------------------------------------------------------------------
 * The sources, in their order
 */
void pg_adopt_ssh(pg_adopt *a);      /* adopt-ssh.c */
void pg_adopt_nss(pg_adopt *a);      /* adopt-nss.c */
void pg_adopt_gnupg(pg_adopt *a);    /* adopt-gnupg.c */
void pg_adopt_files(pg_adopt *a);    /* adopt-ssh.c */

#endif /* PG_ADOPT_CORE_H */
