/*
 * Parsing PKCS#11 URIs (RFC 7512 §2.3), strict or lenient, with the
 * place and the reason of a failure (p11glue_uri_parse).
 */
#include "config.h"

#include "uri-private.h"

#include <p11glue/p11glue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define URI_SCHEME "pkcs11:"
#define URI_SCHEME_LEN 7

/* ---------------------------------------------------------------------------
 * Parsing
 */

typedef struct {
	const char *text;
	unsigned flags;
	p11glue_uri *uri;
	p11glue_uri_error *error;
} parser;

/* Records where (at) and why (printf-style) parsing failed; returns result. */
static int PG_PRINTF(4, 5)
fail(parser *p, int result, const char *at, const char *fmt, ...)
{
	va_list ap;

	if (p->error != NULL) {
		p->error->result = result;
		p->error->offset = (size_t)(at - p->text);
		va_start(ap, fmt);
		vsnprintf(p->error->detail, sizeof(p->error->detail), fmt, ap);
		va_end(ap);
	}
	return result;
}

/* A printable rendering of an attribute name for messages. */
static void
safe_name(const char *name, size_t len, char out[40])
{
	size_t n = len < 32 ? len : 32;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		out[i] = (c >= 0x20 && c < 0x7f && c != '\'') ? (char)c : '?';
	}
	strcpy(out + n, len > 32 ? "..." : "");
}

/* RFC 7512 §2.3: pk11-res-avail, plus the component's extra characters. */
static bool
is_allowed(unsigned char c, bool in_query)
{
	if (pg_uri_is_unreserved(c) || strchr(":[]@!$'()*+,=", c) != NULL)
		return c != 0;
	if (in_query)
		return c == '/' || c == '?' || c == '|';
	return c == '&';
}

/* The white space lenient parsing drops (p11-kit drops the same; a tab is
 * kept as a raw character). */
static bool
is_white(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Percent-decodes [s, end) into out, checking characters as it goes. */
static int
decode_value(parser *p, const char *s, const char *end, bool in_query, pg_buf *out)
{
	bool lenient = p->flags & P11GLUE_URI_LENIENT;
	char shown[8];

	while (s < end) {
		unsigned char c = (unsigned char)*s;
		if (c == '%') {
			int hi = end - s >= 3 ? pg_hex_value((unsigned char)s[1]) : -1;
			int lo = end - s >= 3 ? pg_hex_value((unsigned char)s[2]) : -1;
			if (hi < 0 || lo < 0)
				return fail(p, P11GLUE_ERR_URI_ENCODING, s,
				            "'%%' must be followed by two hex digits");
			pg_buf_add_byte(out, (unsigned char)(hi << 4 | lo));
			s += 3;
			continue;
		}
		if (!is_allowed(c, in_query)) {
			if (lenient && is_white(c)) {
				s++;
				continue;
			}
			if (!lenient || c == 0) {
				snprintf(shown, sizeof(shown), "0x%02X", c);
				return fail(p, P11GLUE_ERR_URI_SYNTAX, s,
				            "character %s must be percent-encoded", shown);
			}
		}
		pg_buf_add_byte(out, c);
		s++;
	}
	return out->failed ? P11GLUE_ERR_NOMEM : P11GLUE_OK;
}

static int
lookup_field(const char *name, size_t len, bool in_query)
{
	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		if (pg_uri_field_specs[i].in_query == in_query &&
		    strlen(pg_uri_field_specs[i].name) == len &&
		    memcmp(pg_uri_field_specs[i].name, name, len) == 0)
			return i;
	}
	return -1;
}

static int
apply_vendor(parser *p, const char *s, size_t name_len, bool in_query, pg_buf *value)
{
	char name[256], shown[40];

	safe_name(s, name_len, shown);
	if (name_len >= sizeof(name))
		return fail(p, P11GLUE_ERR_URI_NAME, s, "attribute name '%s' is too long", shown);
	memcpy(name, s, name_len);
	name[name_len] = 0;
	if (p11glue_uri_vendor_find(p->uri, in_query, name, NULL) != NULL &&
	    !(p->flags & P11GLUE_URI_LENIENT))
		return fail(p, P11GLUE_ERR_URI_DUPLICATE, s, "attribute '%s' given twice", shown);
	return p11glue_uri_set_vendor(p->uri, in_query, name, value->data, value->len);
}

