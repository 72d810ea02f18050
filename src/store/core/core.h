/*
 * p11glue-store: internals of the store core (state.c, slot.c,
 * session.c, object.c, find.c, attrs.c, rules.c, record.c, map.c, db.c,
 * seal.c). The mech layer uses store.h only.
 *
 * Locking: everything here is guarded by the module mutex
 * (pg_store_lock) unless a comment says otherwise. Lock order: a
 * session's operation lock may be held while taking the module mutex,
 * never the other way round; pg_object.key_lock is taken last.
 */
#ifndef PG_STORE_CORE_H
#define PG_STORE_CORE_H

#include "store.h"

#include <sqlite3.h>

/* ---------------------------------------------------------------------------
 * Limits and names.
 */
#define PG_PIN_MIN 4
#define PG_PIN_MAX 255
#define PG_UID_LEN 16               /* random per-object identity */
#define PG_SERIAL_LEN 16            /* a token's serial: 16 hex digits */
#define PG_KEY_LEN 32               /* the token key: AES-256 */
#define PG_SALT_LEN 16
#define PG_WRAPPED_LEN (12 + PG_KEY_LEN + 16)   /* nonce, key, GCM tag */
#define PG_DEFAULT_MAX_FAILS 10
#define PG_DEFAULT_KDF_LOG2N 14     /* scrypt N = 2^14, r = 8, p = 1 (16 MiB): ~50 ms */

/* ---------------------------------------------------------------------------
 * A hash multimap from 64-bit keys to non-NULL pointers (map.c): open
 * addressing, linear probing, backward-shift deletion. Not thread-safe.
 */
typedef struct {
	uint64_t key;
	void *value;               /* NULL: empty slot */
} pg_map_slot;

typedef struct {
	pg_map_slot *slots;
	size_t mask;               /* capacity - 1 (capacity a power of two) */
	size_t n;
} pg_map;

void pg_map_init(pg_map *map);
void pg_map_clear(pg_map *map);
/* Adds a pair (the same key may appear with several values). */
bool pg_map_add(pg_map *map, uint64_t key, void *value) PG_MUST_CHECK;
/* Removes the pair (key, value); false when absent. */
bool pg_map_remove(pg_map *map, uint64_t key, const void *value);
/* The first value with this key, or NULL. */
void *pg_map_get(const pg_map *map, uint64_t key);
/* The same for a PKCS#11 handle: NULL for CK_INVALID_HANDLE. */
void *pg_map_get_handle(const pg_map *map, CK_ULONG handle);
/*
 * Iterates the values with a key: `*pos` starts at 0; returns NULL at
 * the end. The map must not change during the iteration.
 */
void *pg_map_next(const pg_map *map, uint64_t key, size_t *pos);
/* Iterates every value (any key), same rules. */
void *pg_map_each(const pg_map *map, size_t *pos);

/* 64-bit FNV-1a over bytes, seeded with a value (for the attribute index). */
uint64_t pg_hash_bytes(uint64_t seed, const void *data, size_t len);

/* ---------------------------------------------------------------------------
 * Attribute lists, internals (attrs.c).
 */
void pg_attrs_remove(pg_attrs *attrs, CK_ATTRIBUTE_TYPE type);
bool pg_attrs_copy(pg_attrs *dst, const pg_attrs *src) PG_MUST_CHECK;
/* Shrinks the storage to the contents (for long-lived lists). */
void pg_attrs_compact(pg_attrs *attrs);
/* Total bytes of values. */
size_t pg_attrs_size(const pg_attrs *attrs);
/* Whether v is one of list[n] (attribute, key or object types). */
bool pg_ulong_listed(const CK_ULONG *list, size_t n, CK_ULONG v);

/* ---------------------------------------------------------------------------
 * Records: the stored form of an attribute list (record.c). The format
 * is described there; `sizeof(CK_ULONG)` is part of it.
 */
#define PG_RECORD_SEALED 0x01

typedef bool (*pg_record_func)(void *ctx, CK_ATTRIBUTE_TYPE type, unsigned flags,
                               const unsigned char *value, size_t len);

