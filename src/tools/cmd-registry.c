/*
 * p11glue list-modules | list-tokens | list-objects | list-mechanisms |
 * print-config: the registry as p11-kit users know it, with --json.
 */
#include "config.h"

#include "tool.h"
#include "conf.h"
#include "names.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Options shared by the listing commands
 */

typedef struct {
	const char *usage;       /* the synopsis after "p11glue " */
	const char *about;       /* what the command does, a paragraph */
	bool takes_login;
	bool needs_uri;
	bool takes_uri;
	bool json;
	bool login;
	p11glue_uri *uri;
} listing;

static void
listing_usage(const listing *l, FILE *out)
{
	fprintf(out, "Usage: p11glue %s\n\n%s\n\nOptions:\n", l->usage, l->about);
	fprintf(out, "  --json      print a JSON document for scripts\n");
	if (l->takes_login)
		fprintf(out, "  --login     log in to each token first (PIN from the URI's\n"
		             "              pin-value or pin-source, else a prompt)\n");
	fprintf(out, "  -h, --help  show this help\n\n");
	if (l->takes_uri)
		fprintf(out, "The URI selects modules (module-name, module-path, library-*),\n"
		             "slots (slot-*) and tokens (token, manufacturer, serial, model).\n"
		             "With module-path, only that module file is loaded.\n\n");
	fprintf(out, "Configuration: P11GLUE_CONFIG=DIR replaces the system and user\n"
	             "locations by DIR/pkcs11.conf and DIR/modules/ (see p11glue.conf(5)).\n\n"
	             "Exit status: 0 success, 1 error (bad URI, module failure, nothing\n"
	             "matched for list-objects), 2 usage error.\n");
}

/* The listing whose --help pg_tool_options prints (one command runs per
 * process). */
static const listing *helped;

static void
helped_usage(FILE *out)
{
	listing_usage(helped, out);
}

/* Parses argv into l; returns -1 to go on, else an exit code. */
static int
listing_parse(listing *l, int argc, char **argv)
{
	const pg_opt table[] = {
		{ "json", 0, PG_OPT_FLAG, &l->json, 0 },
		{ "login", 0, PG_OPT_FLAG, &l->login, 0 },
	};
	int next, rv;

	helped = l;
	rv = pg_tool_options(argc, argv, table, l->takes_login ? 2 : 1, helped_usage, 0,
	                     l->takes_uri ? 1 : 0, &next);
	if (rv >= 0)
		return rv;
	if (l->needs_uri && next == argc)
		return pg_tool_usage_error(argv[0], "a PKCS#11 URI is required");
	if (next < argc && !pg_token_parse_uri(argv[next], &l->uri))
		return PG_EXIT_FAIL;
	return -1;
}

/* ---------------------------------------------------------------------------
 * Printing tokens
 */

static const struct {
	CK_FLAGS flag;
	const char *name;
} token_flags[] = {
	{ CKF_RNG, "rng" },
	{ CKF_WRITE_PROTECTED, "write-protected" },
	{ CKF_LOGIN_REQUIRED, "login-required" },
	{ CKF_USER_PIN_INITIALIZED, "user-pin-initialized" },
	{ CKF_RESTORE_KEY_NOT_NEEDED, "restore-key-not-needed" },
	{ CKF_CLOCK_ON_TOKEN, "clock-on-token" },
	{ CKF_PROTECTED_AUTHENTICATION_PATH, "protected-authentication-path" },
	{ CKF_DUAL_CRYPTO_OPERATIONS, "dual-crypto-operations" },
	{ CKF_TOKEN_INITIALIZED, "token-initialized" },
	{ CKF_SECONDARY_AUTHENTICATION, "secondary-authentication" },
	{ CKF_USER_PIN_COUNT_LOW, "user-pin-count-low" },
	{ CKF_USER_PIN_FINAL_TRY, "user-pin-final-try" },
	{ CKF_USER_PIN_LOCKED, "user-pin-locked" },
	{ CKF_USER_PIN_TO_BE_CHANGED, "user-pin-to-be-changed" },
	{ CKF_SO_PIN_COUNT_LOW, "so-pin-count-low" },
	{ CKF_SO_PIN_FINAL_TRY, "so-pin-final-try" },
	{ CKF_SO_PIN_LOCKED, "so-pin-locked" },
	{ CKF_SO_PIN_TO_BE_CHANGED, "so-pin-to-be-changed" },
	{ CKF_ERROR_STATE, "error-state" },
};

static int
padded_len(const unsigned char *s, size_t size)
{
	while (size > 0 && (s[size - 1] == ' ' || s[size - 1] == 0))
		size--;
	return (int)size;
}

#define PADDED(field) padded_len(field, sizeof(field)), (const char *)(field)

