/*
 * Tests of PINs and PIN sources (src/lib/pin.c).
 */
#include "config.h"

#include "harness.h"

#include <p11glue/p11glue.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static p11glue_uri *
uri_with_source(const char *source)
{
	p11glue_uri *uri = p11glue_uri_new();

	pg_assert_int_eq(p11glue_uri_set(uri, P11GLUE_URI_PIN_SOURCE, source, strlen(source), NULL),
	                 P11GLUE_OK);
	return uri;
}

static const char *
pin_file(const char *name, const void *data, size_t len, mode_t mode)
{
	static char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pg_test_tmpdir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pg_assert(fd >= 0);
	pg_assert_int_eq(write(fd, data, len), (long long)len);
	close(fd);
	pg_assert_int_eq(chmod(path, mode), 0);
	return path;
}

static int
resolve(p11glue_uri *uri, p11glue_pin **pin, char **error)
{
	int rv = p11glue_pin_resolve(uri, "PIN for test", 0, pin, error);

	p11glue_uri_free(uri);
	return rv;
}

static void
assert_pin(const p11glue_pin *pin, const char *want, size_t want_len)
{
	size_t len;
	const unsigned char *value = p11glue_pin_value(pin, &len);

	pg_assert_mem_eq(value, len, want, want_len);
	pg_assert_int_eq(value[len], 0);
}

