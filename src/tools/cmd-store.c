/*
 * p11glue init-token | init-pin | set-pin: a token's life cycle (PKCS#11
 * base specification §5.6: C_InitToken, C_InitPIN, C_SetPIN).
 */
#include "config.h"

#include "store-tool.h"

#include <stdlib.h>
#include <string.h>

/* With --json, what a PIN command did: {"token": URI, key: value}. */
static void
print_pin_json(pg_keytoken *kt, const char *key, const char *value)
{
	pg_json j;

	pg_store_json_begin(&j, kt);
	pg_json_key_string(&j, key, value);
	pg_store_json_end(&j, NULL);
}

/* ---------------------------------------------------------------------------
 * init-token
 */

static void
init_token_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue init-token [--label LABEL] [--so-pin-source SRC] [--force]\n"
	        "                          [--json] [--module PATH] [--store DIR] [URI]\n"
	        "\n"
	        "Creates a token. With the key store module (p11glue-store.so) the new\n"
	        "token goes to the store's free slot, and a new free slot appears; other\n"
	        "modules initialize the first slot whose token is not initialized. The\n"
	        "label comes from --label, else from the URI's token attribute. The SO\n"
	        "(security officer) PIN chosen here later sets and unlocks the user PIN\n"
	        "(init-pin). Prints the new token's URI.\n"
	        "\n"
	        "Options:\n"
	        "  --label LABEL        the token's label, at most 32 bytes\n"
	        "  --so-pin-source SRC  read the SO PIN from SRC (see PINs below); else the\n"
	        "                       URI's pin-value or pin-source; else it is asked\n"
	        "                       for (twice for a new token)\n"
	        "  --force              when a token with this label exists, re-initialize\n"
	        "                       it: every object on it is ERASED (its SO PIN is\n"
	        "                       needed); without --force that is an error\n"
	        "  --json               print a JSON object: the token's URI, label and\n"
	        "                       slot, and whether it was re-initialized\n"
	        "  -h, --help           show this help\n"
	        "\n");
	pg_store_help_common(out, "Example",
	        "  p11glue init-token --label mykeys --so-pin-source ~/so-pin.txt\n"
	        "  p11glue init-pin 'pkcs11:token=mykeys'\n");
}

/* The token that already carries the label, if any (*found set). */
static int
existing_token(pg_keytoken *kt, const p11glue_uri *uri, const char *label, bool *found)
{
	p11glue_uri *named = p11glue_uri_dup(uri);
	int status;

	*found = false;
	if (named == NULL ||
	    p11glue_uri_set(named, P11GLUE_URI_TOKEN, label, strlen(label), NULL) != P11GLUE_OK) {
		p11glue_uri_free(named);
		pg_message("out of memory");
		return PG_EXIT_FAIL;
	}
	status = pg_keytoken_select(kt, named, PG_KEYTOKEN_QUIET);
	p11glue_uri_free(named);
	*found = status == PG_EXIT_OK;
	return PG_EXIT_OK;
}

static int
free_slot(pg_keytoken *kt, const p11glue_uri *uri)
{
	p11glue_uri *any = p11glue_uri_dup(uri);
	int status;

	if (any == NULL) {
		pg_message("out of memory");
		return PG_EXIT_FAIL;
	}
	/* The free slot's token has no label yet. */
	p11glue_uri_unset(any, P11GLUE_URI_TOKEN);
	status = pg_keytoken_select(kt, any, PG_KEYTOKEN_FREE);
	p11glue_uri_free(any);
	return status;
}

static void
print_token(pg_keytoken *kt, const char *label, bool exists, bool json)
{
	char *text;
	pg_json j;

	if (json) {
		pg_store_json_begin(&j, kt);
		pg_json_key_string(&j, "label", label);
		pg_json_key_ulong(&j, "slot", kt->slot);
		pg_json_key_bool(&j, "reinitialized", exists);
		pg_store_json_end(&j, NULL);
		return;
	}
	text = pg_keytoken_uri(kt);
	printf("%s token '%s' in slot %lu: %s\n", exists ? "re-initialized" : "initialized", label,
	       kt->slot, text ? text : "?");
	free(text);
}

