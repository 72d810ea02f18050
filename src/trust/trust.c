/*
 * The trust decisions of one token's certificates, as p11-kit's trust
 * module makes them, with "distrust wins" applied across the token:
 *
 * - Copies of one certificate (equal DER) share distrust: any copy in a
 *   blocklist, distrusted by its file, revoked (issuer and serial) or
 *   whose public key is distrusted makes every copy distrusted.
 * - Stapled extensions (CKO_X_CERTIFICATE_EXTENSION) attach to a public
 *   key and replace the certificate's own extension of that OID:
 *   basicConstraints decides the category, keyUsage the NSS key usages,
 *   extKeyUsage restricts the trusted purposes and the reject list
 *   (OpenSSL's) distrusts purposes. Unlike p11-kit's module, where a
 *   reject list read after its certificate is lost, the order in which
 *   files are read does not matter.
 * - NSS trust values: a trusted authority is a TRUSTED_DELEGATOR, another
 *   trusted certificate TRUSTED, a distrusted one NOT_TRUSTED for every
 *   usage; key usages follow keyUsage; purposes not listed in a
 *   restriction or reject list are TRUST_UNKNOWN.
 */
#include "trust-store.h"

#include <stdlib.h>
#include <string.h>

/* Extension OIDs as TLVs. */
static const unsigned char tlv_bc[] = { 0x06, 0x03, 0x55, 0x1d, 0x13 };
static const unsigned char tlv_ku[] = { 0x06, 0x03, 0x55, 0x1d, 0x0f };
static const unsigned char tlv_eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
static const unsigned char tlv_reject[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
                                            0x99, 0x77, 0x06, 0x0a, 0x01 };

typedef struct {
	pg_entry *e;
	size_t order;                  /* load order, for stable sorting */
} ranked;

static int
span_cmp(const pg_span *a, const pg_span *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->len ? memcmp(a->p, b->p, a->len) : 0;
}