/* The URI of a token (token attributes only); caller frees. */
static char *
token_uri(const CK_TOKEN_INFO *token)
{
	p11glue_uri *uri = p11glue_uri_new();
	char *text = NULL;

	if (uri != NULL && p11glue_uri_set_token_info(uri, token) == P11GLUE_OK)
		text = p11glue_uri_format(uri);
	p11glue_uri_free(uri);
	return text;
}

static void
print_token_text(const pg_token *t, const char *indent)
{
	char *uri = token_uri(&t->token);

	printf("%stoken: %.*s\n", indent, PADDED(t->token.label));
	printf("%s    uri: %s\n", indent, uri ? uri : "?");
	printf("%s    manufacturer: %.*s\n", indent, PADDED(t->token.manufacturerID));
	printf("%s    model: %.*s\n", indent, PADDED(t->token.model));
	printf("%s    serial-number: %.*s\n", indent, PADDED(t->token.serialNumber));
	printf("%s    hardware-version: %u.%u\n", indent, t->token.hardwareVersion.major,
	       t->token.hardwareVersion.minor);
	printf("%s    firmware-version: %u.%u\n", indent, t->token.firmwareVersion.major,
	       t->token.firmwareVersion.minor);
	printf("%s    flags:\n", indent);
	for (size_t i = 0; i < PG_N_ELEMENTS(token_flags); i++) {
		if (t->token.flags & token_flags[i].flag)
			printf("%s           %s\n", indent, token_flags[i].name);
	}
	free(uri);
}

static void
print_token_json(pg_json *json, const pg_token *t)
{
	char *uri = token_uri(&t->token);
	char version[16];

	pg_json_begin_object(json);
	pg_json_key(json, "label");
	pg_json_padded(json, t->token.label, sizeof(t->token.label));
	pg_json_key_text(json, "uri", uri ? uri : "");
	pg_json_key_string(json, "module", p11glue_module_name(t->module));
	pg_json_key_ulong(json, "slot-id", t->slot);
	pg_json_key(json, "manufacturer");
	pg_json_padded(json, t->token.manufacturerID, sizeof(t->token.manufacturerID));
	pg_json_key(json, "model");
	pg_json_padded(json, t->token.model, sizeof(t->token.model));
	pg_json_key(json, "serial-number");
	pg_json_padded(json, t->token.serialNumber, sizeof(t->token.serialNumber));
	snprintf(version, sizeof(version), "%u.%u", t->token.hardwareVersion.major,
	         t->token.hardwareVersion.minor);
	pg_json_key_string(json, "hardware-version", version);
	snprintf(version, sizeof(version), "%u.%u", t->token.firmwareVersion.major,
	         t->token.firmwareVersion.minor);
	pg_json_key_string(json, "firmware-version", version);
	pg_json_key_begin_array(json, "flags");
	for (size_t i = 0; i < PG_N_ELEMENTS(token_flags); i++) {
		if (t->token.flags & token_flags[i].flag)
			pg_json_string(json, token_flags[i].name);
	}
	pg_json_end_array(json);
	pg_json_end_object(json);
	free(uri);
}

/* ---------------------------------------------------------------------------
 * list-modules
 */

typedef struct {
	pg_json *json;
	p11glue_module *module;
} module_walk;

static int
module_token(const pg_token *t, void *data)
{
	module_walk *w = data;

	if (t->module != w->module)
		return 0;
	if (w->json)
		print_token_json(w->json, t);
	else
		print_token_text(t, "    ");
	return 0;
}

static void
print_module(const pg_token_modules *modules, p11glue_module *mod, pg_json *json)
{
	const char *error = p11glue_module_error(mod);
	module_walk walk = { json, mod };
	CK_INFO info;
	CK_RV rv = pg_token_module_info(mod, &info);
	char version[16] = "";

	if (rv == CKR_OK)
		snprintf(version, sizeof(version), "%u.%u", info.libraryVersion.major,
		         info.libraryVersion.minor);
	if (json) {
		pg_json_begin_object(json);
		pg_json_key_string(json, "name", p11glue_module_name(mod));
		pg_json_key_string(json, "module",
		                   p11glue_module_filename(mod) ? p11glue_module_filename(mod) : "");
	} else {
		printf("%s: %s\n", p11glue_module_name(mod),
		       p11glue_module_filename(mod) ? p11glue_module_filename(mod) : "");
	}
	if (error == NULL && rv != CKR_OK)
		error = pg_token_ckr(rv);
	if (error != NULL) {
		if (json) {
			pg_json_key_string(json, "error", error);
			pg_json_end_object(json);
		} else {
			printf("    error: %s\n", error);
		}
		return;
	}
	if (json) {
		pg_json_key(json, "library-description");
		pg_json_padded(json, info.libraryDescription, sizeof(info.libraryDescription));
		pg_json_key(json, "library-manufacturer");
		pg_json_padded(json, info.manufacturerID, sizeof(info.manufacturerID));
		pg_json_key_string(json, "library-version", version);
		pg_json_key_begin_array(json, "tokens");
	} else {
		printf("    library-description: %.*s\n", PADDED(info.libraryDescription));
		printf("    library-manufacturer: %.*s\n", PADDED(info.manufacturerID));
		printf("    library-version: %s\n", version);
	}
	pg_token_each(modules, NULL, module_token, &walk, NULL);
	if (json) {
		pg_json_end_array(json);
		pg_json_end_object(json);
	}
}

