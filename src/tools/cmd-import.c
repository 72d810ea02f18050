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

#include <openssl/x509v3.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (16 * 1024 * 1024)

static void
import_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue import [--label LABEL] [--id HEX] [--passphrase-source SRC]\n"
	        "                      [--module PATH] [--store DIR] FILE [URI]\n"
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
	        "is already there is refused. Prints the URI of every object made.\n"
	        "\n"
	        "Options:\n"
	        "  --label LABEL            the label of the key and its certificate\n"
	        "  --id HEX                 their CKA_ID in hexadecimal\n"
	        "  --passphrase-source SRC  read the file's passphrase from SRC (a file\n"
	        "                           only its owner can read); else it is asked\n"
	        "                           for on the terminal, when the file is\n"
	        "                           encrypted\n"
	        "  -h, --help               show this help\n"
	        "\n");
	pg_store_help_common(out);
	fprintf(out,
	        "\n"
	        "Examples:\n"
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
	if (pg_store_read_secret(req->source, prompt, false, &pin) != PG_EXIT_OK)
		return NULL;
	return pin;
}

/* Reads a whole file (at most MAX_FILE bytes); NULL after printing why. */
static unsigned char *
read_file(const char *path, size_t *len)
{
	unsigned char *data = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		pg_message("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		pg_message("%s: %s", path, S_ISREG(st.st_mode) ? "larger than 16 MiB"
		                                                   : "not a regular file");
		goto fail;
	}
	data = malloc((size_t)st.st_size + 1);
	if (data == NULL)
		goto fail;
	while (got < (size_t)st.st_size) {
		n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return data;
fail:
	if (fd >= 0)
		close(fd);
	free(data);
	return NULL;
}

/* The subject's common name (or NULL); free(). */
static char *
common_name(X509 *cert)
{
	X509_NAME *name = X509_get_subject_name(cert);
	int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
	ASN1_STRING *value = i >= 0 ? X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)) : NULL;
	unsigned char *utf8 = NULL;
	int len = value ? ASN1_STRING_to_UTF8(&utf8, value) : -1;
	char *text = len > 0 ? (char *)pg_memdup0(utf8, (size_t)len) : NULL;

	OPENSSL_free(utf8);
	return text;
}

/* The file's name without directory and extension; free(). */
static char *
file_label(const char *path)
{
	const char *base = strrchr(path, '/');
	char *label = strdup(base ? base + 1 : path), *dot;

	if (label != NULL && (dot = strrchr(label, '.')) != NULL && dot != label)
		*dot = 0;
	return label;
}

/* ---------------------------------------------------------------------------
 * Writing to the token
 */

typedef struct {
	pg_keytoken *kt;
	CK_OBJECT_HANDLE made[64];
	size_t n_made;
	int status;
} writer;

/* Creates one object from t (consumed); prints its URI. */
static bool
create(writer *w, pg_tmpl *t, const char *what)
{
	CK_OBJECT_HANDLE obj;
	char *text;
	CK_RV rv = t->failed ? CKR_HOST_MEMORY
	                     : w->kt->f->C_CreateObject(w->kt->session, t->items, t->n, &obj);

	pg_tmpl_clear(t);
	if (rv != CKR_OK) {
		pg_keytoken_error(what, rv);
		w->status = PG_EXIT_FAIL;
		return false;
	}
	if (w->n_made < PG_N_ELEMENTS(w->made))
		w->made[w->n_made++] = obj;
	text = pg_keytoken_object_uri(w->kt, obj);
	printf("%s: %s\n", what, text ? text : "?");
	free(text);
	return true;
}

/* Undoes what a failed import made. */
static void
roll_back(writer *w)
{
	for (size_t i = w->n_made; i > 0; i--)
		w->kt->f->C_DestroyObject(w->kt->session, w->made[i - 1]);
	if (w->n_made > 0)
		pg_message("nothing was imported (%zu object%s removed again)", w->n_made,
		              w->n_made == 1 ? "" : "s");
	w->n_made = 0;
}

/* True when an object of the class with these attribute values exists. */
static bool
exists(writer *w, CK_OBJECT_CLASS cls, const CK_ATTRIBUTE *attrs, CK_ULONG n)
{
	CK_ATTRIBUTE all[3] = { { CKA_CLASS, &cls, sizeof(cls) } };
	CK_OBJECT_HANDLE found;

	for (CK_ULONG i = 0; i < n && i < 2; i++)
		all[i + 1] = attrs[i];
	return pg_keytoken_find(w->kt, NULL, all, n + 1, &found, 1) > 0;
}

