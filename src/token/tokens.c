/*
 * Opening the registry and walking its tokens, for the listing commands.
 */
#include "config.h"

#include "token.h"
#include "names.h"

#define STORE_NAME "p11glue-store"
#define STORE_MODULE "p11glue-store.so"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *
pg_token_ckr(CK_RV rv)
{
	static __thread char buf[32];
	const char *name = pg_name_ckr(rv);

	if (name != NULL)
		return name;
	snprintf(buf, sizeof(buf), "0x%08lx", rv);
	return buf;
}

void
pg_token_print_messages(const char *text)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		fprintf(stderr, "p11glue: %.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

bool
pg_token_parse_uri(const char *text, p11glue_uri **uri)
{
	p11glue_uri_error error;
	int rv = p11glue_uri_parse(text, 0, uri, &error);

	if (rv == P11GLUE_OK)
		return true;
	pg_message("invalid PKCS#11 URI: %s: %s (at byte %zu)", p11glue_strerror(rv),
	              error.detail, error.offset);
	return false;
}

char *
pg_token_store_file(void)
{
	char *file = pg_build_tree_file("store/" STORE_MODULE);

	return file ? file : strdup(P11GLUE_MODULE_DIR "/" STORE_MODULE);
}

char *
pg_token_client_file(void)
{
	char *file = pg_build_tree_file("client/p11glue-client.so");

	return file ? file : strdup(P11GLUE_MODULE_DIR "/p11glue-client.so");
}

/* Does the registry list the key store (by name or by its file)? */
static bool
lists_store(p11glue_registry *registry, const char *file)
{
	char *real = realpath(file, NULL);
	bool found = p11glue_registry_find(registry, STORE_NAME) != NULL;

	for (size_t i = 0; !found && real != NULL && i < p11glue_registry_count(registry); i++) {
		const char *path = p11glue_module_path(p11glue_registry_module(registry, i));
		found = path != NULL && strcmp(path, real) == 0;
	}
	free(real);
	return found;
}

int
pg_token_open_registry(const p11glue_uri *uri, pg_token_modules *modules)
{
	const unsigned char *path = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_PATH, NULL) : NULL;
	const unsigned char *name = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_NAME, NULL) : NULL;
	const char *config;
	char *store;
	int rv;

	memset(modules, 0, sizeof(*modules));
	if (path != NULL)
		rv = p11glue_registry_load_file((const char *)path, (const char *)name, NULL, 0,
		                                &modules->registry);
	else
		rv = p11glue_registry_load(0, &modules->registry);
	if (modules->registry != NULL)
		pg_token_print_messages(p11glue_registry_messages(modules->registry));
	if (rv != P11GLUE_OK) {
		pg_message("cannot load the modules: %s", p11glue_strerror(rv));
		pg_token_close_registry(modules);
		return PG_EXIT_FAIL;
	}
	/* A private registry (P11GLUE_CONFIG) replaces every location: what it
	 * lists is all there is. */
	config = getenv("P11GLUE_CONFIG");
	if (path != NULL || (config != NULL && config[0] != 0) ||
	    (name != NULL && strcmp((const char *)name, STORE_NAME) != 0))
		return PG_EXIT_OK;
	store = pg_token_store_file();
	if (store != NULL && access(store, R_OK) == 0 && !lists_store(modules->registry, store) &&
	    p11glue_registry_load_file(store, STORE_NAME, NULL, 0, &modules->store) != P11GLUE_OK) {
		p11glue_registry_free(modules->store);
		modules->store = NULL;
	}
	free(store);
	return PG_EXIT_OK;
}

void
pg_token_close_registry(pg_token_modules *modules)
{
	p11glue_registry_free(modules->store);
	p11glue_registry_free(modules->registry);
	memset(modules, 0, sizeof(*modules));
}

size_t
pg_token_module_count(const pg_token_modules *modules)
{
	return (modules->registry ? p11glue_registry_count(modules->registry) : 0) +
	       (modules->store ? p11glue_registry_count(modules->store) : 0);
}

p11glue_module *
pg_token_module_at(const pg_token_modules *modules, size_t index)
{
	size_t n = modules->registry ? p11glue_registry_count(modules->registry) : 0;

	if (index >= pg_token_module_count(modules))
		return NULL;
	return index < n ? p11glue_registry_module(modules->registry, index)
	                 : p11glue_registry_module(modules->store, index - n);
}

bool
pg_token_module_unregistered(const pg_token_modules *modules, const p11glue_module *mod)
{
	return modules->store != NULL && mod == p11glue_registry_module(modules->store, 0);
}

static bool
module_matches(const p11glue_uri *uri, p11glue_module *mod, const CK_INFO *info)
{
	const unsigned char *path;

	if (uri == NULL)
		return true;
	/* module-path selected the file already (pg_token_open_registry). */
	path = p11glue_uri_get(uri, P11GLUE_URI_MODULE_PATH, NULL);
	if (!p11glue_uri_match_module(uri, p11glue_module_name(mod),
	                              path ? (const char *)path : NULL))
		return false;
	return p11glue_uri_match_module_info(uri, info);
}

static int
walk_module(p11glue_module *mod, const p11glue_uri *uri, pg_token_func func,
            void *data, size_t *count)
{
	pg_token t = { .module = mod, .funcs = p11glue_module_functions(mod) };
	CK_SLOT_ID *slots = NULL;
	CK_ULONG n = 0;
	CK_RV rv;
	int status = 0;

	if (t.funcs == NULL || t.funcs->C_GetInfo(&t.info) != CKR_OK ||
	    !module_matches(uri, mod, &t.info))
		return 0;
	rv = t.funcs->C_GetSlotList(CK_TRUE, NULL, &n);
	if (rv == CKR_OK && n > 0) {
		slots = calloc(n, sizeof(*slots));
		rv = slots ? t.funcs->C_GetSlotList(CK_TRUE, slots, &n) : CKR_HOST_MEMORY;
	}
	if (rv != CKR_OK) {
		pg_message("%s: C_GetSlotList: %s", p11glue_module_name(mod), pg_token_ckr(rv));
		free(slots);
		return 0;
	}
	for (CK_ULONG i = 0; i < n && status == 0; i++) {
		t.slot = slots[i];
		if (t.funcs->C_GetSlotInfo(t.slot, &t.slot_info) != CKR_OK ||
		    t.funcs->C_GetTokenInfo(t.slot, &t.token) != CKR_OK)
			continue;
		if (uri && (!p11glue_uri_match_slot_info(uri, t.slot, &t.slot_info) ||
		            !p11glue_uri_match_token_info(uri, &t.token)))
			continue;
		if (count)
			(*count)++;
		status = func(&t, data);
	}
	free(slots);
	return status;
}

int
pg_token_each(const pg_token_modules *modules, const p11glue_uri *uri, pg_token_func func,
              void *data, size_t *count)
{
	int status = 0;

	if (count)
		*count = 0;
	for (size_t i = 0; status == 0 && i < pg_token_module_count(modules); i++)
		status = walk_module(pg_token_module_at(modules, i), uri, func, data, count);
	return status;
}
