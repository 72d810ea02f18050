/*
 * The default writable trust directories (trust-dirs.h).
 */
#define _GNU_SOURCE /* secure_getenv */
#include "config.h"

#include "compat.h"
#include "trust-dirs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
pg_trust_system_dir(void)
{
	return P11GLUE_SYSTEM_TRUST_DIR;
}

char *
pg_trust_user_path(const char *leaf)
{
	const char *base = secure_getenv("XDG_DATA_HOME");
	const char *middle = "";
	char *path;
	size_t len;

	/* A set-id program's HOME and XDG_DATA_HOME are its caller's: files
	 * there must not decide what it trusts. */
	if (pg_is_privileged())
		return NULL;
	if (base == NULL || base[0] != '/') {
		base = pg_home_dir();
		middle = "/.local/share";
	}
	if (base == NULL)
		return NULL;
	len = strlen(base) + strlen(middle) + strlen(leaf) + sizeof("/p11glue/");
	if ((path = malloc(len)) != NULL)
		snprintf(path, len, "%s%s/p11glue/%s", base, middle, leaf);
	return path;
}

char *
pg_trust_user_dir(void)
{
	return pg_trust_user_path("trust");
}
