/*
 * The `setup --modules` target: registers p11glue's key store and trust
 * module in the registry (p11-kit's configuration format, src/lib/conf.h),
 * so that every program reading it, p11glue's proxy included, sees them.
 * Module files of one directory get a block of p11glue's lines:
 *
 *   p11glue-service.module module: <p11glue-client.so>
 *   p11glue-store.module   module:
 *   p11glue-trust.module   module: <p11glue-trust.so>
 *                          trust-policy: yes
 *   p11-kit-trust.module   module:
 *
 * Programs reach the key store through the session service (`p11glue
 * service`, which the client module finds and starts by itself), so one
 * unlock serves them all; the store's own registration is disabled for
 * them (the key store commands then load the store directly). With
 * --direct each program loads the store itself, as before:
 * p11glue-store.module names p11glue-store.so and p11glue-service.module
 * has no block.
 *
 * The last one's empty module: disables p11-kit's trust module of that
 * name: two trust-policy modules reading the same bundle would give
 * every consumer each anchor twice (docs/DESIGN.md, "Registration").
 * The directory: ~/.config/pkcs11/modules, with --system the system
 * one (/etc/pkcs11/modules), and with P11GLUE_CONFIG set
 * $P11GLUE_CONFIG/modules either way, since it replaces every location.
 *
 * A later setting of a module file wins; a module: or trust-policy:
 * line of the user's in one of these files that says otherwise is a
 * conflict, one that says the same leaves nothing to do.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "setup.h"
#include "targets.h"
#include "conf.h"

#include <p11glue/p11glue.h>

#include <limits.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TARGET "modules"

enum { SERVICE, STORE, TRUST, P11KIT_TRUST, N_FILES };

static const char *const file_names[N_FILES] = {
	"p11glue-service.module",
	"p11glue-store.module",
	"p11glue-trust.module",
	"p11-kit-trust.module",
};

/* The registry directory this run works on; free(). */
static char *
modules_dir(const pg_setup_env *env)
{
	const char *conf = getenv("P11GLUE_CONFIG");
	char *home, *dir;

	if (conf != NULL && conf[0] != 0)
		return pg_setup_join(conf, "modules");
	if (env->system)
		return strdup(P11GLUE_SYSTEM_MODULES_DIR);
	home = pg_setup_home();
	dir = home ? pg_setup_join(home, ".config/pkcs11/modules") : NULL;
	free(home);
	return dir;
}

/*
 * Why programs of this user do not read the user's module files (root,
 * and the system file does not enable user-config), or NULL when they
 * do or this run is not about them (--system, P11GLUE_CONFIG). free().
 */
static char *
user_files_ignored(const pg_setup_env *env)
{
	const char *config = getenv("P11GLUE_CONFIG");
	pg_conf_paths paths;
	pg_conf *conf;
	char *why = NULL;

	if (env->system || (config != NULL && config[0] != 0))
		return NULL;
	pg_conf_paths_init(&paths);
	conf = pg_conf_load(&paths);
	if (conf != NULL && strcmp(conf->user_config, "none") == 0 &&
	    asprintf(&why, "programs run by this user (%s) ignore ~/.config/pkcs11: %s does not "
	             "set user-config to merge or only", geteuid() == 0 ? "root" : "set-id",
	             paths.system_file ? paths.system_file : "the system file") < 0)
		why = NULL;
	pg_conf_free(conf);
	pg_conf_paths_clear(&paths);
	return why;
}

/* What one file is to hold: its settings, as lines and as pairs. */
typedef struct {
	char *path;
	char *text;
	bool exists;
	mode_t mode;
	const char *keys[2];
	char *values[2];
	size_t n;
	char *lines[2];
} module_file;

typedef struct {
	char *dir;
	module_file files[N_FILES];
} modules_plan;

static void
modules_clear(modules_plan *m)
{
	for (size_t i = 0; i < N_FILES; i++) {
		free(m->files[i].path);
		free(m->files[i].text);
		for (size_t k = 0; k < 2; k++) {
			free(m->files[i].values[k]);
			free(m->files[i].lines[k]);
		}
	}
	free(m->dir);
	memset(m, 0, sizeof(*m));
}

