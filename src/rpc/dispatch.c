/*
 * Executing requests (see dispatch.h).
 */
#include "config.h"

#include "dispatch.h"
#include "server.h"
#include "marshal.h"
#include "rpc-calls.h"

#include <p11glue/p11glue.h>

#include <string.h>

typedef struct {
	pg_rpc_calls *calls;
	CK_FUNCTION_LIST_3_0 *funcs;
	bool v3;
	pg_rpc_arena *arena;
} rs_ctx;

/* ---------------------------------------------------------------------------
 * Helpers of the generated handlers
 */

/* An output buffer: u8 present, u64 capacity (at most what a reply holds). */
static CK_BYTE_PTR
rs_get_out_bytes(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG *len)
{
	bool present = pg_rpc_get_u8(in) != 0;
	uint64_t cap = pg_rpc_get_u64(in);
	CK_BYTE_PTR p;

	if (cap > PG_RPC_MAX_BODY - 64)
		cap = PG_RPC_MAX_BODY - 64;
	*len = (CK_ULONG)cap;
	if (!present || in->failed)
		return NULL;
	p = pg_rpc_arena_alloc(&ctx->arena, (size_t)cap);
	if (p == NULL)
		in->failed = true;
	return p;
}

static void
rs_add_out_bytes(pg_rpc_out *out, const CK_BYTE *p, CK_ULONG len)
{
	pg_rpc_add_u64(out, len);
	pg_rpc_add_u8(out, p != NULL);
	if (p != NULL)
		pg_rpc_add_bytes(out, p, len);
}

static CK_UTF8CHAR_PTR
rs_get_label(pg_rpc_in *in)
{
	if (!pg_rpc_get_u8(in))
		return NULL;
	return (CK_UTF8CHAR_PTR)pg_rpc_get_raw(in, 32);
}

static CK_ULONG *
rs_alloc_ulongs(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG n)
{
	CK_ULONG *p;

	if (n > PG_RPC_MAX_COUNT) {
		in->failed = true;
		return NULL;
	}
	p = pg_rpc_arena_alloc(&ctx->arena, (n ? n : 1) * sizeof(CK_ULONG));
	if (p == NULL)
		in->failed = true;
	return p;
}

/* What a module wrote into a handle array of max entries. */
static void
rs_add_ulongs(pg_rpc_out *out, const CK_ULONG *p, CK_ULONG max, CK_ULONG count)
{
	if (count > max)
		count = max;
	pg_rpc_add_u32(out, (uint32_t)count);
	for (CK_ULONG i = 0; i < count; i++)
		pg_rpc_add_u64(out, p[i]);
}

static CK_ULONG *
rs_get_out_ulongs(rs_ctx *ctx, pg_rpc_in *in, CK_ULONG *count)
{
	bool present = pg_rpc_get_u8(in) != 0;

	*count = pg_rpc_get_ulong(in);
	if (!present || in->failed)
		return NULL;
	return rs_alloc_ulongs(ctx, in, *count);
}

static void
rs_add_out_ulongs(pg_rpc_out *out, const CK_ULONG *p, CK_ULONG count)
{
	pg_rpc_add_u64(out, count);
	pg_rpc_add_u8(out, p != NULL);
	if (p == NULL)
		return;
	for (CK_ULONG i = 0; i < count; i++)
		pg_rpc_add_u64(out, p[i]);
}

/* ---------------------------------------------------------------------------
 * Slot filter (a URI selecting tokens)
 */

bool
pg_rpc_slot_matches(CK_FUNCTION_LIST *f, const p11glue_uri *filter, CK_SLOT_ID slot)
{
	CK_SLOT_INFO si;
	CK_TOKEN_INFO ti;

	if (f->C_GetSlotInfo(slot, &si) != CKR_OK || !p11glue_uri_match_slot_info(filter, slot, &si))
		return false;
	if (!(si.flags & CKF_TOKEN_PRESENT) || f->C_GetTokenInfo(slot, &ti) != CKR_OK) {
		/* No token: only a URI without token attributes selects it. */
		memset(&ti, 0, sizeof(ti));
	}
	return p11glue_uri_match_token_info(filter, &ti);
}

static bool
rs_slot_allowed(rs_ctx *ctx, CK_SLOT_ID slot)
{
	pg_rpc_calls *c = ctx->calls;
	bool ok;

	if (c->filter == NULL)
		return true;
	pthread_mutex_lock(&c->lock);
	ok = pg_handle_map_get(&c->allowed, slot, NULL);
	pthread_mutex_unlock(&c->lock);
	if (!ok && pg_rpc_slot_matches((CK_FUNCTION_LIST *)c->funcs, c->filter, slot)) {
		pthread_mutex_lock(&c->lock);
		ok = pg_handle_map_put(&c->allowed, slot, 1);
		pthread_mutex_unlock(&c->lock);
	}
	return ok;
}

#include "rpc-server.inc"

/* ---------------------------------------------------------------------------
 * The calls served by hand
 */

