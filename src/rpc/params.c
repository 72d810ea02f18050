/*
 * Mechanisms and their parameters on the RPC wire (see marshal.h).
 *
 * Each parameter structure of PKCS#11 v3.0 that holds pointers (or
 * CK_ULONGs, whose size differs between peers) has a descriptor: its
 * fields in order, each a kind (CK_ULONG, byte, inline byte array,
 * pointer with its length in another field, pointer to a fixed number of
 * bytes, pointer to a nested structure). Which mechanism takes which
 * structure, at C_*Init and in the message functions, is generated from
 * the CKM_ names of include/p11glue/pkcs11.h (gen-rpc.py); the result
 * is included below as rpc-mechs.inc.
 *
 * A parameter travels as u8 form: 0 NULL pointer (u64 length), 1 flat
 * bytes, 2 a described structure (u16 structure id, then its fields).
 * Flat bytes are what every mechanism without a descriptor gets (IVs,
 * key wrap IVs, DH public values); a structure that has a descriptor is
 * never accepted as flat bytes, since the module would follow the
 * pointers inside.
 */
#include "config.h"

#include "marshal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum {
	F_ULONG,        /* CK_ULONG at off */
	F_BYTE,         /* CK_BYTE / CK_BBOOL at off */
	F_FIXED,        /* size bytes inline at off */
	F_PTR,          /* pointer at off, length in bytes in the CK_ULONG at len */
	F_PTR_BITS,     /* pointer at off, length in bits in the CK_ULONG at len */
	F_PTR_FIXED,    /* pointer at off to size bytes */
	F_NESTED,       /* pointer at off to structure number size */
	F_ARRAY,        /* pointer at off to structures number size, as many as
	                 * the CK_ULONG at len says */
	F_TEMPLATE,     /* CK_ATTRIBUTE_PTR at off, count in the CK_ULONG at len */
	F_OUT_HANDLE,   /* CK_OBJECT_HANDLE_PTR at off: the module writes a handle */
};

typedef struct {
	uint8_t kind;
	uint8_t writeback;   /* the module may write the bytes (message functions) */
	uint16_t off;
	uint16_t len;
	uint16_t size;
} field;

typedef struct {
	const char *name;
	size_t size;
	const field *fields;
	size_t n_fields;
} structure;

#define UL(t, m) { F_ULONG, 0, offsetof(t, m), 0, 0 }
#define BY(t, m) { F_BYTE, 0, offsetof(t, m), 0, 0 }
#define FX(t, m, n) { F_FIXED, 0, offsetof(t, m), 0, n }
#define PT(t, m, l) { F_PTR, 0, offsetof(t, m), offsetof(t, l), 0 }
#define PT_WB(t, m, l) { F_PTR, 1, offsetof(t, m), offsetof(t, l), 0 }
#define PB(t, m, l) { F_PTR_BITS, 0, offsetof(t, m), offsetof(t, l), 0 }
#define PB_WB(t, m, l) { F_PTR_BITS, 1, offsetof(t, m), offsetof(t, l), 0 }
#define PF(t, m, n) { F_PTR_FIXED, 0, offsetof(t, m), 0, n }
#define PF_WB(t, m, n) { F_PTR_FIXED, 1, offsetof(t, m), 0, n }
#define NS(t, m, s) { F_NESTED, 0, offsetof(t, m), 0, s }
#define AR(t, m, l, s) { F_ARRAY, 0, offsetof(t, m), offsetof(t, l), s }
#define TM(t, m, l) { F_TEMPLATE, 0, offsetof(t, m), offsetof(t, l), 0 }
#define OH(t, m) { F_OUT_HANDLE, 1, offsetof(t, m), 0, 0 }

enum {
	S_NONE, S_ULONG, S_OAEP, S_PSS, S_RSA_AES_KEY_WRAP, S_ECDH1, S_ECDH2, S_ECMQV,
	S_ECDH_AES_KEY_WRAP, S_X942_DH1, S_X942_DH2, S_X942_MQV, S_KEA, S_EDDSA, S_GCM, S_CCM,
	S_GCM_MESSAGE, S_CCM_MESSAGE, S_AES_CTR, S_DES_CBC_DATA, S_AES_CBC_DATA, S_KDF_STRING,
	S_HKDF, S_PBKD2, S_CHACHA20, S_SALSA20, S_POLY1305, S_POLY1305_MSG, S_RC2_CBC,
	S_RC2_MAC_GENERAL, S_RC5, S_RC5_CBC, S_RC5_MAC_GENERAL, S_PRF_DATA_PARAM, S_DERIVED_KEY,
	S_SP800_108, S_SP800_108_FEEDBACK, S_COUNT
};

