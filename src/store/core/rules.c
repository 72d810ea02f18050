/*
 * The per-class attribute rules of PKCS#11 3.0 (base specification §4:
 * storage, data, certificate and key objects; mechanisms specification
 * for the RSA, EC, Edwards/Montgomery and secret key types), as tables.
 *
 * Flags follow the specification's footnotes to the attribute tables:
 * R_REQ (1: must be given to C_CreateObject), R_NOCREATE (2), R_NOGEN (4),
 * R_NOUNWRAP (6), R_SENSITIVE (7: cannot be revealed when CKA_SENSITIVE
 * or not CKA_EXTRACTABLE), R_MODIFY (8), R_SO_TRUE (10), R_ONCE_TRUE
 * (11), R_ONCE_FALSE (12). R_COPY: may change in C_CopyObject only
 * (§5.7: CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE ...). R_COMPUTED: the
 * token computes it; a template may give it if it agrees. R_SEAL: sealed
 * at rest on any object (secret key material).
 */
#include "config.h"

#include "core.h"

#include <string.h>

enum { K_BYTES, K_BOOL, K_ULONG, K_DATE, K_MECHS, K_TEMPLATE };
enum { D_NONE, D_EMPTY, D_FALSE, D_TRUE, D_ULONG };

#define R_REQ        0x0001u
#define R_NOCREATE   0x0002u
#define R_NOGEN      0x0004u
#define R_NOUNWRAP   0x0008u
#define R_SENSITIVE  0x0010u
#define R_MODIFY     0x0020u
#define R_SO_TRUE    0x0040u
#define R_ONCE_TRUE  0x0080u
#define R_ONCE_FALSE 0x0100u
#define R_COPY       0x0200u
#define R_COMPUTED   0x0400u
#define R_SEAL       0x0800u
#define R_BY_TOKEN   (R_NOCREATE | R_NOGEN | R_NOUNWRAP)
#define R_KEY_VALUE  (R_NOGEN | R_NOUNWRAP)
#define R_SECRET     (R_KEY_VALUE | R_SENSITIVE | R_SEAL)

typedef struct {
	CK_ATTRIBUTE_TYPE type;
	unsigned char kind;
	unsigned char dflt;
	unsigned short flags;
	CK_ULONG dval;
} rule;

#define END { 0, 0, 0, 0, 0 }
#define BOOL(t, f, d) { t, K_BOOL, d, f, 0 }
#define BYTES(t, f, d) { t, K_BYTES, d, f, 0 }
#define ULONG(t, f, d, v) { t, K_ULONG, d, f, v }

static const rule storage_rules[] = {
	ULONG(CKA_CLASS, R_REQ, D_NONE, 0),
	BOOL(CKA_TOKEN, R_COPY, D_FALSE),
	BOOL(CKA_PRIVATE, R_COPY, D_NONE),        /* default per class, below */
	BOOL(CKA_MODIFIABLE, R_COPY, D_TRUE),
	BYTES(CKA_LABEL, R_MODIFY, D_EMPTY),
	BOOL(CKA_COPYABLE, R_MODIFY | R_ONCE_FALSE, D_TRUE),
	BOOL(CKA_DESTROYABLE, R_COPY, D_TRUE),
	BYTES(CKA_UNIQUE_ID, R_BY_TOKEN, D_NONE), /* made by entry.c when asked */
	END
};

static const rule data_rules[] = {
	BYTES(CKA_APPLICATION, R_MODIFY, D_EMPTY),
	BYTES(CKA_OBJECT_ID, R_MODIFY, D_EMPTY),
	BYTES(CKA_VALUE, R_MODIFY, D_EMPTY),
	END
};

