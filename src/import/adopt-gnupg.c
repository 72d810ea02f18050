/*
 * GnuPG's secret keys for `p11glue adopt` (adopt-core.h). gpg lists the
 * keys whose secret gpg-agent holds (--with-colons -K) and exports their
 * public keys, which tell what the token has already without any
 * passphrase; a key block with something left to adopt is exported with
 * its secrets (--export-secret-keys: gpg-agent protects the export with
 * the key's own passphrase, S2K usage 254) and read by openpgp.c. Its
 * passphrase is asked once: first gpg-agent is asked to export without a
 * pinentry (an unprotected key, or a passphrase it has cached), then
 * with the passphrase we were given (loopback pinentry).
 *
 * The store's copy is the same key, so gpg's fingerprints and keygrips
 * stay; an RSA key gets the self-signed certificate through which
 * gnupg-pkcs11-scd (0.10: RSA only) offers it to gpg-agent.
 */
#include "config.h"

#include "adopt-core.h"
#include "openpgp.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The longest label: a certificate's common name has at most 64
 * characters (RFC 5280 ub-common-name), and the subject is made from it. */
#define MAX_LABEL 64

/* One key of gpg's listing. */
typedef struct {
	char fpr[65];
	char grip[41];
	char caps[16];               /* its own capabilities: s, c, e, a */
	char token[64];              /* "+": gpg-agent has the secret; "#": not; else a card */
	size_t block;                /* index of its primary key in the list */
	bool subkey;
} listed_key;

typedef struct {
	listed_key *keys;
	size_t n, cap;
	char **uids;                 /* per key: its block's first User ID (the primary owns it) */
} listing;

static void
listing_clear(listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!l->keys[i].subkey)
			free(l->uids[i]);
	free(l->uids);
	free(l->keys);
	memset(l, 0, sizeof(*l));
}

/* Field i (1-based) of a colon-separated line into out. */
static void
field(const char *line, int i, char *out, size_t size)
{
	const char *p = line;
	size_t n;

	for (int k = 1; k < i && p != NULL; k++) {
		p = strchr(p, ':');
		if (p != NULL)
			p++;
	}
	n = p ? strcspn(p, ":\n") : 0;
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p ? p : "");
}

/* gpg's User IDs escape ':' and control characters as \xNN. */
static char *
unescape(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;

	for (const char *p = text; out != NULL && *p; p++) {
		if (p[0] == '\\' && p[1] == 'x' && pg_hex_value((unsigned char)p[2]) >= 0 &&
		    pg_hex_value((unsigned char)p[3]) >= 0) {
			int c = pg_hex_value((unsigned char)p[2]) * 16 + pg_hex_value((unsigned char)p[3]);
			*o++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
			p += 3;
		} else {
			*o++ = *p;
		}
	}
	if (out != NULL)
		*o = 0;
	return out;
}

