/*
 * trust dump: the command line of pg_trust_dump (trust/tool/dump.c).
 */
#include "config.h"

#include "tool.h"
#include "trust-tool.h"

#include <p11glue/p11glue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
dump_help(FILE *out)
{
	fprintf(out, "usage: trust dump --filter=<what>\n\n"
	             "  --filter=<what>     filter of what to export\n"
	             "                        pkcs11:object=xx  a PKCS#11 URI\n"
	             "                        all               all objects\n"
	             "  -v, --verbose       show verbose debug output\n"
	             "  -q, --quiet         suppress command output\n");
}

int
pg_cmd_trust_dump(int argc, char **argv)
{
	p11glue_uri *uri = NULL;
	const char *filter = NULL;
	const pg_opt table[] = {
		{ "filter", 0, PG_OPT_TEXT, &filter, 0 },
		{ "verbose", 'v', PG_OPT_IGNORE, NULL, 0 },
		{ "quiet", 'q', PG_OPT_IGNORE, NULL, 0 },
	};
	int next, rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), dump_help,
	                               PG_OPTS_HELP_ON_ERROR, -1, &next);

	if (rv >= 0)
		return rv;
	if (filter != NULL && strcmp(filter, "all") != 0 &&
	    (strncmp(filter, "pkcs11:", 7) != 0 ||
	     p11glue_uri_parse(filter, P11GLUE_URI_LENIENT, &uri, NULL) != P11GLUE_OK)) {
		pg_message("couldn't parse pkcs11 uri filter: %s", filter);
		p11glue_uri_free(uri);
		return PG_EXIT_USAGE;
	}
	if (next < argc) {
		pg_message("extra arguments passed to command");
		p11glue_uri_free(uri);
		return PG_EXIT_USAGE;
	}
	rv = pg_trust_dump(uri, stdout);
	p11glue_uri_free(uri);
	return rv;
}
