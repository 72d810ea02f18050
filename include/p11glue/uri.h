/*
 * PKCS#11 URIs (RFC 7512): parse, format and match.
 *
 * A p11glue_uri holds decoded attribute values as bytes: a value may
 * contain NUL and bytes that are not UTF-8. Values are set through
 * p11glue_uri_set(), which checks them as the parser does, so a URI
 * object only ever holds values that format to a valid URI. A value
 * longer than its PKCS#11 field (a token label over 32 bytes) is valid
 * and kept; it matches nothing.
 *
 * Vendor-specific attributes (RFC 7512 §2.3) are any other name made of
 * letters, digits, '-' and '_' ("x-" is a convention, not a rule), in
 * the path or the query; they are kept and formatted back. A vendor path
 * attribute makes the URI match nothing (the matchers below do not know
 * it; a consumer that does removes it from a copy before matching); a
 * vendor query attribute is ignored by matching.
 *
 * Canonical form (what p11glue_uri_format() writes):
 *   pkcs11:<path>[?<query>]
 *   path attributes in this order: token, manufacturer, serial, model,
 *     library-manufacturer, library-description, library-version, object,
 *     type, id, slot-description, slot-manufacturer, slot-id, then vendor
 *     attributes sorted by name (byte order); separated by ';'.
 *   query attributes in this order: pin-source, pin-value, module-name,
 *     module-path, then vendor attributes sorted by name; separated by '&'.
 *   Values: unreserved characters (A-Z a-z 0-9 - . _ ~) are written as
 *     they are; in query values '/' and ':' are also written as they are
 *     (file names stay readable); every other byte is written as %XX with
 *     upper-case hex digits. "id" is always written fully percent-encoded,
 *     as it is binary. library-version is written as MAJOR.MINOR and
 *     slot-id in decimal without leading zeros.
 *   For every valid URI x: parse(format(x)) holds the same attributes.
 *
 * Thread safety: a p11glue_uri is not locked; distinct objects may be used
 * from distinct threads.
 */
#ifndef P11GLUE_URI_H
#define P11GLUE_URI_H

#include <stdbool.h>
#include <stddef.h>

#include <p11glue/defs.h>
#include <p11glue/pkcs11.h>

