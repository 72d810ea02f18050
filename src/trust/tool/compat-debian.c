/*
 * The system's files on Debian, kept by update-ca-certificates: the
 * bundle /etc/ssl/certs/ca-certificates.crt (OpenSSL's default file,
 * curl's, Python's, GnuTLS's), the hashed directory /etc/ssl/certs
 * (OpenSSL's default directory) and, through its hook, Java's
 * /etc/ssl/certs/java/cacerts. p11glue does not write them: it changes
 * what they are built from, then runs update-ca-certificates, so that
 * every later run (a package upgrade's too) builds them the same way:
 *
 * - the system's anchors (of the trust tokens that are not these files
 *   or their inputs) are PEM files in /usr/local/share/ca-certificates/
 *   p11glue/, which p11glue owns whole;
 * - a distrusted certificate that /etc/ca-certificates.conf selects from
 *   /usr/share/ca-certificates is deselected there ("!NAME", as
 *   dpkg-reconfigure ca-certificates does and its upgrades keep), and the
 *   names p11glue deselected are listed in a comment block of that file,
 *   so that lifting the distrust selects them again;
 * - update-ca-certificates tells its hooks (Java's) only what a "!" line
 *   removes: for an anchor p11glue takes away, the hooks are told here,
 *   in their own protocol ("-/etc/ssl/certs/NAME.pem" on their input),
 *   and the hashed directory is rehashed.
 *
 * p11glue's own hook runs this again after every run of
 * update-ca-certificates (PG_COMPAT_HOOK): a certificate a package adds
 * under a new name, or a "!" line someone removed, is put right, with
 * one more run of update-ca-certificates.
 */
#include "config.h"

#include "trust-compat.h"
#include "trust-dirs.h"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUR_DIR PG_CA_LOCAL_DIR "/p11glue"
#define BLOCK_BEGIN "# >>> p11glue trust: names deselected for p11glue's distrust, " \
                    "selected again when it is lifted"
#define BLOCK_END "# <<< p11glue trust"

static bool
under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return strncmp(path, dir, len) == 0 && (path[len] == 0 || path[len] == '/');
}

/* The system's tokens: all but the user's directory. */
static bool
system_token(const char *location, void *data)
{
	return !pg_trust_location_is(location, data);
}

/* The DER of the first certificate of a PEM (or DER) file; free(). */
static unsigned char *
file_cert(const char *path, size_t *len)
{
	size_t n = 0;
	char *text = pg_trust_read_file(path, &n);
	BIO *b = text ? BIO_new_mem_buf(text, (int)n) : NULL;
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	unsigned char *der = NULL;
	int dl;

	if (x == NULL && text != NULL) {
		const unsigned char *p = (const unsigned char *)text;
		x = d2i_X509(NULL, &p, (long)n);
	}
	if (x != NULL && (dl = i2d_X509(x, &der)) > 0)
		*len = (size_t)dl;
	X509_free(x);
	BIO_free(b);
	free(text);
	return der;
}

