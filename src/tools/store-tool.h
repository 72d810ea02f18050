/*
 * What the key store commands share (init-token, init-pin, set-pin,
 * generate-keypair, import, export-pubkey, delete-object): finding the
 * module and the token, sessions and logins with PINs from PIN sources
 * or a prompt (store-token.c), and PKCS#11 key attributes made from and
 * turned into libcrypto keys (store-keys.c).
 */
#ifndef PG_STORE_TOOL_H
#define PG_STORE_TOOL_H

#include "tool.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

/* ---------------------------------------------------------------------------
 * Options every key store command takes
 */
typedef struct {
	const char *module;          /* --module PATH */
	const char *store;           /* --store DIR */
} pg_store_opts;

/* getopt_long entries for --module and --store (values 'M' and 'S'). */
#define PG_STORE_LONG_OPTIONS \
	{ "module", required_argument, NULL, 'M' }, \
	{ "store", required_argument, NULL, 'S' }

/* Takes 'M' / 'S' from getopt; true when opt was one of them. */
bool pg_store_opts_take(pg_store_opts *opts, int opt, const char *arg);

/* Parses text as a URI (strictly), or makes an empty one for NULL;
 * prints why on failure. */
bool pg_store_parse_uri(const char *text, p11glue_uri **uri);

/* The common part of the commands' --help: module and token selection,
 * PIN sources, exit status. */
void pg_store_help_common(FILE *out);

/* ---------------------------------------------------------------------------
 * A token of the module and a session on it
 */
typedef struct {
	p11glue_registry *registry;
	CK_FUNCTION_LIST *f;
	char *module_path;           /* the module file, for messages */
	CK_SLOT_ID slot;
	CK_TOKEN_INFO token;
	CK_SESSION_HANDLE session;
	bool has_session;
} pg_keytoken;

/*
 * Loads the module (see pg_store_help_common for how it is chosen);
 * prints why on failure. Returns an exit code.
 */
int pg_keytoken_load(pg_keytoken *kt, const pg_store_opts *opts, const p11glue_uri *uri);

enum {
	/* Select uninitialized tokens (the store's free slot) rather than
	 * initialized ones. */
	PG_KEYTOKEN_FREE = 1 << 0,
	/* When nothing matches, say so without printing an error. */
	PG_KEYTOKEN_QUIET = 1 << 1
};

/*
 * Picks the one token the URI selects (slot and token attributes; a URI
 * with none selects every token). Several matches are an error that
 * lists them. Returns an exit code.
 */
int pg_keytoken_select(pg_keytoken *kt, const p11glue_uri *uri, unsigned flags);

/* Opens a (read-write) session on the selected token. */
int pg_keytoken_open(pg_keytoken *kt, bool rw);

/*
 * Logs in as user (CKU_USER) or SO. The PIN: from pin_source when not
 * NULL, else the URI's pin-value or pin-source, else a prompt. Already
 * logged in counts as success. Returns an exit code.
 */
int pg_keytoken_login(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri,
                      const char *pin_source);

/*
 * The PIN of who (CKU_USER, CKU_SO) from pin_source, else the URI's
 * pin-value or pin-source, else a prompt. Returns an exit code.
 */
int pg_keytoken_read_pin(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri,
                         const char *pin_source, p11glue_pin **pin);

/* Re-reads the token information (after C_InitToken / C_InitPIN). */
void pg_keytoken_refresh(pg_keytoken *kt);

/* Closes the session and unloads the module. */
void pg_keytoken_clear(pg_keytoken *kt);

/* The token label without padding, for messages (lent from kt). */
const char *pg_keytoken_label(pg_keytoken *kt);

/* "pkcs11:token=...;serial=..." naming the selected token; free(). */
char *pg_keytoken_uri(const pg_keytoken *kt);

/* Prints a failed call as "p11glue: what: CKR_..." plus a hint for the
 * codes users meet (wrong PIN, locked PIN, no user PIN ...). */
void pg_keytoken_error(const char *what, CK_RV rv);

/*
 * A secret from a PIN source (file:/path, or a path) or, without one, a
 * prompt on the terminal with echo off, asked twice when confirm is
 * set. Relative paths are taken from the current directory. Prints why
 * on failure. Returns an exit code.
 */
int pg_store_read_secret(const char *source, const char *prompt, bool confirm, p11glue_pin **pin);

