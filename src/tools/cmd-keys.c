/*
 * p11glue generate-keypair | export-pubkey | delete-object.
 */
#include "config.h"

#include "store-tool.h"
#include "import.h"

#include <openssl/pem.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS 4096

/* ---------------------------------------------------------------------------
 * generate-keypair
 */

static void
generate_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue generate-keypair --type TYPE --label LABEL [--id HEX]\n"
	        "                                [--module PATH] [--store DIR] [URI]\n"
	        "\n"
	        "Generates a key pair on the token: a private key that never leaves it\n"
	        "(sensitive, not extractable, usable after login) and its public key,\n"
	        "both with the label and CKA_ID given. Without --id the ID is the SHA-1\n"
	        "hash of the public key (RFC 5280 4.2.1.2, method 1), the key\n"
	        "identifier most tools compute. Logs in as the user first; prints the\n"
	        "URIs of both keys.\n"
	        "\n"
	        "Options:\n"
	        "  --type TYPE    rsa:2048, rsa:3072, rsa:4096, ec:secp256r1,\n"
	        "                 ec:secp384r1, ec:secp521r1, ed25519 or ed448\n"
	        "                 (ec:prime256v1 and ec:p-256 name secp256r1 too)\n"
	        "  --label LABEL  the keys' label (CKA_LABEL)\n"
	        "  --id HEX       the keys' CKA_ID in hexadecimal (\"01\", \"a1:b2\")\n"
	        "  -h, --help     show this help\n"
	        "\n");
	pg_store_help_common(out);
	fprintf(out,
	        "\n"
	        "Examples:\n"
	        "  p11glue generate-keypair --type ec:secp256r1 --label ssh 'pkcs11:token=mykeys'\n"
	        "  p11glue export-pubkey --format=ssh 'pkcs11:token=mykeys;object=ssh'\n");
}

static void
keygen_templates(const pg_key_kind *kind, unsigned bits, const char *label,
                 const unsigned char *id, size_t id_len, pg_tmpl *pub, pg_tmpl *priv)
{
	static const unsigned char f4[] = { 0x01, 0x00, 0x01 };

	for (int i = 0; i < 2; i++) {
		pg_tmpl *t = i == 0 ? pub : priv;
		pg_tmpl_add_bool(t, CKA_TOKEN, true);
		pg_tmpl_add(t, CKA_LABEL, label, strlen(label));
		if (id != NULL)
			pg_tmpl_add(t, CKA_ID, id, id_len);
	}
	pg_tmpl_add_bool(pub, CKA_PRIVATE, false);
	pg_tmpl_add_bool(pub, CKA_VERIFY, true);
	pg_tmpl_add_bool(priv, CKA_PRIVATE, true);
	pg_tmpl_add_bool(priv, CKA_SENSITIVE, true);
	pg_tmpl_add_bool(priv, CKA_EXTRACTABLE, false);
	pg_tmpl_add_bool(priv, CKA_SIGN, true);
	if (kind->key_type == CKK_RSA) {
		pg_tmpl_add_ulong(pub, CKA_MODULUS_BITS, bits);
		pg_tmpl_add(pub, CKA_PUBLIC_EXPONENT, f4, sizeof(f4));
		pg_tmpl_add_bool(pub, CKA_ENCRYPT, true);
		pg_tmpl_add_bool(pub, CKA_WRAP, true);
		pg_tmpl_add_bool(priv, CKA_DECRYPT, true);
		pg_tmpl_add_bool(priv, CKA_UNWRAP, true);
	} else {
		pg_tmpl_add_ec_params(pub, kind->group);
		if (kind->key_type == CKK_EC)
			pg_tmpl_add_bool(priv, CKA_DERIVE, true);
	}
}

