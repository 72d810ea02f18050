/*
 * Token access shared by the p11glue commands: the tokens of the
 * registry and a walk over them (tokens.c); one token of a module chosen
 * by URI, its sessions, logins with PINs from PIN sources or a prompt,
 * object lookups, and attribute templates that own their values
 * (keytoken.c). Problems are printed as "p11glue: ..." and returned as
 * PG_EXIT_* codes. Nothing here parses a command line.
 */
#ifndef PG_TOKEN_H
#define PG_TOKEN_H

#include "common.h"

#include <p11glue/p11glue.h>

#include <stdio.h>

/* ---------------------------------------------------------------------------
 * Tokens of the registry
 */
/* Parses a URI argument strictly; on error prints why and returns false. */
bool pg_token_parse_uri(const char *text, p11glue_uri **uri);

/*
 * The modules a listing command walks: the registry and, when it does
 * not list the key store, the key store as the store commands find it
 * (pg_token_store_file), named p11glue-store, so that every command sees
 * the same tokens. Not with a private registry (P11GLUE_CONFIG), which
 * replaces every location.
 */
typedef struct {
	p11glue_registry *registry;
	p11glue_registry *store;     /* NULL: registered, not found, or not asked for */
} pg_token_modules;

/*
 * Opens the registry (initialized, managed) and the key store beside it.
 * When uri names module-path, only that module file is loaded. Prints
 * problems; returns an exit code.
 */
int pg_token_open_registry(const p11glue_uri *uri, pg_token_modules *modules);
void pg_token_close_registry(pg_token_modules *modules);
/* The modules in walking order (registry first); NULL past the end. */
size_t pg_token_module_count(const pg_token_modules *modules);
p11glue_module *pg_token_module_at(const pg_token_modules *modules, size_t index);
/* Is the module the key store added beside the registry? */
bool pg_token_module_unregistered(const pg_token_modules *modules, const p11glue_module *mod);

/* The key store's module file when the registry does not name one: the
 * build tree's when this program runs from one, else the installed one.
 * free(). */
char *pg_token_store_file(void);

typedef struct {
	p11glue_module *module;
	CK_FUNCTION_LIST *funcs;
	CK_INFO info;
	CK_SLOT_ID slot;
	CK_SLOT_INFO slot_info;
	CK_TOKEN_INFO token;
} pg_token;

/* Called for each token; a non-zero return stops the walk and is returned. */
typedef int (*pg_token_func)(const pg_token *token, void *data);

/*
 * Walks every present token of every usable module that uri (may be NULL)
 * matches: module-name, module-path, library-*, slot-* and token
 * attributes. *count (may be NULL) gets the number of tokens visited.
 */
int pg_token_each(const pg_token_modules *modules, const p11glue_uri *uri,
                  pg_token_func func, void *data, size_t *count);

/* Prints each line of text as "p11glue: <line>" on stderr. */
void pg_token_print_messages(const char *text);

/* A printable text for a CK_RV. */
const char *pg_token_ckr(CK_RV rv);

/* ---------------------------------------------------------------------------
 * Where the key store module is (the --module and --store options)
 */
/*
 * The PINs a command was given (--pin-source, --so-pin-source), each read
 * from its source at its first use and kept (wiped by pg_pins_clear): a
 * descriptor gives its PIN once, and a command may log in more than once
 * (several tokens, a key that wants its PIN for each signature).
 */
typedef struct {
	const char *user_source;     /* --pin-source SRC, or NULL */
	const char *so_source;       /* --so-pin-source SRC, or NULL */
	p11glue_pin *user, *so;      /* read from them */
} pg_pins;

/* Wipes and frees the PINs read (the sources stay); NULL is fine. */
void pg_pins_clear(pg_pins *pins);

typedef struct {
	const char *module;          /* --module PATH */
	const char *store;           /* --store DIR */
	pg_pins pins;                /* the PIN options and the PINs read (pg_pins_clear) */
	const char *reserved;        /* a C_Initialize reserved string for the module, or NULL */
} pg_store_opts;

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
	pg_pins *pins;               /* the command's PIN options (lent), or NULL */
} pg_keytoken;

