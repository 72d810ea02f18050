/*
 * Every command of p11glue: one table (commands.c) and the entry point of
 * each, declared here. A command of a group ("trust anchor") is listed
 * under its group's name; top-level commands have no group. Each run
 * function gets argv with argv[0] the command's full name ("p11glue
 * trust anchor") and returns a PG_EXIT_* code.
 */
#ifndef PG_COMMANDS_H
#define PG_COMMANDS_H

#include <stddef.h>

typedef struct {
	const char *group;           /* NULL, or the command this one is under */
	const char *name;
	const char *summary;         /* one line for the command list */
	int (*run)(int argc, char **argv);
} pg_command;

extern const pg_command pg_commands[];
extern const size_t pg_n_commands;

/* The registry (cmd-registry.c, cmd-objects.c) and URIs (cmd-uri.c). */
int pg_cmd_list_modules(int argc, char **argv);
int pg_cmd_list_tokens(int argc, char **argv);
int pg_cmd_list_objects(int argc, char **argv);
int pg_cmd_list_mechanisms(int argc, char **argv);
int pg_cmd_print_config(int argc, char **argv);
int pg_cmd_uri(int argc, char **argv);
int pg_cmd_uri_parse(int argc, char **argv);
int pg_cmd_uri_build(int argc, char **argv);

/* Remote tokens (cmd-server.c). */
int pg_cmd_server(int argc, char **argv);
int pg_cmd_remote(int argc, char **argv);

/* The session service (cmd-service.c). */
int pg_cmd_service(int argc, char **argv);
int pg_cmd_unlock(int argc, char **argv);
int pg_cmd_lock(int argc, char **argv);

/* The key store (cmd-store.c, cmd-keygen.c, cmd-import.c, cmd-export.c,
 * cmd-delete.c, cmd-certify.c). */
int pg_cmd_init_token(int argc, char **argv);
int pg_cmd_init_pin(int argc, char **argv);
int pg_cmd_set_pin(int argc, char **argv);
int pg_cmd_generate_keypair(int argc, char **argv);
int pg_cmd_import(int argc, char **argv);
int pg_cmd_adopt(int argc, char **argv);
int pg_cmd_export_pubkey(int argc, char **argv);
int pg_cmd_delete_object(int argc, char **argv);
int pg_cmd_certify(int argc, char **argv);
int pg_cmd_request(int argc, char **argv);

/* trust and its commands (cmd-trust.c, cmd-trust-dump.c,
 * cmd-trust-check.c, cmd-trust-decide.c); pg_cmd_trust is also p11-kit's
 * `trust`. */
int pg_cmd_trust(int argc, char **argv);
int pg_cmd_trust_list(int argc, char **argv);
int pg_cmd_trust_extract(int argc, char **argv);
int pg_cmd_trust_anchor(int argc, char **argv);
int pg_cmd_trust_distrust(int argc, char **argv);
int pg_cmd_trust_crl(int argc, char **argv);
int pg_cmd_trust_extract_compat(int argc, char **argv);
int pg_cmd_trust_dump(int argc, char **argv);
int pg_cmd_trust_check_format(int argc, char **argv);
int pg_cmd_trust_check(int argc, char **argv);

/* setup and status (cmd-setup.c). */
int pg_cmd_setup(int argc, char **argv);
int pg_cmd_status(int argc, char **argv);

/* backup and restore (cmd-backup.c). */
int pg_cmd_backup(int argc, char **argv);
int pg_cmd_restore(int argc, char **argv);

#endif /* PG_COMMANDS_H */
