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

/* A stapled extension of a token: the key it is for, its OID and value. */
typedef struct {
	unsigned char *spki, *oid, *value;
	size_t spki_len, oid_len, value_len;
} stapled_ext;

static void
stapled_clear(stapled_ext *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(x[i].spki);
		free(x[i].oid);
		free(x[i].value);
	}
	free(x);
}

/* Every stapled extension of the token, read once. */
static stapled_ext *
load_stapled(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, size_t *n_out)
{
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_OBJECT_HANDLE *objs;
	size_t n = find_all(f, s, &t, 1, &objs), k = 0;
	stapled_ext *x = calloc(n + 1, sizeof(*x));

	for (size_t i = 0; x && i < n; i++) {
		x[k].spki = get_attr(f, s, objs[i], CKA_PUBLIC_KEY_INFO, &x[k].spki_len);
		x[k].oid = get_attr(f, s, objs[i], CKA_OBJECT_ID, &x[k].oid_len);
		x[k].value = get_attr(f, s, objs[i], CKA_VALUE, &x[k].value_len);
		k++;
	}
	free(objs);
	*n_out = k;
	return x;
}

/* The purposes in an Extension's extnValue (an extKeyUsage shape). */
static bool
ext_purposes(const unsigned char *der, size_t len, pg_oid_list *out)
{
	pg_der d, ext;
	pg_span value;

	pg_der_init(&d, der, len);
	if (!pg_der_enter(&d, 0x30, &ext) || !pg_der_read(&ext, 0x06, NULL, NULL))
		return false;
	pg_der_read_optional(&ext, 0x01, NULL, NULL);
	if (!pg_der_read(&ext, 0x04, NULL, &value))
		return false;
	if (pg_oid_list_parse(&value, out) > 0)
		return true;
	pg_oid_list_clear(out);
	return false;
}

/* The stapled extKeyUsage and reject list of a certificate's key (the
 * first of each, as trust modules take them). */
static void
apply_stapled(pg_tcert *c, const stapled_ext *x, size_t n, const unsigned char *spki,
              size_t spki_len)
{
	static const unsigned char eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
	static const unsigned char rej[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
	                                     0x99, 0x77, 0x06, 0x0a, 0x01 };
	bool have_eku = false, have_rej = false;

	for (size_t i = 0; i < n; i++) {
		if (x[i].spki == NULL || x[i].oid == NULL || x[i].value == NULL ||
		    x[i].spki_len != spki_len || memcmp(x[i].spki, spki, spki_len) != 0)
			continue;
		if (!have_eku && x[i].oid_len == sizeof(eku) && memcmp(x[i].oid, eku, sizeof(eku)) == 0) {
			have_eku = true;
			c->restricted = ext_purposes(x[i].value, x[i].value_len, &c->purposes);
		} else if (!have_rej && x[i].oid_len == sizeof(rej) &&
		           memcmp(x[i].oid, rej, sizeof(rej)) == 0) {
			have_rej = true;
			ext_purposes(x[i].value, x[i].value_len, &c->rejects);
		}
	}
}

