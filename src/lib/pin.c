/*
 * PINs and PIN sources (include/p11glue/pin.h).
 */
#define _GNU_SOURCE /* asprintf, secure_getenv */
#include "config.h"

#include "common.h"
#include "compat.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIN_FILE_MAX 4096

struct p11glue_pin {
	size_t len;
	unsigned char value[];      /* len bytes and a NUL */
};

p11glue_pin *
p11glue_pin_new(const void *value, size_t len)
{
	p11glue_pin *pin;

	pg_return_val_if_fail(value != NULL || len == 0, NULL);
	if (len > PIN_FILE_MAX * 16)
		return NULL;
	pin = malloc(sizeof(*pin) + len + 1);
	if (pin == NULL)
		return NULL;
	pin->len = len;
	if (len > 0)
		memcpy(pin->value, value, len);
	pin->value[len] = 0;
	return pin;
}

void
p11glue_pin_free(p11glue_pin *pin)
{
	if (pin != NULL)
		pg_free_secret(pin, sizeof(*pin) + pin->len + 1);
}

const unsigned char *
p11glue_pin_value(const p11glue_pin *pin, size_t *len)
{
	pg_return_val_if_fail(pin != NULL, NULL);
	if (len)
		*len = pin->len;
	return pin->value;
}

/* ---------------------------------------------------------------------------
 * Callbacks
 */

typedef struct callback {
	struct callback *next;
	char *scheme;
	p11glue_pin_callback func;
	void *data;
} callback;

static pthread_mutex_t callbacks_lock = PTHREAD_MUTEX_INITIALIZER;
static callback *callbacks;

int
p11glue_pin_register(const char *scheme, p11glue_pin_callback func, void *data)
{
	callback *cb;

	pg_return_val_if_fail(scheme != NULL && *scheme && func != NULL, P11GLUE_ERR_ARGS);
	cb = calloc(1, sizeof(*cb));
	if (cb == NULL || (cb->scheme = strdup(scheme)) == NULL) {
		free(cb);
		return P11GLUE_ERR_NOMEM;
	}
	cb->func = func;
	cb->data = data;
	pthread_mutex_lock(&callbacks_lock);
	cb->next = callbacks;
	callbacks = cb;
	pthread_mutex_unlock(&callbacks_lock);
	return P11GLUE_OK;
}

void
p11glue_pin_unregister(const char *scheme, p11glue_pin_callback func, void *data)
{
	callback **p, *gone;

	pg_return_if_fail(scheme != NULL);
	pthread_mutex_lock(&callbacks_lock);
	for (p = &callbacks; *p; p = &(*p)->next) {
		if (strcmp((*p)->scheme, scheme) == 0 && (*p)->func == func && (*p)->data == data) {
			gone = *p;
			*p = gone->next;
			free(gone->scheme);
			free(gone);
			break;
		}
	}
	pthread_mutex_unlock(&callbacks_lock);
}

