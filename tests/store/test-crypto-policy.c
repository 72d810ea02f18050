/*
 * rules-usage.c: no key both wraps and decrypts (or unwraps and
 * encrypts) unless the store's wrap-decrypt=allow says so; the
 * wrap-then-decrypt attack on a sensitive key, which it stops.
 */
#include "crypto-test.h"

static CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
static CK_OBJECT_CLASS secret_class = CKO_SECRET_KEY;
static CK_KEY_TYPE aes_type = CKK_AES;
static const unsigned char secret_value[32] = {
	0x5e, 0x45, 0x5e, 0x17, 0x1e, 0x00, 0x6b, 0x65, 0x79, 0x20, 0x6e, 0x6f, 0x62, 0x6f, 0x64, 0x79,
	0x20, 0x6d, 0x61, 0x79, 0x20, 0x72, 0x65, 0x61, 0x64, 0x2e, 0x2e, 0x2e, 0x21, 0x21, 0x21, 0x21,
};

/* The fixture with a store option (NULL: the defaults). */
static void
setup_with(const char *options)
{
	ck_assert_rv(st_initialize(options), CKR_OK);
	ct_slot = st_token("policy");
	ct_session = st_open(ct_slot, true);
	st_login(ct_session);
}

static void
setup_default(void)
{
	setup_with(NULL);
}

/* An AES-256 key generated with the given attributes (and CKA_TOKEN false). */
static CK_RV
gen_aes(const CK_ATTRIBUTE *extra, CK_ULONG n_extra, CK_OBJECT_HANDLE *key)
{
	CK_MECHANISM m = { CKM_AES_KEY_GEN, NULL, 0 };
	CK_ULONG len = 32;
	CK_ATTRIBUTE t[8] = {
		{ CKA_VALUE_LEN, &len, sizeof(len) },
		{ CKA_TOKEN, &no, 1 },
	};

	pg_assert(n_extra <= 6);
	if (n_extra > 0)
		memcpy(t + 2, extra, n_extra * sizeof(*t));
	return p11->C_GenerateKey(ct_session, &m, t, 2 + n_extra, key);
}

/* The victim: a sensitive key that may be wrapped, with a value we know. */
static CK_OBJECT_HANDLE
victim(void)
{
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &secret_class, sizeof(secret_class) },
		{ CKA_KEY_TYPE, &aes_type, sizeof(aes_type) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_VALUE, (void *)secret_value, sizeof(secret_value) },
		{ CKA_SENSITIVE, &yes, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
	};
	CK_OBJECT_HANDLE h = 0;

	ck_assert_rv(p11->C_CreateObject(ct_session, t, PG_N_ELEMENTS(t), &h), CKR_OK);
	return h;
}

/*
 * Wraps the victim with `wrapping`, then decrypts the blob with `decrypting`
 * (AES-ECB both times). True when the victim's value came out.
 */
static bool
wrap_then_decrypt(CK_OBJECT_HANDLE wrapping, CK_OBJECT_HANDLE decrypting, CK_MECHANISM *wm,
                  CK_MECHANISM *dm)
{
	unsigned char blob[512], plain[512];
	CK_ULONG blob_len = sizeof(blob), plain_len = sizeof(plain);
	CK_OBJECT_HANDLE target = victim();

	if (p11->C_WrapKey(ct_session, wm, wrapping, target, blob, &blob_len) != CKR_OK)
		return false;
	if (ct_decrypt(dm, decrypting, blob, blob_len, plain, &plain_len) != CKR_OK)
		return false;
	return plain_len == sizeof(secret_value) && memcmp(plain, secret_value, plain_len) == 0;
}

/* A key generated with the default attributes can no longer be used to
 * read a sensitive key: it decrypts but does not wrap; a key asked to wrap
 * does not decrypt. */
