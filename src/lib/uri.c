/*
 * PKCS#11 URIs (RFC 7512): the object, value checks, parsing, formatting.
 * Matching lives in uri-match.c.
 */
#include "config.h"

#include "uri-private.h"

#include <p11glue/p11glue.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define URI_SCHEME "pkcs11:"
#define URI_SCHEME_LEN 7

enum value_kind { KIND_TEXT, KIND_VERSION, KIND_TYPE, KIND_SLOT_ID };

static const struct field_spec {
	const char *name;
	bool in_query;
	size_t max_len;          /* size of the PKCS#11 field; 0: unlimited */
	enum value_kind kind;
} field_specs[P11GLUE_URI_N_FIELDS] = {
	[P11GLUE_URI_TOKEN] = { "token", false, 32, KIND_TEXT },
	[P11GLUE_URI_MANUFACTURER] = { "manufacturer", false, 32, KIND_TEXT },
	[P11GLUE_URI_SERIAL] = { "serial", false, 16, KIND_TEXT },
	[P11GLUE_URI_MODEL] = { "model", false, 16, KIND_TEXT },
	[P11GLUE_URI_LIBRARY_MANUFACTURER] = { "library-manufacturer", false, 32, KIND_TEXT },
	[P11GLUE_URI_LIBRARY_DESCRIPTION] = { "library-description", false, 32, KIND_TEXT },
	[P11GLUE_URI_LIBRARY_VERSION] = { "library-version", false, 0, KIND_VERSION },
	[P11GLUE_URI_OBJECT] = { "object", false, 0, KIND_TEXT },
	[P11GLUE_URI_TYPE] = { "type", false, 0, KIND_TYPE },
	[P11GLUE_URI_ID] = { "id", false, 0, KIND_TEXT },
	[P11GLUE_URI_SLOT_DESCRIPTION] = { "slot-description", false, 64, KIND_TEXT },
	[P11GLUE_URI_SLOT_MANUFACTURER] = { "slot-manufacturer", false, 32, KIND_TEXT },
	[P11GLUE_URI_SLOT_ID] = { "slot-id", false, 0, KIND_SLOT_ID },
	[P11GLUE_URI_PIN_SOURCE] = { "pin-source", true, 0, KIND_TEXT },
	[P11GLUE_URI_PIN_VALUE] = { "pin-value", true, 0, KIND_TEXT },
	[P11GLUE_URI_MODULE_NAME] = { "module-name", true, 0, KIND_TEXT },
	[P11GLUE_URI_MODULE_PATH] = { "module-path", true, 0, KIND_TEXT },
};

/* RFC 7512 §2.3 "type" values and the object classes they stand for. */
static const struct {
	const char *name;
	CK_OBJECT_CLASS klass;
} type_names[] = {
	{ "public", CKO_PUBLIC_KEY },
	{ "private", CKO_PRIVATE_KEY },
	{ "cert", CKO_CERTIFICATE },
	{ "secret-key", CKO_SECRET_KEY },
	{ "data", CKO_DATA },
};

/* ---------------------------------------------------------------------------
 * The object
 */

p11glue_uri *
p11glue_uri_new(void)
{
	return calloc(1, sizeof(p11glue_uri));
}

static void
value_clear(pg_uri_value *value, bool secret)
{
	if (secret)
		pg_free_secret(value->data, value->len);
	else
		free(value->data);
	value->data = NULL;
	value->len = 0;
}

static void
vendor_clear(pg_uri_vendor *vendor)
{
	free(vendor->name);
	free(vendor->value);
}

void
p11glue_uri_free(p11glue_uri *uri)
{
	if (uri == NULL)
		return;
	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++)
		value_clear(&uri->fields[i], i == P11GLUE_URI_PIN_VALUE);
	for (size_t i = 0; i < uri->n_vendor; i++)
		vendor_clear(&uri->vendor[i]);
	free(uri->vendor);
	free(uri);
}

