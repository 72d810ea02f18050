#define _GNU_SOURCE
/*
 * Reading trust source files: PEM (CERTIFICATE, TRUSTED CERTIFICATE with
 * OpenSSL's trust and reject purposes, X509 CRL), DER certificates and
 * CRLs, and the persistence format. A broken part of a file is reported
 * with its position and skipped; the rest loads.
 *
 * PEM text is dropped once decoded: entries view the decoded DER blocks.
 */
#include "trust-format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pg_std_purposes[PG_N_PURPOSES] = {
	"1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2", "1.3.6.1.5.5.7.3.3",
	"1.3.6.1.5.5.7.3.4", "1.3.6.1.5.5.7.3.5", "1.3.6.1.5.5.7.3.6",
	"1.3.6.1.5.5.7.3.7", "1.3.6.1.5.5.7.3.8",
};

/* Extension OIDs as TLVs: extKeyUsage, subjectKeyIdentifier, and the
 * reject list of OpenSSL's trust data (1.3.6.1.4.1.3319.6.10.1). */
static const unsigned char tlv_eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
static const unsigned char tlv_ski[] = { 0x06, 0x03, 0x55, 0x1d, 0x0e };
static const unsigned char tlv_reject[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
                                            0x99, 0x77, 0x06, 0x0a, 0x01 };
/* A purpose that means none: an extKeyUsage must name at least one. */
static const char reserved_purpose[] = "1.3.6.1.4.1.3319.6.10.16";

