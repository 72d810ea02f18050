/*
 * The proxy's slot IDs (see slots.h).
 */
#include "config.h"

#include "slots.h"
#include "handles.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	char *name;
	char *path;
	CK_SLOT_ID *reals;       /* real slot of index k, k < PX_SLOTS_PER_MODULE */
	size_t n_reals;
	pg_handle_map ids;       /* real slot -> proxy ID */
} book_module;

typedef struct {
	long module;
	CK_SLOT_ID real;
} overflow_slot;

/* Kept for the life of the process (see slots.h); reachable from here,
 * so leak checkers do not count it. */
static struct {
	book_module *modules;
	size_t n_modules;
	overflow_slot *overflow;
	size_t n_overflow;
} book;

static bool
same(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

long
px_slots_module(const char *name, const char *path)
{
	book_module *grown, *m;

	for (size_t i = 0; i < book.n_modules; i++) {
		if (same(book.modules[i].name, name) && same(book.modules[i].path, path))
			return (long)i;
	}
	grown = realloc(book.modules, (book.n_modules + 1) * sizeof(*grown));
	if (grown == NULL)
		return -1;
	book.modules = grown;
	m = &book.modules[book.n_modules];
	memset(m, 0, sizeof(*m));
	m->name = name ? strdup(name) : NULL;
	m->path = path ? strdup(path) : NULL;
	if ((name && !m->name) || (path && !m->path)) {
		free(m->name);
		free(m->path);
		return -1;
	}
	pg_handle_map_init(&m->ids);
	return (long)book.n_modules++;
}

/* A new ID for the module's slot real: in its range while there is room. */
static bool
new_id(long module, CK_SLOT_ID real, CK_SLOT_ID *id)
{
	book_module *m = &book.modules[module];
	CK_SLOT_ID *reals;
	overflow_slot *grown;

	if ((size_t)module < PX_SLOTS_MODULE_RANGES && m->n_reals < PX_SLOTS_PER_MODULE) {
		reals = realloc(m->reals, (m->n_reals + 1) * sizeof(*reals));
		if (reals == NULL)
			return false;
		m->reals = reals;
		*id = (CK_SLOT_ID)module * PX_SLOTS_PER_MODULE + m->n_reals;
		if (!pg_handle_map_put(&m->ids, real, *id))
			return false;
		m->reals[m->n_reals++] = real;
		return true;
	}
	grown = realloc(book.overflow, (book.n_overflow + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	book.overflow = grown;
	*id = PX_SLOTS_OVERFLOW + book.n_overflow;
	if (!pg_handle_map_put(&m->ids, real, *id))
		return false;
	book.overflow[book.n_overflow++] = (overflow_slot){ module, real };
	return true;
}

bool
px_slots_map(long module, CK_SLOT_ID real, CK_SLOT_ID *id)
{
	if (module < 0 || (size_t)module >= book.n_modules)
		return false;
	if (pg_handle_map_get(&book.modules[module].ids, real, id))
		return true;
	return new_id(module, real, id);
}

bool
px_slots_lookup(CK_SLOT_ID id, long *module, CK_SLOT_ID *real)
{
	CK_SLOT_ID k;
	size_t m;

	if (id >= PX_SLOTS_OVERFLOW) {
		if (id - PX_SLOTS_OVERFLOW >= book.n_overflow)
			return false;
		*module = book.overflow[id - PX_SLOTS_OVERFLOW].module;
		*real = book.overflow[id - PX_SLOTS_OVERFLOW].real;
		return true;
	}
	m = (size_t)(id / PX_SLOTS_PER_MODULE);
	k = id % PX_SLOTS_PER_MODULE;
	if (m >= book.n_modules || k >= book.modules[m].n_reals)
		return false;
	*module = (long)m;
	*real = book.modules[m].reals[k];
	return true;
}