static bool
setting(module_file *f, const char *key, char *value)
{
	size_t len;

	if (value == NULL)
		return false;
	len = strlen(key) + strlen(value) + 3;
	f->keys[f->n] = key;
	f->values[f->n] = value;
	f->lines[f->n] = malloc(len);
	if (f->lines[f->n] == NULL)
		return false;
	/* "module:" with nothing after it, as p11-kit's documentation writes it. */
	snprintf(f->lines[f->n], len, value[0] ? "%s: %s" : "%s:%s", key, value);
	f->n++;
	return true;
}

/* Reads the three files and works out their settings. */
static bool
modules_read(modules_plan *m, const pg_setup_env *env, pg_setup_plan *plan)
{
	module_file *f;

	memset(m, 0, sizeof(*m));
	m->dir = modules_dir(env);
	if (m->dir == NULL) {
		pg_setup_problem(plan, "no home directory: set HOME");
		return false;
	}
	if ((!env->direct &&
	     !setting(&m->files[SERVICE], "module", pg_setup_module_file("client", "p11glue-client.so"))) ||
	    !setting(&m->files[STORE], "module",
	             env->direct ? pg_setup_module_file("store", "p11glue-store.so") : strdup("")) ||
	    !setting(&m->files[TRUST], "module", pg_setup_module_file("trust", "p11glue-trust.so")) ||
	    !setting(&m->files[TRUST], "trust-policy", strdup("yes")) ||
	    !setting(&m->files[P11KIT_TRUST], "module", strdup(""))) {
		pg_setup_problem(plan, "out of memory");
		return false;
	}
	for (size_t i = 0; i < N_FILES; i++) {
		f = &m->files[i];
		f->path = pg_setup_join(m->dir, file_names[i]);
		if (f->path == NULL) {
			pg_setup_problem(plan, "out of memory");
			return false;
		}
		if (!pg_setup_read(plan, f->path, &f->text, &f->exists, &f->mode))
			return false;
		if (!f->exists && env->system)
			f->mode = 0644;
	}
	return true;
}

static int
keep_line(const char *line, size_t number, void *data)
{
	(void)number;
	pg_buf_add_str(data, line);
	pg_buf_add_byte(data, '\n');
	return 0;
}

/* The settings of text, the lines of target's block left out with
 * target set (the user's own), or all of them. */
static bool
parse_settings(const char *text, const char *target, pg_conf_map *map)
{
	pg_buf user, errors;
	bool ok;

	pg_buf_init(&user);
	pg_buf_init(&errors);
	ok = pg_setup_each_user_line(text, target, keep_line, &user) == 0;
	ok = ok && !user.failed;
	if (ok)
		pg_conf_parse(user.len ? (const char *)user.data : "", user.len, "", map, &errors);
	pg_buf_clear(&user);
	pg_buf_clear(&errors);
	return ok;
}

/* How the settings of map compare with the file's: every one the same
 * (1), one different (-1, *key says which), or some missing (0). */
static int
compare(const module_file *f, const pg_conf_map *map, const char **key)
{
	const char *value;
	int same = 1;

	for (size_t k = 0; k < f->n; k++) {
		value = pg_conf_map_get(map, f->keys[k]);
		if (value == NULL) {
			same = 0;
		} else if (strcmp(value, f->values[k]) != 0) {
			*key = f->keys[k];
			return -1;
		}
	}
	return same;
}

static void
plan_file(const module_file *f, pg_setup_plan *plan)
{
	pg_conf_map user = { 0 };
	const char *key = NULL;
	int r;

	/* A file this mode does not use: p11glue's block, if any, goes. */
	if (f->n == 0) {
		if (!pg_setup_plan_unblock(plan, f->path, f->text, f->mode))
			pg_setup_problem(plan, "out of memory");
		return;
	}
	if (!parse_settings(f->text, TARGET, &user)) {
		pg_setup_problem(plan, "out of memory");
		return;
	}
	r = compare(f, &user, &key);
	if (r < 0)
		pg_setup_problem(plan, "%s, a module file of yours, sets %s: %s: p11glue leaves "
		                 "your file alone; remove it (or that line), then run this again",
		                 f->path, key, pg_conf_map_get(&user, key));
	else if (r == 0 && !pg_setup_plan_block(plan, f->path, f->text, f->exists, f->mode,
	                                        (const char *const *)f->lines, f->n))
		pg_setup_problem(plan, "out of memory");
	pg_conf_map_clear(&user);
}

