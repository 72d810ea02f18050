/*
 * The options and help text every key store command shares
 * (store-tool.h).
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>
#include <string.h>

#define STORE_MODULE "p11glue-store.so"

int
pg_store_options(int argc, char **argv, const pg_opt *table, size_t n, void (*help)(FILE *out),
                 pg_store_opts *opts, bool uri_required, p11glue_uri **uri)
{
	pg_opt all[32];
	const pg_opt store[] = { PG_STORE_OPTIONS(opts) };
	int next, rv;

	if (n + PG_N_ELEMENTS(store) > PG_N_ELEMENTS(all))
		return pg_tool_usage_error(argv[0], "too many options in the command's table");
	for (size_t i = 0; i < n; i++)
		all[i] = table[i];
	for (size_t i = 0; i < PG_N_ELEMENTS(store); i++)
		all[n + i] = store[i];
	rv = pg_tool_options(argc, argv, all, n + PG_N_ELEMENTS(store), help,
	                     uri_required ? PG_OPTS_ONE_URI : 0, uri_required ? -1 : 1, &next);
	if (rv >= 0)
		return rv;
	if (!pg_store_parse_uri(next < argc ? argv[next] : NULL, uri))
		return PG_EXIT_FAIL;
	return -1;
}

bool
pg_store_parse_uri(const char *text, p11glue_uri **uri)
{
	if (text != NULL)
		return pg_token_parse_uri(text, uri);
	*uri = p11glue_uri_new();
	if (*uri == NULL)
		pg_message("out of memory");
	return *uri != NULL;
}

void
pg_store_print_report(const pg_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const pg_report_item *it = &r->items[i];
		if (strcmp(it->what, "skipped certificate") == 0)
			printf("certificate '%s' is on the token already: skipped\n",
			       it->name ? it->name : "?");
		else
			printf("%s: %s\n", it->what, it->uri ? it->uri : "?");
	}
	if (r->failed)
		pg_message("out of memory: some objects are not listed");
}

void
pg_store_json_begin(pg_json *j, const pg_keytoken *kt)
{
	char *uri = pg_keytoken_uri(kt);

	pg_json_init(j, stdout);
	pg_json_begin_object(j);
	pg_json_key_text(j, "token", uri ? uri : "");
	free(uri);
}

void
pg_store_json_uris(pg_json *j, const char *key, const pg_report *r, const char *what)
{
	pg_json_key_begin_array(j, key);
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->items[i].what, what) == 0)
			pg_json_text(j, r->items[i].uri ? r->items[i].uri : "");
	}
	pg_json_end_array(j);
}

bool
pg_store_json_end(pg_json *j, const pg_report *r)
{
	pg_json_end_object(j);
	pg_json_finish(j);
	if (r != NULL && r->failed)
		pg_message("out of memory: some objects are not listed");
	return r == NULL || !r->failed;
}

void
pg_store_help_common(FILE *out, const char *heading, const char *examples)
{
	fprintf(out,
	        "Module and token:\n"
	        "  --module PATH   the PKCS#11 module. Without it: the URI's module-path,\n"
	        "                  else the module registered under the URI's module-name,\n"
	        "                  else the module registered as 'p11glue-store', else\n"
	        "                  p11glue-store.so of the build tree this program runs from,\n"
	        "                  else the installed " P11GLUE_MODULE_DIR "/" STORE_MODULE ".\n"
	        "  --store DIR     the key store directory (passed to the module as\n"
	        "                  store=DIR); default: $P11GLUE_STORE_DIR, else\n"
	        "                  $XDG_DATA_HOME/p11glue/store, else\n"
	        "                  ~/.local/share/p11glue/store.\n"
	        "  URI             a PKCS#11 URI (RFC 7512) selecting the token, as\n"
	        "                  'p11glue list-tokens' prints it (token=LABEL is usually\n"
	        "                  enough). It may be left out when the module has one\n"
	        "                  token.\n"
	        "\n"
	        "PINs: a PIN the command logs in with comes from its option\n"
	        "(--pin-source for the user PIN, --so-pin-source for the SO PIN), else\n"
	        "from the URI's pin-value or pin-source, else from a prompt on the\n"
	        "terminal with echo off. A *-source option, and a URI's pin-source, take\n"
	        "  file:PATH, PATH  a file readable by its owner only (chmod 600); one\n"
	        "                   trailing newline is dropped\n"
	        "  env:NAME         the value of environment variable NAME\n"
	        "  fd:N             a line read from open descriptor N (one descriptor\n"
	        "                   can carry several PINs, a line each)\n"
	        "A new PIN holding a newline, a carriage return or a NUL byte is refused:\n"
	        "nobody could type it at a prompt.\n"
	        "\n"
	        "Exit status: 0 success, 1 an error (no such token or object, wrong PIN,\n"
	        "unreadable file, refused by the token), 2 a usage error.\n");
	fprintf(out, "\n%s:\n", heading);
	fputs(examples, out);
}

