/*
 * Layout table of NSS's PKCS#11 3.0 header (libnss3-dev). Built on its
 * own, with only NSS's include directories, so that no p11glue header is
 * visible; the names clash.
 */
#include <pkcs11.h>

#include "layout.h"

const struct pg_layout_entry pg_layout_ref_nss[] = {
#include "layout-nss.def"
	LAYOUT_END
};
