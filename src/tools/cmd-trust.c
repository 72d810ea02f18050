/*
 * p11glue trust list|extract|anchor|dump|check-format: p11-kit's `trust`
 * command, with the same options, formats and exit codes (0 success,
 * 1 failure, 2 usage), over the modules the registry marks
 * "trust-policy: yes" (else p11glue-trust.so with its defaults).
 */
#include "config.h"

#include "trust.h"

#include <p11glue/p11glue.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Loading from the modules
 */

static unsigned char *
get_attr(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
         CK_ATTRIBUTE_TYPE type, size_t *len)
{
	CK_ATTRIBUTE a = { type, NULL, 0 };
	unsigned char *v;

	if (f->C_GetAttributeValue(s, o, &a, 1) != CKR_OK ||
	    a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
		return NULL;
	v = malloc(a.ulValueLen + 1);
	a.pValue = v;
	if (v == NULL || f->C_GetAttributeValue(s, o, &a, 1) != CKR_OK) {
		free(v);
		return NULL;
	}
	v[a.ulValueLen] = 0;
	*len = a.ulValueLen;
	return v;
}

static bool
get_bool(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_TYPE t)
{
	CK_BBOOL b = CK_FALSE;
	CK_ATTRIBUTE a = { t, &b, 1 };
	return f->C_GetAttributeValue(s, o, &a, 1) == CKR_OK && b == CK_TRUE;
}

static size_t
find_all(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_ATTRIBUTE *t, CK_ULONG n,
         CK_OBJECT_HANDLE **out)
{
	size_t count = 0, cap = 0;
	CK_OBJECT_HANDLE buf[256];
	CK_ULONG got;

	*out = NULL;
	if (f->C_FindObjectsInit(s, t, n) != CKR_OK)
		return 0;
	while (f->C_FindObjects(s, buf, 256, &got) == CKR_OK && got > 0) {
		if (count + got > cap) {
			CK_OBJECT_HANDLE *grown;
			cap = (count + got) * 2;
			grown = realloc(*out, cap * sizeof(*grown));
			if (grown == NULL)
				break;
			*out = grown;
		}
		memcpy(*out + count, buf, got * sizeof(*buf));
		count += got;
	}
	f->C_FindObjectsFinal(s);
	return count;
}

/* Purposes of a stapled EKU or reject extension (Extension DER). */
static void
ext_purposes(const unsigned char *der, size_t len, char ***out, size_t *n)
{
	const unsigned char *p = der;
	X509_EXTENSION *ext = d2i_X509_EXTENSION(NULL, &p, (long)len);
	const ASN1_OCTET_STRING *os;
	const unsigned char *q;
	STACK_OF(ASN1_OBJECT) *oids;
	char text[128];

	if (ext == NULL)
		return;
	os = X509_EXTENSION_get_data(ext);
	q = ASN1_STRING_get0_data(os);
	oids = d2i_EXTENDED_KEY_USAGE(NULL, &q, ASN1_STRING_length(os));
	for (int i = 0; oids && i < sk_ASN1_OBJECT_num(oids); i++) {
		char **grown = realloc(*out, (*n + 1) * sizeof(char *));
		if (grown == NULL)
			break;
		*out = grown;
		OBJ_obj2txt(text, sizeof(text), sk_ASN1_OBJECT_value(oids, i), 1);
		(*out)[(*n)++] = strdup(text);
	}
	sk_ASN1_OBJECT_pop_free(oids, ASN1_OBJECT_free);
	X509_EXTENSION_free(ext);
}

static pg_tcert *
find_cert(pg_trust_set *set, const unsigned char *der, size_t len)
{
	for (size_t i = 0; i < set->n_certs; i++)
		if (set->certs[i].der_len == len && memcmp(set->certs[i].der, der, len) == 0)
			return &set->certs[i];
	return NULL;
}

static void
stapled(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, pg_tcert *c, const unsigned char *spki,
        size_t spki_len)
{
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
	                     { CKA_PUBLIC_KEY_INFO, (void *)spki, spki_len } };
	CK_OBJECT_HANDLE *objs;
	size_t n = find_all(f, s, t, 2, &objs);
	static const unsigned char eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
	static const unsigned char rej[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
	                                     0x99, 0x77, 0x06, 0x0a, 0x01 };

	for (size_t i = 0; i < n; i++) {
		size_t ol = 0, vl = 0;
		unsigned char *oid = get_attr(f, s, objs[i], CKA_OBJECT_ID, &ol);
		unsigned char *val = get_attr(f, s, objs[i], CKA_VALUE, &vl);
		if (oid && val && ol == sizeof(eku) && memcmp(oid, eku, ol) == 0) {
			c->restricted = true;
			ext_purposes(val, vl, &c->purposes, &c->n_purposes);
		} else if (oid && val && ol == sizeof(rej) && memcmp(oid, rej, ol) == 0) {
			ext_purposes(val, vl, &c->rejects, &c->n_rejects);
		}
		free(oid);
		free(val);
	}
	free(objs);
}

