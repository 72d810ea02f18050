/*
 * `p11glue adopt` without its command line: what a user already has,
 * found and brought into a key store token in one run, each thing once
 * (adopt*.c):
 *
 *   ssh    every private key file in ~/.ssh (OpenSSH and PEM), with the
 *          comment of its public half as label;
 *   nss    the NSS databases of ~/.pki/nssdb and of every Firefox and
 *          Thunderbird profile: private keys with their certificates
 *          (exported by NSS's pk12util), and the trust flags of the
 *          certificates the user added, as decisions for p11glue's trust
 *          (the caller makes them: pg_adopt_item.trust);
 *   gnupg  the secret keys of GnuPG (gpg --export-secret-keys): each
 *          becomes a store key, RSA keys with the self-signed
 *          certificate gnupg-pkcs11-scd needs to offer them to gpg;
 *   file   PKCS#12 and PEM files the user names.
 *
 * Nothing is removed from a source; each item says what the user may
 * remove once the store's copy is in use. A key whose public key is on
 * the token already, or a certificate whose value is, is not written
 * again.
 */
#ifndef PG_ADOPT_H
#define PG_ADOPT_H

#include "token.h"

typedef enum {
	PG_ADOPT_TAKEN,              /* adopted (with dry_run: would be) */
	PG_ADOPT_THERE,              /* on the token, or in p11glue's trust, already */
	PG_ADOPT_LEFT,               /* left where it is, for the reason in why */
	PG_ADOPT_FAILED              /* could not be adopted: why */
} pg_adopt_state;

/* One thing found. */
typedef struct {
	const char *source;          /* "ssh", "nss", "gnupg", "file" (static) */
	char *from;                  /* where: a file, "DB: nickname", "GNUPGHOME: fingerprint" */
	char *what;                  /* what: "ssh-ed25519 key 'alice@laptop'" ... */
	pg_adopt_state state;
	char *why;                   /* LEFT and FAILED: why; else a note, or NULL */
	char *remove;                /* what the user may remove afterwards, or NULL */
	pg_report objects;           /* the objects made on the token */

	/* A trust decision (source "nss"), for the caller to make: the
	 * certificate (DER), distrusted, or an anchor trusted for purposes
	 * and distrusted for rejects (names as `trust` takes them:
	 * server-auth, client-auth, email, code-signing; none of either:
	 * every purpose). state is PG_ADOPT_TAKEN until it is made. */
	bool trust;
	bool distrust;
	const char *purposes[4];
	size_t n_purposes;
	const char *rejects[4];
	size_t n_rejects;
	unsigned char *der;
	size_t der_len;
	char *label;
} pg_adopt_item;

typedef struct {
	pg_adopt_item *items;
	size_t n, cap;
	char *token;                 /* the token's URI, or NULL */
	bool failed;                 /* out of memory: items are missing */
} pg_adopt_result;

typedef struct {
	bool dry_run;                /* find and compare; write nothing, ask nothing */
	const char *pass_source;     /* passphrases (pins.c's sources), or NULL: prompts */
	char **files;                /* files the user named */
	size_t n_files;
	/* Where to look: NULL for $HOME (and $GNUPGHOME, else ~/.gnupg). */
	const char *home;
	const char *gnupghome;
} pg_adopt_options;

/* A result starts zeroed. Frees its items and zeroes it again. */
void pg_adopt_result_clear(pg_adopt_result *r);

/* Counts the items of r in state st (trust decisions when trust). */
size_t pg_adopt_count(const pg_adopt_result *r, pg_adopt_state st, bool trust);

/*
 * Loads the store module, selects the token uri names (every token when
 * it names none: one must be initialized), logs in (not with dry_run),
 * and adopts what it finds into it, in the order ssh, nss, gnupg, file,
 * each source's things sorted. Each encrypted thing's passphrase is
 * asked once, from opts->pass_source (a file gives the same one to all,
 * a descriptor one line each) or a prompt. Problems with single items
 * are in their why; a problem that stops the run (no token, a refused
 * PIN) is printed. Returns an exit code: PG_EXIT_FAIL also when an item
 * failed.
 */
int pg_adopt_run(pg_store_opts *store, const p11glue_uri *uri, const pg_adopt_options *opts,
                 pg_adopt_result *result);

#endif /* PG_ADOPT_H */
