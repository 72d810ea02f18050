/*
 * The persistence format, read and written: text sections that each start
 * with "[p11-kit-object-v1]" and hold "name: value" lines and PEM blocks
 * (a certificate's value, or a public key). Names and constant values
 * are those of nicks.c; other values are true/false, decimal numbers,
 * dotted OIDs (CKA_OBJECT_ID) or quoted strings with %XX escapes. This is
 * the format p11-kit's trust module keeps its stored objects in, so files
 * move between the two.
 */
#include "nicks.h"
#include "trust-format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTRS 64

/* The attributes of a section as it is read (views into blobs of src). */
typedef struct {
	CK_ATTRIBUTE attrs[MAX_ATTRS];
	CK_ULONG n;
	size_t line;
	bool bad;
} section;

static bool
all_digits(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return len > 0;
}

static bool
is_text(const unsigned char *p, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(p, want, len) == 0;
}

/* A dotted OID as p11-kit accepts one: digits and at least two dots. */
static bool
looks_like_oid(const unsigned char *p, size_t len)
{
	size_t dots = 0;

	if (len < 4 || p[0] == '.' || p[0] == '0' || p[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '.') {
			if (p[i + 1] == '.')
				return false;
			dots++;
		} else if (p[i] < '0' || p[i] > '9') {
			return false;
		}
	}
	return dots >= 2;
}

/*
 * Decodes one value into a new blob of src, in the order p11-kit tries
 * the forms: a constant name, a quoted string, true/false, a decimal
 * number, a dotted OID (as DER). Returns 1 done, 0 not a value, -1 no
 * memory.
 */
static int
decode_value(pg_source *src, const unsigned char *v, size_t len, CK_ATTRIBUTE *out)
{
	unsigned char *buf;
	CK_ULONG number;
	size_t o = 0;

	if (pg_nick_value_parse((const char *)v, len, &number) || (len < 21 && all_digits(v, len))) {
		if (!pg_nick_value_parse((const char *)v, len, &number)) {
			char digits[24];
			memcpy(digits, v, len);
			digits[len] = 0;
			number = strtoul(digits, NULL, 10);
		}
		if ((buf = malloc(sizeof(number))) == NULL)
			return -1;
		memcpy(buf, &number, sizeof(number));
		out->ulValueLen = sizeof(number);
	} else if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		if ((buf = malloc(len)) == NULL)
			return -1;
		for (size_t i = 1; i < len - 1; i++) {
			int hi, lo;
			if (v[i] != '%') {
				buf[o++] = v[i];
				continue;
			}
			hi = i + 2 < len - 1 ? pg_hex_value(v[i + 1]) : -1;
			lo = hi >= 0 ? pg_hex_value(v[i + 2]) : -1;
			if (lo < 0) {
				free(buf);
				return 0;
			}
			buf[o++] = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		out->ulValueLen = o;
	} else if (is_text(v, len, "true") || is_text(v, len, "false")) {
		if ((buf = malloc(1)) == NULL)
			return -1;
		buf[0] = v[0] == 't' ? CK_TRUE : CK_FALSE;
		out->ulValueLen = 1;
	} else if (looks_like_oid(v, len) && len < 200) {
		char text[200];
		memcpy(text, v, len);
		text[len] = 0;
		if ((buf = malloc(2 + 127)) == NULL)
			return -1;
		o = pg_oid_parse(text, buf + 2, 127);
		if (o == 0) {
			free(buf);
			return 0;
		}
		buf[0] = 0x06;
		buf[1] = (unsigned char)o;
		out->ulValueLen = o + 2;
	} else {
		return 0;
	}
	if (!pg_source_take(src, buf))
		return -1;
	out->pValue = buf;
	return 1;
}

static const CK_ATTRIBUTE *
section_get(const section *s, CK_ATTRIBUTE_TYPE type)
{
	return pg_template_find(s->attrs, s->n, type);
}

/* Sets an attribute, replacing an earlier value of the same type. */
static bool
section_set(pg_source *src, section *s, CK_ATTRIBUTE_TYPE type, const CK_ATTRIBUTE *value,
            size_t line)
{
	CK_ATTRIBUTE *slot = (CK_ATTRIBUTE *)section_get(s, type);

	if (slot == NULL) {
		if (s->n == MAX_ATTRS) {
			pg_message("%s:%zu: too many attributes, ignored", src->path, line);
			return false;
		}
		slot = &s->attrs[s->n++];
	}
	*slot = *value;
	slot->type = type;
	return true;
}

