/*
 * p11glue-store: the mechanisms the store offers, their information
 * (C_GetMechanismList, C_GetMechanismInfo), and the libcrypto algorithms
 * behind them, fetched once so that no operation pays for a lookup.
 */
#include "crypto.h"

#include <openssl/err.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Fetched algorithms. libcrypto 3 looks an algorithm up (under its own
 * locks) whenever it is named by a legacy handle such as EVP_sha256();
 * fetching each once keeps those lookups out of every operation.
 */
static const struct {
	const char *name;
	CK_MECHANISM_TYPE mech;
	CK_RSA_PKCS_MGF_TYPE mgf;
	CK_EC_KDF_TYPE kdf;
} hash_table[PG_HASH_COUNT] = {
	[PG_HASH_SHA1] = { "SHA1", CKM_SHA_1, CKG_MGF1_SHA1, CKD_SHA1_KDF },
	[PG_HASH_SHA224] = { "SHA224", CKM_SHA224, CKG_MGF1_SHA224, CKD_SHA224_KDF },
	[PG_HASH_SHA256] = { "SHA256", CKM_SHA256, CKG_MGF1_SHA256, CKD_SHA256_KDF },
	[PG_HASH_SHA384] = { "SHA384", CKM_SHA384, CKG_MGF1_SHA384, CKD_SHA384_KDF },
	[PG_HASH_SHA512] = { "SHA512", CKM_SHA512, CKG_MGF1_SHA512, CKD_SHA512_KDF },
	[PG_HASH_SHA3_224] = { "SHA3-224", CKM_SHA3_224, CKG_MGF1_SHA3_224, CKD_SHA3_224_KDF },
	[PG_HASH_SHA3_256] = { "SHA3-256", CKM_SHA3_256, CKG_MGF1_SHA3_256, CKD_SHA3_256_KDF },
	[PG_HASH_SHA3_384] = { "SHA3-384", CKM_SHA3_384, CKG_MGF1_SHA3_384, CKD_SHA3_384_KDF },
	[PG_HASH_SHA3_512] = { "SHA3-512", CKM_SHA3_512, CKG_MGF1_SHA3_512, CKD_SHA3_512_KDF },
};

static const char *const aes_names[PG_AES_MODES][3] = {
	[PG_AES_ECB] = { "AES-128-ECB", "AES-192-ECB", "AES-256-ECB" },
	[PG_AES_CBC] = { "AES-128-CBC", "AES-192-CBC", "AES-256-CBC" },
	[PG_AES_CTR] = { "AES-128-CTR", "AES-192-CTR", "AES-256-CTR" },
	[PG_AES_GCM] = { "AES-128-GCM", "AES-192-GCM", "AES-256-GCM" },
	[PG_AES_WRAP] = { "AES-128-WRAP", "AES-192-WRAP", "AES-256-WRAP" },
	[PG_AES_WRAP_PAD] = { "AES-128-WRAP-PAD", "AES-192-WRAP-PAD", "AES-256-WRAP-PAD" },
};

static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;
static EVP_MD *hash_md[PG_HASH_COUNT];
static size_t hash_size[PG_HASH_COUNT];
static EVP_CIPHER *aes_cipher[PG_AES_MODES][3];
static EVP_MAC *mac_hmac;
static EVP_MAC *mac_cmac;

static void fetch_all(void)
{
	/* Errors of algorithms a provider lacks are no business of the caller. */
	ERR_set_mark();
	for (int h = PG_HASH_NONE + 1; h < PG_HASH_COUNT; h++) {
		hash_md[h] = EVP_MD_fetch(NULL, hash_table[h].name, NULL);
		if (hash_md[h] != NULL)
			hash_size[h] = (size_t)EVP_MD_get_size(hash_md[h]);
	}
	for (int m = 0; m < PG_AES_MODES; m++)
		for (int k = 0; k < 3; k++)
			aes_cipher[m][k] = EVP_CIPHER_fetch(NULL, aes_names[m][k], NULL);
	mac_hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	mac_cmac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	ERR_pop_to_mark();
}

static void fetch(void)
{
	(void)pthread_once(&fetch_once, fetch_all);
}

const EVP_MD *pg_hash_md(pg_hash hash)
{
	if (hash <= PG_HASH_NONE || hash >= PG_HASH_COUNT)
		return NULL;
	fetch();
	return hash_md[hash];
}

