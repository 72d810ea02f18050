/*
 * p11glue delete-object: the objects a URI selects, deleted.
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------
 * delete-object
 */

static void
delete_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue delete-object [--pin-source SRC] [--module PATH]\n"
	        "                             [--store DIR] URI\n"
	        "\n"
	        "Deletes every object the URI selects on its token and prints the URI\n"
	        "of each. The URI must name objects by object (label) or id, and may\n"
	        "narrow them by type: 'pkcs11:token=t;object=k' deletes a key pair and\n"
	        "its certificate, 'pkcs11:token=t;object=k;type=cert' the certificate\n"
	        "only. Logs in first (when the token has a user PIN) so that private\n"
	        "objects are found too. Deleting cannot be undone.\n"
	        "\n"
	        "Options:\n"
	        "  --pin-source SRC  read the user PIN from SRC (see PINs below)\n"
	        "  -h, --help        show this help\n"
	        "\n");
	pg_store_help_common(out, "Example",
	        "  p11glue delete-object 'pkcs11:token=mykeys;object=old%20key'\n");
}

static int
do_delete(pg_keytoken *kt, const p11glue_uri *uri)
{
	CK_OBJECT_HANDLE *found = calloc(PG_STORE_MAX_FOUND, sizeof(*found));
	char *text;
	long n;
	int status;

	if (found == NULL)
		return PG_EXIT_FAIL;
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK)
		goto out;
	if ((kt->token.flags & CKF_USER_PIN_INITIALIZED) &&
	    (status = pg_keytoken_login(kt, CKU_USER, uri)) != PG_EXIT_OK)
		goto out;
	n = pg_keytoken_find(kt, uri, NULL, 0, found, PG_STORE_MAX_FOUND);
	status = PG_EXIT_FAIL;
	if (n == 0)
		pg_message("no object matches the URI");
	if (n <= 0)
		goto out;
	status = PG_EXIT_OK;
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(kt, found[i]);
		if (pg_keytoken_destroy(kt, found[i], text ? text : "C_DestroyObject") == PG_EXIT_OK)
			printf("deleted %s\n", text ? text : "an object");
		else
			status = PG_EXIT_FAIL;
		free(text);
	}
out:
	free(found);
	return status;
}

int
pg_cmd_delete_object(int argc, char **argv)
{
	pg_pins pins = { 0 };
	pg_store_opts opts = { .pins = &pins };
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	const pg_opt table[] = { PG_PIN_OPTION(&pins) };
	int status = pg_store_options(argc, argv, table, PG_N_ELEMENTS(table), delete_usage, &opts,
	                              true, &uri);

	if (status >= 0) {
		p11glue_uri_free(uri);
		return status;
	}
	if (p11glue_uri_get(uri, P11GLUE_URI_OBJECT, NULL) == NULL &&
	    p11glue_uri_get(uri, P11GLUE_URI_ID, NULL) == NULL) {
		p11glue_uri_free(uri);
		return pg_tool_usage_error(argv[0], "the URI must name objects by object= or id=");
	}
	status = pg_keytoken_load(&kt, &opts, uri);
	if (status == PG_EXIT_OK)
		status = do_delete(&kt, uri);
	pg_keytoken_clear(&kt);
	pg_pins_clear(&pins);
	p11glue_uri_free(uri);
	return status;
}
