/*
 * Layout table of p11-kit's PKCS#11 2.40 header (libp11-kit-dev). Built
 * on its own, with only p11-kit's include directory, so that no p11glue
 * header is visible; the names clash. p11-kit's default compatibility
 * mode gives its structures the specification's member names.
 */
#include <p11-kit/pkcs11.h>
#include <p11-kit/pkcs11x.h>

#include "layout.h"

const struct pg_layout_entry pg_layout_ref_p11_kit[] = {
#include "layout-p11-kit.def"
	LAYOUT_END
};
