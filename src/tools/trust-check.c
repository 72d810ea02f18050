/*
 * p11glue trust check: for the configured trust (the tokens `trust list`
 * reads), what OpenSSL, GnuTLS, NSS and Java would accept, for every
 * anchor, every distrusted certificate and every certificate a CRL in
 * use revokes, for one purpose. Each consumer is read from what it reads
 * (trust-consumers.c); chains are built over the configured certificates
 * and the consumer's own. Exit 0 when all agree, 1 on a disagreement (or
 * when an artefact cannot be read), 2 on a usage error.
 */
#define _GNU_SOURCE
#include "config.h"

#include "trust-consumers.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include <dirent.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { D_ACCEPT, D_REJECT, D_NA };
static const char *const decision_names[] = { "accept", "reject", "n/a" };

#define MAX_DEPTH 8
#define N_CONSUMERS 4

typedef struct {
	const char *kind;              /* anchor, distrusted, revoked, ... */
	bool expect_accept;
	X509 *x;                       /* a certificate (lent), or NULL ... */
	const X509_NAME *issuer;       /* ... a revocation (views into a CRL) */
	const ASN1_INTEGER *serial;
	char name[256];
	char id[128];                  /* SHA-1 of the certificate, or the serial */
	int decision[N_CONSUMERS];
	char why[N_CONSUMERS][320];
} item;

typedef struct {
	pg_check_ctx k;
	pg_consumer *consumers[N_CONSUMERS];
	item *items;
	size_t n_items;
	X509_CRL **crls;
	size_t n_crls;
	size_t n_anchors, n_distrusted, n_revoked, n_disagree;
} check;

static bool
self_issued(X509 *x)
{
	return X509_check_issued(x, x) == X509_V_OK;
}

/* Can x sign a chain (a CA, or self-signed)? Else it is an end entity. */
static bool
as_issuer(X509 *x)
{
	return X509_check_ca(x) != 0 || self_issued(x);
}

static int decide(const check *ck, pg_consumer *c, X509 *x, bool issuer, int depth,
                  pg_ttrust *own, char *why, size_t size);

/* Does c accept a chain from x up through an issuer it accepts? */
static bool
chain_accepted(const check *ck, pg_consumer *c, X509 *x, int depth, char *why, size_t size)
{
	STACK_OF(X509) *issuers = sk_X509_new_null();
	bool ok = false;
	char sub[320], name[200];
	pg_ttrust own;

	if (issuers == NULL)
		return false;
	for (size_t i = 0; i < ck->k.set->n_certs; i++)
		if (ck->k.x[i] && X509_check_issued(ck->k.x[i], x) == X509_V_OK &&
		    X509_up_ref(ck->k.x[i]) && !sk_X509_push(issuers, ck->k.x[i]))
			X509_free(ck->k.x[i]);
	if (c->ops->issuers)
		c->ops->issuers(c, x, issuers);
	for (int i = 0; i < sk_X509_num(issuers) && !ok; i++) {
		X509 *y = sk_X509_value(issuers, i);
		if (X509_cmp(y, x) == 0 || X509_verify(x, X509_get0_pubkey(y)) != 1)
			continue;
		if (decide(ck, c, y, true, depth + 1, &own, sub, sizeof(sub)) == D_ACCEPT) {
			pg_check_cert_name(y, name, sizeof(name));
			snprintf(why, size, "issued by \"%s\", which it accepts", name);
			ok = true;
		}
	}
	sk_X509_pop_free(issuers, X509_free);
	return ok;
}

/* c's decision on x: its own trust, else a chain to something it trusts. */
static int
decide(const check *ck, pg_consumer *c, X509 *x, bool issuer, int depth, pg_ttrust *own,
       char *why, size_t size)
{
	*own = c->ops->trust(c, &ck->k, x, issuer, why, size);
	if (*own == PG_T_TRUSTED)
		return D_ACCEPT;
	if (*own == PG_T_REJECTED)
		return D_REJECT;
	if (*own == PG_T_NA)
		return D_NA;
	if (depth < MAX_DEPTH && !self_issued(x) && chain_accepted(ck, c, x, depth, why, size))
		return D_ACCEPT;
	return D_REJECT;
}

