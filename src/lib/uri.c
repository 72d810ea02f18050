/*
 * PKCS#11 URIs (RFC 7512): the object, value checks, formatting. Parsing
 * lives in uri-parse.c, matching in uri-match.c.
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

const pg_uri_field_spec pg_uri_field_specs[P11GLUE_URI_N_FIELDS] = {
	[P11GLUE_URI_TOKEN] = { "token", false, 32, PG_URI_KIND_TEXT },
	[P11GLUE_URI_MANUFACTURER] = { "manufacturer", false, 32, PG_URI_KIND_TEXT },
	[P11GLUE_URI_SERIAL] = { "serial", false, 16, PG_URI_KIND_TEXT },
	[P11GLUE_URI_MODEL] = { "model", false, 16, PG_URI_KIND_TEXT },
	[P11GLUE_URI_LIBRARY_MANUFACTURER] = { "library-manufacturer", false, 32, PG_URI_KIND_TEXT },
	[P11GLUE_URI_LIBRARY_DESCRIPTION] = { "library-description", false, 32, PG_URI_KIND_TEXT },
	[P11GLUE_URI_LIBRARY_VERSION] = { "library-version", false, 0, PG_URI_KIND_VERSION },
	[P11GLUE_URI_OBJECT] = { "object", false, 0, PG_URI_KIND_TEXT },
	[P11GLUE_URI_TYPE] = { "type", false, 0, PG_URI_KIND_TYPE },
	[P11GLUE_URI_ID] = { "id", false, 0, PG_URI_KIND_TEXT },
	[P11GLUE_URI_SLOT_DESCRIPTION] = { "slot-description", false, 64, PG_URI_KIND_TEXT },
	[P11GLUE_URI_SLOT_MANUFACTURER] = { "slot-manufacturer", false, 32, PG_URI_KIND_TEXT },
	[P11GLUE_URI_SLOT_ID] = { "slot-id", false, 0, PG_URI_KIND_SLOT_ID },
	[P11GLUE_URI_PIN_SOURCE] = { "pin-source", true, 0, PG_URI_KIND_TEXT },
	[P11GLUE_URI_PIN_VALUE] = { "pin-value", true, 0, PG_URI_KIND_TEXT },
	[P11GLUE_URI_MODULE_NAME] = { "module-name", true, 0, PG_URI_KIND_TEXT },
	[P11GLUE_URI_MODULE_PATH] = { "module-path", true, 0, PG_URI_KIND_TEXT },
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
	return pg_uri_field_specs[field].name;
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
	const pg_uri_field_spec *spec = &pg_uri_field_specs[field];
	const unsigned char *end = value + len;
	unsigned long long major, minor = 0, id;
	const unsigned char *dot;

	canon[0] = 0;
	switch (spec->kind) {
	case PG_URI_KIND_TEXT:
		/* Any bytes. A value longer than its PKCS#11 field is a valid URI
		 * that matches nothing (uri-match.c), not an error. */
		return true;
	case PG_URI_KIND_TYPE:
		for (size_t i = 0; i < PG_N_ELEMENTS(type_names); i++) {
			if (len == strlen(type_names[i].name) &&
			    memcmp(value, type_names[i].name, len) == 0)
				return true;
		}
		snprintf(detail, detail_size,
		         "value of 'type' must be public, private, cert, secret-key or data");
		return false;
	case PG_URI_KIND_VERSION:
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
	case PG_URI_KIND_SLOT_ID:
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
int
pg_uri_set_checked(p11glue_uri *uri, p11glue_uri_field field, const void *value,
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
	rv = pg_uri_set_checked(uri, field, value ? value : "", len,
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

/*
 * RFC 7512 §2.3: a vendor-specific attribute is any pk11-v-attr-nm,
 * 1*pk11-v-attr-nm-char with pk11-v-attr-nm-char = ALPHA / DIGIT / "-" /
 * "_" ("x-" is a convention, not a rule); a name that is a standard
 * attribute of its component is that attribute.
 */
bool
pg_uri_is_attr_name(const char *name, size_t len)
{
	return pg_is_name(name, len, "-_");
}

int
pg_uri_field_lookup(const char *name, size_t len, bool in_query)
{
	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		if (pg_uri_field_specs[i].in_query == in_query &&
		    strlen(pg_uri_field_specs[i].name) == len &&
		    memcmp(pg_uri_field_specs[i].name, name, len) == 0)
			return i;
	}
	return -1;
}

bool
pg_uri_has_path_vendor(const p11glue_uri *uri)
{
	/* Sorted path first. */
	return uri->n_vendor > 0 && !uri->vendor[0].in_query;
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
	if (!pg_uri_is_attr_name(name, strlen(name)) ||
	    pg_uri_field_lookup(name, strlen(name), in_query) >= 0)
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

bool
pg_uri_is_unreserved(unsigned char c)
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
		if (!encode_all && (pg_uri_is_unreserved(c) || (in_query && (c == '/' || c == ':')))) {
			pg_buf_add_byte(out, c);
		} else {
			unsigned char esc[3] = { '%', (unsigned char)hex[c >> 4],
			                         (unsigned char)hex[c & 15] };
			pg_buf_add(out, esc, 3);
		}
	}
}

/* One "name=value" of the path or the query, after its separator: '?'
 * before the first query attribute, else ';' (path) or '&' (query). */
static void
format_attribute(pg_buf *out, bool *first, bool in_query, const char *name,
                 const unsigned char *value, size_t len, bool all_escaped)
{
	if (*first && in_query)
		pg_buf_add_byte(out, '?');
	else if (!*first)
		pg_buf_add_byte(out, in_query ? '&' : ';');
	*first = false;
	pg_buf_add_str(out, name);
	pg_buf_add_byte(out, '=');
	format_value(out, value, len, in_query, all_escaped);
}

static void
format_component(const p11glue_uri *uri, pg_buf *out, bool in_query)
{
	bool first = true;

	for (int i = 0; i < P11GLUE_URI_N_FIELDS; i++) {
		const pg_uri_value *v = &uri->fields[i];
		if (v->data != NULL && pg_uri_field_specs[i].in_query == in_query)
			format_attribute(out, &first, in_query, pg_uri_field_specs[i].name, v->data,
			                 v->len, i == P11GLUE_URI_ID);
	}
	for (size_t i = 0; i < uri->n_vendor; i++) {
		const pg_uri_vendor *v = &uri->vendor[i];
		if (v->in_query == in_query)
			format_attribute(out, &first, in_query, v->name, v->value, v->len, false);
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