static void
test_attack_secret(void)
{
	CK_MECHANISM ecb = { CKM_AES_ECB, NULL, 0 };
	CK_ATTRIBUTE wrap = { CKA_WRAP, &yes, 1 }, unwrap = { CKA_UNWRAP, &yes, 1 };
	CK_OBJECT_HANDLE key, kek, unwrapper;

	ck_assert_rv(gen_aes(NULL, 0, &key), CKR_OK);
	pg_assert(!wrap_then_decrypt(key, key, &ecb, &ecb));
	pg_assert(!ct_attr_bool(key, CKA_WRAP));
	pg_assert(!ct_attr_bool(key, CKA_UNWRAP));
	pg_assert(ct_attr_bool(key, CKA_ENCRYPT));
	pg_assert(ct_attr_bool(key, CKA_DECRYPT));
	ck_assert_rv(gen_aes(&wrap, 1, &kek), CKR_OK);
	pg_assert(!wrap_then_decrypt(kek, kek, &ecb, &ecb));
	pg_assert(ct_attr_bool(kek, CKA_WRAP));
	pg_assert(!ct_attr_bool(kek, CKA_DECRYPT));
	pg_assert(ct_attr_bool(kek, CKA_ENCRYPT));
	/* Unwrapping keys do not encrypt (which would import chosen values). */
	ck_assert_rv(gen_aes(&unwrap, 1, &unwrapper), CKR_OK);
	pg_assert(ct_attr_bool(unwrapper, CKA_UNWRAP));
	pg_assert(!ct_attr_bool(unwrapper, CKA_ENCRYPT));
	pg_assert(ct_attr_bool(unwrapper, CKA_DECRYPT));
}

/* Asking for both of a pair is refused, however the key is made. */
static void
test_explicit_pair(void)
{
	CK_ATTRIBUTE wrap_decrypt[] = { { CKA_WRAP, &yes, 1 }, { CKA_DECRYPT, &yes, 1 } };
	CK_ATTRIBUTE unwrap_encrypt[] = { { CKA_UNWRAP, &yes, 1 }, { CKA_ENCRYPT, &yes, 1 } };
	CK_ATTRIBUTE wrap_unwrap[] = { { CKA_WRAP, &yes, 1 }, { CKA_UNWRAP, &yes, 1 } };
	CK_ATTRIBUTE both[] = {
		{ CKA_CLASS, &secret_class, sizeof(secret_class) },
		{ CKA_KEY_TYPE, &aes_type, sizeof(aes_type) },
		{ CKA_TOKEN, &no, 1 },
		{ CKA_VALUE, (void *)secret_value, sizeof(secret_value) },
		{ CKA_WRAP, &yes, 1 },
		{ CKA_DECRYPT, &yes, 1 },
	};
	CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
	CK_OBJECT_HANDLE key, kek;
	unsigned char blob[64];
	CK_ULONG blob_len = sizeof(blob);

	ck_assert_rv(gen_aes(wrap_decrypt, 2, &key), CKR_TEMPLATE_INCONSISTENT);
	ck_assert_rv(gen_aes(unwrap_encrypt, 2, &key), CKR_TEMPLATE_INCONSISTENT);
	ck_assert_rv(p11->C_CreateObject(ct_session, both, PG_N_ELEMENTS(both), &key),
	             CKR_TEMPLATE_INCONSISTENT);
	/* Wrapping and unwrapping go together; each then neither en- nor decrypts. */
	ck_assert_rv(gen_aes(wrap_unwrap, 2, &kek), CKR_OK);
	pg_assert(!ct_attr_bool(kek, CKA_ENCRYPT));
	pg_assert(!ct_attr_bool(kek, CKA_DECRYPT));
	ck_assert_rv(p11->C_WrapKey(ct_session, &kw, kek, victim(), blob, &blob_len), CKR_OK);
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &kw, kek, blob, blob_len, both, 3, &key), CKR_OK);
	pg_assert(ct_attr_bool(key, CKA_DECRYPT));
	pg_assert(!ct_attr_bool(key, CKA_WRAP));
	both[3] = both[5];
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &kw, kek, blob, blob_len, both, 5, &key),
	             CKR_TEMPLATE_INCONSISTENT);
}

/* A key whose value can be read gives nothing away by wrapping and
 * decrypting: what pkcs11-tool and libp11 ask for when they derive. */