static bool
keep_attrs(pg_entry *e, const section *s)
{
	e->attrs = malloc((s->n ? s->n : 1) * sizeof(pg_attr));
	if (e->attrs == NULL)
		return false;
	for (CK_ULONG i = 0; i < s->n; i++)
		e->attrs[i] = (pg_attr){ s->attrs[i].type, s->attrs[i].pValue, s->attrs[i].ulValueLen };
	e->n_attrs = s->n;
	return true;
}

static void
set_label(pg_entry *e, const section *s)
{
	const CK_ATTRIBUTE *label = section_get(s, CKA_LABEL);

	if (label != NULL) {
		e->label.p = label->pValue;
		e->label.len = label->ulValueLen;
	} else if (e->kind != PG_ENTRY_CERT) {
		e->label.p = (const unsigned char *)"";
		e->label.len = 0;
	}
}

/* A certificate section with a value: the certificate and its trust. */
static bool
finish_cert(pg_source *src, const section *s, const CK_ATTRIBUTE *value)
{
	pg_entry *e = pg_source_add(src, PG_ENTRY_CERT);
	int trusted = pg_template_bool(s->attrs, s->n, CKA_TRUSTED);
	int distrusted = pg_template_bool(s->attrs, s->n, CKA_X_DISTRUSTED);

	if (e == NULL)
		return false;
	if (!pg_cert_parse(value->pValue, value->ulValueLen, &e->cert)) {
		pg_entry_clear(e);
		src->n_entries--;
		pg_message("%s:%zu: invalid certificate, skipped", src->path, s->line);
		return true;
	}
	set_label(e, s);
	/* As p11-kit: the location decides for anchors and blocklists (an
	 * explicit distrust stays distrust); elsewhere the file's flags. */
	if (trusted >= 0 || distrusted >= 0)
		e->explicit_trust = true;
	if (src->src_trust == PG_SRC_DISTRUST || distrusted == 1)
		e->src_trust = PG_SRC_DISTRUST;
	else if (src->src_trust == PG_SRC_ANCHOR || trusted == 1)
		e->src_trust = PG_SRC_ANCHOR;
	else
		e->src_trust = PG_SRC_PLAIN;
	return pg_entry_cert_derive(e) && keep_attrs(e, s);
}

/* A stapled extension whose value is an Extension (its extnID and the
 * contents of its extnValue given). */
static bool
finish_ext(pg_source *src, const section *s, const CK_ATTRIBUTE *value,
           const CK_ATTRIBUTE *spki, pg_span ext_oid, pg_span ext_value)
{
	const CK_ATTRIBUTE *oid = section_get(s, CKA_OBJECT_ID);
	pg_entry *e = pg_source_add(src, PG_ENTRY_EXT);

	if (e == NULL)
		return false;
	e->ext_value.p = value->pValue;
	e->ext_value.len = value->ulValueLen;
	e->ext_spki.p = spki->pValue;
	e->ext_spki.len = spki->ulValueLen;
	e->ext_oid = oid ? (pg_span){ oid->pValue, oid->ulValueLen } : ext_oid;
	e->klass = CKO_X_CERTIFICATE_EXTENSION;
	set_label(e, s);
	switch (pg_oid_list_parse(&ext_value, &e->ext_oids)) {
	case -1:
		return false;
	case 1:
		e->oids_ok = true;
		break;
	default:
		pg_oid_list_clear(&e->ext_oids);
	}
	return keep_attrs(e, s);
}

