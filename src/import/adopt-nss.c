/*
 * The user's NSS databases for `p11glue adopt` (adopt-core.h):
 * ~/.pki/nssdb (Chromium's), and each Firefox and Thunderbird profile
 * (their profiles.ini, and directories holding cert9.db). NSS itself
 * reads them: `certutil -L` lists the certificates of the database's
 * own token with their trust flags (NSS's built-in roots live in another
 * token, "Builtin Object Token", and are not listed; a built-in root
 * whose trust the user changed is, as the override is the user's);
 * `pk12util -o` exports a private key with its certificate into our
 * private temporary directory under a random transport password, and
 * import-pkcs12.c reads it back.
 *
 * Trust flags become decisions for p11glue's trust, per NSS field (SSL,
 * S/MIME, object signing): C (trusted CA) and P (trusted peer) trust
 * the field's purposes, T (trusted CA for client authentication) trusts
 * client-auth; p (a peer) without any of them distrusts them. An anchor
 * is trusted for the purposes so trusted and rejects the distrusted
 * ones; a certificate with distrust and no trust is distrusted.
 */
#include "config.h"

#include "adopt-core.h"

#include <openssl/pem.h>
#include <openssl/rand.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DBS 64

/* ---------------------------------------------------------------------------
 * The databases
 */

typedef struct {
	char *dirs[MAX_DBS];
	size_t n;
} nss_dbs;

static bool
has_file(const char *dir, const char *name)
{
	struct stat st;
	pg_buf b;
	bool yes;

	pg_buf_init(&b);
	pg_buf_printf(&b, "%s/%s", dir, name);
	yes = !b.failed && stat((const char *)b.data, &st) == 0 && S_ISREG(st.st_mode);
	pg_buf_clear(&b);
	return yes;
}

/* Adds dir (taken) once, if it holds a database. */
static void
add_db(nss_dbs *d, char *dir)
{
	char *real = dir ? realpath(dir, NULL) : NULL;

	for (size_t i = 0; real != NULL && i < d->n; i++) {
		char *other = realpath(d->dirs[i], NULL);
		bool same = other != NULL && strcmp(other, real) == 0;
		free(other);
		if (same)
			goto drop;
	}
	if (real == NULL || d->n == MAX_DBS || (!has_file(dir, "cert9.db") && !has_file(dir, "cert8.db")))
		goto drop;
	d->dirs[d->n++] = dir;
	free(real);
	return;
drop:
	free(real);
	free(dir);
}

static char *
join(const char *dir, const char *name, size_t name_len)
{
	pg_buf b;

	pg_buf_init(&b);
	if (name[0] == '/')
		pg_buf_printf(&b, "%.*s", (int)name_len, name);
	else
		pg_buf_printf(&b, "%s/%.*s", dir, (int)name_len, name);
	return pg_buf_steal(&b, NULL);
}

/* The profiles of profiles.ini (Path=, relative to dir unless the
 * section says IsRelative=0), then the directories of dir with a
 * database. */
static void
add_profiles(nss_dbs *d, const char *dir)
{
	char *ini = join(dir, "profiles.ini", 12), *text = NULL, *path = NULL;
	struct dirent **names = NULL;
	bool relative = true;
	size_t len = 0;
	int fd = ini ? pg_open_regular(ini, false, NULL) : -1, n;

	if (fd >= 0) {
		text = (char *)pg_read_fd(fd, 1024 * 1024, &len);
		close(fd);
	}
	for (const char *p = text ? text : ""; ; p += len + 1) {
		len = strcspn(p, "\n");
		if (p[0] == '[' || p[0] == 0) {
			if (path != NULL)
				add_db(d, relative ? join(dir, path, strlen(path)) : strdup(path));
			free(path);
			path = NULL;
			relative = true;
		} else if (strncmp(p, "Path=", 5) == 0) {
			free(path);
			path = (char *)pg_memdup0(p + 5, strcspn(p + 5, "\r\n"));
		} else if (strncmp(p, "IsRelative=0", 12) == 0) {
			relative = false;
		}
		if (p[len] == 0)
			break;
	}
	if (path != NULL)
		add_db(d, relative ? join(dir, path, strlen(path)) : strdup(path));
	free(path);
	free(text);
	free(ini);
	n = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			add_db(d, join(dir, names[i]->d_name, strlen(names[i]->d_name)));
		free(names[i]);
	}
	free(names);
}

