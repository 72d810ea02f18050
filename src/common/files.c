/*
 * Files, read and written the careful way (common.h): regular files read
 * without waiting on a FIFO, whole writes, replacements that are complete
 * or not there, trees removed.
 */
#define _GNU_SOURCE
#include "config.h"

#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
pg_open_regular(const char *path, bool nofollow, struct stat *st)
{
	struct stat own;
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0);
	int fd = open(path, flags);

	if (st == NULL)
		st = &own;
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		int saved = S_ISREG(st->st_mode) ? errno : EINVAL;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

unsigned char *
pg_read_fd(int fd, size_t max, size_t *len)
{
	unsigned char *data = NULL, *more;
	size_t got = 0, cap = 0;
	ssize_t n;

	*len = 0;
	for (;;) {
		if (cap - got < 2) {
			size_t want = cap == 0 ? 4096 : cap * 2;
			if (cap > max + 1) {
				pg_free_secret(data, cap);
				errno = EFBIG;
				return NULL;
			}
			more = malloc(want);
			if (more == NULL) {
				pg_free_secret(data, cap);
				errno = ENOMEM;
				return NULL;
			}
			if (got > 0)
				memcpy(more, data, got);
			pg_free_secret(data, cap);
			data = more;
			cap = want;
		}
		n = read(fd, data + got, cap - got - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			pg_free_secret(data, cap);
			errno = saved;
			return NULL;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max) {
			pg_free_secret(data, cap);
			errno = EFBIG;
			return NULL;
		}
	}
	data[got] = 0;
	*len = got;
	return data;
}

bool
pg_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

bool
pg_replace_file(const char *path, const void *data, size_t len, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char *tmp = NULL;
	int fd = -1;
	bool ok;

	if (slash == NULL || asprintf(&tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path,
	                              slash + 1) < 0) {
		tmp = NULL;
		errno = slash == NULL ? EINVAL : ENOMEM;
		ok = false;
	} else {
		fd = mkstemp(tmp);
		ok = fd >= 0 && fchmod(fd, mode) == 0 && pg_write_all(fd, data, len) &&
		     fsync(fd) == 0;
		if (fd >= 0)
			ok = close(fd) == 0 && ok;
		ok = ok && rename(tmp, path) == 0;
	}
	if (!ok) {
		pg_message("%s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	free(tmp);
	return ok;
}

void
pg_remove_tree(const char *path)
{
	struct stat st;
	struct dirent *e;
	DIR *dir;
	char *child;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	if ((dir = opendir(path)) != NULL) {
		while ((e = readdir(dir)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (asprintf(&child, "%s/%s", path, e->d_name) < 0)
				continue;
			pg_remove_tree(child);
			free(child);
		}
		closedir(dir);
	}
	rmdir(path);
}
