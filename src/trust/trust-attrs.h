/*
 * Attribute lookup for the trust module's objects (trust-attrs.c): attribute
 * types as small dense codes, and which codes each kind of object can
 * answer, so that the attribute-read path refuses most absent attributes
 * without a call. Tables only: thread-safe.
 */
#ifndef PG_TRUST_ATTRS_H
#define PG_TRUST_ATTRS_H

#include "trust-store.h"

#include <stdint.h>

enum {
	PG_A_OTHER = 0,
	/* Every object has these four. */
	PG_A_TOKEN, PG_A_PRIVATE, PG_A_MODIFIABLE, PG_A_LABEL,
	PG_A_CLASS, PG_A_APPLICATION, PG_A_VALUE, PG_A_OBJECT_ID, PG_A_CERT_TYPE, PG_A_ISSUER, PG_A_SERIAL,
	PG_A_TRUSTED, PG_A_CATEGORY, PG_A_JAVA_MIDP, PG_A_URL, PG_A_HASH_SUBJECT, PG_A_HASH_ISSUER,
	PG_A_CHECK_VALUE, PG_A_SUBJECT, PG_A_ID, PG_A_START, PG_A_END, PG_A_SPKI,
	/* CKA_TRUST_DIGITAL_SIGNATURE .. CKA_TRUST_TIME_STAMPING, in order */
	PG_A_TRUST_FIRST, PG_A_TRUST_LAST = PG_A_TRUST_FIRST + 14,
	PG_A_STEP_UP, PG_A_SHA1, PG_A_MD5,
	PG_A_ASSERTION_TYPE, PG_A_CERT_VALUE, PG_A_PURPOSE, PG_A_DISTRUSTED, PG_A_GENERATED, PG_A_ORIGIN,
};

#define PG_ATTR_STD_CODES 0x180
/* Codes of the standard types below PG_ATTR_STD_CODES. */
extern const unsigned char pg_attr_std_codes[PG_ATTR_STD_CODES];
/* Per PG_OBJ_* kind, a bit per code that kind may answer. */
extern const uint64_t pg_attr_kind_codes[PG_OBJ_STORED + 1];

/*
 * The vendor types objects compute (NSS trust, p11-kit's X_), in a table
 * of 32 slots addressed by a multiplicative hash without collisions for
 * them (a collision would be a duplicate initializer, which -Werror
 * refuses).
 */
#define PG_ATTR_HASH(t) ((uint32_t)((uint32_t)(t) * 0x6ec9d287u) >> 27)
typedef struct {
	uint32_t type;
	unsigned char code;
} pg_attr_slot;
extern const pg_attr_slot pg_attr_vendor[32];

/* The code of an attribute type (PG_A_OTHER for types no object computes). */
static inline unsigned
pg_attr_code(CK_ATTRIBUTE_TYPE t)
{
	const pg_attr_slot *slot;

	if (t < PG_ATTR_STD_CODES)
		return pg_attr_std_codes[t];
	slot = &pg_attr_vendor[PG_ATTR_HASH(t)];
	return slot->type == t ? slot->code : PG_A_OTHER;
}

/* pg_object_value with the type's code already known. */
pg_value pg_object_value_code(pg_object *obj, unsigned code, CK_ATTRIBUTE_TYPE type);

/*
 * pg_object_value, refusing without a call what an object's kind never
 * answers; objects that keep their file's attributes always ask.
 */
static inline pg_value
pg_object_value_fast(pg_object *obj, CK_ATTRIBUTE_TYPE type)
{
	unsigned code = pg_attr_code(type);

	if (!((pg_attr_kind_codes[obj->kind] >> code) & 1) && !obj->stored)
		return (pg_value){ NULL, CK_UNAVAILABLE_INFORMATION };
	return pg_object_value_code(obj, code, type);
}

#endif /* PG_TRUST_ATTRS_H */