static bool
parse_listing(const char *text, listing *l)
{
	char type[8], value[1024];
	listed_key *k = NULL;

	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		field(line, 1, type, sizeof(type));
		if (strcmp(type, "sec") == 0 || strcmp(type, "ssb") == 0) {
			size_t cap = l->cap;
			if (!pg_array_grow(&l->keys, &l->cap, l->n, sizeof(*l->keys), 16))
				return false;
			if (cap != l->cap) {
				char **uids = realloc(l->uids, l->cap * sizeof(*uids));
				if (uids == NULL)
					return false;
				l->uids = uids;
			}
			k = &l->keys[l->n];
			memset(k, 0, sizeof(*k));
			k->subkey = type[0] == 's' && type[1] == 's';
			if (k->subkey && l->n == 0)
				return false;
			k->block = k->subkey ? l->keys[l->n - 1].block : l->n;
			l->uids[l->n] = k->subkey ? l->uids[k->block] : NULL;
			field(line, 12, k->caps, sizeof(k->caps));
			field(line, 15, k->token, sizeof(k->token));
			l->n++;
		} else if (k != NULL && strcmp(type, "fpr") == 0 && k->fpr[0] == 0) {
			field(line, 10, k->fpr, sizeof(k->fpr));
		} else if (k != NULL && strcmp(type, "grp") == 0 && k->grip[0] == 0) {
			field(line, 10, k->grip, sizeof(k->grip));
		} else if (k != NULL && strcmp(type, "uid") == 0 && l->uids[k->block] == NULL) {
			field(line, 10, value, sizeof(value));
			l->uids[k->block] = unescape(value);
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * gpg
 */

typedef struct {
	pg_adopt *a;
	char *home;                  /* GNUPGHOME */
	char *shown;                 /* the same for messages */
	listing list;
	pg_pgp_ring pub;             /* the public keys */
	unsigned char *pub_data;
	size_t pub_len;
} gnupg;

/* Runs gpg with args after --homedir and --batch. */
static bool
gpg(gnupg *g, const char *const *args, const void *in, size_t in_len, pg_buf *out, pg_buf *err)
{
	char *argv[24] = { "gpg", "--homedir", g->home, "--batch", "--no-tty" };
	size_t n = 5;

	for (; *args && n < PG_N_ELEMENTS(argv) - 1; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	return pg_adopt_exec(argv, in, in_len, out, err);
}

/* The first line gpg wrote on stderr, for messages (lent from err). */
static const char *
first_error(pg_buf *err)
{
	char *text = err->data ? (char *)err->data : "";
	char *nl;

	while (strncmp(text, "gpg: WARNING", 12) == 0 && (nl = strchr(text, '\n')) != NULL)
		text = nl + 1;
	text[strcspn(text, "\n")] = 0;
	return text[0] ? text : "gpg failed";
}

/* "sign", "encrypt", "sign,authenticate" ... of gpg's capabilities. */
static void
usage_text(const char *caps, char *out, size_t size)
{
	static const struct { char c; const char *name; } names[] = {
		{ 's', "sign" }, { 'e', "encrypt" }, { 'a', "authenticate" },
	};
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < PG_N_ELEMENTS(names); i++)
		if (strchr(caps, names[i].c) != NULL)
			n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? "," : "",
			                      names[i].name);
	if (n == 0)
		snprintf(out, size, "certify");
}

/* "UID (gpg USAGE)", the User ID cut (on a UTF-8 boundary) to fit. */
static char *
make_label(const char *uid, const char *usage)
{
	char tail[96], *label;
	size_t room, n = uid ? strlen(uid) : 0;

	snprintf(tail, sizeof(tail), " (gpg %s)", usage);
	room = strlen(tail) < MAX_LABEL ? MAX_LABEL - strlen(tail) : 0;
	if (n > room) {
		n = room;
		while (n > 0 && ((unsigned char)uid[n] & 0xc0) == 0x80)
			n--;
	}
	label = malloc(n + strlen(tail) + 1);
	if (label != NULL)
		snprintf(label, n + strlen(tail) + 1, "%.*s%s", (int)n, uid ? uid : "", tail);
	return label;
}

static const pg_pgp_key *
ring_key(const pg_pgp_ring *ring, const char *fpr)
{
	char hex[65];

	for (size_t i = 0; i < ring->n; i++) {
		const pg_pgp_key *k = &ring->keys[i];
		for (size_t j = 0; j < k->fpr_len; j++)
			snprintf(hex + 2 * j, 3, "%02X", k->fpr[j]);
		if (k->fpr_len > 0 && strcmp(hex, fpr) == 0)
			return k;
	}
	return NULL;
}

static bool
is_rsa(const pg_pgp_key *k)
{
	return k->algo == PG_PGP_RSA || k->algo == PG_PGP_RSA_E || k->algo == PG_PGP_RSA_S;
}

/* ---------------------------------------------------------------------------
 * One key block
 */

typedef struct {
	pg_adopt_item *it[64];       /* per key of the block: its item, or NULL: nothing to do */
	size_t first, n;             /* the block's keys in the listing */
} block;

/* The items of a block: what each key is and whether something is left
 * to do. True when a key needs its secret. */
static bool
describe(gnupg *g, block *b)
{
	bool needed = false;

	for (size_t i = 0; i < b->n; i++) {
		const listed_key *lk = &g->list.keys[b->first + i];
		const pg_pgp_key *k = ring_key(&g->pub, lk->fpr);
		const pg_adopt_key *known = k && k->public_key ? pg_adopt_find_key(g->a, k->public_key) : NULL;
		char from[200], usage[64];
		pg_adopt_item *it;

		usage_text(lk->caps, usage, sizeof(usage));
		snprintf(from, sizeof(from), "%s: %s", g->shown, lk->fpr);
		it = pg_adopt_add(g->a, "gnupg", from, "%s %s %s '%s'",
		                  k ? pg_pgp_algo_name(k->algo) : "?", usage, lk->subkey ? "subkey" : "key",
		                  g->list.uids[b->first + i] ? g->list.uids[b->first + i] : "");
		b->it[i] = NULL;
		if (it == NULL)
			continue;
		if (k == NULL) {
			pg_adopt_set(g->a, it, PG_ADOPT_LEFT, "gpg did not export its public key");
		} else if (k->public_key == NULL) {
			pg_adopt_set(g->a, it, PG_ADOPT_LEFT, "%s; gpg keeps using gpg-agent's copy",
			             k->unsupported ? k->unsupported : "not supported");
		} else if (known != NULL && (known->has_cert || !is_rsa(k))) {
			pg_adopt_set(g->a, it, PG_ADOPT_THERE, NULL);
		} else if (strcmp(lk->token, "+") != 0) {
			pg_adopt_set(g->a, it, PG_ADOPT_LEFT, "%s", strcmp(lk->token, "#") == 0
			             ? "gpg-agent holds no secret for it"
			             : "its secret is on a smart card, not GnuPG's to give");
		} else {
			b->it[i] = it;
			needed = true;
		}
		if (k != NULL && k->public_key != NULL && !is_rsa(k))
			pg_adopt_set(g->a, it, it->state, "%s%sgnupg-pkcs11-scd 0.10 offers RSA keys only: gpg "
			             "keeps using gpg-agent's copy (keep it)", it->why ? it->why : "",
			             it->why ? "; " : "");
		if (k != NULL && is_rsa(k) && (it->state == PG_ADOPT_TAKEN || it->state == PG_ADOPT_THERE))
			pg_adopt_remove(it, "%s/private-keys-v1.d/%s.key, once gpg uses the store "
			                "(p11glue setup --gnupg, then gpg --card-status)", g->shown, lk->grip);
	}
	return needed;
}

/* Exports the block's secrets into *data (free()); pass NULL: without a
 * pinentry. False with gpg's message in err. */
static bool
export_secret(gnupg *g, const char *fpr, const p11glue_pin *pass, unsigned char **data,
              size_t *len, pg_buf *err)
{
	const char *no_pin[] = { "--pinentry-mode", "error", "--export-secret-keys", fpr, NULL };
	const char *loopback[] = { "--pinentry-mode", "loopback", "--passphrase-fd", "0",
		                   "--export-secret-keys", fpr, NULL };
	const unsigned char *pw = NULL;
	size_t pw_len = 0;
	pg_buf in, out;
	bool ok;

	pg_buf_init(&in);
	pg_buf_init(&out);
	pg_buf_clear(err);
	pg_buf_init(err);
	if (pass != NULL) {
		pw = p11glue_pin_value(pass, &pw_len);
		pg_buf_add(&in, pw, pw_len);
		pg_buf_add_byte(&in, '\n');
	}
	ok = !in.failed && gpg(g, pass ? loopback : no_pin, in.data, in.len, &out, err) &&
	     out.len > 0 && !out.failed;
	pg_buf_clear(&in);
	*data = ok ? (unsigned char *)pg_buf_steal(&out, len) : NULL;
	pg_buf_clear(&out);
	return *data != NULL;
}

/* Unlocks and writes each key of the block that needs it. */
static void
adopt_secrets(gnupg *g, block *b, const pg_pgp_ring *ring, p11glue_pin **pass)
{
	char why[200], prompt[300];

	for (size_t i = 0; i < b->n; i++) {
		const listed_key *lk = &g->list.keys[b->first + i];
		const pg_pgp_key *k = ring_key(ring, lk->fpr);
		pg_adopt_item *it = b->it[i];
		EVP_PKEY *priv = NULL;
		char usage[64], *label;
		pg_pgp_result rv;

		if (it == NULL)
			continue;
		if (k == NULL || !k->secret) {
			pg_adopt_set(g->a, it, PG_ADOPT_FAILED, "gpg did not export its secret");
			continue;
		}
		if (pg_pgp_protected(k) && *pass == NULL) {
			snprintf(prompt, sizeof(prompt), "Passphrase of the GnuPG key '%s' (%s)",
			         g->list.uids[lk->block] ? g->list.uids[lk->block] : "", lk->fpr);
			*pass = pg_adopt_ask(g->a, prompt);
		}
		rv = pg_pgp_unlock(k, *pass, 0, &priv, why, sizeof(why));
		if (rv != PG_PGP_OK) {
			pg_adopt_set(g->a, it, rv == PG_PGP_ERR_UNSUPPORTED ? PG_ADOPT_LEFT : PG_ADOPT_FAILED,
			             "%s", why);
			continue;
		}
		usage_text(lk->caps, usage, sizeof(usage));
		label = make_label(g->list.uids[lk->block], usage);
		if (label != NULL)
			pg_adopt_write_certified(g->a, it, priv, label, is_rsa(k));
		else
			pg_adopt_set(g->a, it, PG_ADOPT_FAILED, "out of memory");
		free(label);
		EVP_PKEY_free(priv);
	}
}

/* Every key of the block that needs it: FAILED with why. */
static void
block_failed(gnupg *g, block *b, const char *why)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->it[i] != NULL)
			pg_adopt_set(g->a, b->it[i], PG_ADOPT_FAILED, "%s", why);
}

