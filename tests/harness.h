/*
 * A small test harness with TAP output (one Meson test per file).
 *
 *   static void test_x(void) { pg_assert_int_eq(1 + 1, 2); }
 *   int main(int argc, char **argv) {
 *           pg_test("arith/add", test_x);
 *           return pg_test_run(argc, argv);
 *   }
 *
 * A failed assertion prints both values, marks the case failed and leaves
 * it (longjmp), so later cases still run. Run with a case name (or a
 * prefix) as argument to run only matching cases.
 */
#ifndef PG_TEST_HARNESS_H
#define PG_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*pg_test_func)(void);
typedef void (*pg_test_data_func)(const void *data);

/* Registers a case (the name is copied; data must outlive pg_test_run()). */
void pg_test(const char *name, pg_test_func func);
void pg_test_data(const char *name, pg_test_data_func func, const void *data);

/* Registers a case named by printf; the harness frees data with destroy
 * (when not NULL) after the run. */
void pg_test_dataf(pg_test_data_func func, void *data, void (*destroy)(void *),
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Run the cases registered from now on each in a child process, for code
 * that keeps process-wide state (loaded modules do). A case that crashes
 * then fails alone.
 */
void pg_test_fork_cases(bool fork_cases);

/* Optional per-case setup/teardown (NULL for none). */
void pg_test_fixture(pg_test_func setup, pg_test_func teardown);

/* Runs the registered cases; returns the process exit code. */
int pg_test_run(int argc, char **argv);

/* Skips the current case with a reason (TAP "# SKIP"). */
void pg_test_skip(const char *reason) __attribute__((noreturn));

/* A per-case temporary directory, created on first use, removed after. */
const char *pg_test_tmpdir(void);

/* Failure reporting used by the macros. */
void pg_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
void pg_test_fail_mem(const char *file, int line, const char *expr,
                      const void *got, size_t got_len,
                      const void *want, size_t want_len) __attribute__((noreturn));

#define pg_assert(expr)                                                       \
	do {                                                                      \
		if (!(expr))                                                          \
			pg_test_fail(__FILE__, __LINE__, "assertion failed: %s", #expr);  \
	} while (0)

#define pg_assert_int_eq(got, want)                                          \
	do {                                                                      \
		long long g_ = (long long)(got), w_ = (long long)(want);             \
		if (g_ != w_)                                                         \
			pg_test_fail(__FILE__, __LINE__, "%s == %s: got %lld, want %lld", \
			             #got, #want, g_, w_);                                \
	} while (0)

#define pg_assert_ulong_eq(got, want)                                        \
	do {                                                                      \
		unsigned long long g_ = (got), w_ = (want);                          \
		if (g_ != w_)                                                         \
			pg_test_fail(__FILE__, __LINE__,                                  \
			             "%s == %s: got 0x%llx, want 0x%llx", #got, #want, g_, w_); \
	} while (0)

#define pg_assert_str_eq(got, want)                                          \
	do {                                                                      \
		const char *g_ = (got), *w_ = (want);                                \
		if (g_ == NULL || w_ == NULL ? g_ != w_ : strcmp(g_, w_) != 0)       \
			pg_test_fail(__FILE__, __LINE__, "%s == %s: got \"%s\", want \"%s\"", \
			             #got, #want, g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

#define pg_assert_mem_eq(got, got_len, want, want_len)                       \
	do {                                                                      \
		const void *g_ = (got), *w_ = (want);                                \
		size_t gl_ = (got_len), wl_ = (want_len);                            \
		if (gl_ != wl_ || (gl_ && memcmp(g_, w_, gl_) != 0))                 \
			pg_test_fail_mem(__FILE__, __LINE__, #got, g_, gl_, w_, wl_);    \
	} while (0)

#define pg_assert_null(p) pg_assert((p) == NULL)
#define pg_assert_not_null(p) pg_assert((p) != NULL)

#endif /* PG_TEST_HARNESS_H */
