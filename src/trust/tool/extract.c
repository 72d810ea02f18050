#define _GNU_SOURCE
/*
 * trust extract: the bundle and directory formats p11-kit writes, byte
 * for byte, plus CRLs (openssl-directory with .r0 links, crl-bundle).
 * Files are written 0444 and directories 0555, as p11-kit does.
 */
#include "config.h"

#include "trust-tool.h"
#include "trust-format.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	const pg_trust_set *set;
	int filter;
	const p11glue_uri *uri;
	const char *purpose;
	const char *dest;
	bool overwrite, comment;
	bool openssl;    /* an OpenSSL format: certificates with rejects unread left out */
	int dir;         /* a directory format: DIR_* */
} job;

enum { DIR_X509, DIR_PEM, DIR_PEM_HASH, DIR_OPENSSL };

static bool
selected(const job *j, const pg_tcert *c)
{
	return pg_trust_selected(c, j->filter, j->uri, j->purpose) &&
	       !(j->openssl && c->rejects_unreadable);
}

static bool
write_file(const char *path, const void *data, size_t len, bool overwrite)
{
	int fd;

	if (overwrite)
		unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		pg_message("couldn't create file: %s: %s", path, strerror(errno));
		return false;
	}
	if (len && write(fd, data, len) != (ssize_t)len) {
		pg_message("couldn't write file: %s: %s", path, strerror(errno));
		close(fd);
		return false;
	}
	return close(fd) == 0;
}

static bool
write_buf(const char *path, pg_buf *buf, bool overwrite)
{
	size_t len;
	char *data = pg_buf_steal(buf, &len);
	bool ok = data && write_file(path, data, len, overwrite);
	free(data);
	return ok;
}

/* Adds a purpose to the trust (or reject) list; libcrypto copies it. */
static void
add_purpose(X509 *x, const char *oid, bool reject)
{
	ASN1_OBJECT *obj = OBJ_txt2obj(oid, 1);

	if (obj == NULL)
		return;
	if (reject)
		X509_add1_reject_object(x, obj);
	else
		X509_add1_trust_object(x, obj);
	ASN1_OBJECT_free(obj);
}

/* OpenSSL's X509_CERT_AUX: trust and reject purposes, alias and keyid. */
static void
openssl_aux(pg_buf *out, const pg_tcert *c)
{
	X509 *x;
	const unsigned char *p = c->der;
	unsigned char *der = NULL;
	int n;

	x = d2i_X509(NULL, &p, (long)c->der_len);
	if (x == NULL)
		return;
	/* As p11-kit writes them: the stapled reject list; a distrusted
	 * certificate also rejects every known purpose and has no trust
	 * list; an anchor is trusted for its stapled extKeyUsage (no list:
	 * every purpose); anything else gets an empty trust list. */
	for (size_t i = 0; i < c->rejects.n; i++)
		add_purpose(x, c->rejects.oids[i], true);
	if (c->distrusted) {
		for (size_t i = 0; i < PG_N_PURPOSES; i++)
			add_purpose(x, pg_std_purposes[i], true);
	} else if (c->trusted) {
		/* A stapled extKeyUsage without purposes: an empty list. */
		if (c->restricted && c->purposes.n == 0)
			X509_add1_trust_object(x, NULL);
		for (size_t i = 0; c->restricted && i < c->purposes.n; i++)
			add_purpose(x, c->purposes.oids[i], false);
	} else {
		X509_trust_clear(x);
		X509_add1_trust_object(x, NULL);
	}
	X509_alias_set1(x, (const unsigned char *)c->label, (int)strlen(c->label));
	if (c->keyid)
		X509_keyid_set1(x, c->keyid, (int)c->keyid_len);
	n = i2d_X509_AUX(x, &der);
	if (n > 0)
		pg_pem_write(out, "TRUSTED CERTIFICATE", der, (size_t)n);
	OPENSSL_free(der);
	X509_free(x);
}

static void
write_entry(pg_buf *out, const pg_tcert *c, bool openssl)
{
	if (openssl)
		openssl_aux(out, c);
	else
		pg_pem_write(out, "CERTIFICATE", c->der, c->der_len);
}

static int
bundle(const job *j)
{
	pg_buf out;
	bool first = true;

	pg_buf_init(&out);
	for (size_t i = 0; i < j->set->n_certs; i++) {
		const pg_tcert *c = &j->set->certs[i];
		if (!selected(j, c))
			continue;
		/* Comments: "# label", with a blank line between entries. */
		if (j->comment)
			pg_buf_printf(&out, "%s# %s\n", first ? "" : "\n", c->label);
		first = false;
		write_entry(&out, c, j->openssl);
	}
	return write_buf(j->dest, &out, j->overwrite) ? PG_EXIT_OK : PG_EXIT_FAIL;
}

