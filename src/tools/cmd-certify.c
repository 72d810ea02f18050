/*
 * p11glue certify | request: a certificate (RFC 5280) or a certification
 * request (RFC 2986) for a key on a token, signed inside a token with
 * C_Sign: the private key never leaves it. src/import builds and
 * assembles (x509-build.c), finds the keys, signs and stores the
 * certificate next to its key (signer.c); this file reads the command
 * line and writes the PEM output.
 */
#include "config.h"

#include "store-tool.h"
#include "x509-build.h"
#include "signer.h"

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DAYS 36500u

/* Refuses a URI that names something other than a private key. */
static bool
names_private_key(const p11glue_uri *uri)
{
	size_t len;
	const unsigned char *type = p11glue_uri_get(uri, P11GLUE_URI_TYPE, &len);

	return type == NULL || (len == 7 && memcmp(type, "private", 7) == 0);
}

/* ---------------------------------------------------------------------------
 * Options both commands take
 */

typedef struct {
	pg_store_opts store;         /* with the key's token's PINs (store.pins) */
	const char *subject;
	X509_NAME *subject_name;     /* --subject, parsed before any token work */
	const char *hash;
	const char *output;
	bool overwrite, json;
	pg_buf san;                  /* "TYPE:VALUE,..." from every --san */
	pg_outfile out;              /* --output, opened before any token work */
} common_args;

/* --hash names one of the hashes pg_sigalg_choose takes. */
static bool
hash_ok(const char *hash)
{
	return hash == NULL || strcmp(hash, "sha256") == 0 || strcmp(hash, "sha384") == 0 ||
	       strcmp(hash, "sha512") == 0;
}

/* The options certify and request share. */
#define COMMON_OPTIONS(a) \
	{ "subject", 0, PG_OPT_TEXT, &(a)->subject, 0 }, \
	{ "hash", 0, PG_OPT_TEXT, &(a)->hash, 0 }, \
	{ "output", 0, PG_OPT_TEXT, &(a)->output, 0 }, \
	{ "overwrite", 0, PG_OPT_FLAG, &(a)->overwrite, 0 }, \
	{ "json", 0, PG_OPT_FLAG, &(a)->json, 0 }, \
	{ "san", 0, PG_OPT_APPEND, &(a)->san, 0 }, \
	PG_PIN_OPTION(&(a)->store.pins), \
	PG_STORE_OPTIONS(&(a)->store)

static void
common_help(FILE *out)
{
	fprintf(out,
	        "  --subject DN   the subject, as \"CN=Alice,O=Example\" (RFC 4514, the most\n"
	        "                 specific part first) or \"/O=Example/CN=Alice\" (OpenSSL's\n"
	        "                 order); default: CN= the key's label\n"
	        "  --san NAME     a subjectAltName: DNS:host, email:addr, IP:address or\n"
	        "                 URI:uri; repeat for more\n"
	        "  --hash H       sha256, sha384 or sha512 (RSA and ECDSA); default: sha256\n"
	        "                 for RSA and P-256, sha384 for P-384, sha512 for P-521\n"
	        "  --output FILE  write the PEM text to FILE ('-': standard output); an\n"
	        "                 existing FILE is refused, and a symbolic link always\n"
	        "  --overwrite    replace an existing FILE (a new file renamed over it)\n"
	        "  --json         print a JSON object: the token, the key, what was made\n"
	        "                 (and replaced); the PEM text as \"pem\" unless --output\n"
	        "                 names a file\n"
	        "  --pin-source SRC\n"
	        "                 read the user PIN of the key's token from SRC (see PINs\n"
	        "                 below)\n"
	        "  -h, --help     show this help\n");
}

/* --subject parsed; NULL after printing why. */
static X509_NAME *
parse_subject(const char *text, const char *command)
{
	char why[160];
	X509_NAME *name = pg_x509_name_parse(text, why, sizeof(why));

	if (name == NULL)
		pg_tool_usage_error(command, "--subject: %s", why);
	return name;
}

/*
 * Where the PEM text goes: --output (opened here, before any token work,
 * so that an existing file is refused before a PIN is asked), or with
 * --json and no file, into the JSON object. Returns -1 to go on, else an
 * exit code.
 */
static int
open_output(common_args *a, const char *fallback)
{
	const char *path = a->output ? a->output : fallback;

	if (path == NULL || (a->json && strcmp(path, "-") == 0))
		return -1;
	return pg_outfile_open(&a->out, path, a->overwrite, 0666) ? -1 : PG_EXIT_FAIL;
}

