/*
 * p11glue — one store, one registry, one trust, through PKCS#11.
 *
 * Public core API. Every exported function is named p11glue_<noun>_<verb>
 * and, unless it says otherwise, returns a p11glue_result: 0 on success,
 * a negative value on failure, which p11glue_strerror() turns into text.
 *
 * Thread safety: functions operating on distinct objects may be called
 * from different threads at once; one object is not locked internally.
 */
#ifndef P11GLUE_P11GLUE_H
#define P11GLUE_P11GLUE_H

#include <stdbool.h>
#include <stddef.h>

#include <p11glue/defs.h>
#include <p11glue/pkcs11.h>

#ifdef __cplusplus
extern "C" {
#endif


/* Results of the core API. Values are stable across releases. */
typedef enum {
	P11GLUE_OK = 0,
	P11GLUE_ERR_NOMEM = -1,         /* out of memory */
	P11GLUE_ERR_ARGS = -2,          /* invalid arguments (a caller bug) */
	P11GLUE_ERR_URI_SCHEME = -10,   /* text does not start with "pkcs11:" */
	P11GLUE_ERR_URI_SYNTAX = -11,   /* structure or character not allowed */
	P11GLUE_ERR_URI_NAME = -12,     /* unknown attribute name */
	P11GLUE_ERR_URI_VALUE = -13,    /* value not valid for its attribute */
	P11GLUE_ERR_URI_ENCODING = -14, /* bad percent-encoding */
	P11GLUE_ERR_URI_DUPLICATE = -15,/* attribute given twice */
	P11GLUE_ERR_MODULE = -20,       /* a critical module failed to load */
	P11GLUE_ERR_NOT_FOUND = -21,    /* no such module, token or object */
	P11GLUE_ERR_PIN_SOURCE = -30,   /* a PIN source could not be read */
	P11GLUE_ERR_PIN_CANCELLED = -31 /* no PIN: no terminal, or entry ended */
} p11glue_result;

/*
 * Text for a p11glue_result (a static string, never NULL; unknown codes
 * give a generic text).
 */
P11GLUE_PUBLIC const char *p11glue_strerror(int result);

/* The library's version as "MAJOR.MINOR.PATCH" (a static string). */
P11GLUE_PUBLIC const char *p11glue_version(void);

#ifdef __cplusplus
}
#endif

#include <p11glue/uri.h>
#include <p11glue/registry.h>
#include <p11glue/pin.h>

#endif /* P11GLUE_P11GLUE_H */