static void
judge_cert(check *ck, item *it, size_t ci)
{
	pg_consumer *c = ck->consumers[ci];
	bool issuer = as_issuer(it->x);
	pg_ttrust own;
	int d = decide(ck, c, it->x, issuer, 0, &own, it->why[ci], sizeof(it->why[ci]));

	/* Accepted only through a trusted issuer, where the consumer has no way
	 * to distrust this certificate: a limit of its format, not a fault of
	 * the configuration. */
	if (d == D_ACCEPT && !it->expect_accept && own == PG_T_NEUTRAL &&
	    !c->ops->can_distrust(c, it->x, issuer)) {
		char tail[320];
		snprintf(tail, sizeof(tail), "%s", it->why[ci]);
		snprintf(it->why[ci], sizeof(it->why[ci]),
		         "cannot express distrust of this certificate (%.250s)", tail);
		d = D_NA;
	}
	it->decision[ci] = d;
}

static void
judge_revocation(check *ck, item *it, size_t ci)
{
	pg_consumer *c = ck->consumers[ci];
	int r = c->ops->revoked(c, &ck->k, it->issuer, it->serial, it->why[ci], sizeof(it->why[ci]));

	it->decision[ci] = r < 0 ? D_NA : r ? D_REJECT : D_ACCEPT;
}

/* ---------------------------------------------------------------------------
 * What is checked
 */

static item *
add_item(check *ck)
{
	item *grown = realloc(ck->items, (ck->n_items + 1) * sizeof(*grown));

	if (grown == NULL)
		return NULL;
	ck->items = grown;
	memset(&grown[ck->n_items], 0, sizeof(*grown));
	return &grown[ck->n_items++];
}

static void
hex(const unsigned char *p, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 3 <= size; i++)
		o += (size_t)snprintf(out + o, size - o, "%02x", p[i]);
}

static bool
collect_certs(check *ck)
{
	const pg_trust_set *set = ck->k.set;

	for (size_t i = 0; i < set->n_certs; i++) {
		const pg_tcert *c = &set->certs[i];
		unsigned char sha1[20];
		unsigned int len = 0;
		item *it;
		if (ck->k.x[i] == NULL || !(c->trusted || c->distrusted))
			continue;
		if ((it = add_item(ck)) == NULL)
			return false;
		it->x = ck->k.x[i];
		it->expect_accept = pg_trust_selected(c, PG_F_ANCHORS, NULL, ck->k.purpose);
		if (c->distrusted) {
			it->kind = "distrusted";
			ck->n_distrusted++;
		} else {
			it->kind = it->expect_accept ? "anchor" : "anchor, not for this purpose";
			ck->n_anchors++;
		}
		if (c->label[0])
			snprintf(it->name, sizeof(it->name), "%s", c->label);
		else
			pg_check_cert_name(it->x, it->name, sizeof(it->name));
		X509_digest(it->x, EVP_sha1(), sha1, &len);
		hex(sha1, len, it->id, sizeof(it->id));
	}
	return true;
}

static bool
same_revocation(const item *it, const X509_NAME *issuer, const ASN1_INTEGER *serial)
{
	return it->x == NULL && X509_NAME_cmp(it->issuer, issuer) == 0 &&
	       ASN1_INTEGER_cmp(it->serial, serial) == 0;
}

/* Every serial number of the CRLs the trust module uses. */
static bool
collect_revocations(check *ck)
{
	const pg_trust_set *set = ck->k.set;

	ck->crls = calloc(set->n_crls + 1, sizeof(*ck->crls));
	if (ck->crls == NULL)
		return false;
	for (size_t i = 0; i < set->n_crls; i++) {
		const unsigned char *p = set->crls[i].der;
		X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)set->crls[i].len);
		STACK_OF(X509_REVOKED) *revoked;
		char *issuer;
		if (crl == NULL)
			continue;
		ck->crls[ck->n_crls++] = crl;
		revoked = X509_CRL_get_REVOKED(crl);
		issuer = X509_NAME_oneline(X509_CRL_get_issuer(crl), NULL, 0);
		for (int j = 0; j < sk_X509_REVOKED_num(revoked); j++) {
			const ASN1_INTEGER *serial =
				X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(revoked, j));
			BIGNUM *bn = ASN1_INTEGER_to_BN(serial, NULL);
			char *digits = bn ? BN_bn2hex(bn) : NULL;
			bool seen = false;
			item *it;
			for (size_t k = 0; k < ck->n_items && !seen; k++)
				seen = same_revocation(&ck->items[k], X509_CRL_get_issuer(crl), serial);
			if (!seen && (it = add_item(ck)) != NULL) {
				it->kind = "revoked";
				it->issuer = X509_CRL_get_issuer(crl);
				it->serial = serial;
				snprintf(it->name, sizeof(it->name), "serial %s of %s",
				         digits ? digits : "?", issuer ? issuer : "?");
				snprintf(it->id, sizeof(it->id), "%s", digits ? digits : "");
				ck->n_revoked++;
			}
			OPENSSL_free(digits);
			BN_free(bn);
		}
		OPENSSL_free(issuer);
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Report
 */

