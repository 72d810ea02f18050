/*
 * p11glue setup | status: the two commands over the targets of
 * src/setup (setup.h). A target is selected by an option of its name
 * (--gnupg).
 */
#include "config.h"

#include "tool.h"
#include "setup.h"
#include "trust-tool.h"
#include "control.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_TARGETS PG_SETUP_N_TARGETS
#define TARGET_OPT 1000

enum {
	OPT_HELP = 'h',
	OPT_DRY_RUN = 'n',
	OPT_UNDO = 'u',
	OPT_MODULE = 'M',
	OPT_PROXY = 'P',
	OPT_JSON = 'j',
	OPT_USER = 'U',
	OPT_SYSTEM = 'S',
	OPT_VERBOSE = 'v',
	OPT_DIRECT = 'D'
};

/*
 * Parses argv with the fixed options plus one --NAME per target;
 * selected[i] tells whether pg_setup_targets[i] was named. Returns -1 to go on,
 * else an exit code (after --help or a usage error).
 */
static int
parse(int argc, char **argv, const struct option *fixed, size_t n_fixed, bool *selected,
      int (*take)(int opt, const char *arg, void *data), void *data)
{
	struct option options[16 + N_TARGETS];
	size_t n = 0;
	int opt, r;

	for (size_t i = 0; i < n_fixed && n < PG_N_ELEMENTS(options) - 1; i++)
		options[n++] = fixed[i];
	for (size_t i = 0; i < N_TARGETS && n < PG_N_ELEMENTS(options) - 1; i++)
		options[n++] = (struct option){ pg_setup_targets[i]->name, no_argument, NULL, TARGET_OPT + (int)i };
	options[n] = (struct option){ NULL, 0, NULL, 0 };
	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":hv", options, NULL)) != -1) {
		if (opt >= TARGET_OPT && opt < TARGET_OPT + (int)N_TARGETS) {
			selected[opt - TARGET_OPT] = true;
			continue;
		}
		if (opt == '?' || opt == ':')
			return pg_tool_option_error(argv[0], opt, argv);
		if ((r = take(opt, optarg, data)) != -1)
			return r;
	}
	if (optind < argc)
		return pg_tool_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	return -1;
}

static void
list_targets(FILE *out, bool describe)
{
	for (size_t i = 0; i < N_TARGETS; i++) {
		if (describe)
			fputs(pg_setup_targets[i]->description, out);
		else
			fprintf(out, "  --%-8s %s\n", pg_setup_targets[i]->name, pg_setup_targets[i]->summary);
	}
}

/* ---------------------------------------------------------------------------
 * setup
 */

