#define _GNU_SOURCE
/*
 * Reading trust source files: PEM (CERTIFICATE, TRUSTED CERTIFICATE with
 * OpenSSL's trust and reject purposes, X509 CRL), DER certificates and
 * CRLs, and the persistence format. A broken part of a file is reported
 * with its position and skipped; the rest loads.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pg_std_purposes[PG_N_PURPOSES] = {
	"1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2", "1.3.6.1.5.5.7.3.3",
	"1.3.6.1.5.5.7.3.4", "1.3.6.1.5.5.7.3.5", "1.3.6.1.5.5.7.3.6",
	"1.3.6.1.5.5.7.3.7", "1.3.6.1.5.5.7.3.8",
};

static bool
add_blob(pg_source *src, unsigned char *blob)
{
	unsigned char **grown = realloc(src->blobs, (src->n_blobs + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	src->blobs = grown;
	src->blobs[src->n_blobs++] = blob;
	return true;
}

static pg_entry *
add_entry(pg_source *src, int kind)
{
	pg_entry *grown = realloc(src->entries, (src->n_entries + 1) * sizeof(*grown));
	pg_entry *e;

	if (grown == NULL)
		return NULL;
	src->entries = grown;
	e = &src->entries[src->n_entries++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->origin = src->path;
	e->src_trust = src->src_trust;
	return e;
}

static bool
add_crl(pg_source *src, const unsigned char *der, size_t len)
{
	pg_span *grown = realloc(src->crls, (src->n_crls + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	src->crls = grown;
	src->crls[src->n_crls].p = der;
	src->crls[src->n_crls].len = len;
	src->n_crls++;
	return true;
}

static const unsigned char oid_cn[] = { 0x55, 0x04, 0x03 };
static const unsigned char oid_ou[] = { 0x55, 0x04, 0x0b };
static const unsigned char oid_o[] = { 0x55, 0x04, 0x0a };

void
pg_entry_cert_derive(pg_entry *e)
{
	pg_cert *c = &e->cert;

	pg_sha1(c->der.p, c->der.len, e->sha1);
	pg_md5(c->der.p, c->der.len, e->md5);
	pg_sha1(c->spki.p, c->spki.len, e->spki_sha1);
	e->has_dates = pg_der_time_date(&c->not_before, c->not_before_tag, e->start) &&
	               pg_der_time_date(&c->not_after, c->not_after_tag, e->end);
	e->issuer = c->issuer;
	e->serial = c->serial;
	if (c->has_bc)
		e->category = c->is_ca ? 2 : 3;
	else
		e->category = c->version == 1 && c->subject.len == c->issuer.len &&
		              memcmp(c->subject.p, c->issuer.p, c->issuer.len) == 0 ? 2 : 0;
	/* The label: the alias given with the certificate, else the subject's
	 * commonName, organizationalUnitName or organizationName. */
	if (e->label.p == NULL &&
	    !pg_name_find(&c->subject, oid_cn, sizeof(oid_cn), &e->label) &&
	    !pg_name_find(&c->subject, oid_ou, sizeof(oid_ou), &e->label) &&
	    !pg_name_find(&c->subject, oid_o, sizeof(oid_o), &e->label)) {
		e->label.p = (const unsigned char *)"";
		e->label.len = 0;
	}
}

