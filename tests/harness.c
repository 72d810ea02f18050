/*
 * The test harness: registration, TAP output, failure reporting.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
	char *name;
	void (*destroy)(void *);
	bool fork;
	pg_test_func func;
	pg_test_data_func data_func;
	const void *data;
	pg_test_func setup;
	pg_test_func teardown;
} test_case;

static test_case *cases;
static size_t n_cases, cap_cases;
static pg_test_func cur_setup, cur_teardown;
static bool cur_fork;
static jmp_buf jump;
static const char *skip_reason;
static char tmpdir[256];

static void
add_case(test_case tc)
{
	if (n_cases == cap_cases) {
		cap_cases = cap_cases ? cap_cases * 2 : 64;
		cases = realloc(cases, cap_cases * sizeof(*cases));
		if (cases == NULL) {
			fprintf(stderr, "out of memory\n");
			exit(99);
		}
	}
	tc.setup = cur_setup;
	tc.teardown = cur_teardown;
	tc.fork = cur_fork;
	cases[n_cases++] = tc;
}

static char *
copy_name(const char *name)
{
	char *copy = strdup(name);

	if (copy == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(99);
	}
	return copy;
}

void
pg_test(const char *name, pg_test_func func)
{
	add_case((test_case){ .name = copy_name(name), .func = func });
}

void
pg_test_data(const char *name, pg_test_data_func func, const void *data)
{
	add_case((test_case){ .name = copy_name(name), .data_func = func, .data = data });
}

void
pg_test_dataf(pg_test_data_func func, void *data, void (*destroy)(void *),
              const char *fmt, ...)
{
	char name[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	add_case((test_case){ .name = copy_name(name), .data_func = func, .data = data,
	                      .destroy = destroy });
}

void
pg_test_fork_cases(bool fork_cases)
{
	cur_fork = fork_cases;
}

void
pg_test_fixture(pg_test_func setup, pg_test_func teardown)
{
	cur_setup = setup;
	cur_teardown = teardown;
}

void
pg_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	printf("# %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	longjmp(jump, 1);
}

static void
print_bytes(const char *label, const unsigned char *p, size_t len)
{
	printf("#   %s (%zu bytes): ", label, len);
	for (size_t i = 0; i < len && i < 64; i++)
		printf("%02x", p[i]);
	printf("%s\n", len > 64 ? "..." : "");
}

void
pg_test_fail_mem(const char *file, int line, const char *expr,
                 const void *got, size_t got_len, const void *want, size_t want_len)
{
	printf("# %s:%d: bytes of %s differ\n", file, line, expr);
	print_bytes("got ", got, got_len);
	print_bytes("want", want, want_len);
	longjmp(jump, 1);
}

void
pg_test_skip(const char *reason)
{
	skip_reason = reason;
	longjmp(jump, 2);
}

const char *
pg_test_tmpdir(void)
{
	if (tmpdir[0] == 0) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof(tmpdir), "%s/p11glue-test.XXXXXX",
		         base && *base ? base : "/tmp");
		if (mkdtemp(tmpdir) == NULL) {
			tmpdir[0] = 0;
			pg_test_fail(__FILE__, __LINE__, "cannot create a temporary directory");
		}
	}
	return tmpdir;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void
remove_tmpdir(void)
{
	if (tmpdir[0] == 0)
		return;
	nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = 0;
}

static bool
selected(const test_case *tc, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++) {
		if (strncmp(tc->name, argv[i], strlen(argv[i])) == 0)
			return true;
	}
	return false;
}

/* Runs one case; returns 0 passed, 1 failed, 2 skipped. */
static int
run_case(const test_case *tc)
{
	int jumped;

	skip_reason = NULL;
	jumped = setjmp(jump);
	if (jumped == 0) {
		if (tc->setup)
			tc->setup();
		if (tc->func)
			tc->func();
		else
			tc->data_func(tc->data);
	}
	if (tc->teardown)
		tc->teardown();
	remove_tmpdir();
	return jumped;
}

/* Runs a case in a child; the child's exit status is its result. */
static int
run_case_forked(const test_case *tc)
{
	int status;
	pid_t child;

	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		int result = run_case(tc);
		if (result == 2)
			printf("# SKIP %s\n", skip_reason);
		fflush(stdout);
		_exit(result);
	}
	if (waitpid(child, &status, 0) != child)
		return 1;
	if (WIFSIGNALED(status)) {
		printf("# killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	if (WEXITSTATUS(status) == 2)
		skip_reason = "(see above)";
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int
pg_test_run(int argc, char **argv)
{
	int failed = 0;
	size_t n = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (size_t i = 0; i < n_cases; i++)
		n += selected(&cases[i], argc, argv);
	printf("1..%zu\n", n);
	n = 0;
	for (size_t i = 0; i < n_cases; i++) {
		const test_case *tc = &cases[i];
		int status;

		if (!selected(tc, argc, argv))
			continue;
		n++;
		status = tc->fork ? run_case_forked(tc) : run_case(tc);
		if (status == 2)
			printf("ok %zu %s # SKIP %s\n", n, tc->name, skip_reason);
		else if (status == 1) {
			printf("not ok %zu %s\n", n, tc->name);
			failed++;
		} else
			printf("ok %zu %s\n", n, tc->name);
	}
	for (size_t i = 0; i < n_cases; i++) {
		free(cases[i].name);
		if (cases[i].destroy)
			cases[i].destroy((void *)cases[i].data);
	}
	free(cases);
	return failed ? 1 : 0;
}
