/*
 * The `setup --gnupg` target: GnuPG signs and decrypts with store keys
 * through gnupg-pkcs11-scd, a smart-card daemon for gpg-agent that talks
 * PKCS#11. Two files of the GnuPG home directory ($GNUPGHOME, else
 * ~/.gnupg) get a block of p11glue's lines (setup.c):
 *
 *   gpg-agent.conf         scdaemon-program /usr/bin/gnupg-pkcs11-scd
 *   gnupg-pkcs11-scd.conf  providers p11glue
 *                          provider-p11glue-library <the client, store or proxy module>
 *                          provider-p11glue-allow-protected-auth (the client's)
 *
 * gpg-agent takes the last value of an option, so a scdaemon-program or
 * providers line of the user's own that says something else is a
 * conflict p11glue reports rather than overrides.
 */
#include "config.h"

#include "setup.h"
#include "targets.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TARGET "gnupg"

/* $GNUPGHOME, else ~/.gnupg; free(). */
static char *
gnupg_home(void)
{
	const char *env = getenv("GNUPGHOME"), *home = getenv("HOME");
	struct passwd *pw;
	char *dir;
	size_t len;

	if (env != NULL && env[0] != 0)
		return strdup(env);
	if ((home == NULL || home[0] == 0) && (pw = getpwuid(getuid())) != NULL)
		home = pw->pw_dir;
	if (home == NULL)
		return NULL;
	len = strlen(home) + sizeof("/.gnupg");
	dir = malloc(len);
	if (dir != NULL)
		snprintf(dir, len, "%s/.gnupg", home);
	return dir;
}

/* ---------------------------------------------------------------------------
 * Reading the two files
 */

/* What the files say, as gpg-agent and gnupg-pkcs11-scd read them. */
typedef struct {
	char *scdaemon_program;      /* the last value */
	size_t scdaemon_line;
	char *providers;             /* the last providers value */
	size_t providers_line;
	char *libraries[8];          /* provider-NAME-library values, NAME in providers */
	char *library_names[8];
	size_t n_libraries;
} gnupg_conf;

static void
conf_clear(gnupg_conf *c)
{
	free(c->scdaemon_program);
	free(c->providers);
	for (size_t i = 0; i < c->n_libraries; i++) {
		free(c->libraries[i]);
		free(c->library_names[i]);
	}
	memset(c, 0, sizeof(*c));
}


static int
take_agent_line(const char *text, size_t number, void *data)
{
	gnupg_conf *c = data;
	char *line = strdup(text), *name, *value;

	if (line == NULL)
		return -1;
	if (pg_setup_split_line(line, false, &name, &value) && strcmp(name, "scdaemon-program") == 0) {
		free(c->scdaemon_program);
		c->scdaemon_program = strdup(value);
		c->scdaemon_line = number;
	}
	free(line);
	return 0;
}

static int
take_scd_line(const char *text, size_t number, void *data)
{
	gnupg_conf *c = data;
	char *line = strdup(text), *name, *value;
	size_t len;

	if (line == NULL)
		return -1;
	if (pg_setup_split_line(line, false, &name, &value)) {
		len = strlen(name);
		if (strcmp(name, "providers") == 0) {
			free(c->providers);
			c->providers = strdup(value);
			c->providers_line = number;
		} else if (len > 17 && strncmp(name, "provider-", 9) == 0 &&
		           strcmp(name + len - 8, "-library") == 0 &&
		           c->n_libraries < PG_N_ELEMENTS(c->libraries)) {
			name[len - 8] = 0;
			c->library_names[c->n_libraries] = strdup(name + 9);
			c->libraries[c->n_libraries++] = strdup(value);
		}
	}
	free(line);
	return 0;
}

/* True when providers (comma-separated) lists name. */
static bool
lists(const char *providers, const char *name)
{
	size_t len = strlen(name), n;

	for (const char *p = providers; p && *p; p += n + (p[n] == ',')) {
		p += strspn(p, " \t");
		n = strcspn(p, ",");
		if (n >= len && strncmp(p, name, len) == 0 && strspn(p + len, " \t") == n - len)
			return true;
	}
	return false;
}

/* The library of a listed provider that is module (or with module NULL,
 * any p11glue module), or NULL. */
