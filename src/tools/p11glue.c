/*
 * p11glue: the command-line tool. Commands come from one table; each has
 * its own --help. Exit codes: 0 success, 1 error in input or operation,
 * 2 usage error.
 */
#include "config.h"

#include "tool.h"
#include "trust.h"
#include "store-tool.h"
#include "setup.h"

#include <p11glue/p11glue.h>

#include <getopt.h>
#include <string.h>

static const pg_command commands[] = {
	{ "list-modules", "List the registered PKCS#11 modules and their tokens",
	  pg_cmd_list_modules },
	{ "list-tokens", "List tokens, or those a URI selects", pg_cmd_list_tokens },
	{ "list-objects", "List the objects a URI selects", pg_cmd_list_objects },
	{ "list-mechanisms", "List the mechanisms of the tokens a URI selects",
	  pg_cmd_list_mechanisms },
	{ "print-config", "Print the registry configuration as this program sees it",
	  pg_cmd_print_config },
	{ "server", "Serve a module or token on a unix socket for p11glue-client.so",
	  pg_cmd_server },
	{ "remote", "Serve a module or token on stdin/stdout (for ssh)", pg_cmd_remote },
	{ "uri", "Parse, check and build PKCS#11 URIs (RFC 7512)", pg_cmd_uri },
	{ "trust", "Trust anchors, distrust and CRLs (p11-kit's trust command)", pg_cmd_trust },
	{ "init-token", "Create a token (in the key store: a new token)", pg_cmd_init_token },
	{ "init-pin", "Set or unlock a token's user PIN, as its security officer",
	  pg_cmd_init_pin },
	{ "set-pin", "Change a token's user PIN (or SO PIN)", pg_cmd_set_pin },
	{ "generate-keypair", "Generate a key pair on a token", pg_cmd_generate_keypair },
	{ "import", "Import a private key (OpenSSH, PEM, PKCS#8, PKCS#12) or certificates",
	  pg_cmd_import },
	{ "export-pubkey", "Print public keys of a token in OpenSSH or PEM format",
	  pg_cmd_export_pubkey },
	{ "delete-object", "Delete the objects a URI selects", pg_cmd_delete_object },
	{ "certify", "Make a certificate for a token key, signed inside a token",
	  pg_cmd_certify },
	{ "request", "Print a PKCS#10 request for a token key, signed inside its token",
	  pg_cmd_request },
	{ "setup", "Set up other programs (GnuPG ...) to use p11glue's modules", pg_cmd_setup },
	{ "status", "Show what 'p11glue setup' has set up", pg_cmd_status },
};

static void
usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue [--help] [--version] COMMAND [ARGS...]\n"
	        "\n"
	        "p11glue ties keys, certificates and trust together through PKCS#11.\n"
	        "\n"
	        "Commands:\n");
	pg_tool_list_commands(out, "p11glue", commands, PG_N_ELEMENTS(commands));
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
	return pg_tool_dispatch("p11glue", commands, PG_N_ELEMENTS(commands),
	                        argc - optind, argv + optind);
}
