/*
 * One token of a module: choosing the module and the token, sessions,
 * logins with PINs from PIN sources or a prompt, object lookups and
 * attribute templates (token.h).
 */
#include "config.h"

#include "token.h"
#include "objects.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORE_NAME "p11glue-store"

void
pg_keytoken_error(const char *what, CK_RV rv)
{
	const char *hint = NULL;

	switch (rv) {
	case CKR_PIN_INCORRECT:
		hint = "wrong PIN";
		break;
	case CKR_PIN_LOCKED:
		hint = "the PIN is locked after too many wrong PINs (the SO unlocks it with init-pin)";
		break;
	case CKR_USER_PIN_NOT_INITIALIZED:
		hint = "the token has no user PIN yet: set one with 'p11glue init-pin'";
		break;
	case CKR_PIN_LEN_RANGE:
		hint = "the PIN is too short or too long for this token";
		break;
	case CKR_USER_NOT_LOGGED_IN:
		hint = "this needs a login";
		break;
	case CKR_TOKEN_WRITE_PROTECTED:
		hint = "the token is write-protected";
		break;
	case CKR_SESSION_EXISTS:
		hint = "another program has a session open on this token";
		break;
	default:
		break;
	}
	if (hint)
		pg_message("%s: %s (%s)", what, hint, pg_token_ckr(rv));
	else
		pg_message("%s: %s", what, pg_token_ckr(rv));
}

/* ---------------------------------------------------------------------------
 * The module
 */

/* The registered module named name: its file and reserved string. */
static bool
registered(const char *name, char **file, char **reserved)
{
	p11glue_registry *reg = NULL;
	p11glue_module *mod;
	const char *f, *r;
	bool found = false;

	if (p11glue_registry_load(P11GLUE_REGISTRY_NO_LOAD, &reg) != P11GLUE_OK && reg == NULL)
		return false;
	mod = reg ? p11glue_registry_find(reg, name) : NULL;
	f = mod ? p11glue_module_filename(mod) : NULL;
	if (f != NULL && *f) {
		r = p11glue_module_config(mod, "x-init-reserved");
		*file = strdup(f);
		*reserved = r ? strdup(r) : NULL;
		found = *file != NULL;
	}
	p11glue_registry_free(reg);
	return found;
}

/* The module file to load and its name; NULL after printing why. */
static char *
choose_module(const pg_store_opts *opts, const p11glue_uri *uri, const char **name,
              char **reserved)
{
	const unsigned char *path = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_PATH, NULL) : NULL;
	const unsigned char *mname = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_NAME, NULL) : NULL;
	char *file = NULL;

	*name = NULL;
	if (opts->module != NULL || path != NULL) {
		const char *given = opts->module ? opts->module : (const char *)path;
		/* A file name with a directory is taken from here, not from the
		 * module path. */
		if (strchr(given, '/') != NULL && (file = realpath(given, NULL)) == NULL) {
			pg_message("%s: %s", given, strerror(errno));
			return NULL;
		}
		return file ? file : strdup(given);
	}
	if (mname != NULL) {
		if (!registered((const char *)mname, &file, reserved)) {
			pg_message("no module named '%s' is registered", (const char *)mname);
			return NULL;
		}
		*name = (const char *)mname;
		return file;
	}
	if (registered(STORE_NAME, &file, reserved)) {
		*name = STORE_NAME;
		return file;
	}
	return pg_token_store_file();
}


int
pg_keytoken_module(const pg_store_opts *opts, const p11glue_uri *uri, char **file,
                   const char **name, char **reserved)
{
	char *joined = NULL;
	size_t len;

	*reserved = NULL;
	if (opts->store != NULL && strpbrk(opts->store, " \t\n") != NULL) {
		pg_message("--store: a directory name with white space cannot be passed to the "
		              "module; set P11GLUE_STORE_DIR instead");
		return PG_EXIT_USAGE;
	}
	*file = choose_module(opts, uri, name, reserved);
	if (*file != NULL && *reserved == NULL && opts->reserved != NULL &&
	    (*reserved = strdup(opts->reserved)) == NULL) {
		free(*file);
		*file = NULL;
	}
	if (*file == NULL) {
		free(*reserved);
		*reserved = NULL;
		return PG_EXIT_FAIL;
	}
	if (opts->store != NULL) {
		/* The module reads space-separated key=value pairs; the last
		 * store= wins over one from the registry. */
		len = (*reserved ? strlen(*reserved) : 0) + strlen(opts->store) + 16;
		joined = malloc(len);
		if (joined == NULL) {
			pg_message("out of memory");
			free(*file);
			free(*reserved);
			*file = *reserved = NULL;
			return PG_EXIT_FAIL;
		}
		snprintf(joined, len, "%s%sstore=%s", *reserved ? *reserved : "",
		         *reserved ? " " : "", opts->store);
		free(*reserved);
		*reserved = joined;
	}
	return PG_EXIT_OK;
}