static void
setup_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue setup [TARGET...] [--user | --system] [--dry-run] [--undo]\n"
	        "                     [--direct] [--module PATH | --proxy] [--json]\n"
	        "\n"
	        "Sets up other programs to use p11glue's modules by adding lines to\n"
	        "their configuration files. They reach the key store through your\n"
	        "session service ('p11glue service', through p11glue-client.so), so that\n"
	        "one 'p11glue unlock' serves them all for the session; with --direct each\n"
	        "loads the store itself. Without a TARGET, every target (one whose\n"
	        "program is not installed is left out with a note). The lines p11glue\n"
	        "adds sit between two comment lines that name p11glue and the target;\n"
	        "every other line is yours and is never changed. A second run changes\n"
	        "nothing; --undo removes exactly p11glue's lines (and a file that holds\n"
	        "nothing else). When a line of yours conflicts with what the target\n"
	        "needs, the target changes nothing and says which line. A target's\n"
	        "files change all together or not at all, each replaced whole (a\n"
	        "temporary file renamed over it) keeping its permissions and owner;\n"
	        "new files are readable by you only (with --system, by everyone).\n"
	        "\n"
	        "Targets:\n");
	list_targets(out, true);
	fprintf(out,
	        "\n"
	        "Options:\n"
	        "  --user         your own configuration (the default)\n"
	        "  --system       the configuration of every user of this system (as\n"
	        "                 root); targets without one are left out of a set-up of\n"
	        "                 every target, and are an error when named\n"
	        "  --dry-run      print exactly what would change (\"+\" lines added, \"-\"\n"
	        "                 lines removed) and change nothing\n"
	        "  --undo         remove what setup added\n"
	        "  --direct       programs load the key store module (p11glue-store.so)\n"
	        "                 themselves, each with its own login, rather than reach\n"
	        "                 it through your session service (p11glue-client.so, one\n"
	        "                 unlock per session: 'p11glue unlock')\n"
	        "  --module PATH  name this module file rather than the target's default\n"
	        "  --proxy        name the proxy module (p11glue-proxy.so, every registered\n"
	        "                 module's tokens) rather than the key store's\n"
	        "  --json         print one JSON object, a member per target: its result\n"
	        "                 (changed, would change, nothing to change, failed), the\n"
	        "                 files with their lines added and removed, problems, notes\n"
	        "  -h, --help     show this help\n"
	        "\n"
	        "'p11glue status' shows what is set up.\n"
	        "\n"
	        "Exit status: 0 done, or nothing to do; 1 a conflict or a file that\n"
	        "cannot be read or written (that target changed nothing; the others\n"
	        "went on); 2 a usage error.\n"
	        "\n"
	        "Examples:\n"
	        "  p11glue setup --dry-run\n"
	        "  p11glue setup\n"
	        "  p11glue setup --ssh --nss\n"
	        "  p11glue setup --gnupg --undo\n"
	        "  sudo p11glue setup --system --modules\n");
}

typedef struct {
	pg_setup_env env;
	bool dry_run, undo, json;
} setup_args;

bool
pg_tool_trust_compat(bool system, bool undo)
{
	pg_compat_report r;
	const char *p, *line;
	size_t n;
	bool ok;

	pg_compat_report_init(&r);
	ok = pg_trust_compat(system, undo ? PG_COMPAT_UNDO : PG_COMPAT_MAKE, &r) == PG_EXIT_OK;
	for (p = pg_buf_text(&r.notes); pg_next_line(&p, &line, &n);)
		fprintf(stderr, "p11glue: trust: %.*s\n", (int)n, line);
	pg_compat_report_clear(&r);
	return ok;
}

/* What the session service says of itself and its tokens (control.h). */
static void
service_facts(pg_setup_status *st)
{
	pg_service_status ss;
	char *path = pg_service_default_socket(), text[256], when[64], label[33];
	const pg_service_token *t;
	size_t n;
	int rc = path ? pg_service_status_get(path, &ss) : PG_SERVICE_BROKEN;

	if (rc != PG_SERVICE_OK) {
		pg_setup_fact(st, "service", rc == PG_SERVICE_NOT_RUNNING
		              ? "not running (it starts when a program first needs it)"
		              : "does not answer");
		free(path);
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&(time_t){ (time_t)ss.started }));
	snprintf(text, sizeof(text), "running (pid %lld, since %s), %s", (long long)ss.pid, when, path);
	pg_setup_fact(st, "service", text);
	if (ss.idle_lock > 0) {
		snprintf(text, sizeof(text), "after %llu s without use", (unsigned long long)ss.idle_lock);
		pg_setup_fact(st, "idle lock", text);
	}
	for (size_t i = 0; i < ss.n; i++) {
		t = &ss.tokens[i];
		if (!(t->info.flags & CKF_TOKEN_INITIALIZED))
			continue;
		n = sizeof(t->info.label);
		memcpy(label, t->info.label, n);
		while (n > 0 && label[n - 1] == ' ')
			n--;
		label[n] = 0;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
		         localtime(&(time_t){ (time_t)t->since }));
		if (!t->unlocked)
			snprintf(text, sizeof(text), "'%s': locked", label);
		else if (t->idle_left != PG_SERVICE_NO_IDLE)
			snprintf(text, sizeof(text), "'%s': unlocked since %s (locks in %llu s without use)",
			         label, when, (unsigned long long)t->idle_left);
		else
			snprintf(text, sizeof(text), "'%s': unlocked since %s", label, when);
		pg_setup_fact(st, "token", text);
	}
	pg_service_status_clear(&ss);
	free(path);
}

