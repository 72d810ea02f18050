/*
 * The trust module's state (trust-module.h): shared by the library and
 * slot calls (trust-module.c) and the object calls (trust-object.c),
 * which both build on it.
 */
#include "config.h"

#include "trust-module.h"

#include <stdlib.h>

pg_tm_state pg_tm = { .lock = PG_LOCK_INIT };

void
pg_tm_end_find(pg_tm_session *s)
{
	free(s->found);
	s->found = NULL;
	s->n_found = s->next = 0;
	s->finding = false;
}