int
pg_keytoken_load(pg_keytoken *kt, pg_store_opts *opts, const p11glue_uri *uri)
{
	const char *name = NULL;
	char *reserved = NULL, *file = NULL;
	int rv;

	memset(kt, 0, sizeof(*kt));
	rv = pg_keytoken_module(opts, uri, &file, &name, &reserved);
	if (rv != PG_EXIT_OK)
		return rv;
	rv = p11glue_registry_load_file(file, name, reserved, 0, &kt->registry);
	free(reserved);
	if (kt->registry != NULL)
		pg_token_print_messages(p11glue_registry_messages(kt->registry));
	if (rv != P11GLUE_OK || kt->registry == NULL ||
	    (kt->f = p11glue_module_functions(p11glue_registry_module(kt->registry, 0))) == NULL) {
		pg_message("cannot load the PKCS#11 module %s", file);
		free(file);
		p11glue_registry_free(kt->registry);
		kt->registry = NULL;
		return PG_EXIT_FAIL;
	}
	kt->module_path = file;
	kt->pins = &opts->pins;
	return PG_EXIT_OK;
}

/* ---------------------------------------------------------------------------
 * The token
 */

static int
padded_len(const unsigned char *s, size_t size)
{
	while (size > 0 && (s[size - 1] == ' ' || s[size - 1] == 0))
		size--;
	return (int)size;
}

const char *
pg_keytoken_label(pg_keytoken *kt)
{
	static __thread char label[sizeof(kt->token.label) + 1];
	int n = padded_len(kt->token.label, sizeof(kt->token.label));

	memcpy(label, kt->token.label, (size_t)n);
	label[n] = 0;
	return label;
}

char *
pg_keytoken_uri(const pg_keytoken *kt)
{
	p11glue_uri *uri = p11glue_uri_new();
	char *text = NULL;

	if (uri != NULL && p11glue_uri_set_token_info(uri, &kt->token) == P11GLUE_OK)
		text = p11glue_uri_format(uri);
	p11glue_uri_free(uri);
	return text;
}

static bool
token_wanted(const CK_TOKEN_INFO *token, unsigned flags)
{
	bool initialized = (token->flags & CKF_TOKEN_INITIALIZED) != 0;

	return (flags & PG_KEYTOKEN_FREE) ? !initialized : initialized;
}