static int
x509_file(const job *j)
{
	const pg_tcert *first = NULL;
	size_t n = 0;

	for (size_t i = 0; i < j->set->n_certs; i++)
		if (selected(j, &j->set->certs[i])) {
			if (first == NULL)
				first = &j->set->certs[i];
			n++;
		}
	if (n > 1)
		pg_message("multiple certificates found but could only write one to file");
	if (first == NULL)
		return write_file(j->dest, "", 0, j->overwrite) ? PG_EXIT_OK : PG_EXIT_FAIL;
	return write_file(j->dest, first->der, first->der_len, j->overwrite) ? PG_EXIT_OK
	                                                                       : PG_EXIT_FAIL;
}

/* A file name from a label: letters, digits, '-', '.', '_' kept, else '_'. */
static void
base_name(const char *label, char *out, size_t size)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)label; *p && o + 1 < size; p++)
		out[o++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		           (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_'
		           ? (char)*p : '_';
	if (o == 0)
		out[o++] = '_';
	out[o] = 0;
}

/* A free name "BASE.EXT", else "BASE.N.EXT". */
static void
unique_path(const char *dir, const char *base, const char *ext, char *out, size_t size,
            char *name, size_t name_size)
{
	struct stat st;

	for (int i = 0;; i++) {
		if (i == 0)
			snprintf(name, name_size, "%s.%s", base, ext);
		else
			snprintf(name, name_size, "%s.%d.%s", base, i, ext);
		snprintf(out, size, "%s/%s", dir, name);
		if (lstat(out, &st) != 0)
			return;
	}
}

static bool
hash_link(const char *dir, unsigned long hash, const char *suffix, const char *target)
{
	char path[4200];
	struct stat st;

	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "%s/%08lx.%s%d", dir, hash, suffix, i);
		if (lstat(path, &st) == 0)
			continue;
		if (symlink(target, path) != 0) {
			pg_message("couldn't create link: %s: %s", path, strerror(errno));
			return false;
		}
		return true;
	}
	return false;
}

static bool
make_dir(const job *j)
{
	struct stat st;

	if (mkdir(j->dest, 0755) == 0)
		return true;
	/* An existing directory is written into with --overwrite; never
	 * one a symbolic link leads to. */
	if (errno == EEXIST && j->overwrite && lstat(j->dest, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	if (errno == EEXIST && j->overwrite)
		errno = ENOTDIR;
	pg_message("couldn't create directory: %s: %s", j->dest, strerror(errno));
	return false;
}

static int
directory(const job *j)
{
	int kind = j->dir;
	bool ok = make_dir(j);
	char base[256], name[300], path[4200];

	for (size_t i = 0; ok && i < j->set->n_certs; i++) {
		const pg_tcert *c = &j->set->certs[i];
		pg_buf out;
		if (!selected(j, c))
			continue;
		base_name(c->label, base, sizeof(base));
		unique_path(j->dest, base, kind == DIR_X509 ? "cer" : "pem", path, sizeof(path),
		            name, sizeof(name));
		pg_buf_init(&out);
		if (kind == DIR_X509)
			pg_buf_add(&out, c->der, c->der_len);
		else
			write_entry(&out, c, kind == DIR_OPENSSL);
		ok = write_buf(path, &out, false);
		if (ok && (kind == DIR_PEM_HASH || kind == DIR_OPENSSL)) {
			const unsigned char *p = c->der;
			X509 *x = d2i_X509(NULL, &p, (long)c->der_len);
			if (x) {
				ok = hash_link(j->dest, X509_subject_name_hash(x), "", name) &&
				     hash_link(j->dest, X509_subject_name_hash_old(x), "", name);
				X509_free(x);
			}
		}
	}
	/* CRLs, so that OpenSSL's -crl_check honours revocations. */
	for (size_t i = 0; ok && kind == DIR_OPENSSL && i < j->set->n_crls; i++) {
		const unsigned char *p = j->set->crls[i].der;
		X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)j->set->crls[i].len);
		pg_buf out;
		if (crl == NULL)
			continue;
		snprintf(base, sizeof(base), "crl-%08lx", X509_NAME_hash_ex(X509_CRL_get_issuer(crl),
		                                                            NULL, NULL, NULL));
		unique_path(j->dest, base, "crl", path, sizeof(path), name, sizeof(name));
		pg_buf_init(&out);
		pg_pem_write(&out, "X509 CRL", j->set->crls[i].der, j->set->crls[i].len);
		ok = write_buf(path, &out, false) &&
		     hash_link(j->dest, X509_NAME_hash_ex(X509_CRL_get_issuer(crl), NULL, NULL, NULL),
		               "r", name);
		X509_CRL_free(crl);
	}
	if (ok)
		chmod(j->dest, 0555);
	return ok ? PG_EXIT_OK : PG_EXIT_FAIL;
}