static void
test_readable(void)
{
	CK_ATTRIBUTE all[] = {
		{ CKA_SENSITIVE, &no, 1 }, { CKA_EXTRACTABLE, &yes, 1 },
		{ CKA_WRAP, &yes, 1 }, { CKA_DECRYPT, &yes, 1 },
		{ CKA_UNWRAP, &yes, 1 }, { CKA_ENCRYPT, &yes, 1 },
	};
	CK_ATTRIBUTE sensitive = { CKA_SENSITIVE, &yes, 1 }, no_wrap = { CKA_WRAP, &no, 1 };
	CK_ATTRIBUTE no_unwrap = { CKA_UNWRAP, &no, 1 };
	CK_OBJECT_HANDLE key, other;

	ck_assert_rv(gen_aes(all, 6, &key), CKR_OK);
	/* It cannot become sensitive while it has a pair. */
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &sensitive, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_CopyObject(ct_session, key, &sensitive, 1, &other), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &no_wrap, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &no_unwrap, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &sensitive, 1), CKR_OK);
	/* Readable keys may gain uses. */
	ck_assert_rv(gen_aes(all, 2, &other), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, other, all + 2, 2), CKR_OK);
}

/* After creation, a secret key's four uses can be turned off, not on: so
 * no key gains the second of a pair, even after dropping the first, and no
 * copy (the same value) gains a use its original lacks. */
static void
test_modify(void)
{
	CK_ATTRIBUTE wrap = { CKA_WRAP, &yes, 1 }, decrypt = { CKA_DECRYPT, &yes, 1 };
	CK_ATTRIBUTE no_wrap = { CKA_WRAP, &no, 1 }, no_encrypt = { CKA_ENCRYPT, &no, 1 };
	CK_ATTRIBUTE unwrap = { CKA_UNWRAP, &yes, 1 }, encrypt = { CKA_ENCRYPT, &yes, 1 };
	CK_MECHANISM ecb = { CKM_AES_ECB, NULL, 0 };
	CK_OBJECT_HANDLE key, kek, copy;

	ck_assert_rv(gen_aes(NULL, 0, &key), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &wrap, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &unwrap, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(gen_aes(&wrap, 1, &kek), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, kek, &decrypt, 1), CKR_ATTRIBUTE_READ_ONLY);
	/* Off, then on: still refused. */
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, kek, &no_wrap, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, kek, &decrypt, 1), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, kek, &wrap, 1), CKR_ATTRIBUTE_READ_ONLY);
	/* Setting a use to what it is, or turning one off, is fine. */
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &decrypt, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &no_encrypt, 1), CKR_OK);
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &encrypt, 1), CKR_ATTRIBUTE_READ_ONLY);
	/* A copy is the same key: it cannot gain a use. */
	ck_assert_rv(gen_aes(&wrap, 1, &kek), CKR_OK);
	ck_assert_rv(p11->C_CopyObject(ct_session, kek, &decrypt, 1, &copy), CKR_ATTRIBUTE_READ_ONLY);
	ck_assert_rv(p11->C_CopyObject(ct_session, kek, &no_wrap, 1, &copy), CKR_OK);
	pg_assert(!ct_attr_bool(copy, CKA_DECRYPT));
	ck_assert_rv(p11->C_CopyObject(ct_session, kek, NULL, 0, &copy), CKR_OK);
	pg_assert(!wrap_then_decrypt(kek, copy, &ecb, &ecb));
}

/*
 * A key pair: wrapping with the public key and decrypting with the private
 * one is the same attack. Pairs generated with the defaults do not wrap; a
 * public key asked to wrap makes the private key not decrypt, and asking
 * for both is refused.
 */
