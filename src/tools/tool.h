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


/* ---------------------------------------------------------------------------
 * JSON output: a tiny streaming writer with indentation.
 */
typedef struct {
	FILE *out;
	int depth;
	bool first[32];
	bool after_key;
} pg_json;

void pg_json_init(pg_json *json, FILE *out);
void pg_json_begin_object(pg_json *json);
void pg_json_end_object(pg_json *json);
void pg_json_begin_array(pg_json *json);
void pg_json_end_array(pg_json *json);
void pg_json_key(pg_json *json, const char *key);
/* A string whose bytes that are not printable ASCII, and '%', appear as
 * %XX (the convention for PKCS#11 values, which are bytes). */
void pg_json_string(pg_json *json, const char *value);
/* Text that is already printable (a URI): only JSON's own escapes. */
void pg_json_text(pg_json *json, const char *text);
void pg_json_bytes(pg_json *json, const void *value, size_t len);
/* A blank-padded PKCS#11 text field, padding removed. */
void pg_json_padded(pg_json *json, const unsigned char *value, size_t size);
void pg_json_ulong(pg_json *json, unsigned long value);
void pg_json_bool(pg_json *json, bool value);
/* Ends the document with a newline. */
void pg_json_finish(pg_json *json);

/* ---------------------------------------------------------------------------
 * Tokens of the registry
 */
#include <p11glue/p11glue.h>

/* Parses a URI argument strictly; on error prints why and returns false. */
bool pg_tool_parse_uri(const char *text, p11glue_uri **uri);

/*
 * Opens the registry (initialized, managed). When uri names module-path,
 * only that module file is loaded. Prints problems; returns an exit code.
 */
int pg_tool_open_registry(const p11glue_uri *uri, p11glue_registry **registry);

typedef struct {
	p11glue_module *module;
	CK_FUNCTION_LIST *funcs;
	CK_INFO info;
	CK_SLOT_ID slot;
	CK_SLOT_INFO slot_info;
	CK_TOKEN_INFO token;
} pg_tool_token;

/* Called for each token; a non-zero return stops the walk and is returned. */
typedef int (*pg_tool_token_func)(const pg_tool_token *token, void *data);

/*
 * Walks every present token of every usable module that uri (may be NULL)
 * matches: module-name, module-path, library-*, slot-* and token
 * attributes. *count (may be NULL) gets the number of tokens visited.
 */
int pg_tool_each_token(p11glue_registry *registry, const p11glue_uri *uri,
                       pg_tool_token_func func, void *data, size_t *count);

/* Prints each line of text as "p11glue: <line>" on stderr. */
void pg_tool_print_messages(const char *text);

/* A printable text for a CK_RV. */
const char *pg_tool_ckr(CK_RV rv);

/* Commands of the registry (cmd-registry.c). */
int pg_cmd_list_modules(int argc, char **argv);
int pg_cmd_list_tokens(int argc, char **argv);
int pg_cmd_list_objects(int argc, char **argv);
int pg_cmd_list_mechanisms(int argc, char **argv);
int pg_cmd_print_config(int argc, char **argv);

/* Remote tokens (cmd-server.c). */
int pg_cmd_server(int argc, char **argv);
int pg_cmd_remote(int argc, char **argv);

#endif /* PG_TOOL_H */