static int
setup_take(int opt, const char *arg, void *data)
{
	setup_args *a = data;

	switch (opt) {
	case OPT_DRY_RUN:
		a->dry_run = true;
		return -1;
	case OPT_UNDO:
		a->undo = a->env.undo = true;
		return -1;
	case OPT_JSON:
		a->json = true;
		return -1;
	case OPT_MODULE:
		a->env.module = arg;
		return -1;
	case OPT_PROXY:
		a->env.proxy = true;
		return -1;
	case OPT_DIRECT:
		a->env.direct = true;
		return -1;
	case OPT_USER:
		a->env.system = false;
		return -1;
	case OPT_SYSTEM:
		a->env.system = true;
		return -1;
	case OPT_HELP:
		setup_usage(stdout);
		return PG_EXIT_OK;
	case OPT_VERBOSE:
		return pg_tool_usage_error("setup", "unknown option '-v'");
	default:
		return PG_EXIT_USAGE;
	}
}

/* Prints each line of a buffer to out, after a prefix. */
static void
print_lines(FILE *out, const pg_buf *buf, const char *prefix)
{
	const char *p = pg_buf_text(buf), *line;
	size_t n;

	while (pg_next_line(&p, &line, &n))
		fprintf(out, "%s%.*s\n", prefix, (int)n, line);
}

/* A target's problems or notes, as messages on standard error. */
static void
print_messages(const char *target, const pg_buf *buf)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "p11glue: %s: ", target);
	print_lines(stderr, buf, prefix);
}

static void
print_plan(const pg_setup_plan *plan, bool dry_run)
{
	static const char *const verbs[2][3] = {
		{ "created", "changed", "removed" },
		{ "would create", "would change", "would remove" },
	};
	const pg_setup_edit *e;

	if (plan->n == 0)
		printf("%s: nothing to change\n", plan->target);
	for (size_t i = 0; i < plan->n; i++) {
		e = &plan->edits[i];
		printf("%s: %s %s\n", plan->target,
		       verbs[dry_run][!e->existed ? 0 : e->new_text ? 1 : 2], e->path);
		print_lines(stdout, &e->removed, "  - ");
		print_lines(stdout, &e->added, "  + ");
	}
}

/* A buffer's lines as a JSON array. */
static void
json_lines(pg_json *json, const char *key, const pg_buf *buf)
{
	const char *p = pg_buf_text(buf), *line;
	size_t n;

	pg_json_key_begin_array(json, key);
	while (pg_next_line(&p, &line, &n))
		pg_json_bytes(json, line, n);
	pg_json_end_array(json);
}

/* A target's plan and its outcome as a member of the --json object. */
static void
json_plan(pg_json *json, const pg_setup_plan *plan, const char *result, bool dry_run)
{
	static const char *const actions[2][3] = {
		{ "created", "changed", "removed" },
		{ "would create", "would change", "would remove" },
	};

	pg_json_key_begin_object(json, plan->target);
	pg_json_key_string(json, "result", result);
	pg_json_key_begin_array(json, "files");
	for (size_t i = 0; strcmp(result, "failed") != 0 && i < plan->n; i++) {
		const pg_setup_edit *e = &plan->edits[i];
		pg_json_begin_object(json);
		pg_json_key_text(json, "path", e->path);
		pg_json_key_string(json, "action", actions[dry_run][!e->existed ? 0 : e->new_text ? 1 : 2]);
		json_lines(json, "added", &e->added);
		json_lines(json, "removed", &e->removed);
		pg_json_end_object(json);
	}
	pg_json_end_array(json);
	json_lines(json, "problems", &plan->problems);
	json_lines(json, "notes", &plan->notes);
	pg_json_end_object(json);
}

