/*
 * p11glue import: a private key (OpenSSH, PEM, PKCS#8, PKCS#12) with its
 * certificates, or certificates alone, onto a token. The private key
 * becomes a sensitive, non-extractable private key object; its public
 * key object and its certificate share its CKA_ID, which is how
 * PKCS#11 applications (OpenSSH, NSS, OpenSSL's engine) pair them.
 */
#include "config.h"

#include "store-tool.h"
#include "import.h"


#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILE (16 * 1024 * 1024)

static void
import_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue import [--label LABEL] [--id HEX] [--passphrase-source SRC]\n"
	        "                      [--pin-source SRC] [--json] [--module PATH]\n"
	        "                      [--store DIR] FILE [URI]\n"
	        "\n"
	        "Imports a private key with its certificates, or certificates alone,\n"
	        "onto a token. FILE may hold:\n"
	        "  - an OpenSSH private key (\"BEGIN OPENSSH PRIVATE KEY\", as ssh-keygen\n"
	        "    writes it), plain or passphrase-protected (bcrypt KDF; aes256-ctr,\n"
	        "    aes256-gcm@openssh.com and the other AES modes OpenSSH offers);\n"
	        "  - PEM blocks: PKCS#8 (\"PRIVATE KEY\"), encrypted PKCS#8 (\"ENCRYPTED\n"
	        "    PRIVATE KEY\"), \"RSA PRIVATE KEY\" and \"EC PRIVATE KEY\" (also with\n"
	        "    Proc-Type encryption), and certificates, in any number and order;\n"
	        "  - DER: PKCS#8, encrypted PKCS#8, PKCS#12 (key and certificate chain),\n"
	        "    an X.509 certificate, or an RSA or EC key.\n"
	        "Key types: RSA, EC P-256, P-384, P-521, Ed25519 and Ed448.\n"
	        "\n"
	        "The private key becomes a private key object that never leaves the\n"
	        "token (sensitive, not extractable, usable after login), next to a\n"
	        "public key object and the certificate of the key, all with the same\n"
	        "label and CKA_ID: --id, else the SHA-1 hash of the public key (RFC 5280\n"
	        "4.2.1.2, method 1). Other certificates (a chain) keep their own key's\n"
	        "ID and their subject's common name as label. The label: --label, else\n"
	        "the one in the file (OpenSSH key comment, PKCS#12 friendlyName), else\n"
	        "the certificate's common name, else the file name without extension.\n"
	        "A certificate already on the token is skipped; a private key whose ID\n"
	        "is already there is refused; other objects with the same label or ID\n"
	        "are warned of (a URI naming them would name the new ones too). Prints\n"
	        "the URI of every object made.\n"
	        "\n"
	        "Options:\n"
	        "  --label LABEL            the label of the key and its certificate\n"
	        "  --id HEX                 their CKA_ID in hexadecimal\n"
	        "  --passphrase-source SRC  read the file's passphrase from SRC (a file\n"
	        "                           only its owner can read); else it is asked\n"
	        "                           for on the terminal, when the file is\n"
	        "                           encrypted\n"
	        "  --pin-source SRC         read the token's user PIN from SRC (see PINs\n"
	        "                           below)\n"
	        "  --json                   print a JSON object: the token, the objects\n"
	        "                           made (\"created\") and the certificates that\n"
	        "                           were on the token already (\"skipped\")\n"
	        "  -h, --help               show this help\n"
	        "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue import ~/.ssh/id_ed25519 'pkcs11:token=mykeys'\n"
	        "  p11glue import --passphrase-source ~/p12-pass.txt me.p12 'pkcs11:token=mykeys'\n");
}

typedef struct {
	const char *file;
	const char *source;
} pass_request;

static p11glue_pin *
ask_passphrase(void *data)
{
	pass_request *req = data;
	p11glue_pin *pin = NULL;
	char prompt[256];

	snprintf(prompt, sizeof(prompt), "Passphrase for %s", req->file);
	if (pg_store_read_secret(req->source, prompt, 0, &pin) != PG_EXIT_OK)
		return NULL;
	return pin;
}