static bool
is_distrusted(const pg_trust_set *set, const unsigned char *der, size_t len)
{
	for (size_t i = 0; der && i < set->n_certs; i++)
		if (set->certs[i].distrusted && set->certs[i].der_len == len &&
		    memcmp(set->certs[i].der, der, len) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------------
 * Anchors: /usr/local/share/ca-certificates/p11glue
 */

/* A file name from a label: letters, digits and '-', else '_'. */
static void
anchor_name(const char *label, char *out, size_t size, int n)
{
	char base[64];
	size_t o = 0;

	for (const char *p = label; *p && o + 1 < sizeof(base) && o < 48; p++) {
		unsigned char c = (unsigned char)*p;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9') || c == '-';
		base[o++] = keep ? (char)c : '_';
	}
	base[o] = 0;
	if (n == 0)
		snprintf(out, size, "p11glue-%s.crt", o ? base : "anchor");
	else
		snprintf(out, size, "p11glue-%s-%d.crt", o ? base : "anchor", n);
}

static char *
pem_of(const unsigned char *der, size_t len, size_t *out_len)
{
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (x && b && PEM_write_bio_X509(b, x) == 1 && (n = BIO_get_mem_data(b, &data)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = 0;
		*out_len = (size_t)n;
	}
	X509_free(x);
	BIO_free(b);
	return out;
}

/* Is the anchor of certs[i] one of the system's own (from a token that
 * is not these files or their inputs), for TLS? */
static bool
exported(const pg_trust_set *set, const pg_tcert *c)
{
	uint32_t own = 0;

	for (size_t i = 0; i < set->n_locations && i < 32; i++)
		if (!under(set->locations[i], PG_CA_CERTS_DIR) &&
		    !under(set->locations[i], PG_CA_SHARE_DIR) &&
		    !under(set->locations[i], PG_CA_LOCAL_DIR))
			own |= (uint32_t)1 << i;
	return (c->trusted_in & own) != 0 &&
	       pg_trust_selected(c, PG_F_ANCHORS, NULL, pg_trust_purpose_oid("server-auth"));
}

/* Makes OUR_DIR hold exactly the anchors; *removed gets the .pem names
 * update-ca-certificates gave the files that went, one a line. */
static bool
sync_anchors(const pg_trust_set *set, bool undo, pg_compat_report *r, pg_buf *removed,
             bool *changed)
{
	char name[128], path[4300];
	pg_buf keep;
	DIR *d;
	struct dirent *e;
	bool ok = true;

	pg_buf_init(&keep);
	pg_buf_add_byte(&keep, '\n');
	for (size_t i = 0; !undo && ok && i < set->n_certs; i++) {
		const pg_tcert *c = &set->certs[i];
		size_t len = 0, old_len = 0;
		char *pem, *old;
		if (!exported(set, c))
			continue;
		for (int n = 0;; n++) {
			char probe[140];
			anchor_name(c->label, name, sizeof(name), n);
			snprintf(probe, sizeof(probe), "\n%s\n", name);
			if (keep.data == NULL || strstr((char *)keep.data, probe) == NULL)
				break;
		}
		pg_buf_printf(&keep, "%s\n", name);
		if ((pem = pem_of(c->der, c->der_len, &len)) == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", OUR_DIR, name);
		old = pg_trust_read_file(path, &old_len);
		if (old == NULL || old_len != len || memcmp(old, pem, len) != 0) {
			if (mkdir(OUR_DIR, 0755) == 0)
				chmod(OUR_DIR, 0755);
			ok = pg_replace_file(path, pem, len, 0644);
			if (ok) {
				pg_compat_changed(r, '+', path);
				*changed = true;
			}
		}
		free(old);
		free(pem);
	}
	if ((d = opendir(OUR_DIR)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			char probe[300];
			size_t len = strlen(e->d_name);
			if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 4, ".crt") != 0)
				continue;
			snprintf(probe, sizeof(probe), "\n%s\n", e->d_name);
			if (keep.data && strstr((char *)keep.data, probe) != NULL)
				continue;
			snprintf(path, sizeof(path), "%s/%s", OUR_DIR, e->d_name);
			if (unlink(path) == 0) {
				pg_compat_changed(r, '-', path);
				pg_buf_printf(removed, "%.*s.pem\n", (int)len - 4, e->d_name);
				*changed = true;
			}
		}
		closedir(d);
		if (undo || keep.len <= 1)
			rmdir(OUR_DIR);
	}
	pg_buf_clear(&keep);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Distrust: "!" lines of /etc/ca-certificates.conf
 */

typedef struct {
	pg_buf out;                  /* the new text */
	pg_buf ours;                 /* names p11glue deselected, "\nNAME\n" each */
	bool changed;
} conf_edit;

static bool
listed(const pg_buf *b, const char *name)
{
	char probe[600];

	snprintf(probe, sizeof(probe), "\n%s\n", name);
	return b->data && strstr((const char *)b->data, probe) != NULL;
}

/* The names of p11glue's block, as "\nNAME\n..." in ours. */
static void
read_block(const char *text, pg_buf *ours)
{
	const char *p = strstr(text, BLOCK_BEGIN);

	pg_buf_add_byte(ours, '\n');
	if (p == NULL)
		return;
	p = strchr(p, '\n');
	while (p && *++p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (strncmp(p, BLOCK_END, strlen(BLOCK_END)) == 0)
			break;
		if (len > 2 && p[0] == '#' && p[1] == ' ')
			pg_buf_printf(ours, "%.*s\n", (int)len - 2, p + 2);
		p = nl;
	}
}

/* A selected or deselected line of the file: its new form. */
static void
edit_line(conf_edit *c, const pg_trust_set *set, const char *line, bool undo, pg_buf *mine,
          pg_compat_report *r)
{
	bool bang = line[0] == '!';
	const char *name = bang ? line + 1 : line;
	char path[4300];
	unsigned char *der;
	size_t len = 0;
	bool distrusted;

	snprintf(path, sizeof(path), "%s/%s", PG_CA_SHARE_DIR, name);
	der = file_cert(path, &len);
	distrusted = !undo && is_distrusted(set, der, len);
	free(der);
	if (!bang && distrusted) {
		pg_buf_printf(&c->out, "!%s\n", name);
		pg_buf_printf(mine, "%s\n", name);
		c->changed = true;
		pg_compat_note(r, "%s deselected in " PG_CA_CONF ": distrusted", name);
	} else if (bang && listed(&c->ours, name) && !distrusted) {
		pg_buf_printf(&c->out, "%s\n", name);
		c->changed = true;
		pg_compat_note(r, "%s selected again in " PG_CA_CONF, name);
	} else {
		pg_buf_printf(&c->out, "%s\n", line);
		if (bang && listed(&c->ours, name))
			pg_buf_printf(mine, "%s\n", name);
	}
}

static bool
sync_conf(const pg_trust_set *set, bool undo, pg_compat_report *r, bool *changed)
{
	size_t len = 0, n = 0;
	char *text = pg_trust_read_file(PG_CA_CONF, &len), *data = NULL;
	conf_edit c = { .changed = false };
	pg_buf mine;
	struct stat st;
	bool in_block = false, ok = true, any = false;

	if (text == NULL || stat(PG_CA_CONF, &st) != 0) {
		free(text);
		return true;
	}
	for (size_t i = 0; i < set->n_certs && !any; i++)
		any = set->certs[i].distrusted;
	pg_buf_init(&c.out);
	pg_buf_init(&c.ours);
	pg_buf_init(&mine);
	read_block(text, &c.ours);
	if (!any && c.ours.len <= 1)
		goto out;
	for (char *line = text, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = 0;
		if (strncmp(line, BLOCK_BEGIN, strlen(BLOCK_BEGIN)) == 0)
			in_block = true;
		if (in_block) {
			in_block = strncmp(line, BLOCK_END, strlen(BLOCK_END)) != 0;
			continue;
		}
		if (line[0] == '#' || line[strspn(line, " \t")] == 0)
			pg_buf_printf(&c.out, "%s\n", line);
		else
			edit_line(&c, set, line, undo, &mine, r);
		if (nl == NULL)
			break;
	}
	/* The block at the end (the package's rewrite of the file keeps
	 * comment lines in place). */
	if (mine.len > 0) {
		pg_buf_printf(&c.out, "%s\n", BLOCK_BEGIN);
		for (char *p = (char *)mine.data, *nl; p && *p; p = nl + 1) {
			nl = strchr(p, '\n');
			pg_buf_printf(&c.out, "# %.*s\n", (int)(nl - p), p);
		}
		pg_buf_printf(&c.out, "%s\n", BLOCK_END);
	}
	data = pg_buf_steal(&c.out, &n);
	/* text was cut into lines: compare with the file as it is. */
	free(text);
	text = pg_trust_read_file(PG_CA_CONF, &len);
	if (data != NULL && text != NULL && (n != len || memcmp(data, text, n) != 0)) {
		ok = pg_replace_file(PG_CA_CONF, data, n, st.st_mode & 07777);
		if (ok) {
			pg_compat_changed(r, '~', PG_CA_CONF);
			*changed = true;
		}
	}
	free(data);
out:
	pg_buf_clear(&c.out);
	pg_buf_clear(&c.ours);
	pg_buf_clear(&mine);
	free(text);
	return ok;
}

/* Distrusted certificates that the administrator's own files in
 * /usr/local/share/ca-certificates anchor: said, left alone. */
static void
local_conflicts(const pg_trust_set *set, const char *dir, int depth, pg_compat_report *r)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4300];

	while (d && (e = readdir(d)) != NULL) {
		struct stat st;
		size_t len = strlen(e->d_name), n = 0;
		unsigned char *der;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || strcmp(path, OUR_DIR) == 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* Followed as update-ca-certificates does (find -L), not
			 * forever round a loop of links. */
			if (depth < 8)
				local_conflicts(set, path, depth + 1, r);
			continue;
		}
		if (len < 5 || strcmp(e->d_name + len - 4, ".crt") != 0)
			continue;
		der = file_cert(path, &n);
		if (is_distrusted(set, der, n))
			pg_compat_note(r, "%s anchors a distrusted certificate, and it is not p11glue's to "
			               "remove: OpenSSL, GnuTLS, curl, Python and Java keep trusting it "
			               "until it is removed", path);
		free(der);
	}
	if (d)
		closedir(d);
}

