/*
 * Bad registry files (src/lib/conf.c, registry.c, modules.c): whatever a
 * .module file holds, loading the registry does not crash, the file is
 * reported in exactly one line of the messages naming it, and the other
 * modules work. Each case writes DIR/modules/bad.module (or something
 * named so) next to a good SoftHSM2 entry and loads the registry the
 * ways its users do: managed (the tools), unmanaged for the proxy, and
 * without loading.
 */
#define _GNU_SOURCE
#include "config.h"

#include "harness.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *softhsm;
static const char *no_entry_points;   /* a library without C_GetFunctionList */
static const char *empty_list;        /* one whose function list is all NULL */
static char confdir[1500];
static char bad_path[1600];

/* Writes len bytes to DIR/modules/NAME. */
static void
write_bytes(const char *name, const void *data, size_t len)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/modules/%s", confdir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		pg_test_fail(__FILE__, __LINE__, "cannot write %s: %s", path, strerror(errno));
	if (len > 0 && fwrite(data, 1, len, f) != len)
		pg_test_fail(__FILE__, __LINE__, "short write to %s", path);
	fclose(f);
}

static void __attribute__((format(printf, 1, 2)))
write_bad(const char *fmt, ...)
{
	char text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	write_bytes("bad.module", text, strlen(text));
}

static void
setup(void)
{
	const char *t = pg_test_tmpdir();
	char path[2048], text[2100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tokens", t);
	mkdir(path, 0700);
	snprintf(text, sizeof(text), "directories.tokendir = %s\n", path);
	snprintf(path, sizeof(path), "%s/softhsm2.conf", t);
	f = fopen(path, "w");
	pg_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	setenv("SOFTHSM2_CONF", path, 1);
	snprintf(confdir, sizeof(confdir), "%s/p11", t);
	mkdir(confdir, 0700);
	snprintf(path, sizeof(path), "%s/modules", confdir);
	mkdir(path, 0700);
	setenv("P11GLUE_CONFIG", confdir, 1);
	snprintf(bad_path, sizeof(bad_path), "%s/modules/bad.module", confdir);
	snprintf(text, sizeof(text), "module: %s\n", softhsm);
	write_bytes("softhsm2.module", text, strlen(text));
}

/* How many lines of text contain word. */
static int
lines_with(const char *text, const char *word)
{
	int count = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		if (memmem(text, len, word, strlen(word)) != NULL)
			count++;
		text += len + (text[len] == '\n');
	}
	return count;
}

/*
 * Loads the registry with flags and checks the promise: it loads, SoftHSM
 * answers, the bad file is named in one line, and a module "bad", when
 * listed, is unusable and has an error and a file name to show.
 */
static void
check_load(unsigned flags, const char *named)
{
	p11glue_registry *reg = NULL;
	p11glue_module *soft, *bad;
	CK_FUNCTION_LIST *f;
	const char *messages;
	CK_INFO info;
	int n;

	pg_assert_int_eq(p11glue_registry_load(flags, &reg), P11GLUE_OK);
	pg_assert_not_null(reg);
	messages = p11glue_registry_messages(reg);
	/* Without loading, a library's problems are not met. */
	n = lines_with(messages, named);
	if (n > 1 || (n == 0 && !(flags & P11GLUE_REGISTRY_NO_LOAD)))
		pg_test_fail(__FILE__, __LINE__, "want one line naming %s, messages:\n%s", named,
		             messages);
	/* Nothing but printable text and line ends reaches a terminal. */
	for (const char *p = messages; *p; p++)
		pg_assert(*p == '\n' || ((unsigned char)*p >= 0x20 && *p != 0x7f));
	soft = p11glue_registry_find(reg, "softhsm2");
	pg_assert_not_null(soft);
	if (!(flags & P11GLUE_REGISTRY_NO_LOAD)) {
		f = p11glue_module_functions(soft);
		pg_assert_not_null(f);
		pg_assert_int_eq(f->C_GetInfo(&info), CKR_OK);
		pg_assert_mem_eq(info.manufacturerID, 7, "SoftHSM", 7);
	}
	bad = p11glue_registry_find(reg, "bad");
	if (bad != NULL) {
		pg_assert_not_null(p11glue_module_filename(bad));
		if (!(flags & P11GLUE_REGISTRY_NO_LOAD)) {
			pg_assert_not_null(p11glue_module_error(bad));
			pg_assert_null(p11glue_module_functions(bad));
		}
	}
	p11glue_registry_free(reg);
}