static int
do_init_token(pg_keytoken *kt, const p11glue_uri *uri, const char *label, bool force, bool json)
{
	const char *so_source = kt->pins->so_source;
	p11glue_pin *pin = NULL;
	char prompt[96];
	bool exists;
	int status;

	status = existing_token(kt, uri, label, &exists);
	if (status != PG_EXIT_OK)
		return status;
	if (exists && !force) {
		pg_message("a token labelled '%s' exists already; --force erases and "
		              "re-initializes it", label);
		return PG_EXIT_FAIL;
	}
	if (!exists && (status = free_slot(kt, uri)) != PG_EXIT_OK)
		return status;
	/* A new SO PIN is asked twice, and must be one a person can type. */
	snprintf(prompt, sizeof(prompt), exists ? "SO PIN of %s" : "New SO PIN for %s", label);
	if (so_source == NULL && (p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, NULL) ||
	                          p11glue_uri_get(uri, P11GLUE_URI_PIN_SOURCE, NULL))) {
		status = pg_keytoken_read_pin(kt, CKU_SO, uri, &pin);
		if (status == PG_EXIT_OK && !exists && !pg_pin_typable(pin, prompt))
			status = PG_EXIT_FAIL;
	} else {
		status = pg_store_read_secret(so_source, prompt,
		                              exists ? 0 : PG_SECRET_CONFIRM | PG_SECRET_NEW_PIN, &pin);
	}
	if (status != PG_EXIT_OK) {
		p11glue_pin_free(pin);
		return status;
	}
	status = pg_keytoken_init_token(kt, pin, label);
	p11glue_pin_free(pin);
	if (status != PG_EXIT_OK)
		return status;
	print_token(kt, label, exists, json);
	return PG_EXIT_OK;
}

int
pg_cmd_init_token(int argc, char **argv)
{
	pg_store_opts opts = { 0 };
	pg_keytoken kt;
	const char *label = NULL;
	char *from_uri = NULL;
	p11glue_uri *uri = NULL;
	bool force = false, json = false;
	size_t len;
	const pg_opt table[] = {
		{ "label", 0, PG_OPT_TEXT, &label, 0 },
		PG_SO_PIN_OPTION(&opts.pins),
		{ "force", 0, PG_OPT_FLAG, &force, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
	};
	int status = pg_store_options(argc, argv, table, PG_N_ELEMENTS(table), init_token_usage,
	                              &opts, false, &uri);

	if (status >= 0) {
		p11glue_uri_free(uri);
		return status;
	}
	if (label == NULL) {
		const unsigned char *t = p11glue_uri_get(uri, P11GLUE_URI_TOKEN, &len);
		if (t != NULL)
			label = from_uri = (char *)pg_memdup0(t, len);
	}
	if (label == NULL || *label == 0 || strlen(label) > 32 ||
	    (from_uri && strlen(from_uri) != len)) {
		p11glue_uri_free(uri);
		free(from_uri);
		return pg_tool_usage_error(argv[0], label == NULL
		                           ? "a label is needed: --label LABEL or token=LABEL in the URI"
		                           : "the label must be 1-32 bytes without NUL");
	}
	status = pg_keytoken_load(&kt, &opts, uri);
	if (status == PG_EXIT_OK)
		status = do_init_token(&kt, uri, label, force, json);
	pg_keytoken_clear(&kt);
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	free(from_uri);
	return status;
}

/* ---------------------------------------------------------------------------
 * init-pin
 */

static void
init_pin_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue init-pin [--so-pin-source SRC] [--new-pin-source SRC]\n"
	        "                        [--json] [--module PATH] [--store DIR] [URI]\n"
	        "\n"
	        "Sets the user PIN of a token, logged in as its security officer: the\n"
	        "first user PIN of a new token, or a new one after the user PIN was\n"
	        "forgotten or locked by too many wrong PINs (which also unlocks it).\n"
	        "\n"
	        "Options:\n"
	        "  --so-pin-source SRC   read the SO PIN from SRC (see PINs below); else\n"
	        "                        the URI's pin-value or pin-source; else it is\n"
	        "                        asked for\n"
	        "  --new-pin-source SRC  read the new user PIN from SRC; else it is asked\n"
	        "                        for twice\n"
	        "  --json                print a JSON object: the token's URI and\n"
	        "                        \"set\": \"user PIN\"\n"
	        "  -h, --help            show this help\n"
	        "\n");
	pg_store_help_common(out, "Example",
	        "  p11glue init-pin --new-pin-source ~/pin.txt 'pkcs11:token=mykeys'\n");
}

static int
do_init_pin(pg_keytoken *kt, const p11glue_uri *uri, const char *new_source, bool json)
{
	p11glue_pin *pin = NULL;
	char prompt[96];
	int status;

	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_login(kt, CKU_SO, uri)) != PG_EXIT_OK)
		return status;
	snprintf(prompt, sizeof(prompt), "New user PIN for %s", pg_keytoken_label(kt));
	status = pg_store_read_secret(new_source, prompt, PG_SECRET_CONFIRM | PG_SECRET_NEW_PIN, &pin);
	if (status == PG_EXIT_OK)
		status = pg_keytoken_init_pin(kt, pin);
	p11glue_pin_free(pin);
	if (status == PG_EXIT_OK && json)
		print_pin_json(kt, "set", "user PIN");
	else if (status == PG_EXIT_OK)
		printf("user PIN of token '%s' set\n", pg_keytoken_label(kt));
	pg_keytoken_logout(kt);
	return status;
}

