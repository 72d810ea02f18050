/*
 * The layout of p11glue_uri and the attribute table, shared by uri.c,
 * uri-parse.c and uri-match.c.
 */
#ifndef PG_URI_PRIVATE_H
#define PG_URI_PRIVATE_H

#include "common.h"

#include <p11glue/uri.h>

/* A decoded value; data is NULL when the attribute is not set, else it
 * holds len bytes followed by a NUL. */
typedef struct {
	unsigned char *data;
	size_t len;
} pg_uri_value;

typedef struct {
	char *name;
	unsigned char *value;
	size_t len;
	bool in_query;
} pg_uri_vendor;

struct p11glue_uri {
	pg_uri_value fields[P11GLUE_URI_N_FIELDS];
	pg_uri_vendor *vendor;      /* sorted: path first, then by name */
	size_t n_vendor;
	bool unrecognized;          /* lenient parse met something unknown */
};

/* How a standard attribute's value is checked and spelled. */
typedef enum {
	PG_URI_KIND_TEXT, PG_URI_KIND_VERSION, PG_URI_KIND_TYPE, PG_URI_KIND_SLOT_ID
} pg_uri_kind;

typedef struct {
	const char *name;
	bool in_query;
	size_t max_len;          /* size of the PKCS#11 field; 0: unlimited */
	pg_uri_kind kind;
} pg_uri_field_spec;

/* Every standard attribute, by field (uri.c). */
extern const pg_uri_field_spec pg_uri_field_specs[P11GLUE_URI_N_FIELDS];

/* Checks value for field and stores it in its canonical spelling; a
 * P11GLUE_ERR_* with detail[detail_size] saying why on failure. */
int pg_uri_set_checked(p11glue_uri *uri, p11glue_uri_field field, const void *value, size_t len,
                       char *detail, size_t detail_size);
/* RFC 3986 unreserved characters. */
bool pg_uri_is_unreserved(unsigned char c);
/* RFC 7512 §2.3: 1*pk11-v-attr-nm-char (ALPHA / DIGIT / "-" / "_"). */
bool pg_uri_is_attr_name(const char *name, size_t len);
/* The standard attribute of that name in the path or the query, or -1. */
int pg_uri_field_lookup(const char *name, size_t len, bool in_query);
/* True when the URI has a vendor path attribute (which no matcher knows,
 * so the URI matches nothing). */
bool pg_uri_has_path_vendor(const p11glue_uri *uri);

#endif /* PG_URI_PRIVATE_H */
