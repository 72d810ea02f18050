/*
 * The session service's side of the control calls (control.h).
 */
#include "config.h"

#include "svc.h"
#include "control.h"
#include "marshal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The module's tokens, with each one's login state. */
static bool
status(pg_rpc_in *in, pg_rpc_out *out)
{
	CK_SLOT_ID *slots = NULL;
	CK_TOKEN_INFO info;
	CK_ULONG n = 0;
	CK_RV rv;
	svc_token *t;
	size_t len;

	if (!pg_rpc_in_done(in))
		return false;
	rv = pg_svc.f->C_GetSlotList(CK_TRUE, NULL, &n);
	if (rv == CKR_OK && n > PG_RPC_MAX_COUNT)
		rv = CKR_DEVICE_ERROR;
	if (rv == CKR_OK && (slots = calloc(n ? n : 1, sizeof(*slots))) == NULL)
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		rv = pg_svc.f->C_GetSlotList(CK_TRUE, slots, &n);
	pg_rpc_add_u64(out, rv);
	if (rv == CKR_OK) {
		pg_rpc_add_u64(out, (uint64_t)getpid());
		pg_rpc_add_u64(out, (uint64_t)pg_svc.started);
		pg_rpc_add_u64(out, pg_svc.idle_lock);
		len = pg_svc.pinentry ? strlen(pg_svc.pinentry) : 0;
		pg_rpc_add_bytes(out, pg_svc.pinentry ? pg_svc.pinentry : "", len);
		pg_rpc_add_u32(out, (uint32_t)n);
		for (CK_ULONG i = 0; i < n; i++) {
			if (pg_svc.f->C_GetTokenInfo(slots[i], &info) != CKR_OK)
				memset(&info, 0, sizeof(info));
			else
				info.flags |= CKF_PROTECTED_AUTHENTICATION_PATH;
			t = pg_svc_token(slots[i]);
			pg_rpc_add_u64(out, slots[i]);
			pg_rpc_add_token_info(out, &info);
			pthread_mutex_lock(&pg_svc.lock);
			pg_rpc_add_u8(out, t != NULL && t->unlocked);
			pg_rpc_add_u64(out, t != NULL && t->unlocked ? (uint64_t)t->since : 0);
			pthread_mutex_unlock(&pg_svc.lock);
			pg_rpc_add_u64(out, t != NULL && pg_svc_unlocked(t) ? pg_svc_idle_left(t)
			                                                  : PG_SERVICE_NO_IDLE);
		}
	}
	free(slots);
	return true;
}

static bool
lock(pg_rpc_in *in, pg_rpc_out *out)
{
	bool all = pg_rpc_get_u8(in) != 0;
	CK_SLOT_ID slot = pg_rpc_get_ulong(in);
	unsigned n = 0;
	svc_token *t = NULL;
	CK_RV rv = CKR_OK;

	if (!pg_rpc_in_done(in))
		return false;
	if (all) {
		n = pg_svc_lock_all();
	} else {
		pthread_mutex_lock(&pg_svc.lock);
		for (t = pg_svc.tokens; t != NULL && t->slot != slot; t = t->next)
			;
		pthread_mutex_unlock(&pg_svc.lock);
		if (t != NULL)
			n = pg_svc_lock(t);
		else if (pg_svc.f->C_GetTokenInfo(slot, &(CK_TOKEN_INFO){ 0 }) != CKR_OK)
			rv = CKR_SLOT_ID_INVALID;
	}
	pg_rpc_add_u64(out, rv);
	pg_rpc_add_u32(out, n);
	return true;
}

bool
pg_svc_control(void *data, uint32_t code, pg_rpc_in *in, pg_rpc_out *out)
{
	(void)data;
	switch (code) {
	case PG_SERVICE_STATUS:
		return status(in, out);
	case PG_SERVICE_LOCK:
		return lock(in, out);
	default:
		return false;
	}
}
