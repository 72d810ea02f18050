/*
 * p11glue generate-keypair: a key pair made on the token.
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------
 * generate-keypair
 */

static void
generate_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue generate-keypair --type TYPE --label LABEL [--id HEX]\n"
	        "                                [--pin-source SRC] [--module PATH]\n"
	        "                                [--store DIR] [URI]\n"
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
	        "  --pin-source SRC  read the user PIN from SRC (see PINs below)\n"
	        "  -h, --help     show this help\n"
	        "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue generate-keypair --type ec:secp256r1 --label ssh 'pkcs11:token=mykeys'\n"
	        "  p11glue export-pubkey --format=ssh 'pkcs11:token=mykeys;object=ssh'\n");
}

static int
do_generate(pg_keytoken *kt, const p11glue_uri *uri, const pg_key_kind *kind, unsigned bits,
            const char *label, const unsigned char *id, size_t id_len)
{
	CK_OBJECT_HANDLE pub, priv;
	char *text;
	int status;

	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_USER, uri)) != PG_EXIT_OK ||
	    (status = pg_key_generate(kt, kind, bits, label, id, id_len, &pub, &priv)) != PG_EXIT_OK)
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
	pg_pins pins = { 0 };
	pg_store_opts opts = { .pins = &pins };
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
		PG_PIN_OPTION(&pins),
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
	pg_pins_clear(&pins);
	p11glue_uri_free(uri);
	free(id);
	return status;
}