/* Builds an Extension (RFC 5280 §4.1) holding a SEQUENCE OF OID. */
static unsigned char *
build_oid_ext(const unsigned char *ext_oid, size_t ext_oid_len, bool critical,
              char **oids, size_t n, size_t *out_len)
{
	pg_buf seq, oct, ext;
	unsigned char tmp[64];
	char *result;

	pg_buf_init(&seq);
	pg_buf_init(&oct);
	pg_buf_init(&ext);
	for (size_t i = 0; i < n; i++) {
		size_t l = pg_oid_parse(oids[i], tmp, sizeof(tmp));
		if (l == 0 || l > 127)
			continue;
		pg_buf_add_byte(&seq, 0x06);
		pg_buf_add_byte(&seq, (unsigned char)l);
		pg_buf_add(&seq, tmp, l);
	}
	/* Lengths here stay under 64 KiB: a few purposes at most. */
#define ADD_LEN(b, l)                                                       \
	do {                                                                    \
		size_t l_ = (l);                                                    \
		if (l_ < 128)                                                       \
			pg_buf_add_byte(b, (unsigned char)l_);                          \
		else if (l_ < 256) {                                                \
			pg_buf_add_byte(b, 0x81);                                       \
			pg_buf_add_byte(b, (unsigned char)l_);                          \
		} else {                                                            \
			pg_buf_add_byte(b, 0x82);                                       \
			pg_buf_add_byte(b, (unsigned char)(l_ >> 8));                   \
			pg_buf_add_byte(b, (unsigned char)l_);                          \
		}                                                                   \
	} while (0)
	pg_buf_add_byte(&oct, 0x30);
	ADD_LEN(&oct, seq.len);
	pg_buf_add(&oct, seq.data, seq.len);
	pg_buf_add_byte(&ext, 0x06);
	ADD_LEN(&ext, ext_oid_len);
	pg_buf_add(&ext, ext_oid, ext_oid_len);
	if (critical)
		pg_buf_add(&ext, "\x01\x01\xff", 3);
	pg_buf_add_byte(&ext, 0x04);
	ADD_LEN(&ext, oct.len);
	pg_buf_add(&ext, oct.data, oct.len);
	pg_buf_clear(&seq);
	pg_buf_init(&seq);
	pg_buf_add_byte(&seq, 0x30);
	ADD_LEN(&seq, ext.len);
	pg_buf_add(&seq, ext.data, ext.len);
#undef ADD_LEN
	pg_buf_clear(&oct);
	pg_buf_clear(&ext);
	result = pg_buf_steal(&seq, out_len);
	return (unsigned char *)result;
}

static const unsigned char pg_oid_eku[3] = { 0x55, 0x1d, 0x25 };
static const unsigned char pg_oid_reject[10] = { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x99, 0x77, 0x06, 0x0a, 0x01 };

/* Reads a SEQUENCE OF OBJECT IDENTIFIER contents into dotted strings. */
static bool
read_oid_list(pg_der *seq, char ***out, size_t *n)
{
	pg_span oid;
	char text[128];

	while (pg_der_peek(seq) == 0x06) {
		char **grown;
		pg_der_read(seq, 0x06, NULL, &oid);
		if (!pg_oid_format(&oid, text, sizeof(text)))
			return false;
		grown = realloc(*out, (*n + 1) * sizeof(char *));
		if (grown == NULL)
			return false;
		*out = grown;
		if (((*out)[*n] = strdup(text)) == NULL)
			return false;
		(*n)++;
	}
	return pg_der_at_end(seq);
}

/* The purposes of an EKU or reject Extension value (SEQUENCE OF OID). */
bool pg_ext_purposes(const pg_span *value, char ***out, size_t *n);
bool
pg_ext_purposes(const pg_span *value, char ***out, size_t *n)
{
	pg_der d, seq;

	pg_der_init(&d, value->p, value->len);
	if (!pg_der_enter(&d, 0x30, &seq))
		return false;
	return read_oid_list(&seq, out, n);
}

/*
 * OpenSSL's X509_CERT_AUX after the certificate: SEQUENCE { trust SEQUENCE
 * OF OID OPTIONAL, reject [0] IMPLICIT SEQUENCE OF OID OPTIONAL, alias
 * UTF8String OPTIONAL, keyid OCTET STRING OPTIONAL, other [1] ... }.
 */