/* The three ways the registry is loaded, twice each in one process. */
static void
check_all(const char *named)
{
	for (int round = 0; round < 2; round++) {
		check_load(0, named);
		check_load(P11GLUE_REGISTRY_FOR_PROXY | P11GLUE_REGISTRY_UNMANAGED, named);
		check_load(P11GLUE_REGISTRY_NO_LOAD, named);
	}
}

/* ---------------------------------------------------------------------------
 * File contents
 */

/* The reported crash: one word, no "module:" (strdup(NULL) in registry.c). */
static void
test_one_word(void)
{
	write_bad("nokey\n");
	check_all(bad_path);
}

static void
test_name_only_lines(void)
{
	write_bad("module\npriority\ncritical\n");
	check_all(bad_path);
}

static void
test_colon_only(void)
{
	write_bad(":\n: value\n");
	check_all(bad_path);
}

/* A broken file that asks to be critical still only disables itself:
 * its settings are not trusted. */
static void
test_broken_but_critical(void)
{
	write_bad("critical: yes\nthis is not a setting\n");
	check_all(bad_path);
}

/* Bytes of every value, NUL and newlines included, 8 KiB of them. */
static void
test_binary_junk(void)
{
	unsigned char junk[8192];
	unsigned long long state = 7;

	for (size_t i = 0; i < sizeof(junk); i++) {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		junk[i] = (unsigned char)(state >> 56);
	}
	write_bytes("bad.module", junk, sizeof(junk));
	check_all(bad_path);
}

/* Control characters and a NUL in values of an otherwise good file. */
static void
test_nul_byte(void)
{
	static const char text[] = "module: /nowhere/x\0y.so\npriority: 1\033[31m\n";

	write_bytes("bad.module", text, sizeof(text) - 1);
	check_all(bad_path);
}

static void
test_escape_in_module_path(void)
{
	write_bad("module: /nowhere/\033[2J\a.so\n");
	check_all(bad_path);
}

static void
test_huge_line(void)
{
	size_t len = 512 * 1024;
	char *line = malloc(len);

	pg_assert_not_null(line);
	memset(line, 'a', len);
	write_bytes("bad.module", line, len);
	check_all(bad_path);
	/* A name longer than any setting name, then a colon. */
	line[len - 2] = ':';
	line[len - 1] = 'x';
	write_bytes("bad.module", line, len);
	check_all(bad_path);
	free(line);
}

/* Larger than a configuration file may be. */
static void
test_huge_file(void)
{
	size_t len = 3 * 1024 * 1024;
	char *text = malloc(len);

	pg_assert_not_null(text);
	for (size_t i = 0; i < len; i++)
		text[i] = i % 64 == 63 ? '\n' : '#';
	write_bytes("bad.module", text, len);
	free(text);
	check_all(bad_path);
}

/* ---------------------------------------------------------------------------
 * Things named x.module that are no readable file
 */

static void
test_directory(void)
{
	pg_assert_int_eq(mkdir(bad_path, 0700), 0);
	check_all(bad_path);
}

/* A FIFO: opening it for reading must not wait for a writer. */
static void
test_fifo(void)
{
	pg_assert_int_eq(mkfifo(bad_path, 0600), 0);
	check_all(bad_path);
}

/* A symbolic link to itself cannot be opened (ELOOP). */
static void
test_symlink_loop(void)
{
	pg_assert_int_eq(symlink("bad.module", bad_path), 0);
	check_all(bad_path);
}

