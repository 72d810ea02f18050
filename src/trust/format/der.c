/*
 * DER and PEM reading for the trust module (X.690 §8.1: tag, length,
 * contents; RFC 7468 for PEM).
 */
#include "der.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
pg_der_read_optional(pg_der *d, int tag, pg_span *tlv, pg_span *value)
{
	if (pg_der_peek(d) != tag)
		return false;
	return pg_der_read(d, tag, tlv, value);
}

/* Compares short OIDs without a call: they differ mostly in the last byte. */
static bool
span_eq(const pg_span *s, const unsigned char *p, size_t len)
{
	if (s->len != len)
		return false;
	for (size_t i = len; i-- > 0;)
		if (s->p[i] != p[i])
			return false;
	return true;
}

static const unsigned char oid_ski[] = { 0x55, 0x1d, 0x0e };
static const unsigned char oid_ku[] = { 0x55, 0x1d, 0x0f };
static const unsigned char oid_bc[] = { 0x55, 0x1d, 0x13 };
static const unsigned char oid_eku[] = { 0x55, 0x1d, 0x25 };

bool
pg_ext_parse(const unsigned char *der, size_t len, pg_span *oid, bool *critical, pg_span *value)
{
	pg_der d, ext;
	pg_span flag = { NULL, 0 }, id, v;

	pg_der_init(&d, der, len);
	if (!pg_der_enter(&d, 0x30, &ext) || !pg_der_at_end(&d) ||
	    !pg_der_read(&ext, 0x06, &id, NULL))
		return false;
	if (pg_der_read_optional(&ext, 0x01, NULL, &flag) && flag.len != 1)
		return false;
	if (!pg_der_read(&ext, 0x04, NULL, &v) || !pg_der_at_end(&ext))
		return false;
	if (oid)
		*oid = id;
	if (critical)
		*critical = flag.len == 1 && flag.p[0] != 0;
	if (value)
		*value = v;
	return true;
}

/* One Extension (RFC 5280 §4.1: extnID, critical DEFAULT FALSE, extnValue). */
static bool
parse_extension(pg_der *exts, pg_cert *c)
{
	pg_der ext, in;
	pg_span oid, value, tmp;

	if (!pg_der_enter(exts, 0x30, &ext) || !pg_der_read(&ext, 0x06, NULL, &oid))
		return false;
	pg_der_read_optional(&ext, 0x01, NULL, NULL);
	if (!pg_der_read(&ext, 0x04, NULL, &value) || !pg_der_at_end(&ext))
		return false;
	pg_der_init(&in, value.p, value.len);
	if (span_eq(&oid, oid_ski, sizeof(oid_ski))) {
		if (!pg_der_read(&in, 0x04, NULL, &c->ski))
			return false;
	} else if (span_eq(&oid, oid_bc, sizeof(oid_bc))) {
		pg_der bc;
		if (!pg_der_enter(&in, 0x30, &bc))
			return false;
		c->has_bc = true;
		if (pg_der_read_optional(&bc, 0x01, NULL, &tmp))
			c->is_ca = tmp.len == 1 && tmp.p[0] != 0;
	} else if (span_eq(&oid, oid_ku, sizeof(oid_ku))) {
		if (!pg_der_read(&in, 0x03, NULL, &tmp) || tmp.len < 1)
			return false;
		c->has_ku = true;
		c->ku = 0;
		/* BIT STRING: first octet = unused bits; bit 0 is the MSB of octet 1. */
		for (size_t i = 1; i < tmp.len && i < 3; i++)
			for (int b = 0; b < 8; b++)
				if (tmp.p[i] & (0x80 >> b))
					c->ku |= 1u << ((i - 1) * 8 + (size_t)b);
	} else if (span_eq(&oid, oid_eku, sizeof(oid_eku))) {
		if (!pg_der_read(&in, 0x30, &c->eku, NULL))
			return false;
	}
	return true;
}

