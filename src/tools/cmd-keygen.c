/*
 * p11glue generate-keypair: a key pair made on the token.
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>
#include <string.h>

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
	pg_store_help_common(out, "Examples",
	        "  p11glue generate-keypair --type ec:secp256r1 --label ssh 'pkcs11:token=mykeys'\n"
	        "  p11glue export-pubkey --format=ssh 'pkcs11:token=mykeys;object=ssh'\n");
}

static void
keygen_templates(const pg_key_kind *kind, unsigned bits, const char *label,
                 const unsigned char *id, size_t id_len, pg_tmpl *pub, pg_tmpl *priv)
{
	static const unsigned char f4[] = { 0x01, 0x00, 0x01 };

	pg_key_pair_templates(pub, priv, kind, label, id, id_len);
	if (kind->key_type == CKK_RSA) {
		pg_tmpl_add_ulong(pub, CKA_MODULUS_BITS, bits);
		pg_tmpl_add(pub, CKA_PUBLIC_EXPONENT, f4, sizeof(f4));
	} else {
		pg_tmpl_add_ec_params(pub, kind->group);
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

/* --type and --label given, and a type the store can make; -1 if so. */
static int
check_type(const char *command, const char *type, const char *label, const pg_key_kind **kind,
           unsigned *bits)
{
	if (type == NULL || label == NULL)
		return pg_tool_usage_error(command, "--type and --label are required");
	if (!pg_key_kind_parse(type, kind, bits))
		return pg_tool_usage_error(command, "unknown key type '%s'", type);
	if ((*kind)->key_type == CKK_RSA && (*bits < 2048 || *bits > 4096))
		return pg_tool_usage_error(command, "RSA keys have 2048 to 4096 bits");
	return -1;
}

int
pg_cmd_generate_keypair(int argc, char **argv)
{
	pg_store_opts opts = { 0 };
	const pg_key_kind *kind = NULL;
	const char *label = NULL, *type = NULL, *id_text = NULL;
	unsigned char *id = NULL;
	size_t id_len = 0;
	unsigned bits = 0;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	const pg_opt table[] = {
		{ "type", 0, PG_OPT_TEXT, &type, 0 },
		{ "label", 0, PG_OPT_TEXT, &label, 0 },
		{ "id", 0, PG_OPT_TEXT, &id_text, 0 },
	};
	int status = pg_store_options(argc, argv, table, PG_N_ELEMENTS(table), generate_usage, &opts,
	                              false, &uri);

	if (status < 0)
		status = pg_tool_hex_option(argv[0], "--id", id_text, &id, &id_len);
	if (status < 0)
		status = check_type(argv[0], type, label, &kind, &bits);
	if (status < 0) {
		status = pg_keytoken_load(&kt, &opts, uri);
		if (status == PG_EXIT_OK)
			status = do_generate(&kt, uri, kind, bits, label, id, id_len);
		pg_keytoken_clear(&kt);
	}
	p11glue_uri_free(uri);
	free(id);
	return status;
}