/*
 * Loads the module (see pg_store_help_common for how it is chosen);
 * prints why on failure. Returns an exit code. opts->pins is lent to kt
 * (kt->pins), which keeps the PINs it reads there.
 */
int pg_keytoken_load(pg_keytoken *kt, pg_store_opts *opts, const p11glue_uri *uri);

/*
 * The module file pg_keytoken_load would load (*file, free()), its name
 * in the registry (*name, or NULL) and its C_Initialize reserved string
 * (*reserved, free(); NULL for none), --store included. Prints why on
 * failure; returns an exit code.
 */
int pg_keytoken_module(const pg_store_opts *opts, const p11glue_uri *uri, char **file,
                       const char **name, char **reserved);

/* The client module (p11glue-client.so): the build tree's when this
 * program runs from one, else the installed one. free(). */
char *pg_token_client_file(void);

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
 * Logs in as who (CKU_USER, CKU_SO, CKU_CONTEXT_SPECIFIC) with the PIN of
 * pg_keytoken_read_pin. Already logged in counts as success. A refused
 * PIN is reported with the token's state (pg_keytoken_pin_error).
 * Returns an exit code (pins.c).
 */
int pg_keytoken_login(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri);

/*
 * Logs the user in on a token whose PIN is asked by the token itself (a
 * protected authentication path: the session service asks through
 * pinentry) unless the command has a PIN for it (option, URI) or
 * prompt_here is set: then with that PIN, or one asked on the terminal.
 * *was is set when the token was logged in already (nothing done).
 * A refused PIN is reported as by pg_keytoken_login. Exit code.
 */
int pg_keytoken_unlock(pg_keytoken *kt, const p11glue_uri *uri, bool prompt_here, bool *was);

/*
 * The PIN of who: from the command's option (kt->pins: so_source for
 * CKU_SO, else user_source), else the URI's pin-value or pin-source
 * (env: and fd: allowed: the URI is the user's own), else a prompt.
 * *pin is new. Returns an exit code.
 */
int pg_keytoken_read_pin(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri,
                         p11glue_pin **pin);

/*
 * Reports a failed login or PIN change of who (pg_keytoken_error), then
 * for a wrong or locked PIN what the token's flags say (a wrong PIN since
 * the last good one, one try left, locked) and how a locked user PIN is
 * unlocked (init-pin with the SO PIN).
 */
void pg_keytoken_pin_error(pg_keytoken *kt, CK_USER_TYPE who, const char *what, CK_RV rv);

/*
 * False, after saying so with what as the subject, when pin holds a
 * newline, a carriage return or a NUL byte: a PIN nobody could type at a
 * prompt.
 */
bool pg_pin_typable(const p11glue_pin *pin, const char *what);

/*
 * Initializes the selected token (C_InitToken) with the SO PIN so_pin and
 * label (at most 32 bytes, blank-padded here), then re-reads its
 * information. Prints a failure; returns an exit code.
 */
int pg_keytoken_init_token(pg_keytoken *kt, const p11glue_pin *so_pin, const char *label);
/* Sets the user PIN in an SO session (C_InitPIN). Exit code. */
int pg_keytoken_init_pin(pg_keytoken *kt, const p11glue_pin *pin);
/*
 * Changes who's PIN (CKU_USER, CKU_SO) from old to pin (C_SetPIN; the SO
 * logs in for it first, and out again). Exit code.
 */
int pg_keytoken_set_pin(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_pin *old,
                        const p11glue_pin *pin);
/* Logs the session's token out (errors ignored: the token stays usable). */
void pg_keytoken_logout(pg_keytoken *kt);
/* Destroys an object; prints a failure naming it by what. Exit code. */
int pg_keytoken_destroy(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char *what);
/* The mechanisms of a token of a registry walk: *types (free()) and *n. */
CK_RV pg_token_mechanisms(const pg_token *t, CK_MECHANISM_TYPE **types, CK_ULONG *n);
/* What the token says of one of its mechanisms (flags a module leaves
 * unset are clear). */
CK_RV pg_token_mechanism_info(const pg_token *t, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info);
/* The library information of a module of the registry (C_GetInfo). */
CK_RV pg_token_module_info(p11glue_module *mod, CK_INFO *info);

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