/*
 * Finds the objects the URI selects (object, type, id), at most max;
 * extra (may be NULL) adds attributes. Returns the number found, or -1
 * after printing an error.
 */
long pg_keytoken_find(pg_keytoken *kt, const p11glue_uri *uri, const CK_ATTRIBUTE *extra,
                      CK_ULONG n_extra, CK_OBJECT_HANDLE *found, size_t max);

/* The URI naming an object (token, object label, type, id); free(). */
char *pg_keytoken_object_uri(pg_keytoken *kt, CK_OBJECT_HANDLE obj);

/* An attribute value in a new buffer (NUL-terminated, not counted), or
 * NULL when absent or unreadable. */
unsigned char *pg_keytoken_get(pg_keytoken *kt, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type,
                               size_t *len);

/* ---------------------------------------------------------------------------
 * Templates: attribute lists owning their values (wiped when cleared)
 */
#define PG_TMPL_MAX 40

typedef struct {
	CK_ATTRIBUTE items[PG_TMPL_MAX];
	CK_ULONG n;
	bool failed;                 /* sticky: out of memory or full */
} pg_tmpl;

void pg_tmpl_init(pg_tmpl *t);
void pg_tmpl_clear(pg_tmpl *t);
void pg_tmpl_add(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, const void *value, size_t len);
void pg_tmpl_add_bool(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, bool value);
void pg_tmpl_add_ulong(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, CK_ULONG value);

/* ---------------------------------------------------------------------------
 * Keys (store-keys.c)
 */

/* The key types the store holds: RSA, EC P-256/384/521, Ed25519, Ed448. */
typedef struct {
	const char *name;            /* "rsa", "ec:secp256r1", "ed25519" ... */
	CK_KEY_TYPE key_type;
	CK_MECHANISM_TYPE keygen;
	const char *group;           /* libcrypto's curve name; NULL for RSA */
	unsigned bits;
} pg_key_kind;

/* The kind of a libcrypto key; NULL for what the store cannot hold. */
const pg_key_kind *pg_key_kind_of(EVP_PKEY *key);

/*
 * Parses "rsa:2048", "ec:secp384r1", "ed25519" ... into *kind and *bits
 * (RSA modulus size). False for unknown names.
 */
bool pg_key_kind_parse(const char *text, const pg_key_kind **kind, unsigned *bits);

/* CKA_EC_PARAMS for a curve (DER of its OID) into t. */
void pg_tmpl_add_ec_params(pg_tmpl *t, const char *group);

/*
 * The key's identifier: SHA-1 of the subjectPublicKey bits (RFC 5280
 * §4.2.1.2, method 1), which is also what most certificates carry as
 * their subject key identifier.
 */
bool pg_key_id(EVP_PKEY *key, unsigned char id[20]) PG_MUST_CHECK;

/*
 * Adds the key values of a public and a private key object (class, key
 * type, public and private values, CKA_PUBLIC_KEY_INFO) for key to pub
 * and priv (either may be NULL).
 */
bool pg_key_values(EVP_PKEY *key, pg_tmpl *pub, pg_tmpl *priv) PG_MUST_CHECK;

/*
 * The public key of a token object (public key, private key or
 * certificate) as a libcrypto key; NULL when it cannot be built (*why
 * says why).
 */
EVP_PKEY *pg_keytoken_public_key(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char **why);

/*
 * A certificate object's attributes for cert (cmd-import.c): class, type,
 * on the token, public, category (token user for leaf, else authority or
 * unspecified), label (may be NULL), ID, subject, issuer, serial number,
 * value and CKA_PUBLIC_KEY_INFO.
 */
void pg_cert_template(pg_tmpl *t, X509 *cert, const char *label, const unsigned char *id,
                      size_t id_len, bool leaf);

/* Commands (cmd-store.c, cmd-keys.c, cmd-import.c, cmd-certify.c). */
int pg_cmd_init_token(int argc, char **argv);
int pg_cmd_init_pin(int argc, char **argv);
int pg_cmd_set_pin(int argc, char **argv);
int pg_cmd_generate_keypair(int argc, char **argv);
int pg_cmd_import(int argc, char **argv);
int pg_cmd_export_pubkey(int argc, char **argv);
int pg_cmd_delete_object(int argc, char **argv);
int pg_cmd_certify(int argc, char **argv);
int pg_cmd_request(int argc, char **argv);

#endif /* PG_STORE_TOOL_H */
