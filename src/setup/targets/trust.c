/*
 * The `setup --trust` target: the trust decisions (`p11glue trust`)
 * reach the programs that read certificate files, not only those that
 * read PKCS#11 (NSS through --nss, GnuTLS through the registry).
 *
 * For a user, each library's own per-user switch points it to the files
 * every trust command keeps in $XDG_DATA_HOME/p11glue/extracted (the
 * system's decisions and the user's): a block in
 * ~/.config/environment.d/60-p11glue-trust.conf (a systemd user session,
 * hence the desktop) and one in ~/.profile (login shells) set
 * SSL_CERT_FILE and SSL_CERT_DIR (OpenSSL's defaults: openssl, Python's
 * ssl, Go), CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS and
 * JAVA_TOOL_OPTIONS (javax.net.ssl.trustStore); a block in ~/.curlrc
 * sets curl's cacert and capath, since curl keeps its built-in directory
 * /etc/ssl/certs whatever the environment says. What no per-user switch
 * reaches is said (notes, status): GnuTLS's default trust file, libcurl
 * in other programs, Node's built-in list for distrust.
 *
 * For the system (--system), Debian's update-ca-certificates builds the
 * files (/etc/ssl/certs, its bundle, Java's cacerts): a hook of
 * p11glue's in /etc/ca-certificates/update.d applies p11glue's anchors
 * and distrust again after every run of it (src/trust/tool/compat-debian.c).
 *
 * The files are made (env->trust_compat) before the lines that point to
 * them are written, and taken away after them with --undo. The trust
 * decisions themselves are never touched.
 */
#define _GNU_SOURCE /* vasprintf */
#include "config.h"

#include "setup.h"
#include "targets.h"
#include "trust-dirs.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TARGET "trust"
#define HOOK PG_CA_HOOKS_DIR "/" PG_CA_HOOK
#define SHEBANG "#!/bin/sh\n"

/* Said by setup and status: what a user's switches cannot reach. */
static const char *const unreachable[] = {
	"GnuTLS's default trust file " PG_CA_BUNDLE " (gnutls-cli and other GnuTLS "
	"programs that use the system trust): no per-user switch; only 'p11glue trust' "
	"as root (the system's decisions) reaches it",
	"libcurl in programs other than curl (git ...): the bundle and directory built "
	"into libcurl, the system's",
	"Node.js's built-in list: NODE_EXTRA_CA_CERTS adds anchors, distrust does not "
	"reach it",
	"programs with a bundle of their own (Python's certifi outside requests, "
	"browsers' built-in lists): not reached; NSS (Firefox, Chromium) reads the "
	"decisions through PKCS#11 after 'p11glue setup --nss'",
};

/* ---------------------------------------------------------------------------
 * Paths
 */

typedef struct {
	char *extracted;             /* the user's extracted directory */
	char *env_file, *profile, *curlrc;
	char *bundle, *dir, *java;
} user_paths;

static void
paths_clear(user_paths *u)
{
	free(u->extracted);
	free(u->env_file);
	free(u->profile);
	free(u->curlrc);
	free(u->bundle);
	free(u->dir);
	free(u->java);
	memset(u, 0, sizeof(*u));
}

/* $CURL_HOME/.curlrc, else an existing $XDG_CONFIG_HOME/.curlrc, else
 * ~/.curlrc: the first curl reads. */
static char *
curlrc_path(const char *home)
{
	const char *dir = getenv("CURL_HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	char *path;

	if (dir != NULL && dir[0] == '/')
		return pg_setup_join(dir, ".curlrc");
	if (xdg != NULL && xdg[0] == '/' && (path = pg_setup_join(xdg, ".curlrc")) != NULL) {
		if (access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return pg_setup_join(home, ".curlrc");
}

static bool
user_paths_init(user_paths *u, pg_setup_plan *plan)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	char *home = pg_setup_home(), *conf;

	memset(u, 0, sizeof(*u));
	if (home == NULL) {
		pg_setup_problem(plan, "no home directory: set HOME");
		return false;
	}
	conf = xdg != NULL && xdg[0] == '/' ? strdup(xdg) : pg_setup_join(home, ".config");
	u->extracted = pg_trust_user_path(PG_TRUST_EXTRACTED);
	u->env_file = conf ? pg_setup_join(conf, "environment.d/60-p11glue-trust.conf") : NULL;
	u->profile = pg_setup_join(home, ".profile");
	u->curlrc = curlrc_path(home);
	if (u->extracted != NULL) {
		u->bundle = pg_setup_join(u->extracted, PG_TRUST_EXTRACTED_BUNDLE);
		u->dir = pg_setup_join(u->extracted, PG_TRUST_EXTRACTED_DIR);
		u->java = pg_setup_join(u->extracted, PG_TRUST_EXTRACTED_JAVA);
	}
	free(conf);
	free(home);
	if (u->env_file && u->profile && u->curlrc && u->bundle && u->dir && u->java)
		return true;
	pg_setup_problem(plan, "out of memory");
	return false;
}

/* Characters every file format here takes without quoting. */
static bool
plain_path(const char *path)
{
	return strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                    "/._+-@,") == strlen(path);
}

/* ---------------------------------------------------------------------------
 * A user's files
 */

typedef struct {
	char *lines[12];
	size_t n;
} line_list;

static void
lines_clear(line_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->lines[i]);
	l->n = 0;
}