enum {
	PG_SECRET_CONFIRM = 1 << 0,  /* at the prompt, asked twice */
	PG_SECRET_NEW_PIN = 1 << 1   /* a PIN being set: refused unless typable */
};

/*
 * A secret from a PIN source (file:PATH or a file name, relative ones
 * taken from the current directory; env:NAME; fd:N) or, without one, a
 * prompt on the terminal with echo off, showing prompt. flags:
 * PG_SECRET_*. Prints why on failure. Returns an exit code (pins.c).
 */
int pg_store_read_secret(const char *source, const char *prompt, unsigned flags, p11glue_pin **pin);

/*
 * Finds the objects the URI selects (object, type, id), at most max;
 * extra (may be NULL) adds attributes. Returns the number found, or -1
 * after printing an error.
 */
long pg_keytoken_find(pg_keytoken *kt, const p11glue_uri *uri, const CK_ATTRIBUTE *extra,
                      CK_ULONG n_extra, CK_OBJECT_HANDLE *found, size_t max);

/* The URI naming an object (token, object label, type, id); free(). */
char *pg_keytoken_object_uri(pg_keytoken *kt, CK_OBJECT_HANDLE obj);
/* The same for an object of any session s of a token described by token. */
char *pg_token_object_uri(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, const CK_TOKEN_INFO *token,
                          CK_OBJECT_HANDLE obj);

/* Called for each object of pg_token_each_object; non-zero stops. */
typedef int (*pg_object_func)(pg_keytoken *kt, CK_OBJECT_HANDLE obj, void *data);

/*
 * Opens a session on a token of a registry walk (pg_token_each), with
 * login first logs in as the user (PIN from pins, may be NULL, else the
 * URI, else a prompt), and
 * calls func for each object uri selects (object, type, id; NULL: all).
 * kt lends the session to func; the module stays the walk's. Prints
 * problems; returns an exit code, or func's non-zero return.
 */
int pg_token_each_object(const pg_token *t, const p11glue_uri *uri, bool login, pg_pins *pins,
                         pg_object_func func, void *data);

/* An attribute value in a new buffer (NUL-terminated, not counted), or
 * NULL when absent or unreadable. */
unsigned char *pg_keytoken_get(pg_keytoken *kt, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type,
                               size_t *len);

/*
 * Warns on stderr when objects labelled label (may be NULL), or objects
 * of class cls with the ID id (may be NULL), are on the token already,
 * listing them: a URI naming the new objects by object= or id= would
 * name those too. (An ID shared across classes is how keys and their
 * certificates pair, and no warning.) Call it before making the new
 * objects.
 */
void pg_keytoken_warn_taken(pg_keytoken *kt, const char *label, const unsigned char *id,
                            size_t id_len, CK_OBJECT_CLASS cls);

/* ---------------------------------------------------------------------------
 * What a command did, for its output (report.c): the libraries below the
 * command line add what they made or deleted, the command prints it as
 * lines or as JSON. Not thread-safe; one report per command.
 */
typedef struct {
	const char *what;            /* "public key", "certificate", "replaced" ... (static) */
	char *uri;                   /* the object's URI, or NULL */
	char *name;                  /* a name for messages (a common name), or NULL */
} pg_report_item;

typedef struct {
	pg_report_item *items;
	size_t n, cap;
	bool failed;                 /* out of memory: some items are missing */
} pg_report;

/* A report starts zeroed (pg_report r = { 0 }). Frees the items and
 * zeroes r again (r may be NULL). */
void pg_report_clear(pg_report *r);
/* Adds an item: what (static), uri (taken; may be NULL), name (copied;
 * may be NULL). r may be NULL: uri is freed. */
void pg_report_add(pg_report *r, const char *what, char *uri, const char *name);
/* Adds what with the URI of obj on kt's token. */
void pg_report_object(pg_report *r, const char *what, pg_keytoken *kt, CK_OBJECT_HANDLE obj,
                      const char *name);
/* How many items of r are what. */
size_t pg_report_count(const pg_report *r, const char *what);

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

#endif /* PG_TOKEN_H */