/* Starts a record; add entries with pg_record_add. */
void pg_record_begin(pg_buf *buf);
void pg_record_add(pg_buf *buf, CK_ATTRIBUTE_TYPE type, unsigned flags,
                   const void *value, size_t len);
/*
 * Calls func for each entry (values are views into data). False when
 * the record is malformed or func returned false.
 */
bool pg_record_parse(const unsigned char *data, size_t len, pg_record_func func,
                     void *ctx) PG_MUST_CHECK;

/*
 * Array-of-attribute values (CKF_ARRAY_ATTRIBUTE), encoded as records.
 * pg_template_encode checks the caller's array (CKR_ATTRIBUTE_VALUE_INVALID
 * when malformed, CKR_HOST_MEMORY). pg_template_decode_into fills a
 * caller's CK_ATTRIBUTE array per C_GetAttributeValue's rules.
 */
CK_RV pg_template_encode(const CK_ATTRIBUTE *tmpl, CK_ULONG n, pg_buf *out);
CK_RV pg_template_get(const unsigned char *enc, size_t len, CK_ATTRIBUTE *attr);
/* Whether a caller's array equals an encoded one (order-insensitive). */
bool pg_template_equal(const unsigned char *enc, size_t len, const CK_ATTRIBUTE *tmpl,
                       CK_ULONG n);

/* ---------------------------------------------------------------------------
 * The per-class attribute rules (rules.c).
 */
typedef enum {
	PG_MAKE_CREATE,    /* C_CreateObject */
	PG_MAKE_GENERATE,  /* C_GenerateKey(Pair): CKA_LOCAL in generated */
	PG_MAKE_OTHER,     /* C_DeriveKey, C_UnwrapKey */
} pg_make_kind;

/* Flags of pg_rules_make and pg_rules_modify. */
#define PG_RULES_SO           0x1u  /* the SO is logged in: may set CKA_TRUSTED */
#define PG_RULES_WRAP_DECRYPT 0x2u  /* the store's wrap-decrypt=allow */
#define PG_RULES_PAIR_WRAPS   0x4u  /* a private key whose public key is asked to wrap */

/*
 * Builds a new object's full attribute list from a caller's template
 * and the mech layer's values: checks, defaults, computed attributes.
 */
CK_RV pg_rules_make(const CK_ATTRIBUTE *tmpl, CK_ULONG n, const pg_attrs *generated,
                    unsigned flags, pg_attrs *out) PG_MUST_CHECK;
/* Applies a template to a copy of cur (C_SetAttributeValue or C_CopyObject). */
CK_RV pg_rules_modify(const pg_attrs *cur, const CK_ATTRIBUTE *tmpl, CK_ULONG n,
                      bool copy, unsigned flags, pg_attrs *out) PG_MUST_CHECK;

/*
 * rules-usage.c: uses that must not meet on a key whose value cannot be
 * read (CKA_SENSITIVE), CKA_WRAP with CKA_DECRYPT and CKA_UNWRAP with
 * CKA_ENCRYPT (and across a key pair made together: the public key's
 * CKA_WRAP with the private key's CKA_DECRYPT), unless flags carry
 * PG_RULES_WRAP_DECRYPT.
 *
 * pg_rules_usage_make, on a new object's list out (defaults in place;
 * given: the caller's values, gen: the mech layer's, may be NULL):
 * CKR_TEMPLATE_INCONSISTENT when both of a pair are asked for; else a
 * use not asked for is turned off when its partner is on, and a private
 * key with PG_RULES_PAIR_WRAPS does not decrypt unless asked to.
 * pg_rules_usage_modify, on an object's attributes before (cur) and
 * after (out) C_SetAttributeValue or C_CopyObject: CKR_ATTRIBUTE_READ_ONLY
 * when one of the four uses of a sensitive secret key is turned on (off
 * is allowed), so no key, or copy of it, gains the second of a pair, even
 * after giving up the first; or when a key with a pair becomes sensitive.
 */
