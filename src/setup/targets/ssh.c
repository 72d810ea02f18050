/*
 * The `setup --ssh` target: OpenSSH's client offers the keys of the key
 * store (or with --proxy every registered module's) through
 * PKCS11Provider. One file gets a block of p11glue's lines (setup.c):
 * ~/.ssh/config, or with --system /etc/ssh/ssh_config.d/p11glue.conf,
 * which Debian's /etc/ssh/ssh_config includes.
 *
 * ssh_config(5): for each keyword the first value obtained wins, and the
 * lines after a Host or Match line apply only to the hosts it matches.
 * So the block goes at the end of the file and opens with "Host *": it
 * applies to every host, yet any PKCS11Provider of the user's that comes
 * first (for every host or for some) stays in force. A PKCS11Provider of
 * the user's for every host (before the first Host or Match line, or
 * under "Host *" or "Match all") naming another module would leave the
 * block without effect: that is a conflict, reported and left alone; one
 * naming the same module leaves nothing to do; one for some hosts only
 * is noted (it wins for those hosts).
 */
#include "config.h"

#include "setup.h"
#include "targets.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TARGET "ssh"

static char *
ssh_path(const pg_setup_env *env)
{
	return pg_setup_path(env, PG_SETUP_SSH_SYSTEM_FILE, ".ssh/config");
}

/* The user's PKCS11Provider lines, as ssh reads them. */
typedef struct {
	bool global;                 /* the current section applies to every host */
	char *all_value;             /* the first PKCS11Provider for every host */
	size_t all_line;
	char *some_value;            /* the first one for some hosts only */
	size_t some_line;
} ssh_conf;

static void
conf_clear(ssh_conf *c)
{
	free(c->all_value);
	free(c->some_value);
	memset(c, 0, sizeof(*c));
}

/* Splits "Keyword value" or "Keyword=value" (ssh_config(5)); a value
 * in double quotes gives its inside. */
static bool
keyword_of(char *line, char **name, char **value)
{
	size_t n;

	if (!pg_setup_split_line(line, true, name, value))
		return false;
	n = strlen(*value);
	if (n > 1 && (*value)[0] == '"' && (*value)[n - 1] == '"') {
		(*value)[n - 1] = 0;
		(*value)++;
	}
	return true;
}

static int
take_line(const char *text, size_t number, void *data)
{
	ssh_conf *c = data;
	char *line = strdup(text), *name, *value;

	if (line == NULL)
		return -1;
	if (!keyword_of(line, &name, &value)) {
		free(line);
		return 0;
	}
	if (strcasecmp(name, "Host") == 0)
		c->global = strcmp(value, "*") == 0;
	else if (strcasecmp(name, "Match") == 0)
		c->global = strcasecmp(value, "all") == 0;
	else if (strcasecmp(name, "PKCS11Provider") == 0 && c->global && c->all_value == NULL) {
		c->all_value = strdup(value);
		c->all_line = number;
	} else if (strcasecmp(name, "PKCS11Provider") == 0 && !c->global && c->some_value == NULL) {
		c->some_value = strdup(value);
		c->some_line = number;
	}
	free(line);
	return 0;
}

static bool
read_conf(const char *text, const char *target, ssh_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->global = true;
	return pg_setup_each_user_line(text, target, take_line, c) == 0;
}