static bool
write_cert(writer *w, X509 *cert, const char *label, const unsigned char *id, size_t id_len,
           bool leaf)
{
	unsigned char *der = NULL;
	int len = i2d_X509(cert, &der);
	char *cn = NULL, *name;
	pg_tmpl t;
	bool dup;
	CK_ATTRIBUTE same[2] = {
		{ CKA_VALUE, der, (CK_ULONG)len },
		{ CKA_ID, (void *)id, id_len },
	};

	if (len <= 0)
		return false;
	/* A chain certificate once is enough; the key's certificate must
	 * carry the key's ID. */
	dup = exists(w, CKO_CERTIFICATE, same, leaf ? 2 : 1);
	OPENSSL_free(der);
	if (dup) {
		name = common_name(cert);
		printf("certificate '%s' is on the token already: skipped\n", name ? name : "?");
		free(name);
		return true;
	}
	if (label == NULL)
		label = cn = common_name(cert);
	pg_tmpl_init(&t);
	pg_cert_template(&t, cert, label, id, id_len, leaf);
	free(cn);
	return create(w, &t, "certificate");
}

static bool
write_key(writer *w, EVP_PKEY *key, const char *label, const unsigned char *id, size_t id_len,
          X509 *leaf)
{
	pg_tmpl pub, priv;

	CK_ATTRIBUTE same_id = { CKA_ID, (void *)id, id_len };

	if (exists(w, CKO_PRIVATE_KEY, &same_id, 1)) {
		pg_message("a private key with this ID is on the token already (imported before? "
		              "delete it first, or give another --id)");
		w->status = PG_EXIT_FAIL;
		return false;
	}
	pg_tmpl_init(&pub);
	pg_tmpl_init(&priv);
	pg_key_templates(&pub, &priv, key, label, id, id_len, leaf);
	if (!create(w, &pub, "public key")) {
		pg_tmpl_clear(&priv);
		return false;
	}
	/* Last, so that a key on the token always has its public half. */
	return create(w, &priv, "private key");
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
} import_args;

/* The certificate of the key, or NULL. */
static X509 *
leaf_of(pg_import *imp)
{
	for (int i = 0; imp->key && imp->certs && i < sk_X509_num(imp->certs); i++) {
		X509 *cert = sk_X509_value(imp->certs, i);
		if (EVP_PKEY_eq(X509_get0_pubkey(cert), imp->key) == 1)
			return cert;
	}
	return NULL;
}

static int
write_all(pg_keytoken *kt, const import_args *a, pg_import *imp)
{
	writer w = { .kt = kt, .status = PG_EXIT_OK };
	X509 *leaf = leaf_of(imp);
	unsigned char key_id[20], cert_id[20];
	char *label = NULL;
	const unsigned char *id = a->id;
	size_t id_len = a->id_len;
	int n_certs = imp->certs ? sk_X509_num(imp->certs) : 0;
	bool ok = true;

	if (imp->key != NULL) {
		if (id == NULL) {
			if (!pg_key_id(imp->key, key_id))
				return PG_EXIT_FAIL;
			id = key_id;
			id_len = sizeof(key_id);
		}
		label = a->label ? strdup(a->label)
		        : imp->key_label ? strdup(imp->key_label)
		        : leaf ? common_name(leaf) : NULL;
		if (label == NULL)
			label = file_label(a->file);
		if (label == NULL)
			return PG_EXIT_FAIL;
		ok = write_key(&w, imp->key, label, id, id_len, leaf) &&
		     (leaf == NULL || write_cert(&w, leaf, label, id, id_len, true));
		if (ok && leaf == NULL && n_certs > 0)
			pg_message("warning: no certificate in the file belongs to the key");
	}
	for (int i = 0; ok && i < n_certs; i++) {
		X509 *cert = sk_X509_value(imp->certs, i);
		EVP_PKEY *pub = X509_get0_pubkey(cert);
		const char *cert_label = imp->key == NULL && n_certs == 1 ? a->label : NULL;
		if (cert == leaf)
			continue;
		/* Certificates alone take --id when there is one. */
		if (imp->key == NULL && n_certs == 1 && a->id != NULL)
			ok = write_cert(&w, cert, cert_label, a->id, a->id_len, false);
		else if (pub == NULL || !pg_key_id(pub, cert_id))
			ok = write_cert(&w, cert, cert_label, (const unsigned char *)"", 0, false);
		else
			ok = write_cert(&w, cert, cert_label, cert_id, sizeof(cert_id), false);
	}
	free(label);
	if (!ok) {
		roll_back(&w);
		return PG_EXIT_FAIL;
	}
	return w.status;
}

static int
do_import(pg_keytoken *kt, const p11glue_uri *uri, const import_args *a, pg_import *imp)
{
	int status;

	if (imp->key != NULL && pg_key_kind_of(imp->key) == NULL) {
		pg_message("%s: the store cannot hold this type of key (%s); it holds RSA, EC "
		              "P-256/P-384/P-521, Ed25519 and Ed448 keys", a->file,
		              EVP_PKEY_get0_type_name(imp->key) ? EVP_PKEY_get0_type_name(imp->key) : "?");
		return PG_EXIT_FAIL;
	}
	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_USER, uri, NULL)) != PG_EXIT_OK)
		return status;
	return write_all(kt, a, imp);
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
	p11glue_uri_free(uri);
	free(id);
	return status;
}