static const field f_ulong[] = { { F_ULONG, 0, 0, 0, 0 } };
static const field f_oaep[] = {
	UL(CK_RSA_PKCS_OAEP_PARAMS, hashAlg), UL(CK_RSA_PKCS_OAEP_PARAMS, mgf),
	UL(CK_RSA_PKCS_OAEP_PARAMS, source),
	PT(CK_RSA_PKCS_OAEP_PARAMS, pSourceData, ulSourceDataLen),
	UL(CK_RSA_PKCS_OAEP_PARAMS, ulSourceDataLen),
};
static const field f_pss[] = {
	UL(CK_RSA_PKCS_PSS_PARAMS, hashAlg), UL(CK_RSA_PKCS_PSS_PARAMS, mgf),
	UL(CK_RSA_PKCS_PSS_PARAMS, sLen),
};
static const field f_rsa_aes[] = {
	UL(CK_RSA_AES_KEY_WRAP_PARAMS, ulAESKeyBits),
	NS(CK_RSA_AES_KEY_WRAP_PARAMS, pOAEPParams, S_OAEP),
};
#define ECDH1_FIELDS(t, shared, slen)                                        \
	UL(t, kdf), UL(t, slen), PT(t, shared, slen), UL(t, ulPublicDataLen),     \
	PT(t, pPublicData, ulPublicDataLen)
#define ECDH2_FIELDS(t, shared, slen)                                        \
	ECDH1_FIELDS(t, shared, slen), UL(t, ulPrivateDataLen), UL(t, hPrivateData), \
	UL(t, ulPublicDataLen2), PT(t, pPublicData2, ulPublicDataLen2)
