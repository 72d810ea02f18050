/*
 * The RPC wire format (src/rpc/wire.c, marshal.c, params.c): what a
 * client encodes, a server decodes to the same native values, and back;
 * every truncation and every lie about a length is refused.
 */
#include "config.h"

#include "harness.h"
#include "marshal.h"

#include <p11glue/pkcs11x.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The body of a finished frame, as a reader sees it. */
static void
reader(pg_rpc_in *in, const pg_rpc_out *out)
{
	pg_rpc_in_init(in, out->data + PG_RPC_HEADER, out->len - PG_RPC_HEADER);
}

static void
test_integers(void)
{
	pg_rpc_out out;
	pg_rpc_in in;

	pg_rpc_out_init(&out);
	pg_rpc_add_u8(&out, 0xab);
	pg_rpc_add_u32(&out, 0x01020304);
	pg_rpc_add_u64(&out, 0x1122334455667788ULL);
	pg_rpc_add_u64(&out, UINT64_MAX);
	pg_assert(pg_rpc_out_finish(&out, 7, 9));
	/* Little-endian header: length, id, code. */
	pg_assert_int_eq(out.data[0], 21);
	pg_assert_int_eq(out.data[4], 7);
	pg_assert_int_eq(out.data[8], 9);
	pg_assert_int_eq(out.data[PG_RPC_HEADER + 1], 0x04);
	reader(&in, &out);
	pg_assert_int_eq(pg_rpc_get_u8(&in), 0xab);
	pg_assert_ulong_eq(pg_rpc_get_u32(&in), 0x01020304);
	pg_assert_ulong_eq(pg_rpc_get_u64(&in), 0x1122334455667788ULL);
	pg_assert_ulong_eq(pg_rpc_get_ulong(&in), CK_UNAVAILABLE_INFORMATION);
	pg_assert(pg_rpc_in_done(&in));
	/* Past the end: fails, and stays failed. */
	pg_assert_int_eq(pg_rpc_get_u8(&in), 0);
	pg_assert(in.failed);
	pg_assert(!pg_rpc_in_done(&in));
	pg_rpc_out_clear(&out);
}

static void
test_bytes_and_counts(void)
{
	pg_rpc_out out;
	pg_rpc_in in;
	const unsigned char *p;
	CK_ULONG len;
	size_t n;

	pg_rpc_out_init(&out);
	pg_rpc_add_bytes(&out, "abc", 3);
	pg_rpc_add_in_bytes(&out, NULL, 42);
	pg_rpc_add_in_bytes(&out, "", 0);
	pg_rpc_add_u32(&out, 1000);
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	p = pg_rpc_get_bytes(&in, &n);
	pg_assert_mem_eq(p, n, "abc", 3);
	pg_assert(pg_rpc_get_in_bytes(&in, &p, &len));
	pg_assert_null(p);
	pg_assert_int_eq(len, 42);
	pg_assert(pg_rpc_get_in_bytes(&in, &p, &len));
	pg_assert_not_null(p);     /* an empty buffer is not a NULL pointer */
	pg_assert_int_eq(len, 0);
	pg_assert_int_eq(pg_rpc_get_count(&in, 999), 0);   /* over the limit */
	pg_assert(in.failed);
	pg_rpc_out_clear(&out);

	/* A length that runs past the input. */
	static const unsigned char lie[] = { 0xff, 0xff, 0xff, 0x7f, 'x' };
	pg_rpc_in_init(&in, lie, sizeof(lie));
	pg_assert_null(pg_rpc_get_bytes(&in, &n));
	pg_assert(in.failed);
}

static void
test_frame_limit(void)
{
	pg_rpc_out out;
	unsigned char *big = calloc(1, PG_RPC_MAX_BODY + 1);

	pg_assert_not_null(big);
	pg_rpc_out_init(&out);
	pg_rpc_add_raw(&out, big, PG_RPC_MAX_BODY);
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	pg_rpc_add_u8(&out, 1);    /* one byte too many */
	pg_assert(out.failed);
	pg_assert(!pg_rpc_out_finish(&out, 1, 1));
	pg_rpc_out_clear(&out);
	free(big);
}

