/*
 * The persistence format's names: an attribute is named by its constant
 * without "CKA_", in lower case with '-' for '_' (two exceptions below),
 * and constant values likewise by tables per attribute. These are the
 * spellings files written by p11-kit's trust module carry.
 */
#include "nicks.h"

#include <p11glue/pkcs11x.h>

#include "common.h"

#include <stdlib.h>
#include <string.h>

enum { T_NONE, T_CLASS, T_TRUST, T_CERT, T_ASSERT, T_CATEGORY, T_KEY };

typedef struct {
	CK_ATTRIBUTE_TYPE type;
	const char *name;
	unsigned char forms;
	unsigned char table;
} attr_nick;

#define B PG_FORM_BOOL
#define U PG_FORM_ULONG
#define C PG_FORM_CONST

/* Ascending by type (tests/trust/test-attrs.c checks the order). */
static const attr_nick attrs[] = {
	{ CKA_CLASS, "class", C | U, T_CLASS },
	{ CKA_TOKEN, "token", B, 0 },
	{ CKA_PRIVATE, "private", B, 0 },
	{ CKA_LABEL, "label", 0, 0 },
	{ CKA_APPLICATION, "application", 0, 0 },
	{ CKA_VALUE, "value", 0, 0 },
	{ CKA_OBJECT_ID, "object-id", PG_FORM_OID, 0 },
	{ CKA_CERTIFICATE_TYPE, "certificate-type", C | U, T_CERT },
	{ CKA_ISSUER, "issuer", 0, 0 },
	{ CKA_SERIAL_NUMBER, "serial-number", 0, 0 },
	{ CKA_AC_ISSUER, "ac-issuer", 0, 0 },
	{ CKA_OWNER, "owner", 0, 0 },
	{ CKA_ATTR_TYPES, "attr-types", 0, 0 },
	{ CKA_TRUSTED, "trusted", B, 0 },
	{ CKA_CERTIFICATE_CATEGORY, "certificate-category", C | U, T_CATEGORY },
	{ CKA_JAVA_MIDP_SECURITY_DOMAIN, "java-midp-security-domain", U, 0 },
	{ CKA_URL, "url", 0, 0 },
	{ CKA_HASH_OF_SUBJECT_PUBLIC_KEY, "hash-of-subject-public-key", 0, 0 },
	{ CKA_HASH_OF_ISSUER_PUBLIC_KEY, "hash-of-issuer-public-key", 0, 0 },
	{ CKA_CHECK_VALUE, "check-value", 0, 0 },
	{ CKA_KEY_TYPE, "key-type", C | U, T_KEY },
	{ CKA_SUBJECT, "subject", 0, 0 },
	{ CKA_ID, "id", 0, 0 },
	{ CKA_SENSITIVE, "sensitive", B, 0 },
	{ CKA_ENCRYPT, "encrypt", B, 0 },
	{ CKA_DECRYPT, "decrypt", B, 0 },
	{ CKA_WRAP, "wrap", B, 0 },
	{ CKA_UNWRAP, "unwrap", B, 0 },
	{ CKA_SIGN, "sign", B, 0 },
	{ CKA_SIGN_RECOVER, "sign-recover", B, 0 },
	{ CKA_VERIFY, "verify", B, 0 },
	/* The one name that does not follow the rule. */
	{ CKA_VERIFY_RECOVER, "recover", B, 0 },
	{ CKA_DERIVE, "derive", B, 0 },
	{ CKA_START_DATE, "start-date", 0, 0 },
	{ CKA_END_DATE, "end-date", 0, 0 },
	{ CKA_MODULUS, "modulus", 0, 0 },
	{ CKA_MODULUS_BITS, "modulus-bits", U, 0 },
	{ CKA_PUBLIC_EXPONENT, "public-exponent", 0, 0 },
	{ CKA_PRIVATE_EXPONENT, "private-exponent", 0, 0 },
	{ CKA_PRIME_1, "prime-1", 0, 0 },
	{ CKA_PRIME_2, "prime-2", 0, 0 },
	{ CKA_EXPONENT_1, "exponent-1", 0, 0 },
	{ CKA_EXPONENT_2, "exponent-2", 0, 0 },
	{ CKA_COEFFICIENT, "coefficient", 0, 0 },
	{ CKA_PUBLIC_KEY_INFO, "public-key-info", 0, 0 },
	{ CKA_PRIME, "prime", 0, 0 },
	{ CKA_SUBPRIME, "subprime", 0, 0 },
	{ CKA_BASE, "base", 0, 0 },
	{ CKA_PRIME_BITS, "prime-bits", U, 0 },
	{ CKA_SUBPRIME_BITS, "subprime-bits", U, 0 },
	{ CKA_VALUE_BITS, "value-bits", U, 0 },
	{ CKA_VALUE_LEN, "value-len", U, 0 },
	{ CKA_EXTRACTABLE, "extractable", B, 0 },
	{ CKA_LOCAL, "local", B, 0 },
	{ CKA_NEVER_EXTRACTABLE, "never-extractable", B, 0 },
	{ CKA_ALWAYS_SENSITIVE, "always-sensitive", B, 0 },
	{ CKA_KEY_GEN_MECHANISM, "key-gen-mechanism", U, 0 },
	{ CKA_MODIFIABLE, "modifiable", B, 0 },
	{ CKA_EC_PARAMS, "ecdsa-params", 0, 0 },
	{ CKA_EC_POINT, "ec-point", 0, 0 },
	{ CKA_SECONDARY_AUTH, "secondary-auth", B, 0 },
	{ CKA_AUTH_PIN_FLAGS, "auth-pin-flags", U, 0 },
	{ CKA_ALWAYS_AUTHENTICATE, "always-authenticate", B, 0 },
	{ CKA_WRAP_WITH_TRUSTED, "wrap-with-trusted", B, 0 },
	{ CKA_HW_FEATURE_TYPE, "hw-feature-type", U, 0 },
	{ CKA_RESET_ON_INIT, "reset-on-init", B, 0 },
	{ CKA_HAS_RESET, "has-reset", B, 0 },
	{ CKA_PIXEL_X, "pixel-x", U, 0 },
	{ CKA_PIXEL_Y, "pixel-y", U, 0 },
	{ CKA_RESOLUTION, "resolution", U, 0 },
	{ CKA_CHAR_ROWS, "char-rows", U, 0 },
	{ CKA_CHAR_COLUMNS, "char-columns", U, 0 },
	{ CKA_COLOR, "color", B, 0 },
	{ CKA_BITS_PER_PIXEL, "bits-per-pixel", U, 0 },
	{ CKA_CHAR_SETS, "char-sets", 0, 0 },
	{ CKA_ENCODING_METHODS, "encoding-methods", 0, 0 },
	{ CKA_MIME_TYPES, "mime-types", 0, 0 },
	{ CKA_MECHANISM_TYPE, "mechanism-type", U, 0 },
	{ CKA_REQUIRED_CMS_ATTRIBUTES, "required-cms-attributes", 0, 0 },
	{ CKA_DEFAULT_CMS_ATTRIBUTES, "default-cms-attributes", 0, 0 },
	{ CKA_SUPPORTED_CMS_ATTRIBUTES, "supported-cms-attributes", 0, 0 },
	{ CKA_WRAP_TEMPLATE, "wrap-template", 0, 0 },
	{ CKA_UNWRAP_TEMPLATE, "unwrap-template", 0, 0 },
	{ CKA_ALLOWED_MECHANISMS, "allowed-mechanisms", 0, 0 },
	{ CKA_NSS_URL, "nss-url", 0, 0 },
	{ CKA_NSS_EMAIL, "nss-email", 0, 0 },
	/* The other exception. */
	{ CKA_NSS_SMIME_INFO, "nss-smime-constant", 0, 0 },
	{ CKA_NSS_SMIME_TIMESTAMP, "nss-smime-timestamp", 0, 0 },
	{ CKA_NSS_PKCS8_SALT, "nss-pkcs8-salt", 0, 0 },
	{ CKA_NSS_PASSWORD_CHECK, "nss-password-check", 0, 0 },
	{ CKA_NSS_EXPIRES, "nss-expires", 0, 0 },
	{ CKA_NSS_KRL, "nss-krl", 0, 0 },
	{ CKA_NSS_PQG_COUNTER, "nss-pqg-counter", 0, 0 },
	{ CKA_NSS_PQG_SEED, "nss-pqg-seed", 0, 0 },
	{ CKA_NSS_PQG_H, "nss-pqg-h", 0, 0 },
	{ CKA_NSS_PQG_SEED_BITS, "nss-pqg-seed-bits", 0, 0 },
	{ CKA_NSS_MODULE_SPEC, "nss-module-spec", 0, 0 },
	{ CKA_NSS_MOZILLA_CA_POLICY, "nss-mozilla-ca-policy", B, 0 },
	{ CKA_NSS_SERVER_DISTRUST_AFTER, "nss-server-distrust-after", 0, 0 },
	{ CKA_NSS_EMAIL_DISTRUST_AFTER, "nss-email-distrust-after", 0, 0 },
	{ CKA_TRUST_DIGITAL_SIGNATURE, "trust-digital-signature", C | U, T_TRUST },
	{ CKA_TRUST_NON_REPUDIATION, "trust-non-repudiation", C | U, T_TRUST },
	{ CKA_TRUST_KEY_ENCIPHERMENT, "trust-key-encipherment", C | U, T_TRUST },
	{ CKA_TRUST_DATA_ENCIPHERMENT, "trust-data-encipherment", C | U, T_TRUST },
	{ CKA_TRUST_KEY_AGREEMENT, "trust-key-agreement", C | U, T_TRUST },
	{ CKA_TRUST_KEY_CERT_SIGN, "trust-key-cert-sign", C | U, T_TRUST },
	{ CKA_TRUST_CRL_SIGN, "trust-crl-sign", C | U, T_TRUST },
	{ CKA_TRUST_SERVER_AUTH, "trust-server-auth", C | U, T_TRUST },
	{ CKA_TRUST_CLIENT_AUTH, "trust-client-auth", C | U, T_TRUST },
	{ CKA_TRUST_CODE_SIGNING, "trust-code-signing", C | U, T_TRUST },
	{ CKA_TRUST_EMAIL_PROTECTION, "trust-email-protection", C | U, T_TRUST },
	{ CKA_TRUST_IPSEC_END_SYSTEM, "trust-ipsec-end-system", C | U, T_TRUST },
	{ CKA_TRUST_IPSEC_TUNNEL, "trust-ipsec-tunnel", C | U, T_TRUST },
	{ CKA_TRUST_IPSEC_USER, "trust-ipsec-user", C | U, T_TRUST },
	{ CKA_TRUST_TIME_STAMPING, "trust-time-stamping", C | U, T_TRUST },
	/* A CK_BBOOL, yet written as a number when it has a CK_ULONG's size. */
	{ CKA_TRUST_STEP_UP_APPROVED, "trust-step-up-approved", U, 0 },
	{ CKA_CERT_SHA1_HASH, "cert-sha1-hash", 0, 0 },
	{ CKA_CERT_MD5_HASH, "cert-md5-hash", 0, 0 },
	{ CKA_X_ASSERTION_TYPE, "x-assertion-type", C | U, T_ASSERT },
	{ CKA_X_CERTIFICATE_VALUE, "x-certificate-value", 0, 0 },
	{ CKA_X_PURPOSE, "x-purpose", 0, 0 },
	{ CKA_X_PEER, "x-peer", 0, 0 },
	{ CKA_X_DISTRUSTED, "x-distrusted", B, 0 },
	{ CKA_X_CRITICAL, "x-critical", 0, 0 },
};