int
pg_keytoken_select(pg_keytoken *kt, const p11glue_uri *uri, unsigned flags)
{
	CK_SLOT_ID *slots = NULL;
	CK_SLOT_INFO slot_info;
	CK_TOKEN_INFO token;
	CK_ULONG n = 0;
	size_t matches = 0;
	pg_buf names;
	CK_RV rv = kt->f->C_GetSlotList(CK_TRUE, NULL, &n);

	if (rv == CKR_OK && n > 0) {
		slots = calloc(n, sizeof(*slots));
		rv = slots ? kt->f->C_GetSlotList(CK_TRUE, slots, &n) : CKR_HOST_MEMORY;
	}
	if (rv != CKR_OK) {
		free(slots);
		pg_keytoken_error("C_GetSlotList", rv);
		return PG_EXIT_FAIL;
	}
	pg_buf_init(&names);
	for (CK_ULONG i = 0; i < n; i++) {
		if (kt->f->C_GetSlotInfo(slots[i], &slot_info) != CKR_OK ||
		    kt->f->C_GetTokenInfo(slots[i], &token) != CKR_OK || !token_wanted(&token, flags))
			continue;
		if (uri != NULL && (!p11glue_uri_match_slot_info(uri, slots[i], &slot_info) ||
		                    !p11glue_uri_match_token_info(uri, &token)))
			continue;
		if (matches++ == 0) {
			kt->slot = slots[i];
			kt->token = token;
		}
		pg_buf_printf(&names, "%s'%.*s' (slot %lu)", matches > 1 ? ", " : "",
		              padded_len(token.label, sizeof(token.label)), (const char *)token.label,
		              slots[i]);
	}
	free(slots);
	if (matches == 0) {
		if (flags & PG_KEYTOKEN_QUIET)
			;
		else if (flags & PG_KEYTOKEN_FREE)
			pg_message("%s has no free slot for a new token", kt->module_path);
		else
			pg_message("no initialized token matches the URI in %s (see 'p11glue "
			              "init-token')", kt->module_path);
		pg_buf_clear(&names);
		return PG_EXIT_FAIL;
	}
	/* A new token goes to the first free slot; anything else must be
	 * named without doubt. */
	if (matches > 1 && !(flags & PG_KEYTOKEN_FREE)) {
		pg_message("%zu tokens match: %s; name one in the URI (token=LABEL)", matches,
		              names.data ? (const char *)names.data : "");
		pg_buf_clear(&names);
		return PG_EXIT_FAIL;
	}
	pg_buf_clear(&names);
	return PG_EXIT_OK;
}

void
pg_keytoken_refresh(pg_keytoken *kt)
{
	CK_TOKEN_INFO token;

	if (kt->f->C_GetTokenInfo(kt->slot, &token) == CKR_OK)
		kt->token = token;
}

int
pg_keytoken_open(pg_keytoken *kt, bool rw)
{
	CK_FLAGS flags = CKF_SERIAL_SESSION | (rw ? CKF_RW_SESSION : 0);
	CK_RV rv = kt->f->C_OpenSession(kt->slot, flags, NULL, NULL, &kt->session);

	if (rv != CKR_OK) {
		pg_keytoken_error("C_OpenSession", rv);
		return PG_EXIT_FAIL;
	}
	kt->has_session = true;
	return PG_EXIT_OK;
}

void
pg_keytoken_clear(pg_keytoken *kt)
{
	if (kt->has_session)
		kt->f->C_CloseSession(kt->session);
	p11glue_registry_free(kt->registry);
	free(kt->module_path);
	memset(kt, 0, sizeof(*kt));
}

/* ---------------------------------------------------------------------------
 * Objects
 */

long
pg_keytoken_find(pg_keytoken *kt, const p11glue_uri *uri, const CK_ATTRIBUTE *extra,
                 CK_ULONG n_extra, CK_OBJECT_HANDLE *found, size_t max)
{
	CK_ATTRIBUTE tmpl[3 + 8];
	CK_OBJECT_CLASS klass;
	CK_OBJECT_HANDLE *all;
	CK_ULONG n;
	size_t total;
	CK_RV rv;

	if (uri != NULL && p11glue_uri_is_unrecognized(uri))
		return 0;
	n = uri ? p11glue_uri_get_template(uri, tmpl, &klass) : 0;
	for (CK_ULONG i = 0; i < n_extra && n < PG_N_ELEMENTS(tmpl); i++)
		tmpl[n++] = extra[i];
	rv = pg_objects_find(kt->f, kt->session, tmpl, n, &all, &total);
	if (rv != CKR_OK) {
		pg_keytoken_error("C_FindObjects", rv);
		return -1;
	}
	total = total < max ? total : max;
	if (total > 0)
		memcpy(found, all, total * sizeof(*found));
	free(all);
	return (long)total;
}

/* Warns of the objects on the token that have attr (and class, when
 * it is set) already. */
static void
warn_same(pg_keytoken *kt, const CK_ATTRIBUTE *attr, const CK_OBJECT_CLASS *cls, const char *what)
{
	CK_ATTRIBUTE tmpl[2] = { *attr, { CKA_CLASS, (void *)cls, sizeof(*cls) } };
	CK_OBJECT_HANDLE found[16];
	long n = pg_keytoken_find(kt, NULL, tmpl, cls ? 2 : 1, found, PG_N_ELEMENTS(found));
	char *text;

	if (n <= 0)
		return;
	pg_message("warning: token '%s' has %s%ld object%s %s already; a URI with only %s= "
	           "names the new ones and %s:", pg_keytoken_label(kt), n == PG_N_ELEMENTS(found)
	           ? "at least " : "", n, n == 1 ? "" : "s", what,
	           attr->type == CKA_LABEL ? "object" : "id", n == 1 ? "it" : "them");
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(kt, found[i]);
		fprintf(stderr, "  %s\n", text ? text : "?");
		free(text);
	}
}