static void
report_text(const check *ck, bool verbose)
{
	for (size_t n = 0; n < N_CONSUMERS; n++)
		if (ck->consumers[n]->note)
			printf("note: %s: %s\n", ck->consumers[n]->name, ck->consumers[n]->note);
	for (size_t i = 0; i < ck->n_items; i++) {
		const item *it = &ck->items[i];
		const char *want = it->expect_accept ? "accept" : "reject";
		if (verbose)
			printf("\"%s\" (%s): expected %s\n", it->name, it->kind, want);
		for (size_t n = 0; n < N_CONSUMERS; n++) {
			int d = it->decision[n];
			bool bad = d != D_NA && (d == D_ACCEPT) != it->expect_accept;
			if (verbose)
				printf("    %-8s %-6s %s%s\n", ck->consumers[n]->name, decision_names[d],
				       bad ? "DISAGREES: " : "", it->why[n]);
			else if (bad)
				printf("disagreement: \"%s\" (%s): %s: expected %s, actual %s: %s\n",
				       it->name, it->kind, ck->consumers[n]->name, want,
				       decision_names[d], it->why[n]);
		}
	}
	printf("trust check for %s: %zu anchors, %zu distrusted, %zu revoked; ",
	       ck->k.purpose_name, ck->n_anchors, ck->n_distrusted, ck->n_revoked);
	if (ck->n_disagree == 0)
		printf("OpenSSL, GnuTLS, NSS and Java agree\n");
	else
		printf("%zu disagreement%s\n", ck->n_disagree, ck->n_disagree == 1 ? "" : "s");
}

static void
json_item_head(pg_json *j, const item *it)
{
	pg_json_key(j, "certificate");
	pg_json_string(j, it->name);
	pg_json_key(j, "kind");
	pg_json_string(j, it->kind);
	pg_json_key(j, it->x ? "sha1" : "serial");
	pg_json_string(j, it->id);
	pg_json_key(j, "expected");
	pg_json_string(j, it->expect_accept ? "accept" : "reject");
}

static void
report_json(const check *ck, bool verbose)
{
	pg_json j;

	pg_json_init(&j, stdout);
	pg_json_begin_object(&j);
	pg_json_key(&j, "purpose");
	pg_json_string(&j, ck->k.purpose_name);
	pg_json_key(&j, "anchors");
	pg_json_ulong(&j, ck->n_anchors);
	pg_json_key(&j, "distrusted");
	pg_json_ulong(&j, ck->n_distrusted);
	pg_json_key(&j, "revoked");
	pg_json_ulong(&j, ck->n_revoked);
	pg_json_key(&j, "agree");
	pg_json_bool(&j, ck->n_disagree == 0);
	pg_json_key(&j, "notes");
	pg_json_begin_array(&j);
	for (size_t n = 0; n < N_CONSUMERS; n++)
		if (ck->consumers[n]->note)
			pg_json_string(&j, ck->consumers[n]->note);
	pg_json_end_array(&j);
	pg_json_key(&j, "disagreements");
	pg_json_begin_array(&j);
	for (size_t i = 0; i < ck->n_items; i++)
		for (size_t n = 0; n < N_CONSUMERS; n++) {
			const item *it = &ck->items[i];
			int d = it->decision[n];
			if (d == D_NA || (d == D_ACCEPT) == it->expect_accept)
				continue;
			pg_json_begin_object(&j);
			json_item_head(&j, it);
			pg_json_key(&j, "consumer");
			pg_json_string(&j, ck->consumers[n]->name);
			pg_json_key(&j, "actual");
			pg_json_string(&j, decision_names[d]);
			pg_json_key(&j, "reason");
			pg_json_string(&j, it->why[n]);
			pg_json_end_object(&j);
		}
	pg_json_end_array(&j);
	if (verbose) {
		pg_json_key(&j, "results");
		pg_json_begin_array(&j);
		for (size_t i = 0; i < ck->n_items; i++) {
			const item *it = &ck->items[i];
			pg_json_begin_object(&j);
			json_item_head(&j, it);
			for (size_t n = 0; n < N_CONSUMERS; n++) {
				pg_json_key(&j, ck->consumers[n]->name);
				pg_json_begin_object(&j);
				pg_json_key(&j, "decision");
				pg_json_string(&j, decision_names[it->decision[n]]);
				pg_json_key(&j, "reason");
				pg_json_string(&j, it->why[n]);
				pg_json_end_object(&j);
			}
			pg_json_end_object(&j);
		}
		pg_json_end_array(&j);
	}
	pg_json_end_object(&j);
	pg_json_finish(&j);
}