static const field f_ecdh1[] = { ECDH1_FIELDS(CK_ECDH1_DERIVE_PARAMS, pSharedData, ulSharedDataLen) };
static const field f_ecdh2[] = { ECDH2_FIELDS(CK_ECDH2_DERIVE_PARAMS, pSharedData, ulSharedDataLen) };
static const field f_ecmqv[] = {
	ECDH2_FIELDS(CK_ECMQV_DERIVE_PARAMS, pSharedData, ulSharedDataLen),
	UL(CK_ECMQV_DERIVE_PARAMS, publicKey),
};
static const field f_ecdh_aes[] = {
	UL(CK_ECDH_AES_KEY_WRAP_PARAMS, ulAESKeyBits), UL(CK_ECDH_AES_KEY_WRAP_PARAMS, kdf),
	UL(CK_ECDH_AES_KEY_WRAP_PARAMS, ulSharedDataLen),
	PT(CK_ECDH_AES_KEY_WRAP_PARAMS, pSharedData, ulSharedDataLen),
};
static const field f_x942_dh1[] = { ECDH1_FIELDS(CK_X9_42_DH1_DERIVE_PARAMS, pOtherInfo, ulOtherInfoLen) };
static const field f_x942_dh2[] = { ECDH2_FIELDS(CK_X9_42_DH2_DERIVE_PARAMS, pOtherInfo, ulOtherInfoLen) };
static const field f_x942_mqv[] = {
	ECDH2_FIELDS(CK_X9_42_MQV_DERIVE_PARAMS, pOtherInfo, ulOtherInfoLen),
	UL(CK_X9_42_MQV_DERIVE_PARAMS, publicKey),
};
static const field f_kea[] = {
	BY(CK_KEA_DERIVE_PARAMS, isSender), UL(CK_KEA_DERIVE_PARAMS, ulRandomLen),
	PT(CK_KEA_DERIVE_PARAMS, pRandomA, ulRandomLen), PT(CK_KEA_DERIVE_PARAMS, pRandomB, ulRandomLen),
	UL(CK_KEA_DERIVE_PARAMS, ulPublicDataLen), PT(CK_KEA_DERIVE_PARAMS, pPublicData, ulPublicDataLen),
};
static const field f_eddsa[] = {
	BY(CK_EDDSA_PARAMS, phFlag), UL(CK_EDDSA_PARAMS, ulContextDataLen),
	PT(CK_EDDSA_PARAMS, pContextData, ulContextDataLen),
};
static const field f_gcm[] = {
	PT(CK_GCM_PARAMS, pIv, ulIvLen), UL(CK_GCM_PARAMS, ulIvLen), UL(CK_GCM_PARAMS, ulIvBits),
	PT(CK_GCM_PARAMS, pAAD, ulAADLen), UL(CK_GCM_PARAMS, ulAADLen), UL(CK_GCM_PARAMS, ulTagBits),
};
static const field f_ccm[] = {
	UL(CK_CCM_PARAMS, ulDataLen), PT(CK_CCM_PARAMS, pNonce, ulNonceLen),
	UL(CK_CCM_PARAMS, ulNonceLen), PT(CK_CCM_PARAMS, pAAD, ulAADLen), UL(CK_CCM_PARAMS, ulAADLen),
	UL(CK_CCM_PARAMS, ulMACLen),
};
/* PKCS#11 v3.0 §2.12.x: the token may generate the IV and writes the tag. */
static const field f_gcm_message[] = {
	PT_WB(CK_GCM_MESSAGE_PARAMS, pIv, ulIvLen), UL(CK_GCM_MESSAGE_PARAMS, ulIvLen),
	UL(CK_GCM_MESSAGE_PARAMS, ulIvFixedBits), UL(CK_GCM_MESSAGE_PARAMS, ivGenerator),
	PB_WB(CK_GCM_MESSAGE_PARAMS, pTag, ulTagBits), UL(CK_GCM_MESSAGE_PARAMS, ulTagBits),
};
static const field f_ccm_message[] = {
	UL(CK_CCM_MESSAGE_PARAMS, ulDataLen), PT_WB(CK_CCM_MESSAGE_PARAMS, pNonce, ulNonceLen),
	UL(CK_CCM_MESSAGE_PARAMS, ulNonceLen), UL(CK_CCM_MESSAGE_PARAMS, ulNonceFixedBits),
	UL(CK_CCM_MESSAGE_PARAMS, nonceGenerator), PT_WB(CK_CCM_MESSAGE_PARAMS, pMAC, ulMACLen),
	UL(CK_CCM_MESSAGE_PARAMS, ulMACLen),
};
static const field f_aes_ctr[] = { UL(CK_AES_CTR_PARAMS, ulCounterBits), FX(CK_AES_CTR_PARAMS, cb, 16) };
static const field f_des_cbc_data[] = {
	FX(CK_DES_CBC_ENCRYPT_DATA_PARAMS, iv, 8), PT(CK_DES_CBC_ENCRYPT_DATA_PARAMS, pData, length),
	UL(CK_DES_CBC_ENCRYPT_DATA_PARAMS, length),
};
static const field f_aes_cbc_data[] = {
	FX(CK_AES_CBC_ENCRYPT_DATA_PARAMS, iv, 16), PT(CK_AES_CBC_ENCRYPT_DATA_PARAMS, pData, length),
	UL(CK_AES_CBC_ENCRYPT_DATA_PARAMS, length),
};
static const field f_kdf_string[] = {
	PT(CK_KEY_DERIVATION_STRING_DATA, pData, ulLen), UL(CK_KEY_DERIVATION_STRING_DATA, ulLen),
};
static const field f_hkdf[] = {
	BY(CK_HKDF_PARAMS, bExtract), BY(CK_HKDF_PARAMS, bExpand),
	UL(CK_HKDF_PARAMS, prfHashMechanism), UL(CK_HKDF_PARAMS, ulSaltType),
	PT(CK_HKDF_PARAMS, pSalt, ulSaltLen), UL(CK_HKDF_PARAMS, ulSaltLen),
	UL(CK_HKDF_PARAMS, hSaltKey), PT(CK_HKDF_PARAMS, pInfo, ulInfoLen),
	UL(CK_HKDF_PARAMS, ulInfoLen),
};
static const field f_pbkd2[] = {
	UL(CK_PKCS5_PBKD2_PARAMS2, saltSource),
	PT(CK_PKCS5_PBKD2_PARAMS2, pSaltSourceData, ulSaltSourceDataLen),
	UL(CK_PKCS5_PBKD2_PARAMS2, ulSaltSourceDataLen), UL(CK_PKCS5_PBKD2_PARAMS2, iterations),
	UL(CK_PKCS5_PBKD2_PARAMS2, prf), PT(CK_PKCS5_PBKD2_PARAMS2, pPrfData, ulPrfDataLen),
	UL(CK_PKCS5_PBKD2_PARAMS2, ulPrfDataLen),
	PT(CK_PKCS5_PBKD2_PARAMS2, pPassword, ulPasswordLen),
	UL(CK_PKCS5_PBKD2_PARAMS2, ulPasswordLen),
};
static const field f_chacha20[] = {
	PB(CK_CHACHA20_PARAMS, pBlockCounter, blockCounterBits),
	UL(CK_CHACHA20_PARAMS, blockCounterBits), PB(CK_CHACHA20_PARAMS, pNonce, ulNonceBits),
	UL(CK_CHACHA20_PARAMS, ulNonceBits),
};
static const field f_salsa20[] = {
	PF(CK_SALSA20_PARAMS, pBlockCounter, 8), PB(CK_SALSA20_PARAMS, pNonce, ulNonceBits),
	UL(CK_SALSA20_PARAMS, ulNonceBits),
};
static const field f_poly1305[] = {
	PT(CK_SALSA20_CHACHA20_POLY1305_PARAMS, pNonce, ulNonceLen),
	UL(CK_SALSA20_CHACHA20_POLY1305_PARAMS, ulNonceLen),
	PT(CK_SALSA20_CHACHA20_POLY1305_PARAMS, pAAD, ulAADLen),
	UL(CK_SALSA20_CHACHA20_POLY1305_PARAMS, ulAADLen),
};
static const field f_poly1305_msg[] = {
	PT_WB(CK_SALSA20_CHACHA20_POLY1305_MSG_PARAMS, pNonce, ulNonceLen),
	UL(CK_SALSA20_CHACHA20_POLY1305_MSG_PARAMS, ulNonceLen),
	PF_WB(CK_SALSA20_CHACHA20_POLY1305_MSG_PARAMS, pTag, 16),
};
static const field f_rc2_cbc[] = { UL(CK_RC2_CBC_PARAMS, ulEffectiveBits), FX(CK_RC2_CBC_PARAMS, iv, 8) };
static const field f_rc2_mac[] = {
	UL(CK_RC2_MAC_GENERAL_PARAMS, ulEffectiveBits), UL(CK_RC2_MAC_GENERAL_PARAMS, ulMacLength),
};
static const field f_rc5[] = { UL(CK_RC5_PARAMS, ulWordsize), UL(CK_RC5_PARAMS, ulRounds) };
static const field f_rc5_cbc[] = {
	UL(CK_RC5_CBC_PARAMS, ulWordsize), UL(CK_RC5_CBC_PARAMS, ulRounds),
	PT(CK_RC5_CBC_PARAMS, pIv, ulIvLen), UL(CK_RC5_CBC_PARAMS, ulIvLen),
};
static const field f_rc5_mac[] = {
	UL(CK_RC5_MAC_GENERAL_PARAMS, ulWordsize), UL(CK_RC5_MAC_GENERAL_PARAMS, ulRounds),
	UL(CK_RC5_MAC_GENERAL_PARAMS, ulMacLength),
};

