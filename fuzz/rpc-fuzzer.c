/*
 * libFuzzer target for the RPC message parser (src/rpc): the first
 * byte picks what the rest is read as, the way a server or a client
 * reads it. No crash, no read or write out of bounds, no leak; and what
 * decodes, encodes to bytes that decode to the same values.
 *   0 hello   1 template   2 mechanism   3 C_GetAttributeValue request
 *   4 C_GetAttributeValue result (into a caller's template)
 *   5 message parameter and its write-back   6 information structures
 */
#include "config.h"

#include "marshal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(bool ok)
{
	if (!ok)
		abort();
}

static void
same_template(const CK_ATTRIBUTE *a, const CK_ATTRIBUTE *b, CK_ULONG n, int depth)
{
	for (CK_ULONG i = 0; i < n; i++) {
		check(a[i].type == b[i].type && a[i].ulValueLen == b[i].ulValueLen);
		check((a[i].pValue == NULL) == (b[i].pValue == NULL));
		if (a[i].pValue == NULL)
			continue;
		if (pg_rpc_attr_kind(a[i].type) == PG_RPC_ATTR_TEMPLATE &&
		    a[i].ulValueLen % sizeof(CK_ATTRIBUTE) == 0)
			same_template(a[i].pValue, b[i].pValue, a[i].ulValueLen / sizeof(CK_ATTRIBUTE),
			              depth + 1);
		else
			check(memcmp(a[i].pValue, b[i].pValue, a[i].ulValueLen) == 0);
	}
}

static void
fuzz_template(pg_rpc_in *in)
{
	pg_rpc_arena *arena = NULL;
	CK_ATTRIBUTE *t, *t2;
	CK_ULONG n, n2;
	pg_rpc_out out;
	pg_rpc_in again;

	if (pg_rpc_get_template(in, &arena, &t, &n)) {
		pg_rpc_out_init(&out);
		pg_rpc_add_template(&out, t, n);
		if (pg_rpc_out_finish(&out, 0, 0)) {
			pg_rpc_in_init(&again, out.data + PG_RPC_HEADER, out.len - PG_RPC_HEADER);
			check(pg_rpc_get_template(&again, &arena, &t2, &n2) && pg_rpc_in_done(&again));
			check(n == n2);
			same_template(t, t2, n, 0);
		}
		pg_rpc_out_clear(&out);
	}
	pg_rpc_arena_free(arena);
}

static void
fuzz_mechanism(pg_rpc_in *in)
{
	pg_rpc_arena *arena = NULL;
	CK_MECHANISM *m, *m2;
	pg_rpc_out out;
	pg_rpc_in again;

	if (pg_rpc_get_mechanism(in, &arena, &m) && m != NULL) {
		pg_rpc_out_init(&out);
		pg_rpc_add_mechanism(&out, m);
		if (pg_rpc_out_finish(&out, 0, 0)) {
			pg_rpc_in_init(&again, out.data + PG_RPC_HEADER, out.len - PG_RPC_HEADER);
			check(pg_rpc_get_mechanism(&again, &arena, &m2) && pg_rpc_in_done(&again));
			check(m2 != NULL && m2->mechanism == m->mechanism &&
			      m2->ulParameterLen == m->ulParameterLen &&
			      (m2->pParameter == NULL) == (m->pParameter == NULL));
		}
		pg_rpc_out_clear(&out);
	}
	pg_rpc_arena_free(arena);
}

static void
fuzz_attr_request(pg_rpc_in *in)
{
	pg_rpc_arena *arena = NULL;
	CK_ATTRIBUTE *t;
	CK_ULONG n;
	pg_rpc_out out;

	if (pg_rpc_get_attr_request(in, &arena, &t, &n)) {
		/* A module that filled every buffer: the answer encodes. */
		for (CK_ULONG i = 0; i < n; i++) {
			if (t[i].pValue && pg_rpc_attr_kind(t[i].type) != PG_RPC_ATTR_TEMPLATE)
				memset(t[i].pValue, 0x5a, t[i].ulValueLen);
		}
		pg_rpc_out_init(&out);
		pg_rpc_add_attr_result(&out, t, n);
		pg_rpc_out_clear(&out);
	}
	pg_rpc_arena_free(arena);
}

static void
fuzz_attr_result(pg_rpc_in *in)
{
	unsigned char a[16], b[8], c[4], d[16];
	CK_ULONG ul = 0;
	CK_ATTRIBUTE nested[2] = { { 0, d, sizeof(d) }, { 0, NULL, 0 } };
	CK_ATTRIBUTE t[] = {
		{ CKA_LABEL, a, sizeof(a) }, { CKA_ID, b, sizeof(b) }, { CKA_VALUE, NULL, 0 },
		{ CKA_CLASS, &ul, sizeof(ul) }, { CKA_WRAP_TEMPLATE, nested, sizeof(nested) },
		{ CKA_SUBJECT, c, sizeof(c) },
	};

	/* A result that decodes never claims more than the caller's buffers. */
	if (pg_rpc_get_attr_result(in, t, sizeof(t) / sizeof(t[0]))) {
		check(t[0].ulValueLen == CK_UNAVAILABLE_INFORMATION || t[0].ulValueLen <= sizeof(a));
		check(t[1].ulValueLen == CK_UNAVAILABLE_INFORMATION || t[1].ulValueLen <= sizeof(b));
	}
}

static void
fuzz_msg_param(pg_rpc_in *in)
{
	pg_rpc_arena *arena = NULL;
	void *param;
	CK_ULONG len;
	int kind;
	pg_rpc_out out;

	if (pg_rpc_get_msg_param(in, &arena, &param, &len, &kind)) {
		pg_rpc_out_init(&out);
		pg_rpc_add_msg_param_result(&out, kind, param, len);
		pg_rpc_out_clear(&out);
	}
	pg_rpc_arena_free(arena);
}

static void
fuzz_infos(pg_rpc_in *in)
{
	CK_INFO i;
	CK_SLOT_INFO s;
	CK_TOKEN_INFO t;
	CK_SESSION_INFO se;
	CK_MECHANISM_INFO m;

	pg_rpc_get_info(in, &i);
	pg_rpc_get_slot_info(in, &s);
	pg_rpc_get_token_info(in, &t);
	pg_rpc_get_session_info(in, &se);
	pg_rpc_get_mechanism_info(in, &m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_rpc_frame f;
	pg_rpc_in in;
	uint32_t v;

	if (size < 1)
		return 0;
	pg_rpc_in_init(&in, data + 1, size - 1);
	switch (data[0] % 7) {
	case 0:
		f = (pg_rpc_frame){ 0, PG_RPC_HELLO, (unsigned char *)data + 1, size - 1 };
		if (pg_rpc_parse_hello(&f, &v))
			check(v >= 1);
		break;
	case 1: fuzz_template(&in); break;
	case 2: fuzz_mechanism(&in); break;
	case 3: fuzz_attr_request(&in); break;
	case 4: fuzz_attr_result(&in); break;
	case 5: fuzz_msg_param(&in); break;
	default: fuzz_infos(&in); break;
	}
	return 0;
}