static void
test_template_round_trip(void)
{
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_BBOOL yes = CK_TRUE;
	CK_MECHANISM_TYPE allowed[] = { CKM_AES_GCM, CKM_AES_CBC };
	CK_ATTRIBUTE wrap[] = { { CKA_CLASS, &cls, sizeof(cls) }, { CKA_EXTRACTABLE, &yes, 1 } };
	CK_ATTRIBUTE t[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_LABEL, "key", 3 },
		{ CKA_TOKEN, &yes, 1 },
		{ CKA_ID, NULL, 5 },
		{ CKA_ALLOWED_MECHANISMS, allowed, sizeof(allowed) },
		{ CKA_WRAP_TEMPLATE, wrap, sizeof(wrap) },
		{ CKA_VALUE, "", 0 },
	};
	pg_rpc_arena *arena = NULL;
	CK_ATTRIBUTE *got, *nested;
	CK_ULONG n;
	pg_rpc_out out;
	pg_rpc_in in;

	pg_rpc_out_init(&out);
	pg_rpc_add_template(&out, t, PG_N_ELEMENTS(t));
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	pg_assert(pg_rpc_get_template(&in, &arena, &got, &n));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_int_eq(n, PG_N_ELEMENTS(t));
	for (CK_ULONG i = 0; i < n; i++) {
		pg_assert_ulong_eq(got[i].type, t[i].type);
		pg_assert_ulong_eq(got[i].ulValueLen, t[i].ulValueLen);
		if (t[i].type == CKA_WRAP_TEMPLATE || t[i].pValue == NULL)
			continue;
		pg_assert_mem_eq(got[i].pValue, got[i].ulValueLen, t[i].pValue, t[i].ulValueLen);
	}
	pg_assert_null(got[3].pValue);
	pg_assert_not_null(got[6].pValue);
	nested = got[5].pValue;
	pg_assert_ulong_eq(nested[0].type, CKA_CLASS);
	pg_assert_ulong_eq(*(CK_ULONG *)nested[0].pValue, CKO_SECRET_KEY);
	pg_assert_int_eq(*(CK_BBOOL *)nested[1].pValue, 1);
	pg_rpc_arena_free(arena);

	/* Every truncation fails cleanly (and frees what it built). */
	for (size_t cut = 0; cut < out.len - PG_RPC_HEADER; cut++) {
		arena = NULL;
		pg_rpc_in_init(&in, out.data + PG_RPC_HEADER, cut);
		pg_assert(!pg_rpc_get_template(&in, &arena, &got, &n));
		pg_rpc_arena_free(arena);
	}
	pg_rpc_out_clear(&out);
}

