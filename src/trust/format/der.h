/*
 * Minimal DER (X.690) and PEM (RFC 7468) reading for the trust module:
 * views into the caller's bytes, no allocation except base64 output.
 * A pg_der cursor's failure flag sticks, so a run of reads is checked
 * once at the end.
 */
#ifndef PG_TRUST_DER_H
#define PG_TRUST_DER_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	const unsigned char *p;
	size_t len;
} pg_span;

/* A cursor over DER; `failed` sticks. */
typedef struct {
	const unsigned char *p;
	size_t len;
	size_t off;
	bool failed;
} pg_der;

/*
 * The cursor functions are inline: a certificate takes some forty reads.
 * pg_der_peek: the tag of the next element, or -1 at the end or after a
 * failure. pg_der_read: reads the next element, which must have tag
 * `tag` (one byte, short form); *tlv gets the whole element, *value its
 * contents (either may be NULL).
 */
static inline void
pg_der_init(pg_der *d, const unsigned char *p, size_t len)
{
	d->p = p;
	d->len = len;
	d->off = 0;
	d->failed = false;
}

static inline int
pg_der_peek(const pg_der *d)
{
	if (d->failed || d->off >= d->len)
		return -1;
	return d->p[d->off];
}

static inline bool
pg_der_at_end(const pg_der *d)
{
	return !d->failed && d->off == d->len;
}

/* Reads the header at off: one-byte tag, definite length (X.690 §8.1.3). */
static inline bool
pg_der_header(const pg_der *d, size_t *hdr, size_t *clen)
{
	size_t off = d->off, n, l = 0;
	unsigned char b;

	if (d->len < 2 || off > d->len - 2)
		return false;
	if ((d->p[off] & 0x1f) == 0x1f)
		return false;                  /* multi-byte tags: not in X.509 */
	b = d->p[off + 1];
	if (b < 0x80) {
		*hdr = 2;
		l = b;
	} else {
		n = b & 0x7f;
		if (n == 0 || n > sizeof(size_t) || n > 4)
			return false;              /* indefinite or huge: not DER */
		if (off + 2 > d->len || d->len - (off + 2) < n)
			return false;
		for (size_t i = 0; i < n; i++)
			l = (l << 8) | d->p[off + 2 + i];
		if (l < 0x80 || (n > 1 && d->p[off + 2] == 0))
			return false;              /* not minimal */
		*hdr = 2 + n;
	}
	if (d->len - off - *hdr < l)
		return false;
	*clen = l;
	return true;
}

static inline bool
pg_der_read(pg_der *d, int tag, pg_span *tlv, pg_span *value)
{
	size_t hdr, clen;

	if (d->failed || d->off >= d->len || d->p[d->off] != tag ||
	    !pg_der_header(d, &hdr, &clen)) {
		d->failed = true;
		return false;
	}
	if (tlv) {
		tlv->p = d->p + d->off;
		tlv->len = hdr + clen;
	}
	if (value) {
		value->p = d->p + d->off + hdr;
		value->len = clen;
	}
	d->off += hdr + clen;
	return true;
}

/* Reads the next element when its tag is `tag`; true when read. */
bool pg_der_read_optional(pg_der *d, int tag, pg_span *tlv, pg_span *value);
/* Enters a constructed element: *inner iterates over its contents. */
static inline bool
pg_der_enter(pg_der *d, int tag, pg_der *inner)
{
	pg_span v = { NULL, 0 };

	if (!pg_der_read(d, tag, NULL, &v)) {
		pg_der_init(inner, NULL, 0);
		inner->failed = true;
		return false;
	}
	pg_der_init(inner, v.p, v.len);
	return true;
}