/*
 * SP 800-108 (PKCS#11 v3.0 §2.43): data parameters whose pValue is a
 * counter or DKM length format (CK_BBOOL and CK_ULONG fields, passed as
 * their bytes: peers of one architecture), or a byte array; and keys
 * derived besides the main one, each with a template and a handle the
 * module writes back.
 */
static const field f_prf_data[] = {
	UL(CK_PRF_DATA_PARAM, type), PT(CK_PRF_DATA_PARAM, pValue, ulValueLen),
	UL(CK_PRF_DATA_PARAM, ulValueLen),
};
static const field f_derived_key[] = {
	TM(CK_DERIVED_KEY, pTemplate, ulAttributeCount), UL(CK_DERIVED_KEY, ulAttributeCount),
	OH(CK_DERIVED_KEY, phKey),
};
static const field f_sp800_108[] = {
	UL(CK_SP800_108_KDF_PARAMS, prfType), UL(CK_SP800_108_KDF_PARAMS, ulNumberOfDataParams),
	AR(CK_SP800_108_KDF_PARAMS, pDataParams, ulNumberOfDataParams, S_PRF_DATA_PARAM),
	UL(CK_SP800_108_KDF_PARAMS, ulAdditionalDerivedKeys),
	AR(CK_SP800_108_KDF_PARAMS, pAdditionalDerivedKeys, ulAdditionalDerivedKeys, S_DERIVED_KEY),
};
static const field f_sp800_108_feedback[] = {
	UL(CK_SP800_108_FEEDBACK_KDF_PARAMS, prfType),
	UL(CK_SP800_108_FEEDBACK_KDF_PARAMS, ulNumberOfDataParams),
	AR(CK_SP800_108_FEEDBACK_KDF_PARAMS, pDataParams, ulNumberOfDataParams, S_PRF_DATA_PARAM),
	UL(CK_SP800_108_FEEDBACK_KDF_PARAMS, ulIVLen),
	PT(CK_SP800_108_FEEDBACK_KDF_PARAMS, pIV, ulIVLen),
	UL(CK_SP800_108_FEEDBACK_KDF_PARAMS, ulAdditionalDerivedKeys),
	AR(CK_SP800_108_FEEDBACK_KDF_PARAMS, pAdditionalDerivedKeys, ulAdditionalDerivedKeys,
	   S_DERIVED_KEY),
};