static int
crl_bundle(const job *j)
{
	pg_buf out;

	pg_buf_init(&out);
	for (size_t i = 0; i < j->set->n_crls; i++)
		pg_pem_write(&out, "X509 CRL", j->set->crls[i].der, j->set->crls[i].len);
	return write_buf(j->dest, &out, j->overwrite) ? PG_EXIT_OK : PG_EXIT_FAIL;
}

/* EFI_SIGNATURE_LIST per certificate (UEFI §32.4.1), for EDK2. */
static int
edk2(const job *j)
{
	static const unsigned char x509_guid[16] = {
		0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
		0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72 };
	static const unsigned char owner[16] = {
		0x50, 0x3b, 0xdd, 0xdc, 0x05, 0xf4, 0xfd, 0x43,
		0x96, 0xbe, 0xbd, 0x33, 0xb1, 0x73, 0x47, 0x76 };
	pg_buf out;

	pg_buf_init(&out);
	for (size_t i = 0; i < j->set->n_certs; i++) {
		const pg_tcert *c = &j->set->certs[i];
		uint32_t sig = (uint32_t)(16 + c->der_len), list = 28 + sig, hdr = 0;
		unsigned char le[12];
		if (!selected(j, c))
			continue;
		for (int k = 0; k < 4; k++) {
			le[k] = (unsigned char)(list >> (8 * k));
			le[4 + k] = (unsigned char)(hdr >> (8 * k));
			le[8 + k] = (unsigned char)(sig >> (8 * k));
		}
		pg_buf_add(&out, x509_guid, 16);
		pg_buf_add(&out, le, 12);
		pg_buf_add(&out, owner, 16);
		pg_buf_add(&out, c->der, c->der_len);
	}
	return write_buf(j->dest, &out, j->overwrite) ? PG_EXIT_OK : PG_EXIT_FAIL;
}

static void
be32(pg_buf *b, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
	                       (unsigned char)(v >> 8), (unsigned char)v };
	pg_buf_add(b, x, 4);
}

