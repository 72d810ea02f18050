/*
 * p11glue delete-object: the objects a URI selects, deleted; several only
 * with --all, none with --dry-run.
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * delete-object
 */

static void
delete_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue delete-object [--all] [--dry-run] [--json] [--pin-source SRC]\n"
	        "                             [--module PATH] [--store DIR] URI\n"
	        "\n"
	        "Deletes the object the URI selects on its token and prints its URI. The\n"
	        "URI must name objects by object (label) or id, and may narrow them by\n"
	        "type. When it selects several objects (a key pair and its certificate\n"
	        "share a label; keys imported from OpenSSH share their user@host\n"
	        "comment), nothing is deleted and they are listed, unless --all is\n"
	        "given: 'pkcs11:token=t;object=k' --all deletes a key pair and its\n"
	        "certificate, 'pkcs11:token=t;object=k;type=cert' the certificate only.\n"
	        "Logs in first (when the token has a user PIN) so that private objects\n"
	        "are found too. Deleting cannot be undone.\n"
	        "\n"
	        "Options:\n"
	        "  --all             delete every object the URI selects, however many\n"
	        "  --dry-run         list what would be deleted; delete nothing\n"
	        "  --json            print a JSON object: the token and the URIs deleted\n"
	        "                    (\"deleted\"), or with --dry-run the URIs that would\n"
	        "                    be (\"would-delete\"); \"failed\" lists any that the\n"
	        "                    token refused to delete\n"
	        "  --pin-source SRC  read the user PIN from SRC (see PINs below)\n"
	        "  -h, --help        show this help\n"
	        "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue delete-object --dry-run 'pkcs11:token=mykeys;object=old%20key'\n"
	        "  p11glue delete-object --all 'pkcs11:token=mykeys;object=old%20key'\n");
}

typedef struct {
	bool all, dry_run, json;
} delete_args;

/* Says why several objects are not deleted, and lists them. */
static void
refuse_several(pg_keytoken *kt, const CK_OBJECT_HANDLE *found, long n)
{
	char *text;

	pg_message("the URI selects %ld objects; nothing was deleted (--all deletes them all, "
	           "--dry-run lists them; type= or id= narrow the URI):", n);
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(kt, found[i]);
		fprintf(stderr, "  %s\n", text ? text : "?");
		free(text);
	}
}

static void
print_result(pg_keytoken *kt, const delete_args *a, const pg_report *r)
{
	pg_json j;

	if (!a->json) {
		/* One not deleted was reported as it failed. */
		for (size_t i = 0; i < r->n; i++) {
			if (strcmp(r->items[i].what, "not deleted") != 0)
				printf("%s %s\n", r->items[i].what,
				       r->items[i].uri ? r->items[i].uri : "?");
		}
		return;
	}
	pg_store_json_begin(&j, kt);
	pg_json_key_bool(&j, "dry-run", a->dry_run);
	if (a->dry_run) {
		pg_store_json_uris(&j, "would-delete", r, "would delete");
	} else {
		pg_store_json_uris(&j, "deleted", r, "deleted");
		if (pg_report_count(r, "not deleted") > 0)
			pg_store_json_uris(&j, "failed", r, "not deleted");
	}
	pg_store_json_end(&j, r);
}

/* Deletes (or with --dry-run lists) what was found, into report. */
static int
delete_found(pg_keytoken *kt, const CK_OBJECT_HANDLE *found, long n, const delete_args *a,
             pg_report *report)
{
	int status = PG_EXIT_OK;
	char *text;

	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(kt, found[i]);
		if (a->dry_run) {
			pg_report_add(report, "would delete", text, NULL);
		} else if (pg_keytoken_destroy(kt, found[i], text ? text : "C_DestroyObject") ==
		           PG_EXIT_OK) {
			pg_report_add(report, "deleted", text, NULL);
		} else {
			pg_report_add(report, "not deleted", text, NULL);
			status = PG_EXIT_FAIL;
		}
	}
	return status;
}

static int
do_delete(pg_keytoken *kt, const p11glue_uri *uri, const delete_args *a)
{
	CK_OBJECT_HANDLE *found = calloc(PG_STORE_MAX_FOUND, sizeof(*found));
	pg_report report = { 0 };
	long n;
	int status;

	if (found == NULL)
		return PG_EXIT_FAIL;
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, !a->dry_run)) != PG_EXIT_OK)
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
	/* The URI names what goes, and nothing more: several objects only
	 * when the user says so. */
	if (n > 1 && !a->all && !a->dry_run) {
		refuse_several(kt, found, n);
		goto out;
	}
	status = delete_found(kt, found, n, a, &report);
	print_result(kt, a, &report);
	if (report.failed)
		status = PG_EXIT_FAIL;
out:
	pg_report_clear(&report);
	free(found);
	return status;
}

int
pg_cmd_delete_object(int argc, char **argv)
{
	pg_store_opts opts = { 0 };
	delete_args a = { 0 };
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	const pg_opt table[] = {
		{ "all", 0, PG_OPT_FLAG, &a.all, 0 },
		{ "dry-run", 0, PG_OPT_FLAG, &a.dry_run, 0 },
		{ "json", 0, PG_OPT_FLAG, &a.json, 0 },
		PG_PIN_OPTION(&opts.pins),
	};
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
		status = do_delete(&kt, uri, &a);
	pg_keytoken_clear(&kt);
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	return status;
}