#define ST(name, type, f) [name] = { #type, sizeof(type), f, PG_N_ELEMENTS(f) }
static const structure structures[S_COUNT] = {
	ST(S_ULONG, CK_ULONG, f_ulong),
	ST(S_OAEP, CK_RSA_PKCS_OAEP_PARAMS, f_oaep),
	ST(S_PSS, CK_RSA_PKCS_PSS_PARAMS, f_pss),
	ST(S_RSA_AES_KEY_WRAP, CK_RSA_AES_KEY_WRAP_PARAMS, f_rsa_aes),
	ST(S_ECDH1, CK_ECDH1_DERIVE_PARAMS, f_ecdh1),
	ST(S_ECDH2, CK_ECDH2_DERIVE_PARAMS, f_ecdh2),
	ST(S_ECMQV, CK_ECMQV_DERIVE_PARAMS, f_ecmqv),
	ST(S_ECDH_AES_KEY_WRAP, CK_ECDH_AES_KEY_WRAP_PARAMS, f_ecdh_aes),
	ST(S_X942_DH1, CK_X9_42_DH1_DERIVE_PARAMS, f_x942_dh1),
	ST(S_X942_DH2, CK_X9_42_DH2_DERIVE_PARAMS, f_x942_dh2),
	ST(S_X942_MQV, CK_X9_42_MQV_DERIVE_PARAMS, f_x942_mqv),
	ST(S_KEA, CK_KEA_DERIVE_PARAMS, f_kea),
	ST(S_EDDSA, CK_EDDSA_PARAMS, f_eddsa),
	ST(S_GCM, CK_GCM_PARAMS, f_gcm),
	ST(S_CCM, CK_CCM_PARAMS, f_ccm),
	ST(S_GCM_MESSAGE, CK_GCM_MESSAGE_PARAMS, f_gcm_message),
	ST(S_CCM_MESSAGE, CK_CCM_MESSAGE_PARAMS, f_ccm_message),
	ST(S_AES_CTR, CK_AES_CTR_PARAMS, f_aes_ctr),
	ST(S_DES_CBC_DATA, CK_DES_CBC_ENCRYPT_DATA_PARAMS, f_des_cbc_data),
	ST(S_AES_CBC_DATA, CK_AES_CBC_ENCRYPT_DATA_PARAMS, f_aes_cbc_data),
	ST(S_KDF_STRING, CK_KEY_DERIVATION_STRING_DATA, f_kdf_string),
	ST(S_HKDF, CK_HKDF_PARAMS, f_hkdf),
	ST(S_PBKD2, CK_PKCS5_PBKD2_PARAMS2, f_pbkd2),
	ST(S_CHACHA20, CK_CHACHA20_PARAMS, f_chacha20),
	ST(S_SALSA20, CK_SALSA20_PARAMS, f_salsa20),
	ST(S_POLY1305, CK_SALSA20_CHACHA20_POLY1305_PARAMS, f_poly1305),
	ST(S_POLY1305_MSG, CK_SALSA20_CHACHA20_POLY1305_MSG_PARAMS, f_poly1305_msg),
	ST(S_RC2_CBC, CK_RC2_CBC_PARAMS, f_rc2_cbc),
	ST(S_RC2_MAC_GENERAL, CK_RC2_MAC_GENERAL_PARAMS, f_rc2_mac),
	ST(S_RC5, CK_RC5_PARAMS, f_rc5),
	ST(S_RC5_CBC, CK_RC5_CBC_PARAMS, f_rc5_cbc),
	ST(S_RC5_MAC_GENERAL, CK_RC5_MAC_GENERAL_PARAMS, f_rc5_mac),
	ST(S_PRF_DATA_PARAM, CK_PRF_DATA_PARAM, f_prf_data),
	ST(S_DERIVED_KEY, CK_DERIVED_KEY, f_derived_key),
	ST(S_SP800_108, CK_SP800_108_KDF_PARAMS, f_sp800_108),
	ST(S_SP800_108_FEEDBACK, CK_SP800_108_FEEDBACK_KDF_PARAMS, f_sp800_108_feedback),
};

/* { mechanism, structure at C_*Init, structure in message functions },
 * sorted by mechanism. */
typedef struct {
	CK_MECHANISM_TYPE mech;
	uint8_t init;
	uint8_t message;
} mech_entry;

#include "rpc-mechs.inc"

static const mech_entry *
find_mech(CK_MECHANISM_TYPE mech)
{
	size_t lo = 0, hi = PG_N_ELEMENTS(mech_table);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mech_table[mid].mech == mech)
			return &mech_table[mid];
		if (mech_table[mid].mech < mech)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Structures
 */

static CK_ULONG
ulong_at(const void *base, size_t off)
{
	CK_ULONG v;

	memcpy(&v, (const unsigned char *)base + off, sizeof(v));
	return v;
}

static void *
ptr_at(const void *base, size_t off)
{
	void *p;

	memcpy(&p, (const unsigned char *)base + off, sizeof(p));
	return p;
}

/* The byte length of a pointer field's data, from the structure; false
 * when it cannot be represented. */
static bool
data_len(const field *f, const void *base, size_t *len)
{
	CK_ULONG n;

	switch (f->kind) {
	case F_PTR:
		n = ulong_at(base, f->len);
		break;
	case F_PTR_BITS:
		n = ulong_at(base, f->len);
		n = n / 8 + (n % 8 != 0);
		break;
	default:
		n = f->size;
	}
	if (n > PG_RPC_MAX_BODY)
		return false;
	*len = n;
	return true;
}

