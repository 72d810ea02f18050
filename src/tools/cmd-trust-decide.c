/*
 * p11glue trust anchor | distrust | crl | extract-compat: the commands
 * that change trust decisions (src/trust/tool/decide.c) and bring the
 * files other programs read up to date (compat.c). Quiet on success, as
 * p11-kit's `trust anchor` is, except for what the user must know (on
 * standard error); -v lists what changed, --json describes all of it.
 * Exit 0 done, 1 an error, 2 usage.
 */
#include "config.h"

#include "tool.h"
#include "trust-tool.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Each line of a report buffer, as a JSON array of strings or on out. */
static void
json_lines(pg_json *j, const pg_buf *b)
{
	const char *p = b->data ? (const char *)b->data : "";

	pg_json_begin_array(j);
	for (const char *nl; *p; p = nl + 1) {
		char line[4400];
		nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		pg_json_text(j, line);
	}
	pg_json_end_array(j);
}

static void
print_lines(const char *prefix, const pg_buf *b)
{
	if (b->len)
		for (const char *p = (const char *)b->data, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
			fprintf(stderr, "%s%.*s\n", prefix, (int)(nl - p), p);
}

static void
json_compat(pg_json *j, const pg_compat_report *c)
{
	pg_json_begin_object(j);
	pg_json_key_string(j, "level", c->level ? c->level : "");
	pg_json_key_bool(j, "updated", c->updated);
	pg_json_key(j, "changed");
	json_lines(j, &c->changed);
	pg_json_key(j, "notes");
	json_lines(j, &c->notes);
	pg_json_end_object(j);
}

static void
report(const char *operation, const pg_decide_report *r, int rv, bool json, bool verbose)
{
	pg_json j;

	if (!json) {
		for (size_t i = 0; verbose && i < r->n_items; i++) {
			const pg_decide_item *it = &r->items[i];
			if (it->result)
				fprintf(stderr, "p11glue: %s: \"%s\" %s in %s%s%s\n", it->operand,
				        it->certificate ? it->certificate : "?", it->result,
				        r->location[0] ? r->location : "the writable location",
				        it->replaced ? ", replacing its " : "",
				        it->replaced ? it->replaced : "");
		}
		if (verbose)
			print_lines("p11glue: updated: ", &r->compat.changed);
		print_lines("p11glue: note: ", &r->compat.notes);
		return;
	}
	pg_json_init(&j, stdout);
	pg_json_begin_object(&j);
	pg_json_key_string(&j, "operation", operation);
	pg_json_key_bool(&j, "ok", rv == PG_EXIT_OK);
	pg_json_key_string(&j, "level", r->level ? r->level : "");
	pg_json_key_text(&j, "location", r->location);
	pg_json_key_begin_array(&j, "results");
	for (size_t i = 0; i < r->n_items; i++) {
		const pg_decide_item *it = &r->items[i];
		pg_json_begin_object(&j);
		pg_json_key_text(&j, "operand", it->operand);
		pg_json_key_string(&j, "certificate", it->certificate ? it->certificate : "");
		pg_json_key_text(&j, "sha1", it->sha1);
		pg_json_key_string(&j, "result", it->result ? it->result : "failed");
		if (it->replaced)
			pg_json_key_string(&j, "replaced", it->replaced);
		if (it->file)
			pg_json_key_text(&j, "file", it->file);
		pg_json_end_object(&j);
	}
	pg_json_end_array(&j);
	pg_json_key(&j, "propagated");
	json_compat(&j, &r->compat);
	pg_json_end_object(&j);
	pg_json_finish(&j);
}

static int
decide(const char *operation, pg_decide_op op, int argc, char **argv, int next, bool json,
       bool verbose)
{
	pg_decide_report r;
	int rv;

	if (next >= argc) {
		pg_message("specify one or more %s to %s", op >= PG_DECIDE_CRL_ADD ? "CRLs" :
		           op <= PG_DECIDE_UNANCHOR ? "anchors" : "certificates",
		           op == PG_DECIDE_ANCHOR ? "store" : op == PG_DECIDE_DISTRUST ? "distrust"
		           : op == PG_DECIDE_CRL_ADD ? "add" : "remove");
		return PG_EXIT_USAGE;
	}
	rv = pg_trust_decide(op, argv + next, argc - next, &r);
	report(operation, &r, rv, json, verbose);
	pg_decide_report_clear(&r);
	return rv;
}

static void
anchor_help(FILE *out)
{
	fprintf(out, "usage: trust anchor --store <file> ...\n"
	             "       trust anchor --remove <file or URI> ...\n"
	             "       trust anchor --distrust <file> ...\n\n"
	             "  --store             store the certificates as anchors (the default)\n"
	             "  --remove            remove the anchors\n"
	             "  --distrust          distrust the certificates (as 'trust distrust')\n"
	             "  --json              describe what was done as a JSON object\n"
	             "  -v, --verbose       show what was changed\n"
	             "  -q, --quiet         suppress command output\n");
}

int
pg_cmd_trust_anchor(int argc, char **argv)
{
	int next, action = 's', rv;
	bool json = false, verbose = false;
	const pg_opt table[] = {
		{ "store", 0, PG_OPT_SET, &action, 's' },
		{ "remove", 0, PG_OPT_SET, &action, 'r' },
		{ "distrust", 0, PG_OPT_SET, &action, 'd' },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &verbose, 0 },
		{ "quiet", 'q', PG_OPT_IGNORE, NULL, 0 },
	};

	rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), anchor_help,
	                     PG_OPTS_HELP_ON_ERROR, -1, &next);
	if (rv >= 0)
		return rv;
	if (action == 'd')
		return decide("distrust", PG_DECIDE_DISTRUST, argc, argv, next, json, verbose);
	return decide(action == 's' ? "anchor --store" : "anchor --remove",
	              action == 's' ? PG_DECIDE_ANCHOR : PG_DECIDE_UNANCHOR, argc, argv, next,
	              json, verbose);
}

