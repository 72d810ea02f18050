/*
 * The session service's tokens and their login (see svc.h, service.h).
 *
 * A token is unlocked when the service's own session on it (the holder)
 * is logged in as the user. PKCS#11 keeps the login per application, for
 * all of its sessions, until C_Logout or until its last session closes
 * (v3.0 §5.6); the service is that one application, so every client's
 * sessions show the user's state, and the holder keeps the login while
 * clients come and go. Only the holder ever logs in or out: a client's
 * C_Login is answered from here (pg_svc_login), its C_Logout by calls.c.
 */
#define _GNU_SOURCE
#include "config.h"

#include "svc.h"
#include "pinentry.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tries of the PIN in one pinentry dialog before CKR_PIN_INCORRECT. */
#define PINENTRY_TRIES 3
/* How long a pinentry dialog may stay open (seconds). */
#define PINENTRY_WAIT_S 600
#define MAX_PIN 256

svc_state pg_svc = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

void
pg_svc_init(pg_module *module, const pg_service_options *opts)
{
	const char *program = opts->pinentry;

	pg_svc.module = module;
	pg_svc.f = pg_module_functions(module);
	pg_svc.v3 = pg_module_is_v3(module);
	if (program == NULL)
		program = getenv("P11GLUE_PINENTRY");
	if (program == NULL || *program == 0)
		program = "pinentry";
	pg_svc.pinentry = strcmp(program, "none") == 0 ? NULL : program;
	pg_svc.idle_lock = opts->idle_lock;
	pg_svc.verbose = opts->verbose;
	pg_svc.started = time(NULL);
}

svc_token *
pg_svc_token(CK_SLOT_ID slot)
{
	svc_token *t;

	pthread_mutex_lock(&pg_svc.lock);
	for (t = pg_svc.tokens; t != NULL && t->slot != slot; t = t->next)
		;
	if (t == NULL && (t = calloc(1, sizeof(*t))) != NULL) {
		t->slot = slot;
		atomic_init(&t->last_use, 0);
		t->next = pg_svc.tokens;
		pg_svc.tokens = t;
	}
	pthread_mutex_unlock(&pg_svc.lock);
	return t;
}

bool
pg_svc_unlocked(svc_token *t)
{
	bool unlocked;

	pthread_mutex_lock(&pg_svc.lock);
	unlocked = t->unlocked;
	pthread_mutex_unlock(&pg_svc.lock);
	return unlocked;
}

/* The token's label, blanks trimmed, for the dialog. */
static void
token_label(svc_token *t, char out[static 33])
{
	CK_TOKEN_INFO info;
	size_t n = 0;

	if (pg_svc.f->C_GetTokenInfo(t->slot, &info) == CKR_OK) {
		memcpy(out, info.label, 32);
		n = 32;
		while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == 0))
			n--;
	}
	out[n] = 0;
}

/* ---------------------------------------------------------------------------
 * Logging the holder in and out (t->asking set, pg_svc.lock not held)
 */

static CK_RV
login_with(svc_token *t, const CK_UTF8CHAR *pin, CK_ULONG len)
{
	CK_SESSION_HANDLE holder;
	CK_RV rv;

	rv = pg_svc.f->C_OpenSession(t->slot, CKF_SERIAL_SESSION, NULL, NULL, &holder);
	if (rv != CKR_OK)
		return rv;
	rv = pg_svc.f->C_Login(holder, CKU_USER, (CK_UTF8CHAR_PTR)pin, len);
	if (rv == CKR_USER_ALREADY_LOGGED_IN)
		rv = CKR_OK;
	if (rv != CKR_OK) {
		pg_svc.f->C_CloseSession(holder);
		return rv;
	}
	pthread_mutex_lock(&pg_svc.lock);
	t->holder = holder;
	pthread_mutex_unlock(&pg_svc.lock);
	return CKR_OK;
}