static void
load_token(pg_trust_set *set, CK_FUNCTION_LIST *f, CK_SLOT_ID slot)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE, crl_class = CKO_NSS_CRL;
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_ATTRIBUTE tc = { CKA_CLASS, &crl_class, sizeof(crl_class) };
	CK_OBJECT_HANDLE *objs;
	size_t n;

	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
		return;
	n = find_all(f, s, &t, 1, &objs);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0, l2 = 0;
		unsigned char *der = get_attr(f, s, objs[i], CKA_VALUE, &len), *spki;
		bool trusted = get_bool(f, s, objs[i], CKA_TRUSTED);
		bool distrusted = get_bool(f, s, objs[i], CKA_X_DISTRUSTED);
		pg_tcert *c;
		if (der == NULL || len == 0) {
			free(der);
			continue;
		}
		if ((c = find_cert(set, der, len)) != NULL) {
			/* Another copy: distrust wins; otherwise the first copy's
			 * trust stands, as with p11-kit. */
			free(der);
			c->distrusted |= distrusted;
			c->trusted = c->trusted && !c->distrusted;
			continue;
		}
		c = realloc(set->certs, (set->n_certs + 1) * sizeof(*c));
		if (c == NULL) {
			free(der);
			break;
		}
		set->certs = c;
		c = &set->certs[set->n_certs++];
		memset(c, 0, sizeof(*c));
		c->der = der;
		c->der_len = len;
		c->label = (char *)get_attr(f, s, objs[i], CKA_LABEL, &l2);
		if (c->label == NULL)
			c->label = strdup("");
		c->id = get_attr(f, s, objs[i], CKA_ID, &c->id_len);
		{
			size_t cl = 0;
			unsigned char *cat = get_attr(f, s, objs[i], CKA_CERTIFICATE_CATEGORY, &cl);
			if (cat && cl == sizeof(CK_ULONG))
				memcpy(&c->category, cat, sizeof(CK_ULONG));
			free(cat);
		}
		c->distrusted = distrusted;
		c->trusted = trusted && !distrusted;
		spki = get_attr(f, s, objs[i], CKA_PUBLIC_KEY_INFO, &l2);
		if (spki)
			stapled(f, s, c, spki, l2);
		free(spki);
	}
	free(objs);
	n = find_all(f, s, &tc, 1, &objs);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		unsigned char *der = get_attr(f, s, objs[i], CKA_VALUE, &len);
		pg_tcrl *grown;
		if (der == NULL || (grown = realloc(set->crls, (set->n_crls + 1) * sizeof(*grown))) == NULL) {
			free(der);
			continue;
		}
		set->crls = grown;
		set->crls[set->n_crls++] = (pg_tcrl){ der, len };
	}
	free(objs);
	f->C_CloseSession(s);
}

static p11glue_registry *trust_registry;

/* Remembers a module whose tokens were read, for `trust check`. */
static void
add_module(pg_trust_set *set, CK_FUNCTION_LIST *f, const CK_SLOT_ID *slots, CK_ULONG n,
           bool policy)
{
	pg_tmodule *grown = realloc(set->modules, (set->n_modules + 1) * sizeof(*grown));
	pg_tmodule *m;
	CK_INFO info;
	size_t len;

	if (grown == NULL)
		return;
	set->modules = grown;
	m = &set->modules[set->n_modules];
	memset(m, 0, sizeof(*m));
	m->slots = n ? malloc(n * sizeof(*slots)) : NULL;
	if (n && m->slots == NULL)
		return;
	if (n)
		memcpy(m->slots, slots, n * sizeof(*slots));
	m->n_slots = n;
	m->funcs = f;
	m->trust_policy = policy;
	if (f->C_GetInfo(&info) == CKR_OK) {
		memcpy(m->manufacturer, info.manufacturerID, sizeof(info.manufacturerID));
		for (len = sizeof(info.manufacturerID); len > 0 && m->manufacturer[len - 1] == ' '; len--)
			;
		m->manufacturer[len] = 0;
	}
	set->n_modules++;
}

