/*
 * The files other programs read, kept up to date with the trust
 * decisions (trust-tool.h, pg_trust_compat): a user's here, the
 * system's in compat-debian.c.
 *
 * A user's programs read what the environment `p11glue setup --trust`
 * writes points them to: three files in the user's extracted directory,
 * made from every trust-policy token (the system's decisions and the
 * user's): TLS anchors as a PEM bundle (SSL_CERT_FILE, CURL_CA_BUNDLE,
 * REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS), OpenSSL's hashed directory
 * with the distrusted certificates rejected and the CRLs (SSL_CERT_DIR)
 * and a Java keystore (javax.net.ssl.trustStore). Each is made in a
 * temporary directory beside them and moved into place whole (a
 * directory by an exchange of the two), so a program never reads half.
 */
#define _GNU_SOURCE /* renameat2 */
#include "config.h"

#include "trust-compat.h"
#include "trust-dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * A user's files
 */

static const struct {
	const char *name, *format;
	int filter;
	bool tls;                    /* for server authentication only */
} user_files[] = {
	{ PG_TRUST_EXTRACTED_BUNDLE, "pem-bundle", PG_F_ANCHORS, true },
	{ PG_TRUST_EXTRACTED_DIR, "openssl-directory", PG_F_POLICY, false },
	{ PG_TRUST_EXTRACTED_JAVA, "java-cacerts", PG_F_ANCHORS, true },
};

/* Moves what tmp/name holds to dir/name: files by a rename, a directory
 * by exchanging the two (the old one is left in tmp). */
static bool
move_into_place(const char *tmp, const char *dir, const char *name)
{
	char from[4200], to[4200];
	struct stat st;

	if (snprintf(from, sizeof(from), "%s/%s", tmp, name) >= (int)sizeof(from) ||
	    snprintf(to, sizeof(to), "%s/%s", dir, name) >= (int)sizeof(to)) {
		pg_message("%s: the path is too long", dir);
		return false;
	}
	/* A directory that moves to another one is written (its ".."): extract
	 * makes it read-only, the owner keeps the right to write it here. */
	if (lstat(from, &st) == 0 && S_ISDIR(st.st_mode))
		chmod(from, 0755);
	if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode))
		chmod(to, 0755);
	if (lstat(from, &st) == 0 && S_ISDIR(st.st_mode) && lstat(to, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0)
			return true;
		/* No exchange here: the old one goes first (a short gap). */
		if (errno != EINVAL && errno != ENOSYS)
			goto fail;
		pg_remove_tree(to);
	} else if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode)) {
		pg_remove_tree(to);
	}
	if (rename(from, to) == 0)
		return true;
fail:
	pg_message("%s: %s", to, strerror(errno));
	return false;
}

/* Do files a and b hold the same bytes? */
static bool
same_file(const char *a, const char *b)
{
	size_t la = 0, lb = 0;
	char *da = pg_trust_read_file(a, &la), *db = pg_trust_read_file(b, &lb);
	bool same = da && db && la == lb && memcmp(da, db, la) == 0;

	free(da);
	free(db);
	return same;
}

/* Do directories a and b hold the same names, links to the same
 * targets and files with the same bytes (the extracted kind: flat)? */