/* Turns a finished section into an entry; unusable ones are skipped. */
static bool
finish(pg_source *src, section *s)
{
	const CK_ATTRIBUTE *value = section_get(s, CKA_VALUE), *spki, *issuer, *serial;
	CK_ULONG klass, type;
	pg_entry *e;

	if (s->n == 0 || s->bad)
		return true;
	src->n_sections++;
	if (!pg_template_ulong(s->attrs, s->n, CKA_CLASS, &klass)) {
		pg_message("%s:%zu: object without a class, skipped", src->path, s->line);
		return true;
	}
	if (klass == CKO_CERTIFICATE) {
		if (pg_template_ulong(s->attrs, s->n, CKA_CERTIFICATE_TYPE, &type) &&
		    type != CKC_X_509) {
			pg_message("%s:%zu: not an X.509 certificate, skipped", src->path, s->line);
			return true;
		}
		if (value != NULL && value->ulValueLen > 0)
			return finish_cert(src, s, value);
		issuer = section_get(s, CKA_ISSUER);
		serial = section_get(s, CKA_SERIAL_NUMBER);
		/* Distrust by issuer and serial number, without the certificate. */
		if (pg_template_bool(s->attrs, s->n, CKA_X_DISTRUSTED) == 1 && issuer && serial &&
		    issuer->ulValueLen && serial->ulValueLen) {
			if ((e = pg_source_add(src, PG_ENTRY_REVOKED)) == NULL)
				return false;
			e->issuer.p = issuer->pValue;
			e->issuer.len = issuer->ulValueLen;
			e->serial.p = serial->pValue;
			e->serial.len = serial->ulValueLen;
			e->src_trust = PG_SRC_DISTRUST;
			e->klass = klass;
			set_label(e, s);
			return keep_attrs(e, s);
		}
	} else if (klass == CKO_X_CERTIFICATE_EXTENSION) {
		pg_span ext_oid, ext_value;
		spki = section_get(s, CKA_PUBLIC_KEY_INFO);
		if (value == NULL || spki == NULL) {
			pg_message("%s:%zu: certificate extension without a value and public key, "
			           "skipped", src->path, s->line);
			return true;
		}
		if (pg_ext_parse(value->pValue, value->ulValueLen, &ext_oid, NULL, &ext_value))
			return finish_ext(src, s, value, spki, ext_oid, ext_value);
		/* Kept as the file has it, but changing nothing (as with
		 * p11-kit). */
		pg_message("%s:%zu: certificate extension whose value is not an Extension "
		           "changes nothing", src->path, s->line);
	}
	if ((e = pg_source_add(src, PG_ENTRY_STORED)) == NULL)
		return false;
	e->klass = klass;
	set_label(e, s);
	return keep_attrs(e, s);
}

/* A PEM block in a section: a certificate's value or a public key. */
static bool
add_pem(pg_source *src, section *s, const unsigned char *text, size_t len, size_t *pos,
        size_t line)
{
	pg_pem_block b;
	CK_ATTRIBUTE a = { 0, NULL, 0 };
	unsigned char *der;
	size_t der_len, p = *pos;

	if (!pg_pem_next(text, len, &p, &b)) {
		*pos = len;
		pg_message("%s:%zu: unterminated PEM block", src->path, line);
		s->bad = true;
		return true;
	}
	*pos = b.end;
	if ((der = malloc(pg_base64_max(b.body.len))) == NULL)
		return false;
	der_len = pg_base64_decode_to(b.body.p, b.body.len, der);
	if (der_len == SIZE_MAX) {
		free(der);
		pg_message("%s:%zu: corrupt PEM block, skipped", src->path, line);
		s->bad = true;
		return true;
	}
	if (!pg_source_take(src, der))
		return false;
	a.pValue = der;
	a.ulValueLen = der_len;
	if (b.label.len == 11 && memcmp(b.label.p, "CERTIFICATE", 11) == 0) {
		static const CK_ULONG cert_class = CKO_CERTIFICATE, x509 = CKC_X_509;
		CK_ATTRIBUTE klass = { 0, (void *)&cert_class, sizeof(CK_ULONG) };
		CK_ATTRIBUTE type = { 0, (void *)&x509, sizeof(CK_ULONG) };
		section_set(src, s, CKA_VALUE, &a, line);
		if (section_get(s, CKA_CLASS) == NULL)
			section_set(src, s, CKA_CLASS, &klass, line);
		if (section_get(s, CKA_CERTIFICATE_TYPE) == NULL)
			section_set(src, s, CKA_CERTIFICATE_TYPE, &type, line);
	} else if (b.label.len == 10 && memcmp(b.label.p, "PUBLIC KEY", 10) == 0) {
		section_set(src, s, CKA_PUBLIC_KEY_INFO, &a, line);
	} else {
		pg_message("%s:%zu: unsupported PEM block in a stored object", src->path, line);
	}
	return true;
}