int
pg_trust_load(pg_trust_set *set)
{
	size_t used = 0;
	int rv;

	memset(set, 0, sizeof(*set));
	rv = p11glue_registry_load(P11GLUE_REGISTRY_UNMANAGED, &trust_registry);
	for (int pass = 0; pass < 2 && used == 0; pass++) {
		if (pass == 1) {
			/* No trust-policy module registered: our module, its defaults. */
			p11glue_registry_free(trust_registry);
			trust_registry = NULL;
			rv = p11glue_registry_load_file(P11GLUE_MODULE_DIR "/p11glue-trust.so",
			                                "p11glue-trust", NULL,
			                                P11GLUE_REGISTRY_UNMANAGED, &trust_registry);
		}
		if (rv != P11GLUE_OK)
			continue;
		for (size_t m = 0; m < p11glue_registry_count(trust_registry); m++) {
			p11glue_module *mod = p11glue_registry_module(trust_registry, m);
			CK_FUNCTION_LIST *f = p11glue_module_functions(mod);
			CK_SLOT_ID slots[64];
			CK_ULONG n = 64;
			if (f == NULL || (pass == 0 && !p11glue_module_is_trust_policy(mod)))
				continue;
			if (f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
				continue;
			used++;
			add_module(set, f, slots, n, pass == 0);
			for (CK_ULONG i = 0; i < n; i++)
				load_token(set, f, slots[i]);
		}
	}
	if (used == 0) {
		pg_tool_error("no trust module could be loaded");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

void
pg_trust_clear(pg_trust_set *set)
{
	for (size_t i = 0; i < set->n_certs; i++) {
		pg_tcert *c = &set->certs[i];
		free(c->der);
		free(c->label);
		free(c->id);
		for (size_t j = 0; j < c->n_purposes; j++)
			free(c->purposes[j]);
		for (size_t j = 0; j < c->n_rejects; j++)
			free(c->rejects[j]);
		free(c->purposes);
		free(c->rejects);
	}
	free(set->certs);
	for (size_t i = 0; i < set->n_crls; i++)
		free(set->crls[i].der);
	free(set->crls);
	for (size_t i = 0; i < set->n_modules; i++)
		free(set->modules[i].slots);
	free(set->modules);
	memset(set, 0, sizeof(*set));
	p11glue_registry_free(trust_registry);
	trust_registry = NULL;
}

static bool
in_list(char **list, size_t n, const char *oid)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], oid) == 0)
			return true;
	return false;
}

bool
pg_trust_selected(const pg_tcert *c, int filter, const p11glue_uri *uri, const char *purpose)
{
	bool ok;

	switch (filter) {
	case PG_F_ANCHORS:
		ok = c->trusted && !c->distrusted;
		break;
	case PG_F_BLOCKLIST:
		ok = c->distrusted;
		break;
	case PG_F_POLICY:
		ok = c->trusted || c->distrusted;
		break;
	case PG_F_URI: {
		CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
		CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_LABEL, c->label, strlen(c->label) },
		                     { CKA_ID, c->id, c->id ? c->id_len : CK_UNAVAILABLE_INFORMATION } };
		ok = p11glue_uri_match_attributes(uri, a, 3);
		break;
	}
	default:
		ok = true;
	}
	if (ok && purpose && c->trusted && !c->distrusted) {
		if (in_list(c->rejects, c->n_rejects, purpose) ||
		    (c->restricted && !in_list(c->purposes, c->n_purposes, purpose)))
			ok = false;
	}
	return ok;
}

/* ---------------------------------------------------------------------------
 * Options
 */

