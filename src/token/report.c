/*
 * What a command did, kept for its output (token.h): the libraries
 * below the command line add to it, the command prints it as lines or
 * as JSON.
 */
#include "config.h"

#include "token.h"

#include <stdlib.h>
#include <string.h>

void
pg_report_clear(pg_report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].uri);
		free(r->items[i].name);
	}
	free(r->items);
	memset(r, 0, sizeof(*r));
}

void
pg_report_add(pg_report *r, const char *what, char *uri, const char *name)
{
	char *name_copy = name ? strdup(name) : NULL;

	if (r == NULL || r->failed || (name != NULL && name_copy == NULL))
		goto fail;
	if (!pg_array_grow(&r->items, &r->cap, r->n, sizeof(*r->items), 8))
		goto fail;
	r->items[r->n].what = what;
	r->items[r->n].uri = uri;
	r->items[r->n].name = name_copy;
	r->n++;
	return;
fail:
	if (r != NULL)
		r->failed = true;
	free(uri);
	free(name_copy);
}

void
pg_report_object(pg_report *r, const char *what, pg_keytoken *kt, CK_OBJECT_HANDLE obj,
                 const char *name)
{
	pg_report_add(r, what, pg_keytoken_object_uri(kt, obj), name);
}

size_t
pg_report_count(const pg_report *r, const char *what)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += strcmp(r->items[i].what, what) == 0;
	return n;
}
