/*
 * session.c and login.c: sessions, states, login, PINs, retry counters.
 */
#include "store-test.h"

#define PIN(p) (CK_UTF8CHAR *)(p), (CK_ULONG)strlen(p)

static CK_STATE
state_of(CK_SESSION_HANDLE s)
{
	CK_SESSION_INFO info;

	ck_assert_rv(p11->C_GetSessionInfo(s, &info), CKR_OK);
	return info.state;
}

static CK_FLAGS
flags_of(CK_SLOT_ID slot)
{
	CK_TOKEN_INFO ti;

	ck_assert_rv(p11->C_GetTokenInfo(slot, &ti), CKR_OK);
	return ti.flags;
}

static void
test_open_close(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s = 0, s2;
	CK_SESSION_INFO info;

	st_init();
	slot = st_token("sessions");
	ck_assert_rv(p11->C_OpenSession(slot + 5, CKF_SERIAL_SESSION, NULL, NULL, &s),
	             CKR_SLOT_ID_INVALID);
	ck_assert_rv(p11->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, NULL),
	             CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_OpenSession(slot, CKF_RW_SESSION, NULL, NULL, &s),
	             CKR_SESSION_PARALLEL_NOT_SUPPORTED);
	s = st_open(slot, false);
	s2 = st_open(slot, true);
	pg_assert(s != s2);
	ck_assert_rv(p11->C_GetSessionInfo(s, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetSessionInfo(s, &info), CKR_OK);
	pg_assert_int_eq(info.slotID, slot);
	pg_assert_int_eq(info.state, CKS_RO_PUBLIC_SESSION);
	pg_assert_int_eq(info.flags, CKF_SERIAL_SESSION);
	pg_assert_int_eq(info.ulDeviceError, 0);
	pg_assert_int_eq(state_of(s2), CKS_RW_PUBLIC_SESSION);
	ck_assert_rv(p11->C_CloseSession(s), CKR_OK);
	ck_assert_rv(p11->C_CloseSession(s), CKR_SESSION_HANDLE_INVALID);
	ck_assert_rv(p11->C_GetSessionInfo(s, &info), CKR_SESSION_HANDLE_INVALID);
	ck_assert_rv(p11->C_CloseSession(0), CKR_SESSION_HANDLE_INVALID);
	st_fini();
}

static void
test_login_states(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE ro, rw, s;

	st_init();
	slot = st_token("states");
	ro = st_open(slot, false);
	rw = st_open(slot, true);
	ck_assert_rv(p11->C_Login(ro, CKU_USER, NULL, 4), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_Login(ro, 7, PIN(USER_PIN)), CKR_USER_TYPE_INVALID);
	ck_assert_rv(p11->C_Login(ro + 100, CKU_USER, PIN(USER_PIN)), CKR_SESSION_HANDLE_INVALID);
	ck_assert_rv(p11->C_Logout(ro), CKR_USER_NOT_LOGGED_IN);
	ck_assert_rv(p11->C_Login(ro, CKU_CONTEXT_SPECIFIC, PIN(USER_PIN)), CKR_USER_NOT_LOGGED_IN);
	/* The SO cannot log in while a read-only session exists. */
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN(SO_PIN)), CKR_SESSION_READ_ONLY_EXISTS);
	st_login(ro);
	/* A login covers every session of the application. */
	pg_assert_int_eq(state_of(ro), CKS_RO_USER_FUNCTIONS);
	pg_assert_int_eq(state_of(rw), CKS_RW_USER_FUNCTIONS);
	ck_assert_rv(p11->C_Login(rw, CKU_USER, PIN(USER_PIN)), CKR_USER_ALREADY_LOGGED_IN);
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN(SO_PIN)), CKR_USER_ANOTHER_ALREADY_LOGGED_IN);
	/* Context-specific: only for an operation that waits for it. */
	ck_assert_rv(p11->C_Login(rw, CKU_CONTEXT_SPECIFIC, PIN(USER_PIN)),
	             CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_Logout(rw), CKR_OK);
	pg_assert_int_eq(state_of(ro), CKS_RO_PUBLIC_SESSION);
	ck_assert_rv(p11->C_CloseSession(ro), CKR_OK);
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN(SO_PIN)), CKR_OK);
	pg_assert_int_eq(state_of(rw), CKS_RW_SO_FUNCTIONS);
	ck_assert_rv(p11->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s),
	             CKR_SESSION_READ_WRITE_SO_EXISTS);
	s = st_open(slot, true);
	pg_assert_int_eq(state_of(s), CKS_RW_SO_FUNCTIONS);
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN(USER_PIN)), CKR_USER_ANOTHER_ALREADY_LOGGED_IN);
	/* Closing the last session logs out. */
	ck_assert_rv(p11->C_CloseSession(s), CKR_OK);
	ck_assert_rv(p11->C_CloseSession(rw), CKR_OK);
	s = st_open(slot, false);
	pg_assert_int_eq(state_of(s), CKS_RO_PUBLIC_SESSION);
	st_fini();
}

