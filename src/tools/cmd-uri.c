/*
 * p11glue uri parse|build
 */
#include "config.h"

#include "tool.h"

#include <p11glue/p11glue.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * uri parse
 */

static void
parse_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue uri parse [--json] [--lenient] URI\n"
	        "\n"
	        "Checks a PKCS#11 URI (RFC 7512). A valid URI is printed on standard\n"
	        "output in canonical form (fixed attribute order, only the characters\n"
	        "that need it percent-encoded, upper-case escapes). An invalid URI prints\n"
	        "nothing on standard output and the reason on standard error.\n"
	        "\n"
	        "Options:\n"
	        "  --json      print the decoded attributes as a JSON object; bytes that\n"
	        "              are not printable ASCII, and '%%', appear as %%XX\n"
	        "  --lenient   accept what URIs in the wild contain: white space, raw\n"
	        "              non-ASCII bytes, repeated or unknown attributes (an\n"
	        "              unknown attribute makes the URI match nothing)\n"
	        "  -h, --help  show this help\n"
	        "\n"
	        "Exit status: 0 valid, 1 invalid URI, 2 usage error.\n");
}

static void
print_json_member(FILE *out, bool *first, const char *name,
                  const unsigned char *value, size_t len)
{
	fprintf(out, "%s\n  ", *first ? "" : ",");
	*first = false;
	pg_tool_json_string(out, (const unsigned char *)name, strlen(name));
	fputs(": ", out);
	pg_tool_json_string(out, value, len);
}

static void
print_json_vendor(FILE *out, bool *first, const p11glue_uri *uri, bool query)
{
	const char *key = query ? "vendor-query" : "vendor-path";
	const unsigned char *value;
	const char *name;
	bool in_query, open = false;
	size_t len;

	for (size_t i = 0; p11glue_uri_vendor_get(uri, i, &in_query, &name, &value, &len); i++) {
		if (in_query != query)
			continue;
		if (!open) {
			fprintf(out, "%s\n  \"%s\": {", *first ? "" : ",", key);
			*first = false;
		}
		fprintf(out, "%s\n    ", open ? "," : "");
		open = true;
		pg_tool_json_string(out, (const unsigned char *)name, strlen(name));
		fputs(": ", out);
		pg_tool_json_string(out, value, len);
	}
	if (open)
		fputs("\n  }", out);
}

static void
print_json(FILE *out, const p11glue_uri *uri)
{
	bool first = true;

	fputc('{', out);
	for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++) {
		size_t len;
		const unsigned char *value = p11glue_uri_get(uri, (p11glue_uri_field)f, &len);
		if (value != NULL)
			print_json_member(out, &first, p11glue_uri_field_name((p11glue_uri_field)f),
			                  value, len);
	}
	print_json_vendor(out, &first, uri, false);
	print_json_vendor(out, &first, uri, true);
	if (p11glue_uri_is_unrecognized(uri)) {
		fprintf(out, "%s\n  \"unrecognized\": true", first ? "" : ",");
		first = false;
	}
	fputs(first ? "}\n" : "\n}\n", out);
}

/* A path attribute RFC 7512 does not define is valid, but a typo as often
 * as not: say that such a URI matches nothing here. */
static void
warn_vendor_path(const p11glue_uri *uri)
{
	const unsigned char *value;
	const char *name;
	bool in_query;
	size_t len;

	for (size_t i = 0; p11glue_uri_vendor_get(uri, i, &in_query, &name, &value, &len); i++) {
		if (!in_query)
			pg_message("warning: '%s' is no attribute of RFC 7512 (a vendor's): a URI "
			           "with it in the path matches nothing here", name);
	}
}

int
pg_cmd_uri_parse(int argc, char **argv)
{
	bool json = false, lenient = false;
	p11glue_uri_error error;
	p11glue_uri *uri;
	char *text;
	const pg_opt table[] = {
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		{ "lenient", 0, PG_OPT_FLAG, &lenient, 0 },
	};
	int next, rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), parse_usage, 0, -1,
	                               &next);

	if (rv >= 0)
		return rv;
	if (argc - next != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one URI");

	rv = p11glue_uri_parse(argv[next], lenient ? P11GLUE_URI_LENIENT : 0, &uri, &error);
	if (rv != P11GLUE_OK) {
		pg_message("invalid PKCS#11 URI: %s: %s (at byte %zu)",
		              p11glue_strerror(rv), error.detail, error.offset);
		return PG_EXIT_FAIL;
	}
	warn_vendor_path(uri);
	if (json) {
		print_json(stdout, uri);
	} else {
		text = p11glue_uri_format(uri);
		if (text == NULL) {
			p11glue_uri_free(uri);
			pg_message("out of memory");
			return PG_EXIT_FAIL;
		}
		puts(text);
		free(text);
	}
	p11glue_uri_free(uri);
	return fflush(stdout) == 0 ? PG_EXIT_OK : PG_EXIT_FAIL;
}

/* ---------------------------------------------------------------------------
 * uri build
 */

enum { OPT_VENDOR = 0x100, OPT_VENDOR_QUERY, OPT_HELP, OPT_FIELD = 0x200 };