const char *pg_hash_name(pg_hash hash)
{
	if (hash <= PG_HASH_NONE || hash >= PG_HASH_COUNT)
		return NULL;
	return hash_table[hash].name;
}

size_t pg_hash_len(pg_hash hash)
{
	if (hash <= PG_HASH_NONE || hash >= PG_HASH_COUNT)
		return 0;
	fetch();
	return hash_size[hash];
}

pg_hash pg_hash_from_mech(CK_MECHANISM_TYPE type)
{
	for (int h = PG_HASH_NONE + 1; h < PG_HASH_COUNT; h++)
		if (hash_table[h].mech == type)
			return (pg_hash)h;
	return PG_HASH_NONE;
}

pg_hash pg_hash_from_mgf(CK_RSA_PKCS_MGF_TYPE mgf)
{
	for (int h = PG_HASH_NONE + 1; h < PG_HASH_COUNT; h++)
		if (hash_table[h].mgf == mgf)
			return (pg_hash)h;
	return PG_HASH_NONE;
}

pg_hash pg_hash_from_kdf(CK_EC_KDF_TYPE kdf)
{
	for (int h = PG_HASH_NONE + 1; h < PG_HASH_COUNT; h++)
		if (hash_table[h].kdf == kdf)
			return (pg_hash)h;
	return PG_HASH_NONE;
}

const EVP_CIPHER *pg_aes_cipher(pg_aes_mode mode, size_t key_len)
{
	if ((int)mode < 0 || mode >= PG_AES_MODES)
		return NULL;
	if (key_len != 16 && key_len != 24 && key_len != 32)
		return NULL;
	fetch();
	return aes_cipher[mode][(key_len - 16) / 8];
}

EVP_MAC *pg_mac_hmac(void)
{
	fetch();
	return mac_hmac;
}

EVP_MAC *pg_mac_cmac(void)
{
	fetch();
	return mac_cmac;
}

/* ---------------------------------------------------------------------------
 * The table. Key sizes follow the units the current mechanisms
 * specification gives for each mechanism: bits for RSA and EC (the
 * modulus and the field), bits for CKM_GENERIC_SECRET_KEY_GEN, bytes for
 * AES and for HMAC keys.
 */
#define SV (CKF_SIGN | CKF_VERIFY)
#define SVR (SV | CKF_SIGN_RECOVER | CKF_VERIFY_RECOVER)
#define ED (CKF_ENCRYPT | CKF_DECRYPT)
#define WU (CKF_WRAP | CKF_UNWRAP)
#define ECF (CKF_EC_F_P | CKF_EC_OID | CKF_EC_CURVENAME | CKF_EC_UNCOMPRESS)
#define EDF (CKF_EC_OID | CKF_EC_CURVENAME)
#define NO_KEY ((CK_KEY_TYPE)-1)
#define RSA_MIN 2048
#define RSA_MAX 4096
#define HMAC_MAX 512

#define DIGEST(m, h) { m, PG_KIND_DIGEST, h, NO_KEY, 0, 0, CKF_DIGEST, false }
#define RSA(m, k, h, f) { m, k, h, CKK_RSA, RSA_MIN, RSA_MAX, f, false }
#define ECDSA(m, h) { m, PG_KIND_ECDSA, h, CKK_EC, 256, 521, SV | ECF, false }
#define HMAC(m, h, g) { m, PG_KIND_HMAC, h, CKK_GENERIC_SECRET, 1, HMAC_MAX, SV, g }
#define AES(m, k, f) { m, k, PG_HASH_NONE, CKK_AES, 16, 32, f, false }