bool
pg_setup_modules_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	modules_plan m;
	char *ignored = NULL;

	if (!modules_read(&m, env, p))
		goto out;
	if (undo) {
		for (size_t i = 0; i < N_FILES; i++) {
			if (!pg_setup_plan_unblock(p, m.files[i].path, m.files[i].text, m.files[i].mode))
				pg_setup_problem(p, "out of memory");
		}
		goto out;
	}
	if ((ignored = user_files_ignored(env)) != NULL) {
		pg_setup_problem(p, "%s; files written there would do nothing: use --system "
		                 "(every user), or set 'user-config: merge' in the system file",
		                 ignored);
		goto out;
	}
	if (env->module != NULL || env->proxy)
		pg_setup_note(p, "the registry names p11glue's own modules: --module and --proxy "
		              "are for the other targets");
	for (size_t i = 0; i < N_FILES; i++)
		plan_file(&m.files[i], p);
	for (size_t i = SERVICE; i <= TRUST; i++) {
		if (m.files[i].n > 0 && m.files[i].values[0][0] != 0 &&
		    access(m.files[i].values[0], R_OK) != 0)
			pg_setup_note(p, "warning: the module %s is not there (yet)", m.files[i].values[0]);
	}
	if (!env->direct && p->problems.len == 0)
		pg_setup_note(p, "programs reach the key store through your session service: unlock "
		              "it once per session with 'p11glue unlock' (--direct: each program loads "
		              "the store itself)");
	if (p->n > 0 && p->problems.len == 0)
		pg_setup_note(p, "check with: p11glue list-modules");
out:
	free(ignored);
	modules_clear(&m);
	return true;
}

/* ---------------------------------------------------------------------------
 * Status
 */

/* Does the file hold the settings it should? */
static bool
file_ok(const module_file *f)
{
	pg_conf_map all = { 0 };
	const char *key = NULL;
	bool ok;

	parse_settings(f->text, NULL, &all);
	ok = compare(f, &all, &key) == 1;
	pg_conf_map_clear(&all);
	return ok;
}

/* A fact about one file: its module: value and who set it. */
static bool
file_fact(pg_setup_status *st, const char *key, const module_file *f)
{
	pg_conf_map all = { 0 }, user = { 0 };
	const char *value, *mine = NULL;
	char text[4200];
	bool ok;

	parse_settings(f->text, NULL, &all);
	parse_settings(f->text, TARGET, &user);
	value = pg_conf_map_get(&all, "module");
	ok = compare(f, &all, &mine) == 1;
	if (value == NULL)
		snprintf(text, sizeof(text), "(no module: line in %s)", f->path);
	else
		snprintf(text, sizeof(text), "%s%s (%s)", value[0] ? value : "(empty: disabled)",
		         ok ? "" : ", not p11glue's setting",
		         pg_conf_map_get(&user, "module") ? "set by you" : "set by p11glue");
	pg_setup_fact(st, key, text);
	pg_conf_map_clear(&all);
	pg_conf_map_clear(&user);
	return ok;
}