int
pg_cmd_list_modules(int argc, char **argv)
{
	listing l = { "list-modules [--json]",
	              "Lists the PKCS#11 modules registered for this program, their\n"
	              "library information and tokens. A module that cannot be used shows\n"
	              "why (error: ...).", false, false, false };
	pg_token_modules modules;
	pg_json json;
	int status = listing_parse(&l, argc, argv);

	if (status >= 0)
		return status;
	status = pg_token_open_registry(NULL, &modules);
	if (status != PG_EXIT_OK)
		return status;
	pg_json_init(&json, stdout);
	if (l.json)
		pg_json_begin_array(&json);
	/* The registered modules only, as p11-kit lists them. */
	for (size_t i = 0; i < p11glue_registry_count(modules.registry); i++)
		print_module(&modules, p11glue_registry_module(modules.registry, i),
		             l.json ? &json : NULL);
	if (l.json) {
		pg_json_end_array(&json);
		pg_json_finish(&json);
	}
	pg_token_close_registry(&modules);
	return PG_EXIT_OK;
}

/* ---------------------------------------------------------------------------
 * list-tokens
 */

static int
list_token(const pg_token *t, void *data)
{
	pg_json *json = data;

	if (json) {
		print_token_json(json, t);
	} else {
		print_token_text(t, "");
		printf("    module: %s\n", p11glue_module_name(t->module));
		printf("    slot-id: %lu\n", t->slot);
	}
	return 0;
}

int
pg_cmd_list_tokens(int argc, char **argv)
{
	listing l = { "list-tokens [--json] [URI]",
	              "Lists the tokens of the registered modules, or those the URI\n"
	              "selects, with the URI that names each.", false, false, true };
	pg_json json;
	int status = listing_parse(&l, argc, argv);

	if (status >= 0)
		return status;
	status = pg_tool_walk_tokens(l.uri, l.json ? &json : NULL, false, list_token,
	                             l.json ? &json : NULL);
	p11glue_uri_free(l.uri);
	return status;
}

/* ---------------------------------------------------------------------------
 * list-mechanisms
 */

static const struct {
	CK_FLAGS flag;
	const char *name;
} mech_flags[] = {
	{ CKF_HW, "hw" }, { CKF_MESSAGE_ENCRYPT, "message-encrypt" },
	{ CKF_MESSAGE_DECRYPT, "message-decrypt" }, { CKF_MESSAGE_SIGN, "message-sign" },
	{ CKF_MESSAGE_VERIFY, "message-verify" }, { CKF_ENCRYPT, "encrypt" },
	{ CKF_DECRYPT, "decrypt" }, { CKF_DIGEST, "digest" }, { CKF_SIGN, "sign" },
	{ CKF_SIGN_RECOVER, "sign-recover" }, { CKF_VERIFY, "verify" },
	{ CKF_VERIFY_RECOVER, "verify-recover" }, { CKF_GENERATE, "generate" },
	{ CKF_GENERATE_KEY_PAIR, "generate-key-pair" }, { CKF_WRAP, "wrap" },
	{ CKF_UNWRAP, "unwrap" }, { CKF_DERIVE, "derive" },
	{ CKF_EC_F_P, "ec-f-p" }, { CKF_EC_F_2M, "ec-f-2m" },
	{ CKF_EC_NAMEDCURVE, "ec-named-curve" }, { CKF_EC_UNCOMPRESS, "ec-uncompress" },
	{ CKF_EC_COMPRESS, "ec-compress" },
};

static void
print_mechanism(pg_json *json, CK_MECHANISM_TYPE type, const CK_MECHANISM_INFO *info)
{
	const char *name = pg_name_ckm(type);
	char hex[32];

	snprintf(hex, sizeof(hex), "0x%08lx", type);
	if (json) {
		pg_json_begin_object(json);
		pg_json_key_string(json, "mechanism", name ? name : hex);
		pg_json_key_ulong(json, "min-key-size", info->ulMinKeySize);
		pg_json_key_ulong(json, "max-key-size", info->ulMaxKeySize);
		pg_json_key_begin_array(json, "flags");
	} else {
		printf("    %s (%s): key size %lu-%lu,", name ? name : hex, hex,
		       info->ulMinKeySize, info->ulMaxKeySize);
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(mech_flags); i++) {
		if (!(info->flags & mech_flags[i].flag))
			continue;
		if (json)
			pg_json_string(json, mech_flags[i].name);
		else
			printf(" %s", mech_flags[i].name);
	}
	if (json) {
		pg_json_end_array(json);
		pg_json_end_object(json);
	} else {
		printf("\n");
	}
}