const char *
pg_trust_purpose_oid(const char *name)
{
	if (strcmp(name, "server-auth") == 0)
		return "1.3.6.1.5.5.7.3.1";
	if (strcmp(name, "client-auth") == 0)
		return "1.3.6.1.5.5.7.3.2";
	if (strcmp(name, "email") == 0 || strcmp(name, "email-protection") == 0)
		return "1.3.6.1.5.5.7.3.4";
	if (strcmp(name, "code-signing") == 0)
		return "1.3.6.1.5.5.7.3.3";
	if (strspn(name, "0123456789.") == strlen(name) && strchr(name, '.'))
		return name;
	return NULL;
}

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
			pg_tool_error("invalid filter: %s", text);
			return PG_EXIT_USAGE;
		}
		*filter = PG_F_URI;
	} else {
		pg_tool_error("unsupported filter: %s", text);
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
	        "  dump             Dump trust objects in internal format\n"
	        "  check-format     Check the format of persistence files\n"
	        "  check            Check that OpenSSL, GnuTLS, NSS and Java agree\n\n"
	        "See 'trust <command> --help' for more information\n");
}

/* Set while dump prints its help: its default is every certificate. */
static bool dump_mode;

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
	        extract || dump_mode ? "" : " (default)");
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
} trust_opts;

/* Shared option parsing; returns -1 to go on, else an exit code. */
static int
parse_opts(int argc, char **argv, trust_opts *o, bool extract, void (*help)(FILE *))
{
	static const struct option options[] = {
		{ "filter", required_argument, NULL, 'F' },
		{ "purpose", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'o' },
		{ "overwrite", no_argument, NULL, 'f' },
		{ "comment", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int opt, rv;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":fvqh", options, NULL)) != -1) {
		switch (opt) {
		case 'F':
			if ((rv = parse_filter(optarg, &o->filter, &o->uri)) >= 0)
				return rv;
			break;
		case 'p':
			if ((o->purpose = pg_trust_purpose_oid(optarg)) == NULL) {
				pg_tool_error("unsupported purpose: %s", optarg);
				return PG_EXIT_USAGE;
			}
			break;
		case 'o':
			o->format = optarg;
			break;
		case 'f':
			o->overwrite = true;
			break;
		case 'c':
			o->comment = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'v':
		case 'q':
			break;
		case 'h':
			help(stdout);
			return PG_EXIT_OK;
		default:
			help(stderr);
			return PG_EXIT_USAGE;
		}
	}
	(void)extract;
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

static int
cmd_list(int argc, char **argv)
{
	trust_opts o = { .filter = PG_F_POLICY };
	pg_trust_set set;
	int rv = parse_opts(argc, argv, &o, false, list_help);
	pg_json json;
	bool first = true;

	if (rv >= 0)
		goto out;
	if (optind < argc) {
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
			pg_json_key(&json, "type");
			pg_json_string(&json, "certificate");
			pg_json_key(&json, "label");
			pg_json_string(&json, c->label);
			pg_json_key(&json, "trust");
			pg_json_string(&json, trust);
			pg_json_key(&json, "category");
			pg_json_string(&json, category_name(c->category));
			pg_json_end_object(&json);
			continue;
		}
		(void)first;
		print_uri_id(stdout, c);
		printf("\n    type: certificate\n    label: %s\n    trust: %s\n    category: %s\n\n",
		       c->label, trust, category_name(c->category));
	}
	if (o.json) {
		pg_json_end_array(&json);
		pg_json_finish(&json);
	}
	pg_trust_clear(&set);
out:
	p11glue_uri_free(o.uri);
	return rv;
}

static int
cmd_extract(int argc, char **argv)
{
	trust_opts o = { .filter = PG_F_ANCHORS };
	pg_trust_set set;
	int rv = parse_opts(argc, argv, &o, true, extract_help);

	if (rv >= 0)
		goto out;
	if (o.format == NULL) {
		pg_tool_error("no output format specified");
		rv = PG_EXIT_USAGE;
		goto out;
	}
	if (optind + 1 != argc) {
		pg_tool_error("specify one destination file or directory");
		rv = PG_EXIT_USAGE;
		goto out;
	}
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		goto out;
	rv = pg_trust_extract(&set, o.format, o.filter, o.uri, o.purpose, argv[optind],
	                      o.overwrite, o.comment);
	pg_trust_clear(&set);
out:
	p11glue_uri_free(o.uri);
	return rv;
}