bool
pg_cert_parse(const unsigned char *der, size_t len, pg_cert *c)
{
	pg_der top, cert, tbs, validity;
	pg_span ver;

	memset(c, 0, sizeof(*c));
	pg_der_init(&top, der, len);
	if (!pg_der_read(&top, 0x30, &c->der, NULL) || !pg_der_at_end(&top))
		return false;
	pg_der_init(&top, der, len);
	pg_der_enter(&top, 0x30, &cert);
	pg_der_read(&cert, 0x30, &c->tbs, NULL);
	pg_der_read(&cert, 0x30, NULL, NULL);        /* signatureAlgorithm */
	pg_der_read(&cert, 0x03, NULL, NULL);        /* signatureValue */
	if (!pg_der_at_end(&cert))
		return false;

	pg_der_init(&cert, c->tbs.p, c->tbs.len);
	pg_der_enter(&cert, 0x30, &tbs);
	c->version = 1;
	if (pg_der_peek(&tbs) == 0xa0) {
		pg_der v;
		pg_der_enter(&tbs, 0xa0, &v);
		if (!pg_der_read(&v, 0x02, NULL, &ver) || ver.len != 1 || ver.p[0] > 2)
			return false;
		c->version = ver.p[0] + 1;
	}
	pg_der_read(&tbs, 0x02, &c->serial, NULL);
	pg_der_read(&tbs, 0x30, NULL, NULL);         /* signature */
	pg_der_read(&tbs, 0x30, &c->issuer, NULL);
	pg_der_enter(&tbs, 0x30, &validity);
	c->not_before_tag = pg_der_peek(&validity);
	if (c->not_before_tag != 0x17 && c->not_before_tag != 0x18)
		return false;
	pg_der_read(&validity, c->not_before_tag, NULL, &c->not_before);
	c->not_after_tag = pg_der_peek(&validity);
	if (c->not_after_tag != 0x17 && c->not_after_tag != 0x18)
		return false;
	pg_der_read(&validity, c->not_after_tag, NULL, &c->not_after);
	if (!pg_der_at_end(&validity))
		return false;
	pg_der_read(&tbs, 0x30, &c->subject, NULL);
	pg_der_read(&tbs, 0x30, &c->spki, NULL);
	pg_der_read_optional(&tbs, 0x81, NULL, NULL);
	pg_der_read_optional(&tbs, 0x82, NULL, NULL);
	if (pg_der_peek(&tbs) == 0xa3) {
		pg_der wrap, exts;
		pg_der_enter(&tbs, 0xa3, &wrap);
		pg_der_enter(&wrap, 0x30, &exts);
		while (pg_der_peek(&exts) == 0x30)
			if (!parse_extension(&exts, c))
				return false;
		if (!pg_der_at_end(&exts) || !pg_der_at_end(&wrap))
			return false;
	}
	return pg_der_at_end(&tbs) && c->serial.len > 2;
}

static bool
digits(const unsigned char *p, size_t n, int *out)
{
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

/* Splits a Time into year, month, day, hour, minute, second. */
static bool
time_parts(const pg_span *t, int tag, int f[6])
{
	const unsigned char *p = t->p;
	size_t ylen = tag == 0x17 ? 2 : 4;

	/* UTCTime YYMMDDHHMM[SS]Z, GeneralizedTime YYYYMMDDHHMMSS[.f]Z. */
	if (t->len < ylen + 8 + 1 || !digits(p, ylen, &f[0]))
		return false;
	if (tag == 0x17)
		f[0] += f[0] < 50 ? 2000 : 1900;
	for (int i = 0; i < 4; i++)
		if (!digits(p + ylen + 2 * (size_t)i, 2, &f[1 + i]))
			return false;
	f[5] = 0;
	if (t->len >= ylen + 10 + 1 && !digits(p + ylen + 8, 2, &f[5]))
		f[5] = 0;
	return f[1] >= 1 && f[1] <= 12 && f[2] >= 1 && f[2] <= 31;
}

bool
pg_der_time_date(const pg_span *time, int tag, char out[8])
{
	int f[6];

	if (!time_parts(time, tag, f) || f[0] > 9999)
		return false;
	/* YYYYMMDD, as CK_DATE holds it (PKCS#11 §2.3). */
	out[0] = (char)('0' + f[0] / 1000);
	out[1] = (char)('0' + f[0] / 100 % 10);
	out[2] = (char)('0' + f[0] / 10 % 10);
	out[3] = (char)('0' + f[0] % 10);
	out[4] = (char)('0' + f[1] / 10);
	out[5] = (char)('0' + f[1] % 10);
	out[6] = (char)('0' + f[2] / 10);
	out[7] = (char)('0' + f[2] % 10);
	return true;
}

bool
pg_der_time_epoch(const pg_span *time, int tag, long long *out)
{
	int f[6];
	long long y, m, days;

	if (!time_parts(time, tag, f))
		return false;
	/* Days from civil date (proleptic Gregorian), no time zone games. */
	y = f[0] - (f[1] <= 2);
	m = f[1] <= 2 ? f[1] + 9 : f[1] - 3;
	days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * m + 2) / 5 + f[2] - 1 - 719468;
	*out = days * 86400 + f[3] * 3600 + f[4] * 60 + f[5];
	return true;
}

