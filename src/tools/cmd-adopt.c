/*
 * p11glue adopt: what the user already has (OpenSSH keys, NSS databases,
 * GnuPG's secret keys, files they name) brought into the key store in
 * one run. src/import/adopt*.c finds and writes the keys; the trust
 * decisions of NSS go to p11glue's trust through the trust tools
 * (pg_trust_decide_certs); this file reads the command line and prints
 * the report.
 */
#include "config.h"

#include "store-tool.h"
#include "adopt.h"
#include "trust-tool.h"

#include <stdlib.h>
#include <string.h>

static void
adopt_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue adopt [--dry-run] [--pin-source SRC] [--passphrase-source SRC]\n"
	        "                     [--json] [--module PATH] [--store DIR] [FILE...] [URI]\n"
	        "\n"
	        "Brings the keys, certificates and trust decisions you already have into\n"
	        "the key store in one run, and reports what it took, what was there\n"
	        "already, what it left and why, and what you may remove afterwards.\n"
	        "Nothing is removed from where it was found; a second run adds nothing.\n"
	        "  - every private key in ~/.ssh (OpenSSH and PEM), labelled with the\n"
	        "    comment of its public half;\n"
	        "  - the NSS databases of ~/.pki/nssdb and of every Firefox and\n"
	        "    Thunderbird profile: private keys with their certificates\n"
	        "    (exported by NSS's pk12util), and the trust flags you gave\n"
	        "    certificates, as anchors (for the purposes NSS trusts them for) or\n"
	        "    distrusted certificates in your p11glue trust; NSS's built-in roots\n"
	        "    are left alone;\n"
	        "  - GnuPG's secret keys ($GNUPGHOME, else ~/.gnupg): each becomes a store\n"
	        "    key, an RSA key with the certificate gnupg-pkcs11-scd needs, so that\n"
	        "    after 'p11glue setup --gnupg' gpg uses the same key (same keygrip,\n"
	        "    same fingerprint) from the store; gnupg-pkcs11-scd uses RSA keys\n"
	        "    only, so gpg keeps using gpg-agent's copy of other keys;\n"
	        "  - the PKCS#12 and PEM files named as FILE.\n"
	        "A key is recognized on the token by its public key, a certificate by\n"
	        "its value.\n"
	        "\n"
	        "Options:\n"
	        "  --dry-run                list what would be taken, and from where;\n"
	        "                           nothing is written, no PIN or passphrase asked\n"
	        "  --passphrase-source SRC  passphrases of encrypted keys, GnuPG keys and\n"
	        "                           NSS databases from SRC, asked once for each: a\n"
	        "                           file gives the same one to all, fd:N one line\n"
	        "                           each, in the order the report lists them; else\n"
	        "                           each is asked for on the terminal\n"
	        "  --pin-source SRC         read the token's user PIN from SRC (see PINs below)\n"
	        "  --json                   print a JSON object: the token and the items\n"
	        "                           found, each with its source, where it was, what\n"
	        "                           it is, its state, why, the objects made and what\n"
	        "                           may be removed\n"
	        "  -h, --help               show this help\n"
	        "\n"
	        "Exit status: 1 also when something could not be adopted (a wrong\n"
	        "passphrase, a program that failed); what is left for a reason (a key\n"
	        "type the store does not hold) is no failure.\n"
	        "\n");
	pg_store_help_common(out, "Examples",
	        "  p11glue adopt --dry-run\n"
	        "  p11glue adopt ~/certs/me.p12 'pkcs11:token=mykeys'\n");
}

/* ---------------------------------------------------------------------------
 * Trust decisions
 */

/* The decision of each trust item, through the trust tools. */
static void
make_decisions(pg_adopt_result *r, bool dry_run)
{
	pg_decide_cert *certs = calloc(r->n ? r->n : 1, sizeof(*certs));
	const char *(*oids)[8] = calloc(r->n ? r->n : 1, sizeof(*oids));
	size_t *index = calloc(r->n ? r->n : 1, sizeof(*index)), n = 0;
	pg_decide_report rep;
	int status;

	if (certs == NULL || oids == NULL || index == NULL) {
		r->failed = true;
		goto out;
	}
	for (size_t i = 0; i < r->n; i++) {
		pg_adopt_item *it = &r->items[i];
		pg_decide_cert *c = &certs[n];
		if (!it->trust || it->state != PG_ADOPT_TAKEN)
			continue;
		c->distrust = it->distrust;
		c->der = it->der;
		c->len = it->der_len;
		c->label = it->label;
		for (size_t k = 0; k < it->n_purposes; k++)
			oids[n][c->n_purposes++] = pg_trust_purpose_oid(it->purposes[k]);
		for (size_t k = 0; k < it->n_rejects; k++)
			oids[n][4 + c->n_rejects++] = pg_trust_purpose_oid(it->rejects[k]);
		c->purposes = oids[n];
		c->rejects = oids[n] + 4;
		index[n++] = i;
	}
	if (n == 0)
		goto out;
	status = pg_trust_decide_certs(certs, n, dry_run, &rep);
	for (size_t k = 0; k < n; k++) {
		pg_adopt_item *it = &r->items[index[k]];
		const char *result = k < rep.n_items ? rep.items[k].result : NULL;
		if (result == NULL) {
			it->state = PG_ADOPT_FAILED;
			free(it->why);
			it->why = strdup(status == PG_EXIT_OK || k < rep.n_items
			                 ? "the trust decision failed (said above)"
			                 : "no writable trust location: 'p11glue setup --modules' "
			                   "registers p11glue's trust module");
		} else if (strncmp(result, "already", 7) == 0) {
			it->state = PG_ADOPT_THERE;
		}
	}
	for (size_t i = 0; rep.compat.notes.data && i < 1; i++)
		pg_token_print_messages((const char *)rep.compat.notes.data);
	pg_decide_report_clear(&rep);
out:
	free(certs);
	free(oids);
	free(index);
}

