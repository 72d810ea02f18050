/*
 * The module registry (include/p11glue/registry.h).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "compat.h"
#include "conf.h"
#include "managed.h"
#include "names.h"

#include <p11glue/p11glue.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The proxy's names in enable-in / disable-in lists. */
#define PROXY_NAME "p11glue-proxy"
#define PROXY_NAME_COMPAT "p11-kit-proxy"

/* Modules configured with "remote:" load the client module with this
 * reserved string prefix (the client then reaches the remote token). */
#define CLIENT_MODULE "p11glue-client.so"

struct p11glue_module {
	char *name;
	char *filename;              /* "module:" as configured, "" when none */
	char *file;                  /* the configuration file it came from */
	char *reserved;              /* C_Initialize reserved string */
	char *error;
	pg_conf_map values;
	int priority;
	bool critical;
	bool managed;
	bool log_calls;
	bool conf_broken;            /* its file was broken (reported by conf.c) */
	bool init_failed;            /* loaded, but C_Initialize failed */
	pg_module *loaded;
	CK_FUNCTION_LIST_3_0 *list;  /* managed, or the module's own */
	bool initialized;            /* unmanaged: we counted an initialize */
};

struct p11glue_registry {
	p11glue_module **modules;
	size_t n, cap;
	pg_buf messages;
	unsigned flags;
};

/* ---------------------------------------------------------------------------
 * Selection
 */

/* Is word in a comma- and/or space-separated list? */
static bool
listed(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while (*p) {
		size_t n;
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, ", \t");
		if (n == len && n > 0 && strncmp(p, word, n) == 0)
			return true;
		p += n;
	}
	return false;
}

static bool
listed_for(const char *list, const char *program, bool proxy)
{
	if (proxy)
		return listed(list, PROXY_NAME) || listed(list, PROXY_NAME_COMPAT);
	return listed(list, program);
}

static bool
enabled_for(const pg_conf_map *values, const char *program, bool proxy)
{
	const char *enable = pg_conf_map_get(values, "enable-in");
	const char *disable = pg_conf_map_get(values, "disable-in");

	if (enable != NULL && !listed_for(enable, program, proxy))
		return false;
	if (disable != NULL && listed_for(disable, program, proxy))
		return false;
	return true;
}

/* ---------------------------------------------------------------------------
 * Modules
 */

static void
module_free(p11glue_module *mod)
{
	if (mod == NULL)
		return;
	if (mod->list != NULL && pg_managed_is(mod->list))
		pg_managed_free(mod->list);
	else if (mod->initialized)
		pg_module_finalize(mod->loaded);
	pg_module_close(mod->loaded);
	free(mod->name);
	free(mod->filename);
	free(mod->file);
	free(mod->reserved);
	free(mod->error);
	pg_conf_map_clear(&mod->values);
	free(mod);
}

