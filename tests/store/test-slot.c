/*
 * slot.c: slots, tokens, C_InitToken, mechanisms, C_WaitForSlotEvent.
 */
#include "store-test.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static CK_ULONG
slot_count(void)
{
	CK_ULONG n = 0;

	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, NULL, &n), CKR_OK);
	return n;
}

static void
test_empty_store(void)
{
	CK_SLOT_ID slots[4], slot;
	CK_ULONG n = 0;
	CK_SLOT_INFO si;
	CK_TOKEN_INFO ti;
	CK_SESSION_HANDLE s;

	st_init();
	ck_assert_rv(p11->C_GetSlotList(CK_FALSE, NULL, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetSlotList(CK_FALSE, NULL, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	n = 0;
	ck_assert_rv(p11->C_GetSlotList(CK_FALSE, slots, &n), CKR_BUFFER_TOO_SMALL);
	pg_assert_int_eq(n, 1);
	n = 4;
	ck_assert_rv(p11->C_GetSlotList(CK_TRUE, slots, &n), CKR_OK);
	pg_assert_int_eq(n, 1);
	slot = slots[0];
	ck_assert_rv(p11->C_GetSlotInfo(slot, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetSlotInfo(slot + 7, &si), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_GetSlotInfo(slot, &si), CKR_OK);
	pg_assert(si.flags & CKF_TOKEN_PRESENT);
	pg_assert_mem_eq(si.manufacturerID, 7, "p11glue", 7);
	ck_assert_rv(p11->C_GetTokenInfo(slot, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetTokenInfo(slot + 7, &ti), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert(!(ti.flags & CKF_TOKEN_INITIALIZED));
	pg_assert(ti.flags & CKF_RNG);
	/* An uninitialised token cannot be used. */
	ck_assert_rv(p11->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s),
	             CKR_TOKEN_NOT_RECOGNIZED);
	st_fini();
}

static void
test_init_token(void)
{
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slot, free2;
	CK_TOKEN_INFO ti;

	st_init();
	slot = st_free_slot();
	memset(label, ' ', 32);
	memcpy(label, "first", 5);
	ck_assert_rv(p11->C_InitToken(slot + 9, (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_InitToken(slot, NULL, 9, label), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, 9, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)"123", 3, label), CKR_PIN_LEN_RANGE);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, 256, label), CKR_PIN_LEN_RANGE);
	pg_assert_int_eq(slot_count(), 1);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_OK);
	/* The token stays in its slot; a new free slot appears. */
	pg_assert_int_eq(slot_count(), 2);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert(ti.flags & CKF_TOKEN_INITIALIZED);
	pg_assert(ti.flags & CKF_LOGIN_REQUIRED);
	pg_assert(!(ti.flags & CKF_USER_PIN_INITIALIZED));
	pg_assert_mem_eq(ti.label, 32, label, 32);
	pg_assert_mem_eq(ti.manufacturerID, 8, "p11glue ", 8);
	pg_assert_int_eq(ti.ulMinPinLen, 4);
	pg_assert_int_eq(ti.ulMaxPinLen, 255);
	pg_assert(ti.serialNumber[0] != ' ');
	free2 = st_free_slot();
	pg_assert(free2 != slot);
	st_fini();
}

static void
test_slots_stable(void)
{
	CK_SLOT_ID a, b;
	CK_TOKEN_INFO ti;

	st_init();
	a = st_token("alpha");
	b = st_token("beta");
	pg_assert(a != b);
	pg_assert_int_eq(slot_count(), 3);
	st_fini();
	st_init();
	pg_assert_int_eq(slot_count(), 3);
	ck_assert_rv(p11->C_GetTokenInfo(a, &ti), CKR_OK);
	pg_assert_mem_eq(ti.label, 5, "alpha", 5);
	pg_assert(ti.flags & CKF_USER_PIN_INITIALIZED);
	ck_assert_rv(p11->C_GetTokenInfo(b, &ti), CKR_OK);
	pg_assert_mem_eq(ti.label, 4, "beta", 4);
	st_fini();
}

static void
test_reinit(void)
{
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_TOKEN_INFO ti;

	st_init();
	slot = st_token("old");
	s = st_open(slot, true);
	st_login(s);
	st_data(s, "doomed", true, false);
	st_data(s, "doomed too", true, true);
	memset(label, ' ', 32);
	memcpy(label, "new", 3);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_SESSION_EXISTS);
	ck_assert_rv(p11->C_CloseSession(s), CKR_OK);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)"wrong-pin", 9, label), CKR_PIN_INCORRECT);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert(ti.flags & CKF_SO_PIN_COUNT_LOW);
	pg_assert_mem_eq(ti.label, 3, "old", 3);
	ck_assert_rv(p11->C_InitToken(slot, (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_OK);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert_mem_eq(ti.label, 3, "new", 3);
	pg_assert(!(ti.flags & CKF_USER_PIN_INITIALIZED));
	pg_assert(!(ti.flags & CKF_SO_PIN_COUNT_LOW));
	pg_assert_int_eq(slot_count(), 2);
	s = st_open(slot, false);
	pg_assert_int_eq(st_count(s, NULL, 0), 0);
	st_fini();
	/* Still empty in a new instance. */
	st_init();
	s = st_open(slot, false);
	pg_assert_int_eq(st_count(s, NULL, 0), 0);
	st_fini();
}

#define SERIALS 12

/* The serial of a slot's token, NUL-terminated, into out. */
static void
serial_of(CK_SLOT_ID slot, char out[17])
{
	CK_TOKEN_INFO ti;

	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	memcpy(out, ti.serialNumber, 16);
	out[16] = 0;
	for (size_t i = 0; i < 16; i++)
		pg_assert(strchr("0123456789abcdef", out[i]) != NULL);
}

/* Tokens made one after the other (in the same second), in two store
 * directories, and initialised again never share a serial number. */
static void
test_unique_serials(void)
{
	char serials[SERIALS][17], before[17], other[600];
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slots[5];
	size_t n = 0;

	st_init();
	for (size_t i = 0; i < 5; i++) {
		slots[i] = st_token("same");
		serial_of(slots[i], serials[n++]);
	}
	/* C_InitToken again (p11glue init-token --force): a new token. */
	memset(label, ' ', 32);
	memcpy(label, "same", 4);
	ck_assert_rv(p11->C_InitToken(slots[0], (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_OK);
	serial_of(slots[0], serials[n++]);
	ck_assert_rv(p11->C_InitToken(slots[0], (CK_UTF8CHAR *)SO_PIN, 9, label), CKR_OK);
	serial_of(slots[0], serials[n++]);
	st_fini();
	/* The new serial is the one stored. */
	st_init();
	serial_of(slots[0], before);
	pg_assert_str_eq(before, serials[n - 1]);
	st_fini();
	/* Another store directory. */
	snprintf(other, sizeof(other), "store=%s/other", pg_test_tmpdir());
	ck_assert_rv(st_initialize(other), CKR_OK);
	for (size_t i = 0; i < 5; i++)
		serial_of(st_token("same"), serials[n++]);
	st_fini();
	pg_assert_int_eq(n, SERIALS);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(serials[i], serials[j]) == 0)
				pg_test_fail(__FILE__, __LINE__, "tokens %zu and %zu share serial %s",
				             i, j, serials[i]);
		}
	}
}