static bool
same_tree(const char *a, const char *b)
{
	struct dirent **na = NULL, **nb = NULL;
	int ca = scandir(a, &na, NULL, alphasort), cb = scandir(b, &nb, NULL, alphasort);
	bool same = ca >= 0 && ca == cb;

	for (int i = 0; same && i < ca; i++) {
		char pa[4400], pb[4400], ta[4400], tb[4400];
		struct stat sa, sb;
		ssize_t n, m;
		same = strcmp(na[i]->d_name, nb[i]->d_name) == 0;
		if (!same || strcmp(na[i]->d_name, ".") == 0 || strcmp(na[i]->d_name, "..") == 0)
			continue;
		if (snprintf(pa, sizeof(pa), "%s/%s", a, na[i]->d_name) >= (int)sizeof(pa) ||
		    snprintf(pb, sizeof(pb), "%s/%s", b, nb[i]->d_name) >= (int)sizeof(pb) ||
		    lstat(pa, &sa) != 0 || lstat(pb, &sb) != 0 || (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
			same = false;
		} else if (S_ISLNK(sa.st_mode)) {
			n = readlink(pa, ta, sizeof(ta));
			m = readlink(pb, tb, sizeof(tb));
			same = n >= 0 && n == m && memcmp(ta, tb, (size_t)n) == 0;
		} else {
			same = S_ISREG(sa.st_mode) && same_file(pa, pb);
		}
	}
	for (int i = 0; i < ca; i++)
		free(na[i]);
	for (int i = 0; i < cb; i++)
		free(nb[i]);
	free(na);
	free(nb);
	return same;
}

/* Is what tmp holds what dir holds already? The keystore is made from
 * the same anchors as the bundle (only its dates differ). */
static bool
unchanged(const char *tmp, const char *dir)
{
	char a[4400], b[4400];
	struct stat st;

	snprintf(b, sizeof(b), "%s/%s", dir, PG_TRUST_EXTRACTED_JAVA);
	if (stat(b, &st) != 0)
		return false;
	snprintf(a, sizeof(a), "%s/%s", tmp, PG_TRUST_EXTRACTED_BUNDLE);
	snprintf(b, sizeof(b), "%s/%s", dir, PG_TRUST_EXTRACTED_BUNDLE);
	if (!same_file(a, b))
		return false;
	snprintf(a, sizeof(a), "%s/%s", tmp, PG_TRUST_EXTRACTED_DIR);
	snprintf(b, sizeof(b), "%s/%s", dir, PG_TRUST_EXTRACTED_DIR);
	return same_tree(a, b);
}

static int
compat_user(unsigned flags, pg_compat_report *r)
{
	char *dir = pg_trust_user_path(PG_TRUST_EXTRACTED);
	char tmp[4200], path[4300];
	struct stat st;
	pg_trust_set set;
	int rv = PG_EXIT_OK;

	if (dir == NULL) {
		pg_compat_note(r, "no home directory: a user's files cannot be kept");
		return PG_EXIT_FAIL;
	}
	if (flags & PG_COMPAT_UNDO) {
		if (lstat(dir, &st) == 0) {
			pg_remove_tree(dir);
			pg_compat_changed(r, '-', dir);
		}
		goto out;
	}
	if (lstat(dir, &st) != 0 && !(flags & PG_COMPAT_MAKE)) {
		pg_compat_note(r, "programs that read certificate files (OpenSSL, curl, Python, Java) "
		               "do not see this user's trust decisions: 'p11glue setup --trust' "
		               "points them to files that every trust command keeps up to date");
		goto out;
	}
	/* Its missing parents too, 0700: it is under the home. */
	if (!pg_trust_make_dirs(dir, 0700, false) || (rv = pg_trust_load(&set)) != PG_EXIT_OK) {
		rv = PG_EXIT_FAIL;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s/.new-XXXXXX", dir);
	if (mkdtemp(tmp) == NULL) {
		pg_message("%s: %s", dir, strerror(errno));
		pg_trust_clear(&set);
		rv = PG_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(user_files) && rv == PG_EXIT_OK; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, user_files[i].name);
		rv = pg_trust_extract(&set, user_files[i].format, user_files[i].filter, NULL,
		                      user_files[i].tls ? pg_trust_purpose_oid("server-auth") : NULL,
		                      path, false, false);
	}
	pg_trust_clear(&set);
	if (rv == PG_EXIT_OK && unchanged(tmp, dir)) {
		pg_remove_tree(tmp);
		r->updated = true;
		goto out;
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(user_files) && rv == PG_EXIT_OK; i++) {
		if (!move_into_place(tmp, dir, user_files[i].name)) {
			rv = PG_EXIT_FAIL;
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, user_files[i].name);
		pg_compat_changed(r, '+', path);
	}
	pg_remove_tree(tmp);
	r->updated = rv == PG_EXIT_OK;
out:
	free(dir);
	return rv;
}

int
pg_trust_compat(bool system, unsigned flags, pg_compat_report *r)
{
	r->level = system ? "system" : "user";
	return system ? pg_compat_system(flags, r) : compat_user(flags, r);
}