/* ---------------------------------------------------------------------------
 * Running update-ca-certificates
 */

/* Tells the hooks (all but p11glue's) about the files that went, and
 * rehashes the directory their links were in. */
static void
tell_hooks(const pg_buf *removed)
{
	pg_buf input;
	char *link_list = NULL;
	struct dirent **names = NULL;
	int n;

	if (removed->len == 0)
		return;
	pg_buf_init(&input);
	link_list = strdup((const char *)removed->data);
	for (char *save = NULL, *p = link_list ? strtok_r(link_list, "\n", &save) : NULL; p;
	     p = strtok_r(NULL, "\n", &save)) {
		char path[4300];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", PG_CA_CERTS_DIR, p);
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(path);
		pg_buf_printf(&input, "-%s\n", path);
	}
	free(link_list);
	{
		char *rehash[] = { "/usr/bin/openssl", "rehash", PG_CA_CERTS_DIR, NULL };
		if (pg_compat_run(rehash, NULL, true) != 0)
			pg_message("openssl rehash " PG_CA_CERTS_DIR " failed");
	}
	/* In run-parts' order, as update-ca-certificates runs them. */
	n = scandir(PG_CA_HOOKS_DIR, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char hook[4300];
		const char *nm = names[i]->d_name;
		bool valid = nm[0] != '.' && strspn(nm, "abcdefghijklmnopqrstuvwxyz"
		                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
		                             strlen(nm);
		snprintf(hook, sizeof(hook), "%s/%s", PG_CA_HOOKS_DIR, nm);
		if (valid && strcmp(nm, PG_CA_HOOK) != 0 && access(hook, X_OK) == 0) {
			char *argv[] = { hook, NULL };
			if (pg_compat_run(argv, input.data ? (char *)input.data : "", false) != 0)
				pg_message("%s failed", hook);
		}
		free(names[i]);
	}
	free(names);
	pg_buf_clear(&input);
}

int
pg_compat_system(unsigned flags, pg_compat_report *r)
{
	bool undo = (flags & PG_COMPAT_UNDO) != 0, changed = false, ok;
	char *user = pg_trust_user_dir();
	pg_trust_set set;
	pg_buf removed;
	int rv;

	/* Run by the hook of a run p11glue started: that one is enough. */
	if ((flags & PG_COMPAT_HOOK) && getenv("P11GLUE_COMPAT_NESTED") != NULL) {
		free(user);
		r->updated = true;
		return PG_EXIT_OK;
	}
	if (access(PG_CA_UPDATE, X_OK) != 0 || access(PG_CA_CONF, F_OK) != 0) {
		pg_compat_note(r, PG_CA_UPDATE " is not installed: the files OpenSSL, GnuTLS, curl, "
		               "Python and Java read are not updated");
		free(user);
		return PG_EXIT_OK;
	}
	rv = pg_trust_load_where(&set, system_token, user ? user : (char *)"");
	free(user);
	if (rv != PG_EXIT_OK)
		return rv;
	pg_buf_init(&removed);
	ok = sync_anchors(&set, undo, r, &removed, &changed) && sync_conf(&set, undo, r, &changed);
	if (!undo)
		local_conflicts(&set, PG_CA_LOCAL_DIR, 0, r);
	pg_trust_clear(&set);
	if (ok && changed) {
		char *argv[] = { PG_CA_UPDATE, NULL };
		int status = pg_compat_run(argv, NULL, false);
		if (status != 0) {
			pg_message(PG_CA_UPDATE " failed (status %d)", status);
			ok = false;
		}
		tell_hooks(&removed);
		pg_compat_changed(r, '~', PG_CA_BUNDLE);
	}
	pg_buf_clear(&removed);
	r->updated = ok;
	return ok ? PG_EXIT_OK : PG_EXIT_FAIL;
}