static void
test_mechanisms(void)
{
	CK_SLOT_ID slot;
	CK_ULONG n = 0;
	CK_MECHANISM_INFO mi;

	st_init();
	slot = st_token("mechs");
	ck_assert_rv(p11->C_GetMechanismList(slot + 9, NULL, &n), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_GetMechanismList(slot, NULL, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetMechanismList(slot, NULL, &n), CKR_OK);
	ck_assert_rv(p11->C_GetMechanismInfo(slot + 9, CKM_SHA256, &mi), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_GetMechanismInfo(slot, CKM_SHA256, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetMechanismInfo(slot, CKM_VENDOR_DEFINED + 77, &mi),
	             CKR_MECHANISM_INVALID);
	st_fini();
}

static void
test_event_nonblocking(void)
{
	CK_SLOT_ID slot = 99, made;

	st_init();
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, NULL, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, (void *)1), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL), CKR_NO_EVENT);
	made = st_token("event");
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL), CKR_OK);
	pg_assert_int_eq(slot, made);
	ck_assert_rv(p11->C_WaitForSlotEvent(CKF_DONT_BLOCK, &slot, NULL), CKR_NO_EVENT);
	st_fini();
}

typedef struct {
	CK_RV rv;
	CK_SLOT_ID slot;
} wait_result;

static void *
waiter(void *arg)
{
	wait_result *w = arg;

	w->rv = p11->C_WaitForSlotEvent(0, &w->slot, NULL);
	return NULL;
}

static void
test_event_blocking(void)
{
	pthread_t t;
	wait_result w = { 0xffff, 0 };
	CK_SLOT_ID made;

	st_init();
	pg_assert_int_eq(pthread_create(&t, NULL, waiter, &w), 0);
	usleep(100000);
	made = st_token("wake up");
	pg_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_rv(w.rv, CKR_OK);
	pg_assert_int_eq(w.slot, made);

	/* C_Finalize ends a blocking wait. */
	w.rv = 0xffff;
	pg_assert_int_eq(pthread_create(&t, NULL, waiter, &w), 0);
	usleep(100000);
	st_fini();
	pg_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_rv(w.rv, CKR_CRYPTOKI_NOT_INITIALIZED);
}

static void
test_token_info_counts(void)
{
	CK_SLOT_ID slot;
	CK_TOKEN_INFO ti;

	st_init();
	slot = st_token("counts");
	st_open(slot, false);
	st_open(slot, true);
	st_open(slot, true);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert_int_eq(ti.ulSessionCount, 3);
	pg_assert_int_eq(ti.ulRwSessionCount, 2);
	pg_assert_ulong_eq(ti.ulMaxSessionCount, CK_EFFECTIVELY_INFINITE);
	ck_assert_rv(p11->C_CloseAllSessions(slot + 9), CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_CloseAllSessions(slot), CKR_OK);
	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	pg_assert_int_eq(ti.ulSessionCount, 0);
	pg_assert_int_eq(ti.ulRwSessionCount, 0);
	st_fini();
}

int
main(int argc, char **argv)
{
	pg_test_fixture(NULL, st_teardown);
	pg_test("slot/empty-store", test_empty_store);
	pg_test("slot/init-token", test_init_token);
	pg_test("slot/stable-ids", test_slots_stable);
	pg_test("slot/reinit", test_reinit);
	pg_test("slot/unique-serials", test_unique_serials);
	pg_test("slot/mechanisms", test_mechanisms);
	pg_test("slot/event-nonblocking", test_event_nonblocking);
	pg_test("slot/event-blocking", test_event_blocking);
	pg_test("slot/token-info-counts", test_token_info_counts);
	return pg_test_run(argc, argv);
}