static int
setup_one(const pg_setup_target *t, const setup_args *a, pg_json *json)
{
	pg_setup_plan plan;
	const char *result;
	pg_setup_result r = pg_setup_run(t, &a->env, a->undo, a->dry_run, &plan);
	bool dry = r != PG_SETUP_CHANGED;
	int status = PG_EXIT_OK;

	if (r == PG_SETUP_FAILED && plan.problems.len > 0) {
		print_messages(t->name, &plan.problems);
		pg_message("%s: nothing was changed", t->name);
	}
	if (r == PG_SETUP_FAILED) {
		status = PG_EXIT_FAIL;
		result = "failed";
	} else {
		result = plan.n == 0 ? "nothing to change" : a->dry_run ? "would change" : "changed";
		if (json == NULL)
			print_plan(&plan, dry);
		print_messages(t->name, &plan.notes);
	}
	if (json != NULL)
		json_plan(json, &plan, result, dry);
	pg_setup_plan_clear(&plan);
	return status;
}

int
pg_cmd_setup(int argc, char **argv)
{
	static const struct option fixed[] = {
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "undo", no_argument, NULL, OPT_UNDO },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "proxy", no_argument, NULL, OPT_PROXY },
		{ "direct", no_argument, NULL, OPT_DIRECT },
		{ "user", no_argument, NULL, OPT_USER },
		{ "system", no_argument, NULL, OPT_SYSTEM },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	bool selected[N_TARGETS] = { false };
	setup_args a = { .env.trust_compat = pg_tool_trust_compat, .env.service_facts = service_facts };
	size_t n_selected = 0;
	const char *why;
	pg_json json;
	int status = parse(argc, argv, fixed, PG_N_ELEMENTS(fixed), selected, setup_take, &a);

	if (status != -1)
		return status;
	for (size_t i = 0; i < N_TARGETS; i++)
		n_selected += selected[i];
	if (a.env.module != NULL && a.env.proxy)
		return pg_tool_usage_error(argv[0], "--module and --proxy exclude each other");
	if (a.undo && (a.env.module != NULL || a.env.proxy))
		return pg_tool_usage_error(argv[0], "--undo takes no --module or --proxy");
	for (size_t i = 0; i < N_TARGETS; i++) {
		if (selected[i] && a.env.system && !pg_setup_targets[i]->system)
			return pg_tool_usage_error(argv[0], "--%s has no --system form: its files "
			                           "are each user's own; run it as that user",
			                           pg_setup_targets[i]->name);
	}
	status = PG_EXIT_OK;
	pg_json_init(&json, stdout);
	if (a.json)
		pg_json_begin_object(&json);
	for (size_t i = 0; i < N_TARGETS; i++) {
		if (n_selected > 0 && !selected[i])
			continue;
		if (n_selected == 0 && a.env.system && !pg_setup_targets[i]->system) {
			pg_message("%s: left out: it has no --system form", pg_setup_targets[i]->name);
			continue;
		}
		why = n_selected == 0 && pg_setup_targets[i]->unavailable ? pg_setup_targets[i]->unavailable() : NULL;
		if (why != NULL) {
			pg_message("%s: left out: %s", pg_setup_targets[i]->name, why);
			continue;
		}
		if (setup_one(pg_setup_targets[i], &a, a.json ? &json : NULL) != PG_EXIT_OK)
			status = PG_EXIT_FAIL;
	}
	if (a.json) {
		pg_json_end_object(&json);
		pg_json_finish(&json);
	}
	return status;
}

/* ---------------------------------------------------------------------------
 * status
 */