static void
anchor_help(FILE *out)
{
	fprintf(out, "usage: trust anchor --store <file> ...\n"
	             "       trust anchor --remove <file or URI> ...\n\n"
	             "  -v, --verbose       show verbose debug output\n"
	             "  -q, --quiet         suppress command output\n");
}

/* The first writable token of a trust module: (function list, slot). */
static bool
writable_token(CK_FUNCTION_LIST **fp, CK_SLOT_ID *slot)
{
	for (size_t m = 0; m < p11glue_registry_count(trust_registry); m++) {
		p11glue_module *mod = p11glue_registry_module(trust_registry, m);
		CK_FUNCTION_LIST *f = p11glue_module_functions(mod);
		CK_SLOT_ID slots[64];
		CK_ULONG n = 64;
		if (f == NULL || !p11glue_module_is_trust_policy(mod) ||
		    f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
			continue;
		for (CK_ULONG i = 0; i < n; i++) {
			CK_TOKEN_INFO ti;
			if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
			    !(ti.flags & CKF_WRITE_PROTECTED)) {
				*fp = f;
				*slot = slots[i];
				return true;
			}
		}
	}
	return false;
}

/* Reads the first certificate of a file (PEM or DER) into DER. */
static unsigned char *
read_cert(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	X509 *x = NULL;
	unsigned char *der = NULL;
	int n;

	if (f == NULL)
		return NULL;
	x = PEM_read_X509_AUX(f, NULL, NULL, NULL);
	if (x == NULL) {
		rewind(f);
		x = d2i_X509_fp(f, NULL);
	}
	fclose(f);
	if (x == NULL)
		return NULL;
	n = i2d_X509(x, &der);
	X509_free(x);
	if (n <= 0)
		return NULL;
	*len = (size_t)n;
	return der;
}

static int
cmd_anchor(int argc, char **argv)
{
	static const struct option options[] = {
		{ "store", no_argument, NULL, 's' },
		{ "remove", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int opt, action = 's', rv = PG_EXIT_OK;
	pg_trust_set set;
	CK_FUNCTION_LIST *f;
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":vqh", options, NULL)) != -1) {
		if (opt == 's' || opt == 'r')
			action = opt;
		else if (opt == 'h') {
			anchor_help(stdout);
			return PG_EXIT_OK;
		} else if (opt != 'v' && opt != 'q') {
			anchor_help(stderr);
			return PG_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		pg_tool_error("specify one or more anchors to %s", action == 's' ? "store" : "remove");
		return PG_EXIT_USAGE;
	}
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		return rv;
	if (!writable_token(&f, &slot)) {
		pg_tool_error("no configured writable location to store anchors");
		pg_trust_clear(&set);
		return PG_EXIT_FAIL;
	}
	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &s) != CKR_OK) {
		pg_trust_clear(&set);
		return PG_EXIT_FAIL;
	}
	for (int i = optind; i < argc && rv == PG_EXIT_OK; i++) {
		size_t len = 0;
		unsigned char *der = NULL;
		CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
		CK_BBOOL yes = CK_TRUE;
		CK_OBJECT_HANDLE h, *objs = NULL;
		CK_RV r;
		if (action == 'r' && strncmp(argv[i], "pkcs11:", 7) == 0) {
			p11glue_uri *uri = NULL;
			size_t n;
			CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
			if (p11glue_uri_parse(argv[i], P11GLUE_URI_LENIENT, &uri, NULL) != P11GLUE_OK) {
				pg_tool_error("invalid PKCS#11 URI: %s", argv[i]);
				rv = PG_EXIT_FAIL;
				break;
			}
			n = find_all(f, s, &t, 1, &objs);
			for (size_t j = 0; j < n; j++) {
				size_t ll = 0, il = 0;
				unsigned char *label = get_attr(f, s, objs[j], CKA_LABEL, &ll);
				unsigned char *id = get_attr(f, s, objs[j], CKA_ID, &il);
				CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
				                     { CKA_LABEL, label, label ? ll : CK_UNAVAILABLE_INFORMATION },
				                     { CKA_ID, id, id ? il : CK_UNAVAILABLE_INFORMATION } };
				if (p11glue_uri_match_attributes(uri, a, 3))
					der = get_attr(f, s, objs[j], CKA_VALUE, &len);
				free(label);
				free(id);
				if (der)
					break;
			}
			free(objs);
			objs = NULL;
			p11glue_uri_free(uri);
		} else {
			der = read_cert(argv[i], &len);
		}
		if (der == NULL) {
			pg_tool_error("%s: no certificate found", argv[i]);
			rv = PG_EXIT_FAIL;
			break;
		}
		if (action == 's') {
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
			                     { CKA_VALUE, der, len },
			                     { CKA_TRUSTED, &yes, 1 } };
			r = f->C_CreateObject(s, t, 3, &h);
			if (r != CKR_OK) {
				pg_tool_error("couldn't create object: %s", pg_tool_ckr(r));
				rv = PG_EXIT_FAIL;
			}
		} else {
			CK_ATTRIBUTE t[] = { { CKA_CLASS, &klass, sizeof(klass) },
			                     { CKA_VALUE, der, len } };
			size_t n = find_all(f, s, t, 2, &objs);
			if (n == 0) {
				pg_tool_error("%s: not stored in a writable location", argv[i]);
				rv = PG_EXIT_FAIL;
			}
			for (size_t j = 0; j < n; j++)
				if ((r = f->C_DestroyObject(s, objs[j])) != CKR_OK) {
					pg_tool_error("couldn't remove the anchor: %s", pg_tool_ckr(r));
					rv = PG_EXIT_FAIL;
				}
			free(objs);
		}
		free(der);
	}
	f->C_CloseSession(s);
	pg_trust_clear(&set);
	return rv;
}

