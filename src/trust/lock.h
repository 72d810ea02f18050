/*
 * A mutex whose uncontended lock and unlock are one atomic instruction
 * each, for the trust module's per-call lock (an NSS start-up makes a
 * hundred thousand attribute reads, each a call). Contention falls back
 * to a pthread mutex and condition variable (U. Drepper, "Futexes Are
 * Tricky", mutex 2, with the condition variable standing in for a
 * futex): state 0 free, 1 held, 2 held and maybe waited for.
 *
 * Not recursive. Initialize statically with PG_LOCK_INIT.
 */
#ifndef PG_TRUST_LOCK_H
#define PG_TRUST_LOCK_H

#include <pthread.h>
#include <stdatomic.h>

typedef struct {
	atomic_int state;
	pthread_mutex_t mutex;
	pthread_cond_t wake;
} pg_lock;

#define PG_LOCK_INIT { 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER }

static inline void
pg_lock_slow(pg_lock *l)
{
	/* Mark the lock waited for; sleep until it is free. Holding the
	 * mutex between the exchange and the wait means an unlock cannot
	 * signal before we wait (it takes the mutex to signal). */
	pthread_mutex_lock(&l->mutex);
	while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0)
		pthread_cond_wait(&l->wake, &l->mutex);
	pthread_mutex_unlock(&l->mutex);
}

static inline void
pg_lock_acquire(pg_lock *l)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong_explicit(&l->state, &expected, 1,
	                                             memory_order_acquire, memory_order_relaxed))
		pg_lock_slow(l);
}

static inline void
pg_lock_release(pg_lock *l)
{
	if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2) {
		pthread_mutex_lock(&l->mutex);
		pthread_cond_signal(&l->wake);
		pthread_mutex_unlock(&l->mutex);
	}
}

#endif /* PG_TRUST_LOCK_H */
