/*
 * The slot and token calls: slot and token information, mechanisms,
 * C_InitToken and C_WaitForSlotEvent, over the token list (tokenlist.c).
 */
#include "config.h"

#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

CK_RV
C_GetSlotList(CK_BBOOL tokenPresent, CK_SLOT_ID_PTR pSlotList, CK_ULONG_PTR pulCount)
{
	CK_ULONG n = 0;
	CK_RV rv = pg_store_check_initialized();

	(void)tokenPresent;   /* every slot has a token, if only an uninitialised one */
	if (rv != CKR_OK)
		return rv;
	if (pulCount == NULL)
		return CKR_ARGUMENTS_BAD;
	pg_store_lock();
	/* Rescan on the sizing call, so the filling call sees the same list. */
	if (pSlotList == NULL)
		pg_tokens_scan_locked(false);
	for (pg_token *t = pg_store.tokens; t != NULL; t = t->next) {
		if (!t->free_slot && t->db == NULL)
			continue;
		if (pSlotList != NULL && n < *pulCount)
			pSlotList[n] = t->slot;
		n++;
	}
	pg_store_unlock();
	if (pSlotList != NULL && n > *pulCount)
		rv = CKR_BUFFER_TOO_SMALL;
	*pulCount = n;
	return rv;
}

/*
 * Starts a call on slotID: CKR_OK with the module lock held and *tok its
 * token (or slot), else the module is not initialized or there is no
 * such slot and the lock is not held.
 */
static CK_RV
enter_slot(CK_SLOT_ID slotID, pg_token **tok)
{
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	pg_store_lock();
	*tok = pg_token_find_locked(slotID);
	if (*tok == NULL) {
		pg_store_unlock();
		return CKR_SLOT_ID_INVALID;
	}
	return CKR_OK;
}

/* The module is initialized and slotID is one of its slots, then the
 * arguments (args_ok false: CKR_ARGUMENTS_BAD). */
static CK_RV
slot_valid(CK_SLOT_ID slotID, bool args_ok)
{
	pg_token *tok;
	CK_RV rv = enter_slot(slotID, &tok);

	if (rv != CKR_OK)
		return rv;
	pg_store_unlock();
	return args_ok ? CKR_OK : CKR_ARGUMENTS_BAD;
}

CK_RV
C_GetSlotInfo(CK_SLOT_ID slotID, CK_SLOT_INFO_PTR pInfo)
{
	char desc[64];
	CK_RV rv = slot_valid(slotID, pInfo != NULL);

	if (rv != CKR_OK)
		return rv;
	snprintf(desc, sizeof(desc), "p11glue key store slot %lu", slotID);
	pg_pad(pInfo->slotDescription, sizeof(pInfo->slotDescription), desc);
	pg_pad(pInfo->manufacturerID, sizeof(pInfo->manufacturerID), "p11glue");
	pInfo->flags = CKF_TOKEN_PRESENT;
	pInfo->hardwareVersion.major = 0;
	pInfo->hardwareVersion.minor = 1;
	pInfo->firmwareVersion.major = 0;
	pInfo->firmwareVersion.minor = 1;
	return CKR_OK;
}

static void
token_info_locked(pg_token *tok, CK_TOKEN_INFO *info)
{
	char serial[PG_SERIAL_LEN + 1];

	memset(info, 0, sizeof(*info));
	if (tok->free_slot)
		memset(info->label, ' ', sizeof(info->label));
	else
		memcpy(info->label, tok->label, sizeof(info->label));
	pg_pad(info->manufacturerID, sizeof(info->manufacturerID), "p11glue");
	pg_pad(info->model, sizeof(info->model), "p11glue store");
	memcpy(serial, tok->serial, PG_SERIAL_LEN);
	serial[PG_SERIAL_LEN] = 0;
	pg_pad(info->serialNumber, sizeof(info->serialNumber), tok->free_slot ? "" : serial);
	info->flags = pg_token_flags_locked(tok);
	info->ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	info->ulSessionCount = tok->sessions;
	info->ulMaxRwSessionCount = CK_EFFECTIVELY_INFINITE;
	info->ulRwSessionCount = tok->rw_sessions;
	info->ulMaxPinLen = PG_PIN_MAX;
	info->ulMinPinLen = PG_PIN_MIN;
	info->ulTotalPublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulTotalPrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->hardwareVersion.minor = 1;
	info->firmwareVersion.minor = 1;
	memset(info->utcTime, ' ', sizeof(info->utcTime));
}

