/*
 * p11glue trust check: for the configured trust (the tokens `trust list`
 * reads), what the programs that read it would accept (judged in
 * src/trust/tool/check.c, from what they read by default or from fresh
 * extractions), reported as text or JSON. Exit 0 when all
 * agree, 1 on a disagreement (or when an artefact cannot be read), 2 on
 * a usage error.
 */
#include "config.h"

#include "tool.h"
#include "trust-check.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Report
 */

static void
report_text(const pg_check *ck, bool verbose)
{
	int width = 8;

	/* The names in a column, at least 8 wide. */
	for (size_t n = 0; n < ck->n_consumers; n++)
		if ((int)strlen(ck->consumers[n]->name) + 1 > width)
			width = (int)strlen(ck->consumers[n]->name) + 1;
	for (size_t n = 0; n < ck->n_consumers; n++)
		if (ck->consumers[n]->note)
			printf("note: %s: %s\n", ck->consumers[n]->name, ck->consumers[n]->note);
	for (size_t i = 0; i < ck->n_items; i++) {
		const pg_check_item *it = &ck->items[i];
		const char *want = it->expect_accept ? "accept" : "reject";
		if (verbose)
			printf("\"%s\" (%s): expected %s\n", it->name, it->kind, want);
		for (size_t n = 0; n < ck->n_consumers; n++) {
			int d = it->decision[n];
			bool bad = d != PG_CHECK_NA && (d == PG_CHECK_ACCEPT) != it->expect_accept;
			if (verbose)
				printf("    %-*s %-6s %s%s\n", width, ck->consumers[n]->name,
				       pg_check_decision_names[d], bad ? "DISAGREES: " : "", it->why[n]);
			else if (bad)
				printf("disagreement: \"%s\" (%s): %s: expected %s, actual %s: %s\n",
				       it->name, it->kind, ck->consumers[n]->name, want,
				       pg_check_decision_names[d], it->why[n]);
			else if (d == PG_CHECK_NA)
				printf("cannot express: \"%s\" (%s): %s: %s\n", it->name, it->kind,
				       ck->consumers[n]->name, it->why[n]);
		}
	}
	printf("trust check for %s: %zu anchors, %zu distrusted, %zu revoked; ",
	       ck->k.purpose_name, ck->n_anchors, ck->n_distrusted, ck->n_revoked);
	if (ck->n_disagree == 0) {
		for (size_t n = 0; n < ck->n_consumers; n++)
			printf("%s%s", n == 0 ? "" : n + 1 == ck->n_consumers ? " and " : ", ",
			       ck->consumers[n]->name);
		printf(" agree\n");
	} else {
		printf("%zu disagreement%s\n", ck->n_disagree, ck->n_disagree == 1 ? "" : "s");
	}
}

static void
json_item_head(pg_json *j, const pg_check_item *it)
{
	pg_json_key_string(j, "certificate", it->name);
	pg_json_key_string(j, "kind", it->kind);
	pg_json_key_string(j, it->x ? "sha1" : "serial", it->id);
	pg_json_key_string(j, "expected", it->expect_accept ? "accept" : "reject");
}

/*
 * The array key of what each consumer decided against the expectation
 * (na false), or could not express at all (na true): one object per
 * item and consumer.
 */
static void
json_findings(pg_json *j, const pg_check *ck, const char *key, bool na)
{
	pg_json_key_begin_array(j, key);
	for (size_t i = 0; i < ck->n_items; i++)
		for (size_t n = 0; n < ck->n_consumers; n++) {
			const pg_check_item *it = &ck->items[i];
			int d = it->decision[n];
			if ((d == PG_CHECK_NA) != na ||
			    (!na && (d == PG_CHECK_ACCEPT) == it->expect_accept))
				continue;
			pg_json_begin_object(j);
			json_item_head(j, it);
			pg_json_key_string(j, "consumer", ck->consumers[n]->name);
			if (!na)
				pg_json_key_string(j, "actual", pg_check_decision_names[d]);
			pg_json_key_string(j, "reason", it->why[n]);
			pg_json_end_object(j);
		}
	pg_json_end_array(j);
}