bool
pg_name_find(const pg_span *name, const unsigned char *oid, size_t oid_len,
             pg_span *value)
{
	pg_der n, rdn, atv;
	pg_span type, v;

	pg_der_init(&n, name->p, name->len);
	if (!pg_der_enter(&n, 0x30, &rdn))
		return false;
	while (pg_der_peek(&rdn) == 0x31) {
		pg_der set;
		pg_der_enter(&rdn, 0x31, &set);
		while (pg_der_peek(&set) == 0x30) {
			int tag;
			pg_der_enter(&set, 0x30, &atv);
			if (!pg_der_read(&atv, 0x06, NULL, &type))
				return false;
			tag = pg_der_peek(&atv);
			if (tag < 0 || !pg_der_read(&atv, tag, NULL, &v))
				return false;
			if (span_eq(&type, oid, oid_len)) {
				*value = v;
				return true;
			}
		}
	}
	return false;
}

bool
pg_oid_format(const pg_span *oid, char *out, size_t size)
{
	size_t o = 0;
	unsigned long long v = 0;
	bool first = true;

	if (oid->len == 0 || size == 0)
		return false;
	for (size_t i = 0; i < oid->len; i++) {
		int n;
		if (v > (~0ULL >> 7))
			return false;
		v = (v << 7) | (oid->p[i] & 0x7f);
		if (oid->p[i] & 0x80)
			continue;
		if (first) {
			unsigned a = v < 40 ? 0 : v < 80 ? 1 : 2;
			n = snprintf(out + o, size - o, "%u.%llu", a, v - a * 40ULL);
			first = false;
		} else {
			n = snprintf(out + o, size - o, ".%llu", v);
		}
		if (n < 0 || (size_t)n >= size - o)
			return false;
		o += (size_t)n;
		v = 0;
	}
	return (oid->p[oid->len - 1] & 0x80) == 0;
}

static size_t
put_arc(unsigned long long v, unsigned char *out, size_t o, size_t size)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (unsigned char)(v & 0x7f);
		v >>= 7;
	} while (v);
	if (size - o < n)
		return 0;
	while (n--)
		out[o++] = (unsigned char)(tmp[n] | (n ? 0x80 : 0));
	return o;
}

size_t
pg_oid_parse(const char *text, unsigned char *out, size_t size)
{
	unsigned long long arcs[64];
	size_t n = 0, o = 0;
	const char *p = text;

	while (*p) {
		char *end;
		if (*p < '0' || *p > '9' || n == 64)
			return 0;
		arcs[n++] = strtoull(p, &end, 10);
		p = end;
		if (*p == '.' && p[1])
			p++;
		else if (*p)
			return 0;
	}
	if (n < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) || arcs[1] > (1ULL << 62))
		return 0;
	o = put_arc(arcs[0] * 40 + arcs[1], out, 0, size);
	for (size_t i = 2; i < n && o; i++)
		o = put_arc(arcs[i], out, o, size);
	return o;
}

