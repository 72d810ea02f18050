/*
 * Internal helpers shared by every part of p11glue (never installed).
 * Names here are pg_<noun>_<verb>; nothing here is exported from the
 * shared library.
 */
#ifndef PG_COMMON_H
#define PG_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/stat.h>

#define PG_N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))
#define PG_MUST_CHECK __attribute__((warn_unused_result))
#define PG_PRINTF(f, a) __attribute__((format(printf, f, a)))

/*
 * Exit codes of the p11glue command; the libraries behind the commands
 * (token access, importers, setup, trust tools) return them too, and
 * scripts rely on them.
 */
enum {
	PG_EXIT_OK = 0,      /* success */
	PG_EXIT_FAIL = 1,    /* error in input or operation */
	PG_EXIT_USAGE = 2    /* bad command line */
};

/*
 * Reports a caller bug (a broken precondition) on stderr and returns.
 * Used at API boundaries; a module never aborts the process it runs in.
 */
void pg_precondition_failed(const char *func, const char *expr);

#define pg_return_val_if_fail(expr, val)                         \
	do {                                                         \
		if (!(expr)) {                                           \
			pg_precondition_failed(__func__, #expr);             \
			return (val);                                        \
		}                                                        \
	} while (0)

#define pg_return_if_fail(expr)                                  \
	do {                                                         \
		if (!(expr)) {                                           \
			pg_precondition_failed(__func__, #expr);             \
			return;                                              \
		}                                                        \
	} while (0)

/* Writes "p11glue: <message>" to stderr. */
void pg_message(const char *fmt, ...) PG_PRINTF(1, 2);

/* Wipes len bytes at p; the compiler may not drop it. p may be NULL. */
void pg_memzero(void *p, size_t len);

/* Constant-time comparison of two equally long byte strings. */
bool pg_ct_equal(const void *a, const void *b, size_t len);

/* Wipes then frees len bytes at p (NULL is fine). */
void pg_free_secret(void *p, size_t len);

/*
 * A growable byte buffer. A failed allocation sets `failed`, after which
 * every add is a no-op, so a run of adds is checked once at the end.
 * The data is always followed by a NUL that len does not count.
 */
typedef struct {
	unsigned char *data;
	size_t len;
	size_t cap;
	bool failed;
} pg_buf;

void pg_buf_init(pg_buf *buf);
/* Wipes and frees the contents; buf may be reused after pg_buf_init. */
void pg_buf_clear(pg_buf *buf);
void pg_buf_add(pg_buf *buf, const void *data, size_t len);
void pg_buf_add_byte(pg_buf *buf, unsigned char byte);
void pg_buf_add_str(pg_buf *buf, const char *str);
void pg_buf_printf(pg_buf *buf, const char *fmt, ...) PG_PRINTF(2, 3);
void pg_buf_vprintf(pg_buf *buf, const char *fmt, va_list ap) PG_PRINTF(2, 0);
/*
 * Hands the contents to the caller (free with free()) and empties buf.
 * Returns NULL if any add failed (the contents are then wiped).
 */
char *pg_buf_steal(pg_buf *buf, size_t *len);

/*
 * Makes room for one more element in a growable array: items points to
 * the array's pointer (T **), *cap is its size in elements of size bytes
 * each and n of them are in use. When it is full it doubles (first to
 * first elements). False when out of memory or too large (the array is
 * unchanged).
 */
bool pg_array_grow(void *items, size_t *cap, size_t n, size_t size, size_t first) PG_MUST_CHECK;

/* The text fmt formats to, in a new string (free()); NULL when out of
 * memory or for an encoding error. */
char *pg_strdup_vprintf(const char *fmt, va_list ap) PG_PRINTF(1, 0);

/* A buffer's text, "" when nothing was added. */
static inline const char *
pg_buf_text(const pg_buf *buf)
{
	return buf->data ? (const char *)buf->data : "";
}

/*
 * Steps through the lines of a text: *line and *len get the next line
 * (without its newline) and *text moves past it; false at the end.
 */
bool pg_next_line(const char **text, const char **line, size_t *len);

/* Whether the len bytes at s are a name: at least one, each an ASCII
 * letter or digit or one of the characters of punct. */
bool pg_is_name(const char *s, size_t len, const char *punct);

/* The value of a hex digit (either case), or -1. */
int pg_hex_value(unsigned char c);

/* Copies text into a fixed-size PKCS#11 text field (CK_UTF8CHAR[size]),
 * cut at size bytes and padded with blanks, without a NUL. */
void pg_pad(unsigned char *field, size_t size, const char *text);

/* Duplicates len bytes and appends a NUL; NULL when out of memory. */
unsigned char *pg_memdup0(const void *data, size_t len);

/*
 * Opens path for reading (close-on-exec, never as a controlling
 * terminal) without blocking on a FIFO or a device, and only when it is
 * a regular file; with nofollow a final symbolic link is refused too.
 * Returns the descriptor, or -1 with errno set (EINVAL: not a regular
 * file). st (may be NULL) gets the file's status.
 */
int pg_open_regular(const char *path, bool nofollow, struct stat *st);

/*
 * Reads what is left of fd, at most max bytes, into a new buffer with a
 * NUL after it (not counted in *len); free() (pg_free_secret for
 * secrets: the buffer is *len + 1 bytes). NULL with errno set: EFBIG
 * when there is more than max, else the system's code; what was read
 * is wiped then.
 */
unsigned char *pg_read_fd(int fd, size_t max, size_t *len);

/* ---------------------------------------------------------------------------
 * Writing a file the user named (outfile.c)
 */
typedef struct {
	FILE *fp;                    /* where to write: the file, or stdout for "-" */
	char *path;                  /* the file named; NULL for standard output */
	char *tmp;                   /* the temporary that replaces it, or NULL */
	bool created;                /* path itself was created */
	bool link;                   /* tmp is linked to path at commit (a new file) */
} pg_outfile;

/*
 * Opens path ("-": standard output) for writing. A new file is created
 * with mode (before the umask) and O_EXCL, so nothing that is there
 * (a file, a link, even a dangling one) is written to. Only with
 * overwrite, an existing regular file is replaced: a temporary file in
 * the same directory, with the file's permissions, is renamed over it at
 * pg_outfile_commit. A symbolic link, a FIFO, a device or a directory at
 * path are always refused. Prints why and returns false on failure.
 */
bool pg_outfile_open(pg_outfile *f, const char *path, bool overwrite, mode_t mode);

/*
 * As pg_outfile_open, but a new file too appears at path only whole: it
 * is written under a temporary name beside it (mode mode) and linked
 * into place at pg_outfile_commit, which refuses then if something took
 * path meanwhile. A program killed on its way leaves no partial file
 * by that name, only the temporary (".NAME.XXXXXX").
 */
bool pg_outfile_open_whole(pg_outfile *f, const char *path, bool overwrite, mode_t mode);

/*
 * Flushes and closes f (standard output: flushed only) and puts the file
 * in place. On failure says why, removes what was written and returns
 * false. f is cleared either way.
 */
bool pg_outfile_commit(pg_outfile *f);

/* Removes what was written (the new file or the temporary); f is cleared.
 * A cleared f is fine. */
void pg_outfile_abort(pg_outfile *f);

/* Writes all of data to fd (short writes and EINTR resumed); false on an
 * error (errno says which). */
bool pg_write_all(int fd, const void *data, size_t len);

/*
 * Replaces path whole with data, mode mode: a temporary file beside it,
 * synced, renamed over it, so that readers see the old file or the new
 * one, never a part. path has a directory part. False after a message.
 */
bool pg_replace_file(const char *path, const void *data, size_t len, mode_t mode);

/* Removes path and, for a directory, all below it (not following links;
 * read-only directories made writable first). Errors are ignored. */
void pg_remove_tree(const char *path);

/*
 * A file of the build tree this program runs from (rel is relative to
 * src/, as "store/p11glue-store.so"), or NULL when there is none (an
 * installed program). Linux: /proc/self/exe. free().
 */
char *pg_build_tree_file(const char *rel);

/*
 * Detaches a forked server from the caller's session and terminal: a
 * new session (setsid), "/" as the working directory, standard input,
 * output and error on /dev/null. False when the directory cannot be
 * changed.
 */
bool pg_detach(void);

/*
 * A server's signals as bytes on a pipe (the signal's number each), so
 * that its poll loop sees them: SIGTERM, SIGINT and SIGHUP, and SIGCHLD
 * with child; SIGPIPE is ignored. Returns the pipe's read end
 * (close-on-exec), -1 after a message when no pipe could be made.
 */
int pg_signal_pipe(bool child);

/* In a process forked from such a server: the pipe closed and the
 * signals back to their defaults. */
void pg_signal_pipe_close(void);

#endif /* PG_COMMON_H */
