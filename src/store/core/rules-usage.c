/*
 * Key uses that must not meet on one key (see core.h). A key that can
 * wrap and decrypt gives away every key it can wrap: wrap it, then
 * decrypt the result. One that can unwrap and encrypt takes in a key of a
 * value of the caller's choosing as if it had been wrapped elsewhere. The
 * same holds for a key pair whose public key wraps and whose private key
 * decrypts. PKCS#11 leaves the defaults of these attributes to the token
 * (v3.0 §4.8, "token-specific"), and lets a token refuse a combination
 * (CKR_TEMPLATE_INCONSISTENT) or a change (CKR_ATTRIBUTE_READ_ONLY).
 *
 * A key whose value can be read (CKA_SENSITIVE false) may have both: what
 * it wraps is open to whoever reads it anyway (CKA_WRAP_WITH_TRUSTED is
 * what keeps a key from such wrapping keys), and pkcs11-tool --derive
 * asks for every use on the readable key it derives.
 */
#include "config.h"

#include "core.h"

static const struct {
	CK_ATTRIBUTE_TYPE wrap;      /* a use that moves keys ... */
	CK_ATTRIBUTE_TYPE crypt;     /* ... and the one that must not meet it */
} pairs[] = {
	{ CKA_WRAP, CKA_DECRYPT },
	{ CKA_UNWRAP, CKA_ENCRYPT },
};

/* Whether the caller's template or the mech layer sets type; its value in *on. */
static bool
asked(const pg_attrs *given, const pg_attrs *gen, CK_ATTRIBUTE_TYPE type, bool *on)
{
	const pg_attrs *list = pg_attrs_find(given, type) ? given
	                       : gen != NULL && pg_attrs_find(gen, type) ? gen : NULL;

	if (list == NULL)
		return false;
	*on = pg_attrs_bool(list, type, false);
	return true;
}

/* A use turned off unless asked for: false when out of memory. */
static bool
give_way(const pg_attrs *given, const pg_attrs *gen, CK_ATTRIBUTE_TYPE type, pg_attrs *out)
{
	bool on;

	return asked(given, gen, type, &on) || pg_attrs_set_bool(out, type, false);
}

CK_RV
pg_rules_usage_make(CK_OBJECT_CLASS cls, const pg_attrs *given, const pg_attrs *gen,
                    unsigned flags, pg_attrs *out)
{
	bool allow = (flags & PG_RULES_WRAP_DECRYPT) || !pg_attrs_bool(out, CKA_SENSITIVE, false);
	bool a_on = false, b_on = false, a, b;

	if (cls == CKO_PRIVATE_KEY && (flags & PG_RULES_PAIR_WRAPS)) {
		if (!allow && asked(given, gen, CKA_DECRYPT, &b_on) && b_on)
			return CKR_TEMPLATE_INCONSISTENT;
		return give_way(given, gen, CKA_DECRYPT, out) ? CKR_OK : CKR_HOST_MEMORY;
	}
	if (cls != CKO_SECRET_KEY)
		return CKR_OK;
	for (size_t i = 0; i < PG_N_ELEMENTS(pairs); i++) {
		a = asked(given, gen, pairs[i].wrap, &a_on) && a_on;
		b = asked(given, gen, pairs[i].crypt, &b_on) && b_on;
		if (a && b && !allow)
			return CKR_TEMPLATE_INCONSISTENT;
		/* The default of one use gives way to its partner asked for. */
		if (a && !b && !give_way(given, gen, pairs[i].crypt, out))
			return CKR_HOST_MEMORY;
		if (b && !a && !give_way(given, gen, pairs[i].wrap, out))
			return CKR_HOST_MEMORY;
	}
	return CKR_OK;
}

static bool
turned_on(const pg_attrs *cur, const pg_attrs *out, CK_ATTRIBUTE_TYPE type)
{
	return !pg_attrs_bool(cur, type, false) && pg_attrs_bool(out, type, false);
}

CK_RV
pg_rules_usage_modify(CK_OBJECT_CLASS cls, const pg_attrs *cur, const pg_attrs *out,
                      unsigned flags)
{
	bool pair = false;

	if (cls != CKO_SECRET_KEY || (flags & PG_RULES_WRAP_DECRYPT) ||
	    !pg_attrs_bool(out, CKA_SENSITIVE, false))
		return CKR_OK;
	for (size_t i = 0; i < PG_N_ELEMENTS(pairs); i++) {
		if (turned_on(cur, out, pairs[i].wrap) || turned_on(cur, out, pairs[i].crypt))
			return CKR_ATTRIBUTE_READ_ONLY;
		pair = pair || (pg_attrs_bool(out, pairs[i].wrap, false) &&
		                pg_attrs_bool(out, pairs[i].crypt, false));
	}
	/* A readable key with both becomes sensitive only with the policy. */
	return pair && turned_on(cur, out, CKA_SENSITIVE) ? CKR_ATTRIBUTE_READ_ONLY : CKR_OK;
}

bool
pg_rules_template_true(const CK_ATTRIBUTE *tmpl, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; tmpl != NULL && i < n; i++) {
		if (tmpl[i].type == type && tmpl[i].pValue != NULL &&
		    tmpl[i].ulValueLen == sizeof(CK_BBOOL) && *(const CK_BBOOL *)tmpl[i].pValue)
			return true;
	}
	return false;
}
