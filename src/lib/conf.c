/*
 * The registry configuration: file format and locations (see conf.h).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "conf.h"
#include "compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Configuration files are small; refuse anything absurd. */
#define CONF_MAX_SIZE (1024 * 1024)

/* ---------------------------------------------------------------------------
 * Maps
 */

void
pg_conf_map_clear(pg_conf_map *map)
{
	if (map == NULL)
		return;
	for (size_t i = 0; i < map->n; i++) {
		free(map->items[i].key);
		free(map->items[i].value);
	}
	free(map->items);
	map->items = NULL;
	map->n = 0;
}

const char *
pg_conf_map_get(const pg_conf_map *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++) {
		if (strcmp(map->items[i].key, key) == 0)
			return map->items[i].value;
	}
	return NULL;
}

bool
pg_conf_map_set(pg_conf_map *map, const char *key, const char *value)
{
	pg_conf_pair *grown;
	char *copy = strdup(value), *key_copy;

	if (copy == NULL)
		return false;
	for (size_t i = 0; i < map->n; i++) {
		if (strcmp(map->items[i].key, key) == 0) {
			free(map->items[i].value);
			map->items[i].value = copy;
			return true;
		}
	}
	key_copy = strdup(key);
	grown = key_copy ? realloc(map->items, (map->n + 1) * sizeof(*grown)) : NULL;
	if (grown == NULL) {
		free(copy);
		free(key_copy);
		return false;
	}
	map->items = grown;
	map->items[map->n].key = key_copy;
	map->items[map->n].value = copy;
	map->n++;
	return true;
}

/* ---------------------------------------------------------------------------
 * The file format
 */

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void
trim(const char **start, const char **end)
{
	while (*start < *end && is_blank(**start))
		(*start)++;
	while (*end > *start && is_blank((*end)[-1]))
		(*end)--;
}

/* One line in [s, e); false on a syntax error (reported). */
static bool
parse_line(const char *s, const char *e, const char *origin, unsigned lineno,
           pg_conf_map *map, pg_buf *errors, bool *nomem)
{
	const char *colon, *vs, *ve;
	char key[128], *value;

	trim(&s, &e);
	if (s == e || *s == '#')
		return true;
	colon = memchr(s, ':', (size_t)(e - s));
	if (colon == NULL) {
		pg_buf_printf(errors, "%s:%u: expected 'name: value'\n", origin, lineno);
		return false;
	}
	ve = colon;
	trim(&s, &ve);
	/* A setting name: letters, digits, '.', '-', '_' (pkcs11.conf(5)). */
	if (!pg_is_name(s, (size_t)(ve - s), ".-_") || (size_t)(ve - s) >= sizeof(key)) {
		pg_buf_printf(errors, "%s:%u: invalid setting name\n", origin, lineno);
		return false;
	}
	memcpy(key, s, (size_t)(ve - s));
	key[ve - s] = 0;
	vs = colon + 1;
	ve = e;
	trim(&vs, &ve);
	if (memchr(vs, 0, (size_t)(ve - vs)) != NULL) {
		pg_buf_printf(errors, "%s:%u: NUL byte in value of '%s'\n", origin, lineno, key);
		return false;
	}
	value = (char *)pg_memdup0(vs, (size_t)(ve - vs));
	if (value == NULL || !pg_conf_map_set(map, key, value))
		*nomem = true;
	free(value);
	return !*nomem;
}

bool
pg_conf_parse(const char *text, size_t len, const char *origin,
              pg_conf_map *map, pg_buf *errors)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	bool ok = true, nomem = false;

	while (p < end && !nomem) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		lineno++;
		ok &= parse_line(p, e, origin, lineno, map, errors, &nomem);
		p = nl ? nl + 1 : end;
	}
	return ok && !nomem;
}

bool
pg_conf_bool(const char *value, bool dflt, bool *bad)
{
	if (value == NULL || *value == 0)
		return dflt;
	if (strcasecmp(value, "yes") == 0 || strcasecmp(value, "true") == 0)
		return true;
	if (strcasecmp(value, "no") == 0 || strcasecmp(value, "false") == 0)
		return false;
	if (bad != NULL)
		*bad = true;
	return dflt;
}

