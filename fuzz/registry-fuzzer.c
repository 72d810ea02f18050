/*
 * libFuzzer target for the registry loader as a whole (src/lib/conf.c,
 * registry.c, modules.c, managed.c): the input becomes a configuration
 * directory, which p11glue_registry_load reads as P11GLUE_CONFIG.
 *
 * Input: the text up to the first line starting with "%%" is
 * DIR/pkcs11.conf; each "%%NAME" line starts DIR/modules/NAME, whose
 * bytes follow up to the next such line. NAME keeps only the characters
 * [A-Za-z0-9._,-] (at most 40); an empty one becomes mN.module; a NAME
 * ending in '/' makes a directory of that name instead of a file.
 *
 * Modules are loaded only when no "module:" (or "remote:", which loads
 * the client module) of any file names a library that exists: the
 * target never dlopens a library the input chose, and the paths that
 * exist nowhere still go the whole way through loading.
 *
 * Checked: no crash or leak; the load succeeds (or fails for a critical
 * module only); every message line is printable; each file that the
 * configuration found broken begins exactly one line; every listed
 * module has a name and a file name.
 */
#define _GNU_SOURCE
#include "config.h"

#include "conf.h"
#include "modules.h"

#include <p11glue/p11glue.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 16

static char dir[256];
static char modules_dir[300];

static void clear_modules(void);

static void
remove_dir(void)
{
	char path[300];

	clear_modules();
	snprintf(path, sizeof(path), "%s/pkcs11.conf", dir);
	unlink(path);
	rmdir(dir);
}

static void
setup_once(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0] != 0)
		return;
	snprintf(dir, sizeof(dir), "%s/p11glue-registry-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(modules_dir, sizeof(modules_dir), "%s/modules", dir);
	setenv("P11GLUE_CONFIG", dir, 1);
	atexit(remove_dir);
}

/* Empties DIR/modules (files and the directories the input made). */
static void
clear_modules(void)
{
	char path[600];
	struct dirent *e;
	DIR *d = opendir(modules_dir);

	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", modules_dir, e->d_name);
			if (unlink(path) != 0)
				rmdir(path);
		}
		closedir(d);
	}
	rmdir(modules_dir);
}

static void
write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		return;
	if (len > 0)
		fwrite(data, 1, len, f);
	fclose(f);
}

/* Would loading this configuration text dlopen a library that exists? */
static bool
names_a_library(const uint8_t *data, size_t len)
{
	pg_conf_map map = { 0 };
	const char *module, *remote;
	char *found = NULL;
	pg_buf errors;

	pg_buf_init(&errors);
	pg_conf_parse((const char *)data, len, "fuzz", &map, &errors);
	module = pg_conf_map_get(&map, "module");
	remote = pg_conf_map_get(&map, "remote");
	if (module != NULL && *module != 0)
		found = pg_module_resolve(module);
	if (found == NULL && remote != NULL && *remote != 0)
		found = pg_module_resolve("p11glue-client.so");
	pg_conf_map_clear(&map);
	pg_buf_clear(&errors);
	free(found);
	return found != NULL;
}

/* Writes the input out as described above; true when loading is safe. */
static bool
write_input(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char name[48], path[600];
	bool safe = true;
	int files = 0;

	mkdir(modules_dir, 0700);
	for (bool global = true; files <= MAX_FILES; global = false) {
		const uint8_t *body = p, *next = NULL;
		/* The next "%%" at the start of a line. */
		for (const uint8_t *q = p; q + 1 < end && next == NULL; q++) {
			if (q[0] == '%' && q[1] == '%' && (q == data || q[-1] == '\n'))
				next = q;
		}
		const uint8_t *stop = next ? next : end;
		if (global) {
			snprintf(path, sizeof(path), "%s/pkcs11.conf", dir);
			write_file(path, body, (size_t)(stop - body));
		} else {
			size_t n = 0;
			const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
			const uint8_t *name_end = nl ? nl : end;
			for (const uint8_t *c = p; c < name_end && n < 40; c++) {
				if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				    (*c >= '0' && *c <= '9') || strchr("._,-/", *c) != NULL)
					name[n++] = (char)*c;
			}
			name[n] = 0;
			/* Only one '/' counts: at the end, for a directory. */
			for (size_t i = 0; i + 1 < n; i++) {
				if (name[i] == '/')
					name[i] = '_';
			}
			body = nl ? nl + 1 : end;
			if (body > stop)
				body = stop;
			if (n == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
			    strcmp(name, "/") == 0)
				snprintf(name, sizeof(name), "m%d.module", files);
			snprintf(path, sizeof(path), "%s/%s", modules_dir, name);
			if (n > 1 && name[n - 1] == '/') {
				path[strlen(path) - 1] = 0;
				mkdir(path, 0700);
			} else {
				write_file(path, body, (size_t)(stop - body));
			}
		}
		safe &= !names_a_library(body, (size_t)(stop - body));
		if (next == NULL)
			break;
		p = next + 2;
		files++;
	}
	return safe;
}

/* How many lines of text begin with path and a ':', as the messages
 * about a file do ("a.module" is not "a.module.module"). Only the start
 * counts: another module's load error may quote any text, even a path
 * the input wrote into a "module:" value. */
static int
lines_naming(const char *text, const char *path)
{
	size_t plen = strlen(path);
	int count = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		if (len > plen && strncmp(text, path, plen) == 0 && text[plen] == ':')
			count++;
		text += len + (text[len] == '\n');
	}
	return count;
}

static void
check_registry(unsigned flags, const pg_conf *conf)
{
	p11glue_registry *reg = NULL;
	const char *messages;
	int rv = p11glue_registry_load(flags, &reg);

	if (rv != P11GLUE_OK && rv != P11GLUE_ERR_MODULE)
		abort();
	if (reg == NULL)
		abort();
	messages = p11glue_registry_messages(reg);
	for (const char *c = messages; *c; c++) {
		if (*c != '\n' && ((unsigned char)*c < 0x20 || *c == 0x7f))
			abort();
	}
	for (size_t i = 0; i < conf->n_modules; i++) {
		if (conf->modules[i].error != NULL && lines_naming(messages, conf->modules[i].file) != 1)
			abort();
	}
	for (size_t i = 0; i < p11glue_registry_count(reg); i++) {
		p11glue_module *m = p11glue_registry_module(reg, i);
		if (p11glue_module_name(m) == NULL || p11glue_module_filename(m) == NULL)
			abort();
		p11glue_module_functions(m);
		p11glue_module_priority(m);
		p11glue_module_is_trust_policy(m);
	}
	p11glue_registry_free(reg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_conf_paths paths;
	pg_conf *conf;
	bool load;

	setup_once();
	clear_modules();
	load = write_input(data, size);
	pg_conf_paths_init(&paths);
	conf = pg_conf_load(&paths);
	pg_conf_paths_clear(&paths);
	if (conf == NULL)
		abort();
	check_registry(P11GLUE_REGISTRY_NO_LOAD, conf);
	if (load) {
		check_registry(0, conf);
		check_registry(P11GLUE_REGISTRY_FOR_PROXY | P11GLUE_REGISTRY_UNMANAGED, conf);
	}
	pg_conf_free(conf);
	return 0;
}
