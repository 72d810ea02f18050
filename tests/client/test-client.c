/*
 * p11glue-client.so against `p11glue server` serving Debian's SoftHSM2:
 * the calls, their exact return codes and output-buffer semantics
 * compared with SoftHSM2 called directly, mechanisms with parameters,
 * isolation of clients, a client killed mid-call, the server going away
 * and coming back, threads sharing one connection, many clients, fork.
 */
#define _GNU_SOURCE
#include "config.h"

#include "initargs.h"
#include "served.h"
#include "server.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>

static CK_FUNCTION_LIST_3_0 *cl;      /* through the server */
static CK_FUNCTION_LIST_3_0 *direct;  /* SoftHSM2 in this process */

static void
setup(void)
{
	setup_env();
	start_server();
	cl = load(client_path);
}

static void
setup_direct(void)
{
	setup();
	direct = load(softhsm_path);
}

/*
 * SoftHSM2 in this process, started once the served one made the token:
 * SoftHSM reads its tokens at C_Initialize and numbers initialized
 * tokens' slots its own way, so each side finds the token by label.
 */
static CK_SLOT_ID
direct_init(const char *label)
{
	pg_assert_int_eq(direct->C_Initialize(NULL), CKR_OK);
	return find_token(direct, label);
}

static void
teardown(void)
{
	stop_server();
}

/* ---------------------------------------------------------------------------
 * Initialization and addresses
 */

static void
test_addresses(void)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING };
	CK_ULONG n;

	/* No address: the user's session service, started on demand (not
	 * here: P11GLUE_AUTOSTART=0, and a runtime directory of the case's
	 * own where nothing listens). */
	unsetenv("P11GLUE_SERVER_ADDRESS");
	setenv("XDG_RUNTIME_DIR", pg_test_tmpdir(), 1);
	setenv("P11GLUE_AUTOSTART", "0", 1);
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 0);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	unsetenv("P11GLUE_AUTOSTART");
	/* pReserved is read only from a caller known to pass a string there. */
	{
		CK_C_INITIALIZE_ARGS junk = { .flags = CKF_OS_LOCKING_OK, .pReserved = (void *)1 };
		pg_assert_int_eq(cl->C_Initialize(&junk), CKR_ARGUMENTS_BAD);
		junk.pReserved = "remote=unix:path=/nonexistent";
		pg_assert_int_eq(cl->C_Initialize(&junk), CKR_ARGUMENTS_BAD);
	}
	args.pReserved = "remote=tcp:localhost:1";
	pg_assert_int_eq(cl->C_Initialize(&args), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, NULL, &n), CKR_CRYPTOKI_NOT_INITIALIZED);
	/* The registry's way: the reserved string names the server. */
	char reserved[700];
	snprintf(reserved, sizeof(reserved), "remote=%s", address);
	args.pReserved = reserved;
	pg_assert_int_eq(cl->C_Initialize(&args), CKR_OK);
	pg_assert_int_eq(cl->C_Initialize(&args), CKR_CRYPTOKI_ALREADY_INITIALIZED);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	pg_assert_int_eq(cl->C_Finalize((void *)1), CKR_ARGUMENTS_BAD);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_CRYPTOKI_NOT_INITIALIZED);
	/* Partial mutex callbacks are refused as by any module. */
	args = (CK_C_INITIALIZE_ARGS){ .CreateMutex = (CK_CREATEMUTEX)1 };
	pg_assert_int_eq(cl->C_Initialize(&args), CKR_ARGUMENTS_BAD);
}