static bool PG_PRINTF(2, 3)
add(line_list *l, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (l->n == PG_N_ELEMENTS(l->lines))
		return false;
	va_start(ap, fmt);
	len = vasprintf(&l->lines[l->n], fmt, ap);
	va_end(ap);
	if (len < 0)
		return false;
	l->n++;
	return true;
}

/* Plans one file's block: read it, then its lines (or its undoing). */
static void
plan_file(const pg_setup_env *env, bool undo, pg_setup_plan *p, const char *path,
          const line_list *l)
{
	char *text = NULL;
	bool exists;
	mode_t mode;

	if (pg_setup_plan_start(env, undo, p, path, &text, &exists, &mode) &&
	    !pg_setup_plan_block(p, path, text, exists, mode, (const char *const *)l->lines, l->n))
		pg_setup_problem(p, "out of memory");
	free(text);
}

static bool
plan_user(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	user_paths u;
	line_list env_d = { .n = 0 }, profile = { .n = 0 }, curl = { .n = 0 };
	bool ok;

	if (!user_paths_init(&u, p))
		goto out;
	if (!undo && !plain_path(u.extracted)) {
		pg_setup_problem(p, "%s has characters that these files would need quoted: set "
		                 "XDG_DATA_HOME to a plain path", u.extracted);
		goto out;
	}
	ok = add(&env_d, "SSL_CERT_FILE=%s", u.bundle) && add(&env_d, "SSL_CERT_DIR=%s", u.dir) &&
	     add(&env_d, "CURL_CA_BUNDLE=%s", u.bundle) &&
	     add(&env_d, "REQUESTS_CA_BUNDLE=%s", u.bundle) &&
	     add(&env_d, "NODE_EXTRA_CA_CERTS=%s", u.bundle) &&
	     add(&env_d, "JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=%s ${JAVA_TOOL_OPTIONS}",
	         u.java);
	ok = ok && add(&profile, "export SSL_CERT_FILE='%s' SSL_CERT_DIR='%s'", u.bundle, u.dir) &&
	     add(&profile, "export CURL_CA_BUNDLE='%s' REQUESTS_CA_BUNDLE='%s'", u.bundle, u.bundle) &&
	     add(&profile, "export NODE_EXTRA_CA_CERTS='%s'", u.bundle) &&
	     add(&profile, "case \" ${JAVA_TOOL_OPTIONS-} \" in *\" -Djavax.net.ssl.trustStore=\"*) ;;") &&
	     add(&profile, "*) export JAVA_TOOL_OPTIONS=\"-Djavax.net.ssl.trustStore=%s "
	         "${JAVA_TOOL_OPTIONS-}\" ;;", u.java) &&
	     add(&profile, "esac");
	ok = ok && add(&curl, "cacert = \"%s\"", u.bundle) && add(&curl, "capath = \"%s\"", u.dir);
	if (!ok) {
		pg_setup_problem(p, "out of memory");
		goto out;
	}
	plan_file(env, undo, p, u.env_file, &env_d);
	plan_file(env, undo, p, u.profile, &profile);
	plan_file(env, undo, p, u.curlrc, &curl);
	if (undo || p->problems.len > 0)
		goto out;
	pg_setup_note(p, "new sessions and login shells get these variables; in this one: . ~/.profile");
	{
		char *home = pg_setup_home();
		char *bp = home ? pg_setup_join(home, ".bash_profile") : NULL;
		char *bl = home ? pg_setup_join(home, ".bash_login") : NULL;
		if ((bp && access(bp, F_OK) == 0) || (bl && access(bl, F_OK) == 0))
			pg_setup_note(p, "bash reads %s instead of ~/.profile: source ~/.profile from it",
			              bp && access(bp, F_OK) == 0 ? bp : bl);
		free(home);
		free(bp);
		free(bl);
	}
	pg_setup_note(p, "Java prints \"Picked up JAVA_TOOL_OPTIONS\" when it starts");
	for (size_t i = 0; i < PG_N_ELEMENTS(unreachable); i++)
		pg_setup_note(p, "not reached per user: %s", unreachable[i]);
out:
	lines_clear(&env_d);
	lines_clear(&profile);
	lines_clear(&curl);
	paths_clear(&u);
	return true;
}

/* ---------------------------------------------------------------------------
 * The system: update-ca-certificates' hook
 */

