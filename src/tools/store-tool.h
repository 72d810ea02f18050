/*
 * What the key store commands share (init-token, init-pin, set-pin,
 * generate-keypair, import, export-pubkey, delete-object, certify,
 * request): their --module and --store options and the common part of
 * their help (store-opts.c). The token access they build on is in
 * src/token (token.h), the key conversions in src/import (keys.h).
 */
#ifndef PG_STORE_TOOL_H
#define PG_STORE_TOOL_H

#include "tool.h"
#include "keys.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

/* The most objects a command finds for one URI. */
#define PG_STORE_MAX_FOUND 4096

/* ---------------------------------------------------------------------------
 * Options every key store command takes
 */

/*
 * The options of a key store command whose one operand is a URI (at
 * most one; exactly one when uri_required): table plus --module and
 * --store (into opts) and --help. *uri gets the URI (an empty one
 * without the operand; free it also after a failure). Returns -1 to go
 * on, else an exit code.
 */
int pg_store_options(int argc, char **argv, const pg_opt *table, size_t n, void (*help)(FILE *out),
                     pg_store_opts *opts, bool uri_required, p11glue_uri **uri);

/* Parses text as a URI (strictly), or makes an empty one for NULL;
 * prints why on failure. */
bool pg_store_parse_uri(const char *text, p11glue_uri **uri);

/* ---------------------------------------------------------------------------
 * Output of what a command did (pg_report)
 */

/* Prints each item as "WHAT: URI" (a skipped certificate: "certificate
 * 'NAME' is on the token already: skipped"). */
void pg_store_print_report(const pg_report *r);

/* Starts the JSON object of a command's --json output with "token": the
 * URI of kt's token. */
void pg_store_json_begin(pg_json *j, const pg_keytoken *kt);

/* key: [ the URIs of the items of r that are what ]. */
void pg_store_json_uris(pg_json *j, const char *key, const pg_report *r, const char *what);

/* Ends the object begun by pg_store_json_begin; false (said) when the
 * report is incomplete. */
bool pg_store_json_end(pg_json *j, const pg_report *r);

/* The end of the commands' --help: module and token selection, PIN
 * sources, exit status, then heading ("Example", "Examples") and the
 * examples' lines. */
void pg_store_help_common(FILE *out, const char *heading, const char *examples);

#endif /* PG_STORE_TOOL_H */