p11glue_uri *
p11glue_uri_dup(const p11glue_uri *uri)
{
	p11glue_uri *copy;

	pg_return_val_if_fail(uri != NULL, NULL);
	copy = p11glue_uri_new();
	if (copy == NULL)
		return NULL;
	copy->unrecognized = uri->unrecognized;
	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		const pg_uri_value *v = &uri->fields[i];
		if (v->data == NULL)
			continue;
		copy->fields[i].data = pg_memdup0(v->data, v->len);
		if (copy->fields[i].data == NULL)
			goto fail;
		copy->fields[i].len = v->len;
	}
	for (size_t i = 0; i < uri->n_vendor; i++) {
		const pg_uri_vendor *v = &uri->vendor[i];
		if (p11glue_uri_set_vendor(copy, v->in_query, v->name,
		                           v->value, v->len) != P11GLUE_OK)
			goto fail;
	}
	return copy;
fail:
	p11glue_uri_free(copy);
	return NULL;
}

const char *
p11glue_uri_field_name(p11glue_uri_field field)
{
	if ((unsigned)field >= P11GLUE_URI_N_FIELDS)
		return NULL;
	return field_specs[field].name;
}

bool
p11glue_uri_is_unrecognized(const p11glue_uri *uri)
{
	pg_return_val_if_fail(uri != NULL, false);
	return uri->unrecognized;
}

static bool
value_equal(const pg_uri_value *a, const pg_uri_value *b)
{
	if ((a->data == NULL) != (b->data == NULL))
		return false;
	return a->data == NULL ||
	       (a->len == b->len && memcmp(a->data, b->data, a->len) == 0);
}

bool
p11glue_uri_equal(const p11glue_uri *a, const p11glue_uri *b)
{
	pg_return_val_if_fail(a != NULL && b != NULL, false);
	if (a->unrecognized != b->unrecognized || a->n_vendor != b->n_vendor)
		return false;
	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		if (!value_equal(&a->fields[i], &b->fields[i]))
			return false;
	}
	for (size_t i = 0; i < a->n_vendor; i++) {
		const pg_uri_vendor *va = &a->vendor[i], *vb = &b->vendor[i];
		if (va->in_query != vb->in_query || strcmp(va->name, vb->name) != 0 ||
		    va->len != vb->len || memcmp(va->value, vb->value, va->len) != 0)
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Values
 */

/* Parses 1*DIGIT in [p, end) into *out (false on overflow or no digit). */
static bool
parse_decimal(const unsigned char *p, const unsigned char *end,
              unsigned long long max, unsigned long long *out)
{
	unsigned long long n = 0;

	if (p == end)
		return false;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (n > (max - (unsigned)(*p - '0')) / 10)
			return false;
		n = n * 10 + (unsigned)(*p - '0');
	}
	*out = n;
	return true;
}

/*
 * Checks value for field and writes its canonical spelling to canon
 * (at most 48 bytes) when the kind has one. Returns false when the value
 * is not valid; detail then says why.
 */
static bool
check_value(p11glue_uri_field field, const unsigned char *value, size_t len,
            char canon[48], char *detail, size_t detail_size)
{
	const struct field_spec *spec = &field_specs[field];
	const unsigned char *end = value + len;
	unsigned long long major, minor = 0, id;
	const unsigned char *dot;

	canon[0] = 0;
	switch (spec->kind) {
	case KIND_TEXT:
		if (spec->max_len != 0 && len > spec->max_len) {
			snprintf(detail, detail_size, "value of '%s' is longer than %zu bytes",
			         spec->name, spec->max_len);
			return false;
		}
		return true;
	case KIND_TYPE:
		for (size_t i = 0; i < PG_N_ELEMENTS(type_names); i++) {
			if (len == strlen(type_names[i].name) &&
			    memcmp(value, type_names[i].name, len) == 0)
				return true;
		}
		snprintf(detail, detail_size,
		         "value of 'type' must be public, private, cert, secret-key or data");
		return false;
	case KIND_VERSION:
		/* RFC 7512 §2.3: 1*DIGIT [ "." 1*DIGIT ], each part a CK_BYTE. */
		dot = memchr(value, '.', len);
		if (!parse_decimal(value, dot ? dot : end, 255, &major) ||
		    (dot && !parse_decimal(dot + 1, end, 255, &minor))) {
			snprintf(detail, detail_size,
			         "value of 'library-version' must be MAJOR or MAJOR.MINOR, each 0-255");
			return false;
		}
		snprintf(canon, 48, "%llu.%llu", major, minor);
		return true;
	case KIND_SLOT_ID:
		if (!parse_decimal(value, end, ULONG_MAX, &id)) {
			snprintf(detail, detail_size,
			         "value of 'slot-id' must be a decimal number that fits a CK_ULONG");
			return false;
		}
		snprintf(canon, 48, "%llu", id);
		return true;
	}
	return false;
}