static bool
plan_system(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	char *text = NULL, self[PATH_MAX], line[PATH_MAX + 64];
	const char *lines[3] = {
		"# update-ca-certificates runs this after it rebuilt /etc/ssl/certs: p11glue's",
		"# anchors and distrust ('p11glue trust') are applied to it again.",
		line,
	};
	bool exists;
	mode_t mode;
	ssize_t len;

	(void)env;
	if (access(PG_CA_UPDATE, X_OK) != 0) {
		pg_setup_problem(p, PG_CA_UPDATE " is not installed (Debian's ca-certificates): "
		                 "nothing builds the files OpenSSL, GnuTLS and Java read");
		return true;
	}
	if (!pg_setup_read(p, HOOK, &text, &exists, &mode))
		return true;
	if (exists && !pg_setup_has_block(text, TARGET)) {
		pg_setup_problem(p, "%s is not p11glue's: move it away, then run this again", HOOK);
	} else if (undo) {
		if (!pg_setup_plan_unblock(p, HOOK, text, mode))
			pg_setup_problem(p, "out of memory");
		/* Nothing but the interpreter line left: the file goes. */
		else if (p->n > 0 && p->edits[p->n - 1].new_text != NULL &&
		         strcmp(p->edits[p->n - 1].new_text, SHEBANG) == 0) {
			free(p->edits[p->n - 1].new_text);
			p->edits[p->n - 1].new_text = NULL;
		}
	} else {
		/* This program, from where it runs (a build tree's too). */
		len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[len > 0 ? len : 0] = 0;
		snprintf(line, sizeof(line), "exec %s trust extract-compat --hook >/dev/null",
		         len > 0 ? self : P11GLUE_BINDIR "/p11glue");
		if (!pg_setup_plan_block(p, HOOK, exists ? text : SHEBANG, exists, 0755, lines, 3))
			pg_setup_problem(p, "out of memory");
		pg_setup_note(p, "decisions of 'p11glue trust' as root (in %s) now reach "
		              "/etc/ssl/certs, its bundle and Java's cacerts, also after a later "
		              "run of update-ca-certificates", pg_trust_system_dir());
	}
	free(text);
	return true;
}

bool
pg_setup_trust_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	/* The files are made (or taken away) every time, edits or none. */
	p->act = true;
	return env->system ? plan_system(env, undo, p) : plan_user(env, undo, p);
}

/* The files first, then the lines pointing to them; --undo the other way. */
bool
pg_setup_trust_apply(const pg_setup_env *env, const pg_setup_plan *plan)
{
	if (!env->undo && env->trust_compat != NULL && !env->trust_compat(env->system, false))
		return false;
	if (!pg_setup_apply_edits(env, plan))
		return false;
	return !env->undo || env->trust_compat == NULL || env->trust_compat(env->system, true);
}

/* ---------------------------------------------------------------------------
 * Status
 */

static size_t
block_fact(pg_setup_status *st, const char *key, const char *path)
{
	pg_setup_plan scratch;
	char *text = NULL, value[PATH_MAX + 64];
	bool exists, has;
	mode_t mode;

	pg_setup_plan_init(&scratch, TARGET);
	pg_setup_read(&scratch, path, &text, &exists, &mode);
	has = pg_setup_has_block(text, TARGET);
	snprintf(value, sizeof(value), "%s (%s)", path, has ? "p11glue's lines" : "no p11glue lines");
	pg_setup_fact(st, key, value);
	free(text);
	pg_setup_plan_clear(&scratch);
	return has;
}

void
pg_setup_trust_status(const pg_setup_env *env, pg_setup_status *st)
{
	pg_setup_plan scratch;
	user_paths u;
	struct stat sb;
	size_t n = 0;

	st->state = "not configured";
	if (env->system) {
		n = block_fact(st, "hook", HOOK);
		pg_setup_fact(st, "decisions", pg_trust_system_dir());
		pg_setup_fact(st, "update-ca-certificates",
		              access(PG_CA_UPDATE, X_OK) == 0 ? PG_CA_UPDATE : "not installed");
		st->state = n ? "configured" : "not configured";
		return;
	}
	pg_setup_plan_init(&scratch, TARGET);
	if (user_paths_init(&u, &scratch)) {
		n += block_fact(st, "environment.d", u.env_file);
		n += block_fact(st, "profile", u.profile);
		n += block_fact(st, "curlrc", u.curlrc);
		pg_setup_fact(st, "files", stat(u.bundle, &sb) == 0 ? u.extracted
		                                                   : "(not made yet: run setup --trust)");
		st->state = n == 3 && stat(u.bundle, &sb) == 0 ? "configured"
		            : n > 0 ? "partly configured" : "not configured";
		if (getenv("SSL_CERT_FILE") == NULL || strcmp(getenv("SSL_CERT_FILE"), u.bundle) != 0)
			pg_setup_fact(st, "this session", "SSL_CERT_FILE is not p11glue's here (yet): "
			              "log in again, or . ~/.profile");
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(unreachable); i++)
		pg_setup_fact(st, "not reached per user", unreachable[i]);
	paths_clear(&u);
	pg_setup_plan_clear(&scratch);
}