void
pg_keytoken_warn_taken(pg_keytoken *kt, const char *label, const unsigned char *id,
                       size_t id_len, CK_OBJECT_CLASS cls)
{
	CK_ATTRIBUTE attr;
	char what[96];

	if (label != NULL) {
		attr = (CK_ATTRIBUTE){ CKA_LABEL, (void *)label, strlen(label) };
		snprintf(what, sizeof(what), "labelled '%.64s'", label);
		warn_same(kt, &attr, NULL, what);
	}
	if (id != NULL && id_len > 0) {
		attr = (CK_ATTRIBUTE){ CKA_ID, (void *)id, id_len };
		warn_same(kt, &attr, &cls, cls == CKO_CERTIFICATE ? "(certificates) with this ID"
		                                                  : "(public keys) with this ID");
	}
}

unsigned char *
pg_keytoken_get(pg_keytoken *kt, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_TYPE type, size_t *len)
{
	return pg_objects_get(kt->f, kt->session, obj, type, len);
}

char *
pg_token_object_uri(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, const CK_TOKEN_INFO *token,
                    CK_OBJECT_HANDLE obj)
{
	size_t label_len, id_len;
	unsigned char *label = pg_objects_get(f, s, obj, CKA_LABEL, &label_len);
	unsigned char *id = pg_objects_get(f, s, obj, CKA_ID, &id_len);
	CK_ULONG cls;
	const char *type = pg_objects_get_ulong(f, s, obj, CKA_CLASS, &cls) ? pg_objects_type_name(cls)
	                                                                    : NULL;
	p11glue_uri *uri = p11glue_uri_new();
	char *text = NULL;

	if (uri != NULL && p11glue_uri_set_token_info(uri, token) == P11GLUE_OK &&
	    (label == NULL ||
	     p11glue_uri_set(uri, P11GLUE_URI_OBJECT, label, label_len, NULL) == P11GLUE_OK) &&
	    (type == NULL || p11glue_uri_set(uri, P11GLUE_URI_TYPE, type, strlen(type), NULL) == P11GLUE_OK) &&
	    (id == NULL || p11glue_uri_set(uri, P11GLUE_URI_ID, id, id_len, NULL) == P11GLUE_OK))
		text = p11glue_uri_format(uri);
	p11glue_uri_free(uri);
	free(label);
	free(id);
	return text;
}

char *
pg_keytoken_object_uri(pg_keytoken *kt, CK_OBJECT_HANDLE obj)
{
	return pg_token_object_uri(kt->f, kt->session, &kt->token, obj);
}

/* ---------------------------------------------------------------------------
 * Templates
 */

void
pg_tmpl_init(pg_tmpl *t)
{
	memset(t, 0, sizeof(*t));
}

void
pg_tmpl_clear(pg_tmpl *t)
{
	for (CK_ULONG i = 0; i < t->n; i++)
		pg_free_secret(t->items[i].pValue, t->items[i].ulValueLen);
	pg_tmpl_init(t);
}

void
pg_tmpl_add(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, const void *value, size_t len)
{
	void *copy;

	if (t->failed)
		return;
	if (t->n >= PG_TMPL_MAX || (copy = pg_memdup0(value, len)) == NULL) {
		t->failed = true;
		return;
	}
	t->items[t->n].type = type;
	t->items[t->n].pValue = copy;
	t->items[t->n].ulValueLen = len;
	t->n++;
}

void
pg_tmpl_add_bool(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, bool value)
{
	CK_BBOOL b = value ? CK_TRUE : CK_FALSE;

	pg_tmpl_add(t, type, &b, sizeof(b));
}

void
pg_tmpl_add_ulong(pg_tmpl *t, CK_ATTRIBUTE_TYPE type, CK_ULONG value)
{
	pg_tmpl_add(t, type, &value, sizeof(value));
}