bool
pg_setup_ssh_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	char *path = ssh_path(env), *text = NULL, *module = NULL;
	char provider[PATH_MAX + 32];
	const char *lines[2] = { "Host *", provider };
	ssh_conf user = { 0 };
	bool exists;
	mode_t mode;

	if (!pg_setup_plan_start(env, undo, p, path, &text, &exists, &mode))
		goto out;
	module = pg_setup_chosen_module(env, p, false);
	if (module == NULL)
		goto out;
	if (!read_conf(text, TARGET, &user)) {
		pg_setup_problem(p, "out of memory");
		goto out;
	}
	if (user.all_value != NULL && strcmp(user.all_value, module) != 0) {
		pg_setup_problem(p, "%s, line %zu, sets PKCS11Provider %s for every host: it comes "
		                 "first, so p11glue's line would not count; p11glue leaves your line "
		                 "alone: remove it or change it to %s", path, user.all_line,
		                 user.all_value, module);
		goto out;
	}
	if (user.some_value != NULL)
		pg_setup_note(p, "%s, line %zu, sets PKCS11Provider %s for some hosts: for those, "
		              "yours wins", path, user.some_line, user.some_value);
	if (strchr(module, '"') != NULL) {
		pg_setup_problem(p, "%s: ssh cannot take a path with a double quote", module);
		goto out;
	}
	if (user.all_value == NULL) {
		/* A path with blanks in double quotes (ssh_config(5)). */
		snprintf(provider, sizeof(provider),
		         strpbrk(module, " \t") ? "PKCS11Provider \"%s\"" : "PKCS11Provider %s", module);
		if (!pg_setup_plan_block(p, path, text, exists, mode, lines, 2))
			pg_setup_problem(p, "out of memory");
	}
	if (access(module, R_OK) != 0)
		pg_setup_note(p, "warning: the module %s is not there (yet)", module);
	if (p->n > 0 && p->problems.len == 0)
		pg_setup_note(p, "check with: ssh -G somehost | grep -i pkcs11provider; "
		              "'IdentitiesOnly yes' hides token keys that no IdentityFile names");
out:
	conf_clear(&user);
	free(module);
	free(text);
	free(path);
	return true;
}

/* Is path p11glue's store, client or proxy module (as installed or built)? */
static bool
is_p11glue_module(const char *path)
{
	static const pg_setup_env modes[3] = { { .direct = true }, { .direct = false }, { .proxy = true } };
	char *real = realpath(path, NULL);
	bool found = false;

	for (size_t i = 0; real != NULL && !found && i < 3; i++) {
		char *ours = pg_setup_default_module(&modes[i], modes[i].proxy);
		char *ours_real = ours ? realpath(ours, NULL) : NULL;
		found = ours_real != NULL && strcmp(real, ours_real) == 0;
		free(ours_real);
		free(ours);
	}
	free(real);
	return found;
}

void
pg_setup_ssh_status(const pg_setup_env *env, pg_setup_status *st)
{
	char *path = ssh_path(env), *text = NULL;
	char fact[PATH_MAX + 64];
	ssh_conf all = { 0 }, user = { 0 };
	bool exists, ours;

	st->state = "not configured";
	if (!pg_setup_status_read(st, TARGET, path, &text, &exists))
		goto out;
	read_conf(text, NULL, &all);
	read_conf(text, TARGET, &user);
	ours = all.all_value != NULL && user.all_value == NULL;
	snprintf(fact, sizeof(fact), "%s%s", all.all_value ? all.all_value : "(not set)",
	         all.all_value ? (ours ? " (set by p11glue)" : " (set by you)") : "");
	pg_setup_fact(st, "pkcs11provider", fact);
	if (all.some_value != NULL) {
		snprintf(fact, sizeof(fact), "%s (line %zu)", all.some_value, all.some_line);
		pg_setup_fact(st, "pkcs11provider for some hosts", fact);
	}
	if (all.all_value != NULL && !ours && !is_p11glue_module(all.all_value)) {
		/* The user's line comes first: ssh loads that module, not ours. */
		snprintf(fact, sizeof(fact), "%s, line %zu, sets PKCS11Provider %s for every host, "
		         "not a p11glue module", path, all.all_line, all.all_value);
		pg_setup_fact(st, "conflict", fact);
	} else if (all.all_value != NULL && strcasecmp(all.all_value, "none") != 0) {
		st->state = "configured";
	}
out:
	conf_clear(&all);
	conf_clear(&user);
	free(text);
	free(path);
}