static void add_structure(pg_rpc_out *out, int id, const void *base, int depth);

static void
add_field(pg_rpc_out *out, const field *f, const void *base, int depth)
{
	const unsigned char *p = (const unsigned char *)base + f->off;
	size_t len;
	void *ptr;

	switch (f->kind) {
	case F_ULONG:
		pg_rpc_add_u64(out, ulong_at(base, f->off));
		break;
	case F_BYTE:
		pg_rpc_add_u8(out, *p);
		break;
	case F_FIXED:
		pg_rpc_add_raw(out, p, f->size);
		break;
	case F_NESTED:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr)
			add_structure(out, f->size, ptr, depth + 1);
		break;
	case F_ARRAY:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr == NULL)
			break;
		len = ulong_at(base, f->len);
		if (len > PG_RPC_MAX_COUNT) {
			out->failed = true;
			break;
		}
		pg_rpc_add_u32(out, (uint32_t)len);
		for (size_t i = 0; i < len && !out->failed; i++)
			add_structure(out, f->size, (unsigned char *)ptr + i * structures[f->size].size,
			              depth + 1);
		break;
	case F_TEMPLATE:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr)
			pg_rpc_add_template(out, ptr, ulong_at(base, f->len));
		break;
	case F_OUT_HANDLE:
		pg_rpc_add_u8(out, ptr_at(base, f->off) != NULL);
		break;
	default:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr == NULL)
			break;
		if (!data_len(f, base, &len))
			out->failed = true;
		else
			pg_rpc_add_bytes(out, ptr, len);
	}
}

static void
add_structure(pg_rpc_out *out, int id, const void *base, int depth)
{
	const structure *s = &structures[id];

	if (depth > 3) {
		out->failed = true;
		return;
	}
	for (size_t i = 0; i < s->n_fields; i++)
		add_field(out, &s->fields[i], base, depth);
}

static void *get_structure(pg_rpc_in *in, pg_rpc_arena **arena, int id, int depth);

/* *counted gets the number of elements an array or template field carried. */
static bool
get_field(pg_rpc_in *in, pg_rpc_arena **arena, const field *f, unsigned char *base, int depth,
          size_t *counted)
{
	const unsigned char *bytes;
	CK_ULONG v;
	void *ptr = NULL;
	size_t len;

	switch (f->kind) {
	case F_ULONG:
		v = pg_rpc_get_ulong(in);
		memcpy(base + f->off, &v, sizeof(v));
		return !in->failed;
	case F_BYTE:
		base[f->off] = pg_rpc_get_u8(in);
		return !in->failed;
	case F_FIXED:
		bytes = pg_rpc_get_raw(in, f->size);
		if (bytes)
			memcpy(base + f->off, bytes, f->size);
		return !in->failed;
	case F_NESTED:
		if (pg_rpc_get_u8(in) && (ptr = get_structure(in, arena, f->size, depth + 1)) == NULL)
			return false;
		break;
	case F_ARRAY: {
		uint32_t n;
		size_t size = structures[f->size].size;
		if (!pg_rpc_get_u8(in))
			break;
		n = pg_rpc_get_count(in, PG_RPC_MAX_COUNT);
		/* Each element takes at least a byte: a count beyond the input is a lie. */
		if (in->failed || n > in->len - in->off)
			return in->failed = true, false;
		ptr = pg_rpc_arena_alloc(arena, (n ? n : 1) * size);
		if (ptr == NULL)
			return in->failed = true, false;
		for (uint32_t i = 0; i < n; i++) {
			void *one = get_structure(in, arena, f->size, depth + 1);
			if (one == NULL)
				return false;
			memcpy((unsigned char *)ptr + i * size, one, size);
		}
		*counted = n;
		break;
	}
	case F_TEMPLATE: {
		CK_ATTRIBUTE *t;
		CK_ULONG n;
		if (!pg_rpc_get_u8(in))
			break;
		if (!pg_rpc_get_template(in, arena, &t, &n))
			return false;
		ptr = t ? (void *)t : pg_rpc_arena_alloc(arena, 1);
		*counted = n;
		break;
	}
	case F_OUT_HANDLE:
		if (pg_rpc_get_u8(in) &&
		    (ptr = pg_rpc_arena_alloc(arena, sizeof(CK_OBJECT_HANDLE))) == NULL)
			return in->failed = true, false;
		break;
	default:
		if (!pg_rpc_get_u8(in))
			break;
		bytes = pg_rpc_get_bytes(in, &len);
		ptr = bytes ? pg_rpc_arena_alloc(arena, len) : NULL;
		if (ptr == NULL)
			return in->failed = true, false;
		memcpy(ptr, bytes, len);
		break;
	}
	memcpy(base + f->off, &ptr, sizeof(ptr));
	return !in->failed;
}

