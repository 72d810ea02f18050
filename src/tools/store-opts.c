/*
 * The options and help text every key store command shares
 * (store-tool.h).
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>

#define STORE_MODULE "p11glue-store.so"

bool
pg_store_opts_take(pg_store_opts *opts, int opt, const char *arg)
{
	if (opt == 'M')
		opts->module = arg;
	else if (opt == 'S')
		opts->store = arg;
	else
		return false;
	return true;
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
pg_store_help_common(FILE *out)
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
	        "PINs: a PIN the command logs in with comes from the URI's pin-value or\n"
	        "pin-source (pin-source=file:/path/to/file), else from a prompt on the\n"
	        "terminal with echo off. A *-source option takes a file name or\n"
	        "file:/path; the file must be readable by its owner only (chmod 600),\n"
	        "and one trailing newline is dropped.\n"
	        "\n"
	        "Exit status: 0 success, 1 an error (no such token or object, wrong PIN,\n"
	        "unreadable file, refused by the token), 2 a usage error.\n");
}

