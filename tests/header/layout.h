/*
 * Turns a layout-*.def list into a table of struct pg_layout_entry:
 *
 *     const struct pg_layout_entry table[] = {
 *     #include "layout-nss.def"
 *         LAYOUT_END
 *     };
 *
 * Each type gives "sizeof(T)"; each structure also "_Alignof(T)"; each
 * member "offsetof(T, m)" and "sizeof(T.m)". LAYOUT_PREFIX(T) is for a
 * structure of which only the listed leading members are shared with the
 * reference: it gives the alignment but not the size. Include this after
 * the pkcs11.h whose layout is being measured.
 */
#ifndef P11GLUE_TESTS_LAYOUT_H
#define P11GLUE_TESTS_LAYOUT_H

#include <stddef.h>

#include "header-check.h"

#define LAYOUT_TYPE(type) \
	{ "sizeof(" #type ")", sizeof(type) },
#define LAYOUT_STRUCT(type) \
	LAYOUT_TYPE(type) \
	{ "_Alignof(" #type ")", _Alignof(type) },
#define LAYOUT_PREFIX(type) \
	{ "_Alignof(" #type ")", _Alignof(type) },
#define LAYOUT_MEMBER(type, member) \
	{ "offsetof(" #type ", " #member ")", offsetof(type, member) }, \
	{ "sizeof(" #type "." #member ")", sizeof(((type *) 0)->member) },
#define LAYOUT_END \
	{ NULL, 0 }

#endif /* P11GLUE_TESTS_LAYOUT_H */