CK_RV pg_rules_usage_make(CK_OBJECT_CLASS cls, const pg_attrs *given, const pg_attrs *gen,
                          unsigned flags, pg_attrs *out) PG_MUST_CHECK;
CK_RV pg_rules_usage_modify(CK_OBJECT_CLASS cls, const pg_attrs *cur, const pg_attrs *out,
                            unsigned flags) PG_MUST_CHECK;
/* Whether a caller's template sets a CK_BBOOL attribute to true. */
bool pg_rules_template_true(const CK_ATTRIBUTE *tmpl, CK_ULONG n, CK_ATTRIBUTE_TYPE type);
/* Whether an attribute's value may be revealed (footnote 7). */
bool pg_rules_readable(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type);
/* Whether an attribute is sealed at rest on an object with these attributes. */
bool pg_rules_sealed(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type);
/* Whether an attribute type holds an encoded attribute array. */
bool pg_rules_is_template(CK_ATTRIBUTE_TYPE type);

/* rules-derive.c: the bit length of a big-endian integer. */
CK_ULONG pg_rules_bits(const CK_ATTRIBUTE *a);
/* The 3-byte check value of a key or certificate value; false if none. */
bool pg_rules_check_value(CK_OBJECT_CLASS cls, CK_ULONG subtype, const CK_ATTRIBUTE *value,
                          unsigned char out[3]);
/* Fills an X.509 template's subject, issuer, serial and public key info
 * from its CKA_VALUE where absent (CKR_OK also when it does not parse). */
CK_RV pg_rules_x509_complete(pg_attrs *given) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * The token key and sealing (seal.c).
 */
typedef struct {
	bool set;
	unsigned log2n, r, p;      /* scrypt parameters */
	unsigned char salt[PG_SALT_LEN];
	unsigned char wrapped[PG_WRAPPED_LEN];
	unsigned fails;            /* consecutive wrong PINs */
} pg_pin_wrap;

typedef struct pg_token_key pg_token_key;
typedef struct pg_sealer pg_sealer;

/* A fresh random token key in locked memory; NULL when out of memory. */
pg_token_key *pg_token_key_new(void);
pg_token_key *pg_token_key_dup(const pg_token_key *key);
/* Wipes and frees (NULL is fine). */
void pg_token_key_free(pg_token_key *key);
/*
 * Unwraps the token key with a PIN: CKR_OK, CKR_PIN_INCORRECT (wrong
 * PIN), CKR_DEVICE_ERROR (bad stored parameters), CKR_HOST_MEMORY.
 * Takes the KDF's time (tens of milliseconds); call without locks.
 */
CK_RV pg_token_key_unwrap(const pg_pin_wrap *wrap, CK_USER_TYPE user, const CK_UTF8CHAR *pin,
                          CK_ULONG pin_len, pg_token_key **key) PG_MUST_CHECK;
/* Wraps the token key under a new PIN (new salt); keeps wrap->fails at 0. */
CK_RV pg_token_key_wrap(const pg_token_key *key, CK_USER_TYPE user, const CK_UTF8CHAR *pin,
                        CK_ULONG pin_len, unsigned log2n, pg_pin_wrap *wrap) PG_MUST_CHECK;
/* Whether two token keys are equal (constant time). */
bool pg_token_key_equal(const pg_token_key *a, const pg_token_key *b);

/* An AES-256-GCM context under the token key, for a run of values. */
pg_sealer *pg_sealer_new(const pg_token_key *key);
void pg_sealer_free(pg_sealer *sealer);
/* Appends nonce | ciphertext | tag to out. */
bool pg_sealer_seal(pg_sealer *sealer, const unsigned char uid[PG_UID_LEN], CK_ATTRIBUTE_TYPE type,
                    const void *in, size_t len, pg_buf *out) PG_MUST_CHECK;
/* Opens a sealed value into attrs under `type`; false when it does not authenticate. */
bool pg_sealer_open(pg_sealer *sealer, const unsigned char uid[PG_UID_LEN], CK_ATTRIBUTE_TYPE type,
                    const unsigned char *in, size_t len, pg_attrs *attrs) PG_MUST_CHECK;

