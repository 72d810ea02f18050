/*
 * The one table of p11glue's commands (commands.h), in the order the
 * command lists show them.
 */
#include "config.h"

#include "commands.h"

#include "common.h"

const pg_command pg_commands[] = {
	{ NULL, "list-modules", "List the registered PKCS#11 modules and their tokens",
	  pg_cmd_list_modules },
	{ NULL, "list-tokens", "List tokens, or those a URI selects", pg_cmd_list_tokens },
	{ NULL, "list-objects", "List the objects a URI selects", pg_cmd_list_objects },
	{ NULL, "list-mechanisms", "List the mechanisms of the tokens a URI selects",
	  pg_cmd_list_mechanisms },
	{ NULL, "print-config", "Print the registry configuration as this program sees it",
	  pg_cmd_print_config },
	{ NULL, "server", "Serve a module or token on a unix socket for p11glue-client.so",
	  pg_cmd_server },
	{ NULL, "remote", "Serve a module or token on stdin/stdout (for ssh)", pg_cmd_remote },
	{ NULL, "service", "Serve the key store to all of your applications: one unlock per session",
	  pg_cmd_service },
	{ NULL, "unlock", "Unlock a token of the session service for every application",
	  pg_cmd_unlock },
	{ NULL, "lock", "Lock the session service's tokens again, wiping their keys from memory",
	  pg_cmd_lock },
	{ NULL, "uri", "Parse, check and build PKCS#11 URIs (RFC 7512)", pg_cmd_uri },
	{ NULL, "trust", "Trust anchors, distrust and CRLs (p11-kit's trust command)", pg_cmd_trust },
	{ NULL, "init-token", "Create a token (in the key store: a new token)", pg_cmd_init_token },
	{ NULL, "init-pin", "Set or unlock a token's user PIN, as its security officer",
	  pg_cmd_init_pin },
	{ NULL, "set-pin", "Change a token's user PIN (or SO PIN)", pg_cmd_set_pin },
	{ NULL, "generate-keypair", "Generate a key pair on a token", pg_cmd_generate_keypair },
	{ NULL, "import", "Import a private key (OpenSSH, PEM, PKCS#8, PKCS#12) or certificates",
	  pg_cmd_import },
	{ NULL, "adopt", "Bring your ssh, NSS and GnuPG keys and NSS trust into the store at once",
	  pg_cmd_adopt },
	{ NULL, "export-pubkey", "Print public keys of a token in OpenSSH or PEM format",
	  pg_cmd_export_pubkey },
	{ NULL, "delete-object", "Delete the objects a URI selects", pg_cmd_delete_object },
	{ NULL, "certify", "Make a certificate for a token key, signed inside a token",
	  pg_cmd_certify },
	{ NULL, "request", "Print a PKCS#10 request for a token key, signed inside its token",
	  pg_cmd_request },
	{ NULL, "setup", "Set up other programs (GnuPG ...) to use p11glue's modules", pg_cmd_setup },
	{ NULL, "status", "Show what 'p11glue setup' has set up", pg_cmd_status },
	{ NULL, "backup", "Write the key store, trust and set-up to a file sealed with a passphrase",
	  pg_cmd_backup },
	{ NULL, "restore", "Put back what 'p11glue backup' wrote, here or on another machine",
	  pg_cmd_restore },
	{ "uri", "parse", "Check a URI and print its canonical form or its attributes",
	  pg_cmd_uri_parse },
	{ "uri", "build", "Print the URI for the given attribute values", pg_cmd_uri_build },
	{ "trust", "list", "List trust or certificates", pg_cmd_trust_list },
	{ "trust", "extract", "Extract certificates and trust", pg_cmd_trust_extract },
	{ "trust", "anchor", "Add, remove, change trust anchors", pg_cmd_trust_anchor },
	{ "trust", "distrust", "Distrust certificates, or lift a distrust", pg_cmd_trust_distrust },
	{ "trust", "crl", "Add or remove CRLs", pg_cmd_trust_crl },
	{ "trust", "extract-compat", "Bring the files programs read up to date",
	  pg_cmd_trust_extract_compat },
	{ "trust", "dump", "Dump trust objects in internal format", pg_cmd_trust_dump },
	{ "trust", "check-format", "Check the format of persistence files",
	  pg_cmd_trust_check_format },
	{ "trust", "check", "Check that the programs that read trust agree with it",
	  pg_cmd_trust_check },
};

const size_t pg_n_commands = PG_N_ELEMENTS(pg_commands);
