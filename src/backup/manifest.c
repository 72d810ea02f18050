/*
 * What a backup holds or a restore did (backup.h).
 */
#include "config.h"

#include "backup.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
pg_backup_manifest_clear(pg_backup_manifest *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->items[i].name);
		free(m->items[i].state);
		free(m->items[i].detail);
		free(m->items[i].staged);
		pg_buf_clear(&m->items[i].data);
	}
	free(m->items);
	pg_buf_clear(&m->notes);
	memset(m, 0, sizeof(*m));
}

pg_backup_item *
pg_backup_manifest_add(pg_backup_manifest *m, pg_backup_kind kind, const char *name)
{
	pg_backup_item *it;
	char *copy = strdup(name);

	if (copy == NULL || !pg_array_grow(&m->items, &m->cap, m->n, sizeof(*m->items), 16)) {
		free(copy);
		pg_message("out of memory");
		return NULL;
	}
	it = &m->items[m->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->name = copy;
	pg_buf_init(&it->data);
	return it;
}

void
pg_backup_note(pg_backup_manifest *m, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	line = pg_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (line == NULL)
		return;
	pg_message("%s", line);
	pg_buf_add_str(&m->notes, line);
	pg_buf_add_byte(&m->notes, '\n');
	free(line);
}