CK_RV
C_GetTokenInfo(CK_SLOT_ID slotID, CK_TOKEN_INFO_PTR pInfo)
{
	pg_token *tok;
	CK_RV rv = enter_slot(slotID, &tok);

	if (rv != CKR_OK)
		return rv;
	if (pInfo == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else
		rv = pg_token_sync(tok);
	if (rv == CKR_OK)
		token_info_locked(tok, pInfo);
	pg_store_unlock();
	return rv;
}

CK_RV
C_GetMechanismList(CK_SLOT_ID slotID, CK_MECHANISM_TYPE_PTR pMechanismList,
                   CK_ULONG_PTR pulCount)
{
	CK_RV rv = slot_valid(slotID, pulCount != NULL);

	if (rv != CKR_OK)
		return rv;
	return pg_mech_list(pMechanismList, pulCount);
}

CK_RV
C_GetMechanismInfo(CK_SLOT_ID slotID, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO_PTR pInfo)
{
	CK_RV rv = slot_valid(slotID, pInfo != NULL);

	if (rv != CKR_OK)
		return rv;
	return pg_mech_info(type, pInfo);
}

/*
 * A serial for a token being made or initialised again: 64 random bits
 * as 16 hex digits, drawn again while a token this process sees has it,
 * so the tokens of one store never share one (and tokens elsewhere do
 * with probability 2^-64 per pair). A token initialised again is a new
 * token to applications (its objects are gone), so it gets a new serial.
 */
static bool
new_serial_locked(char serial[PG_SERIAL_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[PG_SERIAL_LEN / 2];
	bool taken = true;

	for (int tries = 0; taken && tries < 16; tries++) {
		if (!pg_random(rnd, sizeof(rnd)))
			return false;
		for (size_t i = 0; i < sizeof(rnd); i++) {
			serial[2 * i] = hex[rnd[i] >> 4];
			serial[2 * i + 1] = hex[rnd[i] & 15];
		}
		taken = false;
		for (pg_token *t = pg_store.tokens; t != NULL && !taken; t = t->next)
			taken = !t->free_slot && t->db != NULL &&
			        memcmp(t->serial, serial, PG_SERIAL_LEN) == 0;
	}
	return !taken;
}

/*
 * A new token key wrapped under the SO PIN into *so. The caller holds the
 * lock, which is released while the KDF runs: the caller checks the
 * store is still the one it was after.
 */
static CK_RV
wrap_new_key_locked(CK_UTF8CHAR_PTR pin, CK_ULONG len, unsigned log2n, pg_pin_wrap *so)
{
	pg_token_key *key;
	CK_RV rv;

	pg_store_unlock();
	key = pg_token_key_new();
	rv = key ? pg_token_key_wrap(key, CKU_SO, pin, len, log2n, so) : CKR_HOST_MEMORY;
	pg_token_key_free(key);
	pg_store_lock();
	return rv;
}

/* C_InitToken on the free slot: a new token file. */
static CK_RV
init_new_locked(pg_token *tok, CK_UTF8CHAR_PTR pin, CK_ULONG len, CK_UTF8CHAR_PTR label)
{
	char serial[PG_SERIAL_LEN];
	pg_pin_wrap so;
	unsigned log2n = pg_store.kdf_log2n, gen = pg_store.generation;
	CK_SLOT_ID slot = tok->slot;
	CK_RV rv;

	if (len < PG_PIN_MIN || len > PG_PIN_MAX)
		return CKR_PIN_LEN_RANGE;
	rv = wrap_new_key_locked(pin, len, log2n, &so);
	if (rv != CKR_OK)
		return rv;
	if (!pg_store.initialized || pg_store.generation != gen)
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	tok = pg_token_any_locked(slot);
	if (tok == NULL || !tok->free_slot)
		return CKR_FUNCTION_FAILED;
	rv = new_serial_locked(serial) ? pg_db_create(tok->path, label, serial, &so, pg_store.max_fails)
	                               : CKR_FUNCTION_FAILED;
	pg_memzero(&so, sizeof(so));
	/* Whoever created it (we or a racing process), the scan opens it. */
	pg_tokens_scan_locked(false);
	return rv;
}

/* C_InitToken on a token: destroys its objects, new token key. */
static CK_RV
init_again_locked(pg_token *tok, CK_UTF8CHAR_PTR pin, CK_ULONG len, CK_UTF8CHAR_PTR label)
{
	char serial[PG_SERIAL_LEN];
	pg_token_key *key = NULL;
	pg_pin_wrap so;
	unsigned log2n = pg_store.kdf_log2n, gen = pg_store.generation;
	CK_RV rv = pg_token_sync(tok);

	if (rv == CKR_OK)
		rv = pg_pin_verify_locked(tok, CKU_SO, pin, len, &key);
	pg_token_key_free(key);
	if (rv != CKR_OK)
		return rv;
	rv = wrap_new_key_locked(pin, len, log2n, &so);
	if (rv == CKR_OK && (!pg_store.initialized || pg_store.generation != gen))
		return CKR_CRYPTOKI_NOT_INITIALIZED;
	if (rv == CKR_OK && tok->sessions > 0)
		rv = CKR_SESSION_EXISTS;
	if (rv == CKR_OK && !new_serial_locked(serial))
		rv = CKR_FUNCTION_FAILED;
	if (rv == CKR_OK)
		rv = pg_token_begin_write(tok);
	if (rv != CKR_OK)
		return rv;
	rv = pg_db_reinit(tok, label, serial, &so);
	if (rv == CKR_OK)
		rv = pg_db_commit(tok);
	else
		pg_db_rollback(tok);
	if (rv != CKR_OK)
		return rv;
	/* The same as another process seeing the new epoch (db.c). */
	pg_token_logout_locked(tok);
	for (pg_entry *e = tok->objects, *next; e != NULL; e = next) {
		next = e->next;
		pg_entry_unpublish_locked(e);
	}
	tok->epoch++;
	memcpy(tok->label, label, sizeof(tok->label));
	memcpy(tok->serial, serial, PG_SERIAL_LEN);
	memset(&tok->pins[CKU_USER], 0, sizeof(tok->pins[CKU_USER]));
	pg_token_event_locked(tok->slot);
	return CKR_OK;
}

CK_RV
C_InitToken(CK_SLOT_ID slotID, CK_UTF8CHAR_PTR pPin, CK_ULONG ulPinLen, CK_UTF8CHAR_PTR pLabel)
{
	pg_token *tok;
	CK_RV rv = enter_slot(slotID, &tok);

	if (rv != CKR_OK)
		return rv;
	if (pPin == NULL || pLabel == NULL)
		rv = CKR_ARGUMENTS_BAD;
	else if (tok->sessions > 0)
		rv = CKR_SESSION_EXISTS;
	else if (tok->free_slot)
		rv = init_new_locked(tok, pPin, ulPinLen, pLabel);
	else
		rv = init_again_locked(tok, pPin, ulPinLen, pLabel);
	pg_store_unlock();
	return rv;
}

CK_RV
C_WaitForSlotEvent(CK_FLAGS flags, CK_SLOT_ID_PTR pSlot, CK_VOID_PTR pReserved)
{
	struct timespec until;
	CK_RV rv = pg_store_check_initialized();

	if (rv != CKR_OK)
		return rv;
	if (pSlot == NULL || pReserved != NULL)
		return CKR_ARGUMENTS_BAD;
	pg_store_lock();
	for (;;) {
		if (!pg_store.initialized) {
			rv = CKR_CRYPTOKI_NOT_INITIALIZED;
			break;
		}
		pg_tokens_scan_locked(false);
		if (pg_store.n_events > 0) {
			*pSlot = pg_store.events[0];
			memmove(pg_store.events, pg_store.events + 1,
			        --pg_store.n_events * sizeof(CK_SLOT_ID));
			rv = CKR_OK;
			break;
		}
		if (flags & CKF_DONT_BLOCK) {
			rv = CKR_NO_EVENT;
			break;
		}
		/* Other processes create tokens too: look again every half second. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 500000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pg_store.waiters++;
		pthread_cond_timedwait(&pg_store.event, pg_store_mutex(), &until);
		pg_store.waiters--;
	}
	if (!pg_store.initialized)
		pthread_cond_broadcast(&pg_store.event);
	pg_store_unlock();
	return rv;
}