static void
adopt_block(gnupg *g, block *b)
{
	const listed_key *primary = &g->list.keys[b->first];
	p11glue_pin *pass = NULL;
	unsigned char *data = NULL;
	size_t len = 0;
	pg_pgp_ring ring;
	pg_buf err;
	char why[200], prompt[300];

	pg_pgp_ring_init(&ring);
	pg_buf_init(&err);
	if (!describe(g, b) || g->a->opts->dry_run)
		goto out;
	/* Without a pinentry first: unprotected keys, or cached passphrases. */
	if (!export_secret(g, primary->fpr, NULL, &data, &len, &err)) {
		snprintf(prompt, sizeof(prompt), "Passphrase of the GnuPG key '%s' (%s)",
		         g->list.uids[b->first] ? g->list.uids[b->first] : "", primary->fpr);
		pass = pg_adopt_ask(g->a, prompt);
		if (pass == NULL) {
			block_failed(g, b, "protected, and no passphrase was given");
			goto out;
		}
		if (!export_secret(g, primary->fpr, pass, &data, &len, &err)) {
			block_failed(g, b, strstr(first_error(&err), "assphrase") ? "wrong passphrase "
			             "(gpg-agent refused it)" : first_error(&err));
			goto out;
		}
	}
	if (pg_pgp_parse(data, len, &ring, why, sizeof(why)) != PG_PGP_OK) {
		block_failed(g, b, why);
		goto out;
	}
	adopt_secrets(g, b, &ring, &pass);
out:
	pg_pgp_ring_clear(&ring);
	pg_free_secret(data, len);
	p11glue_pin_free(pass);
	pg_buf_clear(&err);
}