static void
dump_help(FILE *out)
{
	fprintf(out, "usage: trust dump [--filter=<what>]\n\n"
	             "Prints the certificates of the trust modules in the persistence format\n"
	             "(all of them without --filter).\n\n");
	dump_mode = true;
	filter_help(out, false);
	dump_mode = false;
	fprintf(out, "  -v, --verbose       show verbose debug output\n"
	             "  -q, --quiet         suppress command output\n");
}

static int
cmd_dump(int argc, char **argv)
{
	trust_opts o = { 0 };
	pg_trust_set set;
	int rv = parse_opts(argc, argv, &o, false, dump_help);

	if (rv >= 0)
		goto out;
	rv = PG_EXIT_USAGE;
	if (optind < argc) {
		dump_help(stderr);
		goto out;
	}
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		goto out;
	for (size_t i = 0; i < set.n_certs; i++) {
		const pg_tcert *c = &set.certs[i];
		if (!pg_trust_selected(c, o.filter, o.uri, o.purpose))
			continue;
		BIO *out = BIO_new_fp(stdout, BIO_NOCLOSE);
		printf("[p11-kit-object-v1]\nclass: certificate\ncertificate-type: x-509\n");
		printf("trusted: %s\nx-distrusted: %s\nlabel: \"%s\"\n",
		       c->trusted ? "true" : "false", c->distrusted ? "true" : "false", c->label);
		fflush(stdout);
		PEM_write_bio(out, "CERTIFICATE", "", c->der, (long)c->der_len);
		BIO_free(out);
		printf("\n");
	}
	pg_trust_clear(&set);
out:
	p11glue_uri_free(o.uri);
	return rv;
}

/* check-format FILE...: each must be a valid persistence-format file. */
static int
cmd_check_format(int argc, char **argv)
{
	int rv = PG_EXIT_OK;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: trust check-format <file>...\n\n"
		       "Checks that each file is valid persistence format (p11-kit-object-v1)\n"
		       "with at least one object; prints FILE: OK or FILE: FAIL.\n");
		return PG_EXIT_OK;
	}
	if (argc < 2) {
		pg_tool_error("specify one or more files to check");
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

static const pg_command trust_commands[] = {
	{ "list", "List trust or certificates", cmd_list },
	{ "extract", "Extract certificates and trust", cmd_extract },
	{ "anchor", "Add, remove, change trust anchors", cmd_anchor },
	{ "dump", "Dump trust objects in internal format", cmd_dump },
	{ "check-format", "Check the format of persistence files", cmd_check_format },
	{ "check", "Check that OpenSSL, GnuTLS, NSS and Java agree with the trust",
	  pg_trust_cmd_check },
};

int
pg_cmd_trust(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		trust_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? PG_EXIT_USAGE : PG_EXIT_OK;
	}
	return pg_tool_dispatch("trust", trust_commands, PG_N_ELEMENTS(trust_commands),
	                        argc - 1, argv + 1);
}