/* ---------------------------------------------------------------------------
 * The command
 */

static void
check_help(FILE *out)
{
	fprintf(out,
	        "usage: p11glue trust check [--purpose=<usage>] [--json] [--verbose]\n"
	        "                           [--openssl-directory=DIR] [--java-cacerts=FILE]\n\n"
	        "Compares what OpenSSL, GnuTLS, NSS and Java accept with the configured trust,\n"
	        "for every anchor, distrusted certificate and revoked serial number.\n\n"
	        "  --purpose=<usage>         the purpose to check (default server-auth):\n"
	        "                              server-auth, client-auth, email, code-signing\n"
	        "                              or a dotted OID\n"
	        "  --openssl-directory=DIR   check this directory (as -CApath reads it) instead\n"
	        "                            of a fresh --format=openssl-directory extraction\n"
	        "  --java-cacerts=FILE       check this keystore instead of a fresh\n"
	        "                            --format=java-cacerts extraction\n"
	        "  --json                    print the result as JSON\n"
	        "  -v, --verbose             show every consumer's decision, not only\n"
	        "                            disagreements\n"
	        "  -h, --help                show this help\n\n"
	        "Exit status: 0 all agree, 1 a disagreement or an error, 2 usage error.\n");
}

/* Removes the temporary extraction (read-only files, as extract writes). */
static void
remove_tree(const char *path)
{
	struct stat st;
	DIR *dir;
	struct dirent *e;
	char child[4200];

	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		chmod(path, 0700);
		if ((dir = opendir(path)) != NULL) {
			while ((e = readdir(dir)) != NULL) {
				if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
					continue;
				snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
				remove_tree(child);
			}
			closedir(dir);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

typedef struct {
	const char *purpose_name, *openssl_dir, *java_keystore;
	bool json, verbose;
} check_opts;

static int
parse_check_opts(int argc, char **argv, check_opts *o)
{
	static const struct option options[] = {
		{ "purpose", required_argument, NULL, 'p' },
		{ "openssl-directory", required_argument, NULL, 'o' },
		{ "java-cacerts", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int opt;

	pg_tool_getopt_reset();
	while ((opt = getopt_long(argc, argv, ":vh", options, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->purpose_name = optarg;
			break;
		case 'o':
			o->openssl_dir = optarg;
			break;
		case 'j':
			o->java_keystore = optarg;
			break;
		case 'J':
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			check_help(stdout);
			return PG_EXIT_OK;
		default:
			return pg_tool_option_error(argv[0], opt, argv);
		}
	}
	if (optind < argc)
		return pg_tool_usage_error(argv[0], "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* Extracts what OpenSSL and Java read into tmp, where not given. */
static int
extract_artefacts(const pg_trust_set *set, const char *purpose, check_opts *o, char *tmp,
                  char *ossl, char *java, size_t size)
{
	const char *base = getenv("TMPDIR");

	if (o->openssl_dir && o->java_keystore)
		return PG_EXIT_OK;
	snprintf(tmp, size, "%s/p11glue-check.XXXXXX", base && *base ? base : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		pg_message("cannot create a temporary directory in %s", base ? base : "/tmp");
		tmp[0] = 0;
		return PG_EXIT_FAIL;
	}
	if (o->openssl_dir == NULL) {
		snprintf(ossl, size, "%s/openssl", tmp);
		if (pg_trust_extract(set, "openssl-directory", PG_F_POLICY, NULL, NULL, ossl,
		                     false, false) != PG_EXIT_OK)
			return PG_EXIT_FAIL;
		o->openssl_dir = ossl;
	}
	if (o->java_keystore == NULL) {
		snprintf(java, size, "%s/cacerts", tmp);
		if (pg_trust_extract(set, "java-cacerts", PG_F_ANCHORS, NULL, purpose, java,
		                     false, false) != PG_EXIT_OK)
			return PG_EXIT_FAIL;
		o->java_keystore = java;
	}
	return PG_EXIT_OK;
}

static void
check_clear(check *ck)
{
	for (size_t n = 0; n < N_CONSUMERS; n++)
		pg_consumer_free(ck->consumers[n]);
	for (size_t i = 0; ck->k.x && i < ck->k.set->n_certs; i++)
		X509_free(ck->k.x[i]);
	free(ck->k.x);
	for (size_t i = 0; i < ck->n_crls; i++)
		X509_CRL_free(ck->crls[i]);
	free(ck->crls);
	free(ck->items);
}

static int
run_check(check *ck, const check_opts *o, const char *ossl_label, const char *java_label)
{
	const pg_trust_set *set = ck->k.set;

	ck->k.x = calloc(set->n_certs + 1, sizeof(X509 *));
	if (ck->k.x == NULL)
		return PG_EXIT_FAIL;
	for (size_t i = 0; i < set->n_certs; i++) {
		const unsigned char *p = set->certs[i].der;
		ck->k.x[i] = d2i_X509(NULL, &p, (long)set->certs[i].der_len);
		if (ck->k.x[i] && set->certs[i].label[0])
			X509_alias_set1(ck->k.x[i], (const unsigned char *)set->certs[i].label, -1);
	}
	ck->consumers[0] = pg_consumer_openssl(o->openssl_dir, ossl_label);
	ck->consumers[1] = pg_consumer_gnutls(set);
	ck->consumers[2] = pg_consumer_nss(set);
	ck->consumers[3] = pg_consumer_java(o->java_keystore, java_label);
	for (size_t n = 0; n < N_CONSUMERS; n++)
		if (ck->consumers[n] == NULL)
			return PG_EXIT_FAIL;
	if (!collect_certs(ck) || !collect_revocations(ck))
		return PG_EXIT_FAIL;
	for (size_t i = 0; i < ck->n_items; i++) {
		item *it = &ck->items[i];
		for (size_t n = 0; n < N_CONSUMERS; n++) {
			if (it->x)
				judge_cert(ck, it, n);
			else
				judge_revocation(ck, it, n);
			if (it->decision[n] != D_NA && (it->decision[n] == D_ACCEPT) != it->expect_accept)
				ck->n_disagree++;
		}
	}
	if (o->json)
		report_json(ck, o->verbose);
	else
		report_text(ck, o->verbose);
	return ck->n_disagree ? PG_EXIT_FAIL : PG_EXIT_OK;
}

int
pg_trust_cmd_check(int argc, char **argv)
{
	check_opts o = { .purpose_name = "server-auth" };
	check ck;
	pg_trust_set set;
	char tmp[4096] = "", ossl[4200], java[4200];
	const char *purpose;
	int rv = parse_check_opts(argc, argv, &o);

	if (rv >= 0)
		return rv;
	if ((purpose = pg_trust_purpose_oid(o.purpose_name)) == NULL)
		return pg_tool_usage_error(argv[0], "unsupported purpose: %s", o.purpose_name);
	if ((rv = pg_trust_load(&set)) != PG_EXIT_OK)
		return rv;
	memset(&ck, 0, sizeof(ck));
	ck.k.set = &set;
	ck.k.purpose = purpose;
	ck.k.purpose_name = o.purpose_name;
	{
		bool own_ossl = o.openssl_dir == NULL, own_java = o.java_keystore == NULL;
		rv = extract_artefacts(&set, purpose, &o, tmp, ossl, java, sizeof(tmp));
		if (rv == PG_EXIT_OK)
			rv = run_check(&ck, &o,
			               own_ossl ? "the extracted openssl-directory" : o.openssl_dir,
			               own_java ? "the extracted java-cacerts" : o.java_keystore);
	}
	check_clear(&ck);
	if (tmp[0])
		remove_tree(tmp);
	pg_trust_clear(&set);
	return rv;
}