static const char *
listed_library(const gnupg_conf *c, const char *module)
{
	const char *base;

	for (size_t i = 0; i < c->n_libraries; i++) {
		if (!c->library_names[i] || !c->libraries[i] || !lists(c->providers, c->library_names[i]))
			continue;
		base = strrchr(c->libraries[i], '/');
		base = base ? base + 1 : c->libraries[i];
		if (module ? strcmp(c->libraries[i], module) == 0 : strncmp(base, "p11glue-", 8) == 0)
			return c->libraries[i];
	}
	return NULL;
}

typedef struct {
	char *home, *agent_path, *scd_path;
	char *agent_text, *scd_text;
	bool agent_exists, scd_exists;
	mode_t agent_mode, scd_mode;
} gnupg_files;

static void
files_clear(gnupg_files *f)
{
	free(f->home);
	free(f->agent_path);
	free(f->scd_path);
	free(f->agent_text);
	free(f->scd_text);
	memset(f, 0, sizeof(*f));
}

static bool
files_read(gnupg_files *f, pg_setup_plan *plan)
{
	memset(f, 0, sizeof(*f));
	f->home = gnupg_home();
	if (f->home == NULL) {
		pg_setup_problem(plan, "no home directory: set GNUPGHOME or HOME");
		return false;
	}
	f->agent_path = pg_setup_join(f->home, "gpg-agent.conf");
	f->scd_path = pg_setup_join(f->home, "gnupg-pkcs11-scd.conf");
	if (f->agent_path == NULL || f->scd_path == NULL) {
		pg_setup_problem(plan, "out of memory");
		return false;
	}
	return pg_setup_read(plan, f->agent_path, &f->agent_text, &f->agent_exists,
	                     &f->agent_mode) &&
	       pg_setup_read(plan, f->scd_path, &f->scd_text, &f->scd_exists, &f->scd_mode);
}

/* ---------------------------------------------------------------------------
 * Planning
 */

/* The module the provider names; NULL after adding a problem. */
static char *
module_of(const pg_setup_env *env, pg_setup_plan *plan)
{
	char *module;

	if (env->module == NULL)
		return pg_setup_default_module(env, env->proxy);
	module = realpath(env->module, NULL);
	if (module == NULL)
		pg_setup_problem(plan, "--module %s: no such file", env->module);
	return module;
}

static void
plan_agent(const gnupg_files *f, const gnupg_conf *user, pg_setup_plan *plan)
{
	static const char *const lines[] = { "scdaemon-program " PG_SETUP_SCD_PROGRAM };

	if (user->scdaemon_program != NULL && strcmp(user->scdaemon_program, PG_SETUP_SCD_PROGRAM) == 0)
		return;
	if (user->scdaemon_program != NULL) {
		pg_setup_problem(plan, "%s, line %zu, sets scdaemon-program %s: p11glue leaves your "
		                 "line alone; remove or comment it out, then run this again",
		                 f->agent_path, user->scdaemon_line, user->scdaemon_program);
		return;
	}
	if (!pg_setup_plan_block(plan, f->agent_path, f->agent_text, f->agent_exists, f->agent_mode,
	                         lines, PG_N_ELEMENTS(lines)))
		pg_setup_problem(plan, "out of memory");
}

static void
plan_scd(const gnupg_files *f, const gnupg_conf *user, const char *module, pg_setup_plan *plan)
{
	char library[PATH_MAX + 64];
	const char *lines[3] = { "providers " PG_SETUP_SCD_PROVIDER, library, NULL };
	const char *base = strrchr(module, '/');
	size_t n = 2;

	if (user->providers != NULL && listed_library(user, module) != NULL)
		return;
	if (user->providers != NULL) {
		pg_setup_problem(plan, "%s, line %zu, names providers %s: p11glue leaves your line "
		                 "alone; add '%s' to it and a line 'provider-%s-library %s', or "
		                 "remove it and run this again", f->scd_path, user->providers_line,
		                 user->providers, PG_SETUP_SCD_PROVIDER, PG_SETUP_SCD_PROVIDER, module);
		return;
	}
	snprintf(library, sizeof(library), "provider-" PG_SETUP_SCD_PROVIDER "-library %s", module);
	/* The session service asks for PINs itself (a protected
	 * authentication path): gnupg-pkcs11-scd then logs in without one
	 * rather than asking through gpg-agent. */
	if (strcmp(base ? base + 1 : module, "p11glue-client.so") == 0)
		lines[n++] = "provider-" PG_SETUP_SCD_PROVIDER "-allow-protected-auth";
	if (!pg_setup_plan_block(plan, f->scd_path, f->scd_text, f->scd_exists, f->scd_mode, lines,
	                         n))
		pg_setup_problem(plan, "out of memory");
}

