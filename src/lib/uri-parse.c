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
	const char *text;          /* what is parsed */
	const size_t *offsets;     /* lenient: text's byte i is the input's offsets[i] */
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
		if (p->offsets != NULL)
			p->error->offset = p->offsets[p->error->offset];
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

/* The white space lenient parsing removes wherever it is (RFC 3986
 * Appendix C: a URI taken from text may be broken over lines or have
 * spaces inserted; remove all white space). p11-kit keeps tabs. */
static bool
is_white(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
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

/*
 * Names that p11-kit still accepts from drafts of RFC 7512 (and from its
 * own older spellings), for lenient parsing: the attribute each stands
 * for, in the path or the query.
 */
static const struct {
	const char *name;
	bool in_query;
	p11glue_uri_field field;
} lenient_names[] = {
	{ "object-type", false, P11GLUE_URI_TYPE },
	{ "objecttype", false, P11GLUE_URI_TYPE },
	{ "pin-source", false, P11GLUE_URI_PIN_SOURCE },
	{ "pinfile", false, P11GLUE_URI_PIN_SOURCE },
	{ "pin-value", false, P11GLUE_URI_PIN_VALUE },
	{ "pinfile", true, P11GLUE_URI_PIN_SOURCE },
};

static int
lookup_field(parser *p, const char *name, size_t len, bool in_query)
{
	int field = pg_uri_field_lookup(name, len, in_query);

	if (field >= 0 || !(p->flags & P11GLUE_URI_LENIENT))
		return field;
	for (size_t i = 0; i < PG_N_ELEMENTS(lenient_names); i++) {
		if (lenient_names[i].in_query == in_query && strlen(lenient_names[i].name) == len &&
		    memcmp(lenient_names[i].name, name, len) == 0)
			return (int)lenient_names[i].field;
	}
	return -1;
}

static int
apply_vendor(parser *p, const char *s, size_t name_len, bool in_query, pg_buf *value)
{
	char shown[40], *name = (char *)pg_memdup0(s, name_len);
	int rv;

	if (name == NULL)
		return P11GLUE_ERR_NOMEM;
	safe_name(s, name_len, shown);
	if (p11glue_uri_vendor_find(p->uri, in_query, name, NULL) != NULL &&
	    !(p->flags & P11GLUE_URI_LENIENT))
		rv = fail(p, P11GLUE_ERR_URI_DUPLICATE, s, "attribute '%s' given twice", shown);
	else
		rv = p11glue_uri_set_vendor(p->uri, in_query, name, value->data, value->len);
	free(name);
	return rv;
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
	/* Lenient: a type that names no object class matches nothing. */
	if (lenient && spec->kind == PG_URI_KIND_TYPE) {
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
	field = lookup_field(p, s, (size_t)(eq - s), in_query);
	/* Any other name the grammar allows is a vendor attribute (kept). */
	if (field < 0 && !pg_uri_is_attr_name(s, (size_t)(eq - s))) {
		if (!lenient)
			return fail(p, P11GLUE_ERR_URI_NAME, s,
			            "'%s' is no attribute name (letters, digits, '-' and '_')", shown);
		/* RFC 7512 §2.3: what a consumer does not know in the query is
		 * ignored; in the path, it makes the URI match nothing. */
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

/*
 * The text without its white space (lenient parsing) and where each of
 * its bytes was in the input, for error offsets. NULL when out of memory.
 */
static char *
without_white(const char *text, size_t **offsets)
{
	size_t len = strlen(text), n = 0;
	char *out = malloc(len + 1);

	*offsets = malloc((len + 1) * sizeof(**offsets));
	if (out == NULL || *offsets == NULL) {
		free(out);
		free(*offsets);
		*offsets = NULL;
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		if (is_white((unsigned char)text[i]))
			continue;
		(*offsets)[n] = i;
		out[n++] = text[i];
	}
	(*offsets)[n] = len;
	out[n] = 0;
	return out;
}

static int
parse_text(parser *p)
{
	const char *path, *query, *end, *text = p->text;
	int rv;

	/* RFC 3986 §3.1: the scheme is case-insensitive. */
	if (strncasecmp(text, URI_SCHEME, URI_SCHEME_LEN) != 0)
		return fail(p, P11GLUE_ERR_URI_SCHEME, text, "%s", "URI must start with 'pkcs11:'");
	p->uri = p11glue_uri_new();
	if (p->uri == NULL)
		return P11GLUE_ERR_NOMEM;
	path = text + URI_SCHEME_LEN;
	end = path + strlen(path);
	query = memchr(path, '?', (size_t)(end - path));
	rv = parse_component(p, path, query ? query : end, false);
	if (rv == P11GLUE_OK && query != NULL)
		rv = parse_component(p, query + 1, end, true);
	if (rv == P11GLUE_ERR_NOMEM)
		fail(p, rv, text, "%s", "out of memory");
	return rv;
}

int
p11glue_uri_parse(const char *text, unsigned flags, p11glue_uri **uri,
                  p11glue_uri_error *error)
{
	parser p = { text, NULL, flags, NULL, error };
	char *stripped = NULL;
	size_t *offsets = NULL;
	int rv;

	pg_return_val_if_fail(text != NULL && uri != NULL, P11GLUE_ERR_ARGS);
	*uri = NULL;
	if (error != NULL)
		memset(error, 0, sizeof(*error));
	if (flags & P11GLUE_URI_LENIENT) {
		stripped = without_white(text, &offsets);
		if (stripped == NULL)
			return fail(&p, P11GLUE_ERR_NOMEM, text, "%s", "out of memory");
		p.text = stripped;
		p.offsets = offsets;
	}
	rv = parse_text(&p);
	/* The stripped copy may hold a pin-value: wipe it. */
	if (stripped != NULL)
		pg_free_secret(stripped, strlen(stripped));
	free(offsets);
	if (rv != P11GLUE_OK) {
		p11glue_uri_free(p.uri);
		return rv;
	}
	*uri = p.uri;
	return P11GLUE_OK;
}