/* Sets the CKA_ID of both halves to the public key's identifier. */
static int
set_derived_id(pg_keytoken *kt, CK_OBJECT_HANDLE pub, CK_OBJECT_HANDLE priv)
{
	unsigned char id[20];
	CK_ATTRIBUTE attr = { CKA_ID, id, sizeof(id) };
	const char *why;
	EVP_PKEY *key = pg_keytoken_public_key(kt, pub, &why);
	CK_RV rv;

	if (key == NULL || !pg_key_id(key, id)) {
		EVP_PKEY_free(key);
		pg_message("the new public key cannot be read back (%s); the keys have no ID", why);
		return PG_EXIT_FAIL;
	}
	EVP_PKEY_free(key);
	rv = kt->f->C_SetAttributeValue(kt->session, pub, &attr, 1);
	if (rv == CKR_OK)
		rv = kt->f->C_SetAttributeValue(kt->session, priv, &attr, 1);
	if (rv != CKR_OK) {
		pg_keytoken_error("setting CKA_ID", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* Refuses an ID that an object on the token already has. */
static int
check_id_free(pg_keytoken *kt, const unsigned char *id, size_t id_len)
{
	CK_ATTRIBUTE attr = { CKA_ID, (void *)id, id_len };
	CK_OBJECT_HANDLE found;
	long n = pg_keytoken_find(kt, NULL, &attr, 1, &found, 1);

	if (n < 0)
		return PG_EXIT_FAIL;
	if (n > 0) {
		pg_message("an object with this ID is on the token already");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

static int
do_generate(pg_keytoken *kt, const p11glue_uri *uri, const pg_key_kind *kind, unsigned bits,
            const char *label, const unsigned char *id, size_t id_len)
{
	CK_MECHANISM mech = { kind->keygen, NULL, 0 };
	CK_OBJECT_HANDLE pub, priv;
	pg_tmpl pub_t, priv_t;
	char *text;
	int status;
	CK_RV rv;

	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_USER, uri, NULL)) != PG_EXIT_OK)
		return status;
	if (id != NULL && (status = check_id_free(kt, id, id_len)) != PG_EXIT_OK)
		return status;
	pg_tmpl_init(&pub_t);
	pg_tmpl_init(&priv_t);
	keygen_templates(kind, bits, label, id, id_len, &pub_t, &priv_t);
	if (pub_t.failed || priv_t.failed) {
		rv = CKR_HOST_MEMORY;
	} else {
		rv = kt->f->C_GenerateKeyPair(kt->session, &mech, pub_t.items, pub_t.n, priv_t.items,
		                              priv_t.n, &pub, &priv);
	}
	pg_tmpl_clear(&pub_t);
	pg_tmpl_clear(&priv_t);
	if (rv != CKR_OK) {
		pg_keytoken_error("C_GenerateKeyPair", rv);
		return PG_EXIT_FAIL;
	}
	if (id == NULL && (status = set_derived_id(kt, pub, priv)) != PG_EXIT_OK)
		return status;
	text = pg_keytoken_object_uri(kt, priv);
	printf("private key: %s\n", text ? text : "?");
	free(text);
	text = pg_keytoken_object_uri(kt, pub);
	printf("public key:  %s\n", text ? text : "?");
	free(text);
	return PG_EXIT_OK;
}

int
pg_cmd_generate_keypair(int argc, char **argv)
{
	static const struct option options[] = {
		{ "type", required_argument, NULL, 't' },
		{ "label", required_argument, NULL, 'l' },
		{ "id", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		PG_STORE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	pg_store_opts opts = { 0 };
	const pg_key_kind *kind = NULL;
	const char *label = NULL, *type = NULL;
	unsigned char *id = NULL;
	size_t id_len = 0;
	unsigned bits = 0;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	int opt, status;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (pg_store_opts_take(&opts, opt, optarg))
			continue;
		switch (opt) {
		case 't':
			type = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'i':
			free(id);
			if (!pg_tool_parse_hex(optarg, &id, &id_len) || id_len == 0) {
				free(id);
				return pg_tool_usage_error(argv[0], "--id: not a hexadecimal string");
			}
			break;
		case 'h':
			free(id);
			generate_usage(stdout);
			return PG_EXIT_OK;
		default:
			free(id);
			return pg_tool_option_error(argv[0], opt, argv);
		}
	}
	status = PG_EXIT_USAGE;
	if (type == NULL || label == NULL)
		pg_tool_usage_error(argv[0], "--type and --label are required");
	else if (!pg_key_kind_parse(type, &kind, &bits))
		pg_tool_usage_error(argv[0], "unknown key type '%s'", type);
	else if (kind->key_type == CKK_RSA && (bits < 2048 || bits > 4096))
		pg_tool_usage_error(argv[0], "RSA keys have 2048 to 4096 bits");
	else if (argc - optind > 1)
		pg_tool_usage_error(argv[0], "unexpected argument '%s'", argv[optind + 1]);
	else
		status = pg_store_parse_uri(optind < argc ? argv[optind] : NULL, &uri) ? -1
		                                                                      : PG_EXIT_FAIL;
	if (status == -1) {
		status = pg_keytoken_load(&kt, &opts, uri);
		if (status == PG_EXIT_OK)
			status = do_generate(&kt, uri, kind, bits, label, id, id_len);
		pg_keytoken_clear(&kt);
	}
	p11glue_uri_free(uri);
	free(id);
	return status;
}

/* ---------------------------------------------------------------------------
 * export-pubkey
 */

static void
export_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue export-pubkey [--format=ssh|pem] [--output FILE] [--login]\n"
	        "                             [--module PATH] [--store DIR] URI\n"
	        "\n"
	        "Prints the public keys the URI selects: public key objects, or with\n"
	        "type=cert the keys of certificates, or with type=private the public\n"
	        "half of private keys. Without a type, public key objects are looked\n"
	        "for first, then certificates. Every key found is printed.\n"
	        "\n"
	        "Options:\n"
	        "  --format=ssh   one OpenSSH line per key (authorized_keys format; the\n"
	        "                 label is the comment); Ed448 has no OpenSSH form\n"
	        "  --format=pem   PEM SubjectPublicKeyInfo (\"PUBLIC KEY\"), the default\n"
	        "  --output FILE  write to FILE instead of standard output\n"
	        "  --login        log in first (private objects); implied by a PIN in\n"
	        "                 the URI\n"
	        "  -h, --help     show this help\n"
	        "\n");
	pg_store_help_common(out);
	fprintf(out,
	        "\n"
	        "Example:\n"
	        "  p11glue export-pubkey --format=ssh 'pkcs11:token=mykeys;object=ssh' \\\n"
	        "      >> ~/.ssh/authorized_keys\n");
}

/* The objects to export: the URI's type, else public keys, then certificates. */
static long
export_find(pg_keytoken *kt, const p11glue_uri *uri, CK_OBJECT_HANDLE *found)
{
	static const CK_OBJECT_CLASS order[] = { CKO_PUBLIC_KEY, CKO_CERTIFICATE };
	CK_OBJECT_CLASS cls;
	CK_ATTRIBUTE attr = { CKA_CLASS, &cls, sizeof(cls) };
	long n = 0;

	if (p11glue_uri_get(uri, P11GLUE_URI_TYPE, NULL) != NULL)
		return pg_keytoken_find(kt, uri, NULL, 0, found, MAX_OBJECTS);
	for (size_t i = 0; n == 0 && i < PG_N_ELEMENTS(order); i++) {
		cls = order[i];
		n = pg_keytoken_find(kt, uri, &attr, 1, found, MAX_OBJECTS);
	}
	return n;
}

static bool
write_key(FILE *out, pg_keytoken *kt, CK_OBJECT_HANDLE obj, bool ssh)
{
	const char *why = NULL;
	EVP_PKEY *key = pg_keytoken_public_key(kt, obj, &why);
	char *uri = NULL, *line;
	unsigned char *label;
	size_t len;
	bool ok = false;

	if (key == NULL) {
		uri = pg_keytoken_object_uri(kt, obj);
		pg_message("%s: %s", uri ? uri : "object", why);
	} else if (!ssh) {
		ok = PEM_write_PUBKEY(out, key) == 1;
	} else {
		label = pg_keytoken_get(kt, obj, CKA_LABEL, &len);
		/* A comment is one word-ish field: keep it on the line. */
		for (size_t i = 0; label && i < len; i++) {
			if (label[i] < 0x20 || label[i] == 0x7f)
				label[i] = '_';
		}
		line = pg_ssh_public_line(key, label ? (const char *)label : NULL);
		free(label);
		if (line != NULL)
			ok = fprintf(out, "%s\n", line) > 0;
		else {
			uri = pg_keytoken_object_uri(kt, obj);
			pg_message("%s: OpenSSH has no format for this key type", uri ? uri : "object");
		}
		free(line);
	}
	free(uri);
	EVP_PKEY_free(key);
	return ok;
}

static int
do_export(pg_keytoken *kt, const p11glue_uri *uri, bool login, bool ssh, const char *output)
{
	CK_OBJECT_HANDLE *found = calloc(MAX_OBJECTS, sizeof(*found));
	FILE *out = stdout;
	long n;
	int status;

	if (found == NULL)
		return PG_EXIT_FAIL;
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, false)) != PG_EXIT_OK ||
	    (login && (status = pg_keytoken_login(kt, CKU_USER, uri, NULL)) != PG_EXIT_OK))
		goto out;
	n = export_find(kt, uri, found);
	status = PG_EXIT_FAIL;
	if (n == 0)
		pg_message("no key matches the URI%s", login ? "" : " (private objects need --login)");
	if (n <= 0)
		goto out;
	if (output != NULL && (out = fopen(output, "w")) == NULL) {
		pg_message("%s: %s", output, strerror(errno));
		goto out;
	}
	status = PG_EXIT_OK;
	for (long i = 0; i < n; i++) {
		if (!write_key(out, kt, found[i], ssh))
			status = PG_EXIT_FAIL;
	}
	if (out != stdout && fclose(out) != 0) {
		pg_message("%s: %s", output, strerror(errno));
		status = PG_EXIT_FAIL;
	}