/* Reads a whole file (at most MAX_FILE bytes); NULL after printing why. */
static unsigned char *
read_file(const char *path, size_t *len)
{
	unsigned char *data = NULL;
	int fd = pg_open_regular(path, false, NULL);

	if (fd >= 0)
		data = pg_read_fd(fd, MAX_FILE, len);
	if (data == NULL)
		pg_message("%s: %s", path, errno == EINVAL ? "not a regular file"
		                           : errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
	if (fd >= 0)
		close(fd);
	return data;
}

/* ---------------------------------------------------------------------------
 * The command
 */

typedef struct {
	const char *file;
	const char *label;
	const unsigned char *id;
	size_t id_len;
	const char *pass_source;
	bool json;
} import_args;

/* The objects made and the certificates skipped. */
static void
print_json(pg_keytoken *kt, const import_args *a, const pg_report *r)
{
	static const char *const made[] = { "public key", "private key", "certificate" };
	pg_json j;

	pg_store_json_begin(&j, kt);
	pg_json_key_string(&j, "file", a->file);
	pg_json_key_begin_array(&j, "created");
	for (size_t i = 0; i < r->n; i++) {
		for (size_t k = 0; k < PG_N_ELEMENTS(made); k++) {
			if (strcmp(r->items[i].what, made[k]) != 0)
				continue;
			pg_json_begin_object(&j);
			pg_json_key_string(&j, "object", made[k]);
			pg_json_key_text(&j, "uri", r->items[i].uri ? r->items[i].uri : "");
			pg_json_end_object(&j);
		}
	}
	pg_json_end_array(&j);
	pg_store_json_uris(&j, "skipped", r, "skipped certificate");
	pg_store_json_end(&j, r);
}

static int
do_import(pg_keytoken *kt, const p11glue_uri *uri, const import_args *a, pg_import *imp)
{
	pg_report report = { 0 };
	int status;

	if (imp->key != NULL && pg_key_kind_of(imp->key) == NULL) {
		pg_message("%s: the store cannot hold this type of key (%s); it holds RSA, EC "
		              "P-256/P-384/P-521, Ed25519 and Ed448 keys", a->file,
		              EVP_PKEY_get0_type_name(imp->key) ? EVP_PKEY_get0_type_name(imp->key) : "?");
		return PG_EXIT_FAIL;
	}
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_USER, uri)) != PG_EXIT_OK)
		return status;
	status = pg_import_write(kt, imp, a->file, a->label, a->id, a->id_len, &report);
	if (status == PG_EXIT_OK && a->json)
		print_json(kt, a, &report);
	else if (status == PG_EXIT_OK)
		pg_store_print_report(&report);
	pg_report_clear(&report);
	return status;
}

static int
parse_file(const import_args *a, pg_import *imp)
{
	pass_request req = { a->file, a->pass_source };
	pg_import_options opts = { ask_passphrase, &req, 0 };
	size_t len = 0;
	unsigned char *data = read_file(a->file, &len);
	pg_import_result rv;

	if (data == NULL)
		return PG_EXIT_FAIL;
	rv = pg_import_parse(data, len, &opts, imp);
	pg_free_secret(data, len);
	if (rv != PG_IMPORT_OK) {
		pg_message("%s: %s", a->file, rv == PG_IMPORT_ERR_NOMEM ? "out of memory" : imp->error);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_cmd_import(int argc, char **argv)
{
	pg_store_opts opts = { 0 };
	import_args a = { 0 };
	const char *id_text = NULL;
	unsigned char *id = NULL;
	p11glue_uri *uri = NULL;
	pg_import imp;
	pg_keytoken kt;
	const pg_opt table[] = {
		{ "label", 0, PG_OPT_TEXT, &a.label, 0 },
		{ "id", 0, PG_OPT_TEXT, &id_text, 0 },
		{ "passphrase-source", 0, PG_OPT_TEXT, &a.pass_source, 0 },
		PG_PIN_OPTION(&opts.pins),
		{ "json", 0, PG_OPT_FLAG, &a.json, 0 },
		PG_STORE_OPTIONS(&opts),
	};
	int next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), import_usage, 0,
	                                   -1, &next);

	if (status < 0 && (argc - next < 1 || argc - next > 2))
		status = pg_tool_usage_error(argv[0], "expected a FILE and optionally a token URI");
	if (status < 0)
		status = pg_tool_hex_option(argv[0], "--id", id_text, &id, &a.id_len);
	if (status >= 0)
		return status;
	a.id = id;
	a.file = argv[next];
	if (!pg_store_parse_uri(next + 1 < argc ? argv[next + 1] : NULL, &uri)) {
		free(id);
		return PG_EXIT_FAIL;
	}
	pg_import_init(&imp);
	/* The file first: a wrong passphrase costs no PIN attempt. */
	status = parse_file(&a, &imp);
	if (status == PG_EXIT_OK) {
		status = pg_keytoken_load(&kt, &opts, uri);
		if (status == PG_EXIT_OK)
			status = do_import(&kt, uri, &a, &imp);
		pg_keytoken_clear(&kt);
	}
	pg_import_clear(&imp);
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	free(id);
	return status;
}