static int
store_value(p11glue_uri *uri, p11glue_uri_field field,
            const void *value, size_t len)
{
	unsigned char *copy = pg_memdup0(value, len);

	if (copy == NULL)
		return P11GLUE_ERR_NOMEM;
	value_clear(&uri->fields[field], field == P11GLUE_URI_PIN_VALUE);
	uri->fields[field].data = copy;
	uri->fields[field].len = len;
	return P11GLUE_OK;
}

/* Checks and stores; fills detail on a bad value. */
static int
set_checked(p11glue_uri *uri, p11glue_uri_field field, const void *value,
            size_t len, char *detail, size_t detail_size)
{
	char canon[48];

	if (!check_value(field, value, len, canon, detail, detail_size))
		return P11GLUE_ERR_URI_VALUE;
	if (canon[0])
		return store_value(uri, field, canon, strlen(canon));
	return store_value(uri, field, value, len);
}

int
p11glue_uri_set(p11glue_uri *uri, p11glue_uri_field field,
                const void *value, size_t len, p11glue_uri_error *error)
{
	p11glue_uri_error local;
	int rv;

	pg_return_val_if_fail(uri != NULL, P11GLUE_ERR_ARGS);
	pg_return_val_if_fail((unsigned)field < P11GLUE_URI_N_FIELDS, P11GLUE_ERR_ARGS);
	pg_return_val_if_fail(value != NULL || len == 0, P11GLUE_ERR_ARGS);
	if (error == NULL)
		error = &local;
	memset(error, 0, sizeof(*error));
	rv = set_checked(uri, field, value ? value : "", len,
	                 error->detail, sizeof(error->detail));
	error->result = rv;
	return rv;
}

void
p11glue_uri_unset(p11glue_uri *uri, p11glue_uri_field field)
{
	pg_return_if_fail(uri != NULL);
	pg_return_if_fail((unsigned)field < P11GLUE_URI_N_FIELDS);
	value_clear(&uri->fields[field], field == P11GLUE_URI_PIN_VALUE);
}

const unsigned char *
p11glue_uri_get(const p11glue_uri *uri, p11glue_uri_field field, size_t *len)
{
	pg_return_val_if_fail(uri != NULL, NULL);
	pg_return_val_if_fail((unsigned)field < P11GLUE_URI_N_FIELDS, NULL);
	if (len != NULL)
		*len = uri->fields[field].len;
	return uri->fields[field].data;
}

bool
p11glue_uri_get_library_version(const p11glue_uri *uri, CK_VERSION *version)
{
	const pg_uri_value *v;
	unsigned long long major, minor;
	const unsigned char *dot;

	pg_return_val_if_fail(uri != NULL && version != NULL, false);
	v = &uri->fields[P11GLUE_URI_LIBRARY_VERSION];
	if (v->data == NULL)
		return false;
	/* Stored canonically as MAJOR.MINOR by check_value(). */
	dot = memchr(v->data, '.', v->len);
	if (dot == NULL || !parse_decimal(v->data, dot, 255, &major) ||
	    !parse_decimal(dot + 1, v->data + v->len, 255, &minor))
		return false;
	version->major = (CK_BYTE)major;
	version->minor = (CK_BYTE)minor;
	return true;
}

