/*
 * test-header: p11glue's PKCS#11 headers against Debian's NSS and p11-kit
 * headers. Prints TAP.
 *
 * Constants were already compared when this program was built: each
 * generated check-<reference>.c holds one _Static_assert or #error per
 * reference constant (gen-header-check.py). Those files export their
 * counts, reported here as one test each.
 *
 * Layouts are compared here: layout-ours.c and layout-ref-<reference>.c
 * measure the same list (layout-<reference>.def) against the two headers,
 * and every size, alignment and offset must agree.
 */
#include <stdio.h>
#include <string.h>

#include "header-check.h"

static unsigned test_number;
static unsigned failures;

static void
report_constants(const struct pg_hdrcheck_summary *s)
{
	/* An empty comparison means the generator found nothing to check. */
	if (s->compared == 0) {
		failures++;
		printf("not ok %u - %s: no constants compared\n",
		       ++test_number, s->reference);
		return;
	}
	printf("ok %u - %s: %u constants equal at compile time "
	       "(%u allow-listed, %u non-constant macros skipped)\n",
	       ++test_number, s->reference, s->compared, s->allowed,
	       s->skipped);
}

static size_t
count_entries(const struct pg_layout_entry *table)
{
	size_t n = 0;

	while (table[n].name != NULL)
		n++;
	return n;
}

static void
compare_layouts(const char *reference, const struct pg_layout_entry *ours,
		const struct pg_layout_entry *ref)
{
	size_t i;

	for (i = 0; ours[i].name != NULL && ref[i].name != NULL; i++) {
		test_number++;
		/* Both tables come from one .def list; names must pair up. */
		if (strcmp(ours[i].name, ref[i].name) != 0) {
			failures++;
			printf("not ok %u - %s: %s # table out of step with %s\n",
			       test_number, reference, ours[i].name,
			       ref[i].name);
		} else if (ours[i].value != ref[i].value) {
			failures++;
			printf("not ok %u - %s: %s # ours=%zu ref=%zu\n",
			       test_number, reference, ours[i].name,
			       ours[i].value, ref[i].value);
		} else {
			printf("ok %u - %s: %s\n", test_number, reference,
			       ours[i].name);
		}
	}
}

int
main(void)
{
	size_t total;

	total = 3 + count_entries(pg_layout_ours_nss) +
		count_entries(pg_layout_ours_p11_kit);
	if (count_entries(pg_layout_ref_nss) !=
	    count_entries(pg_layout_ours_nss) ||
	    count_entries(pg_layout_ref_p11_kit) !=
	    count_entries(pg_layout_ours_p11_kit)) {
		printf("Bail out! layout tables differ in length\n");
		return 1;
	}
	printf("1..%zu\n", total);

	report_constants(&pg_hdrcheck_nss);
	report_constants(&pg_hdrcheck_nss_compat);
	report_constants(&pg_hdrcheck_p11_kit);
	compare_layouts("nss", pg_layout_ours_nss, pg_layout_ref_nss);
	compare_layouts("p11-kit", pg_layout_ours_p11_kit,
			pg_layout_ref_p11_kit);

	return failures == 0 ? 0 : 1;
}