static void *
get_structure(pg_rpc_in *in, pg_rpc_arena **arena, int id, int depth)
{
	const structure *s;
	unsigned char *base;
	size_t given[16] = { 0 }, want;

	if (depth > 3 || id <= S_NONE || id >= S_COUNT)
		return in->failed = true, NULL;
	s = &structures[id];
	base = pg_rpc_arena_alloc(arena, s->size);
	if (base == NULL)
		return in->failed = true, NULL;
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		size_t before = in->off, counted = 0;
		if (!get_field(in, arena, f, base, depth, &counted))
			return NULL;
		/* The bytes a pointer field carried: total minus flag and prefix;
		 * the elements of an array or template. */
		if (f->kind == F_ARRAY || f->kind == F_TEMPLATE)
			given[i] = counted;
		else
			given[i] = in->off - before > 5 ? in->off - before - 5 : 0;
	}
	/* Every pointer's data must be exactly as long as its length field
	 * says: the module reads that many bytes. */
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		if (ptr_at(base, f->off) == NULL)
			continue;
		if (f->kind == F_ARRAY || f->kind == F_TEMPLATE) {
			/* As many elements as the count field says. */
			if (ulong_at(base, f->len) != given[i])
				return in->failed = true, NULL;
			continue;
		}
		if (f->kind != F_PTR && f->kind != F_PTR_BITS && f->kind != F_PTR_FIXED)
			continue;
		if (!data_len(f, base, &want) || want != given[i])
			return in->failed = true, NULL;
	}
	return base;
}

/* ---------------------------------------------------------------------------
 * Parameters
 */

static void
add_param(pg_rpc_out *out, int id, const void *param, CK_ULONG len)
{
	if (param == NULL) {
		pg_rpc_add_u8(out, 0);
		pg_rpc_add_u64(out, len);
	} else if (id != S_NONE && len == structures[id].size) {
		pg_rpc_add_u8(out, 2);
		pg_rpc_add_u32(out, (uint32_t)id);
		add_structure(out, id, param, 0);
	} else {
		pg_rpc_add_u8(out, 1);
		pg_rpc_add_bytes(out, param, len);
	}
}

/* *id gets the structure (S_NONE for flat bytes or NULL). */
static bool
get_param(pg_rpc_in *in, pg_rpc_arena **arena, const mech_entry *e, bool message,
          void **param, CK_ULONG *len, int *id)
{
	const unsigned char *bytes;
	size_t n;
	int expected = e ? (message ? e->message : e->init) : S_NONE;

	*param = NULL;
	*len = 0;
	*id = S_NONE;
	switch (pg_rpc_get_u8(in)) {
	case 0:
		*len = pg_rpc_get_ulong(in);
		return !in->failed;
	case 1:
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL)
			return false;
		/* A described structure as flat bytes would hand the module
		 * pointers from another process. */
		if (expected != S_NONE && n == structures[expected].size)
			return in->failed = true, false;
		*param = pg_rpc_arena_alloc(arena, n);
		if (*param == NULL)
			return in->failed = true, false;
		memcpy(*param, bytes, n);
		*len = n;
		return true;
	case 2:
		*id = (int)pg_rpc_get_u32(in);
		if (in->failed || *id != expected || *id == S_NONE)
			return in->failed = true, false;
		*param = get_structure(in, arena, *id, 0);
		*len = structures[*id].size;
		return *param != NULL;
	default:
		return in->failed = true, false;
	}
}

void
pg_rpc_add_mechanism(pg_rpc_out *out, const CK_MECHANISM *mech)
{
	const mech_entry *e;

	pg_rpc_add_u8(out, mech != NULL);
	if (mech == NULL)
		return;
	e = find_mech(mech->mechanism);
	pg_rpc_add_u64(out, mech->mechanism);
	add_param(out, e ? e->init : S_NONE, mech->pParameter, mech->ulParameterLen);
}

bool
pg_rpc_get_mechanism(pg_rpc_in *in, pg_rpc_arena **arena, CK_MECHANISM **mech)
{
	CK_MECHANISM *m;
	int id;

	*mech = NULL;
	if (!pg_rpc_get_u8(in))
		return !in->failed;
	m = pg_rpc_arena_alloc(arena, sizeof(*m));
	if (m == NULL)
		return in->failed = true, false;
	m->mechanism = pg_rpc_get_ulong(in);
	if (!get_param(in, arena, find_mech(m->mechanism), false, &m->pParameter,
	               &m->ulParameterLen, &id))
		return false;
	*mech = m;
	return true;
}

void
pg_rpc_add_msg_param(pg_rpc_out *out, CK_MECHANISM_TYPE mech, const void *param, CK_ULONG len)
{
	const mech_entry *e = find_mech(mech);

	pg_rpc_add_u64(out, mech);
	add_param(out, e ? e->message : S_NONE, param, len);
}