static int
cmp_cert(const void *x, const void *y)
{
	const ranked *a = x, *b = y;
	int c = span_cmp(&a->e->cert.der, &b->e->cert.der);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int
cmp_ext(const void *x, const void *y)
{
	const ranked *a = x, *b = y;
	int c = span_cmp(&a->e->ext_spki, &b->e->ext_spki);
	if (c == 0)
		c = span_cmp(&a->e->ext_oid, &b->e->ext_oid);
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int
cmp_key(const void *x, const void *y)
{
	return span_cmp(x, y);
}

static int
cmp_revoked(const void *x, const void *y)
{
	const pg_entry *a = *(pg_entry *const *)x, *b = *(pg_entry *const *)y;
	int c = span_cmp(&a->issuer, &b->issuer);
	return c ? c : span_cmp(&a->serial, &b->serial);
}

/* The first stapled extension (in load order) of a key and OID. */
static const pg_entry *
stapled(const ranked *exts, size_t n, const pg_span *spki, const unsigned char *oid,
        size_t oid_len)
{
	pg_entry key;
	ranked probe = { &key, 0 };
	size_t lo = 0, hi = n;

	memset(&key, 0, sizeof(key));
	key.ext_spki = *spki;
	key.ext_oid.p = oid;
	key.ext_oid.len = oid_len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_ext(&exts[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && span_cmp(&exts[lo].e->ext_spki, spki) == 0 &&
	    span_cmp(&exts[lo].e->ext_oid, &key.ext_oid) == 0)
		return exts[lo].e;
	return NULL;
}

/* The extnValue of an Extension DER. */
static bool
ext_inner(const pg_entry *ext, pg_span *inner)
{
	pg_der d, e;

	pg_der_init(&d, ext->ext_value.p, ext->ext_value.len);
	if (!pg_der_enter(&d, 0x30, &e) || !pg_der_read(&e, 0x06, NULL, NULL))
		return false;
	pg_der_read_optional(&e, 0x01, NULL, NULL);
	return pg_der_read(&e, 0x04, NULL, inner);
}

/* basicConstraints (RFC 5280 §4.2.1.9): cA, false when absent. */
static bool
stapled_is_ca(const pg_entry *ext, bool *is_ca)
{
	pg_span inner, v;
	pg_der d, bc;

	if (!ext_inner(ext, &inner))
		return false;
	pg_der_init(&d, inner.p, inner.len);
	if (!pg_der_enter(&d, 0x30, &bc))
		return false;
	*is_ca = pg_der_read_optional(&bc, 0x01, NULL, &v) && v.len == 1 && v.p[0] != 0;
	return !bc.failed;
}

/* keyUsage (RFC 5280 §4.2.1.3) as bits, bit 0 = digitalSignature. */
static bool
stapled_ku(const pg_entry *ext, unsigned *ku)
{
	pg_span inner, bits;
	pg_der d;

	if (!ext_inner(ext, &inner))
		return false;
	pg_der_init(&d, inner.p, inner.len);
	if (!pg_der_read(&d, 0x03, NULL, &bits) || bits.len < 1)
		return false;
	*ku = 0;
	for (size_t i = 1; i < bits.len && i < 3; i++)
		for (int b = 0; b < 8; b++)
			if (bits.p[i] & (0x80 >> b))
				*ku |= 1u << ((i - 1) * 8 + (size_t)b);
	return true;
}

static bool
key_distrusted(const pg_span *keys, size_t n, const pg_span *spki)
{
	return n > 0 && bsearch(spki, keys, n, sizeof(*keys), cmp_key) != NULL;
}

static bool
revoked(pg_entry **rev, size_t n, const pg_entry *e)
{
	return n > 0 && bsearch(&e, rev, n, sizeof(*rev), cmp_revoked) != NULL;
}

/* Category and the restrictions that stapled or own extensions make. */
static void
decide_extensions(pg_entry *e, const ranked *exts, size_t n_exts, bool *has_ku, unsigned *ku)
{
	const pg_span *spki = &e->cert.spki;
	const pg_entry *x;
	bool is_ca = false;

	x = stapled(exts, n_exts, spki, tlv_bc, sizeof(tlv_bc));
	if (x != NULL && stapled_is_ca(x, &is_ca))
		e->authority = is_ca;
	else if (e->cert.has_bc)
		e->authority = e->cert.is_ca;
	else
		e->authority = e->cert.version == 1 && span_cmp(&e->cert.subject, &e->cert.issuer) == 0;
	/* PKCS#11 §4.6.3: 2 authority, 3 other entity (any certificate that
	 * is not a known authority). */
	e->category = e->authority ? 2 : 3;

	e->purposes = e->rejects = NULL;
	*has_ku = e->cert.has_ku;
	*ku = e->cert.ku;
	if (e->distrusted)
		return;
	x = stapled(exts, n_exts, spki, tlv_eku, sizeof(tlv_eku));
	if (x != NULL) {
		if (x->oids_ok)
			e->purposes = &x->ext_oids;
		else
			pg_message("%s: invalid stapled extKeyUsage, ignored", x->origin);
	} else if (e->oids_ok) {
		e->purposes = &e->own_eku;
	}
	x = stapled(exts, n_exts, spki, tlv_reject, sizeof(tlv_reject));
	if (x != NULL && x->oids_ok)
		e->rejects = &x->ext_oids;
	x = stapled(exts, n_exts, spki, tlv_ku, sizeof(tlv_ku));
	if (x != NULL)
		*has_ku = stapled_ku(x, ku);
}

static void
nss_values(pg_entry *e, bool has_ku, unsigned ku)
{
	CK_ULONG allow, neutral;

	if (e->distrusted)
		allow = CKT_NSS_NOT_TRUSTED;
	else if (e->anchored)
		allow = e->authority ? CKT_NSS_TRUSTED_DELEGATOR : CKT_NSS_TRUSTED;
	else
		allow = CKT_NSS_TRUST_UNKNOWN;
	/* Key usages: those keyUsage allows, all without one (RFC 5280). */
	for (int i = 0; i < 7; i++)
		e->nss[i] = allow == CKT_NSS_NOT_TRUSTED || !has_ku || (ku & (1u << i))
		            ? allow : CKT_NSS_TRUST_UNKNOWN;
	if (allow == CKT_NSS_NOT_TRUSTED)
		neutral = allow;
	else if (e->purposes || e->rejects)
		neutral = CKT_NSS_TRUST_UNKNOWN;
	else
		neutral = allow;
	for (int i = 0; i < PG_N_PURPOSES; i++) {
		const char *oid = pg_std_purposes[i];
		if (pg_oid_list_has(e->rejects, oid))
			e->nss[7 + i] = CKT_NSS_NOT_TRUSTED;
		else if (pg_oid_list_has(e->purposes, oid))
			e->nss[7 + i] = allow;
		else
			e->nss[7 + i] = neutral;
	}
}

bool
pg_trust_compute(pg_trust_input *in)
{
	ranked *certs = malloc((in->n_certs + 1) * sizeof(*certs));
	ranked *exts = malloc((in->n_exts + 1) * sizeof(*exts));

	if (certs == NULL || exts == NULL) {
		free(certs);
		free(exts);
		return false;
	}
	for (size_t i = 0; i < in->n_certs; i++)
		certs[i] = (ranked){ in->certs[i], i };
	for (size_t i = 0; i < in->n_exts; i++)
		exts[i] = (ranked){ in->exts[i], i };
	/* (qsort takes no NULL array, even empty.) */
	if (in->n_certs > 1)
		qsort(certs, in->n_certs, sizeof(*certs), cmp_cert);
	if (in->n_exts > 1)
		qsort(exts, in->n_exts, sizeof(*exts), cmp_ext);
	if (in->n_keys > 1)
		qsort(in->keys, in->n_keys, sizeof(*in->keys), cmp_key);
	if (in->n_revoked > 1)
		qsort(in->revoked, in->n_revoked, sizeof(*in->revoked), cmp_revoked);

	for (size_t i = 0; i < in->n_certs;) {
		size_t j = i;
		bool anchor = false, distrust = false, has_ku;
		unsigned ku;
		pg_entry *first = certs[i].e;

		for (; j < in->n_certs && span_cmp(&certs[j].e->cert.der, &first->cert.der) == 0; j++) {
			pg_entry *e = certs[j].e;
			anchor |= e->src_trust == PG_SRC_ANCHOR;
			distrust |= e->src_trust == PG_SRC_DISTRUST || revoked(in->revoked, in->n_revoked, e) ||
			            key_distrusted(in->keys, in->n_keys, &e->cert.spki);
		}
		for (size_t k = i; k < j; k++) {
			pg_entry *e = certs[k].e;
			e->distrusted = distrust;
			e->trusted = e->src_trust == PG_SRC_ANCHOR && !distrust;
			e->anchored = anchor && !distrust;
			/* The first copy read carries the NSS trust object and the
			 * assertions (the sort keeps load order among equals). */
			e->primary = k == i;
			e->own_nss = false;
			decide_extensions(e, exts, in->n_exts, &has_ku, &ku);
			nss_values(e, has_ku, ku);
		}
		i = j;
	}
	free(certs);
	free(exts);
	return true;
}
