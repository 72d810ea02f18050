/*
 * Setup run again after a restore (resetup.h).
 */
#include "config.h"

#include "resetup.h"

#include <string.h>

/* Each line of buf as a note about target. */
static void
notes(pg_backup_manifest *m, const char *target, const pg_buf *buf)
{
	const char *p = pg_buf_text(buf), *line;
	size_t n;

	while (pg_next_line(&p, &line, &n))
		pg_backup_note(m, "setup %s: %.*s", target, (int)n, line);
}

static bool
run(const pg_setup_target *t, const pg_setup_env *env, pg_backup_item *it, pg_backup_manifest *m)
{
	pg_setup_plan plan;
	bool ok = pg_setup_run(t, env, false, false, &plan) != PG_SETUP_FAILED;

	if (plan.problems.len > 0)
		notes(m, t->name, &plan.problems);
	it->action = !ok ? "setup failed" : plan.n > 0 ? "set up" : "set up already";
	if (ok)
		notes(m, t->name, &plan.notes);
	pg_setup_plan_clear(&plan);
	return ok;
}

bool
pg_resetup(const pg_setup_env *setup, pg_backup_manifest *m)
{
	pg_setup_env env = { 0 };
	bool ok = true, trust_done = false, trust_changed = false;
	const char *why;

	if (setup != NULL)
		env = *setup;
	env.system = false;
	env.undo = false;
	env.module = NULL;
	for (size_t i = 0; i < m->n; i++) {
		pg_backup_item *it = &m->items[i];
		const pg_setup_target *t;
		if (it->kind == PG_BACKUP_TRUST && it->action != NULL &&
		    (strcmp(it->action, "restored") == 0 || strcmp(it->action, "replaced") == 0))
			trust_changed = true;
		if (it->kind != PG_BACKUP_SETUP || it->state == NULL ||
		    strcmp(it->state, "configured") != 0)
			continue;
		t = pg_setup_target_named(it->name);
		why = t != NULL && t->unavailable ? t->unavailable() : NULL;
		if (t == NULL || why != NULL) {
			it->action = "left out";
			pg_backup_note(m, "setup %s: left out: %s", it->name,
			               why ? why : "this p11glue has no such target");
			continue;
		}
		env.proxy = it->proxy;
		ok = run(t, &env, it, m) && ok;
		trust_done = trust_done || strcmp(t->name, "trust") == 0;
	}
	/* Restored decisions reach the files programs read, as after every
	 * trust command. */
	if (trust_changed && !trust_done && env.trust_compat != NULL && !env.trust_compat(false, false))
		ok = false;
	return ok;
}
