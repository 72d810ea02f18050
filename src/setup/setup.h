/*
 * `p11glue setup` and `p11glue status`: configuring other programs to use
 * p11glue's modules. Each program is a target, one file each under
 * targets/ (targets/gnupg.c ...), known to the commands through the one
 * table pg_setup_targets (targets.c: a new target is a file and an entry
 * there); a target describes itself, plans its changes (or their undoing)
 * as edits of configuration files, applies a plan and reports its status. This file's helpers do the file work the targets share:
 * blocks of lines marked as p11glue's inside files that are otherwise the
 * user's, edits shown before they are made, and writes that replace a
 * file whole (a temporary file renamed over it) or not at all.
 */
#ifndef PG_SETUP_H
#define PG_SETUP_H

#include "common.h"

#include <stdio.h>

#include <sys/types.h>

/* What the command line says to every target. */
/* What `p11glue status` tells of the session service (below). */
typedef struct pg_setup_status pg_setup_status;

typedef struct {
	const char *module;          /* --module PATH, or NULL: the target's default */
	bool proxy;                  /* --proxy: the proxy module rather than the store */
	bool direct;                 /* --direct: applications load the key store themselves
	                              * rather than reach the session service through
	                              * p11glue-client.so */
	bool system;                 /* --system: for every user, not the caller only */
	bool verbose;                /* status --verbose: load what the target names */
	bool undo;                   /* setup --undo */
	/* Brings the files programs read up to date with the trust decisions
	 * (or with undo takes p11glue's part out of them), for the system or
	 * the user; what the command layer gives (src/trust/tool). False
	 * after a message. */
	bool (*trust_compat)(bool system, bool undo);
	/* Adds facts about the running session service (its tokens, locked
	 * or unlocked and since when) to a status; what the command layer
	 * gives (src/service's control calls). NULL: none. */
	void (*service_facts)(pg_setup_status *status);
} pg_setup_env;

/* One file's planned edit. */
typedef struct {
	char *path;
	bool existed;
	mode_t mode;                 /* kept for an existing file; for a new one what
	                              * pg_setup_read gave (0600) or the target set */
	char *new_text;              /* NULL: remove the file */
	pg_buf added;                /* lines added, one per line, for the report */
	pg_buf removed;              /* lines removed */
} pg_setup_edit;

#define PG_SETUP_MAX_EDITS 16

/* A target's plan: the edits, or why it cannot be made. */
typedef struct {
	const char *target;          /* the target's name, for messages */
	pg_setup_edit edits[PG_SETUP_MAX_EDITS];
	size_t n;
	pg_buf problems;             /* reasons nothing may be changed, one a line */
	pg_buf notes;                /* what the user should know, one a line */
	bool act;                    /* apply even without edits: the target keeps
	                              * files of its own (trust's extracted files) */
} pg_setup_plan;

/* What a target reports for `p11glue status`: a state word and facts. */
#define PG_SETUP_MAX_FACTS 48
struct pg_setup_status {
	const char *state;           /* "configured", "partly configured", "not configured" */
	const char *keys[PG_SETUP_MAX_FACTS];
	char *values[PG_SETUP_MAX_FACTS];
	size_t n;
};