static void
set_pinentry(svc_token *t, pid_t pid)
{
	pthread_mutex_lock(&pg_svc.lock);
	t->pinentry = pid;
	pthread_mutex_unlock(&pg_svc.lock);
}

/*
 * Asks through pinentry and passes each PIN to check (the holder's login,
 * or a context-specific one), retrying a wrong PIN in the same dialog.
 */
static CK_RV
ask(svc_token *t, bool again, CK_RV (*check)(svc_token *, const CK_UTF8CHAR *, CK_ULONG, void *),
    void *data)
{
	unsigned char pin[MAX_PIN];
	char label[33], desc[400];
	const char *why, *error = NULL;
	pg_pinentry *p;
	size_t len = 0;
	CK_RV rv = CKR_FUNCTION_CANCELED;
	int rc;

	if (pg_svc.pinentry == NULL)
		return CKR_FUNCTION_CANCELED;
	token_label(t, label);
	snprintf(desc, sizeof(desc), again
	         ? "The key you are using on token \"%s\" asks for its PIN each time.\n\nEnter the PIN of \"%s\"."
	         : "An application needs token \"%s\" (p11glue), which is locked.\n\nEnter the PIN of \"%s\" to unlock it for every application of this session.",
	         label, label);
	p = pg_pinentry_open(pg_svc.pinentry, &why);
	if (p == NULL) {
		pg_message("service: cannot ask for the PIN of '%s' with %s: %s", label, pg_svc.pinentry,
		           why);
		return CKR_FUNCTION_FAILED;
	}
	set_pinentry(t, pg_pinentry_pid(p));
	for (int i = 0; i < PINENTRY_TRIES; i++) {
		rc = pg_pinentry_getpin(p, desc, "PIN:", error, pin, sizeof(pin), &len, PINENTRY_WAIT_S);
		if (rc != PG_PINENTRY_OK) {
			rv = rc == PG_PINENTRY_CANCELLED ? CKR_FUNCTION_CANCELED : CKR_FUNCTION_FAILED;
			break;
		}
		rv = check(t, pin, (CK_ULONG)len, data);
		pg_memzero(pin, sizeof(pin));
		if (rv != CKR_PIN_INCORRECT)
			break;
		error = "Wrong PIN; try again.";
	}
	set_pinentry(t, 0);
	pg_memzero(pin, sizeof(pin));
	pg_pinentry_close(p);
	return rv;
}

static CK_RV
check_login(svc_token *t, const CK_UTF8CHAR *pin, CK_ULONG len, void *data)
{
	(void)data;
	return login_with(t, pin, len);
}

static CK_RV
check_again(svc_token *t, const CK_UTF8CHAR *pin, CK_ULONG len, void *data)
{
	(void)t;
	return pg_svc.f->C_Login(*(CK_SESSION_HANDLE *)data, CKU_CONTEXT_SPECIFIC, (CK_UTF8CHAR_PTR)pin,
	                         len);
}

/* ---------------------------------------------------------------------------
 * What clients get
 */

CK_RV
pg_svc_login(svc_token *t, const CK_UTF8CHAR *pin, CK_ULONG len)
{
	uint64_t round;
	CK_RV rv;

	pthread_mutex_lock(&pg_svc.lock);
	for (;;) {
		/* Unlocked: a login through the protected path (no PIN) has
		 * nothing more to do and succeeds, as a PIN pad's would with
		 * the card verified already; a PIN offered anyway is not
		 * checked: the user is logged in (PKCS#11 v3.0 §5.6). */
		if (t->unlocked) {
			rv = pin == NULL ? CKR_OK : CKR_USER_ALREADY_LOGGED_IN;
			goto out;
		}
		if (!t->asking)
			break;
		/* One login at a time. A client without a PIN takes the answer
		 * of the dialog that was open: one dialog for all of them. */
		round = t->round;
		if (pg_svc.verbose)
			pg_message("service: slot %lu: a login waits for the one in progress", t->slot);
		while (t->asking && t->round == round)
			pthread_cond_wait(&pg_svc.cond, &pg_svc.lock);
		if (pin == NULL && t->asked_pinentry) {
			rv = t->unlocked ? CKR_OK : t->result;
			goto out;
		}
	}
	t->asking = true;
	pthread_mutex_unlock(&pg_svc.lock);
	rv = pin != NULL ? login_with(t, pin, len) : ask(t, false, check_login, NULL);
	pthread_mutex_lock(&pg_svc.lock);
	t->asking = false;
	t->asked_pinentry = pin == NULL;
	t->result = rv;
	t->round++;
	if (rv == CKR_OK) {
		t->unlocked = true;
		t->since = time(NULL);
		pg_svc_touch(t);
	}
	pthread_cond_broadcast(&pg_svc.cond);
	if (pg_svc.verbose)
		pg_message("service: slot %lu: %s", t->slot,
		           rv == CKR_OK ? "unlocked" : pin ? "a login failed" : "the PIN dialog gave no PIN");
out:
	pthread_mutex_unlock(&pg_svc.lock);
	return rv;
}