/* Random bytes from libcrypto; false on failure. */
bool pg_random(void *out, size_t len) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Tokens (slot.c) and their databases (db.c).
 */
typedef enum {
	PG_LOGIN_NONE = 0,
	PG_LOGIN_USER,
	PG_LOGIN_SO,
} pg_login;

typedef struct pg_entry pg_entry;
typedef struct pg_token pg_token;

enum {
	PG_STMT_DATA_VERSION,
	PG_STMT_TOKEN,
	PG_STMT_PINS,
	PG_STMT_CHANGED,
	PG_STMT_TOMBS,
	PG_STMT_IDS,
	PG_STMT_INSERT,
	PG_STMT_UPDATE,
	PG_STMT_DELETE,
	PG_STMT_TOMB,
	PG_STMT_CHANGE,
	PG_STMT_FAILS,
	PG_STMT_PIN_SET,
	PG_STMT_COUNT
};

struct pg_token {
	pg_token *next;              /* the module's list, by slot */
	CK_SLOT_ID slot;
	char *path;                  /* the database file */
	sqlite3 *db;                 /* NULL: the free slot */
	sqlite3_stmt *stmts[PG_STMT_COUNT];
	bool free_slot;              /* no token yet: C_InitToken makes one */
	bool broken;                 /* unusable database: CKR_DEVICE_ERROR */
	bool read_only;              /* a file cannot be written: CKF_WRITE_PROTECTED */
	bool read_only_told;         /* pg_db_write_protected said why */

	/* From the database (pg_token_sync). */
	CK_UTF8CHAR label[32];
	char serial[PG_SERIAL_LEN];
	int64_t epoch;               /* changes when the token is initialised again */
	int64_t schema;              /* the schema cookie: changes when the file is replaced */
	unsigned max_fails;
	pg_pin_wrap pins[2];         /* [CKU_SO], [CKU_USER] */
	int64_t change;              /* last change counter seen */
	int64_t tomb_floor;          /* deletions before this are forgotten */
	int64_t data_version;
	bool in_write;               /* inside pg_token_begin_write .. commit/rollback */

	/* This application's state. */
	pg_login login;
	pg_token_key *key;           /* while logged in (user or SO) */
	CK_ULONG sessions, rw_sessions;
	pg_entry *objects;           /* published objects, token and session */
	CK_ULONG n_objects;
	pg_map rows;                 /* database row -> pg_entry */
	pg_map index;                /* pg_hash of (type, value) -> pg_entry */
};

/* The module's state (state.c); guarded by the module mutex. */
typedef struct {
	bool initialized;
	char *dir;                   /* the store directory */
	unsigned max_fails;          /* for tokens initialised from now on */
	unsigned kdf_log2n;          /* for PINs set from now on */
	bool wrap_decrypt;           /* wrap-decrypt=allow (rules.c) */
	pg_token *tokens;            /* sorted by slot id, the free slot included */
	pg_map sessions;             /* handle -> pg_session */
	pg_map objects;              /* handle -> pg_entry */
	CK_ULONG next_session;
	CK_ULONG next_object;
	pthread_cond_t event;        /* slot events, finalization */
	unsigned waiters;            /* threads in C_WaitForSlotEvent */
	CK_SLOT_ID *events;          /* pending slot events */
	size_t n_events;
	unsigned generation;         /* counts C_Initialize calls */
	bool stale;                  /* inherited through fork(): needs C_Initialize */
} pg_store_state;

extern pg_store_state pg_store;

/* state.c: serialises C_Initialize and C_Finalize (taken before the
 * module mutex); the first call registers the fork handlers. */
void pg_store_life_begin(void);
void pg_store_life_end(void);

/* tokenlist.c */
/* An offered slot (a usable token or the free slot), or NULL. */
pg_token *pg_token_find_locked(CK_SLOT_ID slot);
/* The token of a slot, offered or not (a file that failed to open). */
pg_token *pg_token_any_locked(CK_SLOT_ID slot);
/* Looks for new token files; records slot events unless `quiet`. */
void pg_tokens_scan_locked(bool quiet);
void pg_tokens_free_locked(bool forked);
/* Records a slot event for C_WaitForSlotEvent (once per slot). */
void pg_token_event_locked(CK_SLOT_ID slot);
/* CKF_* token flags as C_GetTokenInfo reports them. */
CK_FLAGS pg_token_flags_locked(const pg_token *tok);