/* Java's JKS: magic, version 2, trusted-certificate entries, SHA-1 seal. */
static int
java_cacerts(const job *j)
{
	pg_buf out, aliases;
	uint32_t count = 0;
	uint64_t now;
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	unsigned char digest[20];
	EVP_MD_CTX *ctx;
	static const char password[] = "changeit";

	now = (uint64_t)(sde ? strtoull(sde, NULL, 10) : (unsigned long long)time(NULL)) * 1000;
	for (size_t i = 0; i < j->set->n_certs; i++)
		count += selected(j, &j->set->certs[i]);
	pg_buf_init(&out);
	pg_buf_init(&aliases);
	be32(&out, 0xfeedfeed);
	be32(&out, 2);
	be32(&out, count);
	for (size_t i = 0; i < j->set->n_certs; i++) {
		const pg_tcert *c = &j->set->certs[i];
		char alias[256];
		size_t a = 0;
		if (!selected(j, c))
			continue;
		/* Aliases: the label's ASCII in lower case without spaces, unique. */
		for (const unsigned char *p = (const unsigned char *)c->label;
		     *p && a + 8 < sizeof(alias); p++)
			if (*p != ' ' && *p < 0x80)
				alias[a++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		alias[a] = 0;
		for (int k = 1; strstr((char *)aliases.data ? (char *)aliases.data : "", "") &&
		                memmem(aliases.data ? aliases.data : (unsigned char *)"", aliases.len,
		                       alias, strlen(alias) + 1) != NULL; k++)
			snprintf(alias + a, sizeof(alias) - a, "-%d", k);
		pg_buf_add(&aliases, alias, strlen(alias) + 1);
		be32(&out, 2);
		pg_buf_add_byte(&out, (unsigned char)(strlen(alias) >> 8));
		pg_buf_add_byte(&out, (unsigned char)strlen(alias));
		pg_buf_add_str(&out, alias);
		be32(&out, (uint32_t)(now >> 32));
		be32(&out, (uint32_t)now);
		pg_buf_add(&out, "\x00\x05X.509", 7);
		be32(&out, (uint32_t)c->der_len);
		pg_buf_add(&out, c->der, c->der_len);
	}
	pg_buf_clear(&aliases);
	ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (const char *p = password; *p; p++) {
		unsigned char u[2] = { 0, (unsigned char)*p };
		EVP_DigestUpdate(ctx, u, 2);
	}
	EVP_DigestUpdate(ctx, "Mighty Aphrodite", 16);
	EVP_DigestUpdate(ctx, out.data, out.len);
	EVP_DigestFinal_ex(ctx, digest, NULL);
	EVP_MD_CTX_free(ctx);
	pg_buf_add(&out, digest, 20);
	return write_buf(j->dest, &out, j->overwrite) ? PG_EXIT_OK : PG_EXIT_FAIL;
}

/* What a format can carry. */
enum {
	F_OPENSSL = 1,       /* OpenSSL's: trusted and rejected purposes */
	F_POLICY = 2,        /* distrust, so a trust policy (PG_F_POLICY) */
	F_ONE_PURPOSE = 4,   /* meant for one purpose (TLS servers, mostly) */
};

static const struct {
	const char *name;
	int (*write)(const job *j);
	int dir;             /* directory formats: DIR_* */
	unsigned flags;      /* F_* */
} formats[] = {
	{ "pem-bundle", bundle, 0, 0 },
	{ "openssl-bundle", bundle, 0, F_OPENSSL | F_POLICY },
	{ "x509-file", x509_file, 0, 0 },
	{ "x509-directory", directory, DIR_X509, 0 },
	{ "pem-directory", directory, DIR_PEM, 0 },
	{ "pem-directory-hash", directory, DIR_PEM_HASH, 0 },
	{ "openssl-directory", directory, DIR_OPENSSL, F_OPENSSL | F_POLICY },
	{ "java-cacerts", java_cacerts, 0, F_ONE_PURPOSE },
	{ "edk2-cacerts", edk2, 0, F_ONE_PURPOSE },
	{ "crl-bundle", crl_bundle, 0, F_POLICY },
};

int
pg_trust_extract(const pg_trust_set *set, const char *format, int filter,
                 const p11glue_uri *uri, const char *purpose, const char *dest,
                 bool overwrite, bool comment)
{
	unsigned flags = 0;
	size_t f;
	job j;

	for (f = 0; f < PG_N_ELEMENTS(formats); f++)
		if (strcmp(formats[f].name, format) == 0)
			break;
	if (f < PG_N_ELEMENTS(formats))
		flags = formats[f].flags;
	/* These formats are for one purpose, yet p11-kit 0.24 writes every
	 * purpose when none is given (while saying it defaults to
	 * server-auth); scripts rely on that, so do the same and say so. */
	if ((flags & F_ONE_PURPOSE) && purpose == NULL)
		pg_message("format expects a purpose (--purpose); none given: every purpose");
	/* Only OpenSSL's formats can say "distrusted"; a trust policy in
	 * any other would read as trust (p11-kit refuses it too). */
	if (filter == PG_F_POLICY && !(flags & F_POLICY)) {
		pg_message("format does not support trust policy");
		return PG_EXIT_FAIL;
	}
	if (f == PG_N_ELEMENTS(formats)) {
		pg_message("format not supported: %s", format);
		return PG_EXIT_USAGE;
	}
	j = (job){ set, filter, uri, purpose, dest, overwrite, comment,
	           (flags & F_OPENSSL) != 0, formats[f].dir };
	return formats[f].write(&j);
}

char *
pg_trust_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	pg_buf data;
	char chunk[8192];
	size_t n;

	if (f == NULL)
		return NULL;
	pg_buf_init(&data);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pg_buf_add(&data, chunk, n);
	fclose(f);
	return pg_buf_steal(&data, len);
}

bool
pg_trust_check_persist(const char *path)
{
	size_t len;
	char *text = pg_trust_read_file(path, &len);
	pg_source src;
	bool ok;

	if (text == NULL)
		return false;
	memset(&src, 0, sizeof(src));
	src.path = (char *)path;
	ok = memmem(text, len, "[p11-kit-object-v1]", 19) != NULL &&
	     pg_persist_parse(&src, (unsigned char *)text, len) && src.n_entries > 0;
	src.path = NULL;
	pg_source_clear(&src);
	free(text);
	return ok;
}
