/*
 * Tests of the registry configuration (src/lib/conf.c): the file format,
 * module file names, locations and precedence, user-config modes.
 */
#include "config.h"

#include "harness.h"
#include "conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *
path_in(const char *dir, const char *name)
{
	static char buf[8][1024];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f;
	char dir[1024], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = 0;
	mkdir(dir, 0700);
	f = fopen(path, "w");
	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* Paths under the test directory: pkg/, sys/, sys.conf, user.conf, user/. */
static pg_conf_paths
make_paths(bool user_default)
{
	static char store[5][1024];
	static const char *const names[5] = { "sys.conf", "pkg", "sys", "user.conf", "user" };
	const char *t = pg_test_tmpdir();

	for (int i = 0; i < 5; i++)
		snprintf(store[i], sizeof(store[i]), "%s/%s", t, names[i]);
	return (pg_conf_paths){
		.system_file = store[0],
		.module_dirs = { store[1], store[2] },
		.user_file = store[3],
		.user_module_dir = store[4],
		.user_allowed_by_default = user_default,
	};
}

static pg_conf *
load(const pg_conf_paths *paths)
{
	pg_conf *conf = pg_conf_load(paths);

	pg_assert_not_null(conf);
	return conf;
}

static const char *
module_value(const pg_conf *conf, const char *module, const char *key)
{
	const pg_conf_module *m = pg_conf_find(conf, module);

	return m ? pg_conf_map_get(&m->values, key) : NULL;
}

/* ---------------------------------------------------------------------------
 * Format
 */

static void
test_format(void)
{
	static const char text[] =
		"# a comment\n"
		"\n"
		"   module:   lib.so  \n"
		"x-custom : text with : colons\n"
		"setting.2:A long value\r\n"
		"\tempty:\n"
		"module: second.so\n"
		"#not: a setting\n"
		"value: # not a comment\n";
	pg_conf_map map = { 0 };
	pg_buf errors;

	pg_buf_init(&errors);
	pg_assert(pg_conf_parse(text, sizeof(text) - 1, "f", &map, &errors));
	pg_assert_int_eq(errors.len, 0);
	pg_assert_str_eq(pg_conf_map_get(&map, "module"), "second.so");
	pg_assert_str_eq(pg_conf_map_get(&map, "x-custom"), "text with : colons");
	pg_assert_str_eq(pg_conf_map_get(&map, "setting.2"), "A long value");
	pg_assert_str_eq(pg_conf_map_get(&map, "empty"), "");
	pg_assert_str_eq(pg_conf_map_get(&map, "value"), "# not a comment");
	pg_assert_null(pg_conf_map_get(&map, "not"));
	pg_assert_int_eq(map.n, 5);
	pg_conf_map_clear(&map);
	pg_buf_clear(&errors);
}

static void
test_format_errors(void)
{
	static const char text[] =
		"module: ok.so\n"
		"no colon here\n"
		"bad name: x\n"
		": no name\n"
		"after: errors\n";
	pg_conf_map map = { 0 };
	pg_buf errors;

	pg_buf_init(&errors);
	pg_assert(!pg_conf_parse(text, sizeof(text) - 1, "file.module", &map, &errors));
	pg_assert_not_null(strstr((char *)errors.data, "file.module:2: expected 'name: value'"));
	pg_assert_not_null(strstr((char *)errors.data, "file.module:3: invalid setting name"));
	pg_assert_not_null(strstr((char *)errors.data, "file.module:4: invalid setting name"));
	/* What parsed is kept. */
	pg_assert_str_eq(pg_conf_map_get(&map, "module"), "ok.so");
	pg_assert_str_eq(pg_conf_map_get(&map, "after"), "errors");
	pg_conf_map_clear(&map);
	pg_buf_clear(&errors);

	pg_buf_init(&errors);
	pg_assert(!pg_conf_parse("a: b\0c\n", 6, "nul", &map, &errors));
	pg_assert_not_null(strstr((char *)errors.data, "nul:1: NUL byte"));
	pg_conf_map_clear(&map);
	pg_buf_clear(&errors);
}

static void
test_bool(void)
{
	bool bad = false;

	pg_assert(pg_conf_bool("yes", false, &bad));
	pg_assert(pg_conf_bool("TRUE", false, &bad));
	pg_assert(!pg_conf_bool("no", true, &bad));
	pg_assert(!pg_conf_bool("False", true, &bad));
	pg_assert(pg_conf_bool(NULL, true, &bad));
	pg_assert(!pg_conf_bool("", false, &bad));
	pg_assert(!bad);
	pg_assert(pg_conf_bool("maybe", true, &bad));
	pg_assert(bad);
}

/* ---------------------------------------------------------------------------
 * Module files
 */

static void
test_module_file_names(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(true);
	pg_conf *conf;

	write_file(path_in(t, "sys/good.module"), "module: good.so\n");
	write_file(path_in(t, "sys/9-digits_a,b.c.module"), "module: d.so\n");
	write_file(path_in(t, "sys/-dash.module"), "module: x.so\n");
	write_file(path_in(t, "sys/.hidden.module"), "module: x.so\n");
	write_file(path_in(t, "sys/sp ace.module"), "module: x.so\n");
	write_file(path_in(t, "sys/backup.module~"), "module: x.so\n");
	write_file(path_in(t, "sys/other.conf"), "module: x.so\n");
	write_file(path_in(t, "sys/.module"), "module: x.so\n");
	conf = load(&paths);
	pg_assert_int_eq(conf->n_modules, 2);
	pg_assert_str_eq(conf->modules[0].name, "9-digits_a,b.c");
	pg_assert_str_eq(conf->modules[1].name, "good");
	pg_assert_str_eq(conf->modules[1].file, path_in(t, "sys/good.module"));
	pg_conf_free(conf);
}

static void
test_broken_module_file(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(true);
	const pg_conf_module *m;
	pg_conf *conf;

	write_file(path_in(t, "sys/a.module"), "module: a.so\n");
	write_file(path_in(t, "sys/broken.module"), "module: b.so\ngarbage\n");
	write_file(path_in(t, "sys/c.module"), "module: c.so\n");
	conf = load(&paths);
	pg_assert_int_eq(conf->n_modules, 3);
	pg_assert_null(pg_conf_find(conf, "a")->error);
	pg_assert_null(pg_conf_find(conf, "c")->error);
	m = pg_conf_find(conf, "broken");
	pg_assert_not_null(m->error);
	pg_assert_not_null(strstr(m->error, "broken.module:2:"));
	pg_assert_not_null(strstr((char *)conf->messages.data, "broken.module:2: expected"));
	pg_conf_free(conf);
}

static void
test_oversized_file(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(true);
	char *big = malloc(1024 * 1024 + 100);
	pg_conf *conf;

	memset(big, '#', 1024 * 1024 + 99);
	big[1024 * 1024 + 99] = 0;
	write_file(path_in(t, "sys/big.module"), big);
	free(big);
	conf = load(&paths);
	pg_assert_not_null(pg_conf_find(conf, "big")->error);
	pg_assert_not_null(strstr((char *)conf->messages.data, "at most"));
	pg_conf_free(conf);
}

/* ---------------------------------------------------------------------------
 * Precedence
 */

static void
test_precedence(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(true);
	pg_conf *conf;

	write_file(path_in(t, "pkg/a.module"), "module: pkg-a.so\npriority: 3\n");
	write_file(path_in(t, "pkg/b.module"), "module: pkg-b.so\n");
	write_file(path_in(t, "sys/a.module"), "module: sys-a.so\n");
	write_file(path_in(t, "sys/c.module"), "module: sys-c.so\nx-keep: 1\n");
	write_file(path_in(t, "user/c.module"), "priority: 9\n");
	write_file(path_in(t, "user/d.module"), "module: user-d.so\n");
	write_file(path_in(t, "user/b.module"), "module:\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "merge");
	/* A later file's settings go over an earlier one's, one by one. */
	pg_assert_str_eq(module_value(conf, "a", "module"), "sys-a.so");
	pg_assert_str_eq(module_value(conf, "a", "priority"), "3");
	pg_assert_str_eq(pg_conf_find(conf, "a")->file, path_in(t, "sys/a.module"));
	/* An empty module: (the user's b) disables b (see the registry). */
	pg_assert_str_eq(module_value(conf, "b", "module"), "");
	pg_assert_str_eq(module_value(conf, "c", "module"), "sys-c.so");
	pg_assert_str_eq(module_value(conf, "c", "x-keep"), "1");
	pg_assert_str_eq(module_value(conf, "c", "priority"), "9");
	pg_assert_str_eq(pg_conf_find(conf, "c")->file, path_in(t, "user/c.module"));
	pg_assert_str_eq(module_value(conf, "d", "module"), "user-d.so");
	pg_conf_free(conf);
}

static void
test_user_config_modes(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(true);
	pg_conf *conf;

	write_file(path_in(t, "sys/s.module"), "module: s.so\n");
	write_file(path_in(t, "user/u.module"), "module: u.so\n");
	write_file(path_in(t, "user.conf"), "log-calls: yes\nuser-config: only\nx-user: 1\n");

	write_file(path_in(t, "sys.conf"), "user-config: none\nmanaged: yes\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "none");
	pg_assert_not_null(pg_conf_find(conf, "s"));
	pg_assert_null(pg_conf_find(conf, "u"));
	pg_assert_null(pg_conf_map_get(&conf->global, "log-calls"));
	pg_conf_free(conf);

	write_file(path_in(t, "sys.conf"), "user-config: merge\nmanaged: yes\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "merge");
	pg_assert_not_null(pg_conf_find(conf, "s"));
	pg_assert_not_null(pg_conf_find(conf, "u"));
	pg_assert_str_eq(pg_conf_map_get(&conf->global, "log-calls"), "yes");
	pg_assert_str_eq(pg_conf_map_get(&conf->global, "managed"), "yes");
	/* The user file cannot change whether user files are read. */
	pg_assert_str_eq(pg_conf_map_get(&conf->global, "user-config"), "merge");
	pg_conf_free(conf);

	write_file(path_in(t, "sys.conf"), "user-config: only\nmanaged: yes\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "only");
	pg_assert_null(pg_conf_find(conf, "s"));
	pg_assert_not_null(pg_conf_find(conf, "u"));
	pg_assert_null(pg_conf_map_get(&conf->global, "managed"));
	pg_assert_str_eq(pg_conf_map_get(&conf->global, "x-user"), "1");
	pg_conf_free(conf);

	write_file(path_in(t, "sys.conf"), "user-config: sometimes\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "none");
	pg_assert_not_null(strstr((char *)conf->messages.data, "user-config must be"));
	pg_conf_free(conf);
}

/* As root (no user files by default) only an explicit setting reads them. */
static void
test_root_default(void)
{
	const char *t = pg_test_tmpdir();
	pg_conf_paths paths = make_paths(false);
	pg_conf *conf;

	write_file(path_in(t, "user/u.module"), "module: u.so\n");
	conf = load(&paths);
	pg_assert_str_eq(conf->user_config, "none");
	pg_assert_null(pg_conf_find(conf, "u"));
	pg_conf_free(conf);

	write_file(path_in(t, "sys.conf"), "user-config: merge\n");
	conf = load(&paths);
	pg_assert_not_null(pg_conf_find(conf, "u"));
	pg_conf_free(conf);
}

static void
test_missing_everything(void)
{
	pg_conf_paths paths = make_paths(true);
	pg_conf *conf = load(&paths);

	pg_assert_int_eq(conf->n_modules, 0);
	pg_assert_int_eq(conf->global.n, 0);
	pg_assert_int_eq(conf->messages.len, 0);
	pg_conf_free(conf);
}

static void
test_env_override(void)
{
	pg_conf_paths paths;
	char want[1024];

	setenv("P11GLUE_CONFIG", "/some/dir", 1);
	pg_conf_paths_init(&paths);
	pg_assert_str_eq(paths.system_file, "/some/dir/pkcs11.conf");
	pg_assert_str_eq(paths.module_dirs[0], "/some/dir/modules");
	pg_assert_null(paths.module_dirs[1]);
	pg_assert_null(paths.user_file);
	pg_assert_null(paths.user_module_dir);
	pg_conf_paths_clear(&paths);

	unsetenv("P11GLUE_CONFIG");
	setenv("HOME", "/home/someone", 1);
	pg_conf_paths_init(&paths);
	pg_assert_str_eq(paths.system_file, P11GLUE_SYSTEM_CONFIG_FILE);
	pg_assert_str_eq(paths.module_dirs[0], P11GLUE_PACKAGE_MODULES_DIR);
	pg_assert_str_eq(paths.module_dirs[1], P11GLUE_SYSTEM_MODULES_DIR);
	snprintf(want, sizeof(want), "/home/someone/.config/pkcs11/pkcs11.conf");
	pg_assert_str_eq(paths.user_file, want);
	pg_assert_str_eq(paths.user_module_dir, "/home/someone/.config/pkcs11/modules");
	pg_conf_paths_clear(&paths);
}

int
main(int argc, char **argv)
{
	pg_test("format/settings", test_format);
	pg_test("format/errors", test_format_errors);
	pg_test("format/bool", test_bool);
	pg_test("modules/file-names", test_module_file_names);
	pg_test("modules/broken-file", test_broken_module_file);
	pg_test("modules/oversized-file", test_oversized_file);
	pg_test("locations/precedence", test_precedence);
	pg_test("locations/user-config-modes", test_user_config_modes);
	pg_test("locations/root-default", test_root_default);
	pg_test("locations/missing", test_missing_everything);
	pg_test("locations/env-override", test_env_override);
	return pg_test_run(argc, argv);
}