static void
test_hostile_counts(void)
{
	/* 65536 attributes announced, none given. */
	static const unsigned char many[] = { 0, 0, 1, 0 };
	/* An unknown value form. */
	static const unsigned char form[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	pg_rpc_arena *arena = NULL;
	CK_ATTRIBUTE *t;
	CK_ULONG n;
	pg_rpc_in in;

	pg_rpc_in_init(&in, many, sizeof(many));
	pg_assert(!pg_rpc_get_template(&in, &arena, &t, &n));
	pg_rpc_in_init(&in, form, sizeof(form));
	pg_assert(!pg_rpc_get_template(&in, &arena, &t, &n));
	pg_rpc_in_init(&in, many, sizeof(many));
	pg_assert(!pg_rpc_get_attr_request(&in, &arena, &t, &n));
	pg_rpc_arena_free(arena);
}

/* C_GetAttributeValue: size query, values, unavailable, nested template. */
static void
test_attribute_values(void)
{
	CK_OBJECT_CLASS cls = 0;
	unsigned char label[16], small[2];
	CK_ATTRIBUTE inner[2] = { { 0, NULL, 0 }, { 0, NULL, 0 } };
	CK_ATTRIBUTE ask[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_LABEL, label, sizeof(label) },
		{ CKA_VALUE, NULL, 0 },
		{ CKA_ID, small, sizeof(small) },
		{ CKA_PRIVATE_EXPONENT, label, sizeof(label) },
		{ CKA_WRAP_TEMPLATE, inner, sizeof(inner) },
	};
	CK_ATTRIBUTE *srv, *nested;
	CK_ULONG n;
	CK_OBJECT_CLASS srv_cls = CKO_PRIVATE_KEY;
	pg_rpc_arena *arena = NULL;
	pg_rpc_out out, reply;
	pg_rpc_in in;

	pg_rpc_out_init(&out);
	pg_rpc_add_attr_request(&out, ask, PG_N_ELEMENTS(ask));
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	pg_assert(pg_rpc_get_attr_request(&in, &arena, &srv, &n));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_int_eq(n, 6);
	/* The server got buffers as large as the caller's. */
	pg_assert_int_eq(srv[0].ulValueLen, sizeof(CK_ULONG));
	pg_assert_int_eq(srv[1].ulValueLen, 16);
	pg_assert_null(srv[2].pValue);
	pg_assert_int_eq(srv[5].ulValueLen, 2 * sizeof(CK_ATTRIBUTE));
	/* What a module would answer. */
	memcpy(srv[0].pValue, &srv_cls, sizeof(srv_cls));
	memcpy(srv[1].pValue, "my key", 6);
	srv[1].ulValueLen = 6;
	srv[2].ulValueLen = 32;                          /* size query */
	srv[3].ulValueLen = CK_UNAVAILABLE_INFORMATION;  /* too small */
	srv[4].ulValueLen = CK_UNAVAILABLE_INFORMATION;  /* sensitive */
	nested = srv[5].pValue;
	srv[5].ulValueLen = sizeof(CK_ATTRIBUTE);        /* one nested attribute */
	nested[0].type = CKA_LABEL;
	nested[0].ulValueLen = 0;                        /* its pValue was NULL */
	pg_rpc_out_init(&reply);
	pg_rpc_add_attr_result(&reply, srv, n);
	pg_assert(pg_rpc_out_finish(&reply, 1, 1));
	pg_rpc_arena_free(arena);

	reader(&in, &reply);
	pg_assert(pg_rpc_get_attr_result(&in, ask, PG_N_ELEMENTS(ask)));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_ulong_eq(cls, CKO_PRIVATE_KEY);
	pg_assert_mem_eq(label, ask[1].ulValueLen, "my key", 6);
	pg_assert_int_eq(ask[2].ulValueLen, 32);
	pg_assert_ulong_eq(ask[3].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_ulong_eq(ask[4].ulValueLen, CK_UNAVAILABLE_INFORMATION);
	pg_assert_int_eq(ask[5].ulValueLen, sizeof(CK_ATTRIBUTE));
	pg_assert_ulong_eq(inner[0].type, CKA_LABEL);
	pg_assert_int_eq(inner[0].ulValueLen, 0);

	/* A server that answers more than the caller's buffer holds is refused. */
	ask[1].ulValueLen = 3;
	reader(&in, &reply);
	pg_assert(!pg_rpc_get_attr_result(&in, ask, PG_N_ELEMENTS(ask)));
	pg_rpc_out_clear(&reply);
	pg_rpc_out_clear(&out);
}

/* A mechanism through the wire, and the native copy it decodes to. */
static CK_MECHANISM *
round_trip(const CK_MECHANISM *m, pg_rpc_arena **arena, pg_rpc_out *out)
{
	CK_MECHANISM *got = NULL;
	pg_rpc_in in;

	pg_rpc_out_init(out);
	pg_rpc_add_mechanism(out, m);
	pg_assert(pg_rpc_out_finish(out, 1, 1));
	reader(&in, out);
	pg_assert(pg_rpc_get_mechanism(&in, arena, &got));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_not_null(got);
	pg_assert_ulong_eq(got->mechanism, m->mechanism);
	pg_assert_ulong_eq(got->ulParameterLen, m->ulParameterLen);
	for (size_t cut = 0; cut < out->len - PG_RPC_HEADER; cut++) {
		CK_MECHANISM *partial;
		pg_rpc_in_init(&in, out->data + PG_RPC_HEADER, cut);
		pg_assert(!pg_rpc_get_mechanism(&in, arena, &partial) || !pg_rpc_in_done(&in));
	}
	return got;
}

static void
test_mechanism_params(void)
{
	unsigned char iv[12] = "0123456789a", aad[5] = "head", label[3] = "lbl", pub[65] = { 4 };
	CK_GCM_PARAMS gcm = { iv, sizeof(iv), 96, aad, sizeof(aad), 128 }, *g;
	CK_RSA_PKCS_OAEP_PARAMS oaep = { CKM_SHA256, CKG_MGF1_SHA256, CKZ_DATA_SPECIFIED, label, 3 }, *o;
	CK_RSA_PKCS_PSS_PARAMS pss = { CKM_SHA256, CKG_MGF1_SHA256, 32 }, *p;
	CK_ECDH1_DERIVE_PARAMS ecdh = { CKD_NULL, 0, NULL, sizeof(pub), pub }, *e;
	CK_EDDSA_PARAMS eddsa = { CK_TRUE, 3, label }, *d;
	CK_AES_CTR_PARAMS ctr = { 32, "fedcba9876543210" }, *c;
	CK_RSA_AES_KEY_WRAP_PARAMS rsa_aes = { 256, &oaep }, *ra;
	CK_MECHANISM m;
	pg_rpc_arena *arena = NULL;
	pg_rpc_out out;

	m = (CK_MECHANISM){ CKM_AES_GCM, &gcm, sizeof(gcm) };
	g = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_mem_eq(g->pIv, g->ulIvLen, iv, sizeof(iv));
	pg_assert_int_eq(g->ulIvBits, 96);
	pg_assert_mem_eq(g->pAAD, g->ulAADLen, aad, sizeof(aad));
	pg_assert_int_eq(g->ulTagBits, 128);
	pg_assert(g->pIv != iv);    /* a copy in the arena */
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_RSA_PKCS_OAEP, &oaep, sizeof(oaep) };
	o = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_ulong_eq(o->hashAlg, CKM_SHA256);
	pg_assert_ulong_eq(o->source, CKZ_DATA_SPECIFIED);
	pg_assert_mem_eq(o->pSourceData, o->ulSourceDataLen, "lbl", 3);
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_SHA256_RSA_PKCS_PSS, &pss, sizeof(pss) };
	p = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_int_eq(p->sLen, 32);
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_ECDH1_DERIVE, &ecdh, sizeof(ecdh) };
	e = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_null(e->pSharedData);
	pg_assert_mem_eq(e->pPublicData, e->ulPublicDataLen, pub, sizeof(pub));
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_EDDSA, &eddsa, sizeof(eddsa) };
	d = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_int_eq(d->phFlag, CK_TRUE);
	pg_assert_mem_eq(d->pContextData, d->ulContextDataLen, "lbl", 3);
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_AES_CTR, &ctr, sizeof(ctr) };
	c = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_int_eq(c->ulCounterBits, 32);
	pg_assert_mem_eq(c->cb, 16, "fedcba9876543210", 16);
	pg_rpc_out_clear(&out);

	m = (CK_MECHANISM){ CKM_RSA_AES_KEY_WRAP, &rsa_aes, sizeof(rsa_aes) };
	ra = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_int_eq(ra->ulAESKeyBits, 256);
	pg_assert_mem_eq(ra->pOAEPParams->pSourceData, 3, "lbl", 3);
	pg_rpc_out_clear(&out);

	/* A CBC IV and an unknown mechanism: flat bytes. */
	m = (CK_MECHANISM){ CKM_AES_CBC_PAD, iv, 16 > sizeof(iv) ? sizeof(iv) : 16 };
	pg_assert_mem_eq(round_trip(&m, &arena, &out)->pParameter, sizeof(iv), iv, sizeof(iv));
	pg_rpc_out_clear(&out);
	m = (CK_MECHANISM){ CKM_VENDOR_DEFINED | 77, "vendor", 6 };
	pg_assert_mem_eq(round_trip(&m, &arena, &out)->pParameter, 6, "vendor", 6);
	pg_rpc_out_clear(&out);
	/* No parameter at all. */
	m = (CK_MECHANISM){ CKM_ECDSA, NULL, 0 };
	pg_assert_null(round_trip(&m, &arena, &out)->pParameter);
	pg_rpc_out_clear(&out);
	pg_rpc_arena_free(arena);
}

