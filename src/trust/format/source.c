/*
 * What one trust source file holds once read (trust-format.h): its
 * entries and the blocks of memory they view. The readers (parse.c,
 * persist.c) add to it; nothing here reads a format.
 */
#include "trust-format.h"

#include <stdlib.h>
#include <string.h>

bool
pg_source_take(pg_source *src, unsigned char *blob)
{
	unsigned char **grown = realloc(src->blobs, (src->n_blobs + 1) * sizeof(*grown));

	if (grown == NULL) {
		free(blob);
		return false;
	}
	src->blobs = grown;
	src->blobs[src->n_blobs++] = blob;
	return true;
}

pg_entry *
pg_source_add(pg_source *src, int kind)
{
	pg_entry *e;

	if (!pg_array_grow(&src->entries, &src->cap_entries, src->n_entries, sizeof(*e), 16))
		return NULL;
	e = &src->entries[src->n_entries++];
	memset(e, 0, sizeof(*e));
	e->kind = (uint8_t)kind;
	e->origin = src->path;
	e->src_trust = (uint8_t)src->src_trust;
	return e;
}

void
pg_source_clear(pg_source *src)
{
	for (size_t i = 0; i < src->n_entries; i++)
		pg_entry_clear(&src->entries[i]);
	free(src->entries);
	for (size_t i = 0; i < src->n_blobs; i++)
		free(src->blobs[i]);
	free(src->blobs);
	free(src->crls);
	free(src->data);
	src->entries = NULL;
	src->n_entries = src->cap_entries = 0;
	src->n_sections = 0;
	src->blobs = NULL;
	src->n_blobs = 0;
	src->crls = NULL;
	src->n_crls = 0;
	src->data = NULL;
}
