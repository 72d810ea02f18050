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

/* ---------------------------------------------------------------------------
 * Options every key store command takes
 */

/* getopt_long entries for --module and --store (values 'M' and 'S'). */
#define PG_STORE_LONG_OPTIONS \
	{ "module", required_argument, NULL, 'M' }, \
	{ "store", required_argument, NULL, 'S' }

/* Takes 'M' / 'S' from getopt; true when opt was one of them. */
bool pg_store_opts_take(pg_store_opts *opts, int opt, const char *arg);

/* Parses text as a URI (strictly), or makes an empty one for NULL;
 * prints why on failure. */
bool pg_store_parse_uri(const char *text, p11glue_uri **uri);

/* The common part of the commands' --help: module and token selection,
 * PIN sources, exit status. */
void pg_store_help_common(FILE *out);

#endif /* PG_STORE_TOOL_H */