/*
 * Reads a whole file (regular, at most CONF_MAX_SIZE). Returns NULL and
 * sets *missing when it does not exist; NULL with a message otherwise.
 */
static char *
read_file(const char *path, size_t *len, bool *missing, pg_buf *errors)
{
	unsigned char *data = NULL;
	int fd = pg_open_regular(path, false, NULL), err;

	/* A FIFO named like a configuration file must not make the open
	 * wait for a writer: pg_open_regular refuses it like any other file
	 * that is not a regular one. */
	if (fd >= 0)
		data = pg_read_fd(fd, CONF_MAX_SIZE, len);
	err = errno;
	if (fd >= 0)
		close(fd);
	*missing = fd < 0 && (err == ENOENT || err == ENOTDIR);
	if (data == NULL && err == ENOMEM)
		pg_buf_printf(errors, "%s: out of memory\n", path);
	else if (data == NULL && (err == EINVAL || err == EFBIG))
		pg_buf_printf(errors, "%s: not a regular file of at most %d bytes\n", path,
		              CONF_MAX_SIZE);
	else if (data == NULL && !*missing)
		pg_buf_printf(errors, "%s: cannot read: %s\n", path, strerror(err));
	return (char *)data;
}

/*
 * Condenses the problems of one file into one line (the first problem,
 * and how many more there were), so a broken file is reported once
 * however many of its lines are bad. suffix (may be NULL) is appended,
 * e.g. what became of the module. Returns the line (free it) or NULL
 * when memory ran out.
 */
static char *
one_line(const pg_buf *errors, const char *suffix)
{
	const char *text = (const char *)errors->data;
	size_t first, more = 0;
	char *line = NULL;
	int rv;

	if (errors->len == 0 || errors->failed)
		return NULL;
	first = strcspn(text, "\n");
	for (const char *p = text + first; *p; p++)
		more += *p == '\n' && p[1] != 0;
	if (suffix == NULL)
		suffix = "";
	if (more > 0)
		rv = asprintf(&line, "%.*s (and %zu more problem%s)%s\n", (int)first, text, more,
		              more == 1 ? "" : "s", suffix);
	else
		rv = asprintf(&line, "%.*s%s\n", (int)first, text, suffix);
	return rv < 0 ? NULL : line;
}

/*
 * Parses a file into map. Returns false when it was broken, with one
 * line about it in *problem (free it); true, with *problem NULL,
 * otherwise (also when it does not exist: *missing).
 */
static bool
load_file(const char *path, pg_conf_map *map, bool *missing, const char *suffix,
          char **problem)
{
	size_t len = 0;
	pg_buf errors;
	char *text;
	bool ok;

	*problem = NULL;
	pg_buf_init(&errors);
	text = read_file(path, &len, missing, &errors);
	ok = text != NULL ? pg_conf_parse(text, len, path, map, &errors) : *missing;
	free(text);
	if (!ok || errors.len > 0) {
		*problem = one_line(&errors, suffix);
		ok = false;
	}
	pg_buf_clear(&errors);
	return ok;
}

/* load_file for a global file: its problem goes to messages. */
static void
load_global_file(pg_conf *conf, const char *path, pg_conf_map *map)
{
	char *problem;
	bool missing;

	if (!load_file(path, map, &missing, NULL, &problem)) {
		if (problem != NULL)
			pg_buf_add_str(&conf->messages, problem);
		else
			conf->messages.failed = true;
		free(problem);
	}
}

/* ---------------------------------------------------------------------------
 * Modules
 */

static void
module_clear(pg_conf_module *mod)
{
	free(mod->name);
	free(mod->file);
	free(mod->error);
	pg_conf_map_clear(&mod->values);
}

const pg_conf_module *
pg_conf_find(const pg_conf *conf, const char *name)
{
	for (size_t i = 0; i < conf->n_modules; i++) {
		if (strcmp(conf->modules[i].name, name) == 0)
			return &conf->modules[i];
	}
	return NULL;
}

