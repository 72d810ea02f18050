/*
 * The parameter structures of PKCS#11 v3.0 mechanisms as the RPC wire
 * sees them (params-table.h): for each, its fields and how each travels;
 * for each mechanism, which structure it takes (rpc-mechs.inc, generated
 * from include/p11glue/pkcs11.h).
 */
#include "config.h"

#include "params-table.h"

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
const structure pg_rpc_structures[S_COUNT] = {
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

#include "rpc-mechs.inc"

const mech_entry *
pg_rpc_find_mech(CK_MECHANISM_TYPE mech)
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

