/*
 * Shared declarations of the PKCS#11 header comparison test.
 *
 * The generated check-<reference>.c files (gen-header-check.py) export a
 * pg_hdrcheck_summary each; layout-ours.c and layout-ref-<reference>.c
 * export a table of sizes and offsets each. test-header.c compares them.
 * This header includes no PKCS#11 header, so every translation unit can
 * use it whichever pkcs11.h it was built against.
 */
#ifndef P11GLUE_TESTS_HEADER_CHECK_H
#define P11GLUE_TESTS_HEADER_CHECK_H

#include <stddef.h>

/* Counts of one compile-time constant check (all checks passed if built). */
struct pg_hdrcheck_summary {
	const char *reference;	/* "nss", "p11-kit" */
	unsigned compared;	/* constants found equal */
	unsigned allowed;	/* exempted by the generator's allow-list */
	unsigned skipped;	/* reference macros that are not constants */
};

extern const struct pg_hdrcheck_summary pg_hdrcheck_nss;
extern const struct pg_hdrcheck_summary pg_hdrcheck_nss_compat;
extern const struct pg_hdrcheck_summary pg_hdrcheck_p11_kit;

/* One measured fact: "sizeof(CK_INFO)" or "CK_INFO.flags" (its offset). */
struct pg_layout_entry {
	const char *name;
	size_t value;
};

/* Tables end with a { NULL, 0 } entry. */
extern const struct pg_layout_entry pg_layout_ours_nss[];
extern const struct pg_layout_entry pg_layout_ref_nss[];
extern const struct pg_layout_entry pg_layout_ours_p11_kit[];
extern const struct pg_layout_entry pg_layout_ref_p11_kit[];

#endif /* P11GLUE_TESTS_HEADER_CHECK_H */
