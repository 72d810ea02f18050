/*
 * The persistence format, read and written: text sections that each start
 * with "[p11-kit-object-v1]" and hold "name: value" lines and PEM blocks.
 * Values are true/false, numbers, bare words (class names, OIDs) or
 * quoted strings with %XX escapes. This is the format p11-kit's trust
 * module keeps its stored objects in, so files move between the two.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

bool pg_ext_purposes(const pg_span *value, char ***out, size_t *n);

typedef struct {
	pg_span klass, label, value, oid_text, issuer, serial;
	int trusted, distrusted;           /* -1 absent, 0, 1 */
	pg_span cert, pubkey;              /* decoded PEM blocks */
	size_t line;
} section;

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes a quoted value into a new blob of src; bare values as views. */
static bool
decode_value(pg_source *src, const unsigned char *p, size_t len, pg_span *out, bool *ok)
{
	unsigned char *buf, **grown;
	size_t o = 0;

	*ok = true;
	if (len < 2 || p[0] != '"' || p[len - 1] != '"') {
		out->p = p;
		out->len = len;
		return true;
	}
	buf = malloc(len);
	if (buf == NULL)
		return false;
	for (size_t i = 1; i < len - 1; i++) {
		if (p[i] == '%') {
			int hi = i + 2 < len - 1 ? hexval(p[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(p[i + 2]) : -1;
			if (lo < 0) {
				*ok = false;
				free(buf);
				return true;
			}
			buf[o++] = (unsigned char)(hi << 4 | lo);
			i += 2;
		} else {
			buf[o++] = p[i];
		}
	}
	grown = realloc(src->blobs, (src->n_blobs + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(buf);
		return false;
	}
	src->blobs = grown;
	src->blobs[src->n_blobs++] = buf;
	out->p = buf;
	out->len = o;
	return true;
}

static bool
span_is(const pg_span *s, const char *text)
{
	return s->len == strlen(text) && memcmp(s->p, text, s->len) == 0;
}

static int
boolean(const pg_span *s)
{
	return span_is(s, "true") ? 1 : span_is(s, "false") ? 0 : -1;
}

static pg_entry *
new_entry(pg_source *src, int kind)
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

/* Turns a finished section into an entry; unknown classes are skipped. */
static bool
finish(pg_source *src, section *s)
{
	pg_entry *e;
	pg_span der = s->cert.len ? s->cert : s->value;
	bool cert_class = s->klass.len == 0 || span_is(&s->klass, "certificate");

	if (cert_class && der.len > 0) {
		e = new_entry(src, PG_ENTRY_CERT);
		if (e == NULL)
			return false;
		if (!pg_cert_parse(der.p, der.len, &e->cert)) {
			src->n_entries--;
			pg_message("%s:%zu: invalid certificate, skipped", src->path, s->line);
			return true;
		}
		if (s->label.p) {
			e->label_owned = (char *)pg_memdup0(s->label.p, s->label.len);
			if (e->label_owned == NULL)
				return false;
			e->label.p = (const unsigned char *)e->label_owned;
			e->label.len = s->label.len;
		}
		if (s->trusted >= 0 || s->distrusted >= 0) {
			e->explicit_trust = true;
			e->src_trust = s->distrusted == 1 ? PG_SRC_DISTRUST :
			               s->trusted == 1 ? PG_SRC_ANCHOR : PG_SRC_PLAIN;
			if (src->src_trust == PG_SRC_DISTRUST)
				e->src_trust = PG_SRC_DISTRUST;
		}
		pg_entry_cert_derive(e);
		return true;
	}
	if (cert_class && s->distrusted == 1 && s->issuer.len && s->serial.len) {
		e = new_entry(src, PG_ENTRY_REVOKED);
		if (e == NULL)
			return false;
		e->issuer = s->issuer;
		e->serial = s->serial;
		e->src_trust = PG_SRC_DISTRUST;
		if (s->label.p) {
			e->label_owned = (char *)pg_memdup0(s->label.p, s->label.len);
			if (e->label_owned == NULL)
				return false;
			e->label.p = (const unsigned char *)e->label_owned;
			e->label.len = s->label.len;
		}
		return true;
	}
	if (span_is(&s->klass, "x-certificate-extension") && s->value.len && s->pubkey.len &&
	    s->oid_text.len && s->oid_text.len < 100) {
		char text[100];
		unsigned char *oid = malloc(64), **grown;
		size_t oid_len;
		if (oid == NULL)
			return false;
		memcpy(text, s->oid_text.p, s->oid_text.len);
		text[s->oid_text.len] = 0;
		oid_len = pg_oid_parse(text, oid + 2, 62);
		oid[0] = 0x06;
		oid[1] = (unsigned char)oid_len;
		grown = realloc(src->blobs, (src->n_blobs + 1) * sizeof(*grown));
		if (grown == NULL) {
			free(oid);
			return false;
		}
		src->blobs = grown;
		src->blobs[src->n_blobs++] = oid;
		if (oid_len == 0) {
			pg_message("%s:%zu: bad object-id, skipped", src->path, s->line);
			return true;
		}
		e = new_entry(src, PG_ENTRY_EXT);
		if (e == NULL)
			return false;
		e->ext_value = s->value;
		e->ext_oid.p = oid;
		e->ext_oid.len = oid_len + 2;
		e->ext_spki = s->pubkey;
		pg_sha1(s->pubkey.p, s->pubkey.len, e->ext_id);
		e->label.p = s->label.p ? s->label.p : (const unsigned char *)"";
		e->label.len = s->label.p ? s->label.len : 0;
	}
	return true;
}

static bool
add_pem(pg_source *src, section *s, const unsigned char *text, size_t len, size_t *pos,
        size_t line)
{
	pg_pem_block b;
	unsigned char *der, **grown;
	size_t der_len, p = *pos;

	if (!pg_pem_next(text, len, &p, &b)) {
		*pos = len;
		pg_message("%s:%zu: unterminated PEM block", src->path, line);
		return true;
	}
	*pos = b.end;
	if (!pg_base64_decode(b.body.p, b.body.len, &der, &der_len)) {
		pg_message("%s:%zu: corrupt PEM block, skipped", src->path, line);
		return true;
	}
	grown = realloc(src->blobs, (src->n_blobs + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(der);
		return false;
	}
	src->blobs = grown;
	src->blobs[src->n_blobs++] = der;
	if (b.label.len == 11 && memcmp(b.label.p, "CERTIFICATE", 11) == 0) {
		s->cert.p = der;
		s->cert.len = der_len;
	} else if (b.label.len == 10 && memcmp(b.label.p, "PUBLIC KEY", 10) == 0) {
		s->pubkey.p = der;
		s->pubkey.len = der_len;
	}
	return true;
}

static void
section_reset(section *s, size_t line)
{
	memset(s, 0, sizeof(*s));
	s->trusted = s->distrusted = -1;
	s->line = line;
}

static bool
field(pg_source *src, section *s, const unsigned char *name, size_t nlen,
      const unsigned char *v, size_t vlen, size_t line)
{
	pg_span key = { name, nlen }, val;
	bool ok;

	if (!decode_value(src, v, vlen, &val, &ok))
		return false;
	if (!ok) {
		pg_message("%s:%zu: bad escape in value, ignored", src->path, line);
		return true;
	}
	if (span_is(&key, "class"))
		s->klass = val;
	else if (span_is(&key, "label"))
		s->label = val;
	else if (span_is(&key, "value"))
		s->value = val;
	else if (span_is(&key, "object-id"))
		s->oid_text = val;
	else if (span_is(&key, "issuer"))
		s->issuer = val;
	else if (span_is(&key, "serial-number"))
		s->serial = val;
	else if (span_is(&key, "trusted"))
		s->trusted = boolean(&val);
	else if (span_is(&key, "x-distrusted"))
		s->distrusted = boolean(&val);
	return true;
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
		size_t ll = nl ? (size_t)(nl - l) : len - pos, start = pos;

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
		{
			size_t nlen = (size_t)(colon - l);
			const unsigned char *v = colon + 1;
			size_t vlen = ll - nlen - 1;
			while (vlen > 0 && (*v == ' ' || *v == '\t')) {
				v++;
				vlen--;
			}
			if (!field(src, &s, l, nlen, v, vlen, line))
				return false;
		}
	}
	if (in_section && !finish(src, &s))
		return false;
	return true;
}

static void
write_quoted(pg_buf *buf, const unsigned char *p, size_t len)
{
	pg_buf_add_byte(buf, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == ' ' || c == '-' || c == '_' || c == '.' || c == '~')
			pg_buf_add_byte(buf, c);
		else
			pg_buf_printf(buf, "%%%02X", c);
	}
	pg_buf_add_byte(buf, '"');
}

void
pg_persist_write_cert(pg_buf *buf, const unsigned char *der, size_t len,
                      const char *label, size_t label_len, bool trusted, bool distrusted)
{
	pg_buf_add_str(buf, "# Written by p11glue's trust module. Changes may be overwritten.\n"
	                    "[p11-kit-object-v1]\n"
	                    "class: certificate\n"
	                    "certificate-type: x-509\n");
	pg_buf_printf(buf, "trusted: %s\nx-distrusted: %s\n",
	              trusted ? "true" : "false", distrusted ? "true" : "false");
	pg_buf_add_str(buf, "label: ");
	write_quoted(buf, (const unsigned char *)label, label_len);
	pg_buf_add_str(buf, "\n");
	pg_pem_write(buf, "CERTIFICATE", der, len);
}