static void
find_dbs(const pg_adopt *a, nss_dbs *d)
{
	static const char *const roots[] = { ".mozilla/firefox", ".thunderbird" };
	char *dir;

	memset(d, 0, sizeof(*d));
	add_db(d, join(a->home, ".pki/nssdb", 10));
	for (size_t i = 0; i < PG_N_ELEMENTS(roots); i++) {
		dir = join(a->home, roots[i], strlen(roots[i]));
		if (dir != NULL)
			add_profiles(d, dir);
		free(dir);
	}
}

/* ---------------------------------------------------------------------------
 * certutil and pk12util
 */

typedef struct {
	pg_adopt *a;
	const char *dir;
	char *shown;                 /* the database for messages */
	char *db;                    /* "sql:DIR" */
	char *pw_file;               /* the database's password, once known */
	bool pw_failed;              /* refused: no more tries */
	unsigned n_exports;
} nss_db;

static bool
certutil(nss_db *db, const char *const *args, pg_buf *out, pg_buf *err)
{
	char *argv[16] = { "certutil", "-d", db->db };
	size_t n = 3;

	for (; *args && n < PG_N_ELEMENTS(argv) - 1; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	return pg_adopt_exec(argv, NULL, 0, out, err);
}

/* The certificate of nickname, or NULL. */
static X509 *
cert_of(nss_db *db, const char *nick)
{
	const char *args[] = { "-L", "-n", nick, "-a", NULL };
	pg_buf out;
	BIO *bio;
	X509 *cert = NULL;

	pg_buf_init(&out);
	if (certutil(db, args, &out, NULL) && !out.failed &&
	    (bio = BIO_new_mem_buf(out.data, (int)out.len)) != NULL) {
		cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		BIO_free(bio);
	}
	pg_buf_clear(&out);
	return cert;
}

/* The subject's common name, for what an item is (free()). */
static char *
cert_cn(X509 *cert)
{
	X509_NAME *name = X509_get_subject_name(cert);
	int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
	unsigned char *utf8 = NULL;
	int len = i >= 0 ? ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(
	                                                  X509_NAME_get_entry(name, i))) : -1;
	char *text = len >= 0 ? (char *)pg_memdup0(utf8, (size_t)len) : strdup("?");

	OPENSSL_free(utf8);
	return text;
}

/* The database's password into a file (the empty one first). False
 * when none can be had. */
static bool
db_password(nss_db *db, bool refused)
{
	p11glue_pin *pin;
	const unsigned char *v;
	size_t len;
	char prompt[512];

	if (refused && db->pw_file != NULL) {
		pg_adopt_tmpfile_remove(db->pw_file);
		free(db->pw_file);
		db->pw_file = NULL;
		if (db->pw_failed)
			return false;
		snprintf(prompt, sizeof(prompt), "Password of the NSS database %s", db->shown);
		pin = pg_adopt_ask(db->a, prompt);
		db->pw_failed = true;
		if (pin == NULL)
			return false;
		v = p11glue_pin_value(pin, &len);
		db->pw_file = pg_adopt_tmpfile(db->a, "db-password", v, len);
		p11glue_pin_free(pin);
	} else if (db->pw_file == NULL) {
		db->pw_file = pg_adopt_tmpfile(db->a, "db-password", "", 0);
	}
	return db->pw_file != NULL;
}

/* pg_import_options.passphrase: the transport password. */
static p11glue_pin *
transport(void *data)
{
	const char *pw = data;

	return p11glue_pin_new(pw, strlen(pw));
}