static void
test_login_user(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	st_init();
	slot = st_token("loginuser");
	s = st_open(slot, false);
	ck_assert_rv(p11->C_LoginUser(s, CKU_USER, PIN(USER_PIN), NULL, 3), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_LoginUser(s, CKU_USER, PIN(USER_PIN), (CK_UTF8CHAR *)"bob", 3), CKR_OK);
	pg_assert_int_eq(state_of(s), CKS_RO_USER_FUNCTIONS);
	st_fini();
}

static void
test_user_pin_not_initialized(void)
{
	CK_UTF8CHAR label[32];
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	st_init();
	slot = st_free_slot();
	memset(label, ' ', 32);
	ck_assert_rv(p11->C_InitToken(slot, PIN(SO_PIN), label), CKR_OK);
	s = st_open(slot, true);
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN(USER_PIN)), CKR_USER_PIN_NOT_INITIALIZED);
	ck_assert_rv(p11->C_SetPIN(s, PIN(USER_PIN), PIN("5678")), CKR_USER_PIN_NOT_INITIALIZED);
	ck_assert_rv(p11->C_InitPIN(s, PIN(USER_PIN)), CKR_USER_NOT_LOGGED_IN);
	ck_assert_rv(p11->C_Login(s, CKU_SO, PIN(SO_PIN)), CKR_OK);
	ck_assert_rv(p11->C_InitPIN(s, NULL, 4), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_InitPIN(s, PIN("123")), CKR_PIN_LEN_RANGE);
	ck_assert_rv(p11->C_InitPIN(s, (CK_UTF8CHAR *)label, 256), CKR_PIN_LEN_RANGE);
	ck_assert_rv(p11->C_InitPIN(s, PIN(USER_PIN)), CKR_OK);
	pg_assert(flags_of(slot) & CKF_USER_PIN_INITIALIZED);
	ck_assert_rv(p11->C_Logout(s), CKR_OK);
	st_login(s);
	st_fini();
}

static void
test_wrong_pins(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	ck_assert_rv(st_initialize("max-pin-attempts=3"), CKR_OK);
	slot = st_token("lockout");
	s = st_open(slot, false);
	pg_assert(!(flags_of(slot) & (CKF_USER_PIN_COUNT_LOW | CKF_USER_PIN_FINAL_TRY)));
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("0000")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_USER_PIN_COUNT_LOW);
	pg_assert(!(flags_of(slot) & CKF_USER_PIN_FINAL_TRY));
	/* A PIN of an impossible length is refused without counting. */
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("00")), CKR_PIN_INCORRECT);
	pg_assert(!(flags_of(slot) & CKF_USER_PIN_FINAL_TRY));
	/* The right PIN resets the count. */
	st_login(s);
	ck_assert_rv(p11->C_Logout(s), CKR_OK);
	pg_assert(!(flags_of(slot) & CKF_USER_PIN_COUNT_LOW));
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("0000")), CKR_PIN_INCORRECT);
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("0000")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_USER_PIN_FINAL_TRY);
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("0000")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_USER_PIN_LOCKED);
	/* Locked: even the right PIN is refused, across restarts. */
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN(USER_PIN)), CKR_PIN_LOCKED);
	st_fini();
	st_init();
	s = st_open(slot, true);
	pg_assert(flags_of(slot) & CKF_USER_PIN_LOCKED);
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN(USER_PIN)), CKR_PIN_LOCKED);
	ck_assert_rv(p11->C_SetPIN(s, PIN(USER_PIN), PIN("5678")), CKR_PIN_LOCKED);
	/* The SO unlocks by setting a new user PIN. */
	ck_assert_rv(p11->C_Login(s, CKU_SO, PIN(SO_PIN)), CKR_OK);
	ck_assert_rv(p11->C_InitPIN(s, PIN("4321")), CKR_OK);
	ck_assert_rv(p11->C_Logout(s), CKR_OK);
	pg_assert(!(flags_of(slot) & (CKF_USER_PIN_LOCKED | CKF_USER_PIN_COUNT_LOW)));
	ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("4321")), CKR_OK);
	st_fini();
}

