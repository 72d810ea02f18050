/*
 * Operating-system specifics, kept in one place so the rest of p11glue
 * stays portable: dynamic loading, the program's name, set-id detection,
 * the home directory, reading a PIN from the terminal, fork hooks.
 */
#ifndef PG_COMPAT_H
#define PG_COMPAT_H

#include "common.h"

/*
 * Loads a shared object with local symbols (RTLD_LOCAL | RTLD_NOW).
 * On failure returns NULL and *error (when not NULL) a newly allocated
 * message the caller frees.
 */
void *pg_dl_open(const char *path, char **error);
void *pg_dl_symbol(void *handle, const char *name);
void pg_dl_close(void *handle);

/* The base name of the running program ("ssh", "firefox"); never NULL. */
const char *pg_program_name(void);

/* True in a setuid/setgid (or otherwise privilege-changing) program. */
bool pg_is_privileged(void);

/* True when running as root. */
bool pg_is_root(void);

/* The user's home directory ($HOME, else the password database), or NULL. */
const char *pg_home_dir(void);

/*
 * Prompts on the controlling terminal (not stdin) and reads a line with
 * echo off into buf (NUL-terminated, newline removed). Returns the length,
 * or -1 when there is no terminal, on EOF, or when the line does not fit
 * (the buffer is wiped then).
 */
long pg_tty_read_secret(const char *prompt, char *buf, size_t size);

/* Registers a function to run in the child after fork(). */
void pg_at_fork_child(void (*func)(void));

/* Asks for SIGTERM when the parent process dies (where the system can;
 * elsewhere a no-op). For workers that must not outlive their server. */
void pg_die_with_parent(void);

/*
 * Keeps what this process holds (unwrapped keys, PINs) out of core files
 * and away from the user's other processes, as ssh-agent and gpg-agent
 * do: RLIMIT_CORE 0 (soft and hard, so no child raises it again) and,
 * on Linux, not dumpable (PR_SET_DUMPABLE 0), which also refuses ptrace
 * and /proc/PID/mem to processes without CAP_SYS_PTRACE. Both are kept
 * across fork; exec resets the dumpable flag, not the limit. False when
 * either could not be set.
 */
bool pg_no_core_dumps(void);

#endif /* PG_COMPAT_H */
