/*
 * The `setup --service` target: systemd starts the session service
 * (`p11glue service`) on demand. The socket unit p11glue.socket, which
 * meson install puts in systemd's user unit directory, is enabled with
 * `systemctl --user enable` (with --system `systemctl --global enable`,
 * for every user), which works whether or not a user manager runs; one
 * that runs also starts it now. Without systemd, p11glue-client.so starts
 * the service itself on first use, so this target is left out where
 * systemctl or the unit is missing.
 *
 * No file is edited here: systemctl makes its link. The plan says what
 * it runs, and --undo disables the socket (and stops it).
 */
#include "config.h"

#include "setup.h"
#include "targets.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TARGET "service"
#define UNIT "p11glue.socket"

/* systemctl's answer to is-enabled, or NULL when systemctl cannot be run
 * or knows no such unit. */
static const char *
unit_state(const pg_setup_env *env, char *buf, size_t size)
{
	char *argv[] = { "systemctl", env->system ? "--global" : "--user", "is-enabled", UNIT, NULL };
	int st = pg_setup_exec(argv, buf, size);

	buf[strcspn(buf, "\n")] = 0;
	/* Exit status 1 for a unit that exists but is disabled, too. */
	if (st < 0 || st == 127 || (st != 0 && strcmp(buf, "disabled") != 0))
		return NULL;
	return buf;
}

const char *
pg_setup_service_unavailable(void)
{
	static char why[160];
	pg_setup_env user = { 0 };
	char buf[512];

	if (unit_state(&user, buf, sizeof(buf)) != NULL)
		return NULL;
	snprintf(why, sizeof(why), "no systemd (systemctl) knows %s: p11glue-client.so starts "
	         "the session service itself", UNIT);
	return why;
}

/* A systemd user manager runs for this user (systemctl can reach it). */
static bool
manager_running(void)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	char path[4096];

	if (runtime == NULL || *runtime == 0)
		return false;
	snprintf(path, sizeof(path), "%s/systemd/private", runtime);
	return access(path, F_OK) == 0;
}

bool
pg_setup_service_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	const char *scope = env->system ? "--global" : "--user";
	char buf[512];
	const char *state = unit_state(env, buf, sizeof(buf));
	bool enabled = state != NULL && strcmp(state, "enabled") == 0;

	if (!undo && env->direct) {
		pg_setup_note(p, "--direct: programs load the key store themselves; the session "
		              "service is not set up");
		return true;
	}
	if (state == NULL) {
		if (!undo)
			pg_setup_problem(p, "systemd does not know %s (is systemctl installed, and was "
			                 "p11glue installed with meson install?); without it, "
			                 "p11glue-client.so starts the session service itself", UNIT);
		return true;
	}
	if (enabled == !undo)
		return true;
	p->act = true;
	pg_setup_note(p, "systemctl %s %s %s%s", scope, undo ? "disable" : "enable", UNIT,
	              !env->system && manager_running() ? (undo ? " (and stop it)" : " (and start it)")
	                                                : "");
	if (!undo && !env->system && !manager_running())
		pg_setup_note(p, "no systemd user manager runs now: until it does (your next login), "
		              "p11glue-client.so starts the session service itself");
	return true;
}

bool
pg_setup_service_apply(const pg_setup_env *env, const pg_setup_plan *plan)
{
	char *argv[] = { "systemctl", env->system ? "--global" : "--user",
	                 env->undo ? "disable" : "enable", UNIT, NULL, NULL };
	char out[2048];
	int st;

	(void)plan;
	/* --now only where a manager runs: it needs one. */
	if (!env->system && manager_running())
		argv[4] = "--now";
	st = pg_setup_exec(argv, out, sizeof(out));
	if (st != 0) {
		pg_message("%s: systemctl %s %s failed%s%s", TARGET, argv[1], argv[2], out[0] ? ":\n" : "",
		           out);
		return false;
	}
	return true;
}

void
pg_setup_service_status(const pg_setup_env *env, pg_setup_status *st)
{
	char buf[512];
	const char *state = unit_state(env, buf, sizeof(buf));

	pg_setup_fact(st, "socket unit", state ? state : UNIT " is not known to systemd");
	st->state = state != NULL && strcmp(state, "enabled") == 0 ? "configured" : "not configured";
	if (state == NULL || strcmp(state, "enabled") != 0)
		pg_setup_fact(st, "starts", "by p11glue-client.so, on first use");
	else
		pg_setup_fact(st, "starts", "by systemd, on first use (" UNIT ")");
	if (!env->system && env->service_facts != NULL)
		env->service_facts(st);
}