static void
test_default_attempts(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	st_init();
	slot = st_token("ten");
	s = st_open(slot, false);
	/* GnuPG retries a wrong PIN three times: that must not lock. */
	for (int i = 0; i < 9; i++)
		ck_assert_rv(p11->C_Login(s, CKU_USER, PIN("9999")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_USER_PIN_FINAL_TRY);
	pg_assert(!(flags_of(slot) & CKF_USER_PIN_LOCKED));
	st_login(s);
	st_fini();
}

static void
test_so_lockout(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;

	ck_assert_rv(st_initialize("max-pin-attempts=2"), CKR_OK);
	slot = st_token("so lock");
	s = st_open(slot, true);
	ck_assert_rv(p11->C_Login(s, CKU_SO, PIN("bad-so-pin")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_SO_PIN_FINAL_TRY);
	ck_assert_rv(p11->C_Login(s, CKU_SO, PIN("bad-so-pin")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_SO_PIN_LOCKED);
	ck_assert_rv(p11->C_Login(s, CKU_SO, PIN(SO_PIN)), CKR_PIN_LOCKED);
	/* The user is not affected. */
	st_login(s);
	st_fini();
}

static void
test_set_pin(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE ro, rw;

	st_init();
	slot = st_token("setpin");
	ro = st_open(slot, false);
	rw = st_open(slot, true);
	ck_assert_rv(p11->C_SetPIN(ro, PIN(USER_PIN), PIN("5678")), CKR_SESSION_READ_ONLY);
	ck_assert_rv(p11->C_SetPIN(rw, NULL, 4, PIN("5678")), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_SetPIN(rw, PIN(USER_PIN), NULL, 4), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_SetPIN(rw, PIN(USER_PIN), PIN("567")), CKR_PIN_LEN_RANGE);
	ck_assert_rv(p11->C_SetPIN(rw, PIN("0000"), PIN("5678")), CKR_PIN_INCORRECT);
	pg_assert(flags_of(slot) & CKF_USER_PIN_COUNT_LOW);
	/* In a public session: the user's PIN. */
	ck_assert_rv(p11->C_SetPIN(rw, PIN(USER_PIN), PIN("5678")), CKR_OK);
	ck_assert_rv(p11->C_Login(rw, CKU_USER, PIN(USER_PIN)), CKR_PIN_INCORRECT);
	ck_assert_rv(p11->C_Login(rw, CKU_USER, PIN("5678")), CKR_OK);
	/* Logged in: the user's PIN again; private objects stay readable. */
	st_data(rw, "kept", true, true);
	ck_assert_rv(p11->C_SetPIN(rw, PIN("5678"), PIN("a longer pin")), CKR_OK);
	ck_assert_rv(p11->C_Logout(rw), CKR_OK);
	ck_assert_rv(p11->C_CloseSession(ro), CKR_OK);
	/* The SO's own PIN in an SO session. */
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN(SO_PIN)), CKR_OK);
	ck_assert_rv(p11->C_SetPIN(rw, PIN(SO_PIN), PIN("new-so-pin")), CKR_OK);
	ck_assert_rv(p11->C_Logout(rw), CKR_OK);
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN(SO_PIN)), CKR_PIN_INCORRECT);
	ck_assert_rv(p11->C_Login(rw, CKU_SO, PIN("new-so-pin")), CKR_OK);
	ck_assert_rv(p11->C_Logout(rw), CKR_OK);
	st_fini();
	st_init();
	rw = st_open(slot, false);
	ck_assert_rv(p11->C_Login(rw, CKU_USER, PIN("a longer pin")), CKR_OK);
	pg_assert_int_eq(st_count_label(rw, "kept"), 1);
	st_fini();
}

static void
test_operation_state(void)
{
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE s;
	CK_BYTE state[16];
	CK_ULONG len = sizeof(state);

	st_init();
	slot = st_token("opstate");
	s = st_open(slot, false);
	ck_assert_rv(p11->C_GetOperationState(s, state, NULL), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_GetOperationState(s, state, &len), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 0), CKR_OK);
	ck_assert_rv(p11->C_GetOperationState(s, NULL, &len), CKR_STATE_UNSAVEABLE);
	ck_assert_rv(p11->C_SetOperationState(s, NULL, 0, 0, 0), CKR_ARGUMENTS_BAD);
	ck_assert_rv(p11->C_SetOperationState(s, state, sizeof(state), 0, 0),
	             CKR_SAVED_STATE_INVALID);
	ck_assert_rv(p11->C_GetOperationState(s + 9, NULL, &len), CKR_SESSION_HANDLE_INVALID);
	/* C_SessionCancel ends the find. */
	ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 0), CKR_OPERATION_ACTIVE);
	ck_assert_rv(p11->C_SessionCancel(s, CKF_FIND_OBJECTS), CKR_OK);
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OPERATION_NOT_INITIALIZED);
	ck_assert_rv(p11->C_FindObjectsInit(s, NULL, 0), CKR_OK);
	ck_assert_rv(p11->C_SessionCancel(s, CKF_SIGN), CKR_OK);
	ck_assert_rv(p11->C_FindObjectsFinal(s), CKR_OK);
	ck_assert_rv(p11->C_SessionCancel(s + 9, CKF_SIGN), CKR_SESSION_HANDLE_INVALID);
	st_fini();
}

int
main(int argc, char **argv)
{
	pg_test_fixture(NULL, st_teardown);
	pg_test("session/open-close", test_open_close);
	pg_test("session/login-states", test_login_states);
	pg_test("session/login-user", test_login_user);
	pg_test("session/user-pin-not-initialized", test_user_pin_not_initialized);
	pg_test("session/wrong-pins", test_wrong_pins);
	pg_test("session/default-attempts", test_default_attempts);
	pg_test("session/so-lockout", test_so_lockout);
	pg_test("session/set-pin", test_set_pin);
	pg_test("session/operation-state", test_operation_state);
	return pg_test_run(argc, argv);
}