/* SP 800-108: arrays of data parameters and of derived keys (each with a
 * template); the handles of the derived keys come back after C_DeriveKey. */
static void
test_sp800_108(void)
{
	CK_SP800_108_COUNTER_FORMAT counter = { CK_FALSE, 32 };
	CK_PRF_DATA_PARAM data[] = {
		{ CK_SP800_108_ITERATION_VARIABLE, &counter, sizeof(counter) },
		{ CK_SP800_108_BYTE_ARRAY, "label", 5 },
	};
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &cls, sizeof(cls) }, { CKA_LABEL, "extra", 5 } };
	CK_OBJECT_HANDLE h1 = 0, h2 = 0;
	CK_DERIVED_KEY keys[] = { { tmpl, 2, &h1 }, { tmpl, 1, &h2 } };
	CK_SP800_108_KDF_PARAMS kdf = { CKM_SHA256_HMAC, 2, data, 2, keys }, *got;
	CK_MECHANISM m = { CKM_SP800_108_COUNTER_KDF, &kdf, sizeof(kdf) };
	pg_rpc_arena *arena = NULL;
	pg_rpc_out out, reply;
	pg_rpc_in in;

	got = round_trip(&m, &arena, &out)->pParameter;
	pg_assert_ulong_eq(got->prfType, CKM_SHA256_HMAC);
	pg_assert_int_eq(got->ulNumberOfDataParams, 2);
	pg_assert_mem_eq(got->pDataParams[0].pValue, got->pDataParams[0].ulValueLen, &counter,
	                 sizeof(counter));
	pg_assert_mem_eq(got->pDataParams[1].pValue, got->pDataParams[1].ulValueLen, "label", 5);
	pg_assert_int_eq(got->ulAdditionalDerivedKeys, 2);
	pg_assert_int_eq(got->pAdditionalDerivedKeys[0].ulAttributeCount, 2);
	pg_assert_mem_eq(got->pAdditionalDerivedKeys[0].pTemplate[1].pValue, 5, "extra", 5);
	pg_assert_int_eq(got->pAdditionalDerivedKeys[1].ulAttributeCount, 1);
	pg_assert_not_null(got->pAdditionalDerivedKeys[1].phKey);
	/* The module derives the keys; their handles come back. */
	*got->pAdditionalDerivedKeys[0].phKey = 41;
	*got->pAdditionalDerivedKeys[1].phKey = 42;
	pg_rpc_out_init(&reply);
	pg_rpc_add_mechanism_result(&reply, &(CK_MECHANISM){ m.mechanism, got, sizeof(*got) });
	pg_assert(pg_rpc_out_finish(&reply, 1, 1));
	reader(&in, &reply);
	pg_assert(pg_rpc_get_mechanism_result(&in, &m));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_int_eq(h1, 41);
	pg_assert_int_eq(h2, 42);
	pg_rpc_out_clear(&reply);
	pg_rpc_out_clear(&out);

	/* A count field that is not the array's length is refused. */
	pg_rpc_out_init(&out);
	pg_rpc_add_mechanism(&out, &m);
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	/* u8 1, u64 mech, u8 2, u32 id, u64 prfType, then ulNumberOfDataParams. */
	out.data[PG_RPC_HEADER + 1 + 8 + 1 + 4 + 8] = 3;
	reader(&in, &out);
	CK_MECHANISM *bad;
	pg_assert(!pg_rpc_get_mechanism(&in, &arena, &bad));
	pg_rpc_out_clear(&out);
	pg_rpc_arena_free(arena);
}