/* Writes the PEM text to the output, if there is one. */
static bool
write_output(common_args *a, const char *pem)
{
	if (a->out.fp == NULL)
		return true;
	if (fputs(pem, a->out.fp) < 0) {
		pg_message("%s: cannot write", a->out.path ? a->out.path : "standard output");
		return false;
	}
	return pg_outfile_commit(&a->out);
}

/* The PEM text of a certificate (req false) or a request; free(). */
static char *
pem_text(const void *obj, bool req)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data = NULL, *text = NULL;
	long len;

	if (bio != NULL && (req ? PEM_write_bio_X509_REQ(bio, (X509_REQ *)obj)
	                        : PEM_write_bio_X509(bio, (X509 *)obj)) == 1 &&
	    (len = BIO_get_mem_data(bio, &data)) > 0)
		text = (char *)pg_memdup0(data, (size_t)len);
	BIO_free(bio);
	if (text == NULL)
		pg_message("cannot write the PEM text");
	return text;
}

/* --json: the token, the key, what the report holds, and the PEM text
 * or the file it went to. */
static void
print_json(const common_args *a, pg_signer *key, const pg_report *r, const char *pem)
{
	char *uri = pg_keytoken_object_uri(&key->kt, key->key);
	pg_json j;

	pg_store_json_begin(&j, &key->kt);
	pg_json_key_text(&j, "key", uri ? uri : "");
	free(uri);
	if (r != NULL) {
		for (size_t i = 0; i < r->n; i++) {
			if (strcmp(r->items[i].what, "certificate") != 0)
				continue;
			pg_json_key_text(&j, "certificate", r->items[i].uri ? r->items[i].uri : "");
		}
		pg_store_json_uris(&j, "replaced", r, "replaced");
	}
	if (a->output != NULL && strcmp(a->output, "-") != 0) {
		pg_json_key_string(&j, "output", a->output);
	} else if (a->output != NULL || r == NULL) {
		pg_json_key_text(&j, "pem", pem);
	}
	pg_store_json_end(&j, r);
}

/* Parses --days: 1 to MAX_DAYS. */
static bool
parse_days(const char *text, unsigned *days)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || *end != 0 || errno != 0 || v == 0 || v > MAX_DAYS)
		return false;
	*days = (unsigned)v;
	return true;
}

/* ---------------------------------------------------------------------------
 * certify
 */

static void
certify_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue certify (--self-signed | --ca CA-URI) [--subject DN]\n"
	        "                       [--days N] [--is-ca] [--san NAME]... [--hash H]\n"
	        "                       [--label LABEL] [--replace]\n"
	        "                       [--output FILE [--overwrite]] [--json]\n"
	        "                       [--pin-source SRC] [--module PATH] [--store DIR] URI\n"
	        "\n"
	        "Makes an X.509 certificate (RFC 5280) for the private key the URI\n"
	        "names and stores it on the key's token with the key's CKA_ID, where\n"
	        "applications that pair keys with certificates by ID find it (GnuPG's\n"
	        "gnupg-pkcs11-scd, NSS, Java, OpenSSL's engine). The signature is made\n"
	        "inside a token with C_Sign (CKM_RSA_PKCS, CKM_ECDSA or CKM_EDDSA): no\n"
	        "private key leaves its token. Prints the URI of the new certificate.\n"
	        "\n"
	        "With --self-signed the key signs its own certificate: issuer and\n"
	        "subject are the same. With --ca CA-URI the private key CA-URI names\n"
	        "signs it; that key's own certificate (same CKA_ID, on its token) must\n"
	        "be a CA certificate (made with --is-ca, for instance) and gives the\n"
	        "issuer name. CA-URI may name another token, of the same module unless\n"
	        "it has module-path= or module-name=; its PIN comes from its own\n"
	        "pin-value or pin-source, else a prompt (unless that token is the\n"
	        "key's, already logged in), never from --pin-source.\n"
	        "\n"
	        "The certificate: version 3, a random 16-byte serial number, valid from\n"
	        "now for N days, with basicConstraints and keyUsage (critical),\n"
	        "subjectKeyIdentifier (SHA-1 of the public key, RFC 5280 4.2.1.2),\n"
	        "authorityKeyIdentifier and, with --san, subjectAltName. Key types:\n"
	        "RSA (sha256WithRSAEncryption ...), EC P-256, P-384, P-521 (ECDSA),\n"
	        "Ed25519 and Ed448.\n"
	        "\n"
	        "Options:\n"
	        "  --self-signed  sign with the key itself\n"
	        "  --ca CA-URI    sign with the CA key CA-URI names\n"
	        "  --days N       days of validity, 1 to %u; default 365\n"
	        "  --is-ca        a CA certificate: basicConstraints CA:TRUE and keyUsage\n"
	        "                 keyCertSign, cRLSign (default: an end-entity certificate\n"
	        "                 with digitalSignature, and keyEncipherment for RSA)\n"
	        "  --label LABEL  the certificate's label (default: the key's)\n"
	        "  --replace      delete the certificates with the key's ID that are on\n"
	        "                 the token (without it, such a certificate is an error)\n",
	        MAX_DAYS);
	common_help(out);
	fprintf(out, "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue certify --self-signed --subject 'CN=Alice,O=Example' --days 730 \\\n"
	        "      'pkcs11:token=mykeys;object=gpg'\n"
	        "  p11glue certify --self-signed --is-ca --subject 'CN=My CA' 'pkcs11:token=ca;object=ca'\n"
	        "  p11glue certify --ca 'pkcs11:token=ca;object=ca' --san DNS:host.example \\\n"
	        "      --subject CN=host.example 'pkcs11:token=mykeys;object=tls'\n");
}