typedef struct {
	const char *name;            /* the option is --NAME */
	const char *summary;         /* one line for --help */
	bool system;                 /* has a --system form */
	/* NULL, or why the target is left out of a set-up of every target
	 * (a program it needs is not installed); may be NULL itself. */
	const char *(*unavailable)(void);
	/* What it changes, a paragraph for --help (lines end with \n). */
	const char *description;
	/* Plans the set-up (undo false) or its undoing; false on a failure
	 * that leaves no plan (out of memory). Problems go in the plan. */
	bool (*plan)(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
	/* Carries out a plan without problems; false after printing why.
	 * NULL: pg_setup_apply_edits, writing the plan's files. */
	bool (*apply)(const pg_setup_env *env, const pg_setup_plan *plan);
	void (*status)(const pg_setup_env *env, pg_setup_status *status);
} pg_setup_target;

/* What pg_setup_run did. */
typedef enum {
	PG_SETUP_FAILED,             /* problems (plan->problems), or applying failed */
	PG_SETUP_UNCHANGED,          /* nothing to do */
	PG_SETUP_PLANNED,            /* a dry run: planned, not carried out */
	PG_SETUP_CHANGED             /* carried out */
} pg_setup_result;

/*
 * Plans target t (undo: its undoing) into plan, which it initializes and
 * the caller clears, and, unless dry_run or there is nothing to do,
 * carries the plan out (the target's apply, else pg_setup_apply_edits).
 */
pg_setup_result pg_setup_run(const pg_setup_target *t, const pg_setup_env *env, bool undo,
                             bool dry_run, pg_setup_plan *plan);

/* The target of that name, or NULL. */
const pg_setup_target *pg_setup_target_named(const char *name);

/* Every target, in the order a set-up of all of them runs (targets.c). */
#define PG_SETUP_N_TARGETS 7
extern const pg_setup_target *const pg_setup_targets[PG_SETUP_N_TARGETS];

/* ---------------------------------------------------------------------------
 * Helpers for targets
 */

void pg_setup_plan_init(pg_setup_plan *plan, const char *target);
void pg_setup_plan_clear(pg_setup_plan *plan);
/* Adds a line to plan->problems (or plan->notes). */
void pg_setup_problem(pg_setup_plan *plan, const char *fmt, ...) PG_PRINTF(2, 3);
void pg_setup_note(pg_setup_plan *plan, const char *fmt, ...) PG_PRINTF(2, 3);

/*
 * Reads a whole text file (at most 1 MiB) into *text (free()); a missing
 * file gives *text NULL and *exists false. Other failures add a problem
 * to the plan and return false.
 */
bool pg_setup_read(pg_setup_plan *plan, const char *path, char **text, bool *exists,
                   mode_t *mode);

/*
 * How a one-file target's status starts: reads path (NULL: there is no
 * home directory) into *text (free()), with a "file" fact, or a
 * "problem" fact saying why it cannot be read and false.
 */
bool pg_setup_status_read(pg_setup_status *status, const char *target, const char *path,
                          char **text, bool *exists);

/*
 * How a one-file target's plan starts: reads path (NULL: there is no
 * home directory) into *text, with the mode a new file gets (0644 for
 * --system, else 0600); for --undo plans the block's removal. True when
 * the caller goes on to plan the set-up; false when the plan is made or
 * a problem recorded.
 */
bool pg_setup_plan_start(const pg_setup_env *env, bool undo, pg_setup_plan *plan,
                         const char *path, char **text, bool *exists, mode_t *mode);

/*
 * Splits a configuration line, in place, into its first word and the
 * rest (blanks around it and a final CR removed); with equals, "name=value"
 * too (ssh_config(5)). False for a blank or comment line.
 */
bool pg_setup_split_line(char *line, bool equals, char **name, char **value);

/*
 * The marked block of target in text: the begin marker line's offset
 * and the offset just past the end marker's line. False when there is
 * none (or an unterminated one: then *begin is set and *end is the end
 * of the text).
 */
bool pg_setup_block_find(const char *text, const char *target, size_t *begin, size_t *end);

/* Calls func for each line of text (copies without the newline) outside
 * target's block, or for every line when target is NULL; a non-zero
 * return stops and is returned (-1: out of memory). */
int pg_setup_each_user_line(const char *text, const char *target,
                            int (*func)(const char *line, size_t number, void *data), void *data);

/*
 * Plans path to hold target's block with these lines: appended when the
 * file has none, replaced when it differs, nothing when it is the same.
 * text is the file's contents (NULL: no file yet).
 */
bool pg_setup_plan_block(pg_setup_plan *plan, const char *path, const char *text, bool exists,
                         mode_t mode, const char *const *lines, size_t n_lines);

/* Plans the removal of target's block from path (the file goes when
 * nothing but blank lines is left). Nothing when there is no block. */
bool pg_setup_plan_unblock(pg_setup_plan *plan, const char *path, const char *text, mode_t mode);

/* Writes each edit, creating missing parent directories (0755 for a
 * file others may read, else 0700). */
bool pg_setup_apply_edits(const pg_setup_env *env, const pg_setup_plan *plan);

/* Adds a status fact (value copied; NULL values are skipped). */
void pg_setup_fact(pg_setup_status *status, const char *key, const char *value);
void pg_setup_status_clear(pg_setup_status *status);

/* The module file a target names by default: the proxy's with proxy,
 * else the client module's (p11glue-client.so, the session service) or
 * with env->direct the store's (p11glue-store.so); from this program's
 * build tree when it runs from one, else the installed one; free(). */
char *pg_setup_default_module(const pg_setup_env *env, bool proxy);

/* A module of p11glue's by its file name (p11glue-trust.so), found in
 * src/DIR of the build tree when this program runs from one, else the
 * installed one; free(). */
char *pg_setup_module_file(const char *dir, const char *file);

/* The module a target names: --module (resolved; a missing file is a
 * problem), else the proxy with --proxy or proxy_default, else the
 * client module or the store (pg_setup_default_module). NULL after
 * adding a problem; free(). */
char *pg_setup_chosen_module(const pg_setup_env *env, pg_setup_plan *plan, bool proxy_default);

/* dir/name, and the caller's home directory ($HOME, else the password
 * entry's); free(). NULL when out of memory (or no home). */
char *pg_setup_join(const char *dir, const char *name);
char *pg_setup_home(void);
/* system_file with --system, else the file at home_relative under the
 * user's home directory; malloc'ed, NULL without a home directory. */
char *pg_setup_path(const pg_setup_env *env, const char *system_file, const char *home_relative);

/*
 * Runs argv (a name looked up in $PATH) with standard input from
 * /dev/null; its standard output and error go to out (size bytes at
 * most, NUL-terminated). Returns its exit status, 128 when a signal
 * ended it, -1 when it could not be run.
 */
int pg_setup_exec(char *const argv[], char *out, size_t size);

/* True when text has target's block (a complete one). */
bool pg_setup_has_block(const char *text, const char *target);

#endif /* PG_SETUP_H */