static void
test_forged_params(void)
{
	unsigned char iv[12] = { 0 };
	CK_GCM_PARAMS gcm = { iv, sizeof(iv), 96, NULL, 0, 128 };
	pg_rpc_arena *arena = NULL;
	CK_MECHANISM *got;
	pg_rpc_out out;
	pg_rpc_in in;

	/* A GCM structure sent as flat bytes would give the module our
	 * pointers: refused. */
	pg_rpc_out_init(&out);
	pg_rpc_add_u8(&out, 1);
	pg_rpc_add_u64(&out, CKM_AES_GCM);
	pg_rpc_add_u8(&out, 1);
	pg_rpc_add_bytes(&out, &gcm, sizeof(gcm));
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	pg_assert(!pg_rpc_get_mechanism(&in, &arena, &got));
	pg_rpc_out_clear(&out);

	/* An IV shorter than ulIvLen says: the module would read past it. */
	pg_rpc_out_init(&out);
	pg_rpc_add_mechanism(&out, &(CK_MECHANISM){ CKM_AES_GCM, &gcm, sizeof(gcm) });
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	/* u8 1, u64 mech, u8 2, u32 id; pIv: u8 1, u32 12, 12 bytes; then ulIvLen. */
	out.data[PG_RPC_HEADER + 1 + 8 + 1 + 4 + 1 + 4 + 12] = 13;
	reader(&in, &out);
	pg_assert(!pg_rpc_get_mechanism(&in, &arena, &got));
	pg_rpc_out_clear(&out);

	/* A structure id that is not the mechanism's. */
	pg_rpc_out_init(&out);
	pg_rpc_add_mechanism(&out, &(CK_MECHANISM){ CKM_AES_GCM, &gcm, sizeof(gcm) });
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	out.data[PG_RPC_HEADER + 1 + 8 + 1] ^= 1;
	reader(&in, &out);
	pg_assert(!pg_rpc_get_mechanism(&in, &arena, &got));
	pg_rpc_out_clear(&out);
	pg_rpc_arena_free(arena);
}

