/*
 * The module's state (pg_store) and the mutex that guards it, and fork
 * handling: the child inherits a copy of everything, but its sessions
 * and logins are not its own (PKCS#11 §5.4: the child must call
 * C_Initialize). An atfork handler marks the state stale, every call but
 * C_Initialize then answers CKR_CRYPTOKI_NOT_INITIALIZED, and
 * C_Initialize (lifecycle.c) drops the inherited state (wiping keys) and
 * starts anew. Nothing here calls another part of the store.
 */
#include "config.h"

#include "core.h"

pg_store_state pg_store = {
	.event = PTHREAD_COND_INITIALIZER,
};

static pthread_mutex_t store_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Serialises C_Initialize and C_Finalize (taken before store_mutex). */
static pthread_mutex_t init_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

void
pg_store_lock(void)
{
	pthread_mutex_lock(&store_mutex);
}

void
pg_store_unlock(void)
{
	pthread_mutex_unlock(&store_mutex);
}

pthread_mutex_t *
pg_store_mutex(void)
{
	return &store_mutex;
}

CK_RV
pg_store_check_initialized(void)
{
	bool ok;

	pg_store_lock();
	ok = pg_store.initialized && !pg_store.stale;
	pg_store_unlock();
	return ok ? CKR_OK : CKR_CRYPTOKI_NOT_INITIALIZED;
}

/* No thread of ours is inside the store (or a transaction) at a fork. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&init_mutex);
	pthread_mutex_lock(&store_mutex);
}

static void
fork_parent(void)
{
	pthread_mutex_unlock(&store_mutex);
	pthread_mutex_unlock(&init_mutex);
}

static void
fork_child(void)
{
	pthread_mutex_unlock(&store_mutex);
	pthread_mutex_unlock(&init_mutex);
	/* Waiting threads of the parent do not exist here. */
	pthread_cond_init(&pg_store.event, NULL);
	pg_store.waiters = 0;
	if (pg_store.initialized)
		pg_store.stale = true;
}

static void
atfork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void
pg_store_life_begin(void)
{
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&init_mutex);
}

void
pg_store_life_end(void)
{
	pthread_mutex_unlock(&init_mutex);
}
