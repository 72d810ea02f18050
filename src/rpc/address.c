/*
 * A user's socket directory (see address.h).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "address.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

char *
pg_rpc_socket_dir(const char **why)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	char *dir;
	int rc;

	*why = "out of memory";
	if (runtime && *runtime)
		rc = asprintf(&dir, "%s/p11glue", runtime);
	else
		rc = asprintf(&dir, "/tmp/p11glue-%lu", (unsigned long)getuid());
	if (rc < 0)
		return NULL;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		*why = "cannot be made";
		free(dir);
		return NULL;
	}
	/* Ours and private, or not used at all: in /tmp anyone could have
	 * made it first. */
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		*why = "is not a private directory of this user";
		free(dir);
		return NULL;
	}
	return dir;
}

char *
pg_rpc_socket_path(const char *name, const char **why)
{
	char *dir = pg_rpc_socket_dir(why), *path = NULL;

	if (dir != NULL && asprintf(&path, "%s/%s", dir, name) < 0) {
		*why = "out of memory";
		path = NULL;
	}
	free(dir);
	return path;
}