static void
test_key_pair(void)
{
	CK_MECHANISM gen = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_MECHANISM pkcs1 = { CKM_RSA_PKCS, NULL, 0 };
	CK_ULONG bits = 2048;
	CK_ATTRIBUTE pub_default[] = { { CKA_TOKEN, &no, 1 }, { CKA_MODULUS_BITS, &bits, sizeof(bits) } };
	CK_ATTRIBUTE priv_default[] = { { CKA_TOKEN, &no, 1 } };
	CK_ATTRIBUTE pub_wrap[] = {
		{ CKA_TOKEN, &no, 1 }, { CKA_MODULUS_BITS, &bits, sizeof(bits) }, { CKA_WRAP, &yes, 1 },
	};
	CK_ATTRIBUTE priv_decrypt[] = { { CKA_TOKEN, &no, 1 }, { CKA_DECRYPT, &yes, 1 } };
	CK_ATTRIBUTE priv_unwrap[] = { { CKA_TOKEN, &no, 1 }, { CKA_UNWRAP, &yes, 1 } };
	CK_OBJECT_HANDLE pub, priv, back;
	unsigned char blob[256];
	CK_ULONG blob_len = sizeof(blob);
	CK_ATTRIBUTE unwrapped[] = {
		{ CKA_CLASS, &secret_class, sizeof(secret_class) },
		{ CKA_KEY_TYPE, &aes_type, sizeof(aes_type) },
		{ CKA_TOKEN, &no, 1 },
	};

	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &gen, pub_default, 2, priv_default, 1, &pub,
	                                    &priv), CKR_OK);
	pg_assert(!ct_attr_bool(pub, CKA_WRAP));
	pg_assert(ct_attr_bool(pub, CKA_ENCRYPT));
	pg_assert(ct_attr_bool(priv, CKA_DECRYPT));
	pg_assert(!wrap_then_decrypt(pub, priv, &pkcs1, &pkcs1));
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &gen, pub_wrap, 3, priv_decrypt, 2, &pub,
	                                    &priv), CKR_TEMPLATE_INCONSISTENT);
	ck_assert_rv(p11->C_GenerateKeyPair(ct_session, &gen, pub_wrap, 3, priv_unwrap, 2, &pub,
	                                    &priv), CKR_OK);
	pg_assert(!ct_attr_bool(priv, CKA_DECRYPT));
	pg_assert(!wrap_then_decrypt(pub, priv, &pkcs1, &pkcs1));
	/* ... and it wraps and unwraps. */
	ck_assert_rv(p11->C_WrapKey(ct_session, &pkcs1, pub, victim(), blob, &blob_len), CKR_OK);
	ck_assert_rv(p11->C_UnwrapKey(ct_session, &pkcs1, priv, blob, blob_len, unwrapped, 3,
	                              &back), CKR_OK);
	pg_assert_int_eq(ct_attr_ulong(back, CKA_VALUE_LEN), sizeof(secret_value));
}

static void
setup_allow(void)
{
	setup_with("wrap-decrypt=allow");
}

/* wrap-decrypt=allow: what a template asks for is granted; the defaults
 * stay as they are. */
static void
test_allow(void)
{
	CK_ATTRIBUTE wrap_decrypt[] = { { CKA_WRAP, &yes, 1 }, { CKA_DECRYPT, &yes, 1 } };
	CK_ATTRIBUTE unwrap = { CKA_UNWRAP, &yes, 1 };
	CK_MECHANISM ecb = { CKM_AES_ECB, NULL, 0 };
	CK_OBJECT_HANDLE key;

	ck_assert_rv(gen_aes(NULL, 0, &key), CKR_OK);
	pg_assert(!ct_attr_bool(key, CKA_WRAP));
	ck_assert_rv(p11->C_SetAttributeValue(ct_session, key, &unwrap, 1), CKR_OK);
	ck_assert_rv(gen_aes(wrap_decrypt, 2, &key), CKR_OK);
	pg_assert(wrap_then_decrypt(key, key, &ecb, &ecb));
}

int
main(int argc, char **argv)
{
	pg_test_fixture(setup_default, ct_teardown);
	pg_test("policy/attack-secret", test_attack_secret);
	pg_test("policy/explicit-pair", test_explicit_pair);
	pg_test("policy/modify", test_modify);
	pg_test("policy/readable", test_readable);
	pg_test("policy/key-pair", test_key_pair);
	pg_test_fixture(setup_allow, ct_teardown);
	pg_test("policy/allow", test_allow);
	return pg_test_run(argc, argv);
}