out:
	free(found);
	return status;
}

int
pg_cmd_export_pubkey(int argc, char **argv)
{
	static const struct option options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "login", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		PG_STORE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	pg_store_opts opts = { 0 };
	const char *output = NULL;
	bool ssh = false, login = false;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	int opt, status;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (pg_store_opts_take(&opts, opt, optarg))
			continue;
		switch (opt) {
		case 'f':
			if (strcmp(optarg, "ssh") != 0 && strcmp(optarg, "pem") != 0)
				return pg_tool_usage_error(argv[0], "--format: ssh or pem, not '%s'", optarg);
			ssh = strcmp(optarg, "ssh") == 0;
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			login = true;
			break;
		case 'h':
			export_usage(stdout);
			return PG_EXIT_OK;
		default:
			return pg_tool_option_error(argv[0], opt, argv);
		}
	}
	if (argc - optind != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI");
	if (!pg_token_parse_uri(argv[optind], &uri))
		return PG_EXIT_FAIL;
	login = login || p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, NULL) ||
	        p11glue_uri_get(uri, P11GLUE_URI_PIN_SOURCE, NULL);
	status = pg_keytoken_load(&kt, &opts, uri);
	if (status == PG_EXIT_OK)
		status = do_export(&kt, uri, login, ssh, output);
	pg_keytoken_clear(&kt);
	p11glue_uri_free(uri);
	return status;
}