/* entry.c: drops secrets and unsealed values (logout, or the token
 * changed). */
void pg_token_logout_locked(pg_token *tok);

/* login.c: checks a PIN (mutex released during the KDF) and counts the
 * attempt; on success *key is the token key. */
CK_RV pg_pin_verify_locked(pg_token *tok, CK_USER_TYPE user, const CK_UTF8CHAR *pin,
                           CK_ULONG len, pg_token_key **key) PG_MUST_CHECK;

/* db.c */
CK_RV pg_db_open(pg_token *tok) PG_MUST_CHECK;
void pg_db_close(pg_token *tok, bool forked);
/* Creates a token file atomically; CKR_FUNCTION_FAILED when the name is taken. */
CK_RV pg_db_create(const char *path, const CK_UTF8CHAR label[32], const char serial[PG_SERIAL_LEN],
                   const pg_pin_wrap *so, unsigned max_fails) PG_MUST_CHECK;
CK_RV pg_db_commit(pg_token *tok) PG_MUST_CHECK;
/* Marks the token write-protected, says which file is read-only (once),
 * and returns CKR_TOKEN_WRITE_PROTECTED. */
CK_RV pg_db_write_protected(pg_token *tok);
void pg_db_rollback(pg_token *tok);
/* Inside a write: stores an object's record (sets e->row, e->version). */
CK_RV pg_db_put(pg_token *tok, pg_entry *e, const pg_buf *record, bool update) PG_MUST_CHECK;
CK_RV pg_db_delete(pg_token *tok, pg_entry *e) PG_MUST_CHECK;
CK_RV pg_db_set_pin(pg_token *tok, CK_USER_TYPE user, const pg_pin_wrap *wrap) PG_MUST_CHECK;
CK_RV pg_db_set_fails(pg_token *tok, CK_USER_TYPE user, unsigned fails) PG_MUST_CHECK;
/* Inside a write: empties the token for C_InitToken, under a new serial. */
CK_RV pg_db_reinit(pg_token *tok, const CK_UTF8CHAR label[32], const char serial[PG_SERIAL_LEN],
                   const pg_pin_wrap *so) PG_MUST_CHECK;
/* Runs PRAGMA integrity_check; for tests and tools. */
bool pg_db_check(const char *path);
/* A prepared statement (PG_STMT_*), reset and unbound. */
sqlite3_stmt *pg_db_stmt(pg_token *tok, int which);
/* Runs SQL without results; an SQLite result code. */
int pg_db_exec(pg_token *tok, const char *sql);
/* Reports an SQLite failure (marking a damaged file broken); the CKR_. */
CK_RV pg_db_error(pg_token *tok, int rc, const char *what);

/* sync.c: the in-memory token brought up to date with the database. */
CK_RV pg_token_sync(pg_token *tok) PG_MUST_CHECK;
/* Starts a write (BEGIN IMMEDIATE, then sync); end with pg_db_commit or
 * pg_db_rollback. */
CK_RV pg_token_begin_write(pg_token *tok) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Sessions (session.c).
 */
struct pg_session {
	CK_SESSION_HANDLE handle;
	pg_token *tok;
	CK_FLAGS flags;              /* CKF_RW_SESSION | CKF_SERIAL_SESSION */
	unsigned refs;               /* module mutex */
	bool closed;                 /* module mutex */
	pthread_mutex_t lock;        /* operation state */
	pg_op ops[PG_OP_COUNT];
};

/* Looks up a session under the module mutex (no reference). */
pg_session *pg_session_find_locked(CK_SESSION_HANDLE handle);
/*
 * Starts a call on a session: CKR_OK with the module mutex held and *s
 * the session (with sync, its token brought up to date with the
 * database first); otherwise the mutex is not held and the code says
 * why (not initialized, no such session, the database failed).
 */