static bool
field(pg_source *src, section *s, const unsigned char *name, size_t nlen,
      const unsigned char *v, size_t vlen, size_t line)
{
	CK_ATTRIBUTE_TYPE type;
	CK_ATTRIBUTE a = { 0, NULL, 0 };
	int r;

	if (!pg_nick_attr_parse((const char *)name, nlen, &type)) {
		char digits[24];
		char *end;
		if (nlen > 20 || !all_digits(name, nlen)) {
			pg_message("%s:%zu: unknown attribute \"%.*s\", ignored", src->path, line,
			           (int)(nlen > 40 ? 40 : nlen), (const char *)name);
			return true;
		}
		memcpy(digits, name, nlen);
		digits[nlen] = 0;
		type = strtoul(digits, &end, 10);
	}
	if ((r = decode_value(src, v, vlen, &a)) < 0)
		return false;
	if (r == 0) {
		pg_message("%s:%zu: invalid value, ignored", src->path, line);
		return true;
	}
	section_set(src, s, type, &a, line);
	return true;
}

static void
section_reset(section *s, size_t line)
{
	s->n = 0;
	s->bad = false;
	s->line = line;
}

bool
pg_persist_parse(pg_source *src, const unsigned char *data, size_t len)
{
	size_t pos = 0, line = 0;
	bool in_section = false;
	section s;

	section_reset(&s, 0);
	while (pos < len) {
		const unsigned char *l = data + pos, *nl = memchr(l, '\n', len - pos), *colon;
		size_t ll = nl ? (size_t)(nl - l) : len - pos, start = pos, nlen, vlen;
		const unsigned char *v;

		line++;
		pos += ll + (nl != NULL);
		while (ll > 0 && (l[ll - 1] == '\r' || l[ll - 1] == ' ' || l[ll - 1] == '\t'))
			ll--;
		if (ll == 0 || l[0] == '#')
			continue;
		if (ll == 19 && memcmp(l, "[p11-kit-object-v1]", 19) == 0) {
			if (in_section && !finish(src, &s))
				return false;
			section_reset(&s, line);
			in_section = true;
			continue;
		}
		if (!in_section) {
			pg_message("%s:%zu: text outside a section, ignored", src->path, line);
			continue;
		}
		if (ll > 11 && memcmp(l, "-----BEGIN ", 11) == 0) {
			size_t before = pos;
			pos = start;
			if (!add_pem(src, &s, data, len, &pos, line))
				return false;
			for (const unsigned char *q = data + before; q < data + pos && q < data + len; q++)
				line += *q == '\n';
			continue;
		}
		colon = memchr(l, ':', ll);
		if (colon == NULL) {
			pg_message("%s:%zu: expected \"name: value\", ignored", src->path, line);
			continue;
		}
		nlen = (size_t)(colon - l);
		while (nlen > 0 && (l[nlen - 1] == ' ' || l[nlen - 1] == '\t'))
			nlen--;
		v = colon + 1;
		vlen = ll - (size_t)(colon - l) - 1;
		while (vlen > 0 && (*v == ' ' || *v == '\t')) {
			v++;
			vlen--;
		}
		if (!field(src, &s, l, nlen, v, vlen, line))
			return false;
	}
	if (in_section && !finish(src, &s))
		return false;
	return true;
}

/* ---------------------------------------------------------------------------
 * Writing
 */

/* A quoted value: bytes other than letters, digits, ' ', '-', '.', '_'
 * as %XX. */
static void
write_quoted(pg_buf *buf, const unsigned char *p, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";

	pg_buf_add_byte(buf, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == ' ' || c == '-' || c == '_' || c == '.') {
			pg_buf_add_byte(buf, c);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };
			pg_buf_add(buf, esc, 3);
		}
	}
	pg_buf_add_byte(buf, '"');
}

/* One value in the first form that applies (see nicks.h). */
static void
write_value(pg_buf *buf, const CK_ATTRIBUTE *a)
{
	unsigned forms = pg_nick_forms(a->type);
	const unsigned char *p = a->pValue;
	CK_ULONG number;
	const char *name;
	char text[128];

	if ((forms & PG_FORM_BOOL) && a->ulValueLen == 1 && (p[0] == CK_TRUE || p[0] == CK_FALSE)) {
		pg_buf_add_str(buf, p[0] ? "true" : "false");
		return;
	}
	if ((forms & (PG_FORM_CONST | PG_FORM_ULONG)) && a->ulValueLen == sizeof(CK_ULONG)) {
		memcpy(&number, p, sizeof(number));
		name = (forms & PG_FORM_CONST) ? pg_nick_value(a->type, number) : NULL;
		if (name != NULL)
			pg_buf_add_str(buf, name);
		else if (forms & PG_FORM_ULONG)
			pg_buf_printf(buf, "%lu", (unsigned long)number);
		if (name != NULL || (forms & PG_FORM_ULONG))
			return;
	}
	if ((forms & PG_FORM_OID) && a->ulValueLen > 2 && p[0] == 0x06 &&
	    p[1] == a->ulValueLen - 2 && p[1] < 128) {
		pg_span oid = { p + 2, a->ulValueLen - 2 };
		unsigned char again[128];
		/* Dotted only when reading it back gives these bytes (a
		 * padded arc, say, would not). */
		if (pg_oid_format(&oid, text, sizeof(text)) &&
		    pg_oid_parse(text, again, sizeof(again)) == oid.len &&
		    memcmp(again, oid.p, oid.len) == 0) {
			pg_buf_add_str(buf, text);
			return;
		}
	}
	write_quoted(buf, p, a->ulValueLen);
}

