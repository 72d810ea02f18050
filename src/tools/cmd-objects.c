/*
 * p11glue list-objects [--login] [--json] URI
 */
#include "config.h"

#include "tool.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	bool json;
	bool login;
	pg_pins pins;
	const p11glue_uri *uri;
	pg_json out;
	int status;
} walk;

static void
print_hex(FILE *out, const unsigned char *data, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%02x", data[i]);
}

static int
print_object(pg_keytoken *kt, CK_OBJECT_HANDLE obj, void *data)
{
	walk *w = data;
	size_t label_len = 0, id_len = 0, class_len, type_len;
	unsigned char *label = pg_keytoken_get(kt, obj, CKA_LABEL, &label_len);
	unsigned char *id = pg_keytoken_get(kt, obj, CKA_ID, &id_len);
	unsigned char *klass = pg_keytoken_get(kt, obj, CKA_CLASS, &class_len);
	unsigned char *key_type = pg_keytoken_get(kt, obj, CKA_KEY_TYPE, &type_len);
	char *uri = pg_keytoken_object_uri(kt, obj);
	const char *class_name = klass && class_len == sizeof(CK_ULONG)
	                         ? pg_name_cko(*(CK_ULONG *)klass) : NULL;
	const char *key_name = key_type && type_len == sizeof(CK_ULONG)
	                       ? pg_name_ckk(*(CK_ULONG *)key_type) : NULL;

	if (w->json) {
		pg_json_begin_object(&w->out);
		pg_json_key_text(&w->out, "uri", uri ? uri : "");
		pg_json_key_string(&w->out, "class", class_name ? class_name : "unknown");
		if (label) {
			pg_json_key(&w->out, "label");
			pg_json_bytes(&w->out, label, label_len);
		}
		if (id) {
			char *hex = malloc(id_len * 2 + 1);
			for (size_t i = 0; hex && i < id_len; i++)
				snprintf(hex + i * 2, 3, "%02x", id[i]);
			pg_json_key_string(&w->out, "id", hex ? (hex[id_len * 2] = 0, hex) : "");
			free(hex);
		}
		if (key_name)
			pg_json_key_string(&w->out, "key-type", key_name);
		pg_json_end_object(&w->out);
	} else {
		printf("Object: %s\n    class: %s\n", uri ? uri : "?", class_name ? class_name : "unknown");
		if (label)
			printf("    label: %.*s\n", (int)label_len, label);
		if (id) {
			printf("    id: ");
			print_hex(stdout, id, id_len);
			printf("\n");
		}
		if (key_name)
			printf("    key-type: %s\n", key_name);
	}
	free(uri);
	free(label);
	free(id);
	free(klass);
	free(key_type);
	return PG_EXIT_OK;
}

static int
list_token_objects(const pg_token *t, void *data)
{
	walk *w = data;

	/* An uninitialized token (the key store's free slot) holds nothing,
	 * and takes no session. */
	if (!(t->token.flags & CKF_TOKEN_INITIALIZED))
		return 0;
	if (pg_token_each_object(t, w->uri, w->login, &w->pins, print_object, w) != PG_EXIT_OK)
		w->status = PG_EXIT_FAIL;
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue list-objects [--login] [--pin-source SRC] [--json] URI\n"
	        "\n"
	        "Lists the objects the URI selects (object, type, id) on the tokens it\n"
	        "selects, each with the URI that names it. Private objects are only\n"
	        "visible after --login.\n"
	        "\n"
	        "Options:\n"
	        "  --login           log in to each token first; the PIN comes from\n"
	        "                    --pin-source, else the URI's pin-value or pin-source,\n"
	        "                    else from a prompt on the terminal (a --pin-source\n"
	        "                    is read once, and its PIN used for every token)\n"
	        "  --pin-source SRC  read the user PIN from SRC (implies --login): file:PATH\n"
	        "                    or a file name (chmod 600; one trailing newline is\n"
	        "                    dropped), env:NAME (the variable's value) or fd:N (a\n"
	        "                    line read from open descriptor N)\n"
	        "  --json            print a JSON document for scripts\n"
	        "  -h, --help        show this help\n"
	        "\n"
	        "Exit status: 0 success, 1 error (bad URI, no token matched, login\n"
	        "failed), 2 usage error.\n");
}

int
pg_cmd_list_objects(int argc, char **argv)
{
	walk w = { .status = PG_EXIT_OK };
	p11glue_uri *uri = NULL;
	const pg_opt table[] = {
		{ "json", 0, PG_OPT_FLAG, &w.json, 0 },
		{ "login", 0, PG_OPT_FLAG, &w.login, 0 },
		PG_PIN_OPTION(&w.pins),
	};
	int next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), usage,
	                                   PG_OPTS_ONE_URI, -1, &next);

	if (status >= 0)
		return status;
	if (!pg_token_parse_uri(argv[next], &uri))
		return PG_EXIT_FAIL;
	w.uri = uri;
	w.login = w.login || w.pins.user_source != NULL;
	status = pg_tool_walk_tokens(uri, w.json ? &w.out : NULL, true, list_token_objects, &w);
	if (status == PG_EXIT_OK)
		status = w.status;
	pg_pins_clear(&w.pins);
	p11glue_uri_free(uri);
	return status;
}
