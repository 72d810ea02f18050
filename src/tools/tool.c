/*
 * Shared pieces of the p11glue command-line tool.
 */
#include "config.h"

#include "tool.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
pg_tool_usage_error(const char *command, const char *fmt, ...)
{
	va_list ap;

	fputs("p11glue: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", command);
	return PG_EXIT_USAGE;
}

void
pg_tool_getopt_reset(void)
{
	/* glibc: 0 re-initializes the scanner (and its permutation state). */
	optind = 0;
	opterr = 0;
}

int
pg_tool_option_error(const char *command, int opt, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (opt == ':')
		return pg_tool_usage_error(command, "option '%s' needs a value", arg);
	return pg_tool_usage_error(command, "unknown option '%s'", arg);
}

static bool
in_group(const pg_command *c, const char *group)
{
	return group ? c->group && strcmp(c->group, group) == 0 : c->group == NULL;
}

void
pg_tool_list_commands(FILE *out, const char *group, const char *parent)
{
	for (size_t i = 0; i < pg_n_commands; i++)
		if (in_group(&pg_commands[i], group))
			fprintf(out, "  %-16s %s\n", pg_commands[i].name, pg_commands[i].summary);
	fprintf(out, "\nRun '%s COMMAND --help' for the options of a command.\n", parent);
}

int
pg_tool_dispatch(const char *group, const char *parent, int argc, char **argv)
{
	char full[128];

	if (argc < 1)
		return pg_tool_usage_error(parent, "%s: a command is required", parent);
	for (size_t i = 0; i < pg_n_commands; i++) {
		if (!in_group(&pg_commands[i], group) || strcmp(argv[0], pg_commands[i].name) != 0)
			continue;
		snprintf(full, sizeof(full), "%s %s", parent, pg_commands[i].name);
		argv[0] = full;
		return pg_commands[i].run(argc, argv);
	}
	return pg_tool_usage_error(parent, "unknown command '%s'", argv[0]);
}

bool
pg_tool_parse_hex(const char *text, unsigned char **out, size_t *len)
{
	size_t n = 0, cap = strlen(text) / 2 + 1;
	unsigned char *data = malloc(cap);

	if (data == NULL)
		return false;
	while (*text) {
		int hi = pg_hex_value((unsigned char)text[0]);
		int lo = hi < 0 ? -1 : pg_hex_value((unsigned char)text[1]);
		if (hi < 0 || lo < 0) {
			free(data);
			return false;
		}
		data[n++] = (unsigned char)(hi << 4 | lo);
		text += 2;
		if (*text == ':' && text[1] != 0)
			text++;
	}
	*out = data;
	*len = n;
	return true;
}

void
pg_tool_json_string(FILE *out, const unsigned char *data, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = data[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f && c != '%')
			fputc(c, out);
		else
			fprintf(out, "%%%02X", c);
	}
	fputc('"', out);
}

#define MAX_OPTIONS 32
#define LONG_ONLY 256

int
pg_tool_options(int argc, char **argv, const pg_opt *table, size_t n,
                void (*help)(FILE *out), unsigned flags, int max_args, int *next)
{
	struct option options[MAX_OPTIONS + 2];
	char letters[2 * MAX_OPTIONS + 4] = ":h";
	size_t nl = 2;
	int opt;

	if (n > MAX_OPTIONS)
		return pg_tool_usage_error(argv[0], "too many options in the command's table");
	for (size_t i = 0; i < n; i++) {
		int has_arg = table[i].kind == PG_OPT_TEXT || table[i].kind == PG_OPT_APPEND
		              ? required_argument : no_argument;
		options[i] = (struct option){ table[i].name, has_arg, NULL, LONG_ONLY + (int)i };
		if (table[i].letter) {
			letters[nl++] = (char)table[i].letter;
			if (has_arg == required_argument)
				letters[nl++] = ':';
		}
	}
	letters[nl] = 0;
	options[n] = (struct option){ "help", no_argument, NULL, 'h' };
	options[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, letters, options, NULL)) != -1) {
		const pg_opt *o = NULL;
		if (opt >= LONG_ONLY && opt < LONG_ONLY + (int)n)
			o = &table[opt - LONG_ONLY];
		for (size_t i = 0; o == NULL && opt != 'h' && i < n; i++)
			if (table[i].letter == opt)
				o = &table[i];
		if (opt == 'h') {
			help(stdout);
			return PG_EXIT_OK;
		}
		if (o == NULL) {
			if (!(flags & PG_OPTS_HELP_ON_ERROR))
				return pg_tool_option_error(argv[0], opt, argv);
			help(stderr);
			return PG_EXIT_USAGE;
		}
		if (o->kind == PG_OPT_TEXT)
			*(const char **)o->to = optarg;
		else if (o->kind == PG_OPT_FLAG)
			*(bool *)o->to = true;
		else if (o->kind == PG_OPT_SET)
			*(int *)o->to = o->value;
		else if (o->kind == PG_OPT_APPEND)
			pg_buf_printf(o->to, "%s%s", ((pg_buf *)o->to)->len ? "," : "", optarg);
	}
	if ((flags & PG_OPTS_ONE_URI) && argc - optind != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI");
	if (max_args >= 0 && argc - optind > max_args)
		return pg_tool_usage_error(argv[0], "unexpected argument '%s'", argv[optind + max_args]);
	*next = optind;
	return -1;
}

int
pg_tool_hex_option(const char *command, const char *option, const char *text,
                   unsigned char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (text == NULL)
		return -1;
	if (!pg_tool_parse_hex(text, out, len) || *len == 0) {
		free(*out);
		*out = NULL;
		return pg_tool_usage_error(command, "%s: not a hexadecimal string", option);
	}
	return -1;
}
