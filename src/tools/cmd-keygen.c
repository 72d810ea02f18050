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
	        "                                [--pin-source SRC] [--json] [--module PATH]\n"
	        "                                [--store DIR] [URI]\n"
	        "\n"
	        "Generates a key pair on the token: a private key that never leaves it\n"
	        "(sensitive, not extractable, usable after login) and its public key,\n"
	        "both with the label and CKA_ID given. Without --id the ID is the SHA-1\n"
	        "hash of the public key (RFC 5280 4.2.1.2, method 1), the key\n"
	        "identifier most tools compute. Logs in as the user first; prints the\n"
	        "URIs of both keys. Objects on the token with the same label are warned\n"
	        "of (a URI with object=LABEL names them too); an ID that is taken is\n"
	        "refused.\n"
	        "\n"
	        "Options:\n"
	        "  --type TYPE    rsa:2048, rsa:3072, rsa:4096, ec:secp256r1,\n"
	        "                 ec:secp384r1, ec:secp521r1, ed25519 or ed448\n"
	        "                 (ec:prime256v1 and ec:p-256 name secp256r1 too)\n"
	        "  --label LABEL  the keys' label (CKA_LABEL)\n"
	        "  --id HEX       the keys' CKA_ID in hexadecimal (\"01\", \"a1:b2\")\n"
	        "  --pin-source SRC  read the user PIN from SRC (see PINs below)\n"
	        "  --json         print a JSON object: the token, \"private-key\" and\n"
	        "                 \"public-key\" (their URIs)\n"
	        "  -h, --help     show this help\n"
	        "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue generate-keypair --type ec:secp256r1 --label ssh 'pkcs11:token=mykeys'\n"
	        "  p11glue export-pubkey --format=ssh 'pkcs11:token=mykeys;object=ssh'\n");
}

typedef struct {
	const pg_key_kind *kind;
	unsigned bits;
	const char *label;
	const unsigned char *id;
	size_t id_len;
	bool json;
} keygen_args;

static void
print_keys(pg_keytoken *kt, CK_OBJECT_HANDLE priv, CK_OBJECT_HANDLE pub, bool json)
{
	char *priv_uri = pg_keytoken_object_uri(kt, priv);
	char *pub_uri = pg_keytoken_object_uri(kt, pub);
	pg_json j;

	if (json) {
		pg_store_json_begin(&j, kt);
		pg_json_key_text(&j, "private-key", priv_uri ? priv_uri : "");
		pg_json_key_text(&j, "public-key", pub_uri ? pub_uri : "");
		pg_store_json_end(&j, NULL);
	} else {
		printf("private key: %s\n", priv_uri ? priv_uri : "?");
		printf("public key:  %s\n", pub_uri ? pub_uri : "?");
	}
	free(priv_uri);
	free(pub_uri);
}

static int
do_generate(pg_keytoken *kt, const p11glue_uri *uri, const keygen_args *a)
{
	CK_OBJECT_HANDLE pub, priv;
	int status;

	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_USER, uri)) != PG_EXIT_OK)
		return status;
	/* A taken --id is refused by pg_key_generate; a derived one is new. */
	pg_keytoken_warn_taken(kt, a->label, NULL, 0, CKO_PUBLIC_KEY);
	status = pg_key_generate(kt, a->kind, a->bits, a->label, a->id, a->id_len, &pub, &priv);
	if (status == PG_EXIT_OK)
		print_keys(kt, priv, pub, a->json);
	return status;
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
	keygen_args a = { 0 };
	const char *type = NULL, *id_text = NULL;
	unsigned char *id = NULL;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	const pg_opt table[] = {
		{ "type", 0, PG_OPT_TEXT, &type, 0 },
		{ "label", 0, PG_OPT_TEXT, &a.label, 0 },
		{ "id", 0, PG_OPT_TEXT, &id_text, 0 },
		{ "json", 0, PG_OPT_FLAG, &a.json, 0 },
		PG_PIN_OPTION(&opts.pins),
	};
	int status = pg_store_options(argc, argv, table, PG_N_ELEMENTS(table), generate_usage, &opts,
	                              false, &uri);

	if (status < 0)
		status = pg_tool_hex_option(argv[0], "--id", id_text, &id, &a.id_len);
	if (status < 0)
		status = check_type(argv[0], type, a.label, &a.kind, &a.bits);
	if (status < 0) {
		a.id = id;
		status = pg_keytoken_load(&kt, &opts, uri);
		if (status == PG_EXIT_OK)
			status = do_generate(&kt, uri, &a);
		pg_keytoken_clear(&kt);
	}
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	free(id);
	return status;
}