/* ---------------------------------------------------------------------------
 * PEM and base64
 */

static const unsigned char *
find(const unsigned char *p, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	if (len < nl)
		return NULL;
	for (size_t i = 0; i <= len - nl; i++) {
		const unsigned char *hit = memchr(p + i, needle[0], len - nl + 1 - i);
		if (hit == NULL)
			return NULL;
		if (memcmp(hit, needle, nl) == 0)
			return hit;
		i = (size_t)(hit - p);
	}
	return NULL;
}

size_t
pg_pem_line(const unsigned char *text, size_t offset)
{
	size_t line = 1;
	for (size_t i = 0; i < offset; i++)
		line += text[i] == '\n';
	return line;
}

bool
pg_pem_detect(const unsigned char *text, size_t len)
{
	return find(text, len, "-----BEGIN ") != NULL;
}

bool
pg_pem_next(const unsigned char *text, size_t len, size_t *pos, pg_pem_block *b)
{
	while (*pos < len) {
		const unsigned char *start = find(text + *pos, len - *pos, "-----BEGIN ");
		const unsigned char *lab, *lab_end, *body, *end, *stop;
		size_t rest, lab_len;
		char endline[128];

		if (start == NULL) {
			*pos = len;
			return false;
		}
		lab = start + 11;
		rest = len - (size_t)(lab - text);
		lab_end = find(lab, rest, "-----");
		*pos = (size_t)(lab - text);
		if (lab_end == NULL || memchr(lab, '\n', (size_t)(lab_end - lab)) != NULL)
			continue;
		lab_len = (size_t)(lab_end - lab);
		if (lab_len > 100)
			continue;
		body = lab_end + 5;
		memcpy(endline, "-----END ", 9);
		memcpy(endline + 9, lab, lab_len);
		memcpy(endline + 9 + lab_len, "-----", 6);
		end = find(body, len - (size_t)(body - text), endline);
		if (end == NULL)
			continue;
		/* Another BEGIN before this END: the first block is broken. */
		stop = find(body, (size_t)(end - body), "-----BEGIN ");
		if (stop != NULL) {
			*pos = (size_t)(stop - text);
			continue;
		}
		b->label.p = lab;
		b->label.len = lab_len;
		b->body.p = body;
		b->body.len = (size_t)(end - body);
		b->begin = (size_t)(start - text);
		b->end = (size_t)(end - text) + strlen(endline);
		*pos = b->end;
		return true;
	}
	return false;
}

/* Base64 digit values (RFC 4648 §4); W white space, P padding, X invalid. */
#define W (-1)
#define P (-2)
#define X (-3)
static const signed char b64_digit[256] = {
	X, X, X, X, X, X, X, X, X, W, W, X, X, W, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	W, X, X, X, X, X, X, X, X, X, X, 62, X, X, X, 63,
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61, X, X, X, P, X, X,
	X, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
	15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, X, X, X, X, X,
	X, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
};
#undef W
#undef P
#undef X

/*
 * The same digits shifted into place for each of the four positions of
 * a quantum, with bit 31 set for anything that is not a digit, so that
 * four plain digits decode with three ORs and one test.
 */
#define B64_DIGIT(c)                                                     \
	((c) >= 'A' && (c) <= 'Z' ? (uint32_t)(c) - 'A' :                    \
	 (c) >= 'a' && (c) <= 'z' ? (uint32_t)(c) - 'a' + 26 :               \
	 (c) >= '0' && (c) <= '9' ? (uint32_t)(c) - '0' + 52 :               \
	 (c) == '+' ? 62u : (c) == '/' ? 63u : 0x80000000u)
#define B64_AT(c, shift) \
	(B64_DIGIT(c) == 0x80000000u ? 0x80000000u : B64_DIGIT(c) << (shift))
