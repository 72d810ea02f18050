/*
 * Internal helpers: messages, secret wiping, the growable buffer, detaching
 * a server and its signals.
 */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include "common.h"

#include <p11glue/p11glue.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
pg_precondition_failed(const char *func, const char *expr)
{
	pg_message("%s: precondition failed: %s", func, expr);
}

void
pg_message(const char *fmt, ...)
{
	char line[1024], *text = line;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line)) {
		/* A long message (paths, lists) is printed whole. */
		text = malloc((size_t)n + 1);
		if (text != NULL) {
			va_start(ap, fmt);
			vsnprintf(text, (size_t)n + 1, fmt, ap);
			va_end(ap);
		} else {
			text = line;
		}
	}
	/* One write per message, so lines from threads do not interleave. */
	fprintf(stderr, "p11glue: %s\n", text);
	if (text != line)
		free(text);
}

void
pg_memzero(void *p, size_t len)
{
	if (p == NULL || len == 0)
		return;
#if HAVE_EXPLICIT_BZERO
	explicit_bzero(p, len);
#else
	volatile unsigned char *v = p;
	while (len--)
		*v++ = 0;
#endif
}

bool
pg_ct_equal(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a;
	const volatile unsigned char *y = b;
	unsigned char diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

void
pg_free_secret(void *p, size_t len)
{
	pg_memzero(p, len);
	free(p);
}

bool
pg_is_name(const char *s, size_t len, const char *punct)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c != 0 && strchr(punct, c) != NULL)))
			return false;
	}
	return true;
}

int
pg_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

unsigned char *
pg_memdup0(const void *data, size_t len)
{
	unsigned char *copy;

	if (len == SIZE_MAX)
		return NULL;
	copy = malloc(len + 1);
	if (copy == NULL)
		return NULL;
	if (len > 0)
		memcpy(copy, data, len);
	copy[len] = 0;
	return copy;
}

void
pg_buf_init(pg_buf *buf)
{
	memset(buf, 0, sizeof(*buf));
}

void
pg_buf_clear(pg_buf *buf)
{
	if (buf == NULL)
		return;
	pg_free_secret(buf->data, buf->cap);
	pg_buf_init(buf);
}

/* Makes room for extra more bytes plus the trailing NUL. */
static bool
buf_reserve(pg_buf *buf, size_t extra)
{
	size_t want, cap;
	unsigned char *data;

	if (buf->failed)
		return false;
	if (extra > SIZE_MAX / 2 - buf->len - 1) {
		buf->failed = true;
		return false;
	}
	want = buf->len + extra + 1;
	if (want <= buf->cap)
		return true;
	cap = buf->cap ? buf->cap : 64;
	while (cap < want)
		cap *= 2;
	/* Grow by copy, not realloc, so the old block can be wiped. */
	data = malloc(cap);
	if (data == NULL) {
		buf->failed = true;
		return false;
	}
	if (buf->len > 0)
		memcpy(data, buf->data, buf->len);
	pg_free_secret(buf->data, buf->cap);
	buf->data = data;
	buf->cap = cap;
	return true;
}

void
pg_buf_add(pg_buf *buf, const void *data, size_t len)
{
	if (!buf_reserve(buf, len))
		return;
	if (len > 0)
		memcpy(buf->data + buf->len, data, len);
	buf->len += len;
	buf->data[buf->len] = 0;
}

void
pg_buf_add_byte(pg_buf *buf, unsigned char byte)
{
	pg_buf_add(buf, &byte, 1);
}

void
pg_buf_add_str(pg_buf *buf, const char *str)
{
	pg_buf_add(buf, str, strlen(str));
}

void
pg_buf_vprintf(pg_buf *buf, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0) {
		buf->failed = true;
		return;
	}
	if (!buf_reserve(buf, (size_t)n))
		return;
	vsnprintf((char *)buf->data + buf->len, (size_t)n + 1, fmt, ap);
	buf->len += (size_t)n;
}

void
pg_buf_printf(pg_buf *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(buf, fmt, ap);
	va_end(ap);
}