static void
test_pin_value(void)
{
	p11glue_uri *uri;
	p11glue_pin *pin;

	pg_assert_int_eq(p11glue_uri_parse("pkcs11:?pin-value=12%0034&pin-source=file:/nope",
	                                   0, &uri, NULL), P11GLUE_OK);
	/* pin-value wins over pin-source; bytes are kept (NUL included). */
	pg_assert_int_eq(resolve(uri, &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "12\0" "34", 5);
	p11glue_pin_free(pin);
}

static void
test_file_sources(void)
{
	static const char *const prefixes[] = { "file:", "file://", "" };
	char source[1100];
	const char *path = pin_file("pin", "s3cret\n", 7, 0600);
	p11glue_pin *pin;

	for (size_t i = 0; i < 3; i++) {
		snprintf(source, sizeof(source), "%s%s", prefixes[i], path);
		pg_assert_int_eq(resolve(uri_with_source(source), &pin, NULL), P11GLUE_OK);
		assert_pin(pin, "s3cret", 6);
		p11glue_pin_free(pin);
	}
	/* CRLF is dropped too; inner newlines and spaces are kept. */
	path = pin_file("crlf", "a b\nc\r\n", 7, 0400);
	snprintf(source, sizeof(source), "file:%s", path);
	pg_assert_int_eq(resolve(uri_with_source(source), &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "a b\nc", 5);
	p11glue_pin_free(pin);
	/* An empty file is an empty PIN. */
	path = pin_file("empty", "", 0, 0600);
	pg_assert_int_eq(resolve(uri_with_source(path), &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "", 0);
	p11glue_pin_free(pin);
}

static void
assert_refused(const char *source, const char *reason)
{
	p11glue_pin *pin = (p11glue_pin *)1;
	char *error = NULL;

	pg_assert_int_eq(resolve(uri_with_source(source), &pin, &error), P11GLUE_ERR_PIN_SOURCE);
	pg_assert_null(pin);
	pg_assert_not_null(error);
	if (strstr(error, reason) == NULL)
		pg_test_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", error, reason);
	free(error);
}

static void
test_file_refusals(void)
{
	char big[4097], link_path[1100], source[1100];
	const char *path;

	path = pin_file("open", "1234", 4, 0644);
	assert_refused(path, "permissions too open");
	path = pin_file("group", "1234", 4, 0640);
	assert_refused(path, "permissions too open");
	memset(big, '1', sizeof(big));
	path = pin_file("big", big, sizeof(big), 0600);
	assert_refused(path, "larger than 4096 bytes");
	path = pin_file("target", "1234", 4, 0600);
	snprintf(link_path, sizeof(link_path), "%s/link", pg_test_tmpdir());
	pg_assert_int_eq(symlink(path, link_path), 0);
	assert_refused(link_path, "link");
	snprintf(source, sizeof(source), "%s/missing", pg_test_tmpdir());
	assert_refused(source, "No such file");
	assert_refused(pg_test_tmpdir(), "not a regular file");
	assert_refused("file:relative/path", "unknown PIN source");
	assert_refused("env:PIN", "unknown PIN source");
	assert_refused("file:\x01", "unknown PIN source");
}

static void
test_file_exactly_4096(void)
{
	char data[4096];
	const char *path;
	p11glue_pin *pin;

	memset(data, '7', sizeof(data));
	path = pin_file("max", data, sizeof(data), 0600);
	pg_assert_int_eq(resolve(uri_with_source(path), &pin, NULL), P11GLUE_OK);
	assert_pin(pin, data, sizeof(data));
	p11glue_pin_free(pin);
}

static int
resolve_trusted(const char *source, p11glue_pin **pin, char **error)
{
	p11glue_uri *uri = uri_with_source(source);
	int rv = p11glue_pin_resolve(uri, "PIN for test", P11GLUE_PIN_TRUSTED_URI, pin, error);

	p11glue_uri_free(uri);
	return rv;
}

static void
assert_trusted_refused(const char *source, const char *reason)
{
	p11glue_pin *pin = (p11glue_pin *)1;
	char *error = NULL;

	pg_assert_int_eq(resolve_trusted(source, &pin, &error), P11GLUE_ERR_PIN_SOURCE);
	pg_assert_null(pin);
	pg_assert_not_null(error);
	if (strstr(error, reason) == NULL)
		pg_test_fail(__FILE__, __LINE__, "error \"%s\" lacks \"%s\"", error, reason);
	free(error);
}

/* env:NAME, only for a URI of the program's own user. */
static void
test_env_source(void)
{
	p11glue_pin *pin;

	pg_assert_int_eq(setenv("PG_TEST_PIN", "12 34\n", 1), 0);
	pg_assert_int_eq(resolve_trusted("env:PG_TEST_PIN", &pin, NULL), P11GLUE_OK);
	/* The value as it is: nothing dropped. */
	assert_pin(pin, "12 34\n", 6);
	p11glue_pin_free(pin);
	pg_assert_int_eq(setenv("PG_TEST_PIN", "", 1), 0);
	pg_assert_int_eq(resolve_trusted("env:PG_TEST_PIN", &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "", 0);
	p11glue_pin_free(pin);
	unsetenv("PG_TEST_PIN");
	assert_trusted_refused("env:PG_TEST_PIN", "not set");
	assert_trusted_refused("env:", "not a variable name");
	assert_trusted_refused("env:A=B", "not a variable name");
	/* Without the caller's word, a URI cannot read the environment. */
	pg_assert_int_eq(setenv("PG_TEST_PIN", "1234", 1), 0);
	assert_refused("env:PG_TEST_PIN", "unknown PIN source");
	unsetenv("PG_TEST_PIN");
}

/* fd:N: a line at a time, so one pipe carries two PINs. */
static void
test_fd_source(void)
{
	static const char data[] = "first\r\nsecond\nthird";
	char source[32];
	p11glue_pin *pin;
	int fds[2];

	pg_assert_int_eq(pipe(fds), 0);
	pg_assert_int_eq(write(fds[1], data, sizeof(data) - 1), (long long)sizeof(data) - 1);
	close(fds[1]);
	snprintf(source, sizeof(source), "fd:%d", fds[0]);
	pg_assert_int_eq(resolve_trusted(source, &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "first", 5);
	p11glue_pin_free(pin);
	pg_assert_int_eq(resolve_trusted(source, &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "second", 6);
	p11glue_pin_free(pin);
	/* The last one ends with the input. */
	pg_assert_int_eq(resolve_trusted(source, &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "third", 5);
	p11glue_pin_free(pin);
	/* Nothing left: an error, never an empty PIN that costs a try. */
	assert_trusted_refused(source, "nothing to read");
	close(fds[0]);
	assert_trusted_refused(source, "not an open descriptor");
	assert_trusted_refused("fd:", "not a descriptor number");
	assert_trusted_refused("fd:-1", "not a descriptor number");
	assert_trusted_refused("fd:99999999999", "not a descriptor number");
	assert_refused("fd:0", "unknown PIN source");
}

/* An empty line is an empty PIN; more than 4096 bytes are refused. */
static void
test_fd_limits(void)
{
	char big[4200], source[32];
	p11glue_pin *pin;
	int fds[2];

	pg_assert_int_eq(pipe(fds), 0);
	pg_assert_int_eq(write(fds[1], "\n", 1), 1);
	snprintf(source, sizeof(source), "fd:%d", fds[0]);
	pg_assert_int_eq(resolve_trusted(source, &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "", 0);
	p11glue_pin_free(pin);
	memset(big, '7', sizeof(big));
	pg_assert_int_eq(write(fds[1], big, sizeof(big)), (long long)sizeof(big));
	close(fds[1]);
	assert_trusted_refused(source, "longer than 4096 bytes");
	close(fds[0]);
}

/* A terminal would echo the PIN: refused (when the test has one). */
static void
test_fd_terminal(void)
{
	char source[32];
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);

	if (fd < 0)
		pg_test_skip("no terminal");
	snprintf(source, sizeof(source), "fd:%d", fd);
	assert_trusted_refused(source, "terminal");
	close(fd);
}

static int calls;

static int
callback(const char *source, const char *prompt, void *data, p11glue_pin **pin)
{
	calls++;
	if (strcmp(source, "test:fail") == 0)
		return P11GLUE_ERR_PIN_SOURCE;
	pg_assert_str_eq(prompt, "PIN for test");
	*pin = p11glue_pin_new(data, strlen(data));
	return P11GLUE_OK;
}

static void
test_callbacks(void)
{
	p11glue_pin *pin;

	calls = 0;
	pg_assert_int_eq(p11glue_pin_register("test", callback, "first"), P11GLUE_OK);
	pg_assert_int_eq(p11glue_pin_register("test", callback, "second"), P11GLUE_OK);
	/* The newest registration answers. */
	pg_assert_int_eq(resolve(uri_with_source("test:anything"), &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "second", 6);
	p11glue_pin_free(pin);
	pg_assert_int_eq(resolve(uri_with_source("test:fail"), &pin, NULL), P11GLUE_ERR_PIN_SOURCE);
	p11glue_pin_unregister("test", callback, "second");
	pg_assert_int_eq(resolve(uri_with_source("test:x"), &pin, NULL), P11GLUE_OK);
	assert_pin(pin, "first", 5);
	p11glue_pin_free(pin);
	p11glue_pin_unregister("test", callback, "first");
	pg_assert_int_eq(calls, 3);
	/* A scheme that only shares a prefix does not match. */
	pg_assert_int_eq(p11glue_pin_register("te", callback, "x"), P11GLUE_OK);
	pg_assert_int_eq(resolve(uri_with_source("test:x"), &pin, NULL), P11GLUE_ERR_PIN_SOURCE);
	p11glue_pin_unregister("te", callback, "x");
	pg_assert_int_eq(p11glue_pin_register("", callback, NULL), P11GLUE_ERR_ARGS);
}

static void
test_no_pin(void)
{
	p11glue_pin *pin = (p11glue_pin *)1;
	p11glue_uri *uri = p11glue_uri_new();

	pg_assert_int_eq(resolve(uri, &pin, NULL), P11GLUE_ERR_NOT_FOUND);
	pg_assert_null(pin);
	pg_assert_int_eq(p11glue_pin_resolve(NULL, NULL, 0, &pin, NULL), P11GLUE_ERR_NOT_FOUND);
	pg_assert_int_eq(p11glue_pin_resolve(NULL, NULL, 0, NULL, NULL), P11GLUE_ERR_ARGS);
}

/* With prompting allowed but no terminal, resolving ends cleanly. */
static void
test_prompt_without_terminal(void)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		p11glue_pin *pin;
		/* A new session has no controlling terminal. */
		setsid();
		_exit(p11glue_pin_resolve(NULL, "PIN", P11GLUE_PIN_PROMPT, &pin, NULL) ==
		      P11GLUE_ERR_PIN_CANCELLED ? 0 : 1);
	}
	pg_assert(child > 0);
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status));
	pg_assert_int_eq(WEXITSTATUS(status), 0);
}

static void
test_new_and_free(void)
{
	p11glue_pin *pin = p11glue_pin_new("abc", 3);

	assert_pin(pin, "abc", 3);
	p11glue_pin_free(pin);
	p11glue_pin_free(NULL);
	pin = p11glue_pin_new(NULL, 0);
	assert_pin(pin, "", 0);
	p11glue_pin_free(pin);
}

int
main(int argc, char **argv)
{
	pg_test("pin/value", test_pin_value);
	pg_test("pin/file-sources", test_file_sources);
	pg_test("pin/file-refusals", test_file_refusals);
	pg_test("pin/file-4096", test_file_exactly_4096);
	pg_test("pin/env-source", test_env_source);
	pg_test("pin/fd-source", test_fd_source);
	pg_test("pin/fd-limits", test_fd_limits);
	pg_test("pin/fd-terminal", test_fd_terminal);
	pg_test("pin/callbacks", test_callbacks);
	pg_test("pin/none", test_no_pin);
	pg_test("pin/prompt-without-terminal", test_prompt_without_terminal);
	pg_test("pin/new-and-free", test_new_and_free);
	return pg_test_run(argc, argv);
}
