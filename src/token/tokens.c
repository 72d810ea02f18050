/*
 * Opening the registry and walking its tokens, for the listing commands.
 */
#include "config.h"

#include "token.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

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

int
pg_token_open_registry(const p11glue_uri *uri, p11glue_registry **registry)
{
	const unsigned char *path = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_PATH, NULL) : NULL;
	const unsigned char *name = uri ? p11glue_uri_get(uri, P11GLUE_URI_MODULE_NAME, NULL) : NULL;
	const char *messages;
	int rv;

	if (path != NULL)
		rv = p11glue_registry_load_file((const char *)path, (const char *)name, NULL, 0,
		                                registry);
	else
		rv = p11glue_registry_load(0, registry);
	if (*registry != NULL) {
		messages = p11glue_registry_messages(*registry);
		pg_token_print_messages(messages);
	}
	if (rv != P11GLUE_OK) {
		pg_message("cannot load the modules: %s", p11glue_strerror(rv));
		p11glue_registry_free(*registry);
		*registry = NULL;
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
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
pg_token_each(p11glue_registry *registry, const p11glue_uri *uri,
                   pg_token_func func, void *data, size_t *count)
{
	int status = 0;

	if (count)
		*count = 0;
	for (size_t i = 0; status == 0 && i < p11glue_registry_count(registry); i++)
		status = walk_module(p11glue_registry_module(registry, i), uri, func, data, count);
	return status;
}