static void
distrust_help(FILE *out)
{
	fprintf(out, "usage: trust distrust <file> ...\n"
	             "       trust distrust --remove <file or URI> ...\n\n"
	             "Distrusts certificates for every purpose, in every token (distrust wins\n"
	             "over any anchor), or lifts a distrust stored before.\n\n"
	             "  --remove            lift the distrust\n"
	             "  --json              describe what was done as a JSON object\n"
	             "  -v, --verbose       show what was changed\n");
}

int
pg_cmd_trust_distrust(int argc, char **argv)
{
	int next, rv;
	bool json = false, verbose = false, remove = false;
	const pg_opt table[] = {
		{ "remove", 0, PG_OPT_FLAG, &remove, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &verbose, 0 },
	};

	rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), distrust_help, 0, -1, &next);
	if (rv >= 0)
		return rv;
	return decide(remove ? "distrust --remove" : "distrust",
	              remove ? PG_DECIDE_UNDISTRUST : PG_DECIDE_DISTRUST, argc, argv, next, json,
	              verbose);
}

static void
crl_help(FILE *out)
{
	fprintf(out, "usage: trust crl [--add] <CRL file> ...\n"
	             "       trust crl --remove <CRL or issuer certificate file> ...\n\n"
	             "Adds CRLs (PEM or DER) to the crls/ directory of the writable location,\n"
	             "replacing an older CRL of the same issuer, or removes its issuer's CRLs.\n"
	             "A CRL counts only beside its issuer's certificate and while its next\n"
	             "update has not passed.\n\n"
	             "  --add               add (the default)\n"
	             "  --remove            remove\n"
	             "  --json              describe what was done as a JSON object\n"
	             "  -v, --verbose       show what was changed\n");
}

int
pg_cmd_trust_crl(int argc, char **argv)
{
	int next, action = 'a', rv;
	bool json = false, verbose = false;
	const pg_opt table[] = {
		{ "add", 0, PG_OPT_SET, &action, 'a' },
		{ "remove", 0, PG_OPT_SET, &action, 'r' },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &verbose, 0 },
	};

	rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), crl_help, 0, -1, &next);
	if (rv >= 0)
		return rv;
	return decide(action == 'a' ? "crl --add" : "crl --remove",
	              action == 'a' ? PG_DECIDE_CRL_ADD : PG_DECIDE_CRL_REMOVE, argc, argv, next,
	              json, verbose);
}

static void
compat_help(FILE *out)
{
	fprintf(out, "usage: trust extract-compat [--system | --user] [--json]\n\n"
	             "Brings the files programs read by default up to date with the trust\n"
	             "decisions (every trust command does this after a change):\n"
	             "  --system            the system's (root's default): on Debian the inputs of\n"
	             "                      update-ca-certificates, which then runs\n"
	             "                      (/etc/ssl/certs, ca-certificates.crt, java/cacerts)\n"
	             "  --user              the user's (a user's default): the files that\n"
	             "                      'p11glue setup' points programs to (its trust target)\n"
	             "  --hook              as update-ca-certificates' hook runs it\n"
	             "  --json              describe what was done as a JSON object\n"
	             "  -v, --verbose       show what was changed\n");
}

int
pg_cmd_trust_extract_compat(int argc, char **argv)
{
	int next, level = geteuid() == 0 ? 's' : 'u', rv;
	bool json = false, verbose = false, hook = false;
	pg_compat_report r;
	pg_json j;
	const pg_opt table[] = {
		{ "system", 0, PG_OPT_SET, &level, 's' },
		{ "user", 0, PG_OPT_SET, &level, 'u' },
		{ "hook", 0, PG_OPT_FLAG, &hook, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		{ "verbose", 'v', PG_OPT_FLAG, &verbose, 0 },
	};

	rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), compat_help, 0, 0, &next);
	if (rv >= 0)
		return rv;
	if (hook)
		level = 's';
	pg_compat_report_init(&r);
	rv = pg_trust_compat(level == 's', level == 's' ? (hook ? PG_COMPAT_HOOK : 0) : PG_COMPAT_MAKE,
	                     &r);
	if (json) {
		pg_json_init(&j, stdout);
		json_compat(&j, &r);
		pg_json_finish(&j);
	} else {
		if (verbose)
			print_lines("p11glue: updated: ", &r.changed);
		print_lines("p11glue: note: ", &r.notes);
	}
	pg_compat_report_clear(&r);
	return rv;
}
