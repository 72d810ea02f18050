/*
 * A neutral view of how Debian's libp11-kit parses a PKCS#11 URI, for the
 * differential test. This header includes neither project's pkcs11.h, so
 * the test can include ours and the reference side can include p11-kit's.
 */
#ifndef URI_P11KIT_REF_H
#define URI_P11KIT_REF_H

#include <stdbool.h>
#include <stddef.h>

/* Field indices; the test checks they equal P11GLUE_URI_*. */
enum {
	REF_TOKEN, REF_MANUFACTURER, REF_SERIAL, REF_MODEL,
	REF_LIBRARY_MANUFACTURER, REF_LIBRARY_DESCRIPTION, REF_LIBRARY_VERSION,
	REF_OBJECT, REF_TYPE, REF_ID,
	REF_SLOT_DESCRIPTION, REF_SLOT_MANUFACTURER, REF_SLOT_ID,
	REF_PIN_SOURCE, REF_PIN_VALUE, REF_MODULE_NAME, REF_MODULE_PATH,
	REF_N_FIELDS
};

#define REF_MAX_VENDOR 8

typedef struct {
	int result;                        /* p11_kit_uri_parse() result, 0 ok */
	bool unrecognized;
	bool has[REF_N_FIELDS];
	unsigned char value[REF_N_FIELDS][512];
	size_t len[REF_N_FIELDS];          /* fixed-size fields: blanks trimmed */
	bool has_vendor[REF_MAX_VENDOR];   /* query vendor attributes asked for */
	char vendor[REF_MAX_VENDOR][512];
} ref_uri;

/*
 * Parses text with p11-kit (P11_KIT_URI_FOR_ANY) into out, in the same
 * text forms p11glue uses ("M.N" versions, decimal slot-id, type names).
 * vendor_names (n_vendor <= REF_MAX_VENDOR) are query attributes to look up.
 */
void ref_p11kit_parse(const char *text, const char *const *vendor_names,
                      size_t n_vendor, ref_uri *out);

#endif