#define B64_4(c, s) B64_AT(c, s), B64_AT((c) + 1, s), B64_AT((c) + 2, s), B64_AT((c) + 3, s)
#define B64_16(c, s) B64_4(c, s), B64_4((c) + 4, s), B64_4((c) + 8, s), B64_4((c) + 12, s)
#define B64_64(c, s) B64_16(c, s), B64_16((c) + 16, s), B64_16((c) + 32, s), B64_16((c) + 48, s)
#define B64_TABLE(s) { B64_64(0, s), B64_64(64, s), B64_64(128, s), B64_64(192, s) }
static const uint32_t b64_at[4][256] = {
	B64_TABLE(18), B64_TABLE(12), B64_TABLE(6), B64_TABLE(0),
};

size_t
pg_base64_decode_to(const unsigned char *in, size_t len, unsigned char *out)
{
	size_t i = 0, o = 0, pad = 0;
	uint32_t acc = 0;
	unsigned n = 0;

	while (i < len) {
		int v;
		/* Runs of plain digits four at a time (a PEM line is 64 of
		 * them); anything else (space, '=', invalid) in the four sends
		 * them one by one below. */
		if (n == 0 && pad == 0) {
			const unsigned char *p = in + i;
			unsigned char *q = out + o;
			size_t quads = (len - i) / 4;
			while (quads-- > 0) {
				uint32_t v4 = b64_at[0][p[0]] | b64_at[1][p[1]] | b64_at[2][p[2]] |
				              b64_at[3][p[3]];
				if (v4 & 0x80000000u)
					break;
				q[0] = (unsigned char)(v4 >> 16);
				q[1] = (unsigned char)(v4 >> 8);
				q[2] = (unsigned char)v4;
				q += 3;
				p += 4;
			}
			i = (size_t)(p - in);
			o = (size_t)(q - out);
			if (i == len)
				break;
		}
		v = b64_digit[in[i++]];
		if (v == -1)
			continue;
		if (v == -2) {
			pad++;
			continue;
		}
		if (v < 0 || pad > 0)
			return SIZE_MAX;
		acc = (acc << 6) | (uint32_t)v;
		if (++n == 4) {
			out[o++] = (unsigned char)(acc >> 16);
			out[o++] = (unsigned char)(acc >> 8);
			out[o++] = (unsigned char)acc;
			acc = n = 0;
		}
	}
	if (n == 1 || pad > 2 || (n != 0 && n + pad != 4) || (n == 0 && pad != 0))
		return SIZE_MAX;
	if (n == 2)
		out[o++] = (unsigned char)(acc >> 4);
	else if (n == 3) {
		out[o++] = (unsigned char)(acc >> 10);
		out[o++] = (unsigned char)(acc >> 2);
	}
	return o;
}

bool
pg_base64_decode(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len)
{
	unsigned char *buf = malloc(pg_base64_max(len));
	size_t n;

	if (buf == NULL)
		return false;
	n = pg_base64_decode_to(in, len, buf);
	if (n == SIZE_MAX) {
		free(buf);
		return false;
	}
	*out = buf;
	*out_len = n;
	return true;
}

void
pg_base64_encode_lines(pg_buf *buf, const unsigned char *d, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[65];
	size_t l = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)d[i] << 16;
		size_t n = len - i < 3 ? len - i : 3;
		if (n > 1)
			v |= (unsigned)d[i + 1] << 8;
		if (n > 2)
			v |= d[i + 2];
		line[l++] = tab[(v >> 18) & 63];
		line[l++] = tab[(v >> 12) & 63];
		line[l++] = n > 1 ? tab[(v >> 6) & 63] : '=';
		line[l++] = n > 2 ? tab[v & 63] : '=';
		if (l == 64) {
			line[l++] = '\n';
			pg_buf_add(buf, line, l);
			l = 0;
		}
	}
	if (l) {
		line[l++] = '\n';
		pg_buf_add(buf, line, l);
	}
}

void
pg_pem_write(pg_buf *buf, const char *label, const unsigned char *data, size_t len)
{
	pg_buf_printf(buf, "-----BEGIN %s-----\n", label);
	pg_base64_encode_lines(buf, data, len);
	pg_buf_printf(buf, "-----END %s-----\n", label);
}