/* ---------------------------------------------------------------------------
 * The run
 */

/* The keys gpg-agent holds and their public keys; false when there are
 * none to look at (said when gpg failed). */
static bool
read_keys(gnupg *g)
{
	const char *list_args[] = { "--with-colons", "--with-keygrip", "--fixed-list-mode", "-K", NULL };
	const char *export_args[] = { "--export", NULL };
	char *argv_fprs[PG_N_ELEMENTS(((block *)0)->it) * 4 + 2];
	pg_buf out, err;
	char why[200] = "";
	pg_adopt_item *it;
	bool ok;

	pg_buf_init(&out);
	pg_buf_init(&err);
	ok = gpg(g, list_args, NULL, 0, &out, &err) && !out.failed &&
	     parse_listing(out.data ? (const char *)out.data : "", &g->list);
	pg_buf_clear(&out);
	if (ok && g->list.n > 0) {
		size_t n = 0;
		argv_fprs[n++] = (char *)export_args[0];
		for (size_t i = 0; i < g->list.n && n < PG_N_ELEMENTS(argv_fprs) - 1; i++)
			if (!g->list.keys[i].subkey)
				argv_fprs[n++] = g->list.keys[i].fpr;
		argv_fprs[n] = NULL;
		pg_buf_init(&out);
		ok = gpg(g, (const char *const *)argv_fprs, NULL, 0, &out, &err) && !out.failed;
		g->pub_data = ok ? (unsigned char *)pg_buf_steal(&out, &g->pub_len) : NULL;
		pg_buf_clear(&out);
		why[0] = 0;
		ok = g->pub_data != NULL &&
		     pg_pgp_parse(g->pub_data, g->pub_len, &g->pub, why, sizeof(why)) == PG_PGP_OK;
	}
	if (!ok && (it = pg_adopt_add(g->a, "gnupg", g->shown, "GnuPG's keys")) != NULL)
		pg_adopt_set(g->a, it, PG_ADOPT_FAILED, "%s", why[0] ? why : first_error(&err));
	pg_buf_clear(&err);
	return ok && g->list.n > 0;
}