/* Message functions: a GCM tag and IV come back into the caller's buffers. */
static void
test_message_params(void)
{
	unsigned char iv[12] = { 0 }, tag[16] = { 0 };
	CK_GCM_MESSAGE_PARAMS caller = { iv, sizeof(iv), 0, CKG_GENERATE_RANDOM, tag, 128 }, *srv;
	pg_rpc_arena *arena = NULL;
	pg_rpc_out out, reply;
	CK_ULONG len;
	void *param;
	int kind;
	pg_rpc_in in;

	pg_rpc_out_init(&out);
	pg_rpc_add_msg_param(&out, CKM_AES_GCM, &caller, sizeof(caller));
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	pg_assert(pg_rpc_get_msg_param(&in, &arena, &param, &len, &kind));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_int_eq(len, sizeof(CK_GCM_MESSAGE_PARAMS));
	srv = param;
	pg_assert_int_eq(srv->ulTagBits, 128);
	/* The module generates the IV and writes the tag. */
	memset(srv->pIv, 0x11, srv->ulIvLen);
	memset(srv->pTag, 0x22, 16);
	pg_rpc_out_init(&reply);
	pg_rpc_add_msg_param_result(&reply, kind, param, len);
	pg_assert(pg_rpc_out_finish(&reply, 1, 1));
	reader(&in, &reply);
	pg_assert(pg_rpc_get_msg_param_result(&in, CKM_AES_GCM, &caller, sizeof(caller)));
	pg_assert(pg_rpc_in_done(&in));
	for (size_t i = 0; i < sizeof(iv); i++)
		pg_assert_int_eq(iv[i], 0x11);
	for (size_t i = 0; i < sizeof(tag); i++)
		pg_assert_int_eq(tag[i], 0x22);
	/* A result for a shorter tag than the caller's is refused. */
	caller.ulTagBits = 64;
	reader(&in, &reply);
	pg_assert(!pg_rpc_get_msg_param_result(&in, CKM_AES_GCM, &caller, sizeof(caller)));
	pg_rpc_out_clear(&reply);
	pg_rpc_out_clear(&out);
	pg_rpc_arena_free(arena);
}