static int
list_token_mechanisms(const pg_token *t, void *data)
{
	pg_json *json = data;
	CK_MECHANISM_TYPE *types = NULL;
	CK_MECHANISM_INFO info;
	CK_ULONG n = 0;
	CK_RV rv = pg_token_mechanisms(t, &types, &n);

	if (json) {
		pg_json_begin_object(json);
		pg_json_key(json, "token");
		pg_json_padded(json, t->token.label, sizeof(t->token.label));
		pg_json_key_begin_array(json, "mechanisms");
	} else {
		printf("token: %.*s\n", PADDED(t->token.label));
	}
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
		if (pg_token_mechanism_info(t, types[i], &info) == CKR_OK)
			print_mechanism(json, types[i], &info);
	}
	if (json) {
		pg_json_end_array(json);
		pg_json_end_object(json);
	}
	free(types);
	if (rv != CKR_OK)
		pg_message("C_GetMechanismList: %s", pg_token_ckr(rv));
	return rv == CKR_OK ? 0 : PG_EXIT_FAIL;
}

int
pg_cmd_list_mechanisms(int argc, char **argv)
{
	listing l = { "list-mechanisms [--json] URI",
	              "Lists the mechanisms of the tokens the URI selects, with key sizes\n"
	              "and what each can do.", false, true, true };
	pg_json json;
	int status = listing_parse(&l, argc, argv);

	if (status >= 0)
		return status;
	status = pg_tool_walk_tokens(l.uri, l.json ? &json : NULL, true, list_token_mechanisms,
	                             l.json ? &json : NULL);
	p11glue_uri_free(l.uri);
	return status;
}

/* ---------------------------------------------------------------------------
 * print-config
 */

static void
print_map(pg_json *json, const pg_conf_map *map)
{
	if (json)
		pg_json_begin_object(json);
	for (size_t i = 0; i < map->n; i++) {
		if (json)
			pg_json_key_string(json, map->items[i].key, map->items[i].value);
		else
			printf("    %s: %s\n", map->items[i].key, map->items[i].value);
	}
	if (json)
		pg_json_end_object(json);
}

static void
print_conf(const pg_conf *conf, pg_json *json)
{
	if (json) {
		pg_json_begin_object(json);
		pg_json_key_string(json, "user-config", conf->user_config);
		pg_json_key(json, "global");
		print_map(json, &conf->global);
		pg_json_key_begin_object(json, "modules");
	} else {
		printf("global (user-config: %s):\n", conf->user_config);
		print_map(NULL, &conf->global);
	}
	for (size_t i = 0; i < conf->n_modules; i++) {
		const pg_conf_module *m = &conf->modules[i];
		if (json) {
			pg_json_key_begin_object(json, m->name);
			pg_json_key_string(json, "file", m->file);
			if (m->error)
				pg_json_key_string(json, "error", m->error);
			pg_json_key(json, "settings");
			print_map(json, &m->values);
			pg_json_end_object(json);
		} else {
			printf("%s:\n    # %s\n", m->name, m->file);
			if (m->error)
				printf("    # broken, disabled: %s", m->error);
			print_map(NULL, &m->values);
		}
	}
	if (json) {
		pg_json_end_object(json);
		pg_json_end_object(json);
		pg_json_finish(json);
	}
}

int
pg_cmd_print_config(int argc, char **argv)
{
	listing l = { "print-config [--json]",
	              "Prints the registry configuration as this program sees it: the\n"
	              "global settings and each module's settings after merging the\n"
	              "system and user files, with the file each module came from.",
	              false, false, false };
	pg_conf_paths paths;
	pg_conf *conf;
	pg_json json;
	int status = listing_parse(&l, argc, argv);

	if (status >= 0)
		return status;
	pg_conf_paths_init(&paths);
	conf = pg_conf_load(&paths);
	pg_conf_paths_clear(&paths);
	if (conf == NULL) {
		pg_message("out of memory");
		return PG_EXIT_FAIL;
	}
	pg_token_print_messages((const char *)conf->messages.data);
	pg_json_init(&json, stdout);
	print_conf(conf, l.json ? &json : NULL);
	pg_conf_free(conf);
	return PG_EXIT_OK;
}
