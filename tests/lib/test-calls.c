/*
 * The forwarding list (src/common/pkcs11-calls.h) agrees with the function
 * lists of include/p11glue/pkcs11.h: same functions, same types, same
 * order, nothing missing.
 */
#include "config.h"

#include "harness.h"
#include "pkcs11-calls.h"

#include <p11glue/pkcs11.h>

#include <stddef.h>
#include <string.h>

#define PG_EXPAND(...) __VA_ARGS__

/* Each entry's type is the member's type (a compile-time check). */
#define CHECK_TYPE(name, params, args, kind)                                     \
	_Static_assert(__builtin_types_compatible_p(                                 \
	                   __typeof__(((CK_FUNCTION_LIST_3_0 *)0)->name),            \
	                   CK_RV (*)(PG_EXPAND params)), #name " type");
PG_CALLS(CHECK_TYPE)

static const size_t offsets[] = {
#define OFFSET(name, params, args, kind) offsetof(CK_FUNCTION_LIST_3_0, name),
	PG_CALLS(OFFSET)
#undef OFFSET
};

static const size_t offsets_2x[] = {
#define OFFSET(name, params, args, kind) offsetof(CK_FUNCTION_LIST, name),
	PG_CALLS_2X(OFFSET)
#undef OFFSET
};

static void
test_order_and_count(void)
{
	size_t n = sizeof(offsets) / sizeof(offsets[0]);

	/* Every member, in order, right after the version. */
	pg_assert_int_eq(n, (sizeof(CK_FUNCTION_LIST_3_0) - offsetof(CK_FUNCTION_LIST_3_0, C_Initialize)) /
	                    sizeof(void *));
	for (size_t i = 0; i < n; i++)
		pg_assert_int_eq(offsets[i], offsetof(CK_FUNCTION_LIST_3_0, C_Initialize) + i * sizeof(void *));
	pg_assert_int_eq(n, 92);
}

static void
test_2x_part(void)
{
	size_t n = sizeof(offsets_2x) / sizeof(offsets_2x[0]);

	pg_assert_int_eq(n, 68);
	pg_assert_int_eq(sizeof(CK_FUNCTION_LIST),
	                 offsetof(CK_FUNCTION_LIST, C_Initialize) + n * sizeof(void *));
	for (size_t i = 0; i < n; i++)
		pg_assert_int_eq(offsets_2x[i], offsets[i]);
}

int
main(int argc, char **argv)
{
	pg_test("calls/order-and-count", test_order_and_count);
	pg_test("calls/2x-part", test_2x_part);
	return pg_test_run(argc, argv);
}
