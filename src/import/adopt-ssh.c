/*
 * The key files `p11glue adopt` takes (adopt-core.h): the private keys
 * in ~/.ssh, and the PKCS#12 and PEM files the user names. An OpenSSH
 * key is recognized on the token by its public key before anything is
 * decrypted: the .pub file beside it, else the public key that the
 * openssh-key-v1 format keeps outside its encrypted part (PROTOCOL.key),
 * so a second run asks no passphrase again.
 */
#define _GNU_SOURCE /* memmem */
#include "config.h"

#include "adopt-core.h"
#include "be-reader.h"

#include <openssl/evp.h>

#include <dirent.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEY_FILE (1024 * 1024)
#define MAX_FILE (16 * 1024 * 1024)

static const char openssh_begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----";

/* Base64 (RFC 4648) of text[0 .. len), white space skipped; new buffer
 * (free()) and its length, or NULL. */
static unsigned char *
base64_decode(const char *text, size_t len, size_t *out_len)
{
	char *clean = malloc(len + 1);
	unsigned char *out = clean ? malloc(len / 4 * 3 + 3) : NULL;
	size_t n = 0, pad = 0;
	int got;

	for (size_t i = 0; clean && i < len; i++)
		if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' && text[i] != '\t')
			clean[n++] = text[i];
	if (out == NULL || n == 0 || n % 4 != 0) {
		free(clean);
		free(out);
		return NULL;
	}
	pad = (clean[n - 1] == '=') + (clean[n - 2] == '=');
	got = EVP_DecodeBlock(out, (const unsigned char *)clean, (int)n);
	free(clean);
	if (got < 0 || (size_t)got < pad) {
		free(out);
		return NULL;
	}
	*out_len = (size_t)got - pad;
	return out;
}

/* An OpenSSH string's view (uint32 length, octets). */
static const uint8_t *
get_string(pg_be_reader *r, size_t *len)
{
	*len = pg_be_u32(r);
	return pg_be_bytes(r, *len);
}

/* ---------------------------------------------------------------------------
 * What a key file says without its passphrase
 */

typedef struct {
	unsigned char *blob;         /* the public key blob (RFC 4253 6.6), or NULL */
	size_t blob_len;
	char type[40];               /* "ssh-ed25519" ..., or "" */
	char *comment;               /* of the .pub file, or NULL */
	bool encrypted;
} key_face;

static void
face_clear(key_face *f)
{
	free(f->blob);
	free(f->comment);
	memset(f, 0, sizeof(*f));
}

/* The blob's key type name, its first string. */
static void
blob_type(key_face *f)
{
	pg_be_reader r = { f->blob, f->blob_len, 0, false };
	size_t len;
	const uint8_t *t = get_string(&r, &len);

	if (t != NULL && len < sizeof(f->type)) {
		memcpy(f->type, t, len);
		f->type[len] = 0;
	}
}

/* PATH.pub: "TYPE BASE64 [COMMENT]". */
static void
read_pub(key_face *f, const char *path)
{
	pg_buf name;
	size_t len = 0;
	int fd;
	char *text = NULL, *p, *end;

	pg_buf_init(&name);
	pg_buf_printf(&name, "%s.pub", path);
	fd = name.failed ? -1 : pg_open_regular((const char *)name.data, false, NULL);
	pg_buf_clear(&name);
	if (fd >= 0)
		text = (char *)pg_read_fd(fd, 64 * 1024, &len);
	if (fd >= 0)
		close(fd);
	if (text == NULL)
		return;
	text[strcspn(text, "\r\n")] = 0;
	p = strchr(text, ' ');
	if (p != NULL) {
		p++;
		end = p + strcspn(p, " ");
		f->blob = base64_decode(p, (size_t)(end - p), &f->blob_len);
		p = end + strspn(end, " ");
		if (f->blob != NULL && *p != 0)
			f->comment = strdup(p);
	}
	free(text);
}

/* The openssh-key-v1 header: cipher name and public key (PROTOCOL.key). */
static void
read_openssh_header(key_face *f, const char *text, size_t len)
{
	const char *body = memmem(text, len, openssh_begin, sizeof(openssh_begin) - 1);
	const char *end = body ? memmem(body, len - (size_t)(body - text), "-----END ", 9) : NULL;
	size_t raw_len = 0, n, nkeys;
	unsigned char *raw;
	pg_be_reader r;
	const uint8_t *cipher, *pub;

	if (end == NULL)
		return;
	body += sizeof(openssh_begin) - 1;
	raw = base64_decode(body, (size_t)(end - body), &raw_len);
	if (raw == NULL)
		return;
	r = (pg_be_reader){ raw, raw_len, 0, false };
	if (pg_be_bytes(&r, 15) != NULL && memcmp(raw, "openssh-key-v1", 15) == 0) {
		cipher = get_string(&r, &n);
		f->encrypted = cipher != NULL && !(n == 4 && memcmp(cipher, "none", 4) == 0);
		get_string(&r, &n);
		get_string(&r, &n);
		nkeys = pg_be_u32(&r);
		pub = get_string(&r, &n);
		if (!r.failed && nkeys == 1 && f->blob == NULL && (f->blob = malloc(n ? n : 1)) != NULL) {
			memcpy(f->blob, pub, n);
			f->blob_len = n;
		}
	}
	free(raw);
}

