/*
 * Layout tables of p11glue's own PKCS#11 header, one per reference list
 * (see layout-nss.def, layout-p11-kit.def). test-header.c compares them
 * entry by entry with layout-ref-nss.c and layout-ref-p11-kit.c.
 */
#include <p11glue/pkcs11x.h>

#include "layout.h"

const struct pg_layout_entry pg_layout_ours_nss[] = {
#include "layout-nss.def"
	LAYOUT_END
};

const struct pg_layout_entry pg_layout_ours_p11_kit[] = {
#include "layout-p11-kit.def"
	LAYOUT_END
};