static void
report_json(const pg_check *ck, bool verbose)
{
	pg_json j;

	pg_json_init(&j, stdout);
	pg_json_begin_object(&j);
	pg_json_key_string(&j, "purpose", ck->k.purpose_name);
	pg_json_key_ulong(&j, "anchors", ck->n_anchors);
	pg_json_key_ulong(&j, "distrusted", ck->n_distrusted);
	pg_json_key_ulong(&j, "revoked", ck->n_revoked);
	pg_json_key_bool(&j, "agree", ck->n_disagree == 0);
	pg_json_key_begin_array(&j, "consumers");
	for (size_t n = 0; n < ck->n_consumers; n++)
		pg_json_string(&j, ck->consumers[n]->name);
	pg_json_end_array(&j);
	pg_json_key_begin_array(&j, "notes");
	for (size_t n = 0; n < ck->n_consumers; n++)
		if (ck->consumers[n]->note) {
			char line[1200];
			snprintf(line, sizeof(line), "%s: %s", ck->consumers[n]->name,
			         ck->consumers[n]->note);
			pg_json_string(&j, line);
		}
	pg_json_end_array(&j);
	json_findings(&j, ck, "disagreements", false);
	json_findings(&j, ck, "cannot_express", true);
	if (verbose) {
		pg_json_key_begin_array(&j, "results");
		for (size_t i = 0; i < ck->n_items; i++) {
			const pg_check_item *it = &ck->items[i];
			pg_json_begin_object(&j);
			json_item_head(&j, it);
			for (size_t n = 0; n < ck->n_consumers; n++) {
				pg_json_key_begin_object(&j, ck->consumers[n]->name);
				pg_json_key_string(&j, "decision", pg_check_decision_names[it->decision[n]]);
				pg_json_key_string(&j, "reason", it->why[n]);
				pg_json_end_object(&j);
			}
			pg_json_end_object(&j);
		}
		pg_json_end_array(&j);
	}
	pg_json_end_object(&j);
	pg_json_finish(&j);
}

/* ---------------------------------------------------------------------------
 * The command
 */

static void
check_help(FILE *out)
{
	fprintf(out,
	        "usage: p11glue trust check [--purpose=<usage>] [--json] [--verbose]\n"
	        "                           [--fresh | --openssl-directory=DIR | --java-cacerts=FILE]\n\n"
	        "Compares what programs accept with the configured trust, for every anchor,\n"
	        "distrusted certificate and revoked serial number: by default reading what\n"
	        "they read (OpenSSL's default paths, curl's, GnuTLS's trust file, the trust\n"
	        "modules' objects for GnuTLS, NSS and Chromium, Java's keystore).\n\n"
	        "  --purpose=<usage>         the purpose to check (default server-auth):\n"
	        "                              server-auth, client-auth, email, code-signing\n"
	        "                              or a dotted OID\n"
	        "  --fresh                   check fresh extractions for OpenSSL and Java instead\n"
	        "                            (can every decision be expressed at all?)\n"
	        "  --openssl-directory=DIR   with --fresh: this directory (as -CApath reads it)\n"
	        "                            instead of an extraction (implies --fresh)\n"
	        "  --java-cacerts=FILE       this keystore instead of an extraction (implies\n"
	        "                            --fresh)\n"
	        "  --json                    print the result as JSON\n"
	        "  -v, --verbose             show every consumer's decision, not only\n"
	        "                            disagreements\n"
	        "  -h, --help                show this help\n\n"
	        "Exit status: 0 all agree, 1 a disagreement or an error, 2 usage error.\n");
}

typedef struct {
	const char *purpose_name;
	pg_check_sources src;
	bool json, verbose;
} check_opts;

static int
parse_check_opts(int argc, char **argv, check_opts *o)
{
	const pg_opt table[] = {
		{ "purpose", 0, PG_OPT_TEXT, &o->purpose_name, 0 },
		{ "fresh", 0, PG_OPT_FLAG, &o->src.fresh, 0 },
		{ "openssl-directory", 0, PG_OPT_TEXT, &o->src.openssl_dir, 0 },
		{ "java-cacerts", 0, PG_OPT_TEXT, &o->src.java_keystore, 0 },
		{ "json", 0, PG_OPT_FLAG, &o->json, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &o->verbose, 0 },
	};
	int next;

	return pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), check_help, 0, 0, &next);
}

int
pg_cmd_trust_check(int argc, char **argv)
{
	check_opts o = { .purpose_name = "server-auth" };
	pg_check ck;
	pg_trust_set set;
	const char *purpose;
	int rv = parse_check_opts(argc, argv, &o);

	if (rv >= 0)
		return rv;
	if ((purpose = pg_trust_purpose_oid(o.purpose_name)) == NULL)
		return pg_tool_usage_error(argv[0], "unsupported purpose: %s", o.purpose_name);
	o.src.fresh |= o.src.openssl_dir != NULL || o.src.java_keystore != NULL;
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		return rv;
	rv = pg_trust_check_run(&ck, &set, purpose, o.purpose_name, &o.src);
	if (rv == PG_EXIT_OK) {
		if (o.json)
			report_json(&ck, o.verbose);
		else
			report_text(&ck, o.verbose);
		rv = ck.n_disagree ? PG_EXIT_FAIL : PG_EXIT_OK;
	}
	pg_trust_check_clear(&ck);
	pg_trust_clear(&set);
	return rv;
}