/* ---------------------------------------------------------------------------
 * delete-object
 */

static void
delete_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue delete-object [--module PATH] [--store DIR] URI\n"
	        "\n"
	        "Deletes every object the URI selects on its token and prints the URI\n"
	        "of each. The URI must name objects by object (label) or id, and may\n"
	        "narrow them by type: 'pkcs11:token=t;object=k' deletes a key pair and\n"
	        "its certificate, 'pkcs11:token=t;object=k;type=cert' the certificate\n"
	        "only. Logs in first (when the token has a user PIN) so that private\n"
	        "objects are found too. Deleting cannot be undone.\n"
	        "\n"
	        "Options:\n"
	        "  -h, --help  show this help\n"
	        "\n");
	pg_store_help_common(out);
	fprintf(out,
	        "\n"
	        "Example:\n"
	        "  p11glue delete-object 'pkcs11:token=mykeys;object=old%%20key'\n");
}

static int
do_delete(pg_keytoken *kt, const p11glue_uri *uri)
{
	CK_OBJECT_HANDLE *found = calloc(MAX_OBJECTS, sizeof(*found));
	char *text;
	long n;
	int status;
	CK_RV rv;

	if (found == NULL)
		return PG_EXIT_FAIL;
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK)
		goto out;
	if ((kt->token.flags & CKF_USER_PIN_INITIALIZED) &&
	    (status = pg_keytoken_login(kt, CKU_USER, uri, NULL)) != PG_EXIT_OK)
		goto out;
	n = pg_keytoken_find(kt, uri, NULL, 0, found, MAX_OBJECTS);
	status = PG_EXIT_FAIL;
	if (n == 0)
		pg_message("no object matches the URI");
	if (n <= 0)
		goto out;
	status = PG_EXIT_OK;
	for (long i = 0; i < n; i++) {
		text = pg_keytoken_object_uri(kt, found[i]);
		rv = kt->f->C_DestroyObject(kt->session, found[i]);
		if (rv == CKR_OK) {
			printf("deleted %s\n", text ? text : "an object");
		} else {
			pg_keytoken_error(text ? text : "C_DestroyObject", rv);
			status = PG_EXIT_FAIL;
		}
		free(text);
	}
out:
	free(found);
	return status;
}

int
pg_cmd_delete_object(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		PG_STORE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	pg_store_opts opts = { 0 };
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	int opt, status;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (pg_store_opts_take(&opts, opt, optarg))
			continue;
		if (opt == 'h') {
			delete_usage(stdout);
			return PG_EXIT_OK;
		}
		return pg_tool_option_error(argv[0], opt, argv);
	}
	if (argc - optind != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI");
	if (!pg_token_parse_uri(argv[optind], &uri))
		return PG_EXIT_FAIL;
	if (p11glue_uri_get(uri, P11GLUE_URI_OBJECT, NULL) == NULL &&
	    p11glue_uri_get(uri, P11GLUE_URI_ID, NULL) == NULL) {
		p11glue_uri_free(uri);
		return pg_tool_usage_error(argv[0], "the URI must name objects by object= or id=");
	}
	status = pg_keytoken_load(&kt, &opts, uri);
	if (status == PG_EXIT_OK)
		status = do_delete(&kt, uri);
	pg_keytoken_clear(&kt);
	p11glue_uri_free(uri);
	return status;
}