/* The attribute `type` when it has a value to write, else NULL. */
static const CK_ATTRIBUTE *
find_valid(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	const CK_ATTRIBUTE *a = pg_template_find(attrs, n, type);

	if (a == NULL || a->pValue == NULL || a->ulValueLen == 0 ||
	    a->ulValueLen == CK_UNAVAILABLE_INFORMATION)
		return NULL;
	return a;
}

static bool
ulong_is(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type, CK_ULONG want)
{
	CK_ULONG v;

	return pg_template_ulong(attrs, n, type, &v) && v == want;
}

void
pg_persist_write(pg_buf *buf, const CK_ATTRIBUTE *attrs, CK_ULONG n)
{
	const CK_ATTRIBUTE *cert = NULL, *spki = find_valid(attrs, n, CKA_PUBLIC_KEY_INFO);

	if (ulong_is(attrs, n, CKA_CLASS, CKO_CERTIFICATE) &&
	    ulong_is(attrs, n, CKA_CERTIFICATE_TYPE, CKC_X_509))
		cert = find_valid(attrs, n, CKA_VALUE);
	pg_buf_add_str(buf, "[p11-kit-object-v1]\n");
	for (CK_ULONG i = 0; i < n; i++) {
		CK_ATTRIBUTE_TYPE t = attrs[i].type;
		const char *name;
		/* The certificate and the key go last, as PEM. */
		if (cert && (t == CKA_CLASS || t == CKA_CERTIFICATE_TYPE || t == CKA_VALUE))
			continue;
		if (spki && t == CKA_PUBLIC_KEY_INFO)
			continue;
		if (t == CKA_TOKEN || t == CKA_X_ORIGIN || t == CKA_X_GENERATED ||
		    attrs[i].ulValueLen == CK_UNAVAILABLE_INFORMATION)
			continue;
		if ((name = pg_nick_attr(t)) != NULL)
			pg_buf_add_str(buf, name);
		else
			pg_buf_printf(buf, "%lu", (unsigned long)t);
		pg_buf_add(buf, ": ", 2);
		write_value(buf, &attrs[i]);
		pg_buf_add_byte(buf, '\n');
	}
	if (cert)
		pg_pem_write(buf, "CERTIFICATE", cert->pValue, cert->ulValueLen);
	else if (spki)
		pg_pem_write(buf, "PUBLIC KEY", spki->pValue, spki->ulValueLen);
	pg_buf_add_byte(buf, '\n');
}

void
pg_persist_write_file(pg_buf *buf, const CK_ATTRIBUTE *attrs, CK_ULONG n)
{
	pg_buf_add_str(buf, "# Written by p11glue's trust module. Changes may be overwritten.\n");
	pg_persist_write(buf, attrs, n);
}

void
pg_persist_write_cert(pg_buf *buf, const unsigned char *der, size_t len,
                      const char *label, size_t label_len, bool trusted, bool distrusted)
{
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
	CK_CERTIFICATE_TYPE type = CKC_X_509;
	CK_BBOOL t = trusted ? CK_TRUE : CK_FALSE, d = distrusted ? CK_TRUE : CK_FALSE;
	CK_ATTRIBUTE attrs[] = {
		{ CKA_CLASS, &klass, sizeof(klass) },
		{ CKA_CERTIFICATE_TYPE, &type, sizeof(type) },
		{ CKA_TRUSTED, &t, 1 },
		{ CKA_X_DISTRUSTED, &d, 1 },
		{ CKA_LABEL, (void *)label, label_len },
		{ CKA_VALUE, (void *)der, len },
	};

	pg_persist_write_file(buf, attrs, PG_N_ELEMENTS(attrs));
}