CK_RV
pg_svc_login_again(svc_token *t, CK_SESSION_HANDLE session)
{
	return ask(t, true, check_again, &session);
}

/* Logs the holder out (pg_svc.lock held; t unlocked, no login running). */
static void
lock_locked(svc_token *t)
{
	CK_SESSION_HANDLE holder = t->holder;

	/* C_Logout wipes the token key and every unwrapped value; closing
	 * the holder would log out too, as the last session of the
	 * service on a token nobody else uses. */
	pg_svc.f->C_Logout(holder);
	pg_svc.f->C_CloseSession(holder);
	t->holder = 0;
	t->unlocked = false;
	t->since = 0;
	if (pg_svc.verbose)
		pg_message("service: slot %lu: locked", t->slot);
}

bool
pg_svc_lock(svc_token *t)
{
	bool was;

	pthread_mutex_lock(&pg_svc.lock);
	/* A dialog asking for this token's PIN is cancelled: the user wants
	 * it locked. A PIN being checked is waited for. */
	while (t->asking) {
		if (t->pinentry > 0)
			kill(t->pinentry, SIGTERM);
		pthread_cond_wait(&pg_svc.cond, &pg_svc.lock);
	}
	was = t->unlocked;
	if (was)
		lock_locked(t);
	pthread_mutex_unlock(&pg_svc.lock);
	return was;
}

unsigned
pg_svc_lock_all(void)
{
	unsigned n = 0;
	svc_token *t;

	pthread_mutex_lock(&pg_svc.lock);
	t = pg_svc.tokens;
	pthread_mutex_unlock(&pg_svc.lock);
	/* Tokens are only ever added at the head: the list from t on stays. */
	for (; t != NULL; t = t->next)
		n += pg_svc_lock(t);
	return n;
}

static long long
now_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	return (long long)now.tv_sec;
}

uint64_t
pg_svc_idle_left(svc_token *t)
{
	long long used = atomic_load_explicit(&t->last_use, memory_order_relaxed);
	long long left = used + (long long)pg_svc.idle_lock - now_s();

	if (pg_svc.idle_lock == 0)
		return UINT64_MAX;
	return left > 0 ? (uint64_t)left : 0;
}

int
pg_svc_idle_check(void)
{
	long long next = -1, left;
	svc_token *t;

	if (pg_svc.idle_lock == 0)
		return -1;
	pthread_mutex_lock(&pg_svc.lock);
	for (t = pg_svc.tokens; t != NULL; t = t->next) {
		if (!t->unlocked || t->asking)
			continue;
		left = (long long)pg_svc_idle_left(t);
		if (left == 0) {
			lock_locked(t);
			continue;
		}
		if (next < 0 || left < next)
			next = left;
	}
	pthread_mutex_unlock(&pg_svc.lock);
	/* A second past the due time, rounded: last_use has whole seconds. */
	return next < 0 ? -1 : (int)((next + 1) * 1000);
}
