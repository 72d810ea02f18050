/*
 * p11glue trust list|extract|anchor|dump|check-format: p11-kit's `trust`
 * command, with the same options, formats and exit codes (0 success,
 * 1 failure, 2 usage), over the modules the registry marks
 * "trust-policy: yes" (else p11glue-trust.so with its defaults).
 */
#include "config.h"

#include "tool.h"
#include "trust-tool.h"

#include <p11glue/p11glue.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Options
 */

static int
parse_filter(const char *text, int *filter, p11glue_uri **uri)
{
	if (strcmp(text, "ca-anchors") == 0)
		*filter = PG_F_ANCHORS;
	else if (strcmp(text, "blocklist") == 0 || strcmp(text, "blacklist") == 0)
		*filter = PG_F_BLOCKLIST;
	else if (strcmp(text, "trust-policy") == 0)
		*filter = PG_F_POLICY;
	else if (strcmp(text, "certificates") == 0)
		*filter = PG_F_CERTS;
	else if (strncmp(text, "pkcs11:", 7) == 0) {
		if (p11glue_uri_parse(text, P11GLUE_URI_LENIENT, uri, NULL) != P11GLUE_OK) {
			pg_message("invalid filter: %s", text);
			return PG_EXIT_USAGE;
		}
		*filter = PG_F_URI;
	} else {
		pg_message("unsupported filter: %s", text);
		return PG_EXIT_USAGE;
	}
	return -1;
}

static void
trust_usage(FILE *out)
{
	fprintf(out,
	        "usage: trust command <args>...\n\n"
	        "Common trust commands are:\n"
	        "  list             List trust or certificates\n"
	        "  extract          Extract certificates and trust\n"
	        "  anchor           Add, remove, change trust anchors\n"
	        "  distrust         Distrust certificates, or lift a distrust\n"
	        "  crl              Add or remove CRLs\n"
	        "  extract-compat   Bring the files programs read up to date\n"
	        "  dump             Dump trust objects in internal format\n"
	        "  check-format     Check the format of persistence files\n"
	        "  check            Check that the programs that read trust agree with it\n\n"
	        "See 'trust <command> --help' for more information\n");
}

static void
filter_help(FILE *out, bool extract)
{
	fprintf(out,
	        "  --filter=<what>     filter of what to export\n"
	        "                        ca-anchors        certificate anchors\n"
	        "                        blocklist         distrusted certificates\n"
	        "                        trust-policy      anchors and blocklist%s\n"
	        "                        certificates      all certificates\n"
	        "                        pkcs11:object=xx  a PKCS#11 URI\n",
	        extract ? "" : " (default)");
	if (extract)
		fprintf(out,
		        "  --format=<type>     format to extract to\n"
		        "                        x509-file           DER X.509 certificate file\n"
		        "                        x509-directory      directory of X.509 certificates\n"
		        "                        pem-bundle          file containing multiple PEM blocks\n"
		        "                        pem-directory       directory of PEM files\n"
		        "                        pem-directory-hash  directory of PEM files with hash links\n"
		        "                        openssl-bundle      OpenSSL specific PEM bundle\n"
		        "                        openssl-directory   directory of OpenSSL specific files\n"
		        "                                            (with CRLs and their .r0 links)\n"
		        "                        java-cacerts        java keystore cacerts file\n"
		        "                        edk2-cacerts        cacerts file for EDK2 HTTPS config\n"
		        "                        crl-bundle          PEM file of the CRLs in use\n");
	fprintf(out,
	        "  --purpose=<usage>   limit to certificates usable for the purpose\n"
	        "                        server-auth       for authenticating servers\n"
	        "                        client-auth       for authenticating clients\n"
	        "                        email             for email protection\n"
	        "                        code-signing      for authenticating signed code\n"
	        "                        1.2.3.4.5...      an arbitrary object id\n");
}

typedef struct {
	int filter;
	p11glue_uri *uri;
	const char *purpose;
	const char *format;
	bool overwrite, comment, json;
	int next;                    /* the first operand */
} trust_opts;

/* Shared option parsing; returns -1 to go on (o->next the first
 * operand), else an exit code. */