/* ---------------------------------------------------------------------------
 * The report
 */

static const char *
state_text(const pg_adopt_item *it, bool dry)
{
	switch (it->state) {
	case PG_ADOPT_TAKEN: return dry ? "would adopt" : "adopted";
	case PG_ADOPT_THERE: return "already there";
	case PG_ADOPT_LEFT: return "left";
	default: return "failed";
	}
}

/* "anchor for server-auth, email; not code-signing" or "distrust". */
static void
decision_text(const pg_adopt_item *it, char *out, size_t size)
{
	size_t n = 0;

	if (it->distrust) {
		snprintf(out, size, "distrusted");
		return;
	}
	n = (size_t)snprintf(out, size, "anchor for %s", it->n_purposes ? "" : "every purpose");
	for (size_t i = 0; i < it->n_purposes && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "", it->purposes[i]);
	for (size_t i = 0; i < it->n_rejects && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "; distrusted for ",
		                      it->rejects[i]);
}

static void
print_text(const pg_adopt_result *r, bool dry)
{
	char decision[200];
	bool any_remove = false;

	if (r->token != NULL)
		printf("token: %s\n", r->token);
	for (size_t i = 0; i < r->n; i++) {
		const pg_adopt_item *it = &r->items[i];
		printf("%s: %s: %s: %s", state_text(it, dry), it->source, it->from, it->what);
		if (it->trust) {
			decision_text(it, decision, sizeof(decision));
			printf(": %s", decision);
		}
		if (it->why != NULL)
			printf(it->state == PG_ADOPT_LEFT || it->state == PG_ADOPT_FAILED ? ": %s" : " (%s)",
			       it->why);
		printf("\n");
		for (size_t k = 0; k < it->objects.n; k++)
			printf("  %s: %s\n", it->objects.items[k].what,
			       it->objects.items[k].uri ? it->objects.items[k].uri : "?");
		any_remove |= it->remove != NULL;
	}
	if (r->n == 0)
		printf("nothing found to adopt\n");
	if (any_remove && !dry) {
		printf("Nothing was removed. Once your programs use the store, you may remove:\n");
		for (size_t i = 0; i < r->n; i++)
			if (r->items[i].remove != NULL)
				printf("  %s\n", r->items[i].remove);
	}
}

static void
print_json(const pg_adopt_result *r, bool dry)
{
	char decision[200];
	pg_json j;

	pg_json_init(&j, stdout);
	pg_json_begin_object(&j);
	pg_json_key_text(&j, "token", r->token ? r->token : "");
	pg_json_key_bool(&j, "dry-run", dry);
	pg_json_key_begin_array(&j, "items");
	for (size_t i = 0; i < r->n; i++) {
		const pg_adopt_item *it = &r->items[i];
		pg_json_begin_object(&j);
		pg_json_key_text(&j, "source", it->source);
		pg_json_key_string(&j, "from", it->from);
		pg_json_key_string(&j, "what", it->what);
		pg_json_key_text(&j, "state", state_text(it, dry));
		if (it->why != NULL)
			pg_json_key_string(&j, "why", it->why);
		if (it->trust) {
			decision_text(it, decision, sizeof(decision));
			pg_json_key_text(&j, "trust", decision);
		}
		pg_json_key_begin_array(&j, "objects");
		for (size_t k = 0; k < it->objects.n; k++) {
			pg_json_begin_object(&j);
			pg_json_key_text(&j, "object", it->objects.items[k].what);
			pg_json_key_text(&j, "uri", it->objects.items[k].uri ? it->objects.items[k].uri : "");
			pg_json_end_object(&j);
		}
		pg_json_end_array(&j);
		if (it->remove != NULL)
			pg_json_key_string(&j, "may-remove", it->remove);
		pg_json_end_object(&j);
	}
	pg_json_end_array(&j);
	pg_json_end_object(&j);
	pg_json_finish(&j);
}

/* ---------------------------------------------------------------------------
 * The command
 */

int
pg_cmd_adopt(int argc, char **argv)
{
	pg_store_opts store = { 0 };
	pg_adopt_options opts = { 0 };
	pg_adopt_result result = { 0 };
	p11glue_uri *uri = NULL;
	const char *uri_text = NULL;
	bool json = false;
	const pg_opt table[] = {
		{ "dry-run", 0, PG_OPT_FLAG, &opts.dry_run, 0 },
		{ "passphrase-source", 0, PG_OPT_TEXT, &opts.pass_source, 0 },
		PG_PIN_OPTION(&store.pins),
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
		PG_STORE_OPTIONS(&store),
	};
	int next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), adopt_usage, 0,
	                                   -1, &next);

	if (status >= 0)
		return status;
	/* FILE... and, last, a URI. */
	if (next < argc && strncmp(argv[argc - 1], "pkcs11:", 7) == 0)
		uri_text = argv[--argc];
	opts.files = argv + next;
	opts.n_files = (size_t)(argc - next);
	if (!pg_store_parse_uri(uri_text, &uri))
		return PG_EXIT_FAIL;
	status = pg_adopt_run(&store, uri, &opts, &result);
	if (result.token != NULL) {
		make_decisions(&result, opts.dry_run);
		if (json)
			print_json(&result, opts.dry_run);
		else
			print_text(&result, opts.dry_run);
		if (pg_adopt_count(&result, PG_ADOPT_FAILED, true) > 0 || result.failed)
			status = PG_EXIT_FAIL;
	}
	pg_adopt_result_clear(&result);
	pg_pins_clear(&store.pins);
	p11glue_uri_free(uri);
	return status;
}