static void PG_PRINTF(2, 3)
set_error(p11glue_module *mod, const char *fmt, ...)
{
	va_list ap;

	free(mod->error);
	va_start(ap, fmt);
	mod->error = pg_strdup_vprintf(fmt, ap);
	va_end(ap);
	/* Errors name files and module paths taken from configuration files,
	 * which may hold any bytes: no control character reaches a terminal. */
	for (char *p = mod->error; p && *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

static bool
copy_map(pg_conf_map *to, const pg_conf_map *from)
{
	for (size_t i = 0; i < from->n; i++) {
		if (!pg_conf_map_set(to, from->items[i].key, from->items[i].value))
			return false;
	}
	return true;
}

/* Builds a module entry from its configuration; NULL when out of memory. */
static p11glue_module *
module_new(const pg_conf_module *cm, const pg_conf_map *global, pg_buf *messages)
{
	p11glue_module *mod = calloc(1, sizeof(*mod));
	const char *remote, *value, *priority, *file;
	bool bad = false, bad_priority = false;
	char *end;
	long n;

	if (mod == NULL || (mod->name = strdup(cm->name)) == NULL ||
	    (mod->file = strdup(cm->file)) == NULL || !copy_map(&mod->values, &cm->values)) {
		module_free(mod);
		return NULL;
	}
	remote = pg_conf_map_get(&cm->values, "remote");
	value = pg_conf_map_get(&cm->values, remote && *remote ? "remote" : "x-init-reserved");
	if (remote && *remote) {
		/* A remote token goes through the client module. */
		mod->filename = strdup(CLIENT_MODULE);
		if (asprintf(&mod->reserved, "remote=%s", remote) < 0)
			mod->reserved = NULL;
	} else {
		/* A broken file may have no "module:" at all. */
		file = pg_conf_map_get(&cm->values, "module");
		mod->filename = strdup(file ? file : "");
		mod->reserved = value && *value ? strdup(value) : NULL;
	}
	if (mod->filename == NULL) {
		module_free(mod);
		return NULL;
	}
	priority = pg_conf_map_get(&cm->values, "priority");
	if (priority != NULL) {
		n = strtol(priority, &end, 10);
		/* The value is not repeated: it may be any bytes of a broken file. */
		if (*priority == 0 || *end != 0 || n < INT_MIN || n > INT_MAX)
			bad_priority = true;
		else
			mod->priority = (int)n;
	}
	mod->critical = pg_conf_bool(pg_conf_map_get(&cm->values, "critical"), false, &bad);
	value = pg_conf_map_get(global, "managed");
	mod->managed = pg_conf_bool(value ? value : pg_conf_map_get(&cm->values, "managed"),
	                            true, &bad);
	value = pg_conf_map_get(global, "log-calls");
	mod->log_calls = pg_conf_bool(pg_conf_map_get(&cm->values, "log-calls"), false, &bad) ||
	                 pg_conf_bool(value, false, &bad);
	/* One line per file; none for a broken file, which conf.c reported. */
	if (cm->error == NULL && bad_priority)
		pg_buf_printf(messages, "%s: priority is not a number%s\n", cm->file,
		              bad ? "; a yes/no setting has another value, its default applies" : "");
	else if (cm->error == NULL && bad)
		pg_buf_printf(messages, "%s: a yes/no setting has another value; its default applies\n",
		              cm->file);
	if (cm->error != NULL) {
		/* conf.c reported the file once already. Its settings are not
		 * trusted, "critical" included: it disables its module only. */
		set_error(mod, "broken configuration file: %s", cm->file);
		mod->conf_broken = true;
		mod->critical = false;
	}
	return mod;
}

/* Loads and (unless flags say not to) initializes one module. */
static void
module_load(p11glue_registry *reg, p11glue_module *mod)
{
	char *why = NULL;
	bool managed;
	CK_RV rv;

	mod->loaded = pg_module_open(mod->filename, &why);
	if (mod->loaded == NULL) {
		set_error(mod, "cannot load: %s", why ? why : "unknown error");
		free(why);
		return;
	}
	for (size_t i = 0; i < reg->n; i++) {
		if (reg->modules[i] != mod && reg->modules[i]->loaded == mod->loaded) {
			set_error(mod, "same module as %s", reg->modules[i]->name);
			return;
		}
	}
	managed = mod->managed && !(reg->flags & P11GLUE_REGISTRY_UNMANAGED);
	/* Unmanaged callers (the proxy) of a module whose calls are to be
	 * logged get a pass-through list that logs them. */
	if (managed || mod->log_calls) {
		mod->list = pg_managed_new(mod->loaded, mod->reserved, mod->name, mod->log_calls,
		                           !managed);
		if (mod->list == NULL) {
			set_error(mod, "%s", "too many managed function lists in this process");
			return;
		}
		rv = (reg->flags & P11GLUE_REGISTRY_NO_INIT) ? CKR_OK : mod->list->C_Initialize(NULL);
	} else {
		mod->list = pg_module_functions(mod->loaded);
		rv = CKR_OK;
		if (!(reg->flags & P11GLUE_REGISTRY_NO_INIT)) {
			rv = pg_module_initialize(mod->loaded, mod->reserved);
			mod->initialized = rv == CKR_OK;
		}
	}
	if (rv != CKR_OK) {
		set_error(mod, "C_Initialize failed: %s", pg_name_ckr(rv) ? pg_name_ckr(rv) : "?");
		mod->init_failed = true;
		if (pg_managed_is(mod->list))
			pg_managed_free(mod->list);
		mod->list = NULL;
	}
}

/* ---------------------------------------------------------------------------
 * Registries
 */

static int
compare_modules(const void *a, const void *b)
{
	const p11glue_module *x = *(p11glue_module *const *)a;
	const p11glue_module *y = *(p11glue_module *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool
registry_add(p11glue_registry *reg, p11glue_module *mod)
{
	if (!pg_array_grow(&reg->modules, &reg->cap, reg->n, sizeof(*reg->modules), 8)) {
		module_free(mod);
		return false;
	}
	reg->modules[reg->n++] = mod;
	return true;
}

/* Loads the listed modules in order; fails when a critical one fails. */
static int
registry_finish(p11glue_registry *reg)
{
	/* qsort with a NULL array is undefined even for no elements. */
	if (reg->n > 1)
		qsort(reg->modules, reg->n, sizeof(*reg->modules), compare_modules);
	if (reg->flags & P11GLUE_REGISTRY_NO_LOAD)
		return P11GLUE_OK;
	for (size_t i = 0; i < reg->n; i++) {
		p11glue_module *mod = reg->modules[i];
		if (mod->error == NULL)
			module_load(reg, mod);
		if (mod->error == NULL)
			continue;
		/* A module that loads but cannot initialize for this user (a
		 * token directory not made yet) keeps its error for list-modules
		 * and status, and says nothing to every program that loads the
		 * registry; one that cannot even load is misconfigured, and a
		 * critical one stops the loading. */
		if (!mod->conf_broken && (mod->critical || !mod->init_failed))
			pg_buf_printf(&reg->messages, "%s: %s%s%s%s\n", mod->name, mod->error,
			              mod->file ? " (" : "", mod->file ? mod->file : "",
			              mod->file ? ")" : "");
		if (mod->critical)
			return P11GLUE_ERR_MODULE;
	}
	return reg->messages.failed ? P11GLUE_ERR_NOMEM : P11GLUE_OK;
}

static p11glue_registry *
registry_new(unsigned flags)
{
	p11glue_registry *reg = calloc(1, sizeof(*reg));

	if (reg != NULL) {
		reg->flags = flags;
		pg_buf_init(&reg->messages);
	}
	return reg;
}

int
p11glue_registry_load(unsigned flags, p11glue_registry **registry)
{
	bool proxy = flags & P11GLUE_REGISTRY_FOR_PROXY;
	const char *program = pg_program_name();
	p11glue_registry *reg;
	pg_conf_paths paths;
	pg_conf *conf;
	int rv = P11GLUE_OK;

	pg_return_val_if_fail(registry != NULL, P11GLUE_ERR_ARGS);
	*registry = NULL;
	reg = registry_new(flags);
	if (reg == NULL)
		return P11GLUE_ERR_NOMEM;
	pg_conf_paths_init(&paths);
	conf = pg_conf_load(&paths);
	pg_conf_paths_clear(&paths);
	if (conf == NULL) {
		p11glue_registry_free(reg);
		return P11GLUE_ERR_NOMEM;
	}
	pg_buf_add(&reg->messages, conf->messages.data, conf->messages.len);
	for (size_t i = 0; rv == P11GLUE_OK && i < conf->n_modules; i++) {
		const pg_conf_module *cm = &conf->modules[i];
		const char *file = pg_conf_map_get(&cm->values, "module");
		const char *remote = pg_conf_map_get(&cm->values, "remote");
		p11glue_module *mod;

		/* No (or an empty) module: disables the module of that name. */
		if (cm->error == NULL && (file == NULL || *file == 0) && (remote == NULL || *remote == 0))
			continue;
		if (!enabled_for(&cm->values, program, proxy))
			continue;
		mod = module_new(cm, &conf->global, &reg->messages);
		if (mod == NULL || !registry_add(reg, mod))
			rv = P11GLUE_ERR_NOMEM;
	}
	pg_conf_free(conf);
	if (rv == P11GLUE_OK)
		rv = registry_finish(reg);
	if (rv != P11GLUE_OK && rv != P11GLUE_ERR_MODULE) {
		p11glue_registry_free(reg);
		return rv;
	}
	*registry = reg;
	return rv;
}

int
p11glue_registry_load_file(const char *path, const char *name, const char *reserved,
                           unsigned flags, p11glue_registry **registry)
{
	pg_conf_module cm = { 0 };
	pg_conf_map global = { 0 };
	p11glue_registry *reg;
	p11glue_module *mod;
	const char *base;
	int rv;

	pg_return_val_if_fail(path != NULL && registry != NULL, P11GLUE_ERR_ARGS);
	*registry = NULL;
	base = strrchr(path, '/');
	cm.name = (char *)(name ? name : base ? base + 1 : path);
	cm.file = (char *)path;
	if (!pg_conf_map_set(&cm.values, "module", path) ||
	    (reserved && !pg_conf_map_set(&cm.values, "x-init-reserved", reserved)) ||
	    !pg_conf_map_set(&cm.values, "critical", "yes")) {
		pg_conf_map_clear(&cm.values);
		return P11GLUE_ERR_NOMEM;
	}
	reg = registry_new(flags & ~(unsigned)P11GLUE_REGISTRY_NO_LOAD);
	mod = reg ? module_new(&cm, &global, &reg->messages) : NULL;
	pg_conf_map_clear(&cm.values);
	if (mod != NULL) {
		/* Not from a configuration file: messages name no file. */
		free(mod->file);
		mod->file = NULL;
	}
	if (mod == NULL || !registry_add(reg, mod)) {
		p11glue_registry_free(reg);
		return P11GLUE_ERR_NOMEM;
	}
	rv = registry_finish(reg);
	*registry = reg;
	return rv;
}

void
p11glue_registry_free(p11glue_registry *reg)
{
	if (reg == NULL)
		return;
	/* Finalize in reverse load order. */
	for (size_t i = reg->n; i > 0; i--)
		module_free(reg->modules[i - 1]);
	free(reg->modules);
	pg_buf_clear(&reg->messages);
	free(reg);
}

size_t
p11glue_registry_count(const p11glue_registry *reg)
{
	pg_return_val_if_fail(reg != NULL, 0);
	return reg->n;
}

p11glue_module *
p11glue_registry_module(const p11glue_registry *reg, size_t index)
{
	pg_return_val_if_fail(reg != NULL, NULL);
	return index < reg->n ? reg->modules[index] : NULL;
}

p11glue_module *
p11glue_registry_find(const p11glue_registry *reg, const char *name)
{
	pg_return_val_if_fail(reg != NULL && name != NULL, NULL);
	for (size_t i = 0; i < reg->n; i++) {
		if (strcmp(reg->modules[i]->name, name) == 0)
			return reg->modules[i];
	}
	return NULL;
}

const char *
p11glue_registry_messages(const p11glue_registry *reg)
{
	pg_return_val_if_fail(reg != NULL, "");
	return reg->messages.data ? (const char *)reg->messages.data : "";
}

const char *
p11glue_module_name(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, NULL);
	return mod->name;
}

const char *
p11glue_module_filename(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, NULL);
	return mod->filename;
}

const char *
p11glue_module_path(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, NULL);
	return mod->loaded ? pg_module_path(mod->loaded) : NULL;
}

const char *
p11glue_module_config(const p11glue_module *mod, const char *key)
{
	pg_return_val_if_fail(mod != NULL && key != NULL, NULL);
	return pg_conf_map_get(&mod->values, key);
}

const char *
p11glue_module_error(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, NULL);
	return mod->error;
}

CK_FUNCTION_LIST *
p11glue_module_functions(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, NULL);
	return mod->error ? NULL : (CK_FUNCTION_LIST *)mod->list;
}

int
p11glue_module_priority(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, 0);
	return mod->priority;
}

bool
p11glue_module_is_trust_policy(const p11glue_module *mod)
{
	pg_return_val_if_fail(mod != NULL, false);
	return pg_conf_bool(pg_conf_map_get(&mod->values, "trust-policy"), false, NULL);
}