/* ---------------------------------------------------------------------------
 * One key file
 */

typedef struct {
	pg_adopt *a;
	const char *prompt_name;
	bool dry_run;
} ask_ctx;

static p11glue_pin *
ask_passphrase(void *data)
{
	ask_ctx *c = data;
	char prompt[512];

	if (c->dry_run)
		return NULL;
	snprintf(prompt, sizeof(prompt), "Passphrase for %s", c->prompt_name);
	return pg_adopt_ask(c->a, prompt);
}

/* Why a file could not be read, for its item. */
static void
parse_failed(pg_adopt *a, pg_adopt_item *it, pg_import_result rv, pg_import *imp)
{
	switch (rv) {
	case PG_IMPORT_ERR_NO_PASSPHRASE:
		if (a->opts->dry_run)
			pg_adopt_set(a, it, PG_ADOPT_TAKEN, "encrypted: its passphrase is asked for");
		else
			pg_adopt_set(a, it, PG_ADOPT_FAILED, "encrypted, and no passphrase was given");
		break;
	case PG_IMPORT_ERR_PASSPHRASE:
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "%s", imp->error);
		break;
	case PG_IMPORT_ERR_NOMEM:
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "out of memory");
		break;
	default:
		pg_adopt_set(a, it, PG_ADOPT_LEFT, "%s", imp->error);
		break;
	}
}

/* Is text a private key file of a kind ssh uses? *left: one we do not
 * take, with the reason. */
static bool
is_key_file(const char *text, size_t len, const char **left)
{
	static const char *const taken[] = {
		openssh_begin, "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----",
	};

	*left = NULL;
	for (size_t i = 0; i < PG_N_ELEMENTS(taken); i++)
		if (len >= strlen(taken[i]) && memcmp(text, taken[i], strlen(taken[i])) == 0)
			return true;
	if (len >= 31 && memcmp(text, "-----BEGIN DSA PRIVATE KEY-----", 31) == 0)
		*left = "a DSA key: the store holds RSA, EC and Edwards keys (and OpenSSH no longer "
		        "takes DSA)";
	else if (len >= 20 && memcmp(text, "PuTTY-User-Key-File-", 20) == 0)
		*left = "a PuTTY key: convert it with puttygen first";
	return *left != NULL;
}

/* The version of the installed OpenSSH as major * 100 + minor (its
 * "ssh -V"), or 0 when unknown. */
static int
ssh_version(void)
{
	char *argv[] = { "ssh", "-V", NULL };
	pg_buf err;
	const char *v;
	int major = 0, minor = 0;

	pg_buf_init(&err);
	if (pg_adopt_have("ssh") && pg_adopt_exec(argv, NULL, 0, NULL, &err) && err.data != NULL &&
	    (v = strstr((const char *)err.data, "OpenSSH_")) != NULL &&
	    sscanf(v + 8, "%d.%d", &major, &minor) != 2)
		major = minor = 0;
	pg_buf_clear(&err);
	return major * 100 + minor;
}

/* OpenSSH reads Ed25519 keys from PKCS#11 modules from 9.4 on: before,
 * the file stays needed. */
static void
note_ed25519(pg_adopt *a, pg_adopt_item *it, int version)
{
	if (version == 0 || version >= 904 ||
	    (it->state != PG_ADOPT_TAKEN && it->state != PG_ADOPT_THERE))
		return;
	free(it->remove);
	it->remove = NULL;
	pg_adopt_set(a, it, it->state, "%s%sOpenSSH %d.%d uses no Ed25519 keys of PKCS#11 modules "
	             "(9.4 and later do): keep the file for ssh", it->why ? it->why : "",
	             it->why ? "; " : "", version / 100, version % 100);
}

static void
adopt_key_file(pg_adopt *a, const char *path, const unsigned char *data, size_t len,
               int version)
{
	char *shown = pg_adopt_pretty(a, path);
	ask_ctx ctx = { a, shown, a->opts->dry_run };
	pg_import_options io = { ask_passphrase, &ctx, 0, 0 };
	const char *left;
	key_face f = { 0 };
	pg_adopt_item *it;
	pg_import imp;
	pg_import_result rv;

	pg_import_init(&imp);
	if (!is_key_file((const char *)data, len, &left))
		goto out;
	read_pub(&f, path);
	read_openssh_header(&f, (const char *)data, len);
	if (f.blob != NULL)
		blob_type(&f);
	it = pg_adopt_add(a, "ssh", shown, "%s key%s%s%s", f.type[0] ? f.type : "private",
	                  f.comment ? " '" : "", f.comment ? f.comment : "", f.comment ? "'" : "");
	if (it == NULL)
		goto out;
	if (left != NULL) {
		pg_adopt_set(a, it, PG_ADOPT_LEFT, "%s", left);
		goto out;
	}
	pg_adopt_remove(it, "%s", shown);
	/* Known by its public key: nothing to decrypt. */
	if (f.blob != NULL && pg_adopt_find_blob(a, f.blob, f.blob_len) != NULL) {
		pg_adopt_set(a, it, PG_ADOPT_THERE, NULL);
	} else if ((rv = pg_import_parse(data, len, &io, &imp)) != PG_IMPORT_OK) {
		parse_failed(a, it, rv, &imp);
	} else if (imp.key == NULL) {
		pg_adopt_set(a, it, PG_ADOPT_LEFT, "no private key in the file");
	} else {
		pg_adopt_write(a, it, &imp, path, imp.key_label ? NULL : f.comment);
	}
	if (it->state == PG_ADOPT_LEFT || it->state == PG_ADOPT_FAILED) {
		free(it->remove);
		it->remove = NULL;
	}
	if (strcmp(f.type, "ssh-ed25519") == 0 || (imp.key && EVP_PKEY_is_a(imp.key, "ED25519")))
		note_ed25519(a, it, version);
out:
	pg_import_clear(&imp);
	face_clear(&f);
	free(shown);
}