static const pg_mech mech_table[] = {
	DIGEST(CKM_SHA_1, PG_HASH_SHA1),
	DIGEST(CKM_SHA224, PG_HASH_SHA224),
	DIGEST(CKM_SHA256, PG_HASH_SHA256),
	DIGEST(CKM_SHA384, PG_HASH_SHA384),
	DIGEST(CKM_SHA512, PG_HASH_SHA512),
	DIGEST(CKM_SHA3_224, PG_HASH_SHA3_224),
	DIGEST(CKM_SHA3_256, PG_HASH_SHA3_256),
	DIGEST(CKM_SHA3_384, PG_HASH_SHA3_384),
	DIGEST(CKM_SHA3_512, PG_HASH_SHA3_512),

	RSA(CKM_RSA_PKCS_KEY_PAIR_GEN, PG_KIND_GEN_RSA, PG_HASH_NONE, CKF_GENERATE_KEY_PAIR),
	RSA(CKM_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_NONE, SVR | ED | WU),
	RSA(CKM_RSA_X_509, PG_KIND_RSA_X509, PG_HASH_NONE, SVR | ED),
	RSA(CKM_RSA_PKCS_OAEP, PG_KIND_RSA_OAEP, PG_HASH_NONE, ED | WU),
	RSA(CKM_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_NONE, SV),
	RSA(CKM_SHA1_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA1, SV),
	RSA(CKM_SHA224_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA224, SV),
	RSA(CKM_SHA256_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA256, SV),
	RSA(CKM_SHA384_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA384, SV),
	RSA(CKM_SHA512_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA512, SV),
	RSA(CKM_SHA3_224_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA3_224, SV),
	RSA(CKM_SHA3_256_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA3_256, SV),
	RSA(CKM_SHA3_384_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA3_384, SV),
	RSA(CKM_SHA3_512_RSA_PKCS, PG_KIND_RSA_PKCS, PG_HASH_SHA3_512, SV),
	RSA(CKM_SHA1_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA1, SV),
	RSA(CKM_SHA224_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA224, SV),
	RSA(CKM_SHA256_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA256, SV),
	RSA(CKM_SHA384_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA384, SV),
	RSA(CKM_SHA512_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA512, SV),
	RSA(CKM_SHA3_224_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA3_224, SV),
	RSA(CKM_SHA3_256_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA3_256, SV),
	RSA(CKM_SHA3_384_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA3_384, SV),
	RSA(CKM_SHA3_512_RSA_PKCS_PSS, PG_KIND_RSA_PSS, PG_HASH_SHA3_512, SV),

	{ CKM_EC_KEY_PAIR_GEN, PG_KIND_GEN_EC, PG_HASH_NONE, CKK_EC, 256, 521,
	  CKF_GENERATE_KEY_PAIR | ECF, false },
	ECDSA(CKM_ECDSA, PG_HASH_NONE),
	ECDSA(CKM_ECDSA_SHA1, PG_HASH_SHA1),
	ECDSA(CKM_ECDSA_SHA224, PG_HASH_SHA224),
	ECDSA(CKM_ECDSA_SHA256, PG_HASH_SHA256),
	ECDSA(CKM_ECDSA_SHA384, PG_HASH_SHA384),
	ECDSA(CKM_ECDSA_SHA512, PG_HASH_SHA512),
	ECDSA(CKM_ECDSA_SHA3_224, PG_HASH_SHA3_224),
	ECDSA(CKM_ECDSA_SHA3_256, PG_HASH_SHA3_256),
	ECDSA(CKM_ECDSA_SHA3_384, PG_HASH_SHA3_384),
	ECDSA(CKM_ECDSA_SHA3_512, PG_HASH_SHA3_512),
	{ CKM_ECDH1_DERIVE, PG_KIND_ECDH, PG_HASH_NONE, CKK_EC, 256, 521, CKF_DERIVE | ECF, false },
	{ CKM_ECDH1_COFACTOR_DERIVE, PG_KIND_ECDH, PG_HASH_NONE, CKK_EC, 256, 521,
	  CKF_DERIVE | ECF, false },

	{ CKM_EC_EDWARDS_KEY_PAIR_GEN, PG_KIND_GEN_EDWARDS, PG_HASH_NONE, CKK_EC_EDWARDS, 255, 448,
	  CKF_GENERATE_KEY_PAIR | EDF, false },
	{ CKM_EDDSA, PG_KIND_EDDSA, PG_HASH_NONE, CKK_EC_EDWARDS, 255, 448, SV | EDF, false },

	AES(CKM_AES_KEY_GEN, PG_KIND_GEN_AES, CKF_GENERATE),
	AES(CKM_AES_ECB, PG_KIND_AES_ECB, ED | WU),
	AES(CKM_AES_CBC, PG_KIND_AES_CBC, ED | WU),
	AES(CKM_AES_CBC_PAD, PG_KIND_AES_CBC_PAD, ED | WU),
	AES(CKM_AES_CTR, PG_KIND_AES_CTR, ED | WU),
	AES(CKM_AES_GCM, PG_KIND_AES_GCM, ED | WU | CKF_MESSAGE_ENCRYPT | CKF_MESSAGE_DECRYPT),
	AES(CKM_AES_KEY_WRAP, PG_KIND_AES_KW, ED | WU),
	AES(CKM_AES_KEY_WRAP_PAD, PG_KIND_AES_KW_PAD, ED | WU),
	AES(CKM_AES_KEY_WRAP_KWP, PG_KIND_AES_KWP, ED | WU),
	AES(CKM_AES_CMAC, PG_KIND_CMAC, SV),
	{ CKM_AES_CMAC_GENERAL, PG_KIND_CMAC, PG_HASH_NONE, CKK_AES, 16, 32, SV, true },

	{ CKM_GENERIC_SECRET_KEY_GEN, PG_KIND_GEN_SECRET, PG_HASH_NONE, CKK_GENERIC_SECRET,
	  8, HMAC_MAX * 8, CKF_GENERATE, false },
	HMAC(CKM_SHA_1_HMAC, PG_HASH_SHA1, false),
	HMAC(CKM_SHA_1_HMAC_GENERAL, PG_HASH_SHA1, true),
	HMAC(CKM_SHA224_HMAC, PG_HASH_SHA224, false),
	HMAC(CKM_SHA224_HMAC_GENERAL, PG_HASH_SHA224, true),
	HMAC(CKM_SHA256_HMAC, PG_HASH_SHA256, false),
	HMAC(CKM_SHA256_HMAC_GENERAL, PG_HASH_SHA256, true),
	HMAC(CKM_SHA384_HMAC, PG_HASH_SHA384, false),
	HMAC(CKM_SHA384_HMAC_GENERAL, PG_HASH_SHA384, true),
	HMAC(CKM_SHA512_HMAC, PG_HASH_SHA512, false),
	HMAC(CKM_SHA512_HMAC_GENERAL, PG_HASH_SHA512, true),
	HMAC(CKM_SHA3_224_HMAC, PG_HASH_SHA3_224, false),
	HMAC(CKM_SHA3_224_HMAC_GENERAL, PG_HASH_SHA3_224, true),
	HMAC(CKM_SHA3_256_HMAC, PG_HASH_SHA3_256, false),
	HMAC(CKM_SHA3_256_HMAC_GENERAL, PG_HASH_SHA3_256, true),
	HMAC(CKM_SHA3_384_HMAC, PG_HASH_SHA3_384, false),
	HMAC(CKM_SHA3_384_HMAC_GENERAL, PG_HASH_SHA3_384, true),
	HMAC(CKM_SHA3_512_HMAC, PG_HASH_SHA3_512, false),
	HMAC(CKM_SHA3_512_HMAC_GENERAL, PG_HASH_SHA3_512, true),
};