#ifdef __cplusplus
extern "C" {
#endif


typedef struct p11glue_uri p11glue_uri;

/* The standard attributes. The order is the canonical formatting order. */
typedef enum {
	P11GLUE_URI_TOKEN = 0,              /* CK_TOKEN_INFO.label, <= 32 bytes */
	P11GLUE_URI_MANUFACTURER,           /* CK_TOKEN_INFO.manufacturerID, <= 32 */
	P11GLUE_URI_SERIAL,                 /* CK_TOKEN_INFO.serialNumber, <= 16 */
	P11GLUE_URI_MODEL,                  /* CK_TOKEN_INFO.model, <= 16 */
	P11GLUE_URI_LIBRARY_MANUFACTURER,   /* CK_INFO.manufacturerID, <= 32 */
	P11GLUE_URI_LIBRARY_DESCRIPTION,    /* CK_INFO.libraryDescription, <= 32 */
	P11GLUE_URI_LIBRARY_VERSION,        /* CK_INFO.libraryVersion, "M[.N]" */
	P11GLUE_URI_OBJECT,                 /* CKA_LABEL */
	P11GLUE_URI_TYPE,                   /* CKA_CLASS: public private cert secret-key data */
	P11GLUE_URI_ID,                     /* CKA_ID */
	P11GLUE_URI_SLOT_DESCRIPTION,       /* CK_SLOT_INFO.slotDescription, <= 64 */
	P11GLUE_URI_SLOT_MANUFACTURER,      /* CK_SLOT_INFO.manufacturerID, <= 32 */
	P11GLUE_URI_SLOT_ID,                /* CK_SLOT_ID, decimal */
	P11GLUE_URI_PIN_SOURCE,             /* query: where to read the PIN */
	P11GLUE_URI_PIN_VALUE,              /* query: the PIN itself (a secret) */
	P11GLUE_URI_MODULE_NAME,            /* query: registry name of a module */
	P11GLUE_URI_MODULE_PATH,            /* query: file name of a module */
	P11GLUE_URI_N_FIELDS
} p11glue_uri_field;

/* Flags for p11glue_uri_parse(). */
enum {
	/*
	 * Accept what URIs found in the wild contain (and what p11-kit
	 * accepts): white space anywhere is removed first (blank, tab, CR,
	 * LF, VT, FF: RFC 3986 Appendix C; p11-kit keeps tabs), raw non-ASCII
	 * bytes and other unescaped characters are taken as they are, empty
	 * attributes (";;", a trailing ';') are skipped, a repeated attribute
	 * replaces the earlier one, "type=secretkey" means secret-key, names
	 * from drafts of RFC 7512 that p11-kit still accepts mean their
	 * attribute (object-type and objecttype for type; pin-source,
	 * pinfile and pin-value in the path, pinfile in the query), and a
	 * path attribute whose name the grammar does not allow or a type
	 * that names no class marks the URI as unrecognized instead of
	 * failing: such a URI matches nothing (in the query, such a name is
	 * ignored). Bad percent-encoding, a bad scheme, a bad library-version
	 * or slot-id and an attribute without '=' are still errors; error
	 * offsets count in the text as given.
	 */
	P11GLUE_URI_LENIENT = 1 << 0
};

/* Where and why parsing failed; filled by p11glue_uri_parse() on error. */
typedef struct {
	int result;          /* the p11glue_result returned */
	size_t offset;       /* byte offset in the input where the fault is */
	char detail[128];    /* e.g. "'f.o' is no attribute name"; never a value */
} p11glue_uri_error;

/* A new URI with no attributes ("pkcs11:"). Free with p11glue_uri_free. */
P11GLUE_PUBLIC p11glue_uri *p11glue_uri_new(void);

/* Frees uri (NULL is fine); the pin-value is wiped first. */
P11GLUE_PUBLIC void p11glue_uri_free(p11glue_uri *uri);

/* A deep copy, or NULL when out of memory. */
P11GLUE_PUBLIC p11glue_uri *p11glue_uri_dup(const p11glue_uri *uri);

/*
 * Parses the NUL-terminated text. On success stores a new URI in *uri
 * (the caller frees it) and returns P11GLUE_OK. On failure returns one of
 * the P11GLUE_ERR_URI_* codes (or NOMEM/ARGS), leaves *uri NULL and, when
 * error is not NULL, fills it.
 */
P11GLUE_PUBLIC int p11glue_uri_parse(const char *text, unsigned flags,
                                     p11glue_uri **uri, p11glue_uri_error *error)
	__attribute__((warn_unused_result));

/*
 * The canonical text of uri, NUL-terminated, newly allocated (the caller
 * frees it with free()); NULL when out of memory. A URI marked
 * unrecognized formats without the attributes that were not recognized.
 */
P11GLUE_PUBLIC char *p11glue_uri_format(const p11glue_uri *uri);

/*
 * Sets a standard attribute to len bytes of value (decoded, not
 * percent-encoded). The value is checked as the strict parser checks it:
 * P11GLUE_ERR_URI_VALUE for a value its attribute cannot hold (a type
 * other than the five names, a library-version other than M or M.N with
 * each part 0..255, a slot-id that is not a decimal CK_ULONG); error,
 * when not NULL, then says why. Text values take any bytes, also more
 * than their PKCS#11 field holds (the URI then matches nothing).
 * library-version, slot-id and type are stored in their canonical
 * spelling ("1" becomes "1.0", "007" becomes "7").
 */
P11GLUE_PUBLIC int p11glue_uri_set(p11glue_uri *uri, p11glue_uri_field field,
                                   const void *value, size_t len,
                                   p11glue_uri_error *error);

/* Removes a standard attribute (no effect when it is not set). */
P11GLUE_PUBLIC void p11glue_uri_unset(p11glue_uri *uri, p11glue_uri_field field);

/*
 * Lends the value of a standard attribute: returns NULL when it is not
 * set, else a pointer valid until uri changes, with its length in *len.
 * The bytes are followed by a NUL that is not counted.
 */
P11GLUE_PUBLIC const unsigned char *p11glue_uri_get(const p11glue_uri *uri,
                                                    p11glue_uri_field field,
                                                    size_t *len);

/* The attribute name ("token", "slot-id", ...) of a field, or NULL. */
P11GLUE_PUBLIC const char *p11glue_uri_field_name(p11glue_uri_field field);

/* Typed views of library-version, slot-id and type; false when unset. */
P11GLUE_PUBLIC bool p11glue_uri_get_library_version(const p11glue_uri *uri,
                                                    CK_VERSION *version);
P11GLUE_PUBLIC bool p11glue_uri_get_slot_id(const p11glue_uri *uri,
                                            CK_SLOT_ID *slot_id);
P11GLUE_PUBLIC bool p11glue_uri_get_class(const p11glue_uri *uri,
                                          CK_OBJECT_CLASS *klass);

/*
 * Vendor attributes: a name of letters, digits, '-' and '_' that is no
 * standard attribute of its component. in_query selects the query
 * component; a value of NULL removes the attribute. P11GLUE_ERR_URI_NAME
 * for a name that is not a vendor name.
 */
P11GLUE_PUBLIC int p11glue_uri_set_vendor(p11glue_uri *uri, bool in_query,
                                          const char *name,
                                          const void *value, size_t len);

/* Number of vendor attributes, path and query together. */
P11GLUE_PUBLIC size_t p11glue_uri_vendor_count(const p11glue_uri *uri);

/*
 * The index'th vendor attribute in canonical order (path ones first).
 * Lends name and value, valid until uri changes. false past the end.
 */
P11GLUE_PUBLIC bool p11glue_uri_vendor_get(const p11glue_uri *uri, size_t index,
                                           bool *in_query, const char **name,
                                           const unsigned char **value,
                                           size_t *len);

/* Lends the value of a vendor attribute by name, or NULL. */
P11GLUE_PUBLIC const unsigned char *p11glue_uri_vendor_find(const p11glue_uri *uri,
                                                            bool in_query,
                                                            const char *name,
                                                            size_t *len);

/*
 * True when a and b hold the same standard and vendor attributes with the
 * same values and the same unrecognized mark.
 */
P11GLUE_PUBLIC bool p11glue_uri_equal(const p11glue_uri *a, const p11glue_uri *b);

/* True when lenient parsing met an attribute or value it did not know
 * (vendor attributes it kept do not count). */
P11GLUE_PUBLIC bool p11glue_uri_is_unrecognized(const p11glue_uri *uri);

/*
 * Matching. Each returns true when every attribute of uri that concerns
 * the given structure equals the structure's field (the URI's value
 * followed by the blank padding PKCS#11 puts in fixed-size fields; NUL
 * padding is accepted too; a value longer than the field never matches).
 * Attributes about other things are ignored, so "pkcs11:" matches
 * everything. An unrecognized URI, or one with a vendor path attribute,
 * matches nothing.
 */
P11GLUE_PUBLIC bool p11glue_uri_match_module_info(const p11glue_uri *uri,
                                                  const CK_INFO *info);
P11GLUE_PUBLIC bool p11glue_uri_match_slot_info(const p11glue_uri *uri,
                                                CK_SLOT_ID slot_id,
                                                const CK_SLOT_INFO *info);
P11GLUE_PUBLIC bool p11glue_uri_match_token_info(const p11glue_uri *uri,
                                                 const CK_TOKEN_INFO *info);

/*
 * Matches object, type and id against a template of attribute values (as
 * C_GetAttributeValue fills it). An attribute the URI names that is
 * missing from the template, or whose ulValueLen is
 * CK_UNAVAILABLE_INFORMATION, does not match.
 */
P11GLUE_PUBLIC bool p11glue_uri_match_attributes(const p11glue_uri *uri,
                                                 const CK_ATTRIBUTE *attrs,
                                                 CK_ULONG n_attrs);

/*
 * Matches module-name and module-path: module-name must equal name (the
 * registry name) and module-path must equal path (the module's file
 * name, compared as given). Either may be NULL, which matches only a URI
 * without that attribute.
 */
P11GLUE_PUBLIC bool p11glue_uri_match_module(const p11glue_uri *uri, const char *name,
                                             const char *path);

/*
 * Set the URI's attributes describing a module, slot or token from the
 * PKCS#11 structure (blank padding removed). Return P11GLUE_OK or
 * P11GLUE_ERR_NOMEM.
 */
P11GLUE_PUBLIC int p11glue_uri_set_module_info(p11glue_uri *uri, const CK_INFO *info);
P11GLUE_PUBLIC int p11glue_uri_set_slot_info(p11glue_uri *uri, CK_SLOT_ID slot_id,
                                             const CK_SLOT_INFO *info);
P11GLUE_PUBLIC int p11glue_uri_set_token_info(p11glue_uri *uri, const CK_TOKEN_INFO *info);

/*
 * Fills attrs (room for at least 3) with the object attributes the URI
 * names (CKA_LABEL, CKA_CLASS, CKA_ID), ready for C_FindObjectsInit;
 * returns how many. The values are lent from uri and *klass, which must
 * outlive attrs.
 */
P11GLUE_PUBLIC CK_ULONG p11glue_uri_get_template(const p11glue_uri *uri,
                                                 CK_ATTRIBUTE attrs[3],
                                                 CK_OBJECT_CLASS *klass);

#ifdef __cplusplus
}
#endif

#endif /* P11GLUE_URI_H */