/* Files of ~/.ssh that are never keys. */
static bool
skipped_name(const char *name)
{
	static const char *const names[] = { "config", "environment", "rc" };
	size_t n = strlen(name);

	for (size_t i = 0; i < PG_N_ELEMENTS(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return name[0] == '.' || (n > 4 && strcmp(name + n - 4, ".pub") == 0) ||
	       strncmp(name, "known_hosts", 11) == 0 || strncmp(name, "authorized_keys", 15) == 0;
}

static int
by_name(const struct dirent **x, const struct dirent **y)
{
	return strcmp((*x)->d_name, (*y)->d_name);
}

void
pg_adopt_ssh(pg_adopt *a)
{
	struct dirent **names = NULL;
	pg_buf dir, path;
	int n, version = -1;

	pg_buf_init(&dir);
	pg_buf_printf(&dir, "%s/.ssh", a->home);
	n = dir.failed ? -1 : scandir((const char *)dir.data, &names, NULL, by_name);
	for (int i = 0; i < n; i++) {
		unsigned char *data = NULL;
		size_t len = 0;
		int fd = -1;

		pg_buf_init(&path);
		pg_buf_printf(&path, "%s/%s", (const char *)dir.data, names[i]->d_name);
		if (!skipped_name(names[i]->d_name) && !path.failed)
			fd = pg_open_regular((const char *)path.data, false, NULL);
		if (fd >= 0)
			data = pg_read_fd(fd, MAX_KEY_FILE, &len);
		if (fd >= 0)
			close(fd);
		if (data != NULL && version < 0)
			version = ssh_version();
		if (data != NULL)
			adopt_key_file(a, (const char *)path.data, data, len, version);
		pg_free_secret(data, len);
		pg_buf_clear(&path);
		free(names[i]);
	}
	free(names);
	pg_buf_clear(&dir);
}

/* ---------------------------------------------------------------------------
 * Files the user names
 */

static void
adopt_named(pg_adopt *a, const char *path)
{
	ask_ctx ctx = { a, path, a->opts->dry_run };
	pg_import_options io = { ask_passphrase, &ctx, 0, 0 };
	pg_import imp;
	pg_import_result rv;
	pg_adopt_item *it = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	int fd = pg_open_regular(path, false, NULL), n_certs;

	if (fd >= 0)
		data = pg_read_fd(fd, MAX_FILE, &len);
	if (fd >= 0)
		close(fd);
	pg_import_init(&imp);
	rv = data ? pg_import_parse(data, len, &io, &imp) : PG_IMPORT_ERR_FORMAT;
	n_certs = imp.certs ? sk_X509_num(imp.certs) : 0;
	if (rv == PG_IMPORT_OK && imp.key != NULL)
		it = pg_adopt_add(a, "file", path, "%s: private key%s%s%s and %d certificate%s",
		                  imp.format, imp.key_label ? " '" : "",
		                  imp.key_label ? imp.key_label : "", imp.key_label ? "'" : "",
		                  n_certs, n_certs == 1 ? "" : "s");
	else if (rv == PG_IMPORT_OK)
		it = pg_adopt_add(a, "file", path, "%s: %d certificate%s", imp.format, n_certs,
		                  n_certs == 1 ? "" : "s");
	else
		it = pg_adopt_add(a, "file", path, "a key or certificate file");
	if (it == NULL)
		goto out;
	if (data == NULL)
		pg_adopt_set(a, it, PG_ADOPT_FAILED, "%s", errno == EINVAL ? "not a regular file"
		             : errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
	else if (rv != PG_IMPORT_OK)
		parse_failed(a, it, rv, &imp);
	else
		pg_adopt_write(a, it, &imp, path, NULL);
	if (it->state == PG_ADOPT_TAKEN || it->state == PG_ADOPT_THERE)
		pg_adopt_remove(it, "%s", path);
out:
	pg_import_clear(&imp);
	pg_free_secret(data, len);
}

void
pg_adopt_files(pg_adopt *a)
{
	for (size_t i = 0; i < a->opts->n_files; i++)
		adopt_named(a, a->opts->files[i]);
}