static bool
add_crl(pg_source *src, const unsigned char *der, size_t len)
{
	pg_span *grown = realloc(src->crls, (src->n_crls + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	src->crls = grown;
	src->crls[src->n_crls++] = (pg_span){ der, len };
	return true;
}

/* Appends a DER length (X.690 §8.1.3.5, at most 3 bytes here). */
static void
add_len(pg_buf *b, size_t len)
{
	if (len < 128) {
		pg_buf_add_byte(b, (unsigned char)len);
	} else if (len < 256) {
		pg_buf_add_byte(b, 0x81);
		pg_buf_add_byte(b, (unsigned char)len);
	} else {
		pg_buf_add_byte(b, 0x82);
		pg_buf_add_byte(b, (unsigned char)(len >> 8));
		pg_buf_add_byte(b, (unsigned char)len);
	}
}

static void
add_tlv(pg_buf *b, unsigned char tag, const void *value, size_t len)
{
	pg_buf_add_byte(b, tag);
	add_len(b, len);
	pg_buf_add(b, value, len);
}

/* An Extension (RFC 5280 §4.1): extnID, critical if set, extnValue. */
static unsigned char *
build_ext(const unsigned char *oid_tlv, size_t oid_len, bool critical,
          const pg_buf *inner, size_t *out_len)
{
	pg_buf body, ext;

	pg_buf_init(&body);
	pg_buf_init(&ext);
	pg_buf_add(&body, oid_tlv, oid_len);
	if (critical)
		pg_buf_add(&body, "\x01\x01\xff", 3);
	add_tlv(&body, 0x04, inner->data, inner->len);
	add_tlv(&ext, 0x30, body.data, body.len);
	pg_buf_clear(&body);
	return (unsigned char *)pg_buf_steal(&ext, out_len);
}

/* SEQUENCE OF OBJECT IDENTIFIER of dotted purposes (extKeyUsage shape). */
static void
oid_sequence(pg_buf *out, char **oids, size_t n, bool skip_in, const pg_oid_list *skip)
{
	pg_buf seq;
	unsigned char tmp[64];

	pg_buf_init(&seq);
	for (size_t i = 0; i < n; i++) {
		size_t l;
		if (skip_in && pg_oid_list_has(skip, oids[i]))
			continue;
		l = pg_oid_parse(oids[i], tmp, sizeof(tmp));
		if (l > 0 && l < 128)
			add_tlv(&seq, 0x06, tmp, l);
	}
	add_tlv(out, 0x30, seq.data, seq.len);
	pg_buf_clear(&seq);
}

/* A stapled extension for the key of cert, with owned DER. */
static bool
staple(pg_source *src, const pg_span *spki, const unsigned char *oid, size_t oid_len,
       bool critical, const pg_buf *inner)
{
	size_t len = 0;
	unsigned char *der = build_ext(oid, oid_len, critical, inner, &len);
	pg_entry *e;
	pg_span value;

	if (der == NULL || !pg_source_take(src, der))
		return false;
	if ((e = pg_source_add(src, PG_ENTRY_EXT)) == NULL)
		return false;
	e->ext_value.p = der;
	e->ext_value.len = len;
	e->ext_oid.p = oid;
	e->ext_oid.len = oid_len;
	e->ext_spki = *spki;
	e->label.p = (const unsigned char *)"";
	/* The purposes, for extKeyUsage and reject lists. */
	value.p = inner->data;
	value.len = inner->len;
	if (oid == tlv_ski)
		return true;
	e->oids_ok = pg_oid_list_parse(&value, &e->ext_oids) > 0;
	return e->oids_ok;
}

/*
 * OpenSSL's X509_CERT_AUX after a TRUSTED CERTIFICATE: SEQUENCE { trust
 * SEQUENCE OF OID OPTIONAL, reject [0] SEQUENCE OF OID OPTIONAL, alias
 * UTF8String OPTIONAL, keyid OCTET STRING OPTIONAL, other [1] ... }.
 *
 * As p11-kit reads it: the trusted purposes less the rejected ones become
 * a stapled critical extKeyUsage (with a reserved purpose when none is
 * left), the rejected ones a stapled reject extension, the keyid a
 * subjectKeyIdentifier. No trusted purpose left is OpenSSL's way to
 * write a blocklist entry: the certificate is distrusted.
 */
static bool
parse_aux(pg_source *src, size_t index, const unsigned char *p, size_t len, bool *bad)
{
	pg_der d, aux;
	pg_span alias, keyid, cert_spki = src->entries[index].cert.spki;
	pg_oid_list trust = { NULL, 0 }, reject = { NULL, 0 };
	pg_buf inner;
	bool ok = true, any;
	size_t n_trust = 0;
	int r;

	*bad = false;
	pg_der_init(&d, p, len);
	if (len > 0 && !pg_der_enter(&d, 0x30, &aux)) {
		*bad = true;
		return true;
	}
	if (len == 0)
		pg_der_init(&aux, NULL, 0);
	if (pg_der_peek(&aux) == 0x30) {
		pg_span v = { NULL, 0 };
		if (!pg_der_read(&aux, 0x30, &v, NULL))
			r = 0;
		else if ((r = pg_oid_list_parse(&v, &trust)) < 0) {
			pg_oid_list_clear(&trust);
			return false;
		}
		*bad |= r == 0;
	}
	if (pg_der_peek(&aux) == 0xa0) {
		/* [0] IMPLICIT: the OIDs are the contents themselves. */
		pg_span v = { NULL, 0 };
		if (!pg_der_read(&aux, 0xa0, NULL, &v))
			r = 0;
		else if ((r = pg_oid_list_parse_contents(&v, &reject)) < 0) {
			pg_oid_list_clear(&trust);
			pg_oid_list_clear(&reject);
			return false;
		}
		*bad |= r == 0;
	}
	alias.p = NULL;
	pg_der_read_optional(&aux, 0x0c, NULL, &alias);
	keyid.p = NULL;
	pg_der_read_optional(&aux, 0x04, &keyid, NULL);
	if (aux.failed)
		*bad = true;
	if (*bad)
		goto out;

	for (size_t i = 0; i < trust.n; i++)
		n_trust += !pg_oid_list_has(&reject, trust.oids[i]);
	if (alias.p != NULL) {
		pg_entry *e = &src->entries[index];
		if ((e->label_owned = (char *)pg_memdup0(alias.p, alias.len)) == NULL) {
			ok = false;
			goto out;
		}
		e->label.p = (const unsigned char *)e->label_owned;
		e->label.len = alias.len;
	}
	src->entries[index].explicit_trust = true;
	src->entries[index].src_trust = n_trust == 0 ? PG_SRC_DISTRUST :
	                                src->src_trust == PG_SRC_DISTRUST ? PG_SRC_DISTRUST :
	                                PG_SRC_ANCHOR;

	pg_buf_init(&inner);
	if (n_trust > 0) {
		oid_sequence(&inner, trust.oids, trust.n, true, &reject);
	} else {
		char *none = (char *)reserved_purpose;
		oid_sequence(&inner, &none, 1, false, NULL);
	}
	ok = !inner.failed && staple(src, &cert_spki, tlv_eku, sizeof(tlv_eku), true, &inner);
	pg_buf_clear(&inner);
	any = ok && reject.n > 0;
	if (any) {
		pg_buf_init(&inner);
		oid_sequence(&inner, reject.oids, reject.n, false, NULL);
		ok = !inner.failed && staple(src, &cert_spki, tlv_reject, sizeof(tlv_reject), false,
		                             &inner);
		pg_buf_clear(&inner);
	}
	if (ok && keyid.p != NULL) {
		pg_buf_init(&inner);
		pg_buf_add(&inner, keyid.p, keyid.len);
		ok = !inner.failed && staple(src, &cert_spki, tlv_ski, sizeof(tlv_ski), false, &inner);
		pg_buf_clear(&inner);
	}
out:
	pg_oid_list_clear(&trust);
	pg_oid_list_clear(&reject);
	return ok;
}

/* A certificate (optionally followed by OpenSSL's aux data) at der. */
static bool
take_cert(pg_source *src, const unsigned char *der, size_t len, bool trusted_form,
          const unsigned char *text, size_t offset)
{
#define LINE (text ? pg_pem_line(text, offset) : (size_t)1)

	pg_der d;
	pg_span tlv;
	pg_entry *e;
	size_t index, kept = src->n_entries;
	bool bad = false;

	pg_der_init(&d, der, len);
	if (!pg_der_read(&d, 0x30, &tlv, NULL)) {
		pg_message("%s:%zu: not a DER certificate, skipped", src->path, LINE);
		return true;
	}
	if ((e = pg_source_add(src, PG_ENTRY_CERT)) == NULL)
		return false;
	index = src->n_entries - 1;
	if (!pg_cert_parse(tlv.p, tlv.len, &e->cert) || (!trusted_form && d.off != len)) {
		bad = true;
	} else if (trusted_form) {
		if (!parse_aux(src, index, der + d.off, len - d.off, &bad))
			return false;
	}
	if (!bad && !pg_entry_cert_derive(&src->entries[index]))
		return false;
	if (bad) {
		pg_message("%s:%zu: invalid certificate, skipped", src->path, LINE);
		while (src->n_entries > kept)
			pg_entry_clear(&src->entries[--src->n_entries]);
	}
	return true;
#undef LINE
}

static bool
label_is(const pg_span *label, const char *want)
{
	return label->len == strlen(want) && memcmp(label->p, want, label->len) == 0;
}

static bool
parse_pem(pg_source *src, const unsigned char *data, size_t len)
{
	size_t pos = 0;
	pg_pem_block b;

	while (pg_pem_next(data, len, &pos, &b)) {
		unsigned char *der;
		size_t der_len;
		bool cert = label_is(&b.label, "CERTIFICATE") || label_is(&b.label, "X509 CERTIFICATE");
		bool trusted = label_is(&b.label, "TRUSTED CERTIFICATE");
		bool crl = label_is(&b.label, "X509 CRL");

		if (!cert && !trusted && !crl)
			continue;
		if ((der = malloc(pg_base64_max(b.body.len))) == NULL)
			return false;
		der_len = pg_base64_decode_to(b.body.p, b.body.len, der);
		if (der_len == SIZE_MAX) {
			free(der);
			pg_message("%s:%zu: corrupt PEM block (bad base64), skipped", src->path,
			           pg_pem_line(data, b.begin));
			continue;
		}
		if (!pg_source_take(src, der))
			return false;
		if (crl) {
			if (!add_crl(src, der, der_len))
				return false;
		} else if (!take_cert(src, der, der_len, trusted, data, b.begin)) {
			return false;
		}
	}
	return true;
}

/* A DER file: a certificate, else a CRL (CertificateList, RFC 5280 §5.1). */
static bool
parse_der(pg_source *src, const unsigned char *data, size_t len)
{
	pg_cert c;
	pg_der d, outer, tbs;
	pg_span tlv;

	if (pg_cert_parse(data, len, &c))
		return take_cert(src, data, len, false, NULL, 0);
	pg_der_init(&d, data, len);
	if (pg_der_read(&d, 0x30, &tlv, NULL) && pg_der_at_end(&d)) {
		pg_der_init(&d, data, len);
		pg_der_enter(&d, 0x30, &outer);
		if (pg_der_enter(&outer, 0x30, &tbs) &&
		    (pg_der_peek(&tbs) == 0x02 || pg_der_peek(&tbs) == 0x30))
			return add_crl(src, data, len);
	}
	pg_message("%s: neither a certificate nor a CRL, skipped", src->path);
	return true;
}

bool
pg_source_parse(pg_source *src, unsigned char *data, size_t len)
{
	static const char persist[] = "[p11-kit-object-v1]";
	bool ok = true;

	if (len >= sizeof(persist) - 1 &&
	    (memcmp(data, persist, sizeof(persist) - 1) == 0 ||
	     (data[0] == '#' && memmem(data, len, persist, sizeof(persist) - 1) != NULL))) {
		/* Values of the persistence format may be views into the text. */
		src->data = data;
		return pg_persist_parse(src, data, len);
	}
	if (pg_pem_detect(data, len)) {
		ok = parse_pem(src, data, len);
		free(data);
		return ok;
	}
	if (len > 0 && data[0] == 0x30) {
		/* The certificate or CRL is the file itself. */
		src->data = data;
		return parse_der(src, data, len);
	}
	if (len > 0)
		pg_message("%s: no certificate found, skipped", src->path);
	free(data);
	return true;
}