static int
parse_opts(int argc, char **argv, trust_opts *o, void (*help)(FILE *))
{
	const char *filter = NULL, *purpose = NULL;
	const pg_opt table[] = {
		{ "filter", 0, PG_OPT_TEXT, &filter, 0 },
		{ "purpose", 0, PG_OPT_TEXT, &purpose, 0 },
		{ "format", 0, PG_OPT_TEXT, &o->format, 0 },
		{ "overwrite", 'f', PG_OPT_FLAG, &o->overwrite, 0 },
		{ "comment", 0, PG_OPT_FLAG, &o->comment, 0 },
		{ "json", 0, PG_OPT_FLAG, &o->json, 0 },
		{ "verbose", 'v', PG_OPT_IGNORE, NULL, 0 },
		{ "quiet", 'q', PG_OPT_IGNORE, NULL, 0 },
	};
	int rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), help,
	                         PG_OPTS_HELP_ON_ERROR, -1, &o->next);

	if (rv >= 0)
		return rv;
	if (filter != NULL && (rv = parse_filter(filter, &o->filter, &o->uri)) >= 0)
		return rv;
	if (purpose != NULL && (o->purpose = pg_trust_purpose_oid(purpose)) == NULL) {
		pg_message("unsupported purpose: %s", purpose);
		return PG_EXIT_USAGE;
	}
	return -1;
}

static void
list_help(FILE *out)
{
	fprintf(out, "usage: trust list --filter=<what>\n\n");
	filter_help(out, false);
	fprintf(out, "  --json              print a JSON array (p11glue)\n"
	             "  -v, --verbose       show verbose debug output\n"
	             "  -q, --quiet         suppress command output\n");
}

static void
extract_help(FILE *out)
{
	fprintf(out, "usage: trust extract --format=<output> <destination>\n\n");
	filter_help(out, true);
	fprintf(out, "  -f, --overwrite     overwrite output file or directory\n"
	             "  --comment           add comments to bundles if possible\n"
	             "  --json              describe what was written as a JSON object (p11glue)\n"
	             "  -v, --verbose       show verbose debug output\n"
	             "  -q, --quiet         suppress command output\n");
}

static const char *
category_name(unsigned long c)
{
	switch (c) {
	case 1:
		return "token";
	case 2:
		return "authority";
	case 3:
		return "other-entry";
	default:
		return "unspecified";
	}
}

static void
print_uri_id(FILE *out, const pg_tcert *c)
{
	fprintf(out, "pkcs11:");
	if (c->id) {
		fprintf(out, "id=");
		for (size_t i = 0; i < c->id_len; i++)
			fprintf(out, "%%%02X", c->id[i]);
		fprintf(out, ";");
	}
	fprintf(out, "type=cert");
}

/* A distrusted issuer and serial number (a CRL's revocation, or a
 * blocklist entry without a certificate): distrusted, so it belongs to
 * the blocklist. */
static bool
revoked_selected(const pg_trevoked *r, int filter, const p11glue_uri *uri)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                     { CKA_LABEL, r->label, strlen(r->label) } };

	if (filter == PG_F_URI)
		return p11glue_uri_match_attributes(uri, a, 2);
	return filter != PG_F_ANCHORS;
}

static void
list_revoked(const pg_trevoked *r, pg_json *json)
{
	char *issuer = pg_trust_name_text(r->issuer, r->issuer_len);
	char *serial = pg_trust_serial_text(r->serial, r->serial_len);

	if (json) {
		pg_json_begin_object(json);
		pg_json_key_string(json, "type", "certificate");
		pg_json_key_string(json, "label", r->label);
		pg_json_key_string(json, "trust", "distrusted");
		pg_json_key_string(json, "category", "unspecified");
		pg_json_key_string(json, "issuer", issuer ? issuer : "");
		pg_json_key_string(json, "serial", serial ? serial : "");
		pg_json_end_object(json);
	} else {
		printf("pkcs11:type=cert\n    type: certificate\n    label: %s\n    trust: distrusted\n"
		       "    category: unspecified\n    issuer: %s\n    serial: %s\n\n",
		       r->label, issuer ? issuer : "?", serial ? serial : "?");
	}
	free(issuer);
	free(serial);
}