bool
pg_rpc_get_msg_param(pg_rpc_in *in, pg_rpc_arena **arena, void **param, CK_ULONG *len,
                     int *kind)
{
	CK_MECHANISM_TYPE mech = pg_rpc_get_ulong(in);

	return get_param(in, arena, find_mech(mech), true, param, len, kind);
}

/*
 * After the call: flat parameters come back whole; described ones as the
 * bytes of their write-back fields, in order.
 */
void
pg_rpc_add_msg_param_result(pg_rpc_out *out, int kind, const void *param, CK_ULONG len)
{
	const structure *s;
	size_t n;

	if (param == NULL)
		return;
	if (kind == S_NONE) {
		pg_rpc_add_bytes(out, param, len);
		return;
	}
	s = &structures[kind];
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(param, f->off);
		if (!f->writeback || p == NULL || f->kind == F_OUT_HANDLE)
			continue;
		if (!data_len(f, param, &n))
			out->failed = true;
		else
			pg_rpc_add_bytes(out, p, n);
	}
}

bool
pg_rpc_get_msg_param_result(pg_rpc_in *in, CK_MECHANISM_TYPE mech, void *param, CK_ULONG len)
{
	const mech_entry *e = find_mech(mech);
	int kind = e ? e->message : S_NONE;
	const unsigned char *bytes;
	const structure *s;
	size_t n, want;

	if (param == NULL)
		return true;
	if (kind == S_NONE || len != structures[kind].size) {
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL || n != len)
			return in->failed = true, false;
		memcpy(param, bytes, n);
		return true;
	}
	s = &structures[kind];
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(param, f->off);
		if (!f->writeback || p == NULL || f->kind == F_OUT_HANDLE)
			continue;
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL || !data_len(f, param, &want) || n != want)
			return in->failed = true, false;
		memcpy(p, bytes, n);
	}
	return !in->failed;
}

/* ---------------------------------------------------------------------------
 * Handles a module writes into a mechanism's parameter (C_DeriveKey with
 * SP 800-108's additional keys): each output handle of the structure, in
 * order, through arrays and nested structures, as u64.
 */

static void
add_handles(pg_rpc_out *out, int id, const void *base, int depth)
{
	const structure *s = &structures[id];

	if (depth > 3)
		return;
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(base, f->off);
		if (p == NULL)
			continue;
		if (f->kind == F_OUT_HANDLE) {
			pg_rpc_add_u64(out, *(CK_OBJECT_HANDLE *)p);
		} else if (f->kind == F_NESTED) {
			add_handles(out, f->size, p, depth + 1);
		} else if (f->kind == F_ARRAY) {
			CK_ULONG n = ulong_at(base, f->len);
			for (CK_ULONG k = 0; k < n && k < PG_RPC_MAX_COUNT; k++)
				add_handles(out, f->size, (unsigned char *)p + k * structures[f->size].size,
				            depth + 1);
		}
	}
}

static void
get_handles(pg_rpc_in *in, int id, const void *base, int depth)
{
	const structure *s = &structures[id];

	if (depth > 3)
		return;
	for (size_t i = 0; i < s->n_fields && !in->failed; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(base, f->off);
		if (p == NULL)
			continue;
		if (f->kind == F_OUT_HANDLE) {
			*(CK_OBJECT_HANDLE *)p = pg_rpc_get_ulong(in);
		} else if (f->kind == F_NESTED) {
			get_handles(in, f->size, p, depth + 1);
		} else if (f->kind == F_ARRAY) {
			CK_ULONG n = ulong_at(base, f->len);
			for (CK_ULONG k = 0; k < n && k < PG_RPC_MAX_COUNT && !in->failed; k++)
				get_handles(in, f->size, (unsigned char *)p + k * structures[f->size].size,
				            depth + 1);
		}
	}
}

/* The structure a mechanism's parameter was sent as, or S_NONE. */
static int
sent_as(const CK_MECHANISM *mech)
{
	const mech_entry *e = mech ? find_mech(mech->mechanism) : NULL;

	if (e == NULL || e->init == S_NONE || mech->pParameter == NULL ||
	    mech->ulParameterLen != structures[e->init].size)
		return S_NONE;
	return e->init;
}

void
pg_rpc_add_mechanism_result(pg_rpc_out *out, const CK_MECHANISM *mech)
{
	int id = sent_as(mech);

	if (id != S_NONE)
		add_handles(out, id, mech->pParameter, 0);
}

bool
pg_rpc_get_mechanism_result(pg_rpc_in *in, const CK_MECHANISM *mech)
{
	int id = sent_as(mech);

	if (id != S_NONE)
		get_handles(in, id, mech->pParameter, 0);
	return !in->failed;
}