static void
status_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue status [TARGET...] [--user | --system] [--json] [-v]\n"
	        "\n"
	        "Shows, for each target of 'p11glue setup' (or those named), whether it\n"
	        "is configured, partly configured or not configured, and the facts\n"
	        "behind that: the files and lines in force, whether they are p11glue's\n"
	        "or yours, and whether the programs involved are installed. It reads\n"
	        "configuration only and changes nothing. The modules target also lists\n"
	        "the registry programs of yours read, module by module; with --verbose\n"
	        "it loads each module as they would and says whether it initializes and\n"
	        "how many tokens it has, or why it cannot be used.\n"
	        "\n"
	        "Targets:\n");
	list_targets(out, false);
	fprintf(out,
	        "\n"
	        "Options:\n"
	        "  --user      your own configuration (the default)\n"
	        "  --system    the configuration of every user (targets that have one)\n"
	        "  --json      one JSON object, a member per target\n"
	        "  -v, --verbose  load the registry's modules (see above)\n"
	        "  -h, --help  show this help\n"
	        "\n"
	        "Exit status: 0 (whatever the state), 2 a usage error.\n");
}

typedef struct {
	bool json, system, verbose;
} status_args;

static int
status_take(int opt, const char *arg, void *data)
{
	status_args *a = data;

	(void)arg;
	if (opt == OPT_VERBOSE) {
		a->verbose = true;
		return -1;
	}
	if (opt == OPT_JSON || opt == OPT_USER || opt == OPT_SYSTEM) {
		a->json = a->json || opt == OPT_JSON;
		a->system = opt == OPT_USER ? false : opt == OPT_SYSTEM ? true : a->system;
		return -1;
	}
	if (opt == OPT_HELP) {
		status_usage(stdout);
		return PG_EXIT_OK;
	}
	return PG_EXIT_USAGE;
}

int
pg_cmd_status(int argc, char **argv)
{
	static const struct option fixed[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "user", no_argument, NULL, OPT_USER },
		{ "system", no_argument, NULL, OPT_SYSTEM },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "help", no_argument, NULL, OPT_HELP },
	};
	bool selected[N_TARGETS] = { false }, any = false, json;
	status_args a = { 0 };
	pg_setup_env env = { .service_facts = service_facts };
	pg_setup_status st;
	pg_json out;
	int status = parse(argc, argv, fixed, PG_N_ELEMENTS(fixed), selected, status_take, &a);

	if (status != -1)
		return status;
	json = a.json;
	env.system = a.system;
	env.verbose = a.verbose;
	for (size_t i = 0; i < N_TARGETS; i++) {
		if (selected[i] && env.system && !pg_setup_targets[i]->system)
			return pg_tool_usage_error(argv[0], "--%s has no --system form",
			                           pg_setup_targets[i]->name);
	}
	for (size_t i = 0; i < N_TARGETS; i++)
		any = any || selected[i];
	pg_json_init(&out, stdout);
	if (json)
		pg_json_begin_object(&out);
	for (size_t i = 0; i < N_TARGETS; i++) {
		if ((any && !selected[i]) || (!any && env.system && !pg_setup_targets[i]->system))
			continue;
		memset(&st, 0, sizeof(st));
		pg_setup_targets[i]->status(&env, &st);
		if (json) {
			pg_json_key_begin_object(&out, pg_setup_targets[i]->name);
			pg_json_key_text(&out, "state", st.state);
			for (size_t k = 0; k < st.n; k++)
				pg_json_key_string(&out, st.keys[k], st.values[k]);
			pg_json_end_object(&out);
		} else {
			printf("%s: %s\n", pg_setup_targets[i]->name, st.state);
			for (size_t k = 0; k < st.n; k++)
				printf("    %s: %s\n", st.keys[k], st.values[k]);
		}
		pg_setup_status_clear(&st);
	}
	if (json) {
		pg_json_end_object(&out);
		pg_json_finish(&out);
	}
	return PG_EXIT_OK;
}