static const rule x509_rules[] = {
	ULONG(CKA_CERTIFICATE_TYPE, R_REQ, D_NONE, 0),
	BOOL(CKA_TRUSTED, R_SO_TRUE | R_MODIFY, D_FALSE),
	ULONG(CKA_CERTIFICATE_CATEGORY, 0, D_ULONG, CK_CERTIFICATE_CATEGORY_UNSPECIFIED),
	BYTES(CKA_CHECK_VALUE, R_COMPUTED, D_NONE),
	{ CKA_START_DATE, K_DATE, D_EMPTY, 0, 0 },
	{ CKA_END_DATE, K_DATE, D_EMPTY, 0, 0 },
	BYTES(CKA_PUBLIC_KEY_INFO, 0, D_EMPTY),
	BYTES(CKA_SUBJECT, R_REQ, D_NONE),
	BYTES(CKA_ID, R_MODIFY, D_EMPTY),
	BYTES(CKA_ISSUER, R_MODIFY, D_EMPTY),
	BYTES(CKA_SERIAL_NUMBER, R_MODIFY, D_EMPTY),
	BYTES(CKA_VALUE, 0, D_EMPTY),
	BYTES(CKA_URL, 0, D_EMPTY),
	BYTES(CKA_HASH_OF_SUBJECT_PUBLIC_KEY, 0, D_EMPTY),
	BYTES(CKA_HASH_OF_ISSUER_PUBLIC_KEY, 0, D_EMPTY),
	ULONG(CKA_JAVA_MIDP_SECURITY_DOMAIN, 0, D_ULONG, CK_SECURITY_DOMAIN_UNSPECIFIED),
	ULONG(CKA_NAME_HASH_ALGORITHM, 0, D_ULONG, CKM_SHA_1),
	END
};

static const rule key_rules[] = {
	ULONG(CKA_KEY_TYPE, R_REQ, D_NONE, 0),
	BYTES(CKA_ID, R_MODIFY, D_EMPTY),
	{ CKA_START_DATE, K_DATE, D_EMPTY, R_MODIFY, 0 },
	{ CKA_END_DATE, K_DATE, D_EMPTY, R_MODIFY, 0 },
	BOOL(CKA_DERIVE, R_MODIFY, D_FALSE),
	BOOL(CKA_LOCAL, R_BY_TOKEN, D_FALSE),
	ULONG(CKA_KEY_GEN_MECHANISM, R_BY_TOKEN, D_ULONG, CK_UNAVAILABLE_INFORMATION),
	{ CKA_ALLOWED_MECHANISMS, K_MECHS, D_EMPTY, 0, 0 },
	END
};

