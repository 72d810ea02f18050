/*
 * Writing a file the user named on the command line (common.h): never
 * over an existing file unless asked, never through a symbolic link, and
 * a replaced file is complete or untouched.
 */
#define _GNU_SOURCE
#include "config.h"

#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Says why path cannot be written, from what lstat finds there. */
static void
refuse_existing(const char *path, bool overwrite)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		pg_message("%s: a symbolic link; not written through (name its target, or "
		           "remove the link)", path);
	else if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		pg_message("%s: exists and is not a regular file; not written", path);
	else if (!overwrite)
		pg_message("%s: exists already; not overwritten (--overwrite replaces it)", path);
	else
		pg_message("%s: exists already", path);
}

/* A new file at path, created here (O_EXCL: nothing there, not even a
 * dangling link). */
static bool
open_new(pg_outfile *f, const char *path, bool overwrite, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);

	if (fd < 0) {
		if (errno == EEXIST)
			refuse_existing(path, overwrite);
		else
			pg_message("%s: %s", path, strerror(errno));
		return false;
	}
	f->fp = fdopen(fd, "w");
	if (f->fp == NULL) {
		pg_message("%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return false;
	}
	f->created = true;
	return true;
}

/* A temporary file beside path, to be renamed over it or linked to it;
 * it gets mode (a replaced file's permissions). */
static bool
open_replacement(pg_outfile *f, const char *path, mode_t mode)
{
	char *copy = strdup(path), *dir, *base;
	int fd = -1;

	if (copy == NULL)
		goto nomem;
	dir = dirname(copy);
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : (char *)path;
	if (asprintf(&f->tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
		f->tmp = NULL;
		goto nomem;
	}
	free(copy);
	fd = mkostemp(f->tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, mode & 07777) != 0 || (f->fp = fdopen(fd, "w")) == NULL) {
		pg_message("%s: %s", f->tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(f->tmp);
		}
		free(f->tmp);
		f->tmp = NULL;
		return false;
	}
	return true;
nomem:
	free(copy);
	pg_message("out of memory");
	return false;
}

bool
pg_outfile_open(pg_outfile *f, const char *path, bool overwrite, mode_t mode)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (strcmp(path, "-") == 0) {
		f->fp = stdout;
		return true;
	}
	f->path = strdup(path);
	if (f->path == NULL) {
		pg_message("out of memory");
		return false;
	}
	if (!overwrite || (lstat(path, &st) != 0 && errno == ENOENT)) {
		if (open_new(f, path, overwrite, mode))
			return true;
	} else if (!S_ISREG(st.st_mode)) {
		refuse_existing(path, overwrite);
	} else if (open_replacement(f, path, st.st_mode)) {
		return true;
	}
	free(f->path);
	f->path = NULL;
	return false;
}

bool
pg_outfile_open_whole(pg_outfile *f, const char *path, bool overwrite, mode_t mode)
{
	struct stat st;
	bool exists;
	mode_t mask;

	if (strcmp(path, "-") == 0)
		return pg_outfile_open(f, path, overwrite, mode);
	memset(f, 0, sizeof(*f));
	exists = lstat(path, &st) == 0 || errno != ENOENT;
	if (exists && (!overwrite || !S_ISREG(st.st_mode))) {
		refuse_existing(path, overwrite);
		return false;
	}
	if ((f->path = strdup(path)) == NULL) {
		pg_message("out of memory");
		return false;
	}
	if (!exists) {
		mask = umask(0);
		umask(mask);
		st.st_mode = mode & ~mask;
	}
	if (!open_replacement(f, path, st.st_mode)) {
		free(f->path);
		f->path = NULL;
		return false;
	}
	f->link = !exists;
	return true;
}

/* Puts the finished temporary in place: renamed over the file it
 * replaces, or linked to a name that nothing has taken. */
static bool
put_in_place(pg_outfile *f)
{
	bool ok;

	if (!f->link)
		return rename(f->tmp, f->path) == 0;
	ok = link(f->tmp, f->path) == 0;
	if (!ok && errno == EEXIST) {
		refuse_existing(f->path, false);
		unlink(f->tmp);
		errno = EEXIST;
		return false;
	}
	if (ok)
		unlink(f->tmp);
	return ok;
}

bool
pg_outfile_commit(pg_outfile *f)
{
	bool ok;

	if (f->fp == NULL)
		return false;
	if (f->path == NULL) {
		ok = fflush(f->fp) == 0;
		if (!ok)
			pg_message("standard output: %s", strerror(errno));
		f->fp = NULL;
		return ok;
	}
	ok = fflush(f->fp) == 0 && fsync(fileno(f->fp)) == 0;
	ok = fclose(f->fp) == 0 && ok;
	f->fp = NULL;
	if (ok && f->tmp != NULL) {
		ok = put_in_place(f);
		if (!ok && errno == EEXIST) {
			free(f->tmp);
			free(f->path);
			memset(f, 0, sizeof(*f));
			return false;
		}
	}
	if (!ok) {
		pg_message("%s: %s", f->path, strerror(errno));
		unlink(f->tmp ? f->tmp : f->path);
	}
	free(f->tmp);
	free(f->path);
	memset(f, 0, sizeof(*f));
	return ok;
}

void
pg_outfile_abort(pg_outfile *f)
{
	if (f->fp != NULL && f->path != NULL) {
		fclose(f->fp);
		unlink(f->tmp ? f->tmp : f->path);
	}
	free(f->tmp);
	free(f->path);
	memset(f, 0, sizeof(*f));
}