static void
build_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue uri build [ATTRIBUTE OPTIONS...]\n"
	        "\n"
	        "Prints the canonical PKCS#11 URI (RFC 7512) holding the given values.\n"
	        "Values are given as they are (not percent-encoded); --id takes hex.\n"
	        "\n"
	        "Path attributes:\n"
	        "  --token=LABEL  --manufacturer=TEXT  --serial=TEXT  --model=TEXT\n"
	        "  --library-manufacturer=TEXT  --library-description=TEXT\n"
	        "  --library-version=MAJOR[.MINOR]\n"
	        "  --object=LABEL\n"
	        "  --type=public|private|cert|secret-key|data\n"
	        "  --id=HEX            the CKA_ID as hex digits, ':' between bytes allowed\n"
	        "  --slot-description=TEXT  --slot-manufacturer=TEXT  --slot-id=NUMBER\n"
	        "  --vendor=NAME=VALUE          a vendor path attribute (repeatable)\n"
	        "Query attributes:\n"
	        "  --pin-source=SOURCE  --pin-value=PIN\n"
	        "  --module-name=NAME  --module-path=FILE\n"
	        "  --vendor-query=NAME=VALUE    a vendor query attribute (repeatable)\n"
	        "\n"
	        "  -h, --help     show this help\n"
	        "\n"
	        "Exit status: 0 success, 1 a value its attribute cannot hold,\n"
	        "2 usage error.\n");
}

static int
build_vendor(p11glue_uri *uri, bool query, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[256];
	size_t n;

	n = eq ? (size_t)(eq - arg) : 0;
	if (eq == NULL || n >= sizeof(name)) {
		pg_message("--vendor%s wants NAME=VALUE", query ? "-query" : "");
		return PG_EXIT_FAIL;
	}
	memcpy(name, arg, n);
	name[n] = 0;
	if (p11glue_uri_set_vendor(uri, query, name, eq + 1, strlen(eq + 1)) != P11GLUE_OK) {
		pg_message("'%s' is not a vendor attribute name (letters, digits, - and _, not "
		           "a name RFC 7512 defines)", name);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

static int
build_field(p11glue_uri *uri, p11glue_uri_field field, const char *arg)
{
	p11glue_uri_error error;
	unsigned char *bytes = NULL;
	size_t len = strlen(arg);
	int rv;

	if (field == P11GLUE_URI_ID) {
		if (!pg_tool_parse_hex(arg, &bytes, &len)) {
			pg_message("--id wants hex digits, e.g. --id=01a2 or --id=01:a2");
			return PG_EXIT_FAIL;
		}
	}
	rv = p11glue_uri_set(uri, field, bytes ? bytes : (const unsigned char *)arg, len, &error);
	free(bytes);
	if (rv != P11GLUE_OK) {
		pg_message("invalid --%s: %s", p11glue_uri_field_name(field),
		              error.detail[0] ? error.detail : p11glue_strerror(rv));
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_cmd_uri_build(int argc, char **argv)
{
	struct option options[P11GLUE_URI_N_FIELDS + 4];
	p11glue_uri *uri;
	int opt, n = 0, status = PG_EXIT_OK;
	char *text;

	for (int f = 0; f < P11GLUE_URI_N_FIELDS; f++)
		options[n++] = (struct option){ p11glue_uri_field_name((p11glue_uri_field)f),
		                                required_argument, NULL, OPT_FIELD + f };
	options[n++] = (struct option){ "vendor", required_argument, NULL, OPT_VENDOR };
	options[n++] = (struct option){ "vendor-query", required_argument, NULL, OPT_VENDOR_QUERY };
	options[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	options[n] = (struct option){ NULL, 0, NULL, 0 };

	uri = p11glue_uri_new();
	if (uri == NULL) {
		pg_message("out of memory");
		return PG_EXIT_FAIL;
	}
	pg_tool_getopt_reset();
	while (status == PG_EXIT_OK &&
	       (opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (opt >= OPT_FIELD && opt < OPT_FIELD + P11GLUE_URI_N_FIELDS)
			status = build_field(uri, (p11glue_uri_field)(opt - OPT_FIELD), optarg);
		else if (opt == OPT_VENDOR || opt == OPT_VENDOR_QUERY)
			status = build_vendor(uri, opt == OPT_VENDOR_QUERY, optarg);
		else if (opt == 'h') {
			build_usage(stdout);
			p11glue_uri_free(uri);
			return PG_EXIT_OK;
		} else
			status = pg_tool_option_error(argv[0], opt, argv);
	}
	if (status == PG_EXIT_OK && optind < argc)
		status = pg_tool_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	if (status == PG_EXIT_OK) {
		text = p11glue_uri_format(uri);
		if (text == NULL) {
			pg_message("out of memory");
			status = PG_EXIT_FAIL;
		} else {
			puts(text);
			free(text);
		}
	}
	p11glue_uri_free(uri);
	return status;
}

/* ---------------------------------------------------------------------------
 * uri
 */

int
pg_cmd_uri(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: p11glue uri COMMAND [ARGS...]\n\nCommands:\n");
		pg_tool_list_commands(stdout, "uri", "p11glue uri");
		return PG_EXIT_OK;
	}
	return pg_tool_dispatch("uri", argv[0], argc - 1, argv + 1);
}