typedef struct {
	common_args common;
	const char *ca_uri;
	bool self_signed, is_ca, replace;
	unsigned days;
	const char *label;
} certify_args;

static int
do_certify(certify_args *a, const p11glue_uri *uri, const p11glue_uri *ca_uri)
{
	pg_signer key = { 0 }, ca = { 0 };
	CK_OBJECT_HANDLE old[PG_SIGNER_MAX_FOUND];
	pg_signer_choice choice = {
		.subject = a->common.subject_name,
		.hash = a->common.hash,
		.san = a->common.san.len ? (const char *)a->common.san.data : NULL,
		.days = a->days,
		.is_ca = a->is_ca,
	};
	/* The CA's token takes its PIN from its own URI or a prompt: the
	 * key's --pin-source could be a wrong PIN there, costing a try. */
	pg_store_opts ca_opts = { .module = a->common.store.module, .store = a->common.store.store };
	X509 *cert = NULL;
	pg_report report = { 0 };
	char *pem = NULL;
	long n_old = 0;
	int status = open_output(&a->common, NULL);

	if (status != -1)
		return status;
	status = pg_signer_open(&key, &a->common.store, uri, true);
	if (status == PG_EXIT_OK && ca_uri != NULL)
		status = pg_signer_open(&ca, &ca_opts, ca_uri, false);
	if (status == PG_EXIT_OK && (n_old = pg_signer_certs(&key, old, a->replace)) < 0)
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK)
		status = pg_signer_certify(&key, ca_uri ? &ca : NULL, &choice, &cert);
	if (status == PG_EXIT_OK && (pem = pem_text(cert, false)) == NULL)
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK)
		status = pg_signer_store_cert(&key, cert, a->label ? a->label : key.label, old, n_old,
		                              &report);
	if (status == PG_EXIT_OK && !a->common.json)
		pg_store_print_report(&report);
	if (status == PG_EXIT_OK && !write_output(&a->common, pem))
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK && a->common.json)
		print_json(&a->common, &key, &report, pem);
	pg_outfile_abort(&a->common.out);
	pg_report_clear(&report);
	free(pem);
	X509_free(cert);
	pg_signer_clear(&ca);
	pg_signer_clear(&key);
	return status;
}

/* Checks the parsed options; returns -1 when they are fine. */
static int
certify_check(const certify_args *a, int argc, char **argv, int next)
{
	if (a->self_signed == (a->ca_uri != NULL))
		return pg_tool_usage_error(argv[0], "give either --self-signed or --ca CA-URI");
	if (argc - next != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI (the key)");
	if (!hash_ok(a->common.hash))
		return pg_tool_usage_error(argv[0], "--hash: sha256, sha384 or sha512");
	return -1;
}

static int
certify_parse(certify_args *a, int argc, char **argv, int *next)
{
	const char *days = NULL;
	const pg_opt table[] = {
		{ "self-signed", 0, PG_OPT_FLAG, &a->self_signed, 0 },
		{ "ca", 0, PG_OPT_TEXT, &a->ca_uri, 0 },
		{ "days", 0, PG_OPT_TEXT, &days, 0 },
		{ "is-ca", 0, PG_OPT_FLAG, &a->is_ca, 0 },
		{ "label", 0, PG_OPT_TEXT, &a->label, 0 },
		{ "replace", 0, PG_OPT_FLAG, &a->replace, 0 },
		COMMON_OPTIONS(&a->common),
	};
	int rv = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), certify_usage, 0, -1, next);

	if (rv >= 0)
		return rv;
	if (days != NULL && !parse_days(days, &a->days))
		return pg_tool_usage_error(argv[0], "--days: a number from 1 to %u", MAX_DAYS);
	return certify_check(a, argc, argv, *next);
}

