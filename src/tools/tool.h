/*
 * Shared pieces of the p11glue command line: dispatch over the command
 * table (commands.h), usage messages, small parsers and a JSON writer.
 */
#ifndef PG_TOOL_H
#define PG_TOOL_H

#include "common.h"
#include "commands.h"

#include <stdio.h>

/*
 * Runs the command of group (NULL: the top level) named argv[0], the
 * first word after the group's name, which is `parent` in messages
 * ("p11glue", "p11glue uri", "trust").
 */
int pg_tool_dispatch(const char *group, const char *parent, int argc, char **argv);

/* Prints the commands of group (NULL: the top level) as in `--help`. */
void pg_tool_list_commands(FILE *out, const char *group, const char *parent);

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

/* ---------------------------------------------------------------------------
 * Options by table: every command's option loop, written once.
 */
typedef enum {
	PG_OPT_TEXT,                 /* takes a value: *(const char **)to = it */
	PG_OPT_FLAG,                 /* *(bool *)to = true */
	PG_OPT_SET,                  /* *(int *)to = value (the last one given wins) */
	PG_OPT_APPEND,               /* takes a value, repeatable: added to the pg_buf
	                              * at to, after a ',' when it holds some */
	PG_OPT_IGNORE                /* accepted, no effect (p11-kit's -v, -q) */
} pg_opt_kind;

typedef struct {
	const char *name;            /* --name */
	int letter;                  /* -l as well, or 0 */
	pg_opt_kind kind;
	void *to;
	int value;                   /* PG_OPT_SET */
} pg_opt;

/* The --module and --store options of the key store commands. */
#define PG_STORE_OPTIONS(o) \
	{ "module", 0, PG_OPT_TEXT, &(o)->module, 0 }, \
	{ "store", 0, PG_OPT_TEXT, &(o)->store, 0 }

/* --pin-source (the user PIN) and --so-pin-source (the SO PIN) into a
 * pg_pins. */
#define PG_PIN_OPTION(p) { "pin-source", 0, PG_OPT_TEXT, &(p)->user_source, 0 }
#define PG_SO_PIN_OPTION(p) { "so-pin-source", 0, PG_OPT_TEXT, &(p)->so_source, 0 }

enum {
	/* A bad option prints the help to stderr (p11-kit's `trust`) rather
	 * than one line with a hint. */
	PG_OPTS_HELP_ON_ERROR = 1 << 0,
	/* Exactly one operand, a PKCS#11 URI: else a usage error. */
	PG_OPTS_ONE_URI = 1 << 1
};

/*
 * Parses the options of argv (argv[0] the command's name) by table, and
 * -h / --help, which prints help to stdout. Returns -1 to go on, with
 * *next the index of the first operand, or an exit code to return:
 * PG_EXIT_OK after the help, PG_EXIT_USAGE after a bad option (reported).
 * max_args (-1: any) is how many operands may follow.
 */
int pg_tool_options(int argc, char **argv, const pg_opt *table, size_t n,
                    void (*help)(FILE *out), unsigned flags, int max_args, int *next);

/*
 * The value of a hex option (--id) into *out (free()), *len; reports
 * "OPTION: not a hexadecimal string" for bad or empty text. NULL text
 * leaves *out NULL. Returns -1 to go on, or PG_EXIT_USAGE.
 */
int pg_tool_hex_option(const char *command, const char *option, const char *text,
                       unsigned char **out, size_t *len);

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
/* pg_json_key, then the object or array that is its value begins. */
void pg_json_key_begin_object(pg_json *json, const char *key);
void pg_json_key_begin_array(pg_json *json, const char *key);
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
/* An object's member: pg_json_key, then the value as above. */
void pg_json_key_string(pg_json *json, const char *key, const char *value);
void pg_json_key_text(pg_json *json, const char *key, const char *text);
void pg_json_key_ulong(pg_json *json, const char *key, unsigned long value);
void pg_json_key_bool(pg_json *json, const char *key, bool value);
/* Ends the document with a newline. */
void pg_json_finish(pg_json *json);

#include "token.h"

/* The files of the trust target (src/trust/tool/compat.c) made, or with
 * undo taken away, for the system or the user, its notes on standard
 * error: what `setup` and `restore` give src/setup (cmd-setup.c). */
bool pg_tool_trust_compat(bool system, bool undo);

/*
 * The walk of a listing command over the tokens uri selects in the
 * registry's modules (and the key store beside them): fn is called for
 * each with data. With json (not NULL) the output is one JSON array, to
 * which fn adds its values. With need_one, no token matching is an error
 * that says so. Returns fn's first non-zero return, else an exit code.
 */
int pg_tool_walk_tokens(const p11glue_uri *uri, pg_json *json, bool need_one, pg_token_func fn,
                        void *data);

#endif /* PG_TOOL_H */