int
pg_cmd_trust_list(int argc, char **argv)
{
	trust_opts o = { .filter = PG_F_POLICY };
	pg_trust_set set;
	int rv = parse_opts(argc, argv, &o, list_help);
	pg_json json;
	bool first = true;

	if (rv >= 0)
		goto out;
	if (o.next < argc) {
		list_help(stderr);
		rv = PG_EXIT_USAGE;
		goto out;
	}
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		goto out;
	if (o.json) {
		pg_json_init(&json, stdout);
		pg_json_begin_array(&json);
	}
	for (size_t i = 0; i < set.n_certs; i++) {
		const pg_tcert *c = &set.certs[i];
		const char *trust = c->distrusted ? "distrusted" : c->trusted ? "anchor" : "unspecified";
		if (!pg_trust_selected(c, o.filter, o.uri, o.purpose))
			continue;
		if (o.json) {
			pg_json_begin_object(&json);
			pg_json_key(&json, "id");
			pg_json_bytes(&json, c->id ? c->id : (unsigned char *)"", c->id ? c->id_len : 0);
			pg_json_key_string(&json, "type", "certificate");
			pg_json_key_string(&json, "label", c->label);
			pg_json_key_string(&json, "trust", trust);
			pg_json_key_string(&json, "category", category_name(c->category));
			pg_json_end_object(&json);
			continue;
		}
		(void)first;
		print_uri_id(stdout, c);
		printf("\n    type: certificate\n    label: %s\n    trust: %s\n    category: %s\n\n",
		       c->label, trust, category_name(c->category));
	}
	for (size_t i = 0; i < set.n_revoked; i++)
		if (revoked_selected(&set.revoked[i], o.filter, o.uri))
			list_revoked(&set.revoked[i], o.json ? &json : NULL);
	if (o.json) {
		pg_json_end_array(&json);
		pg_json_finish(&json);
	}
	pg_trust_clear(&set);
out:
	p11glue_uri_free(o.uri);
	return rv;
}

int
pg_cmd_trust_extract(int argc, char **argv)
{
	trust_opts o = { .filter = PG_F_ANCHORS };
	pg_trust_set set;
	int rv = parse_opts(argc, argv, &o, extract_help);

	if (rv >= 0)
		goto out;
	if (o.format == NULL) {
		pg_message("no output format specified");
		rv = PG_EXIT_USAGE;
		goto out;
	}
	if (o.next + 1 != argc) {
		pg_message("specify one destination file or directory");
		rv = PG_EXIT_USAGE;
		goto out;
	}
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		goto out;
	rv = pg_trust_extract(&set, o.format, o.filter, o.uri, o.purpose, argv[o.next],
	                      o.overwrite, o.comment);
	pg_trust_clear(&set);
	if (o.json) {
		pg_json json;
		pg_json_init(&json, stdout);
		pg_json_begin_object(&json);
		pg_json_key_string(&json, "operation", "extract");
		pg_json_key_bool(&json, "ok", rv == PG_EXIT_OK);
		pg_json_key_string(&json, "format", o.format);
		pg_json_key_text(&json, "destination", argv[o.next]);
		pg_json_end_object(&json);
		pg_json_finish(&json);
	}
out:
	p11glue_uri_free(o.uri);
	return rv;
}

/* check-format FILE...: each must be a valid persistence-format file. */
int
pg_cmd_trust_check_format(int argc, char **argv)
{
	int rv = PG_EXIT_OK;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: trust check-format <file>...\n\n"
		       "Checks that each file is valid persistence format (p11-kit-object-v1)\n"
		       "with at least one object; prints FILE: OK or FILE: FAIL.\n");
		return PG_EXIT_OK;
	}
	if (argc < 2) {
		pg_message("specify one or more files to check");
		return PG_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		bool ok = pg_trust_check_persist(argv[i]);
		printf("%s: %s\n", argv[i], ok ? "OK" : "FAIL");
		if (!ok)
			rv = PG_EXIT_FAIL;
	}
	return rv;
}

int
pg_cmd_trust(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		trust_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? PG_EXIT_USAGE : PG_EXIT_OK;
	}
	return pg_tool_dispatch("trust", "trust", argc - 1, argv + 1);
}