/* pk12util -o into the temporary directory, read back into imp. */
static bool
export_key(nss_db *db, pg_adopt_item *it, const char *nick, pg_import *imp)
{
	unsigned char rnd[24];
	char pw[49], name[40], *pw_path, *p12 = NULL, *argv[14];
	pg_import_options io = { transport, pw, 0, 0 };
	unsigned char *data = NULL;
	size_t len = 0;
	pg_buf err;
	bool ok = false;
	int fd;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return false;
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(pw + 2 * i, 3, "%02x", rnd[i]);
	pg_memzero(rnd, sizeof(rnd));
	snprintf(name, sizeof(name), "transport-%u", db->n_exports);
	pw_path = pg_adopt_tmpfile(db->a, name, pw, strlen(pw));
	snprintf(name, sizeof(name), "export-%u.p12", db->n_exports++);
	pg_buf_init(&err);
	for (bool refused = false; pw_path != NULL && db_password(db, refused); refused = true) {
		/* Made here first, 0600, whatever pk12util would make. */
		free(p12);
		p12 = pg_adopt_tmpfile(db->a, name, "", 0);
		if (p12 == NULL)
			break;
		argv[0] = "pk12util"; argv[1] = "-o"; argv[2] = p12; argv[3] = "-n";
		argv[4] = (char *)nick; argv[5] = "-d"; argv[6] = db->db; argv[7] = "-w";
		argv[8] = pw_path; argv[9] = "-k"; argv[10] = db->pw_file; argv[11] = NULL;
		pg_buf_clear(&err);
		pg_buf_init(&err);
		ok = pg_adopt_exec(argv, NULL, 0, NULL, &err);
		if (ok || err.data == NULL || (!strstr((char *)err.data, "BAD_PASSWORD") &&
		                               !strstr((char *)err.data, "USER_CANCELLED")))
			break;
		pg_adopt_tmpfile_remove(p12);
	}
	if (ok && (fd = pg_open_regular(p12, true, NULL)) >= 0) {
		data = pg_read_fd(fd, 16 * 1024 * 1024, &len);
		close(fd);
	}
	if (!ok)
		pg_adopt_set(db->a, it, PG_ADOPT_FAILED, "%s", db->pw_failed && err.data &&
		             strstr((char *)err.data, "BAD_PASSWORD") ? "wrong password for the NSS database"
		             : err.data && err.data[0] ? (char *)err.data : "pk12util failed");
	else if (data == NULL || pg_import_parse(data, len, &io, imp) != PG_IMPORT_OK)
		pg_adopt_set(db->a, it, PG_ADOPT_FAILED, "the key pk12util exported cannot be read: %s",
		             imp->error[0] ? imp->error : "no file");
	if (it->why != NULL)
		it->why[strcspn(it->why, "\n")] = 0;
	pg_free_secret(data, len);
	if (p12 != NULL)
		pg_adopt_tmpfile_remove(p12);
	if (pw_path != NULL)
		pg_adopt_tmpfile_remove(pw_path);
	pg_memzero(pw, sizeof(pw));
	free(p12);
	free(pw_path);
	pg_buf_clear(&err);
	return ok && it->state != PG_ADOPT_FAILED;
}

/* A private key with its certificate. */
static void
adopt_key(nss_db *db, const char *nick, X509 *cert, pg_adopt_item *it)
{
	const pg_adopt_key *k = pg_adopt_find_key(db->a, X509_get0_pubkey(cert));
	pg_import imp;

	pg_adopt_remove(it, "its key: certutil -d %s -F -n '%s', once NSS programs use the store "
	                "(p11glue setup --nss)", db->db, nick);
	if (k != NULL && pg_adopt_has_cert(db->a, cert)) {
		pg_adopt_set(db->a, it, PG_ADOPT_THERE, NULL);
		return;
	}
	if (db->a->opts->dry_run) {
		pg_adopt_set(db->a, it, PG_ADOPT_TAKEN, NULL);
		return;
	}
	pg_import_init(&imp);
	if (export_key(db, it, nick, &imp))
		pg_adopt_write(db->a, it, &imp, nick, nick);
	pg_import_clear(&imp);
	if (it->state == PG_ADOPT_FAILED) {
		free(it->remove);
		it->remove = NULL;
	}
}

/* ---------------------------------------------------------------------------
 * Trust flags
 */