static void
test_infos(void)
{
	CK_TOKEN_INFO t, back;
	CK_SESSION_INFO s = { 3, CKS_RW_USER_FUNCTIONS, CKF_SERIAL_SESSION, 0 }, sb;
	pg_rpc_out out;
	pg_rpc_in in;

	memset(&t, ' ', sizeof(t));
	memcpy(t.label, "label", 5);
	t.flags = CKF_TOKEN_INITIALIZED | CKF_LOGIN_REQUIRED;
	t.ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	t.ulSessionCount = CK_UNAVAILABLE_INFORMATION;
	t.ulMaxRwSessionCount = t.ulRwSessionCount = 1;
	t.ulMaxPinLen = 255;
	t.ulMinPinLen = 4;
	t.ulTotalPublicMemory = t.ulFreePublicMemory = 7;
	t.ulTotalPrivateMemory = t.ulFreePrivateMemory = 8;
	t.hardwareVersion = (CK_VERSION){ 2, 6 };
	t.firmwareVersion = (CK_VERSION){ 2, 7 };
	pg_rpc_out_init(&out);
	pg_rpc_add_token_info(&out, &t);
	pg_rpc_add_session_info(&out, &s);
	pg_assert(pg_rpc_out_finish(&out, 1, 1));
	reader(&in, &out);
	memset(&back, ' ', sizeof(back));   /* the same padding bytes as t */
	memset(&sb, 0, sizeof(sb));
	pg_assert(pg_rpc_get_token_info(&in, &back));
	pg_assert(pg_rpc_get_session_info(&in, &sb));
	pg_assert(pg_rpc_in_done(&in));
	pg_assert_mem_eq(&back, sizeof(back), &t, sizeof(t));
	pg_assert_mem_eq(&sb, sizeof(sb), &s, sizeof(s));
	pg_rpc_out_clear(&out);
}

static void
test_hello(void)
{
	pg_rpc_frame f = { 0, PG_RPC_HELLO, (unsigned char *)"p11glue\0\2\0\0\0", 12 };
	uint32_t v;

	pg_assert(pg_rpc_parse_hello(&f, &v));
	pg_assert_int_eq(v, 2);
	f.body = (unsigned char *)"p11kit\0\0\1\0\0\0";
	pg_assert(!pg_rpc_parse_hello(&f, &v));
	f.body = (unsigned char *)"p11glue\0\0\0\0\0";
	pg_assert(!pg_rpc_parse_hello(&f, &v));   /* version 0 */
	f.len = 10;
	pg_assert(!pg_rpc_parse_hello(&f, &v));
}

/* Writes a frame with id and code 1 whose body is "late", a while after
 * a reader started polling for it, in two writes. */
static void *
late_writer(void *arg)
{
	int fd = *(int *)arg;
	pg_rpc_out out;

	pg_rpc_out_init(&out);
	pg_rpc_add_raw(&out, "late", 4);
	if (pg_rpc_out_finish(&out, 1, 1)) {
		nanosleep(&(struct timespec){ 0, 30 * 1000 * 1000 }, NULL);
		if (write(fd, out.data, 5) == 5) {
			nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
			if (write(fd, out.data + 5, out.len - 5) < 0)
				abort();
		}
	}
	pg_rpc_out_clear(&out);
	return NULL;
}

static void
send_frame(int fd, uint32_t id)
{
	pg_rpc_out out;

	pg_rpc_out_init(&out);
	pg_rpc_add_u32(&out, id);
	pg_assert(pg_rpc_out_finish(&out, id, 2));
	pg_assert_int_eq(write(fd, out.data, out.len), (long)out.len);
	pg_rpc_out_clear(&out);
}