int
pg_cmd_certify(int argc, char **argv)
{
	certify_args a = { .days = 365 };
	p11glue_uri *uri = NULL, *ca_uri = NULL;
	int next, status;

	pg_buf_init(&a.common.san);
	status = certify_parse(&a, argc, argv, &next);
	if (status != -1)
		goto out;
	status = PG_EXIT_FAIL;
	if (!pg_token_parse_uri(argv[next], &uri) ||
	    (a.ca_uri != NULL && !pg_token_parse_uri(a.ca_uri, &ca_uri)))
		goto out;
	if (!names_private_key(uri) || (ca_uri != NULL && !names_private_key(ca_uri))) {
		status = pg_tool_usage_error(argv[0], "the URIs name private keys (type=private, or "
		                             "no type)");
		goto out;
	}
	if (a.common.san.failed) {
		pg_message("out of memory");
		goto out;
	}
	if (a.common.subject != NULL &&
	    (a.common.subject_name = parse_subject(a.common.subject, argv[0])) == NULL) {
		status = PG_EXIT_USAGE;
		goto out;
	}
	status = do_certify(&a, uri, ca_uri);
out:
	X509_NAME_free(a.common.subject_name);
	pg_pins_clear(&a.common.store.pins);
	p11glue_uri_free(uri);
	p11glue_uri_free(ca_uri);
	pg_buf_clear(&a.common.san);
	return status;
}

/* ---------------------------------------------------------------------------
 * request
 */

static void
request_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue request [--subject DN] [--san NAME]... [--hash H]\n"
	        "                       [--output FILE [--overwrite]] [--json]\n"
	        "                       [--pin-source SRC] [--module PATH] [--store DIR] URI\n"
	        "\n"
	        "Prints a PKCS#10 certification request (RFC 2986, PEM \"CERTIFICATE\n"
	        "REQUEST\") for the private key the URI names, signed inside its token\n"
	        "with C_Sign, for a certification authority to sign. Names given with\n"
	        "--san go in an extensionRequest attribute. Once the CA answers, put its\n"
	        "certificate next to the key with 'p11glue import CERT URI' (it finds\n"
	        "the key's ID by itself).\n"
	        "\n"
	        "Options:\n");
	common_help(out);
	fprintf(out, "\n");
	pg_store_help_common(out, "Example",
	        "  p11glue request --subject 'CN=host.example' --san DNS:host.example \\\n"
	        "      'pkcs11:token=mykeys;object=tls' > host.csr\n"
	        "  openssl req -in host.csr -noout -verify\n");
}

static int
do_request(common_args *a, const p11glue_uri *uri)
{
	pg_signer key = { 0 };
	pg_signer_choice choice = {
		.subject = a->subject_name,
		.hash = a->hash,
		.san = a->san.len ? (const char *)a->san.data : NULL,
	};
	X509_REQ *req = NULL;
	char *pem = NULL;
	int status = open_output(a, "-");

	if (status != -1)
		return status;
	status = pg_signer_open(&key, &a->store, uri, false);
	if (status == PG_EXIT_OK)
		status = pg_signer_request(&key, &choice, &req);
	if (status == PG_EXIT_OK && (pem = pem_text(req, true)) == NULL)
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK && !write_output(a, pem))
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK && a->json)
		print_json(a, &key, NULL, pem);
	pg_outfile_abort(&a->out);
	free(pem);
	X509_REQ_free(req);
	pg_signer_clear(&key);
	return status;
}

int
pg_cmd_request(int argc, char **argv)
{
	common_args a = { 0 };
	p11glue_uri *uri = NULL;
	const pg_opt table[] = { COMMON_OPTIONS(&a) };
	int next, status;

	pg_buf_init(&a.san);
	status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), request_usage, 0, -1, &next);
	if (status >= 0) {
		pg_buf_clear(&a.san);
		return status;
	}
	status = PG_EXIT_FAIL;
	if (argc - next != 1)
		status = pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI (the key)");
	else if (!hash_ok(a.hash))
		status = pg_tool_usage_error(argv[0], "--hash: sha256, sha384 or sha512");
	else if (!pg_token_parse_uri(argv[next], &uri))
		status = PG_EXIT_FAIL;
	else if (!names_private_key(uri))
		status = pg_tool_usage_error(argv[0], "the URI names a private key (type=private, or "
		                             "no type)");
	else if (a.san.failed)
		pg_message("out of memory");
	else if (a.subject != NULL && (a.subject_name = parse_subject(a.subject, argv[0])) == NULL)
		status = PG_EXIT_USAGE;
	else
		status = do_request(&a, uri);
	X509_NAME_free(a.subject_name);
	pg_pins_clear(&a.store.pins);
	p11glue_uri_free(uri);
	pg_buf_clear(&a.san);
	return status;
}