/* A module's file, and with verbose whether it initializes and its tokens. */
static void
module_fact(const pg_setup_env *env, pg_setup_status *st, p11glue_module *mod)
{
	const char *error = p11glue_module_error(mod);
	const char *file = p11glue_module_path(mod);
	CK_FUNCTION_LIST *f = p11glue_module_functions(mod);
	CK_ULONG n = 0;
	char text[PATH_MAX + 300];
	int len;

	if (file == NULL)
		file = p11glue_module_filename(mod);
	len = snprintf(text, sizeof(text), "%s: %s", p11glue_module_name(mod), file ? file : "?");
	if (len < 0 || (size_t)len >= sizeof(text))
		len = (int)sizeof(text) - 1;
	if (error != NULL && env->verbose)
		snprintf(text + len, sizeof(text) - (size_t)len, " (cannot be used: %s)", error);
	else if (env->verbose && f != NULL && f->C_GetSlotList(CK_TRUE, NULL, &n) == CKR_OK)
		snprintf(text + len, sizeof(text) - (size_t)len, " (initializes; %lu token%s)", n,
		         n == 1 ? "" : "s");
	pg_setup_fact(st, "registered", text);
}

/*
 * The registry as programs of this user read it: each module they load,
 * with verbose loaded and initialized as they would, so that a module
 * that cannot be used says why here, once.
 */
static void
registry_facts(const pg_setup_env *env, pg_setup_status *st, const char *ignored)
{
	p11glue_registry *reg = NULL;
	int rv;

	if (ignored != NULL)
		pg_setup_fact(st, "user files", ignored);
	if (env->system)
		return;
	rv = p11glue_registry_load(env->verbose ? 0 : P11GLUE_REGISTRY_NO_LOAD, &reg);
	if (rv != P11GLUE_OK) {
		pg_setup_fact(st, "registry", p11glue_strerror(rv));
		return;
	}
	for (size_t i = 0; i < p11glue_registry_count(reg); i++)
		module_fact(env, st, p11glue_registry_module(reg, i));
	if (p11glue_registry_count(reg) == 0)
		pg_setup_fact(st, "registered", "(no module)");
	p11glue_registry_free(reg);
}

/*
 * How many of the files a mode (direct or not) sets up hold what it needs
 * (*needed: how many it sets up); a block of p11glue's left in a file the
 * mode does not use counts against it (*stray).
 */
static size_t
files_ok(const pg_setup_env *env, bool direct, pg_setup_status *st, bool facts, size_t *needed,
         bool *stray)
{
	static const char *const keys[N_FILES] = { "service", "store", "trust", "p11-kit-trust" };
	pg_setup_env mode = *env;
	pg_setup_plan scratch;
	modules_plan m;
	size_t n_ok = 0;

	mode.direct = direct;
	*needed = 0;
	*stray = false;
	pg_setup_plan_init(&scratch, TARGET);
	if (!modules_read(&m, &mode, &scratch)) {
		if (facts)
			pg_setup_fact(st, "problem", (const char *)scratch.problems.data);
		goto out;
	}
	if (facts)
		pg_setup_fact(st, "directory", m.dir);
	for (size_t i = 0; i < N_FILES; i++) {
		if (m.files[i].n == 0) {
			*stray = *stray || (m.files[i].text && pg_setup_has_block(m.files[i].text, TARGET));
			continue;
		}
		(*needed)++;
		if (facts)
			n_ok += file_fact(st, keys[i], &m.files[i]);
		else
			n_ok += file_ok(&m.files[i]);
	}
out:
	modules_clear(&m);
	pg_setup_plan_clear(&scratch);
	return n_ok;
}

void
pg_setup_modules_status(const pg_setup_env *env, pg_setup_status *st)
{
	char *ignored = NULL;
	size_t n_ok, needed;
	bool direct, stray;

	st->state = "not configured";
	/* The mode in force is the one the files hold more of. */
	n_ok = files_ok(env, true, st, false, &needed, &stray);
	direct = n_ok > files_ok(env, false, st, false, &needed, &stray);
	n_ok = files_ok(env, direct, st, true, &needed, &stray);
	pg_setup_fact(st, "mode", direct ? "direct (each program loads the key store itself)"
	                                 : "session service (programs reach the key store through "
	                                   "p11glue-client.so and 'p11glue service')");
	ignored = user_files_ignored(env);
	st->state = ignored != NULL ? "not configured"
	            : n_ok == needed && !stray ? "configured"
	            : n_ok > 0 ? "partly configured" : "not configured";
	registry_facts(env, st, ignored);
	free(ignored);
}