static int
apply_field(parser *p, int field, const char *s, const char *value_at, pg_buf *value)
{
	bool lenient = p->flags & P11GLUE_URI_LENIENT;
	const pg_uri_field_spec *spec = &pg_uri_field_specs[field];
	char detail[128];
	int rv;

	if (p->uri->fields[field].data != NULL && !lenient)
		return fail(p, P11GLUE_ERR_URI_DUPLICATE, s, "attribute '%s' given twice",
		            spec->name);
	/* p11-kit spells it "secretkey" too; accept that when lenient. */
	if (lenient && field == P11GLUE_URI_TYPE && value->len == 9 &&
	    memcmp(value->data, "secretkey", 9) == 0) {
		pg_buf_clear(value);
		pg_buf_add_str(value, "secret-key");
	}
	rv = pg_uri_set_checked(p->uri, (p11glue_uri_field)field,
	                 value->data ? value->data : (const unsigned char *)"",
	                 value->len, detail, sizeof(detail));
	if (rv != P11GLUE_ERR_URI_VALUE)
		return rv;
	/* Lenient: a value the token fields cannot hold matches nothing. */
	if (lenient && (spec->kind == PG_URI_KIND_TEXT || spec->kind == PG_URI_KIND_TYPE)) {
		p11glue_uri_unset(p->uri, (p11glue_uri_field)field);
		p->uri->unrecognized = true;
		return P11GLUE_OK;
	}
	return fail(p, rv, value_at, "%s", detail);
}

/* One "name=value" of the path or the query, in [s, end). */
static int
parse_attribute(parser *p, const char *s, const char *end, bool in_query)
{
	bool lenient = p->flags & P11GLUE_URI_LENIENT;
	const char *eq = memchr(s, '=', (size_t)(end - s));
	char shown[40];
	pg_buf value;
	int field, rv;

	if (eq == NULL) {
		safe_name(s, (size_t)(end - s), shown);
		return fail(p, P11GLUE_ERR_URI_SYNTAX, s, "attribute '%s' has no '='", shown);
	}
	safe_name(s, (size_t)(eq - s), shown);
	field = lookup_field(s, (size_t)(eq - s), in_query);
	if (field < 0 && !pg_uri_is_vendor_name(s, (size_t)(eq - s))) {
		if (!lenient)
			return fail(p, P11GLUE_ERR_URI_NAME, s, "unknown attribute '%s'", shown);
		/* RFC 7512 §2.3: unknown query attributes are ignored; an unknown
		 * path attribute makes the URI match nothing. */
		if (!in_query)
			p->uri->unrecognized = true;
		return P11GLUE_OK;
	}
	pg_buf_init(&value);
	rv = decode_value(p, eq + 1, end, in_query, &value);
	if (rv == P11GLUE_OK && field >= 0)
		rv = apply_field(p, field, s, eq + 1, &value);
	else if (rv == P11GLUE_OK)
		rv = apply_vendor(p, s, (size_t)(eq - s), in_query, &value);
	pg_buf_clear(&value);
	return rv;
}

/* The path (sep ';') or the query (sep '&') in [s, end). */
static int
parse_component(parser *p, const char *s, const char *end, bool in_query)
{
	const char sep = in_query ? '&' : ';';

	if (s == end)
		return P11GLUE_OK;
	for (;;) {
		const char *next = memchr(s, sep, (size_t)(end - s));
		const char *stop = next ? next : end;
		int rv;

		if (stop == s) {
			if (!(p->flags & P11GLUE_URI_LENIENT))
				return fail(p, P11GLUE_ERR_URI_SYNTAX, s, "%s",
				            "empty attribute (two separators in a row, or one at an end)");
		} else {
			rv = parse_attribute(p, s, stop, in_query);
			if (rv != P11GLUE_OK)
				return rv;
		}
		if (next == NULL)
			return P11GLUE_OK;
		s = next + 1;
	}
}

int
p11glue_uri_parse(const char *text, unsigned flags, p11glue_uri **uri,
                  p11glue_uri_error *error)
{
	parser p = { text, flags, NULL, error };
	const char *path, *query, *end;
	int rv;

	pg_return_val_if_fail(text != NULL && uri != NULL, P11GLUE_ERR_ARGS);
	*uri = NULL;
	if (error != NULL)
		memset(error, 0, sizeof(*error));
	/* RFC 3986 §3.1: the scheme is case-insensitive. */
	if (strncasecmp(text, URI_SCHEME, URI_SCHEME_LEN) != 0)
		return fail(&p, P11GLUE_ERR_URI_SCHEME, text, "%s", "URI must start with 'pkcs11:'");
	p.uri = p11glue_uri_new();
	if (p.uri == NULL)
		return P11GLUE_ERR_NOMEM;
	path = text + URI_SCHEME_LEN;
	end = path + strlen(path);
	query = memchr(path, '?', (size_t)(end - path));
	rv = parse_component(&p, path, query ? query : end, false);
	if (rv == P11GLUE_OK && query != NULL)
		rv = parse_component(&p, query + 1, end, true);
	if (rv != P11GLUE_OK) {
		if (rv == P11GLUE_ERR_NOMEM)
			fail(&p, rv, text, "%s", "out of memory");
		p11glue_uri_free(p.uri);
		return rv;
	}
	*uri = p.uri;
	return P11GLUE_OK;
}