static uint64_t
hash_der(const unsigned char *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ len;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Copies of one certificate across tokens and modules, found by hash in
 * an open-addressing table of indexes (+1; 0 is empty). */
typedef struct {
	size_t *slots;
	size_t size;
} cert_index;

static pg_tcert *
find_cert(pg_trust_set *set, cert_index *ix, uint64_t h, const unsigned char *der, size_t len)
{
	for (size_t i = h & (ix->size - 1); ix->slots[i]; i = (i + 1) & (ix->size - 1)) {
		pg_tcert *c = &set->certs[ix->slots[i] - 1];
		if (c->hash == h && c->der_len == len && memcmp(c->der, der, len) == 0)
			return c;
	}
	return NULL;
}

static bool
index_cert(pg_trust_set *set, cert_index *ix, size_t k)
{
	size_t i;

	/* Kept at most half full: grows (rehashing) before that. */
	if ((set->n_certs + 1) * 2 > ix->size) {
		size_t size = ix->size ? ix->size * 2 : 256;
		size_t *slots = calloc(size, sizeof(*slots));
		if (slots == NULL)
			return false;
		free(ix->slots);
		ix->slots = slots;
		ix->size = size;
		for (size_t j = 0; j < set->n_certs; j++)
			if (j != k)
				index_cert(set, ix, j);
	}
	for (i = set->certs[k].hash & (ix->size - 1); ix->slots[i]; i = (i + 1) & (ix->size - 1))
		;
	ix->slots[i] = k + 1;
	return true;
}

static void
load_token(pg_trust_set *set, cert_index *ix, CK_FUNCTION_LIST *f, CK_SLOT_ID slot)
{
	CK_SESSION_HANDLE s;
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE, crl_class = CKO_NSS_CRL;
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_ATTRIBUTE tc = { CKA_CLASS, &crl_class, sizeof(crl_class) };
	CK_OBJECT_HANDLE *objs;
	stapled_ext *stapled;
	size_t n, n_stapled = 0;

	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
		return;
	stapled = load_stapled(f, s, &n_stapled);
	n = find_all(f, s, &t, 1, &objs);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0, l2 = 0;
		unsigned char *der = get_attr(f, s, objs[i], CKA_VALUE, &len), *spki;
		bool trusted = get_bool(f, s, objs[i], CKA_TRUSTED);
		bool distrusted = get_bool(f, s, objs[i], CKA_X_DISTRUSTED);
		uint64_t h;
		pg_tcert *c;
		pg_cert parsed;
		if (der == NULL || len == 0) {
			free(der);
			continue;
		}
		h = hash_der(der, len);
		if (ix->size && (c = find_cert(set, ix, h, der, len)) != NULL) {
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
		c = &set->certs[set->n_certs];
		memset(c, 0, sizeof(*c));
		c->der = der;
		c->der_len = len;
		c->hash = h;
		if (!index_cert(set, ix, set->n_certs)) {
			free(der);
			break;
		}
		set->n_certs++;
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
			apply_stapled(c, stapled, n_stapled, spki, l2);
		free(spki);
		/* Without a stapled one, the certificate's own extKeyUsage
		 * limits the purposes it is listed and extracted for. */
		if (pg_cert_parse(der, len, &parsed) && parsed.eku.len) {
			c->has_own_eku = pg_oid_list_parse(&parsed.eku, &c->own_eku) > 0;
			if (!c->has_own_eku)
				pg_oid_list_clear(&c->own_eku);
		}
	}
	free(objs);
	stapled_clear(stapled, n_stapled);
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

int
pg_trust_each_token(void (*fn)(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, void *data), void *data)
{
	size_t used = 0;
	int rv;

	p11glue_registry_free(trust_registry);
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
			for (CK_ULONG i = 0; i < n; i++)
				fn(f, slots[i], data);
		}
	}
	if (used == 0) {
		pg_tool_error("no trust module could be loaded");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

void
pg_trust_release(void)
{
	p11glue_registry_free(trust_registry);
	trust_registry = NULL;
}

typedef struct {
	pg_trust_set *set;
	cert_index ix;
} load_job;

static void
load_one(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, void *data)
{
	load_job *job = data;
	load_token(job->set, &job->ix, f, slot);
}

int
pg_trust_load(pg_trust_set *set)
{
	load_job job = { set, { NULL, 0 } };
	int rv;

	memset(set, 0, sizeof(*set));
	rv = pg_trust_each_token(load_one, &job);
	free(job.ix.slots);
	return rv;
}

void
pg_trust_clear(pg_trust_set *set)
{
	for (size_t i = 0; i < set->n_certs; i++) {
		pg_tcert *c = &set->certs[i];
		free(c->der);
		free(c->label);
		free(c->id);
		pg_oid_list_clear(&c->purposes);
		pg_oid_list_clear(&c->rejects);
		pg_oid_list_clear(&c->own_eku);
	}
	free(set->certs);
	for (size_t i = 0; i < set->n_crls; i++)
		free(set->crls[i].der);
	free(set->crls);
	memset(set, 0, sizeof(*set));
	pg_trust_release();
}

bool
pg_trust_selected(const pg_tcert *c, int filter, const p11glue_uri *uri, const char *purpose)
{
	const pg_oid_list *eku;
	bool ok;

	switch (filter) {
	case PG_F_ANCHORS:
		/* Trusted authorities: a trusted certificate of another
		 * category is not a CA anchor (as with p11-kit). */
		ok = c->trusted && !c->distrusted && c->category == 2;
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
	if (!ok || purpose == NULL)
		return ok;
	/* The purposes of its extKeyUsage (stapled, else its own); none
	 * means every purpose, as does anyExtendedKeyUsage. */
	eku = c->restricted ? &c->purposes : c->has_own_eku ? &c->own_eku : NULL;
	if (eku && !pg_oid_list_has(eku, purpose) && !pg_oid_list_has(eku, "2.5.29.37.0"))
		return false;
	/* A purpose its trust rejects is no use of it (p11-kit's commands
	 * list and extract it anyway). */
	return !(c->trusted && pg_oid_list_has(&c->rejects, purpose));
}

/* ---------------------------------------------------------------------------
 * Options
 */

static const char *
purpose_oid(const char *name)
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
	        "  check-format     Check the format of persistence files\n\n"
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
			if ((o->purpose = purpose_oid(optarg)) == NULL) {
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

/* check-format FILE...: each must be a valid persistence-format file. */
static int
cmd_check_format(int argc, char **argv)
{
	int rv = PG_EXIT_OK;

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
	{ "dump", "Dump trust objects in internal format", pg_trust_dump },
	{ "check-format", "Check the format of persistence files", cmd_check_format },
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