static bool
parse_aux(pg_entry *e, const unsigned char *p, size_t len)
{
	pg_der d, aux, seq;
	pg_span alias;

	if (len == 0)
		return true;
	pg_der_init(&d, p, len);
	if (!pg_der_enter(&d, 0x30, &aux))
		return false;
	if (pg_der_peek(&aux) == 0x30) {
		pg_der_enter(&aux, 0x30, &seq);
		e->restricted = true;
		if (!read_oid_list(&seq, &e->trust_oids, &e->n_trust))
			return false;
	}
	if (pg_der_peek(&aux) == 0xa0) {
		pg_der_enter(&aux, 0xa0, &seq);
		if (!read_oid_list(&seq, &e->reject_oids, &e->n_reject))
			return false;
	}
	if (pg_der_read_optional(&aux, 0x0c, NULL, &alias)) {
		e->label_owned = (char *)pg_memdup0(alias.p, alias.len);
		if (e->label_owned == NULL)
			return false;
		e->label.p = (const unsigned char *)e->label_owned;
		e->label.len = alias.len;
	}
	if (e->restricted)
		e->eku_ext = build_oid_ext(pg_oid_eku, sizeof(pg_oid_eku), true,
		                           e->trust_oids, e->n_trust, &e->eku_ext_len);
	if (e->n_reject)
		e->rej_ext = build_oid_ext(pg_oid_reject, sizeof(pg_oid_reject), false,
		                           e->reject_oids, e->n_reject, &e->rej_ext_len);
	return !aux.failed;
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

	pg_der_init(&d, der, len);
	if (!pg_der_read(&d, 0x30, &tlv, NULL)) {
		pg_message("%s:%zu: not a DER certificate, skipped", src->path, LINE);
		return true;
	}
	e = add_entry(src, PG_ENTRY_CERT);
	if (e == NULL)
		return false;
	if (!pg_cert_parse(tlv.p, tlv.len, &e->cert) ||
	    (!trusted_form && d.off != len) ||
	    (trusted_form && !parse_aux(e, der + d.off, len - d.off))) {
		pg_message("%s:%zu: invalid certificate, skipped", src->path, LINE);
		free(e->label_owned);
		for (size_t i = 0; i < e->n_trust; i++)
			free(e->trust_oids[i]);
		for (size_t i = 0; i < e->n_reject; i++)
			free(e->reject_oids[i]);
		free(e->trust_oids);
		free(e->reject_oids);
		free(e->eku_ext);
		free(e->rej_ext);
		src->n_entries--;
		return true;
	}
	/* A TRUSTED CERTIFICATE trusts (OpenSSL's meaning), unless it sits
	 * in a blocklist. */
	if (trusted_form && src->src_trust == PG_SRC_PLAIN)
		e->src_trust = PG_SRC_ANCHOR;
	pg_entry_cert_derive(e);
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
		if (!pg_base64_decode(b.body.p, b.body.len, &der, &der_len)) {
			pg_message("%s:%zu: corrupt PEM block (bad base64), skipped", src->path,
			           pg_pem_line(data, b.begin));
			continue;
		}
		if (!add_blob(src, der)) {
			free(der);
			return false;
		}
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
pg_source_parse(pg_source *src, const unsigned char *data, size_t len)
{
	static const char persist[] = "[p11-kit-object-v1]";

	if (len >= sizeof(persist) - 1 &&
	    (memcmp(data, persist, sizeof(persist) - 1) == 0 ||
	     (data[0] == '#' && memmem(data, len, persist, sizeof(persist) - 1) != NULL)))
		return pg_persist_parse(src, data, len);
	if (pg_pem_detect(data, len))
		return parse_pem(src, data, len);
	if (len > 0 && data[0] == 0x30)
		return parse_der(src, data, len);
	if (len > 0)
		pg_message("%s: no certificate found, skipped", src->path);
	return true;
}

void
pg_source_clear(pg_source *src)
{
	for (size_t i = 0; i < src->n_entries; i++) {
		pg_entry *e = &src->entries[i];
		free(e->label_owned);
		for (size_t j = 0; j < e->n_trust; j++)
			free(e->trust_oids[j]);
		for (size_t j = 0; j < e->n_reject; j++)
			free(e->reject_oids[j]);
		free(e->trust_oids);
		free(e->reject_oids);
		free(e->eku_ext);
		free(e->rej_ext);
	}
	free(src->entries);
	for (size_t i = 0; i < src->n_blobs; i++)
		free(src->blobs[i]);
	free(src->blobs);
	free(src->crls);
	free(src->data);
	src->entries = NULL;
	src->n_entries = 0;
	src->blobs = NULL;
	src->n_blobs = 0;
	src->crls = NULL;
	src->n_crls = 0;
	src->data = NULL;
}