bool
pg_setup_gnupg_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	gnupg_files f;
	gnupg_conf agent = { 0 }, scd = { 0 };
	char *module = NULL;

	if (!files_read(&f, p))
		goto out;
	if (undo) {
		if (!pg_setup_plan_unblock(p, f.agent_path, f.agent_text, f.agent_mode) ||
		    !pg_setup_plan_unblock(p, f.scd_path, f.scd_text, f.scd_mode))
			pg_setup_problem(p, "out of memory");
		goto out;
	}
	module = module_of(env, p);
	if (module == NULL ||
	    pg_setup_each_user_line(f.agent_text, TARGET, take_agent_line, &agent) != 0 ||
	    pg_setup_each_user_line(f.scd_text, TARGET, take_scd_line, &scd) != 0)
		goto out;
	plan_agent(&f, &agent, p);
	plan_scd(&f, &scd, module, p);
	if (access(module, R_OK) != 0)
		pg_setup_note(p, "warning: the module %s is not there (yet)", module);
	if (access(PG_SETUP_SCD_PROGRAM, X_OK) != 0)
		pg_setup_note(p, "warning: " PG_SETUP_SCD_PROGRAM " is not installed (Debian: apt install "
		              "gnupg-pkcs11-scd); gpg-agent cannot start it until it is");
	if (p->n > 0 && p->problems.len == 0)
		pg_setup_note(p, "a running gpg-agent sees this once restarted: gpgconf --kill gpg-agent");
out:
	free(module);
	conf_clear(&agent);
	conf_clear(&scd);
	files_clear(&f);
	return true;
}

/* ---------------------------------------------------------------------------
 * Status
 */

void
pg_setup_gnupg_status(const pg_setup_env *env, pg_setup_status *st)
{
	pg_setup_plan scratch;
	gnupg_files f;
	gnupg_conf agent = { 0 }, scd = { 0 };
	size_t begin = 0, end = 0;
	bool agent_ok, scd_ok, ours;
	const char *library;
	char text[PATH_MAX + 32];

	pg_setup_plan_init(&scratch, TARGET);
	st->state = "not configured";
	if (!files_read(&f, &scratch)) {
		pg_setup_fact(st, "problem", (const char *)scratch.problems.data);
		goto out;
	}
	pg_setup_each_user_line(f.agent_text, NULL, take_agent_line, &agent);
	pg_setup_each_user_line(f.scd_text, NULL, take_scd_line, &scd);
	pg_setup_fact(st, "gnupghome", f.home);
	agent_ok = agent.scdaemon_program && strcmp(agent.scdaemon_program, PG_SETUP_SCD_PROGRAM) == 0;
	ours = f.agent_text && pg_setup_block_find(f.agent_text, TARGET, &begin, &end);
	snprintf(text, sizeof(text), "%s%s", agent.scdaemon_program ? agent.scdaemon_program : "(not set)",
	         agent.scdaemon_program ? (ours ? " (set by p11glue)" : " (set by you)") : "");
	pg_setup_fact(st, "scdaemon-program", text);
	library = listed_library(&scd, NULL);
	scd_ok = library != NULL;
	ours = f.scd_text && pg_setup_block_find(f.scd_text, TARGET, &begin, &end);
	snprintf(text, sizeof(text), "%s%s", library ? library : "(none)",
	         library ? (ours ? " (set by p11glue)" : " (set by you)") : "");
	pg_setup_fact(st, "module", text);
	pg_setup_fact(st, "gnupg-pkcs11-scd",
	              access(PG_SETUP_SCD_PROGRAM, X_OK) == 0 ? PG_SETUP_SCD_PROGRAM : "not installed");
	st->state = agent_ok && scd_ok ? "configured"
	            : agent_ok || scd_ok ? "partly configured"
	                                 : "not configured";
out:
	(void)env;
	conf_clear(&agent);
	conf_clear(&scd);
	files_clear(&f);
	pg_setup_plan_clear(&scratch);
}

const char *
pg_setup_gnupg_unavailable(void)
{
	return access(PG_SETUP_SCD_PROGRAM, X_OK) == 0 ? NULL
	       : PG_SETUP_SCD_PROGRAM " is not installed (Debian: apt install gnupg-pkcs11-scd)";
}