static void
test_stream_spin(void)
{
	pg_rpc_stream s;
	pg_rpc_frame f;
	pthread_t t;
	int sv[2], pp[2];

	unsetenv("P11GLUE_RPC_SPIN_US");
	pg_assert(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	pg_rpc_stream_init(&s, sv[0], sv[0]);
	pg_rpc_stream_set_spin(&s, 1000);
	pg_assert_int_eq(s.spin_ns, 1000000);
	/* Already there: taken by the first poll. */
	send_frame(sv[1], 5);
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert_int_eq(f.id, 5);
	pg_rpc_frame_clear(&f);
	pg_assert_int_eq(s.spin_skip, 0);
	/* Later than the polling and in pieces: the read blocks for it (the
	 * rest of the header without polling again), and the miss is
	 * counted. */
	pg_assert(pthread_create(&t, NULL, late_writer, &sv[1]) == 0);
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pthread_join(t, NULL);
	pg_assert_int_eq(f.len, 4);
	pg_assert(memcmp(f.body, "late", 4) == 0);
	pg_rpc_frame_clear(&f);
	pg_assert_int_eq(s.spin_skip, 0);
	pg_assert_int_eq(s.spin_backoff, 2);
	/* A hit resets the count. */
	send_frame(sv[1], 6);
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert_int_eq(f.id, 6);
	pg_rpc_frame_clear(&f);
	pg_assert_int_eq(s.spin_backoff, 1);
	/* The end of the stream while polling. */
	close(sv[1]);
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 0);
	pg_rpc_stream_clear(&s);
	close(sv[0]);

	/* A pipe cannot be polled this way: its reads block. */
	pg_assert(pipe(pp) == 0);
	pg_rpc_stream_init(&s, pp[0], -1);
	pg_rpc_stream_set_spin(&s, 1000);
	send_frame(pp[1], 8);
	pg_assert_int_eq(pg_rpc_stream_read(&s, &f), 1);
	pg_assert_int_eq(f.id, 8);
	pg_rpc_frame_clear(&f);
	pg_assert_int_eq(s.spin_ns, 0);
	pg_rpc_stream_clear(&s);
	close(pp[0]);
	close(pp[1]);

	/* The environment overrides the caller; junk there does not. */
	setenv("P11GLUE_RPC_SPIN_US", "0", 1);
	pg_rpc_stream_set_spin(&s, 1000);
	pg_assert_int_eq(s.spin_ns, 0);
	setenv("P11GLUE_RPC_SPIN_US", "7", 1);
	pg_rpc_stream_set_spin(&s, 1000);
	pg_assert_int_eq(s.spin_ns, 7000);
	setenv("P11GLUE_RPC_SPIN_US", "-1x", 1);
	pg_rpc_stream_set_spin(&s, 1000);
	pg_assert_int_eq(s.spin_ns, 1000000);
	setenv("P11GLUE_RPC_SPIN_US", "99999999", 1);
	pg_rpc_stream_set_spin(&s, 1000);
	pg_assert_int_eq(s.spin_ns, 1000000);
	unsetenv("P11GLUE_RPC_SPIN_US");
}

int
main(int argc, char **argv)
{
	pg_test("wire/integers", test_integers);
	pg_test("wire/bytes-and-counts", test_bytes_and_counts);
	pg_test("wire/frame-limit", test_frame_limit);
	pg_test("wire/hello", test_hello);
	pg_test("wire/stream-spin", test_stream_spin);
	pg_test("marshal/template-round-trip", test_template_round_trip);
	pg_test("marshal/hostile-counts", test_hostile_counts);
	pg_test("marshal/attribute-values", test_attribute_values);
	pg_test("marshal/infos", test_infos);
	pg_test("params/mechanisms", test_mechanism_params);
	pg_test("params/forged", test_forged_params);
	pg_test("params/sp800-108", test_sp800_108);
	pg_test("params/message-write-back", test_message_params);
	return pg_test_run(argc, argv);
}