static void
add_name(const char **list, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(list[i], name) == 0)
			return;
	list[(*n)++] = name;
}

/*
 * Fills the item's decision from NSS's flags "SSL,S/MIME,JAR/XPI". False
 * when they make none (no trust, no distrust: a certificate NSS only
 * keeps, such as an intermediate it met).
 */
static bool
decide(pg_adopt_item *it, const char *flags)
{
	static const char *const field_purposes[3][2] = {
		{ "server-auth", "client-auth" }, { "email", NULL }, { "code-signing", NULL },
	};
	const char *p = flags;
	size_t n_distrusted = 0;

	for (int f = 0; f < 3; f++) {
		size_t len = strcspn(p, ",");
		bool c = memchr(p, 'C', len) != NULL, t = memchr(p, 'T', len) != NULL;
		bool peer = memchr(p, 'P', len) != NULL, bad = memchr(p, 'p', len) != NULL;

		if (f == 0 && (c || peer))
			add_name(it->purposes, &it->n_purposes, "server-auth");
		if (f == 0 && (t || peer))
			add_name(it->purposes, &it->n_purposes, "client-auth");
		if (f > 0 && (c || peer))
			add_name(it->purposes, &it->n_purposes, field_purposes[f][0]);
		if (bad && !c && !t && !peer) {
			n_distrusted++;
			for (int k = 0; k < 2 && field_purposes[f][k]; k++)
				add_name(it->rejects, &it->n_rejects, field_purposes[f][k]);
		}
		p += len + (p[len] == ',');
	}
	if (it->n_purposes == 0 && it->n_rejects == 0)
		return false;
	it->trust = true;
	if (it->n_purposes == 0) {
		it->distrust = true;
		it->n_rejects = 0;
		if (n_distrusted < 3)
			it->why = strdup("NSS distrusts it for some purposes; p11glue distrusts it for "
			                 "every purpose");
	} else if (it->n_purposes == 4 && it->n_rejects == 0) {
		it->n_purposes = 0;          /* every purpose */
	}
	return true;
}

static void
adopt_trust(nss_db *db, const char *nick, const char *flags, X509 *cert, pg_adopt_item *it)
{
	unsigned char *der = NULL;
	int len = i2d_X509(cert, &der);

	if (len <= 0 || (it->der = pg_memdup0(der, (size_t)len)) == NULL ||
	    (it->label = strdup(nick)) == NULL) {
		pg_adopt_set(db->a, it, PG_ADOPT_FAILED, "out of memory");
	} else {
		it->der_len = (size_t)len;
		if (!decide(it, flags))
			pg_adopt_set(db->a, it, PG_ADOPT_LEFT, "no trust decision to carry over");
	}
	OPENSSL_free(der);
}

/* One line of `certutil -L`: "NICKNAME   FLAGS", the flags the last word. */
static void
adopt_line(nss_db *db, char *line)
{
	char *end = line + strlen(line), *flags;
	char from[1024], *cn;
	pg_adopt_item *it;
	X509 *cert;
	bool user;

	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = 0;
	flags = strrchr(line, ' ');
	if (flags == NULL || flags == line || strchr(flags, ',') == NULL)
		return;
	*flags++ = 0;
	for (end = flags - 1; end > line && (end[-1] == ' ' || end[-1] == '\t'); )
		*--end = 0;
	/* The flags: three fields of NSS's trust letters (not the heading). */
	if (line[0] == 0 || strspn(flags, "pPcCTuwgk,") != strlen(flags) ||
	    strchr(flags, ',') == strrchr(flags, ','))
		return;
	user = strchr(flags, 'u') != NULL;
	/* Certificates NSS only keeps (no flag that decides) say nothing. */
	if (!user && strpbrk(flags, "CTPp") == NULL)
		return;
	cert = cert_of(db, line);
	cn = cert ? cert_cn(cert) : strdup("?");
	snprintf(from, sizeof(from), "%s: %s", db->shown, line);
	it = pg_adopt_add(db->a, "nss", from, user ? "private key and certificate '%s'"
	                  : "certificate '%s' (trust %s)", cn ? cn : "?", flags);
	if (it != NULL && cert == NULL)
		pg_adopt_set(db->a, it, PG_ADOPT_FAILED, "certutil gives no certificate for it");
	else if (it != NULL && user)
		adopt_key(db, line, cert, it);
	else if (it != NULL)
		adopt_trust(db, line, flags, cert, it);
	X509_free(cert);
	free(cn);
}