/* Whether libcrypto provides what the mechanism needs. */
static bool mech_available(const pg_mech *m)
{
	if (m->hash != PG_HASH_NONE && pg_hash_md(m->hash) == NULL)
		return false;
	if (m->kind == PG_KIND_HMAC)
		return pg_mac_hmac() != NULL;
	if (m->kind == PG_KIND_CMAC)
		return pg_mac_cmac() != NULL;
	return true;
}

const pg_mech *pg_mech_find(CK_MECHANISM_TYPE type)
{
	for (size_t i = 0; i < PG_N_ELEMENTS(mech_table); i++)
		if (mech_table[i].type == type)
			return mech_available(&mech_table[i]) ? &mech_table[i] : NULL;
	return NULL;
}

/* HMAC keys: generic secrets, or the key type made for that hash. */
static CK_KEY_TYPE hmac_key_type(pg_hash hash)
{
	switch (hash) {
	case PG_HASH_SHA1: return CKK_SHA_1_HMAC;
	case PG_HASH_SHA224: return CKK_SHA224_HMAC;
	case PG_HASH_SHA256: return CKK_SHA256_HMAC;
	case PG_HASH_SHA384: return CKK_SHA384_HMAC;
	case PG_HASH_SHA512: return CKK_SHA512_HMAC;
	case PG_HASH_SHA3_224: return CKK_SHA3_224_HMAC;
	case PG_HASH_SHA3_256: return CKK_SHA3_256_HMAC;
	case PG_HASH_SHA3_384: return CKK_SHA3_384_HMAC;
	case PG_HASH_SHA3_512: return CKK_SHA3_512_HMAC;
	default: return NO_KEY;
	}
}

bool pg_mech_key_type_ok(const pg_mech *mech, CK_KEY_TYPE key_type)
{
	if (mech->kind == PG_KIND_HMAC)
		return key_type == CKK_GENERIC_SECRET || key_type == hmac_key_type(mech->hash);
	return key_type == mech->key_type;
}