static int pin_command(int argc, char **argv, bool set);

int
pg_cmd_init_pin(int argc, char **argv)
{
	return pin_command(argc, argv, false);
}

/* ---------------------------------------------------------------------------
 * set-pin
 */

static void
set_pin_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue set-pin [--so] [--pin-source SRC] [--so-pin-source SRC]\n"
	        "                       [--new-pin-source SRC] [--json] [--module PATH]\n"
	        "                       [--store DIR] [URI]\n"
	        "\n"
	        "Changes the user PIN of a token (with --so: the SO PIN). The current PIN\n"
	        "comes from --pin-source (with --so: --so-pin-source), else the URI's\n"
	        "pin-value or pin-source, else it is asked for. With the key store,\n"
	        "changing a PIN re-wraps the token key; no key is re-encrypted.\n"
	        "\n"
	        "Options:\n"
	        "  --so                  change the SO PIN instead of the user PIN\n"
	        "  --pin-source SRC      read the current user PIN from SRC (see PINs)\n"
	        "  --so-pin-source SRC   with --so: read the current SO PIN from SRC\n"
	        "  --new-pin-source SRC  read the new PIN from SRC; else it is asked for\n"
	        "                        twice\n"
	        "  --json                print a JSON object: the token's URI and\n"
	        "                        \"changed\": \"user PIN\" or \"SO PIN\"\n"
	        "  -h, --help            show this help\n"
	        "\n");
	pg_store_help_common(out, "Example",
	        "  p11glue set-pin 'pkcs11:token=mykeys'\n");
}

static int
do_set_pin(pg_keytoken *kt, const p11glue_uri *uri, bool so, const char *new_source, bool json)
{
	CK_USER_TYPE who = so ? CKU_SO : CKU_USER;
	p11glue_pin *old = NULL, *pin = NULL;
	char prompt[96];
	int status;

	if ((status = pg_keytoken_select(kt, uri, 0)) != PG_EXIT_OK ||
	    (status = pg_keytoken_open(kt, true)) != PG_EXIT_OK ||
	    (status = pg_keytoken_read_pin(kt, who, uri, &old)) != PG_EXIT_OK)
		return status;
	snprintf(prompt, sizeof(prompt), "New %s for %s", so ? "SO PIN" : "PIN",
	         pg_keytoken_label(kt));
	status = pg_store_read_secret(new_source, prompt, PG_SECRET_CONFIRM | PG_SECRET_NEW_PIN, &pin);
	if (status != PG_EXIT_OK) {
		p11glue_pin_free(old);
		return status;
	}
	status = pg_keytoken_set_pin(kt, who, old, pin);
	p11glue_pin_free(old);
	p11glue_pin_free(pin);
	if (status != PG_EXIT_OK)
		return status;
	if (json)
		print_pin_json(kt, "changed", so ? "SO PIN" : "user PIN");
	else
		printf("%s of token '%s' changed\n", so ? "SO PIN" : "user PIN",
		       pg_keytoken_label(kt));
	return PG_EXIT_OK;
}

/* init-pin (set false) and set-pin: the options, then the token. */
static int
pin_command(int argc, char **argv, bool set)
{
	pg_store_opts opts = { 0 };
	const char *new_source = NULL;
	p11glue_uri *uri = NULL;
	pg_keytoken kt;
	bool so = false, json = false;
	const pg_opt init_table[] = {
		PG_SO_PIN_OPTION(&opts.pins),
		{ "new-pin-source", 0, PG_OPT_TEXT, &new_source, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
	};
	const pg_opt set_table[] = {
		PG_PIN_OPTION(&opts.pins),
		PG_SO_PIN_OPTION(&opts.pins),
		{ "new-pin-source", 0, PG_OPT_TEXT, &new_source, 0 },
		{ "so", 0, PG_OPT_FLAG, &so, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
	};
	int status = set ? pg_store_options(argc, argv, set_table, PG_N_ELEMENTS(set_table),
	                                    set_pin_usage, &opts, false, &uri)
	                 : pg_store_options(argc, argv, init_table, PG_N_ELEMENTS(init_table),
	                                    init_pin_usage, &opts, false, &uri);

	if (status < 0) {
		status = pg_keytoken_load(&kt, &opts, uri);
		if (status == PG_EXIT_OK)
			status = set ? do_set_pin(&kt, uri, so, new_source, json)
			             : do_init_pin(&kt, uri, new_source, json);
		pg_keytoken_clear(&kt);
	}
	pg_pins_clear(&opts.pins);
	p11glue_uri_free(uri);
	return status;
}

int
pg_cmd_set_pin(int argc, char **argv)
{
	return pin_command(argc, argv, true);
}
