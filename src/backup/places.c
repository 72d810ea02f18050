/*
 * Where a user's p11glue state lives, and its files (places.h).
 */
#define _GNU_SOURCE /* secure_getenv, asprintf */
#include "config.h"

#include "places.h"
#include "compat.h"
#include "trust-dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 4
#define SMALL_MAX (1u << 20)

static char *
nomem(void)
{
	pg_message("out of memory");
	return NULL;
}

static char *
copy_text(const char *s)
{
	char *copy = strdup(s);

	return copy ? copy : nomem();
}

char *
pg_places_store(const char *given)
{
	const char *env = secure_getenv("P11GLUE_STORE_DIR");
	char *dir;

	if (given != NULL)
		return copy_text(given);
	if (env != NULL && env[0] != 0)
		return copy_text(env);
	dir = pg_trust_user_path("store");
	if (dir == NULL)
		pg_message("no store directory (set P11GLUE_STORE_DIR or HOME)");
	return dir;
}

char *
pg_places_trust(void)
{
	char *dir = pg_trust_user_dir();

	if (dir == NULL)
		pg_message("no trust directory of yours (set HOME)");
	return dir;
}

char *
pg_places_registry(void)
{
	const char *conf = getenv("P11GLUE_CONFIG");
	const char *home = pg_is_privileged() ? NULL : pg_home_dir();
	char *dir = NULL;

	if (conf != NULL && conf[0] != 0)
		return copy_text(conf);
	if (home == NULL) {
		pg_message("no registry directory of yours (set HOME)");
		return NULL;
	}
	if (asprintf(&dir, "%s/.config/pkcs11", home) < 0)
		return nomem();
	return dir;
}

void
pg_places_list_clear(pg_places_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

static bool
list_add(pg_places_list *l, char *name)
{
	if (name == NULL || !pg_array_grow(&l->names, &l->cap, l->n, sizeof(*l->names), 8)) {
		free(name);
		nomem();
		return false;
	}
	l->names[l->n++] = name;
	return true;
}

/* Token files by their number, others by name. */
static int
by_token_number(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	unsigned long m = strtoul(x + 6, NULL, 10), n = strtoul(y + 6, NULL, 10);

	return m < n ? -1 : m > n;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool
pg_places_tokens(const char *dir, pg_places_list *l)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char *path;
	bool ok = true;

	memset(l, 0, sizeof(*l));
	if (d == NULL) {
		if (errno == ENOENT)
			return true;
		pg_message("%s: %s", dir, strerror(errno));
		return false;
	}
	while (ok && (e = readdir(d)) != NULL) {
		if (!pg_backup_name_ok(PG_BACKUP_TOKEN, e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		ok = (path = strdup(e->d_name)) != NULL && list_add(l, path);
	}
	closedir(d);
	/* (qsort takes no NULL array, even empty.) */
	if (ok && l->n > 1)
		qsort(l->names, l->n, sizeof(*l->names), by_token_number);
	return ok;
}

static bool
walk(const char *root, const char *rel, int depth, pg_places_list *l)
{
	char *path = NULL, *child;
	struct dirent *e;
	struct stat st;
	DIR *d;
	bool ok = true;

	if (asprintf(&path, "%s%s%s", root, rel[0] ? "/" : "", rel) < 0)
		return nomem() != NULL;
	d = opendir(path);
	if (d == NULL) {
		ok = errno == ENOENT && depth == 0;
		if (!ok)
			pg_message("%s: %s", path, strerror(errno));
		free(path);
		return ok;
	}
	while (ok && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (asprintf(&child, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) < 0)
			child = NULL;
		if (child == NULL) {
			ok = nomem() != NULL;
		} else if (S_ISDIR(st.st_mode) && depth + 1 < MAX_DEPTH) {
			ok = walk(root, child, depth + 1, l);
			free(child);
		} else if (S_ISREG(st.st_mode) && pg_backup_name_ok(PG_BACKUP_TRUST, child)) {
			ok = list_add(l, child);
		} else {
			free(child);
		}
	}
	closedir(d);
	free(path);
	return ok;
}

bool
pg_places_files(const char *dir, pg_places_list *l)
{
	memset(l, 0, sizeof(*l));
	if (!walk(dir, "", 0, l)) {
		pg_places_list_clear(l);
		return false;
	}
	if (l->n > 1)
		qsort(l->names, l->n, sizeof(*l->names), by_name);
	return true;
}

bool
pg_places_read(const char *root, const char *rel, pg_buf *buf, uint32_t *mode)
{
	char *path = NULL;
	struct stat st;
	unsigned char *data;
	size_t len;
	int fd;

	if (asprintf(&path, "%s/%s", root, rel) < 0)
		return nomem() != NULL;
	fd = pg_open_regular(path, true, &st);
	data = fd >= 0 ? pg_read_fd(fd, SMALL_MAX, &len) : NULL;
	if (data == NULL) {
		pg_message("%s: %s", path, errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return false;
	}
	close(fd);
	free(path);
	pg_buf_init(buf);
	pg_buf_add(buf, data, len);
	free(data);
	*mode = st.st_mode & 07777;
	return !buf->failed || nomem() != NULL;
}

int
pg_places_compare(const char *root, const char *rel, const pg_buf *data)
{
	char *path = NULL;
	unsigned char *have;
	size_t len;
	int fd, same;

	if (asprintf(&path, "%s/%s", root, rel) < 0)
		return 0;
	fd = pg_open_regular(path, true, NULL);
	free(path);
	if (fd < 0)
		return errno == ENOENT ? -1 : 0;
	have = pg_read_fd(fd, SMALL_MAX, &len);
	close(fd);
	same = have != NULL && len == data->len && (len == 0 || memcmp(have, data->data, len) == 0);
	free(have);
	return same;
}

bool
pg_places_mkdirs(const char *dir)
{
	char *copy = strdup(dir);
	struct stat st;
	bool ok = copy != NULL;

	for (char *p = copy ? copy + 1 : NULL; ok; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
			pg_message("%s: %s", copy, strerror(errno));
			ok = false;
		} else if (lstat(copy, &st) != 0 || !S_ISDIR(st.st_mode)) {
			pg_message("%s: not a directory", copy);
			ok = false;
		}
		*p = c;
		if (c == 0)
			break;
	}
	if (copy == NULL)
		nomem();
	free(copy);
	return ok;
}

bool
pg_places_write(const char *root, const char *rel, const pg_buf *data, uint32_t mode)
{
	char *path = NULL, *slash;
	bool ok;

	if (asprintf(&path, "%s/%s", root, rel) < 0)
		return nomem() != NULL;
	slash = strrchr(path, '/');
	*slash = 0;
	ok = pg_places_mkdirs(path);
	*slash = '/';
	ok = ok && pg_replace_file(path, data->data ? data->data : (const unsigned char *)"",
	                           data->len, mode & 0777);
	free(path);
	return ok;
}