void
pg_adopt_gnupg(pg_adopt *a)
{
	const char *env = getenv("GNUPGHOME");
	gnupg g = { a, NULL, NULL, { 0 }, { 0 }, NULL, 0 };
	struct stat st;
	pg_buf b;
	block blk;

	pg_buf_init(&b);
	if (a->opts->gnupghome != NULL || (env != NULL && env[0] != 0))
		pg_buf_add_str(&b, a->opts->gnupghome ? a->opts->gnupghome : env);
	else
		pg_buf_printf(&b, "%s/.gnupg", a->home);
	g.home = pg_buf_steal(&b, NULL);
	if (g.home == NULL)
		return;
	g.shown = pg_adopt_pretty(a, g.home);
	pg_pgp_ring_init(&g.pub);
	/* No GnuPG home, or none with secret keys: nothing to say. */
	pg_buf_init(&b);
	pg_buf_printf(&b, "%s/private-keys-v1.d", g.home);
	if (b.failed || stat((const char *)b.data, &st) != 0 || !S_ISDIR(st.st_mode)) {
		pg_buf_clear(&b);
		goto out;
	}
	pg_buf_clear(&b);
	if (!pg_adopt_have("gpg")) {
		pg_adopt_item *it = pg_adopt_add(a, "gnupg", g.shown, "GnuPG's keys");
		if (it != NULL)
			pg_adopt_set(a, it, PG_ADOPT_LEFT, "gpg is not installed");
		goto out;
	}
	if (!read_keys(&g))
		goto out;
	for (size_t i = 0; i < g.list.n; ) {
		blk.first = i;
		for (blk.n = 1; i + blk.n < g.list.n && g.list.keys[i + blk.n].subkey; blk.n++)
			;
		i += blk.n;
		if (blk.n > PG_N_ELEMENTS(blk.it))
			blk.n = PG_N_ELEMENTS(blk.it);
		adopt_block(&g, &blk);
	}
out:
	listing_clear(&g.list);
	pg_pgp_ring_clear(&g.pub);
	free(g.pub_data);
	free(g.shown);
	free(g.home);
}
