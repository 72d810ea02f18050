/*
 * Shared pieces of the p11glue command-line tool: the command table,
 * exit codes, messages and small parsers.
 */
#ifndef PG_TOOL_H
#define PG_TOOL_H

#include "common.h"

#include <stdio.h>

/* Exit codes every command uses; scripts rely on them. */
enum {
	PG_EXIT_OK = 0,      /* success */
	PG_EXIT_FAIL = 1,    /* error in input or operation */
	PG_EXIT_USAGE = 2    /* bad command line */
};

/*
 * One (sub)command. run gets argv with argv[0] the command's own name and
 * returns an exit code. summary is one line for the command list.
 */
typedef struct {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
} pg_command;

/*
 * Runs the command of table named argv[0] (argv[0] is the first word
 * after the parent's name, which is `parent` in messages).
 */
int pg_tool_dispatch(const char *parent, const pg_command *table, size_t n_table,
                     int argc, char **argv);

/* Prints a command table as in `--help`. */
void pg_tool_list_commands(FILE *out, const char *parent,
                           const pg_command *table, size_t n_table);

/* "p11glue: <message>" on stderr. */
void pg_tool_error(const char *fmt, ...) PG_PRINTF(1, 2);

/*
 * Reports a usage error with a hint to run `<command> --help`, and
 * returns PG_EXIT_USAGE.
 */
int pg_tool_usage_error(const char *command, const char *fmt, ...) PG_PRINTF(2, 3);

/*
 * Reports what getopt_long returned for a bad option (opt is '?' or ':',
 * with optstrings that start with ':') and returns PG_EXIT_USAGE.
 */
int pg_tool_option_error(const char *command, int opt, char **argv);

/* Resets getopt so a subcommand can parse its own argv; getopt's own
 * messages are off (pg_tool_option_error reports instead). */
void pg_tool_getopt_reset(void);

/*
 * Decodes hex ("0a1B", optionally with ':' between bytes) into a new
 * buffer (free with free()). false on bad input or no memory.
 */
bool pg_tool_parse_hex(const char *text, unsigned char **out, size_t *len);

/* Writes a JSON string: printable ASCII as is (" and \ escaped), every
 * other byte and '%' as %XX. */
void pg_tool_json_string(FILE *out, const unsigned char *data, size_t len);

/* Commands, one file each. */
int pg_cmd_uri(int argc, char **argv);

#endif /* PG_TOOL_H */