bool
p11glue_uri_get_slot_id(const p11glue_uri *uri, CK_SLOT_ID *slot_id)
{
	const pg_uri_value *v;
	unsigned long long id;

	pg_return_val_if_fail(uri != NULL && slot_id != NULL, false);
	v = &uri->fields[P11GLUE_URI_SLOT_ID];
	if (v->data == NULL || !parse_decimal(v->data, v->data + v->len, ULONG_MAX, &id))
		return false;
	*slot_id = (CK_SLOT_ID)id;
	return true;
}

bool
p11glue_uri_get_class(const p11glue_uri *uri, CK_OBJECT_CLASS *klass)
{
	const pg_uri_value *v;

	pg_return_val_if_fail(uri != NULL && klass != NULL, false);
	v = &uri->fields[P11GLUE_URI_TYPE];
	if (v->data == NULL)
		return false;
	for (size_t i = 0; i < PG_N_ELEMENTS(type_names); i++) {
		if (strcmp((const char *)v->data, type_names[i].name) == 0) {
			*klass = type_names[i].klass;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------------
 * Vendor attributes, kept sorted: path before query, then by name.
 */

/* RFC 7512 §2.3: "x-" 1*pk11-v-attr-nm-char (ALPHA / DIGIT / "-" / "_"). */
static bool
is_vendor_name(const char *name, size_t len)
{
	if (len < 3 || name[0] != 'x' || name[1] != '-')
		return false;
	for (size_t i = 2; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

static int
vendor_compare(bool q1, const char *n1, bool q2, const char *n2)
{
	if (q1 != q2)
		return q1 ? 1 : -1;
	return strcmp(n1, n2);
}

/* Index of the vendor attribute, or where it would be inserted. */
static size_t
vendor_position(const p11glue_uri *uri, bool in_query, const char *name, bool *found)
{
	size_t i;
	int cmp = 1;

	for (i = 0; i < uri->n_vendor; i++) {
		cmp = vendor_compare(uri->vendor[i].in_query, uri->vendor[i].name,
		                     in_query, name);
		if (cmp >= 0)
			break;
	}
	*found = i < uri->n_vendor && cmp == 0;
	return i;
}

int
p11glue_uri_set_vendor(p11glue_uri *uri, bool in_query, const char *name,
                       const void *value, size_t len)
{
	pg_uri_vendor *grown, item;
	bool found;
	size_t at;

	pg_return_val_if_fail(uri != NULL && name != NULL, P11GLUE_ERR_ARGS);
	if (!is_vendor_name(name, strlen(name)))
		return P11GLUE_ERR_URI_NAME;
	at = vendor_position(uri, in_query, name, &found);
	if (value == NULL) {
		if (found) {
			vendor_clear(&uri->vendor[at]);
			memmove(uri->vendor + at, uri->vendor + at + 1,
			        (uri->n_vendor - at - 1) * sizeof(*uri->vendor));
			uri->n_vendor--;
		}
		return P11GLUE_OK;
	}
	item.in_query = in_query;
	item.len = len;
	item.value = pg_memdup0(value, len);
	item.name = strdup(name);
	if (item.value == NULL || item.name == NULL) {
		vendor_clear(&item);
		return P11GLUE_ERR_NOMEM;
	}
	if (found) {
		vendor_clear(&uri->vendor[at]);
		uri->vendor[at] = item;
		return P11GLUE_OK;
	}
	grown = realloc(uri->vendor, (uri->n_vendor + 1) * sizeof(*uri->vendor));
	if (grown == NULL) {
		vendor_clear(&item);
		return P11GLUE_ERR_NOMEM;
	}
	uri->vendor = grown;
	memmove(uri->vendor + at + 1, uri->vendor + at,
	        (uri->n_vendor - at) * sizeof(*uri->vendor));
	uri->vendor[at] = item;
	uri->n_vendor++;
	return P11GLUE_OK;
}

size_t
p11glue_uri_vendor_count(const p11glue_uri *uri)
{
	pg_return_val_if_fail(uri != NULL, 0);
	return uri->n_vendor;
}

bool
p11glue_uri_vendor_get(const p11glue_uri *uri, size_t index, bool *in_query,
                       const char **name, const unsigned char **value, size_t *len)
{
	pg_return_val_if_fail(uri != NULL, false);
	if (index >= uri->n_vendor)
		return false;
	if (in_query)
		*in_query = uri->vendor[index].in_query;
	if (name)
		*name = uri->vendor[index].name;
	if (value)
		*value = uri->vendor[index].value;
	if (len)
		*len = uri->vendor[index].len;
	return true;
}

const unsigned char *
p11glue_uri_vendor_find(const p11glue_uri *uri, bool in_query,
                        const char *name, size_t *len)
{
	bool found;
	size_t at;

	pg_return_val_if_fail(uri != NULL && name != NULL, NULL);
	at = vendor_position(uri, in_query, name, &found);
	if (!found)
		return NULL;
	if (len)
		*len = uri->vendor[at].len;
	return uri->vendor[at].value;
}

/* ---------------------------------------------------------------------------
 * Formatting
 */

static bool
is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

static void
format_value(pg_buf *out, const unsigned char *value, size_t len,
             bool in_query, bool encode_all)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = value[i];
		if (!encode_all && (is_unreserved(c) || (in_query && (c == '/' || c == ':')))) {
			pg_buf_add_byte(out, c);
		} else {
			unsigned char esc[3] = { '%', (unsigned char)hex[c >> 4],
			                         (unsigned char)hex[c & 15] };
			pg_buf_add(out, esc, 3);
		}
	}
}

static void
format_component(const p11glue_uri *uri, pg_buf *out, bool in_query)
{
	bool first = true;
	const char sep = in_query ? '&' : ';';

	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		const pg_uri_value *v = &uri->fields[i];
		if (v->data == NULL || field_specs[i].in_query != in_query)
			continue;
		if (first && in_query)
			pg_buf_add_byte(out, '?');
		else if (!first)
			pg_buf_add_byte(out, (unsigned char)sep);
		first = false;
		pg_buf_add_str(out, field_specs[i].name);
		pg_buf_add_byte(out, '=');
		format_value(out, v->data, v->len, in_query, i == P11GLUE_URI_ID);
	}
	for (size_t i = 0; i < uri->n_vendor; i++) {
		const pg_uri_vendor *v = &uri->vendor[i];
		if (v->in_query != in_query)
			continue;
		if (first && in_query)
			pg_buf_add_byte(out, '?');
		else if (!first)
			pg_buf_add_byte(out, (unsigned char)sep);
		first = false;
		pg_buf_add_str(out, v->name);
		pg_buf_add_byte(out, '=');
		format_value(out, v->value, v->len, in_query, false);
	}
}

char *
p11glue_uri_format(const p11glue_uri *uri)
{
	pg_buf out;

	pg_return_val_if_fail(uri != NULL, NULL);
	pg_buf_init(&out);
	pg_buf_add_str(&out, URI_SCHEME);
	format_component(uri, &out, false);
	format_component(uri, &out, true);
	return pg_buf_steal(&out, NULL);
}

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
	if (is_unreserved(c) || strchr(":[]@!$'()*+,=", c) != NULL)
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
		if (field_specs[i].in_query == in_query &&
		    strlen(field_specs[i].name) == len &&
		    memcmp(field_specs[i].name, name, len) == 0)
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
	const struct field_spec *spec = &field_specs[field];
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
	rv = set_checked(p->uri, (p11glue_uri_field)field,
	                 value->data ? value->data : (const unsigned char *)"",
	                 value->len, detail, sizeof(detail));
	if (rv != P11GLUE_ERR_URI_VALUE)
		return rv;
	/* Lenient: a value the token fields cannot hold matches nothing. */
	if (lenient && (spec->kind == KIND_TEXT || spec->kind == KIND_TYPE)) {
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
	if (field < 0 && !is_vendor_name(s, (size_t)(eq - s))) {
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