#undef B
#undef U
#undef C

typedef struct {
	CK_ULONG value;
	const char *name;
	unsigned char table;
} value_nick;

static const value_nick values[] = {
	{ CKO_DATA, "data", T_CLASS },
	{ CKO_CERTIFICATE, "certificate", T_CLASS },
	{ CKO_PUBLIC_KEY, "public-key", T_CLASS },
	{ CKO_PRIVATE_KEY, "private-key", T_CLASS },
	{ CKO_SECRET_KEY, "secret-key", T_CLASS },
	{ CKO_HW_FEATURE, "hw-feature", T_CLASS },
	{ CKO_DOMAIN_PARAMETERS, "domain-parameters", T_CLASS },
	{ CKO_MECHANISM, "mechanism", T_CLASS },
	{ CKO_NSS_CRL, "nss-crl", T_CLASS },
	{ CKO_NSS_SMIME, "nss-smime", T_CLASS },
	{ CKO_NSS_TRUST, "nss-trust", T_CLASS },
	{ CKO_NSS_BUILTIN_ROOT_LIST, "nss-builtin-root-list", T_CLASS },
	{ CKO_NSS_NEWSLOT, "nss-newslot", T_CLASS },
	{ CKO_NSS_DELSLOT, "nss-delslot", T_CLASS },
	{ CKO_X_TRUST_ASSERTION, "x-trust-assertion", T_CLASS },
	{ CKO_X_CERTIFICATE_EXTENSION, "x-certificate-extension", T_CLASS },
	{ CKT_NSS_TRUSTED, "nss-trusted", T_TRUST },
	{ CKT_NSS_TRUSTED_DELEGATOR, "nss-trusted-delegator", T_TRUST },
	{ CKT_NSS_MUST_VERIFY_TRUST, "nss-must-verify-trust", T_TRUST },
	{ CKT_NSS_TRUST_UNKNOWN, "nss-trust-unknown", T_TRUST },
	{ CKT_NSS_NOT_TRUSTED, "nss-not-trusted", T_TRUST },
	{ CKT_NSS_VALID_DELEGATOR, "nss-valid-delegator", T_TRUST },
	{ CKC_X_509, "x-509", T_CERT },
	{ CKC_X_509_ATTR_CERT, "x-509-attr-cert", T_CERT },
	{ CKC_WTLS, "wtls", T_CERT },
	{ CKT_X_DISTRUSTED_CERTIFICATE, "x-distrusted-certificate", T_ASSERT },
	{ CKT_X_PINNED_CERTIFICATE, "x-pinned-certificate", T_ASSERT },
	{ CKT_X_ANCHORED_CERTIFICATE, "x-anchored-certificate", T_ASSERT },
	{ 0, "unspecified", T_CATEGORY },
	{ 1, "token-user", T_CATEGORY },
	{ 2, "authority", T_CATEGORY },
	{ 3, "other-entry", T_CATEGORY },
	{ CKK_RSA, "rsa", T_KEY },
	{ CKK_DSA, "dsa", T_KEY },
	{ CKK_DH, "dh", T_KEY },
	{ CKK_EC, "ec", T_KEY },
	{ CKK_X9_42_DH, "x9-42-dh", T_KEY },
	{ CKK_KEA, "kea", T_KEY },
	{ CKK_GENERIC_SECRET, "generic-secret", T_KEY },
	{ CKK_AES, "aes", T_KEY },
};