/* Keys without a certificate: NSS exports none of them. */
static void
orphans(nss_db *db)
{
	const char *args[] = { "-K", "-f", db->pw_file, NULL };
	pg_buf out;
	char from[600];

	pg_buf_init(&out);
	if (db->pw_file != NULL && certutil(db, args, &out, NULL) && !out.failed && out.data != NULL) {
		for (char *l = (char *)out.data; (l = strstr(l, "(orphan)")) != NULL; l += 8) {
			char *start = l, *id;
			pg_adopt_item *it;
			while (start > (char *)out.data && start[-1] != '\n')
				start--;
			id = strstr(start, "> ");
			snprintf(from, sizeof(from), "%s: key %.*s", db->shown,
			         id && id < l ? (int)(l - id - 2) : 0, id && id < l ? id + 2 : "");
			it = pg_adopt_add(db->a, "nss", from, "private key without a certificate");
			if (it != NULL)
				pg_adopt_set(db->a, it, PG_ADOPT_LEFT, "NSS exports a key only with its "
				             "certificate");
		}
	}
	pg_buf_clear(&out);
}

static void
adopt_db(pg_adopt *a, const char *dir)
{
	const char *list[] = { "-L", NULL };
	nss_db db = { a, dir, pg_adopt_pretty(a, dir), NULL, NULL, false, 0 };
	pg_adopt_item *it;
	pg_buf b, out, err;

	pg_buf_init(&b);
	pg_buf_printf(&b, "sql:%s", dir);
	db.db = pg_buf_steal(&b, NULL);
	pg_buf_init(&out);
	pg_buf_init(&err);
	if (db.shown == NULL || db.db == NULL) {
		a->result->failed = true;
	} else if (!has_file(dir, "cert9.db")) {
		if ((it = pg_adopt_add(a, "nss", db.shown, "an NSS database")) != NULL)
			pg_adopt_set(a, it, PG_ADOPT_LEFT, "a legacy database (cert8.db): open it once with a "
			             "current Firefox or Thunderbird, which converts it");
	} else if (!certutil(&db, list, &out, &err) || out.failed) {
		if ((it = pg_adopt_add(a, "nss", db.shown, "an NSS database")) != NULL)
			pg_adopt_set(a, it, PG_ADOPT_FAILED, "certutil -L failed: %.200s",
			             err.data ? (char *)err.data : "");
	} else {
		for (char *l = out.data ? (char *)out.data : ""; *l; ) {
			size_t n = strcspn(l, "\n");
			char c = l[n];
			l[n] = 0;
			adopt_line(&db, l);
			l += n + (c != 0);
		}
		if (!a->opts->dry_run && db_password(&db, false))
			orphans(&db);
	}
	if (db.pw_file != NULL)
		pg_adopt_tmpfile_remove(db.pw_file);
	free(db.pw_file);
	free(db.db);
	free(db.shown);
	pg_buf_clear(&out);
	pg_buf_clear(&err);
}

void
pg_adopt_nss(pg_adopt *a)
{
	nss_dbs d;
	pg_adopt_item *it;

	find_dbs(a, &d);
	if (d.n > 0 && (!pg_adopt_have("certutil") || !pg_adopt_have("pk12util"))) {
		if ((it = pg_adopt_add(a, "nss", "NSS databases", "%zu database%s", d.n,
		                       d.n == 1 ? "" : "s")) != NULL)
			pg_adopt_set(a, it, PG_ADOPT_LEFT, "certutil and pk12util (libnss3-tools) are not "
			             "installed");
		d.n = 0;
	}
	for (size_t i = 0; i < d.n; i++)
		adopt_db(a, d.dirs[i]);
	for (size_t i = 0; i < MAX_DBS; i++)
		free(d.dirs[i]);
}
