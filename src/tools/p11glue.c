/*
 * p11glue: the command-line tool. Commands come from one table; each has
 * its own --help. Exit codes: 0 success, 1 error in input or operation,
 * 2 usage error.
 */
#include "config.h"

#include "tool.h"
#include "compat.h"

#include <p11glue/p11glue.h>

#include <getopt.h>
#include <string.h>


static void
usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue [--help] [--version] COMMAND [ARGS...]\n"
	        "\n"
	        "p11glue ties keys, certificates and trust together through PKCS#11.\n"
	        "\n"
	        "Commands:\n");
	pg_tool_list_commands(out, NULL, "p11glue");
	fprintf(out,
	        "\n"
	        "Exit status: 0 on success, 1 on an error in the input or the operation,\n"
	        "2 on a usage error.\n");
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int opt;

	/* Every command may hold a PIN, a passphrase or unwrapped keys (the
	 * service and the servers for as long as they run): no core file,
	 * no reading of its memory by the user's other processes. */
	pg_no_core_dumps();
	/* Installed as `trust`: p11-kit's command line. */
	{
		const char *base = strrchr(argv[0], '/');
		if (strcmp(base ? base + 1 : argv[0], "trust") == 0)
			return pg_cmd_trust(argc, argv);
	}
	/* '+': stop at the command name; its options are its own. */
	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, "+:hV", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return PG_EXIT_OK;
		case 'V':
			printf("p11glue %s\n", p11glue_version());
			return PG_EXIT_OK;
		default:
			return pg_tool_option_error("p11glue", opt, argv);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return PG_EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return PG_EXIT_OK;
	}
	return pg_tool_dispatch(NULL, "p11glue", argc - optind, argv + optind);
}