/* The module's whole list (size query, then fill, as slots may appear). */
static CK_RV
module_slots(rs_ctx *ctx, CK_BBOOL present, CK_SLOT_ID **slots, CK_ULONG *n)
{
	CK_RV rv;

	for (int tries = 0; tries < 8; tries++) {
		rv = ctx->funcs->C_GetSlotList(present, NULL, n);
		if (rv != CKR_OK)
			return rv;
		if (*n > PG_RPC_MAX_COUNT)
			return CKR_DEVICE_ERROR;
		*slots = pg_rpc_arena_alloc(&ctx->arena, (*n ? *n : 1) * sizeof(CK_SLOT_ID));
		if (*slots == NULL)
			return CKR_HOST_MEMORY;
		rv = ctx->funcs->C_GetSlotList(present, *slots, n);
		if (rv != CKR_BUFFER_TOO_SMALL)
			return rv;
	}
	return rv;
}

static bool
rs_C_GetSlotList(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_BBOOL present = pg_rpc_get_u8(in);
	bool buffer = pg_rpc_get_u8(in) != 0;
	CK_ULONG cap = pg_rpc_get_ulong(in), n = 0, kept = 0;
	CK_SLOT_ID *slots = NULL;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	rv = module_slots(ctx, present, &slots, &n);
	for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
		if (rs_slot_allowed(ctx, slots[i]))
			slots[kept++] = slots[i];
	}
	if (rv == CKR_OK && buffer && kept > cap)
		rv = CKR_BUFFER_TOO_SMALL;
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		rs_add_out_ulongs(out, buffer ? slots : NULL, kept);
	else if (rv == CKR_BUFFER_TOO_SMALL)
		pg_rpc_add_u64(out, kept);
	return true;
}

static bool
rs_C_OpenSession(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_SLOT_ID slot = pg_rpc_get_ulong(in);
	CK_FLAGS flags = pg_rpc_get_ulong(in);
	CK_SESSION_HANDLE session = 0;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	/* Notify callbacks stay on the client's side (PKCS#11 v3.0 §5.6
	 * lets a library never call them). */
	if (!rs_slot_allowed(ctx, slot))
		rv = CKR_SLOT_ID_INVALID;
	else
		rv = ctx->funcs->C_OpenSession(slot, flags, NULL, NULL, &session);
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		pg_rpc_add_u64(out, session);
	return true;
}

static bool
rs_C_GetAttributeValue(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_SESSION_HANDLE session = pg_rpc_get_ulong(in);
	CK_OBJECT_HANDLE object = pg_rpc_get_ulong(in);
	CK_ATTRIBUTE *tmpl;
	CK_ULONG count;
	CK_RV rv;

	if (!pg_rpc_get_attr_request(in, &ctx->arena, &tmpl, &count) || !pg_rpc_in_done(in))
		return false;
	rv = ctx->funcs->C_GetAttributeValue(session, object, tmpl, count);
	pg_rpc_add_u64(out, rv);
	/* These codes still describe every attribute (PKCS#11 v3.0 §5.7.5). */
	if (rv == CKR_OK || rv == CKR_ATTRIBUTE_SENSITIVE || rv == CKR_ATTRIBUTE_TYPE_INVALID ||
	    rv == CKR_BUFFER_TOO_SMALL)
		pg_rpc_add_attr_result(out, tmpl, count);
	return true;
}

static bool
rs_C_WaitForSlotEvent(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)
{
	CK_FLAGS flags = pg_rpc_get_ulong(in);
	CK_SLOT_ID slot = 0;
	CK_RV rv;

	if (!pg_rpc_in_done(in))
		return false;
	/* Events of slots outside the filter are skipped. */
	do
		rv = ctx->funcs->C_WaitForSlotEvent(flags, &slot, NULL);
	while (rv == CKR_OK && !rs_slot_allowed(ctx, slot) && !(flags & CKF_DONT_BLOCK));
	if (rv == CKR_OK && !rs_slot_allowed(ctx, slot))
		rv = CKR_NO_EVENT;
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK)
		pg_rpc_add_u64(out, slot);
	return true;
}

/* ---------------------------------------------------------------------------
 * Requests
 */

void
pg_rpc_calls_init(pg_rpc_calls *c, CK_FUNCTION_LIST_3_0 *funcs, bool v3,
                  const p11glue_uri *filter)
{
	memset(c, 0, sizeof(*c));
	c->funcs = funcs;
	c->v3 = v3;
	c->filter = filter;
	pthread_mutex_init(&c->lock, NULL);
	pg_handle_map_init(&c->allowed);
}

void
pg_rpc_calls_clear(pg_rpc_calls *c)
{
	pg_handle_map_clear(&c->allowed);
	pthread_mutex_destroy(&c->lock);
}

bool
pg_rpc_calls_run(pg_rpc_calls *c, uint32_t code, pg_rpc_in *in, pg_rpc_out *out)
{
	rs_ctx ctx = { c, c->funcs, c->v3, NULL };
	bool ok;

	if (code >= PG_RPC_CALL_COUNT || rs_handlers[code] == NULL)
		return false;
	ok = rs_handlers[code](&ctx, in, out);
	pg_rpc_arena_free(ctx.arena);
	return ok;
}
