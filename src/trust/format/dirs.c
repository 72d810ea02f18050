/*
 * Directories for the trust files written (trust-format.h): the trust
 * module's writable directory, a user's extracted files, the CRLs of a
 * decision's location.
 */
#include "trust-format.h"

#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool
pg_trust_make_dirs(const char *dir, mode_t mode, bool exact_mode)
{
	char *copy = strdup(dir);
	struct stat st;
	bool ok = copy != NULL;

	/* Each missing component, from the top (mkdir does not follow a
	 * link planted where a directory is expected). */
	for (char *p = copy ? copy + 1 : NULL; ok; p++) {
		bool last = *p == 0;
		if (*p != '/' && !last)
			continue;
		*p = 0;
		if (mkdir(copy, mode) == 0)
			/* Readable by whom the mode says, whatever the umask. */
			ok = !exact_mode || chmod(copy, mode) == 0;
		else if (errno != EEXIST || stat(copy, &st) != 0 || !S_ISDIR(st.st_mode))
			ok = false;
		if (last)
			break;
		*p = '/';
	}
	if (!ok)
		pg_message("%s: cannot make the directory: %s", dir, strerror(errno));
	free(copy);
	return ok;
}