/* Finds the newest callback for the scheme of source ("scheme:..."). */
static bool
find_callback(const char *source, callback *found)
{
	const char *colon = strchr(source, ':');
	bool ok = false;

	if (colon == NULL)
		return false;
	pthread_mutex_lock(&callbacks_lock);
	for (callback *cb = callbacks; cb; cb = cb->next) {
		if (strlen(cb->scheme) == (size_t)(colon - source) &&
		    strncmp(cb->scheme, source, (size_t)(colon - source)) == 0) {
			*found = *cb;
			ok = true;
			break;
		}
	}
	pthread_mutex_unlock(&callbacks_lock);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Files
 */

/* Sets *error to "what: why" and returns P11GLUE_ERR_PIN_SOURCE. */
static int
fail(char **error, const char *what, const char *why)
{
	if (error != NULL && asprintf(error, "%s: %s", what, why) < 0)
		*error = NULL;
	return P11GLUE_ERR_PIN_SOURCE;
}

/* "file:/p", "file:///p" or "/p" -> "/p"; NULL for other sources. */
static const char *
file_path(const char *source)
{
	if (strncmp(source, "file://", 7) == 0)
		return source[7] == '/' ? source + 7 : NULL;
	if (strncmp(source, "file:", 5) == 0)
		return source[5] == '/' ? source + 5 : NULL;
	return source[0] == '/' ? source : NULL;
}

/* A PIN from the bytes a source gave: a final newline and carriage
 * return are no part of it. The caller wipes buf. */
static int
make_pin(const unsigned char *buf, size_t len, p11glue_pin **pin)
{
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	*pin = p11glue_pin_new(buf, len);
	return *pin ? P11GLUE_OK : P11GLUE_ERR_NOMEM;
}

static int
read_pin_file(const char *path, p11glue_pin **pin, char **error)
{
	unsigned char *buf;
	size_t len = 0;
	struct stat st;
	int fd, rv;

	fd = pg_open_regular(path, true, &st);
	if (fd < 0)
		return fail(error, path, errno == EINVAL ? "not a regular file" : strerror(errno));
	/* A PIN file readable by others is a leak waiting to happen. */
	if ((st.st_mode & 077) != 0 || (st.st_uid != geteuid() && st.st_uid != 0)) {
		close(fd);
		return fail(error, path,
		            "permissions too open (use chmod 600; owner must be you or root)");
	}
	buf = pg_read_fd(fd, PIN_FILE_MAX, &len);
	rv = buf == NULL && errno == EFBIG ? fail(error, path, "larger than 4096 bytes")
	     : buf == NULL ? fail(error, path, strerror(errno)) : make_pin(buf, len, pin);
	close(fd);
	pg_free_secret(buf, buf ? len + 1 : 0);
	return rv;
}

/* ---------------------------------------------------------------------------
 * The environment and open descriptors (P11GLUE_PIN_TRUSTED_URI only)
 */

/* "env:NAME": the variable's value as it is (none in set-id programs). */
static int
read_pin_env(const char *source, p11glue_pin **pin, char **error)
{
	const char *name = source + 4, *value;

	if (*name == 0 || strchr(name, '=') != NULL)
		return fail(error, source, "not a variable name");
	value = secure_getenv(name);
	if (value == NULL)
		return fail(error, source, "the variable is not set");
	if (strlen(value) > PIN_FILE_MAX)
		return fail(error, source, "longer than 4096 bytes");
	*pin = p11glue_pin_new(value, strlen(value));
	return *pin ? P11GLUE_OK : P11GLUE_ERR_NOMEM;
}

/* The N of "fd:N" (decimal, no sign), or -1. */
static int
fd_number(const char *text)
{
	long n = 0;

	if (*text == 0)
		return -1;
	for (; *text; text++) {
		if (*text < '0' || *text > '9' || n > (INT_MAX - 9) / 10)
			return -1;
		n = n * 10 + (*text - '0');
	}
	return (int)n;
}

/*
 * "fd:N": the descriptor read up to a newline or the end, one byte at a
 * time so that what follows the newline (a second PIN) stays unread. A
 * terminal is refused: it would show the PIN as it is typed.
 */
static int
read_pin_fd(const char *source, p11glue_pin **pin, char **error)
{
	unsigned char buf[PIN_FILE_MAX + 1];
	size_t len = 0;
	bool line = false;
	ssize_t n;
	int fd = fd_number(source + 3), rv;

	if (fd < 0)
		return fail(error, source, "not a descriptor number");
	if (fcntl(fd, F_GETFD) < 0)
		return fail(error, source, "not an open descriptor");
	if (isatty(fd))
		return fail(error, source, "a terminal would show the PIN (leave out the source to "
		            "be asked with echo off)");
	while (len < sizeof(buf)) {
		n = read(fd, buf + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pg_memzero(buf, sizeof(buf));
			return fail(error, source, strerror(errno));
		}
		if (n == 0 || buf[len] == '\n') {
			line = n == 1;
			break;
		}
		len++;
	}
	rv = P11GLUE_OK;
	if (len > PIN_FILE_MAX)
		rv = fail(error, source, "longer than 4096 bytes");
	else if (len == 0 && !line)
		rv = fail(error, source, "nothing to read (a descriptor gives its PIN once)");
	if (rv == P11GLUE_OK)
		rv = make_pin(buf, len, pin);
	pg_memzero(buf, sizeof(buf));
	return rv;
}

/* ---------------------------------------------------------------------------
 * Resolving
 */

static int
prompt_pin(const char *prompt, p11glue_pin **pin)
{
	char buf[1024], text[512];
	long len;
	int rv;

	snprintf(text, sizeof(text), "%s: ", prompt && *prompt ? prompt : "PIN");
	len = pg_tty_read_secret(text, buf, sizeof(buf));
	if (len < 0)
		return P11GLUE_ERR_PIN_CANCELLED;
	*pin = p11glue_pin_new(buf, (size_t)len);
	rv = *pin ? P11GLUE_OK : P11GLUE_ERR_NOMEM;
	pg_memzero(buf, sizeof(buf));
	return rv;
}

/* A pin-source no callback claimed: a file, or with trusted a variable
 * or a descriptor. */
static int
read_source(const char *source, unsigned flags, p11glue_pin **pin, char **error)
{
	const char *path;

	if (strncmp(source, "env:", 4) == 0 || strncmp(source, "fd:", 3) == 0) {
		if (!(flags & P11GLUE_PIN_TRUSTED_URI))
			return fail(error, source, "unknown PIN source here (env: and fd: are taken "
			            "from a program's own command line only; use file:/path)");
		return source[0] == 'e' ? read_pin_env(source, pin, error)
		                        : read_pin_fd(source, pin, error);
	}
	path = file_path(source);
	if (path == NULL)
		return fail(error, source, "unknown PIN source (use file:/path)");
	return read_pin_file(path, pin, error);
}

int
p11glue_pin_resolve(const p11glue_uri *uri, const char *prompt, unsigned flags,
                    p11glue_pin **pin, char **error)
{
	const unsigned char *value;
	callback cb;
	size_t len;

	pg_return_val_if_fail(pin != NULL, P11GLUE_ERR_ARGS);
	*pin = NULL;
	if (error)
		*error = NULL;
	value = uri ? p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, &len) : NULL;
	if (value != NULL) {
		*pin = p11glue_pin_new(value, len);
		return *pin ? P11GLUE_OK : P11GLUE_ERR_NOMEM;
	}
	value = uri ? p11glue_uri_get(uri, P11GLUE_URI_PIN_SOURCE, &len) : NULL;
	if (value != NULL) {
		if (memchr(value, 0, len) != NULL)
			return fail(error, "pin-source", "contains a NUL byte");
		if (find_callback((const char *)value, &cb))
			return cb.func((const char *)value, prompt ? prompt : "PIN", cb.data, pin);
		return read_source((const char *)value, flags, pin, error);
	}
	if (!(flags & P11GLUE_PIN_PROMPT))
		return P11GLUE_ERR_NOT_FOUND;
	return prompt_pin(prompt, pin);
}
