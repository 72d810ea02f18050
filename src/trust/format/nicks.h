/*
 * Names of attributes and of their constant values in the persistence
 * format ("trust-server-auth: nss-trusted-delegator"): the spellings
 * p11-kit's trust module reads and writes, so that files move between
 * the two. Also the list of attribute types `trust dump` prints, in
 * ascending order of type.
 *
 * Tables only: thread-safe.
 */
#ifndef PG_TRUST_NICKS_H
#define PG_TRUST_NICKS_H

#include <p11glue/pkcs11.h>

#include <stdbool.h>
#include <stddef.h>

/* How a value is written (the first that applies, in this order). */
enum {
	PG_FORM_BOOL = 1,    /* true / false (CK_BBOOL of the listed types) */
	PG_FORM_CONST = 2,   /* a name from the type's table */
	PG_FORM_ULONG = 4,   /* decimal CK_ULONG */
	PG_FORM_OID = 8,     /* dotted OID (CKA_OBJECT_ID) */
};

/* The attribute types with a name, ascending: how many, and the i-th. */
size_t pg_nick_count(void);
CK_ATTRIBUTE_TYPE pg_nick_type_at(size_t i);

/* The name of an attribute type, or NULL. */
const char *pg_nick_attr(CK_ATTRIBUTE_TYPE type);
/* The type of an attribute name (len bytes); false when unknown. */
bool pg_nick_attr_parse(const char *name, size_t len, CK_ATTRIBUTE_TYPE *type);

/* PG_FORM_* bits a type's value may be written with (0: quoted string). */
unsigned pg_nick_forms(CK_ATTRIBUTE_TYPE type);
/* The name of a constant value of an attribute (class, trust, ...), or NULL. */
const char *pg_nick_value(CK_ATTRIBUTE_TYPE type, CK_ULONG value);
/* The value of a constant name of any table; false when unknown. */
bool pg_nick_value_parse(const char *name, size_t len, CK_ULONG *value);

#endif /* PG_TRUST_NICKS_H */