static int
by_type(const void *key, const void *nick)
{
	CK_ATTRIBUTE_TYPE type = *(const CK_ATTRIBUTE_TYPE *)key;
	CK_ATTRIBUTE_TYPE other = ((const attr_nick *)nick)->type;

	return type < other ? -1 : type > other;
}

static const attr_nick *
lookup(CK_ATTRIBUTE_TYPE type)
{
	return bsearch(&type, attrs, PG_N_ELEMENTS(attrs), sizeof(attrs[0]), by_type);
}

size_t
pg_nick_count(void)
{
	return PG_N_ELEMENTS(attrs);
}

CK_ATTRIBUTE_TYPE
pg_nick_type_at(size_t i)
{
	return i < PG_N_ELEMENTS(attrs) ? attrs[i].type : (CK_ATTRIBUTE_TYPE)-1;
}

const char *
pg_nick_attr(CK_ATTRIBUTE_TYPE type)
{
	const attr_nick *a = lookup(type);
	return a ? a->name : NULL;
}

static bool
name_eq(const char *name, const char *text, size_t len)
{
	return strlen(name) == len && memcmp(name, text, len) == 0;
}

bool
pg_nick_attr_parse(const char *name, size_t len, CK_ATTRIBUTE_TYPE *type)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(attrs); i++)
		if (name_eq(attrs[i].name, name, len)) {
			*type = attrs[i].type;
			return true;
		}
	/* An older spelling that readers accept. */
	if (name_eq("x-public-key-info", name, len)) {
		*type = CKA_PUBLIC_KEY_INFO;
		return true;
	}
	return false;
}

unsigned
pg_nick_forms(CK_ATTRIBUTE_TYPE type)
{
	const attr_nick *a = lookup(type);
	return a ? a->forms : 0;
}

const char *
pg_nick_value(CK_ATTRIBUTE_TYPE type, CK_ULONG value)
{
	const attr_nick *a = lookup(type);

	if (a == NULL || a->table == T_NONE)
		return NULL;
	for (size_t i = 0; i < PG_N_ELEMENTS(values); i++)
		if (values[i].table == a->table && values[i].value == value)
			return values[i].name;
	return NULL;
}

bool
pg_nick_value_parse(const char *name, size_t len, CK_ULONG *value)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(values); i++)
		if (name_eq(values[i].name, name, len)) {
			*value = values[i].value;
			return true;
		}
	return false;
}
