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