/* A module file name: alphanumeric first, then [A-Za-z0-9_,.-], ".module". */
static bool
module_file_name(const char *file, char name[256])
{
	size_t len = strlen(file);

	if (len <= 7 || len - 7 >= 256 || strcmp(file + len - 7, ".module") != 0)
		return false;
	len -= 7;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)file[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		             (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '_' && c != ',' && c != '-' && c != '.')))
			return false;
	}
	memcpy(name, file, len);
	name[len] = 0;
	return true;
}

/*
 * Merges a later file's settings over an earlier module of the same name:
 * each setting the later file gives replaces the earlier one, the others
 * stay. The later file becomes the module's file; an error sticks.
 */
static bool
merge_module(pg_conf_module *into, pg_conf_module *later)
{
	bool ok = true;

	for (size_t i = 0; ok && i < later->values.n; i++)
		ok = pg_conf_map_set(&into->values, later->values.items[i].key,
		                     later->values.items[i].value);
	if (ok) {
		free(into->file);
		into->file = later->file;
		later->file = NULL;
		if (later->error != NULL) {
			free(into->error);
			into->error = later->error;
			later->error = NULL;
		}
	}
	module_clear(later);
	return ok;
}

/* Puts mod into conf (merged over a module of the same name); takes mod. */
static bool
put_module(pg_conf *conf, pg_conf_module *mod)
{
	pg_conf_module *grown;
	size_t at = 0;

	while (at < conf->n_modules && strcmp(conf->modules[at].name, mod->name) < 0)
		at++;
	if (at < conf->n_modules && strcmp(conf->modules[at].name, mod->name) == 0)
		return merge_module(&conf->modules[at], mod);
	grown = realloc(conf->modules, (conf->n_modules + 1) * sizeof(*grown));
	if (grown == NULL) {
		module_clear(mod);
		return false;
	}
	conf->modules = grown;
	memmove(conf->modules + at + 1, conf->modules + at,
	        (conf->n_modules - at) * sizeof(*grown));
	conf->modules[at] = *mod;
	conf->n_modules++;
	return true;
}

static int
compare_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static bool
load_module_dir(pg_conf *conf, const char *dir)
{
	struct dirent **entries;
	char name[256], path[4096];
	bool ok = true, missing;
	int n = scandir(dir, &entries, NULL, compare_names);

	if (n < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			pg_buf_printf(&conf->messages, "%s: cannot read: %s\n", dir, strerror(errno));
		return true;
	}
	for (int i = 0; i < n; i++) {
		pg_conf_module mod = { 0 };
		char suffix[300];

		if (ok && module_file_name(entries[i]->d_name, name) &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) <
		            sizeof(path)) {
			mod.name = strdup(name);
			mod.file = strdup(path);
			snprintf(suffix, sizeof(suffix), "; module '%s' disabled", name);
			/* A broken file disables its module only; the rest loads.
			 * Its one line goes to the messages and is the module's error. */
			if (!load_file(path, &mod.values, &missing, suffix, &mod.error)) {
				if (mod.error != NULL)
					pg_buf_add_str(&conf->messages, mod.error);
				else
					ok = false;
			} else if (missing) {
				/* Gone between the listing and the open. */
				module_clear(&mod);
				free(entries[i]);
				continue;
			}
			if (ok && mod.name != NULL && mod.file != NULL)
				ok = put_module(conf, &mod);
			else {
				module_clear(&mod);
				ok = false;
			}
		}
		free(entries[i]);
	}
	free(entries);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Locations and precedence
 */

/* dir + tail, allocated; NULL when out of memory (the location is then
 * skipped). No fixed buffer: a long P11GLUE_CONFIG or home is not cut. */
static char *
join(const char *dir, const char *tail)
{
	char *path = NULL;

	return asprintf(&path, "%s%s", dir, tail) < 0 ? NULL : path;
}