char *
pg_strdup_vprintf(const char *fmt, va_list ap)
{
	pg_buf b;

	pg_buf_init(&b);
	pg_buf_vprintf(&b, fmt, ap);
	return pg_buf_steal(&b, NULL);
}

char *
pg_buf_steal(pg_buf *buf, size_t *len)
{
	char *data;

	if (buf->failed) {
		pg_buf_clear(buf);
		return NULL;
	}
	if (!buf_reserve(buf, 0)) {
		pg_buf_clear(buf);
		return NULL;
	}
	data = (char *)buf->data;
	if (len != NULL)
		*len = buf->len;
	pg_buf_init(buf);
	return data;
}

const char *
p11glue_strerror(int result)
{
	switch (result) {
	case P11GLUE_OK:
		return "success";
	case P11GLUE_ERR_NOMEM:
		return "out of memory";
	case P11GLUE_ERR_ARGS:
		return "invalid arguments";
	case P11GLUE_ERR_URI_SCHEME:
		return "not a PKCS#11 URI (scheme is not \"pkcs11:\")";
	case P11GLUE_ERR_URI_SYNTAX:
		return "bad URI syntax";
	case P11GLUE_ERR_URI_NAME:
		return "unknown URI attribute";
	case P11GLUE_ERR_URI_VALUE:
		return "invalid URI attribute value";
	case P11GLUE_ERR_URI_ENCODING:
		return "bad percent-encoding";
	case P11GLUE_ERR_URI_DUPLICATE:
		return "URI attribute given more than once";
	case P11GLUE_ERR_MODULE:
		return "a critical PKCS#11 module failed to load";
	case P11GLUE_ERR_NOT_FOUND:
		return "not found";
	case P11GLUE_ERR_PIN_SOURCE:
		return "cannot read the PIN source";
	case P11GLUE_ERR_PIN_CANCELLED:
		return "no PIN was entered";
	default:
		return "unknown error";
	}
}

const char *
p11glue_version(void)
{
	return PACKAGE_VERSION;
}

char *
pg_build_tree_file(const char *rel)
{
	char exe[PATH_MAX], *slash, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	/* The program is src/tools/p11glue: rel is taken from src/. */
	slash = strrchr(exe, '/');
	if (slash == NULL)
		return NULL;
	*slash = 0;
	len = strlen(exe) + strlen(rel) + sizeof("/../");
	path = malloc(len);
	if (path == NULL)
		return NULL;
	snprintf(path, len, "%s/../%s", exe, rel);
	if (access(path, R_OK) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

void
pg_pad(unsigned char *field, size_t size, const char *text)
{
	size_t n = strlen(text);

	memset(field, ' ', size);
	memcpy(field, text, n < size ? n : size);
}

bool
pg_array_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
	void *array, *grown;
	size_t more;

	if (n < *cap)
		return true;
	more = *cap ? *cap * 2 : first;
	if (more < *cap || size == 0 || more > SIZE_MAX / size)
		return false;
	memcpy(&array, items, sizeof(array));
	grown = realloc(array, more * size);
	if (grown == NULL)
		return false;
	memcpy(items, &grown, sizeof(grown));
	*cap = more;
	return true;
}

bool
pg_next_line(const char **text, const char **line, size_t *len)
{
	const char *p = *text;

	if (p == NULL || *p == 0)
		return false;
	*line = p;
	*len = strcspn(p, "\n");
	*text = p + *len + (p[*len] == '\n');
	return true;
}

bool
pg_detach(void)
{
	int null;

	setsid();
	if (chdir("/") != 0)
		return false;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
			dup2(null, fd);
		if (null > STDERR_FILENO)
			close(null);
	}
	return true;
}

static int signal_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (write(signal_pipe[1], &c, 1) < 0)
		c = 0;
	errno = saved;
}

int
pg_signal_pipe(bool child)
{
	if (pipe2(signal_pipe, O_CLOEXEC) != 0) {
		pg_message("cannot make the signal pipe: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_signal);
	if (child)
		signal(SIGCHLD, on_signal);
	return signal_pipe[0];
}

void
pg_signal_pipe_close(void)
{
	close(signal_pipe[0]);
	close(signal_pipe[1]);
	signal_pipe[0] = signal_pipe[1] = -1;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}