static void
test_info_and_slots(void)
{
	CK_INFO info;
	CK_SLOT_ID slots[4];
	CK_SLOT_INFO si, dsi;
	CK_ULONG n;
	CK_INTERFACE_PTR iface;

	CK_INFO dinfo;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(direct->C_Initialize(NULL), CKR_OK);
	pg_assert_int_eq(cl->C_GetInfo(&info), CKR_OK);
	pg_assert_int_eq(direct->C_GetInfo(&dinfo), CKR_OK);
	pg_assert_mem_eq(&info.manufacturerID, 32, &dinfo.manufacturerID, 32);
	pg_assert_mem_eq(&info.libraryDescription, 32, &dinfo.libraryDescription, 32);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, NULL, NULL), CKR_ARGUMENTS_BAD);
	n = 0;
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 1);
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert_int_eq(cl->C_GetSlotInfo(slots[0], &si), CKR_OK);
	pg_assert_int_eq(direct->C_GetSlotInfo(slots[0], &dsi), CKR_OK);
	pg_assert_mem_eq(&si.slotDescription, 64, &dsi.slotDescription, 64);
	pg_assert_int_eq(cl->C_GetSlotInfo(4242, &si), direct->C_GetSlotInfo(4242, &dsi));
	pg_assert_int_eq(cl->C_GetTokenInfo(4242, NULL), CKR_ARGUMENTS_BAD);
	/* Hot-plug: SoftHSM adds a free slot after C_InitToken. */
	init_token(cl, "remote");
	n = 4;
	pg_assert_int_eq(cl->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	/* Interfaces: 3.0 and 2.40 lists. */
	pg_assert_int_eq(((CK_FUNCTION_LIST_3_0 *)cl)->C_GetInterfaceList(NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	pg_assert_int_eq(cl->C_GetInterface((CK_UTF8CHAR_PTR)"PKCS 11", &(CK_VERSION){ 2, 40 },
	                                    &iface, 0), CKR_OK);
	pg_assert_int_eq(((CK_FUNCTION_LIST *)iface->pFunctionList)->version.minor, 40);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* ---------------------------------------------------------------------------
 * Calls compared with SoftHSM2 itself
 */

static void
test_sign_and_buffers(void)
{
	unsigned char hash[32], sig[80];
	CK_MECHANISM ecdsa = { CKM_ECDSA, NULL, 0 };
	CK_OBJECT_HANDLE pub, priv;
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;
	CK_ULONG len;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "remote");
	s = open_session(cl, slot, false);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_PUBLIC_SESSION);
	pg_assert_ulong_eq(info.slotID, slot);
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)"000000", 6), CKR_PIN_INCORRECT);
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 6), CKR_OK);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	ec_key_pair(cl, s, "k", true, &pub, &priv);
	pg_assert(pub != priv);
	memset(hash, 7, sizeof(hash));
	/* Size query, too small, then the signature (PKCS#11 v3.0 §5.2). */
	pg_assert_int_eq(cl->C_SignInit(s, &ecdsa, priv), CKR_OK);
	pg_assert_int_eq(cl->C_Sign(s, hash, 32, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 64);
	len = 10;
	pg_assert_int_eq(cl->C_Sign(s, hash, 32, sig, &len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(len, 64);
	len = sizeof(sig);
	pg_assert_int_eq(cl->C_Sign(s, hash, 32, sig, &len), CKR_OK);
	pg_assert_int_eq(len, 64);
	/* The operation is over: another C_Sign is refused, as SoftHSM does. */
	pg_assert_int_eq(cl->C_Sign(s, hash, 32, sig, &len), CKR_OPERATION_NOT_INITIALIZED);
	pg_assert_int_eq(cl->C_Sign(s, hash, 32, sig, NULL), CKR_ARGUMENTS_BAD);
	/* Verified by SoftHSM directly (same token files). */
	CK_SESSION_HANDLE ds;
	CK_OBJECT_HANDLE dpub;
	CK_ULONG found = 0;
	CK_OBJECT_CLASS pubc = CKO_PUBLIC_KEY;
	CK_ATTRIBUTE find[] = { { CKA_CLASS, &pubc, sizeof(pubc) }, { CKA_LABEL, "k", 1 } };
	ds = open_session(direct, direct_init("remote"), false);
	pg_assert_int_eq(direct->C_FindObjectsInit(ds, find, 2), CKR_OK);
	pg_assert_int_eq(direct->C_FindObjects(ds, &dpub, 1, &found), CKR_OK);
	pg_assert_int_eq(found, 1);
	pg_assert_int_eq(direct->C_FindObjectsFinal(ds), CKR_OK);
	pg_assert_int_eq(direct->C_VerifyInit(ds, &ecdsa, dpub), CKR_OK);
	pg_assert_int_eq(direct->C_Verify(ds, hash, 32, sig, 64), CKR_OK);
	/* And by the client: good, then tampered. */
	pg_assert_int_eq(cl->C_VerifyInit(s, &ecdsa, pub), CKR_OK);
	pg_assert_int_eq(cl->C_Verify(s, hash, 32, sig, 64), CKR_OK);
	sig[5] ^= 1;
	pg_assert_int_eq(cl->C_VerifyInit(s, &ecdsa, pub), CKR_OK);
	pg_assert_int_eq(cl->C_Verify(s, hash, 32, sig, 64), CKR_SIGNATURE_INVALID);
	/* Multi-part (SoftHSM's ECDSA is single-part: a digest), with a
	 * size query at the end. */
	CK_MECHANISM sha = { CKM_SHA256, NULL, 0 };
	unsigned char d1[32], d2[32];
	CK_ULONG l2 = 32;
	pg_assert_int_eq(cl->C_DigestInit(s, &sha), CKR_OK);
	pg_assert_int_eq(cl->C_DigestUpdate(s, hash, 16), CKR_OK);
	pg_assert_int_eq(cl->C_DigestUpdate(s, hash + 16, 16), CKR_OK);
	pg_assert_int_eq(cl->C_DigestFinal(s, NULL, &len), CKR_OK);
	pg_assert_int_eq(len, 32);
	len = 31;
	pg_assert_int_eq(cl->C_DigestFinal(s, d1, &len), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(len, 32);
	pg_assert_int_eq(cl->C_DigestFinal(s, d1, &len), CKR_OK);
	pg_assert_int_eq(cl->C_DigestInit(s, &sha), CKR_OK);
	pg_assert_int_eq(cl->C_Digest(s, hash, 32, d2, &l2), CKR_OK);
	pg_assert_mem_eq(d1, len, d2, l2);
	pg_assert_int_eq(cl->C_Logout(s), CKR_OK);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(cl->C_CloseSession(s), CKR_OK);
	pg_assert_int_eq(cl->C_CloseSession(s), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

static void
test_attributes(void)
{
	CK_OBJECT_HANDLE pub, priv, objs[4];
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;
	CK_OBJECT_CLASS cls = 0;
	CK_KEY_TYPE kt = 0;
	unsigned char point[100], value[100];
	CK_ULONG found, size;
	CK_ATTRIBUTE a[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_EC_POINT, NULL, 0 },
	};
	CK_ATTRIBUTE sens[] = { { CKA_LABEL, value, sizeof(value) }, { CKA_VALUE, value, sizeof(value) } };
	CK_ATTRIBUTE bad[] = { { CKA_LABEL, value, 0 } };
	CK_ATTRIBUTE inv[] = { { 0x7ffffff0UL, value, 4 } };

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "attrs");
	s = open_session(cl, slot, true);
	ec_key_pair(cl, s, "a", false, &pub, &priv);
	ec_key_pair(cl, s, "b", false, &objs[0], &objs[1]);
	/* Size query first, then the value. */
	pg_assert_int_eq(cl->C_GetAttributeValue(s, pub, a, 3), CKR_OK);
	pg_assert_ulong_eq(cls, CKO_PUBLIC_KEY);
	pg_assert_ulong_eq(kt, CKK_EC);
	pg_assert_int_eq(a[2].ulValueLen, 67);
	a[2].pValue = point;
	pg_assert_int_eq(cl->C_GetAttributeValue(s, pub, a, 3), CKR_OK);
	pg_assert_int_eq(point[0], 0x04);
	/* A sensitive value: CKR_ATTRIBUTE_SENSITIVE, the others filled. */
	pg_assert_int_eq(cl->C_GetAttributeValue(s, priv, sens, 2), CKR_ATTRIBUTE_SENSITIVE);
	pg_assert_mem_eq(value, sens[0].ulValueLen, "a", 1);
	pg_assert_ulong_eq(sens[1].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_int_eq(cl->C_GetAttributeValue(s, priv, bad, 1), CKR_BUFFER_TOO_SMALL);
	pg_assert_ulong_eq(bad[0].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_int_eq(cl->C_GetAttributeValue(s, priv, inv, 1), CKR_ATTRIBUTE_TYPE_INVALID);
	pg_assert_ulong_eq(inv[0].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	/* SoftHSM answers a size of its own; it comes through. */
	pg_assert_int_eq(cl->C_GetObjectSize(s, pub, &size), CKR_OK);
	pg_assert(size > 0);
	/* Set, then read back. */
	CK_ATTRIBUTE lbl[] = { { CKA_LABEL, "renamed", 7 } };
	pg_assert_int_eq(cl->C_SetAttributeValue(s, pub, lbl, 1), CKR_OK);
	sens[0].ulValueLen = sizeof(value);
	pg_assert_int_eq(cl->C_GetAttributeValue(s, pub, sens, 1), CKR_OK);
	pg_assert_mem_eq(value, sens[0].ulValueLen, "renamed", 7);
	/* Find with a max count of 1, one object at a time. */
	CK_OBJECT_CLASS pc = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE find[] = { { CKA_CLASS, &pc, sizeof(pc) } };
	pg_assert_int_eq(cl->C_FindObjectsInit(s, find, 1), CKR_OK);
	pg_assert_int_eq(cl->C_FindObjects(s, objs, 1, &found), CKR_OK);
	pg_assert_int_eq(found, 1);
	pg_assert_int_eq(cl->C_FindObjects(s, objs + 1, 1, &found), CKR_OK);
	pg_assert_int_eq(found, 1);
	pg_assert(objs[0] != objs[1]);
	pg_assert_int_eq(cl->C_FindObjects(s, objs + 2, 2, &found), CKR_OK);
	pg_assert_int_eq(found, 0);
	pg_assert_int_eq(cl->C_FindObjectsFinal(s), CKR_OK);
	pg_assert_int_eq(cl->C_DestroyObject(s, pub), CKR_OK);
	pg_assert_int_eq(cl->C_GetAttributeValue(s, pub, a, 1), CKR_OBJECT_HANDLE_INVALID);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* The same mechanism list as SoftHSM's own, nothing dropped. */
static void
test_mechanism_list(void)
{
	CK_MECHANISM_TYPE ours[256], theirs[256];
	CK_MECHANISM_INFO mi, dmi;
	CK_ULONG n = 256, m = 256, k = 1;
	CK_SLOT_ID slot, dslot;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "mechs");
	dslot = direct_init("mechs");
	pg_assert_int_eq(cl->C_GetMechanismList(slot, NULL, &k), CKR_OK);
	pg_assert_int_eq(cl->C_GetMechanismList(slot, ours, &n), CKR_OK);
	pg_assert_int_eq(direct->C_GetMechanismList(dslot, theirs, &m), CKR_OK);
	pg_assert_int_eq(k, m);
	pg_assert_mem_eq(ours, n * sizeof(CK_MECHANISM_TYPE), theirs, m * sizeof(CK_MECHANISM_TYPE));
	k = 1;
	pg_assert_int_eq(cl->C_GetMechanismList(slot, ours, &k), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(k, m);
	for (CK_ULONG i = 0; i < n; i++) {
		/* The same bytes before: SoftHSM leaves some flags as it finds them. */
		memset(&mi, 0, sizeof(mi));
		memset(&dmi, 0, sizeof(dmi));
		pg_assert_int_eq(cl->C_GetMechanismInfo(slot, ours[i], &mi), CKR_OK);
		pg_assert_int_eq(direct->C_GetMechanismInfo(dslot, ours[i], &dmi), CKR_OK);
		pg_assert_mem_eq(&mi, sizeof(mi), &dmi, sizeof(dmi));
	}
	pg_assert_int_eq(cl->C_GetMechanismInfo(slot, 0x7ffffff0UL, &mi),
	                 direct->C_GetMechanismInfo(dslot, 0x7ffffff0UL, &dmi));
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

static bool
has_mechanism(CK_SLOT_ID slot, CK_MECHANISM_TYPE type)
{
	CK_MECHANISM_INFO mi;

	return cl->C_GetMechanismInfo(slot, type, &mi) == CKR_OK;
}

/* A token AES key both sides can use (public object, known value). */
static CK_OBJECT_HANDLE
aes_key(CK_FUNCTION_LIST_3_0 *f, CK_SESSION_HANDLE s, const char *label)
{
	static const unsigned char value[32] = "0123456789abcdef0123456789abcdef";
	CK_OBJECT_CLASS c = CKO_SECRET_KEY;
	CK_KEY_TYPE k = CKK_AES;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &c, sizeof(c) }, { CKA_KEY_TYPE, &k, sizeof(k) },
		{ CKA_VALUE, (void *)value, 32 }, { CKA_TOKEN, &no, 1 }, { CKA_ENCRYPT, &yes, 1 },
		{ CKA_DECRYPT, &yes, 1 }, { CKA_WRAP, &yes, 1 }, { CKA_UNWRAP, &yes, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 }, { CKA_SENSITIVE, &no, 1 },
		{ CKA_LABEL, (void *)label, strlen(label) },
	};
	CK_OBJECT_HANDLE h;

	pg_assert_int_eq(f->C_CreateObject(s, t, PG_N_ELEMENTS(t), &h), CKR_OK);
	return h;
}

/* Encrypts with mech through the client and directly: same result. */
static void
same_encryption(CK_SESSION_HANDLE cs, CK_OBJECT_HANDLE ck, CK_SESSION_HANDLE ds,
                CK_OBJECT_HANDLE dk, CK_MECHANISM *mech, const char *what)
{
	unsigned char plain[64], a[128], b[128], back[128];
	CK_ULONG al = sizeof(a), bl = sizeof(b), backl = sizeof(back);
	CK_RV rc, rd;

	memset(plain, 'p', sizeof(plain));
	rc = cl->C_EncryptInit(cs, mech, ck);
	rd = direct->C_EncryptInit(ds, mech, dk);
	if (rc != rd)
		pg_test_fail(__FILE__, __LINE__, "%s: C_EncryptInit 0x%lx, directly 0x%lx", what, rc, rd);
	if (rc != CKR_OK)
		return;
	pg_assert_int_eq(cl->C_Encrypt(cs, plain, sizeof(plain), a, &al), CKR_OK);
	pg_assert_int_eq(direct->C_Encrypt(ds, plain, sizeof(plain), b, &bl), CKR_OK);
	pg_assert_mem_eq(a, al, b, bl);
	pg_assert_int_eq(cl->C_DecryptInit(cs, mech, ck), CKR_OK);
	pg_assert_int_eq(cl->C_Decrypt(cs, a, al, back, &backl), CKR_OK);
	pg_assert_mem_eq(back, backl, plain, sizeof(plain));
}

static void
test_mechanism_params(void)
{
	unsigned char iv[16] = "iv-iv-iv-iv-iv-!", aad[7] = "headers";
	CK_GCM_PARAMS gcm = { iv, 12, 96, aad, sizeof(aad), 128 };
	CK_AES_CTR_PARAMS ctr = { 128, "counter-block-01" };
	CK_MECHANISM mechs[] = {
		{ CKM_AES_GCM, &gcm, sizeof(gcm) },
		{ CKM_AES_CBC_PAD, iv, 16 },
		{ CKM_AES_CBC, iv, 16 },
		{ CKM_AES_CTR, &ctr, sizeof(ctr) },
		{ CKM_AES_ECB, NULL, 0 },
	};
	CK_SESSION_HANDLE cs, ds;
	CK_OBJECT_HANDLE ck, dk;
	CK_SLOT_ID slot;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "params");
	cs = open_session(cl, slot, true);
	ds = open_session(direct, direct_init("params"), true);
	ck = aes_key(cl, cs, "aes");
	dk = aes_key(direct, ds, "aes");
	for (size_t i = 0; i < PG_N_ELEMENTS(mechs); i++) {
		if (!has_mechanism(slot, mechs[i].mechanism))
			continue;
		same_encryption(cs, ck, ds, dk, &mechs[i], "AES");
	}

	/* Key wrap with an IV-less AES key wrap, compared. */
	if (has_mechanism(slot, CKM_AES_KEY_WRAP)) {
		unsigned char wa[64], wb[64];
		CK_ULONG la = sizeof(wa), lb = sizeof(wb);
		CK_MECHANISM kw = { CKM_AES_KEY_WRAP, NULL, 0 };
		CK_OBJECT_HANDLE ck2 = aes_key(cl, cs, "wrapped"), dk2 = aes_key(direct, ds, "wrapped");
		pg_assert_int_eq(cl->C_WrapKey(cs, &kw, ck, ck2, NULL, &la), CKR_OK);
		pg_assert_int_eq(cl->C_WrapKey(cs, &kw, ck, ck2, wa, &la), CKR_OK);
		pg_assert_int_eq(direct->C_WrapKey(ds, &kw, dk, dk2, wb, &lb), CKR_OK);
		pg_assert_mem_eq(wa, la, wb, lb);
	}

	/* ECDH1: both sides derive the same secret from the same keys. */
	CK_OBJECT_HANDLE pa, ka, pb, kb, da, db;
	unsigned char pointa[80], pointb[80], va[32], vb[32];
	CK_ATTRIBUTE ga = { CKA_EC_POINT, pointa, sizeof(pointa) };
	CK_ATTRIBUTE gb = { CKA_EC_POINT, pointb, sizeof(pointb) };
	ec_key_pair(cl, cs, "ea", false, &pa, &ka);
	ec_key_pair(cl, cs, "eb", false, &pb, &kb);
	pg_assert_int_eq(cl->C_GetAttributeValue(cs, pa, &ga, 1), CKR_OK);
	pg_assert_int_eq(cl->C_GetAttributeValue(cs, pb, &gb, 1), CKR_OK);
	/* CKA_EC_POINT is a DER OCTET STRING: the raw point follows 2 bytes. */
	CK_ECDH1_DERIVE_PARAMS pa_params = { CKD_NULL, 0, NULL, ga.ulValueLen - 2, pointa + 2 };
	CK_ECDH1_DERIVE_PARAMS pb_params = { CKD_NULL, 0, NULL, gb.ulValueLen - 2, pointb + 2 };
	CK_MECHANISM ma = { CKM_ECDH1_DERIVE, &pb_params, sizeof(pb_params) };
	CK_MECHANISM mb = { CKM_ECDH1_DERIVE, &pa_params, sizeof(pa_params) };
	CK_OBJECT_CLASS sc = CKO_SECRET_KEY;
	CK_KEY_TYPE gk = CKK_GENERIC_SECRET;
	CK_ULONG vlen = 32;
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	CK_ATTRIBUTE dt[] = {
		{ CKA_CLASS, &sc, sizeof(sc) }, { CKA_KEY_TYPE, &gk, sizeof(gk) },
		{ CKA_VALUE_LEN, &vlen, sizeof(vlen) }, { CKA_SENSITIVE, &no, 1 },
		{ CKA_EXTRACTABLE, &yes, 1 },
	};
	pg_assert_int_eq(cl->C_DeriveKey(cs, &ma, ka, dt, PG_N_ELEMENTS(dt), &da), CKR_OK);
	pg_assert_int_eq(cl->C_DeriveKey(cs, &mb, kb, dt, PG_N_ELEMENTS(dt), &db), CKR_OK);
	CK_ATTRIBUTE xa = { CKA_VALUE, va, sizeof(va) }, xb = { CKA_VALUE, vb, sizeof(vb) };
	pg_assert_int_eq(cl->C_GetAttributeValue(cs, da, &xa, 1), CKR_OK);
	pg_assert_int_eq(cl->C_GetAttributeValue(cs, db, &xb, 1), CKR_OK);
	pg_assert_mem_eq(va, xa.ulValueLen, vb, xb.ulValueLen);

	/* Digest, compared; random of the asked length. */
	unsigned char d1[32], d2[32], rnd[48];
	CK_ULONG l1 = 32, l2 = 32;
	CK_MECHANISM sha = { CKM_SHA256, NULL, 0 };
	pg_assert_int_eq(cl->C_DigestInit(cs, &sha), CKR_OK);
	pg_assert_int_eq(cl->C_Digest(cs, iv, 16, d1, &l1), CKR_OK);
	pg_assert_int_eq(direct->C_DigestInit(ds, &sha), CKR_OK);
	pg_assert_int_eq(direct->C_Digest(ds, iv, 16, d2, &l2), CKR_OK);
	pg_assert_mem_eq(d1, l1, d2, l2);
	pg_assert_int_eq(cl->C_GenerateRandom(cs, rnd, sizeof(rnd)), CKR_OK);
	pg_assert_int_eq(cl->C_SeedRandom(cs, rnd, 8), direct->C_SeedRandom(ds, rnd, 8));
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* RSA with PSS and OAEP (label) parameters: what the client signs or
 * encrypts, SoftHSM verifies or decrypts directly. */
static void
test_rsa_params(void)
{
	CK_ULONG bits = 2048;
	CK_BYTE e[] = { 1, 0, 1 };
	CK_BBOOL yes = CK_TRUE;
	CK_MECHANISM gen = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_ATTRIBUTE pt[] = { { CKA_MODULUS_BITS, &bits, sizeof(bits) }, { CKA_PUBLIC_EXPONENT, e, 3 },
	                      { CKA_TOKEN, &yes, 1 }, { CKA_LABEL, "rsa", 3 }, { CKA_ENCRYPT, &yes, 1 },
	                      { CKA_VERIFY, &yes, 1 } };
	CK_ATTRIBUTE kt[] = { { CKA_TOKEN, &yes, 1 }, { CKA_LABEL, "rsa", 3 }, { CKA_PRIVATE, &yes, 1 },
	                      { CKA_SIGN, &yes, 1 }, { CKA_DECRYPT, &yes, 1 } };
	CK_OBJECT_HANDLE pub, priv, dpub, dpriv;
	CK_SESSION_HANDLE cs, ds;
	CK_SLOT_ID slot;
	unsigned char hash[32], sig[256], ct[256], pt2[256];
	CK_ULONG sl = sizeof(sig), cl_len = sizeof(ct), pl = sizeof(pt2), n;
	CK_RSA_PKCS_PSS_PARAMS pss = { CKM_SHA256, CKG_MGF1_SHA256, 32 };
	CK_MECHANISM mpss = { CKM_RSA_PKCS_PSS, &pss, sizeof(pss) };
	CK_RSA_PKCS_OAEP_PARAMS oaep = { CKM_SHA_1, CKG_MGF1_SHA1, CKZ_DATA_SPECIFIED, NULL, 0 };
	CK_MECHANISM moaep = { CKM_RSA_PKCS_OAEP, &oaep, sizeof(oaep) };
	CK_OBJECT_CLASS c;
	CK_ATTRIBUTE find[] = { { CKA_CLASS, &c, sizeof(c) }, { CKA_LABEL, "rsa", 3 } };

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "rsa");
	cs = open_session(cl, slot, true);
	pg_assert_int_eq(cl->C_GenerateKeyPair(cs, &gen, pt, PG_N_ELEMENTS(pt), kt, PG_N_ELEMENTS(kt),
	                                       &pub, &priv), CKR_OK);
	ds = open_session(direct, direct_init("rsa"), true);
	c = CKO_PUBLIC_KEY;
	pg_assert_int_eq(direct->C_FindObjectsInit(ds, find, 2), CKR_OK);
	pg_assert_int_eq(direct->C_FindObjects(ds, &dpub, 1, &n), CKR_OK);
	pg_assert_int_eq(direct->C_FindObjectsFinal(ds), CKR_OK);
	c = CKO_PRIVATE_KEY;
	pg_assert_int_eq(direct->C_FindObjectsInit(ds, find, 2), CKR_OK);
	pg_assert_int_eq(direct->C_FindObjects(ds, &dpriv, 1, &n), CKR_OK);
	pg_assert_int_eq(direct->C_FindObjectsFinal(ds), CKR_OK);
	memset(hash, 3, sizeof(hash));
	pg_assert_int_eq(cl->C_SignInit(cs, &mpss, priv), CKR_OK);
	pg_assert_int_eq(cl->C_Sign(cs, hash, 32, sig, &sl), CKR_OK);
	pg_assert_int_eq(direct->C_VerifyInit(ds, &mpss, dpub), CKR_OK);
	pg_assert_int_eq(direct->C_Verify(ds, hash, 32, sig, sl), CKR_OK);
	pss.sLen = 20;   /* another salt length: the signature no longer verifies */
	pg_assert_int_eq(direct->C_VerifyInit(ds, &mpss, dpub), CKR_OK);
	pg_assert(direct->C_Verify(ds, hash, 32, sig, sl) != CKR_OK);
	/* SoftHSM 2.6 takes SHA-1 only; other hashes fail alike either way. */
	oaep.hashAlg = CKM_SHA256;
	oaep.mgf = CKG_MGF1_SHA256;
	pg_assert_int_eq(cl->C_EncryptInit(cs, &moaep, pub), direct->C_EncryptInit(ds, &moaep, dpub));
	oaep.hashAlg = CKM_SHA_1;
	oaep.mgf = CKG_MGF1_SHA1;
	pg_assert_int_eq(cl->C_EncryptInit(cs, &moaep, pub), CKR_OK);
	pg_assert_int_eq(cl->C_Encrypt(cs, hash, 32, ct, &cl_len), CKR_OK);
	pg_assert_int_eq(direct->C_DecryptInit(ds, &moaep, dpriv), CKR_OK);
	pg_assert_int_eq(direct->C_Decrypt(ds, ct, cl_len, pt2, &pl), CKR_OK);
	pg_assert_mem_eq(pt2, pl, hash, 32);
	/* OAEP with a label: whatever SoftHSM says directly, it says remotely. */
	oaep.pSourceData = "label";
	oaep.ulSourceDataLen = 5;
	pg_assert_int_eq(cl->C_EncryptInit(cs, &moaep, pub), direct->C_EncryptInit(ds, &moaep, dpub));
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* ---------------------------------------------------------------------------
 * Clients and the server's life
 */

/* Writes one byte; reads one byte (bounded by the case's alarm). */
static void
tell(int fd)
{
	pg_assert_int_eq(write(fd, "x", 1), 1);
}

static void
hear(int fd)
{
	char c;

	pg_assert_int_eq(read(fd, &c, 1), 1);
}

/* Another process (another application) logs in and out: this one's
 * state never changes; its objects stay private to logged-in sessions. */
static void
test_isolation(void)
{
	int to_child[2], to_parent[2];
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;
	CK_OBJECT_HANDLE pub, priv, h;
	CK_OBJECT_CLASS pc = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE find[] = { { CKA_CLASS, &pc, sizeof(pc) } };
	CK_ULONG n;
	pid_t child;
	int status;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "iso");
	s = open_session(cl, slot, true);
	ec_key_pair(cl, s, "private", true, &pub, &priv);
	pg_assert_int_eq(cl->C_Logout(s), CKR_OK);
	pg_assert(pipe(to_child) == 0 && pipe(to_parent) == 0);
	child = fork();
	pg_assert(child >= 0);
	if (child == 0) {
		/* A second application: its own connection, its own login. */
		CK_SESSION_HANDLE cs;
		CK_SESSION_INFO ci;
		bool ok = cl->C_Initialize(NULL) == CKR_OK;
		cs = 0;
		ok = ok && cl->C_OpenSession(slot_of(cl, "iso"), CKF_SERIAL_SESSION, NULL, NULL, &cs) == CKR_OK;
		ok = ok && cl->C_Login(cs, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 6) == CKR_OK;
		ok = ok && cl->C_GetSessionInfo(cs, &ci) == CKR_OK && ci.state == CKS_RO_USER_FUNCTIONS;
		ok = ok && write(to_parent[1], "x", 1) == 1;
		char c;
		ok = ok && read(to_child[0], &c, 1) == 1;
		ok = ok && cl->C_Logout(cs) == CKR_OK;
		ok = ok && write(to_parent[1], "x", 1) == 1;
		ok = ok && read(to_child[0], &c, 1) == 1;
		/* The parent logged in meanwhile: this application is still out. */
		ok = ok && cl->C_GetSessionInfo(cs, &ci) == CKR_OK && ci.state == CKS_RO_PUBLIC_SESSION;
		_exit(ok ? 0 : 1);
	}
	close(to_parent[1]);
	close(to_child[0]);
	hear(to_parent[0]);
	/* The child is logged in; this application is not. */
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_PUBLIC_SESSION);
	pg_assert_int_eq(cl->C_FindObjectsInit(s, find, 1), CKR_OK);
	pg_assert_int_eq(cl->C_FindObjects(s, &h, 1, &n), CKR_OK);
	pg_assert_int_eq(n, 0);
	pg_assert_int_eq(cl->C_FindObjectsFinal(s), CKR_OK);
	tell(to_child[1]);
	hear(to_parent[0]);
	pg_assert_int_eq(cl->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, 6), CKR_OK);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	tell(to_child[1]);
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The child's session is gone with it; ours is intact. */
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* The server's worker processes (its children). */
static int
count_workers(void)
{
	char path[64], buf[4096];
	FILE *f;
	size_t n;
	int count = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", server_pid, server_pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (char *p = strtok(buf, " \n"); p; p = strtok(NULL, " \n"))
		count++;
	return count;
}

static void
test_killed_mid_call(void)
{
	int to_parent[2];
	CK_SESSION_HANDLE s;
	CK_SLOT_ID slot;
	pid_t child;
	int workers = -1;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "killed");
	pg_assert(pipe(to_parent) == 0);
	child = fork();
	pg_assert(child >= 0);
	if (child == 0) {
		CK_SESSION_HANDLE cs;
		unsigned char buf[4096];
		if (cl->C_Initialize(NULL) != CKR_OK ||
		    cl->C_OpenSession(slot_of(cl, "killed"), CKF_SERIAL_SESSION, NULL, NULL, &cs) != CKR_OK)
			_exit(1);
		if (write(to_parent[1], "x", 1) != 1)
			_exit(1);
		for (;;)   /* calls until killed (bounded by the parent's kill) */
			cl->C_GenerateRandom(cs, buf, sizeof(buf));
	}
	close(to_parent[1]);
	hear(to_parent[0]);
	sleep_ms(50);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The server is alive and serves a new session... */
	pg_assert_int_eq(kill(server_pid, 0), 0);
	s = open_session(cl, slot, true);
	pg_assert_int_eq(cl->C_GenerateRandom(s, (CK_BYTE[8]){ 0 }, 8), CKR_OK);
	/* ... and the killed client's worker has ended (ours remains). */
	for (int i = 0; i < 500; i++) {
		workers = count_workers();
		if (workers == 1)
			break;
		sleep_ms(10);
	}
	pg_assert_int_eq(workers, 1);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

static void
test_server_restart(void)
{
	CK_SESSION_HANDLE s, s2;
	CK_SESSION_INFO info;
	CK_TOKEN_INFO ti;
	CK_SLOT_ID slot, slots[4];
	CK_ULONG n;
	CK_INFO li;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "restart");
	s = open_session(cl, slot, true);
	stop_server();
	/* Away: no slots, the token is not present, sessions are removed. */
	n = 4;
	pg_assert_int_eq(cl->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 0);
	pg_assert_int_eq(cl->C_GetTokenInfo(slot, &ti), CKR_TOKEN_NOT_PRESENT);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_DEVICE_REMOVED);
	pg_assert_int_eq(cl->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s2),
	                 CKR_TOKEN_NOT_PRESENT);
	pg_assert_int_eq(cl->C_GetInfo(&li), CKR_OK);
	pg_assert_mem_eq(li.manufacturerID, 7, "p11glue", 7);
	pg_assert_int_eq(cl->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL), CKR_NO_EVENT);
	/* Back: the old session is gone for good, new ones work. */
	start_server();
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_SESSION_HANDLE_INVALID);
	n = 4;
	pg_assert_int_eq(cl->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	/* A new SoftHSM instance numbers the token's slot anew. */
	slot = find_token(cl, "restart");
	s2 = open_session(cl, slot, true);
	pg_assert_int_eq(cl->C_GetSessionInfo(s2, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(cl->C_CloseSession(s), CKR_SESSION_HANDLE_INVALID);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* Threads of one process share the connection; calls run concurrently. */
#define THREADS 8
#define THREAD_CALLS 300

static CK_SLOT_ID thread_slot;

static void *
thread_calls(void *arg)
{
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_MECHANISM sha = { CKM_SHA256, NULL, 0 };
	unsigned char data[64], d[32], want[32] = { 0 };
	CK_ULONG len;
	long bad = 0;

	(void)arg;
	if (cl->C_OpenSession(thread_slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
		return (void *)1L;
	memset(data, (int)(uintptr_t)&s & 0xff, sizeof(data));
	for (int i = 0; i < THREAD_CALLS; i++) {
		len = sizeof(d);
		bad += cl->C_GetSessionInfo(s, &info) != CKR_OK || info.slotID != thread_slot;
		bad += cl->C_DigestInit(s, &sha) != CKR_OK;
		bad += cl->C_Digest(s, data, sizeof(data), d, &len) != CKR_OK || len != 32;
		if (i == 0)
			memcpy(want, d, 32);
		bad += memcmp(want, d, 32) != 0;
		bad += cl->C_GenerateRandom(s, data + 60, 4) != CKR_OK;
		data[60] = data[61] = data[62] = data[63] = 0;
		memset(data, (int)(uintptr_t)&s & 0xff, sizeof(data));
	}
	bad += cl->C_CloseSession(s) != CKR_OK;
	return (void *)bad;
}

static void
test_threads(void)
{
	pthread_t t[THREADS];
	void *bad;

	pg_assert_int_eq(cl->C_Initialize(&(CK_C_INITIALIZE_ARGS){ .flags = CKF_OS_LOCKING_OK }),
	                 CKR_OK);
	thread_slot = init_token(cl, "threads");
	for (int i = 0; i < THREADS; i++)
		pg_assert_int_eq(pthread_create(&t[i], NULL, thread_calls, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		pg_assert_int_eq(pthread_join(t[i], &bad), 0);
		pg_assert_int_eq((long)bad, 0);
	}
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* Many client processes at once, each its own application. */
#define CLIENTS 64
#define CLIENT_CALLS 100

static void
test_many_clients(void)
{
	pid_t pids[CLIENTS];
	CK_SLOT_ID slot;
	int status, failed = 0;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	init_token(cl, "many");
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	for (int i = 0; i < CLIENTS; i++) {
		pids[i] = fork();
		pg_assert(pids[i] >= 0);
		if (pids[i] == 0) {
			CK_SESSION_HANDLE s;
			CK_SESSION_INFO info;
			unsigned char r[16];
			int bad = cl->C_Initialize(NULL) != CKR_OK;
			slot = slot_of(cl, "many");
			bad += cl->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK;
			for (int k = 0; k < CLIENT_CALLS && !bad; k++) {
				bad += cl->C_GetSessionInfo(s, &info) != CKR_OK;
				bad += info.state != CKS_RO_PUBLIC_SESSION;
				bad += cl->C_GenerateRandom(s, r, sizeof(r)) != CKR_OK;
			}
			bad += cl->C_Finalize(NULL) != CKR_OK;
			_exit(bad ? 1 : 0);
		}
	}
	for (int i = 0; i < CLIENTS; i++) {
		pg_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	pg_assert_int_eq(failed, 0);
}

/* After fork the child must initialize again, and gets its own connection. */
static void
test_fork(void)
{
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;
	CK_ULONG n;
	pid_t child;
	int status;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "fork");
	s = open_session(cl, slot, true);
	child = fork();
	pg_assert(child >= 0);
	if (child == 0) {
		CK_SESSION_HANDLE cs;
		bool ok = cl->C_GetSlotList(CK_TRUE, NULL, &n) == CKR_CRYPTOKI_NOT_INITIALIZED;
		ok = ok && cl->C_Initialize(NULL) == CKR_OK;
		ok = ok && cl->C_GetSessionInfo(s, &info) == CKR_SESSION_HANDLE_INVALID;
		ok = ok && cl->C_OpenSession(slot_of(cl, "fork"), CKF_SERIAL_SESSION, NULL, NULL, &cs) == CKR_OK;
		/* A new application: not logged in. */
		ok = ok && cl->C_GetSessionInfo(cs, &info) == CKR_OK && info.state == CKS_RO_PUBLIC_SESSION;
		ok = ok && cl->C_Finalize(NULL) == CKR_OK;
		_exit(ok ? 0 : 1);
	}
	pg_assert_int_eq(waitpid(child, &status, 0), child);
	pg_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_ulong_eq(info.state, CKS_RW_USER_FUNCTIONS);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A URI serves only the token it selects. */
static void
test_uri_filter(void)
{
	char uri[1200];
	CK_SLOT_ID slots[4], free_slot;
	CK_SLOT_INFO si;
	CK_ULONG n = 4;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	init_token(cl, "chosen");
	n = 4;
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 2);
	free_slot = slots[1];
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	stop_server();
	snprintf(uri, sizeof(uri), "pkcs11:token=chosen?module-path=%s", softhsm_path);
	start_server_args(uri, NULL);
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	n = 4;
	pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	pg_assert_ulong_eq(slots[0], find_token(cl, "chosen"));
	pg_assert_int_eq(cl->C_GetSlotInfo(free_slot, &si), CKR_SLOT_ID_INVALID);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* "|COMMAND": the client runs `p11glue remote` and speaks over its
 * stdin/stdout (pipes on the server's side: the reader-mutex scheme). */
static void
test_stdio_command(void)
{
	char command[1200];
	pthread_t t[THREADS];
	void *bad;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	init_token(cl, "stdio");
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	stop_server();
	snprintf(command, sizeof(command), "|%s remote %s", tool_path, softhsm_path);
	setenv("P11GLUE_SERVER_ADDRESS", command, 1);
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	thread_slot = find_token(cl, "stdio");
	for (int i = 0; i < THREADS; i++)
		pg_assert_int_eq(pthread_create(&t[i], NULL, thread_calls, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		pg_assert_int_eq(pthread_join(t[i], &bad), 0);
		pg_assert_int_eq((long)bad, 0);
	}
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	/* Again: the command runs anew. */
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	pg_assert_ulong_eq(find_token(cl, "stdio"), thread_slot);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

/* A call that blocks in the module (the proxy's C_WaitForSlotEvent,
 * serving the registry) does not hold up the other threads' calls. */
static atomic_bool wait_done;
static CK_RV wait_rv;

static void *
blocking_wait(void *arg)
{
	CK_SLOT_ID slot;

	(void)arg;
	wait_rv = cl->C_WaitForSlotEvent(0, &slot, NULL);
	atomic_store(&wait_done, true);
	return NULL;
}

static void
test_parallel_calls(void)
{
	char dir[1024], path[1100];
	CK_SLOT_ID slots[8];
	CK_ULONG n;
	CK_INFO info;
	pthread_t t;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/conf", pg_test_tmpdir());
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/modules", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/modules/softhsm2.module", dir);
	f = fopen(path, "w");
	pg_assert_not_null(f);
	fprintf(f, "module: %s\n", softhsm_path);
	fclose(f);
	setenv("P11GLUE_CONFIG", dir, 1);
	stop_server();
	start_server_args(NULL);
	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	atomic_store(&wait_done, false);
	pg_assert_int_eq(pthread_create(&t, NULL, blocking_wait, NULL), 0);
	sleep_ms(100);   /* lets the wait start; the test holds without it too */
	for (int i = 0; i < 50; i++) {
		n = 8;
		pg_assert_int_eq(cl->C_GetSlotList(CK_FALSE, slots, &n), CKR_OK);
		pg_assert(n >= 1);
		pg_assert_int_eq(cl->C_GetInfo(&info), CKR_OK);
	}
	/* Served while the wait still blocks (a hang would end in the alarm). */
	pg_assert(!atomic_load(&wait_done));
	pg_assert_mem_eq(info.manufacturerID, 7, "p11glue", 7);
	/* C_Finalize ends the wait. */
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
	pg_assert_int_eq(pthread_join(t, NULL), 0);
	pg_assert_int_eq(wait_rv, CKR_CRYPTOKI_NOT_INITIALIZED);
}

/* Opens /proc/PID/task/TID/NAME for each thread of pid (those that
 * still exist) and calls each(f, data) on it. */
static void
each_task_file(pid_t pid, const char *name, void (*each)(FILE *f, void *data), void *data)
{
	char path[300];
	DIR *d;
	struct dirent *e;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	pg_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", (int)pid, e->d_name, name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		each(f, data);
		fclose(f);
	}
	closedir(d);
}

typedef struct {
	pid_t pid;
	int n;
} children;

static void
count_children(FILE *f, void *data)
{
	children *c = data;
	char buf[32];

	while (fscanf(f, "%31s", buf) == 1) {
		c->pid = (pid_t)atoi(buf);
		c->n++;
	}
}

/* The one worker process of the server (one client connected). */
static pid_t
only_worker(void)
{
	children c = { 0, 0 };

	each_task_file(server_pid, "children", count_children, &c);
	pg_assert_int_eq(c.n, 1);
	return c.pid;
}

static void
add_switches(FILE *f, void *data)
{
	long *total = data;
	char line[128], name[64];
	long v;

	/* The status file starts with the thread's name. */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Name: %63s", name) == 1 && strcmp(name, PG_RPC_STANDBY_NAME) == 0)
			return;
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
			*total += v;
	}
}

/* The voluntary context switches of a worker's threads, its standby
 * left out: about one per call when each call is read and executed by
 * the same thread, two when every call is handed from thread to thread. */
static long
serving_switches(pid_t worker)
{
	long total = 0;

	each_task_file(worker, "status", add_switches, &total);
	return total;
}

/* A client with one call at a time has each call executed by the thread
 * of the worker that read it: no hand-off to a second thread per call. */
#define SEQUENTIAL_CALLS 2000

static void
test_sequential_inline(void)
{
	CK_SESSION_HANDLE s;
	CK_SESSION_INFO info;
	CK_SLOT_ID slot;
	long before, after, fewest = 0;
	pid_t worker;

	pg_assert_int_eq(cl->C_Initialize(NULL), CKR_OK);
	slot = init_token(cl, "inline");
	pg_assert_int_eq(cl->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s), CKR_OK);
	worker = only_worker();
	/* A call preempted on a loaded machine looks long and is handed on:
	 * the fewest switches of three rounds count. Handing every call on
	 * makes two per call in each of them. */
	for (int round = 0; round < 3; round++) {
		before = serving_switches(worker);
		for (int i = 0; i < SEQUENTIAL_CALLS; i++)
			pg_assert_int_eq(cl->C_GetSessionInfo(s, &info), CKR_OK);
		after = serving_switches(worker);
		fprintf(stderr, "%ld voluntary switches for %d calls\n", after - before, SEQUENTIAL_CALLS);
		fewest = round == 0 || after - before < fewest ? after - before : fewest;
	}
	pg_assert(fewest < SEQUENTIAL_CALLS * 3 / 2);
	pg_assert_int_eq(cl->C_Finalize(NULL), CKR_OK);
}

int
main(int argc, char **argv)
{
	pg_test_fork_cases(true);
	pg_test_fixture(setup, teardown);
	pg_test("client/addresses", test_addresses);
	pg_test("client/killed-mid-call", test_killed_mid_call);
	pg_test("client/server-restart", test_server_restart);
	pg_test("client/threads", test_threads);
	pg_test("client/many-clients", test_many_clients);
	pg_test("client/fork", test_fork);
	pg_test("client/uri-filter", test_uri_filter);
	pg_test("client/stdio-command", test_stdio_command);
	pg_test("client/parallel-calls", test_parallel_calls);
	pg_test("client/sequential-inline", test_sequential_inline);
	pg_test_fixture(setup_direct, teardown);
	pg_test("client/info-and-slots", test_info_and_slots);
	pg_test("client/sign-and-buffers", test_sign_and_buffers);
	pg_test("client/attributes", test_attributes);
	pg_test("client/mechanism-list", test_mechanism_list);
	pg_test("client/mechanism-params", test_mechanism_params);
	pg_test("client/rsa-params", test_rsa_params);
	pg_test("client/isolation", test_isolation);
	return pg_test_run(argc, argv);
}