static const rule public_rules[] = {
	BYTES(CKA_SUBJECT, R_MODIFY, D_EMPTY),
	BOOL(CKA_ENCRYPT, R_MODIFY, D_TRUE),
	BOOL(CKA_VERIFY, R_MODIFY, D_TRUE),
	BOOL(CKA_VERIFY_RECOVER, R_MODIFY, D_TRUE),
	BOOL(CKA_WRAP, R_MODIFY, D_FALSE),             /* rules-usage.c */
	BOOL(CKA_TRUSTED, R_SO_TRUE | R_MODIFY, D_FALSE),
	{ CKA_WRAP_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	BYTES(CKA_PUBLIC_KEY_INFO, R_MODIFY, D_EMPTY),
	END
};

static const rule private_rules[] = {
	BYTES(CKA_SUBJECT, R_MODIFY, D_EMPTY),
	BOOL(CKA_SENSITIVE, R_MODIFY | R_ONCE_TRUE, D_TRUE),
	BOOL(CKA_DECRYPT, R_MODIFY, D_TRUE),
	BOOL(CKA_SIGN, R_MODIFY, D_TRUE),
	BOOL(CKA_SIGN_RECOVER, R_MODIFY, D_TRUE),
	BOOL(CKA_UNWRAP, R_MODIFY, D_TRUE),
	BOOL(CKA_EXTRACTABLE, R_MODIFY | R_ONCE_FALSE, D_FALSE),
	BOOL(CKA_ALWAYS_SENSITIVE, R_BY_TOKEN, D_FALSE),
	BOOL(CKA_NEVER_EXTRACTABLE, R_BY_TOKEN, D_FALSE),
	BOOL(CKA_WRAP_WITH_TRUSTED, R_MODIFY | R_ONCE_TRUE, D_FALSE),
	{ CKA_UNWRAP_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	{ CKA_DERIVE_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	BOOL(CKA_ALWAYS_AUTHENTICATE, 0, D_FALSE),
	BYTES(CKA_PUBLIC_KEY_INFO, R_MODIFY, D_EMPTY),
	END
};

static const rule secret_rules[] = {
	BOOL(CKA_SENSITIVE, R_MODIFY | R_ONCE_TRUE, D_TRUE),
	BOOL(CKA_ENCRYPT, R_MODIFY, D_TRUE),
	BOOL(CKA_DECRYPT, R_MODIFY, D_TRUE),
	BOOL(CKA_SIGN, R_MODIFY, D_TRUE),
	BOOL(CKA_VERIFY, R_MODIFY, D_TRUE),
	BOOL(CKA_WRAP, R_MODIFY, D_FALSE),             /* rules-usage.c */
	BOOL(CKA_UNWRAP, R_MODIFY, D_FALSE),
	BOOL(CKA_EXTRACTABLE, R_MODIFY | R_ONCE_FALSE, D_TRUE),
	BOOL(CKA_ALWAYS_SENSITIVE, R_BY_TOKEN, D_FALSE),
	BOOL(CKA_NEVER_EXTRACTABLE, R_BY_TOKEN, D_FALSE),
	BYTES(CKA_CHECK_VALUE, R_COMPUTED, D_NONE),
	BOOL(CKA_WRAP_WITH_TRUSTED, R_MODIFY | R_ONCE_TRUE, D_FALSE),
	BOOL(CKA_TRUSTED, R_SO_TRUE | R_MODIFY, D_FALSE),
	{ CKA_WRAP_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	{ CKA_UNWRAP_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	{ CKA_DERIVE_TEMPLATE, K_TEMPLATE, D_EMPTY, 0, 0 },
	BYTES(CKA_VALUE, R_REQ | R_SECRET, D_NONE),
	ULONG(CKA_VALUE_LEN, R_COMPUTED, D_NONE, 0),
	END
};

static const rule rsa_public_rules[] = {
	BYTES(CKA_MODULUS, R_REQ | R_NOGEN, D_NONE),
	ULONG(CKA_MODULUS_BITS, R_COMPUTED, D_NONE, 0),
	BYTES(CKA_PUBLIC_EXPONENT, R_REQ, D_NONE),
	END
};

static const rule rsa_private_rules[] = {
	BYTES(CKA_MODULUS, R_REQ | R_KEY_VALUE, D_NONE),
	BYTES(CKA_PUBLIC_EXPONENT, R_KEY_VALUE, D_EMPTY),
	BYTES(CKA_PRIVATE_EXPONENT, R_REQ | R_SECRET, D_NONE),
	BYTES(CKA_PRIME_1, R_SECRET, D_EMPTY),
	BYTES(CKA_PRIME_2, R_SECRET, D_EMPTY),
	BYTES(CKA_EXPONENT_1, R_SECRET, D_EMPTY),
	BYTES(CKA_EXPONENT_2, R_SECRET, D_EMPTY),
	BYTES(CKA_COEFFICIENT, R_SECRET, D_EMPTY),
	END
};

static const rule ec_public_rules[] = {
	BYTES(CKA_EC_PARAMS, R_REQ, D_NONE),
	BYTES(CKA_EC_POINT, R_REQ | R_NOGEN, D_NONE),
	END
};

static const rule ec_private_rules[] = {
	BYTES(CKA_EC_PARAMS, R_REQ | R_KEY_VALUE, D_NONE),
	BYTES(CKA_VALUE, R_REQ | R_SECRET, D_NONE),
	END
};

/* Attributes of classes and types we do not know, and vendor ones. */
static const rule vendor_rule = BYTES(0, R_MODIFY, D_NONE);

static const CK_KEY_TYPE secret_types[] = {
	CKK_GENERIC_SECRET, CKK_AES, CKK_SHA_1_HMAC, CKK_SHA224_HMAC, CKK_SHA256_HMAC,
	CKK_SHA384_HMAC, CKK_SHA512_HMAC, CKK_SHA3_224_HMAC, CKK_SHA3_256_HMAC,
	CKK_SHA3_384_HMAC, CKK_SHA3_512_HMAC, CKK_CHACHA20, CKK_HKDF,
};

#define MAX_GROUPS 4

typedef struct {
	const rule *groups[MAX_GROUPS];
	bool vendor;                 /* a vendor class: free-form attributes */
	CK_OBJECT_CLASS cls;
	CK_ULONG subtype;            /* key or certificate type */
} ruleset;

/* The rules of a class: CKR_OK, or CKR_ATTRIBUTE_VALUE_INVALID (unsupported). */
static CK_RV
ruleset_for(CK_OBJECT_CLASS cls, CK_ULONG subtype, ruleset *rs)
{
	bool asym = subtype == CKK_RSA || subtype == CKK_EC || subtype == CKK_EC_EDWARDS ||
	            subtype == CKK_EC_MONTGOMERY;

	memset(rs, 0, sizeof(*rs));
	rs->cls = cls;
	rs->subtype = subtype;
	rs->groups[0] = storage_rules;
	switch (cls) {
	case CKO_DATA:
		rs->groups[1] = data_rules;
		return CKR_OK;
	case CKO_CERTIFICATE:
		if (subtype != CKC_X_509)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		rs->groups[1] = x509_rules;
		return CKR_OK;
	case CKO_PUBLIC_KEY:
	case CKO_PRIVATE_KEY:
		if (!asym)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		rs->groups[1] = key_rules;
		rs->groups[2] = cls == CKO_PUBLIC_KEY ? public_rules : private_rules;
		if (subtype == CKK_RSA)
			rs->groups[3] = cls == CKO_PUBLIC_KEY ? rsa_public_rules : rsa_private_rules;
		else
			rs->groups[3] = cls == CKO_PUBLIC_KEY ? ec_public_rules : ec_private_rules;
		return CKR_OK;
	case CKO_SECRET_KEY:
		if (!pg_ulong_listed(secret_types, PG_N_ELEMENTS(secret_types), subtype))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		rs->groups[1] = key_rules;
		rs->groups[2] = secret_rules;
		return CKR_OK;
	default:
		if (cls < CKO_VENDOR_DEFINED)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		rs->vendor = true;
		return CKR_OK;
	}
}

static const rule *
rule_find(const ruleset *rs, CK_ATTRIBUTE_TYPE type)
{
	for (size_t g = 0; g < MAX_GROUPS && rs->groups[g]; g++) {
		for (const rule *r = rs->groups[g]; r->type || r->kind || r->flags; r++) {
			if (r->type == type)
				return r;
		}
	}
	if (rs->vendor || type >= CKA_VENDOR_DEFINED)
		return &vendor_rule;
	return NULL;
}

/* The class and subtype of an attribute list (CK_UNAVAILABLE_INFORMATION if none). */
static void
class_of(const pg_attrs *attrs, CK_OBJECT_CLASS *cls, CK_ULONG *subtype)
{
	*cls = pg_attrs_ulong(attrs, CKA_CLASS, CK_UNAVAILABLE_INFORMATION);
	if (*cls == CKO_CERTIFICATE)
		*subtype = pg_attrs_ulong(attrs, CKA_CERTIFICATE_TYPE, CK_UNAVAILABLE_INFORMATION);
	else
		*subtype = pg_attrs_ulong(attrs, CKA_KEY_TYPE, CK_UNAVAILABLE_INFORMATION);
}

static bool
ruleset_of(const pg_attrs *attrs, ruleset *rs)
{
	CK_OBJECT_CLASS cls;
	CK_ULONG subtype;

	class_of(attrs, &cls, &subtype);
	return ruleset_for(cls, subtype, rs) == CKR_OK;
}

bool
pg_rules_is_template(CK_ATTRIBUTE_TYPE type)
{
	return type == CKA_WRAP_TEMPLATE || type == CKA_UNWRAP_TEMPLATE ||
	       type == CKA_DERIVE_TEMPLATE;
}

bool
pg_rules_readable(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type)
{
	ruleset rs;
	const rule *r;

	if (!ruleset_of(attrs, &rs))
		return true;
	r = rule_find(&rs, type);
	if (r == NULL || !(r->flags & R_SENSITIVE))
		return true;
	return !pg_attrs_bool(attrs, CKA_SENSITIVE, true) &&
	       pg_attrs_bool(attrs, CKA_EXTRACTABLE, false);
}

bool
pg_rules_sealed(const pg_attrs *attrs, CK_ATTRIBUTE_TYPE type)
{
	ruleset rs;
	const rule *r;

	if (pg_attrs_bool(attrs, CKA_PRIVATE, false))
		return type != CKA_CLASS && type != CKA_PRIVATE && type != CKA_TOKEN &&
		       type != CKA_UNIQUE_ID;
	if (!ruleset_of(attrs, &rs))
		return false;
	r = rule_find(&rs, type);
	return r != NULL && (r->flags & R_SEAL);
}

static bool
date_valid(const CK_ATTRIBUTE *a)
{
	const unsigned char *p = a->pValue;

	if (a->ulValueLen == 0)
		return true;
	if (a->ulValueLen != sizeof(CK_DATE))
		return false;
	for (size_t i = 0; i < sizeof(CK_DATE); i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
	}
	return true;
}

/*
 * Checks a caller's value for a rule and stores it normalised in out
 * (booleans as 0/1, attribute arrays encoded).
 */
static CK_RV
value_put(const rule *r, const CK_ATTRIBUTE *a, pg_attrs *out)
{
	pg_buf enc;
	CK_RV rv;

	if (a->ulValueLen > 0 && a->pValue == NULL)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (a->ulValueLen == CK_UNAVAILABLE_INFORMATION)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	switch (r->kind) {
	case K_BOOL:
		if (a->ulValueLen != sizeof(CK_BBOOL))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		return pg_attrs_set_bool(out, a->type, *(const CK_BBOOL *)a->pValue != CK_FALSE)
		       ? CKR_OK : CKR_HOST_MEMORY;
	case K_ULONG:
		if (a->ulValueLen != sizeof(CK_ULONG))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		break;
	case K_DATE:
		if (!date_valid(a))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		break;
	case K_MECHS:
		if (a->ulValueLen % sizeof(CK_MECHANISM_TYPE) != 0)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		break;
	case K_TEMPLATE:
		if (a->ulValueLen % sizeof(CK_ATTRIBUTE) != 0)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		pg_buf_init(&enc);
		rv = pg_template_encode(a->pValue, a->ulValueLen / sizeof(CK_ATTRIBUTE), &enc);
		if (rv == CKR_OK && !pg_attrs_set(out, a->type, enc.data, enc.len))
			rv = CKR_HOST_MEMORY;
		pg_buf_clear(&enc);
		return rv;
	default:
		break;
	}
	return pg_attrs_set(out, a->type, a->pValue, a->ulValueLen) ? CKR_OK : CKR_HOST_MEMORY;
}

static bool
same_value(const CK_ATTRIBUTE *a, const CK_ATTRIBUTE *b)
{
	return a->ulValueLen == b->ulValueLen &&
	       (a->ulValueLen == 0 || memcmp(a->pValue, b->pValue, a->ulValueLen) == 0);
}

/* CKA_CLASS / type from the template or generated values. */
static CK_RV
ulong_given(const CK_ATTRIBUTE *tmpl, CK_ULONG n, const pg_attrs *gen, CK_ATTRIBUTE_TYPE type,
            CK_ULONG *value)
{
	bool have = false;

	for (CK_ULONG i = 0; i < n; i++) {
		CK_ULONG v;
		if (tmpl[i].type != type)
			continue;
		if (tmpl[i].ulValueLen != sizeof(CK_ULONG) || tmpl[i].pValue == NULL)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		memcpy(&v, tmpl[i].pValue, sizeof(v));
		if (have && v != *value)
			return CKR_TEMPLATE_INCONSISTENT;
		*value = v;
		have = true;
	}
	if (gen != NULL && pg_attrs_find(gen, type) != NULL) {
		CK_ULONG v = pg_attrs_ulong(gen, type, CK_UNAVAILABLE_INFORMATION);
		if (have && v != *value)
			return CKR_TEMPLATE_INCONSISTENT;
		*value = v;
		have = true;
	}
	return have ? CKR_OK : CKR_TEMPLATE_INCOMPLETE;
}


/* ---------------------------------------------------------------------------
 * Making and modifying objects.
 */

static unsigned
forbidden_for(pg_make_kind kind)
{
	switch (kind) {
	case PG_MAKE_CREATE:
		return R_NOCREATE;
	case PG_MAKE_GENERATE:
		return R_NOGEN;
	default:
		return R_NOUNWRAP;
	}
}

/* A caller's value, checked against its rule, into list (a repeated
 * attribute must repeat the same value). */
static CK_RV
given_put(const ruleset *rs, const CK_ATTRIBUTE *a, unsigned forbidden, unsigned flags,
          pg_attrs *list)
{
	const rule *r = rule_find(rs, a->type);
	const CK_ATTRIBUTE *prev;
	pg_attrs one = { 0 };
	CK_RV rv;

	if (r == NULL)
		return CKR_ATTRIBUTE_TYPE_INVALID;
	if (r->flags & forbidden)
		return CKR_ATTRIBUTE_READ_ONLY;
	rv = value_put(r, a, &one);
	if (rv != CKR_OK)
		goto out;
	if ((r->flags & R_SO_TRUE) && !(flags & PG_RULES_SO) && pg_attrs_bool(&one, a->type, false)) {
		rv = CKR_ATTRIBUTE_READ_ONLY;
		goto out;
	}
	prev = pg_attrs_find(list, a->type);
	if (prev != NULL) {
		rv = same_value(prev, &one.items[0]) ? CKR_OK : CKR_TEMPLATE_INCONSISTENT;
		goto out;
	}
	if (!pg_attrs_set(list, a->type, one.items[0].pValue, one.items[0].ulValueLen))
		rv = CKR_HOST_MEMORY;
out:
	pg_attrs_clear(&one);
	return rv;
}

/* The default of a rule into out; false when out of memory. */
static bool
default_put(const ruleset *rs, const rule *r, pg_attrs *out)
{
	switch (r->dflt) {
	case D_EMPTY:
		return pg_attrs_set(out, r->type, NULL, 0);
	case D_FALSE:
		return pg_attrs_set_bool(out, r->type, false);
	case D_TRUE:
		return pg_attrs_set_bool(out, r->type, true);
	case D_ULONG:
		return pg_attrs_set_ulong(out, r->type, r->dval);
	default:
		if (r->type == CKA_PRIVATE)
			return pg_attrs_set_bool(out, r->type,
			                         rs->cls == CKO_PRIVATE_KEY || rs->cls == CKO_SECRET_KEY);
		return true;
	}
}

static CK_RV
merge(const ruleset *rs, const pg_attrs *given, const pg_attrs *gen, pg_attrs *out)
{
	const pg_attrs *lists[2] = { given, gen };

	for (size_t g = 0; g < MAX_GROUPS && rs->groups[g]; g++) {
		for (const rule *r = rs->groups[g]; r->type || r->kind || r->flags; r++) {
			const CK_ATTRIBUTE *t = pg_attrs_find(given, r->type);
			const CK_ATTRIBUTE *m = gen ? pg_attrs_find(gen, r->type) : NULL;
			const CK_ATTRIBUTE *v = m ? m : t;

			if (t != NULL && m != NULL && !same_value(t, m))
				return CKR_TEMPLATE_INCONSISTENT;
			if (v == NULL && (r->flags & R_REQ))
				return CKR_TEMPLATE_INCOMPLETE;
			if (v != NULL ? !pg_attrs_set(out, r->type, v->pValue, v->ulValueLen)
			              : !default_put(rs, r, out))
				return CKR_HOST_MEMORY;
		}
	}
	/* Vendor attributes and anything else the mech layer added. */
	for (size_t l = 0; l < 2; l++) {
		for (CK_ULONG i = 0; lists[l] && i < lists[l]->n; i++) {
			const CK_ATTRIBUTE *a = &lists[l]->items[i];
			const rule *r = rule_find(rs, a->type);
			if (r != NULL && r != &vendor_rule)
				continue;
			if (!pg_attrs_set(out, a->type, a->pValue, a->ulValueLen))
				return CKR_HOST_MEMORY;
		}
	}
	return CKR_OK;
}

/* A computed attribute: set it, or check the caller's value against it. */
static CK_RV
computed_put(pg_attrs *out, CK_ATTRIBUTE_TYPE type, const void *value, CK_ULONG len,
             CK_RV mismatch)
{
	const CK_ATTRIBUTE *have = pg_attrs_find(out, type);

	if (have != NULL) {
		if (type == CKA_CHECK_VALUE && have->ulValueLen == 0)
			return CKR_OK;   /* an empty check value asks for none */
		return have->ulValueLen == len && memcmp(have->pValue, value, len) == 0 ? CKR_OK : mismatch;
	}
	return pg_attrs_set(out, type, value, len) ? CKR_OK : CKR_HOST_MEMORY;
}

static CK_RV
secret_finish(const ruleset *rs, pg_attrs *out)
{
	const CK_ATTRIBUTE *value = pg_attrs_find(out, CKA_VALUE);
	unsigned char cv[3];
	CK_ULONG len;
	CK_RV rv;

	if (value == NULL || value->ulValueLen == 0)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	len = value->ulValueLen;
	if (rs->subtype == CKK_AES && len != 16 && len != 24 && len != 32)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	rv = computed_put(out, CKA_VALUE_LEN, &len, sizeof(len), CKR_TEMPLATE_INCONSISTENT);
	if (rv != CKR_OK)
		return rv;
	if (!pg_rules_check_value(rs->cls, rs->subtype, value, cv))
		return pg_attrs_find(out, CKA_CHECK_VALUE) ? CKR_OK
		       : (pg_attrs_set(out, CKA_CHECK_VALUE, NULL, 0) ? CKR_OK : CKR_HOST_MEMORY);
	rv = computed_put(out, CKA_CHECK_VALUE, cv, sizeof(cv), CKR_ATTRIBUTE_VALUE_INVALID);
	pg_memzero(cv, sizeof(cv));
	return rv;
}

/* CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE (see store.h). */
static CK_RV
history_finish(pg_make_kind kind, const pg_attrs *gen, pg_attrs *out)
{
	bool sensitive = pg_attrs_bool(out, CKA_SENSITIVE, false);
	bool extractable = pg_attrs_bool(out, CKA_EXTRACTABLE, true);
	bool local = kind == PG_MAKE_GENERATE;
	bool always = gen ? pg_attrs_bool(gen, CKA_ALWAYS_SENSITIVE, local) : false;
	bool never = gen ? pg_attrs_bool(gen, CKA_NEVER_EXTRACTABLE, local) : false;

	if (!pg_attrs_set_bool(out, CKA_ALWAYS_SENSITIVE, always && sensitive) ||
	    !pg_attrs_set_bool(out, CKA_NEVER_EXTRACTABLE, never && !extractable))
		return CKR_HOST_MEMORY;
	return CKR_OK;
}

static CK_RV
finish(const ruleset *rs, pg_make_kind kind, const pg_attrs *gen, pg_attrs *out)
{
	const CK_ATTRIBUTE *a;
	unsigned char cv[3];
	CK_ULONG bits;
	CK_RV rv = CKR_OK;

	switch (rs->cls) {
	case CKO_CERTIFICATE:
		a = pg_attrs_find(out, CKA_VALUE);
		if ((a == NULL || a->ulValueLen == 0) && pg_attrs_find(out, CKA_URL)->ulValueLen == 0)
			return CKR_TEMPLATE_INCOMPLETE;
		if (pg_rules_check_value(rs->cls, rs->subtype, a, cv))
			return computed_put(out, CKA_CHECK_VALUE, cv, sizeof(cv), CKR_ATTRIBUTE_VALUE_INVALID);
		return pg_attrs_find(out, CKA_CHECK_VALUE) || pg_attrs_set(out, CKA_CHECK_VALUE, NULL, 0)
		       ? CKR_OK : CKR_HOST_MEMORY;
	case CKO_PUBLIC_KEY:
		if (rs->subtype != CKK_RSA)
			return CKR_OK;
		a = pg_attrs_find(out, CKA_MODULUS);
		if (a == NULL || a->ulValueLen == 0)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		bits = pg_rules_bits(a);
		return computed_put(out, CKA_MODULUS_BITS, &bits, sizeof(bits), CKR_TEMPLATE_INCONSISTENT);
	case CKO_SECRET_KEY:
		rv = secret_finish(rs, out);
		/* fall through */
	case CKO_PRIVATE_KEY:
		return rv != CKR_OK ? rv : history_finish(kind, gen, out);
	default:
		return CKR_OK;
	}
}

CK_RV
pg_rules_make(const CK_ATTRIBUTE *tmpl, CK_ULONG n, const pg_attrs *gen, unsigned flags,
              pg_attrs *out)
{
	pg_make_kind kind = PG_MAKE_CREATE;
	CK_OBJECT_CLASS cls = 0;
	CK_ULONG subtype = CK_UNAVAILABLE_INFORMATION;
	pg_attrs given = { 0 };
	ruleset rs;
	CK_RV rv;

	pg_attrs_clear(out);
	if (n > 0 && tmpl == NULL)
		return CKR_ARGUMENTS_BAD;
	if (gen != NULL)
		kind = pg_attrs_bool(gen, CKA_LOCAL, false) ? PG_MAKE_GENERATE : PG_MAKE_OTHER;
	rv = ulong_given(tmpl, n, gen, CKA_CLASS, &cls);
	if (rv != CKR_OK)
		return rv;
	if (cls == CKO_CERTIFICATE)
		rv = ulong_given(tmpl, n, gen, CKA_CERTIFICATE_TYPE, &subtype);
	else if (cls == CKO_PUBLIC_KEY || cls == CKO_PRIVATE_KEY || cls == CKO_SECRET_KEY)
		rv = ulong_given(tmpl, n, gen, CKA_KEY_TYPE, &subtype);
	if (rv != CKR_OK)
		return rv;
	rv = ruleset_for(cls, subtype, &rs);
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++)
		rv = given_put(&rs, &tmpl[i], forbidden_for(kind), flags, &given);
	if (rv == CKR_OK && cls == CKO_CERTIFICATE)
		rv = pg_rules_x509_complete(&given);
	if (rv == CKR_OK)
		rv = merge(&rs, &given, gen, out);
	if (rv == CKR_OK)
		rv = pg_rules_usage_make(cls, &given, gen, flags, out);
	if (rv == CKR_OK)
		rv = finish(&rs, kind, gen, out);
	pg_attrs_clear(&given);
	if (rv != CKR_OK)
		pg_attrs_clear(out);
	return rv;
}

static CK_RV
modify_one(const ruleset *rs, const pg_attrs *cur, const CK_ATTRIBUTE *a, bool copy,
           unsigned flags, pg_attrs *out)
{
	const rule *r = rule_find(rs, a->type);
	const CK_ATTRIBUTE *old = pg_attrs_find(cur, a->type);
	pg_attrs one = { 0 };
	bool was, now;
	CK_RV rv;

	if (r == NULL || (old == NULL && r != &vendor_rule))
		return CKR_ATTRIBUTE_TYPE_INVALID;
	rv = value_put(r, a, &one);
	if (rv != CKR_OK || (old != NULL && same_value(old, &one.items[0])))
		goto out;
	rv = CKR_ATTRIBUTE_READ_ONLY;
	if (!(r->flags & R_MODIFY) && !(copy && (r->flags & R_COPY)))
		goto out;
	was = old != NULL && pg_attrs_bool(cur, a->type, false);
	now = pg_attrs_bool(&one, a->type, false);
	if ((r->flags & R_ONCE_TRUE) && was && !now)
		goto out;
	if ((r->flags & R_ONCE_FALSE) && !was && now)
		goto out;
	if ((r->flags & R_SO_TRUE) && now && !(flags & PG_RULES_SO))
		goto out;
	rv = pg_attrs_set(out, a->type, one.items[0].pValue, one.items[0].ulValueLen)
	     ? CKR_OK : CKR_HOST_MEMORY;
out:
	pg_attrs_clear(&one);
	return rv;
}

CK_RV
pg_rules_modify(const pg_attrs *cur, const CK_ATTRIBUTE *tmpl, CK_ULONG n, bool copy,
                unsigned flags, pg_attrs *out)
{
	ruleset rs;
	CK_RV rv = CKR_OK;

	pg_attrs_clear(out);
	if (n > 0 && tmpl == NULL)
		return CKR_ARGUMENTS_BAD;
	if (!ruleset_of(cur, &rs))
		return CKR_GENERAL_ERROR;
	if (!pg_attrs_copy(out, cur))
		return CKR_HOST_MEMORY;
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
		if (tmpl[i].type == CKA_UNIQUE_ID)
			rv = CKR_ATTRIBUTE_READ_ONLY;
		else
			rv = modify_one(&rs, cur, &tmpl[i], copy, flags, out);
	}
	if (rv == CKR_OK)
		rv = pg_rules_usage_modify(rs.cls, cur, out, flags);
	if (rv != CKR_OK)
		pg_attrs_clear(out);
	return rv;
}