void
pg_conf_paths_init(pg_conf_paths *paths)
{
	const char *dir = getenv("P11GLUE_CONFIG");
	const char *home;

	memset(paths, 0, sizeof(*paths));
	if (dir != NULL && *dir != 0) {
		paths->system_file = join(dir, "/pkcs11.conf");
		paths->module_dirs[0] = join(dir, "/modules");
		return;
	}
	paths->system_file = strdup(P11GLUE_SYSTEM_CONFIG_FILE);
	paths->module_dirs[0] = strdup(P11GLUE_PACKAGE_MODULES_DIR);
	paths->module_dirs[1] = strdup(P11GLUE_SYSTEM_MODULES_DIR);
	paths->user_allowed_by_default = !pg_is_root();
	/* Never from a home directory in a set-id program. */
	home = pg_is_privileged() ? NULL : pg_home_dir();
	if (home != NULL) {
		paths->user_file = join(home, "/.config/pkcs11/pkcs11.conf");
		paths->user_module_dir = join(home, "/.config/pkcs11/modules");
	}
}

void
pg_conf_paths_clear(pg_conf_paths *paths)
{
	free((char *)paths->system_file);
	free((char *)paths->module_dirs[0]);
	free((char *)paths->module_dirs[1]);
	free((char *)paths->user_file);
	free((char *)paths->user_module_dir);
	memset(paths, 0, sizeof(*paths));
}

void
pg_conf_free(pg_conf *conf)
{
	if (conf == NULL)
		return;
	pg_conf_map_clear(&conf->global);
	for (size_t i = 0; i < conf->n_modules; i++)
		module_clear(&conf->modules[i]);
	free(conf->modules);
	free(conf->user_config);
	pg_buf_clear(&conf->messages);
	free(conf);
}

/* The user-config mode from the system file, or the default. */
static const char *
user_mode(const pg_conf *conf, const pg_conf_paths *paths)
{
	const char *mode = pg_conf_map_get(&conf->global, "user-config");

	if (mode == NULL || *mode == 0)
		return paths->user_allowed_by_default ? "merge" : "none";
	if (strcmp(mode, "none") != 0 && strcmp(mode, "merge") != 0 &&
	    strcmp(mode, "only") != 0)
		return NULL;
	return mode;
}

static bool
merge_user_global(pg_conf *conf, const pg_conf_paths *paths, bool only)
{
	pg_conf_map user = { 0 };
	bool ok = true;

	load_global_file(conf, paths->user_file, &user);
	if (only)
		pg_conf_map_clear(&conf->global);
	for (size_t i = 0; ok && i < user.n; i++) {
		/* The user may not change whether user files are read. */
		if (strcmp(user.items[i].key, "user-config") == 0)
			continue;
		ok = pg_conf_map_set(&conf->global, user.items[i].key, user.items[i].value);
	}
	pg_conf_map_clear(&user);
	return ok;
}

pg_conf *
pg_conf_load(const pg_conf_paths *paths)
{
	pg_conf *conf = calloc(1, sizeof(*conf));
	const char *mode;
	bool ok = true;

	if (conf == NULL)
		return NULL;
	pg_buf_init(&conf->messages);
	if (paths->system_file)
		load_global_file(conf, paths->system_file, &conf->global);
	mode = user_mode(conf, paths);
	if (mode == NULL) {
		pg_buf_printf(&conf->messages, "%s: user-config must be none, merge or only\n",
		              paths->system_file);
		mode = "none";
	}
	if (paths->user_file == NULL)
		mode = "none";
	conf->user_config = strdup(mode);
	ok = conf->user_config != NULL;
	if (strcmp(mode, "only") != 0) {
		for (int i = 0; ok && i < 2; i++) {
			if (paths->module_dirs[i])
				ok = load_module_dir(conf, paths->module_dirs[i]);
		}
	}
	if (ok && strcmp(mode, "none") != 0) {
		ok = merge_user_global(conf, paths, strcmp(mode, "only") == 0);
		if (ok && paths->user_module_dir)
			ok = load_module_dir(conf, paths->user_module_dir);
	}
	if (!ok || conf->messages.failed) {
		pg_conf_free(conf);
		return NULL;
	}
	return conf;
}