/* The parts of an X.509 certificate (RFC 5280 §4.1) the trust module uses. */
typedef struct {
	pg_span der;          /* the whole certificate */
	pg_span tbs;          /* TBSCertificate TLV */
	int version;          /* 1, 2 or 3 */
	pg_span serial;       /* INTEGER TLV */
	pg_span issuer;       /* Name TLV */
	pg_span not_before;   /* Time contents (UTCTime or GeneralizedTime) */
	int not_before_tag;
	pg_span not_after;
	int not_after_tag;
	pg_span subject;      /* Name TLV */
	pg_span spki;         /* SubjectPublicKeyInfo TLV */
	pg_span ski;          /* subjectKeyIdentifier contents, or empty */
	pg_span eku;          /* extKeyUsage extension value (SEQUENCE TLV), or empty */
	bool has_bc, is_ca;   /* basicConstraints */
	bool has_ku;
	unsigned ku;          /* keyUsage bits, bit 0 = digitalSignature */
} pg_cert;

/* Parses a DER certificate; false when it is not one. No copies. */
bool pg_cert_parse(const unsigned char *der, size_t len, pg_cert *cert) PG_MUST_CHECK;

/*
 * An Extension (RFC 5280 §4.1) that fills exactly len bytes: *oid gets
 * the extnID element (tag and length included), *critical its flag and
 * *value the contents of extnValue; any may be NULL. False when der is
 * not one Extension and nothing else.
 */
bool pg_ext_parse(const unsigned char *der, size_t len, pg_span *oid, bool *critical,
                  pg_span *value) PG_MUST_CHECK;

/*
 * A Time as "YYYYMMDD" (CK_DATE text); false when malformed.
 * UTCTime years 50-99 are 19xx (RFC 5280 §4.1.2.5.1).
 */
bool pg_der_time_date(const pg_span *time, int tag, char out[8]);
/* Seconds since the epoch of a Time; false when malformed. */
bool pg_der_time_epoch(const pg_span *time, int tag, long long *out);

/* The text of the first attribute of `oid` (DER contents) in a Name. */
bool pg_name_find(const pg_span *name, const unsigned char *oid, size_t oid_len,
                  pg_span *value);

/* Dotted text of OID contents into out (NUL-terminated); false if too long. */
bool pg_oid_format(const pg_span *oid, char *out, size_t size);
/* DER contents of a dotted OID into out; returns the length, 0 if bad. */
size_t pg_oid_parse(const char *text, unsigned char *out, size_t size);

/* ---------------------------------------------------------------------------
 * PEM
 */

/* One PEM block found in text: its label and base64 body (views). */
typedef struct {
	pg_span label;        /* e.g. "CERTIFICATE" */
	pg_span body;         /* between the BEGIN and END lines */
	size_t begin;         /* offset of "-----BEGIN" in the text */
	size_t end;           /* offset just past the END line */
} pg_pem_block;

/* The 1-based line of an offset in text (for messages only: O(offset)). */
size_t pg_pem_line(const unsigned char *text, size_t offset);

/*
 * Finds the next PEM block at or after *pos. Text between blocks is
 * skipped. Returns false when there is none; *pos moves past the block.
 * A BEGIN line without its END is reported as not found.
 */
bool pg_pem_next(const unsigned char *text, size_t len, size_t *pos,
                 pg_pem_block *block);

/* Room that decoding len bytes of base64 may need. */
static inline size_t
pg_base64_max(size_t len)
{
	return len / 4 * 3 + 3;
}

/*
 * Decodes base64 (spaces, tabs and line ends ignored) into out, which
 * has room for pg_base64_max(len) bytes. Returns the decoded length, or
 * SIZE_MAX on a bad character or bad padding.
 */
size_t pg_base64_decode_to(const unsigned char *in, size_t len, unsigned char *out);
/*
 * Decodes base64 into a new buffer (free()).
 * false on bad characters, bad padding or no memory.
 */
bool pg_base64_decode(const unsigned char *in, size_t len,
                      unsigned char **out, size_t *out_len) PG_MUST_CHECK;
/* Appends base64 of data, 64 characters a line, each line ending "\n". */
void pg_base64_encode_lines(pg_buf *buf, const unsigned char *data, size_t len);
/* Appends a whole PEM block with that label. */
void pg_pem_write(pg_buf *buf, const char *label, const unsigned char *data, size_t len);

/* Does text look like PEM (has a BEGIN line)? */
bool pg_pem_detect(const unsigned char *text, size_t len);

#endif /* PG_TRUST_DER_H */