static void
test_device(void)
{
	pg_assert_int_eq(symlink("/dev/zero", bad_path), 0);
	check_all(bad_path);
}

/* Permission to read is denied (not testable as root, who reads anyway). */
static void
test_unreadable(void)
{
	if (geteuid() == 0)
		pg_test_skip("root reads files of any mode");
	write_bad("module: /nowhere/x.so\n");
	pg_assert_int_eq(chmod(bad_path, 0), 0);
	check_all(bad_path);
}

/* ---------------------------------------------------------------------------
 * module: naming something that is no usable module
 */

static void
test_not_a_library(void)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fake.so", confdir);
	f = fopen(path, "w");
	pg_assert_not_null(f);
	fputs("this is not an ELF file\n", f);
	fclose(f);
	write_bad("module: %s\n", path);
	check_all(bad_path);
}

static void
test_no_function_list(void)
{
	p11glue_registry *reg = NULL;

	write_bad("module: %s\n", no_entry_points);
	check_all(bad_path);
	pg_assert_int_eq(p11glue_registry_load(0, &reg), P11GLUE_OK);
	pg_assert_not_null(strstr(p11glue_module_error(p11glue_registry_find(reg, "bad")),
	                          "C_GetFunctionList"));
	p11glue_registry_free(reg);
}

static void
test_empty_function_list(void)
{
	p11glue_registry *reg = NULL;

	write_bad("module: %s\n", empty_list);
	check_all(bad_path);
	pg_assert_int_eq(p11glue_registry_load(0, &reg), P11GLUE_OK);
	pg_assert_not_null(strstr(p11glue_module_error(p11glue_registry_find(reg, "bad")),
	                          "no C_Initialize"));
	p11glue_registry_free(reg);
}

static void
test_missing_library(void)
{
	write_bad("module: /nowhere/at/all.so\n");
	check_all(bad_path);
}

/* A bad file among several: each is reported once, the good one works. */
static void
test_several_bad_files(void)
{
	char other[1700];

	write_bad("nokey\n");
	write_bytes("worse.module", "\xff\xfe\x00\x01:\n", 6);
	snprintf(other, sizeof(other), "%s/modules/worse.module", confdir);
	check_all(bad_path);
	check_all(other);
}

int
main(int argc, char **argv)
{
	softhsm = getenv("P11GLUE_TEST_SOFTHSM");
	no_entry_points = getenv("P11GLUE_TEST_NO_ENTRY_POINTS");
	empty_list = getenv("P11GLUE_TEST_EMPTY_LIST");
	if (!softhsm || !no_entry_points || !empty_list) {
		fprintf(stderr, "set P11GLUE_TEST_SOFTHSM, _NO_ENTRY_POINTS and _EMPTY_LIST\n");
		return 99;
	}
	/* Loaded modules are process-wide: a child per case, and a crash
	 * fails its case alone. */
	pg_test_fork_cases(true);
	pg_test_fixture(setup, NULL);
	pg_test("content/one-word", test_one_word);
	pg_test("content/name-only-lines", test_name_only_lines);
	pg_test("content/colon-only", test_colon_only);
	pg_test("content/broken-but-critical", test_broken_but_critical);
	pg_test("content/binary-junk", test_binary_junk);
	pg_test("content/nul-byte", test_nul_byte);
	pg_test("content/escape-in-module-path", test_escape_in_module_path);
	pg_test("content/huge-line", test_huge_line);
	pg_test("content/huge-file", test_huge_file);
	pg_test("kind/directory", test_directory);
	pg_test("kind/fifo", test_fifo);
	pg_test("kind/symlink-loop", test_symlink_loop);
	pg_test("kind/device", test_device);
	pg_test("kind/unreadable", test_unreadable);
	pg_test("library/not-a-library", test_not_a_library);
	pg_test("library/no-function-list", test_no_function_list);
	pg_test("library/empty-function-list", test_empty_function_list);
	pg_test("library/missing", test_missing_library);
	pg_test("several-bad-files", test_several_bad_files);
	return pg_test_run(argc, argv);
}