CK_RV pg_session_enter(CK_SESSION_HANDLE handle, bool sync, pg_session **s);
/* Closes and frees every session (C_Finalize); call without the mutex. */
void pg_sessions_finalize(bool forked);

/* ---------------------------------------------------------------------------
 * Objects (object.c, find.c).
 */
struct pg_entry {
	pg_object obj;               /* first: a pg_object * is a pg_entry * */
	pg_token *tok;
	pg_entry *prev, *next;       /* tok->objects, while published */
	unsigned char uid[PG_UID_LEN];
	int64_t version;
	unsigned char *record;       /* stored record while values are sealed or may be */
	size_t record_len;
	bool has_sealed;             /* the record holds sealed values */
	bool sealed;                 /* ... which obj.attrs lacks (not unsealed) */
	bool published;
};

/* A new unpublished entry (refs 1); NULL when out of memory. */
pg_entry *pg_entry_new(pg_token *tok, CK_SESSION_HANDLE owner);
/* Gives a new entry a random identity. */
bool pg_entry_identify(pg_entry *e) PG_MUST_CHECK;
/* CKA_UNIQUE_ID (not stored: the identity in hex, made when asked). */
void pg_entry_unique_id(const pg_entry *e, char out[PG_UID_LEN * 2]);
/*
 * Builds an entry from a stored record; unseals with sealer when not
 * NULL. NULL when malformed (a message says which), or out of memory.
 */
pg_entry *pg_entry_load(pg_token *tok, int64_t row, const unsigned char *uid, size_t uid_len,
                        CK_OBJECT_CLASS cls, bool private_, int64_t version,
                        const unsigned char *record, size_t len, pg_sealer *sealer);
/* The record of an entry, sealing what must be sealed (sealer may be NULL
 * when nothing must). */
bool pg_entry_record(const pg_entry *e, pg_sealer *sealer, pg_buf *out) PG_MUST_CHECK;
/* Publishes (assigns a handle unless it has one); the tables hold a reference. */
bool pg_entry_publish_locked(pg_entry *e) PG_MUST_CHECK;
void pg_entry_unpublish_locked(pg_entry *e);
/* Puts fresh in old's place (same handle); drops the tables' reference to old. */
bool pg_entry_replace_locked(pg_entry *old, pg_entry *fresh) PG_MUST_CHECK;
pg_entry *pg_entry_find_locked(CK_OBJECT_HANDLE handle);
void pg_object_unref_locked(pg_object *obj);
void pg_object_ref_locked(pg_object *obj);
/* Rebuilds the token's objects sealed (logout) or unsealed (login). */
CK_RV pg_entries_reseal_locked(pg_token *tok, pg_sealer *sealer);
/* Destroys a session's objects (session closed). */
void pg_entries_drop_session_locked(pg_token *tok, CK_SESSION_HANDLE owner);
void pg_entries_free_token_locked(pg_token *tok, bool forked);
/* Whether the session's application may see the object now. */
bool pg_entry_visible_locked(const pg_entry *e, const pg_session *session);

/* find.c: the finder operation. */
CK_RV pg_find_init(pg_session *session, const CK_ATTRIBUTE *tmpl, CK_ULONG n) PG_MUST_CHECK;
bool pg_entry_matches(const pg_entry *e, const CK_ATTRIBUTE *tmpl, CK_ULONG n);

/* ---------------------------------------------------------------------------
 * Module helpers (state.c).
 */
pthread_mutex_t *pg_store_mutex(void);
/* The module's options (state.c's header comment lists them). */
typedef struct {
	char *dir;                   /* NULL: the default directory */
	unsigned max_fails;
	unsigned kdf_log2n;
	bool wrap_decrypt;
} pg_store_options;

/* Parses the C_Initialize reserved string ("key=value ...") over opts,
 * whose dir it may replace (the caller frees it); false on a bad value. */
bool pg_store_parse_options(const char *text, pg_store_options *opts) PG_MUST_CHECK;

#endif /* PG_STORE_CORE_H */