CK_RV pg_mech_list(CK_MECHANISM_TYPE *list, CK_ULONG *count)
{
	CK_ULONG n = 0;

	pg_return_val_if_fail(count != NULL, CKR_ARGUMENTS_BAD);
	for (size_t i = 0; i < PG_N_ELEMENTS(mech_table); i++)
		if (mech_available(&mech_table[i]))
			n++;
	if (list == NULL) {
		*count = n;
		return CKR_OK;
	}
	if (*count < n) {
		*count = n;
		return CKR_BUFFER_TOO_SMALL;
	}
	n = 0;
	for (size_t i = 0; i < PG_N_ELEMENTS(mech_table); i++)
		if (mech_available(&mech_table[i]))
			list[n++] = mech_table[i].type;
	*count = n;
	return CKR_OK;
}

CK_RV pg_mech_info(CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info)
{
	const pg_mech *m;

	pg_return_val_if_fail(info != NULL, CKR_ARGUMENTS_BAD);
	m = pg_mech_find(type);
	if (m == NULL)
		return CKR_MECHANISM_INVALID;
	info->ulMinKeySize = m->min_size;
	info->ulMaxKeySize = m->max_size;
	info->flags = m->flags;
	return CKR_OK;
}

/* ---------------------------------------------------------------------------
 * RSA mechanism parameters (current mechanisms specification 2.1.8-2.1.13).
 */
void pg_rsa_params_clear(pg_rsa_params *p)
{
	if (p == NULL)
		return;
	free(p->label);
	memset(p, 0, sizeof(*p));
}

/* Copies m's parameter to dst, which takes exactly size bytes (false:
 * none, or another size). */
static bool param_copy(const CK_MECHANISM *m, void *dst, size_t size)
{
	if (m->pParameter == NULL || m->ulParameterLen != size)
		return false;
	memcpy(dst, m->pParameter, size);
	return true;
}

/* The hash and the mask generation function of a PSS or OAEP parameter
 * into out (false: either one unknown). */
static bool rsa_hashes(CK_MECHANISM_TYPE hash, CK_RSA_PKCS_MGF_TYPE mgf, pg_rsa_params *out)
{
	out->hash = pg_hash_from_mech(hash);
	out->mgf = pg_hash_from_mgf(mgf);
	return pg_hash_md(out->hash) != NULL && pg_hash_md(out->mgf) != NULL;
}

CK_RV pg_params_pss(const pg_mech *mech, const CK_MECHANISM *m, pg_rsa_params *out)
{
	CK_RSA_PKCS_PSS_PARAMS pss;

	memset(out, 0, sizeof(*out));
	if (!param_copy(m, &pss, sizeof(pss)))
		return CKR_MECHANISM_PARAM_INVALID;
	out->salt = pss.sLen;
	if (!rsa_hashes(pss.hashAlg, pss.mgf, out))
		return CKR_MECHANISM_PARAM_INVALID;
	/* 2.1.14: the hashing mechanisms name their hash in the parameter too. */
	if (mech->hash != PG_HASH_NONE && mech->hash != out->hash)
		return CKR_MECHANISM_PARAM_INVALID;
	return CKR_OK;
}

CK_RV pg_params_oaep(const CK_MECHANISM *m, pg_rsa_params *out)
{
	CK_RSA_PKCS_OAEP_PARAMS oaep;

	memset(out, 0, sizeof(*out));
	if (!param_copy(m, &oaep, sizeof(oaep)) || !rsa_hashes(oaep.hashAlg, oaep.mgf, out))
		return CKR_MECHANISM_PARAM_INVALID;
	if (oaep.ulSourceDataLen > 0 && oaep.pSourceData == NULL)
		return CKR_MECHANISM_PARAM_INVALID;
	/*
	 * 2.1.8: the only source is CKZ_DATA_SPECIFIED. Some callers leave it
	 * 0 when they have no label; that means the same empty label.
	 */
	if (oaep.source != CKZ_DATA_SPECIFIED && (oaep.source != 0 || oaep.ulSourceDataLen > 0))
		return CKR_MECHANISM_PARAM_INVALID;
	if (oaep.ulSourceDataLen > 0) {
		out->label = pg_memdup0(oaep.pSourceData, oaep.ulSourceDataLen);
		if (out->label == NULL)
			return CKR_HOST_MEMORY;
		out->label_len = oaep.ulSourceDataLen;
	}
	return CKR_OK;
}
