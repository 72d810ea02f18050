/*
 * The layout of p11glue_uri, shared by uri.c and uri-match.c.
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

#endif /* PG_URI_PRIVATE_H */
