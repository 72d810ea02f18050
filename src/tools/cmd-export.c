/*
 * p11glue export-pubkey: public keys of a token in OpenSSH or PEM form.
 */
#include "config.h"

#include "store-tool.h"
#include "import.h"

#include <openssl/pem.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * export-pubkey
 */

static void
export_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue export-pubkey [--format=ssh|pem] [--output FILE [--overwrite]]\n"
	        "                             [--login] [--pin-source SRC] [--module PATH]\n"
	        "                             [--store DIR] URI\n"
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
	        "  --output FILE  write to FILE instead of standard output ('-'); an\n"
	        "                 existing FILE is refused, and a symbolic link always\n"
	        "                 (nothing is written through one)\n"
	        "  --overwrite    replace an existing FILE (by renaming a new file over\n"
	        "                 it, once all keys are written)\n"
	        "  --login        log in first (private objects); implied by a PIN in\n"
	        "                 the URI and by --pin-source\n"
	        "  --pin-source SRC  read the user PIN from SRC (see PINs below)\n"
	        "  -h, --help     show this help\n"
	        "\n");
	pg_store_help_common(out, "Example",
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
		return pg_keytoken_find(kt, uri, NULL, 0, found, PG_STORE_MAX_FOUND);
	for (size_t i = 0; n == 0 && i < PG_N_ELEMENTS(order); i++) {
		cls = order[i];
		n = pg_keytoken_find(kt, uri, &attr, 1, found, PG_STORE_MAX_FOUND);
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
do_export(pg_keytoken *kt, const p11glue_uri *uri, bool login, bool ssh, pg_outfile *out)
{
	CK_OBJECT_HANDLE *found = calloc(PG_STORE_MAX_FOUND, sizeof(*found));
	long n;
	int status;

	if (found == NULL)
		return PG_EXIT_FAIL;
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, false)) != PG_EXIT_OK ||
	    (login && (status = pg_keytoken_login(kt, CKU_USER, uri)) != PG_EXIT_OK))
		goto out;
	n = export_find(kt, uri, found);
	status = PG_EXIT_FAIL;
	if (n == 0)
		pg_message("no key matches the URI%s", login ? "" : " (private objects need --login)");
	if (n <= 0)
		goto out;
	status = PG_EXIT_OK;
	for (long i = 0; i < n; i++) {
		if (!write_key(out->fp, kt, found[i], ssh))
			status = PG_EXIT_FAIL;
	}
out:
	free(found);
	return status;
}

int
pg_cmd_export_pubkey(int argc, char **argv)
{
	pg_store_opts opts = { 0 };
	const char *output = NULL, *format = NULL;
	bool ssh = false, login = false, overwrite = false;
	pg_outfile out;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	const pg_opt table[] = {
		{ "format", 0, PG_OPT_TEXT, &format, 0 },
		{ "output", 0, PG_OPT_TEXT, &output, 0 },
		{ "overwrite", 0, PG_OPT_FLAG, &overwrite, 0 },
		{ "login", 0, PG_OPT_FLAG, &login, 0 },
		PG_PIN_OPTION(&opts.pins),
	};
	int status = pg_store_options(argc, argv, table, PG_N_ELEMENTS(table), export_usage, &opts,
	                              true, &uri);

	if (status < 0 && format && strcmp(format, "ssh") != 0 && strcmp(format, "pem") != 0)
		status = pg_tool_usage_error(argv[0], "--format: ssh or pem, not '%s'", format);
	if (status >= 0) {
		p11glue_uri_free(uri);
		return status;
	}
	ssh = format && strcmp(format, "ssh") == 0;
	login = login || opts.pins.user_source != NULL ||
	        p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, NULL) ||
	        p11glue_uri_get(uri, P11GLUE_URI_PIN_SOURCE, NULL);
	/* The file first: an existing one is refused before any PIN. */
	if (!pg_outfile_open(&out, output ? output : "-", overwrite, 0666)) {
		pg_pins_clear(&opts.pins);
		p11glue_uri_free(uri);
		return PG_EXIT_FAIL;
	}
	status = pg_keytoken_load(&kt, &opts, uri);
	if (status == PG_EXIT_OK)
		status = do_export(&kt, uri, login, ssh, &out);
	pg_keytoken_clear(&kt);
	/* Nothing is left of a failed export: not even part of the keys. */
	if (status == PG_EXIT_OK && !pg_outfile_commit(&out))
		status = PG_EXIT_FAIL;
	pg_outfile_abort(&out);
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	return status;
}
