/*
 * bench-rpc: calls per second through a PKCS#11 module (a remote-token
 * client module, or the token's own module as the baseline), with
 * several client processes or several threads in one process; and the
 * round trip of a raw socket pair between two processes, the floor any
 * RPC over a unix socket stands on.
 *
 * Usage: bench-rpc [--procs N | --threads N] [--time SECONDS] OP MODULE TOKEN PIN KEY
 *        bench-rpc --floor [--procs N] [--time SECONDS]
 *
 * OP is "info" (C_GetSessionInfo) or "sign" (C_SignInit + C_Sign,
 * CKM_ECDSA over a 32-byte hash with the EC P-256 private key labelled
 * KEY). Each process (or thread) opens its own session on the token
 * labelled TOKEN; each process logs in once. Processes start one after
 * the other (SoftHSM2 rewrites its token file on every login, which
 * concurrent logins would race on), then all run for SECONDS together.
 *
 * --floor times round trips of raw socket pairs instead (N pairs at once,
 * each its own two processes). Prints one line: "ops/s TOTAL
 * us/op-per-client LATENCY".
 */
#define _GNU_SOURCE
#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64

static CK_FUNCTION_LIST_PTR f;
static const char *token, *pin, *key_label;
static bool sign_op;
static atomic_bool stop;
static CK_SLOT_ID slot;
static unsigned char hash[32];

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
die(const char *what, CK_RV rv)
{
	fprintf(stderr, "bench-rpc: %s: CK_RV 0x%08lx\n", what, rv);
	exit(1);
}

static void
load(const char *path)
{
	CK_C_GetFunctionList get;
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CK_SLOT_ID slots[32];
	CK_ULONG n = 32;
	CK_TOKEN_INFO ti;
	CK_RV rv;

	if (dl == NULL) {
		fprintf(stderr, "bench-rpc: %s\n", dlerror());
		exit(1);
	}
	get = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	if (get == NULL || get(&f) != CKR_OK)
		die("C_GetFunctionList", CKR_GENERAL_ERROR);
	rv = f->C_Initialize(&args);
	if (rv != CKR_OK)
		die("C_Initialize", rv);
	rv = f->C_GetSlotList(CK_TRUE, slots, &n);
	if (rv != CKR_OK)
		die("C_GetSlotList", rv);
	for (CK_ULONG i = 0; i < n; i++) {
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
		    memcmp(ti.label, token, strlen(token)) == 0 && ti.label[strlen(token)] == ' ') {
			slot = slots[i];
			return;
		}
	}
	die("no such token", CKR_TOKEN_NOT_PRESENT);
}

typedef struct {
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE key;
	unsigned long ops;
} worker;

static void
open_worker(worker *w, bool login)
{
	CK_OBJECT_CLASS c = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE t[] = { { CKA_CLASS, &c, sizeof(c) },
	                     { CKA_LABEL, (void *)key_label, strlen(key_label) } };
	CK_ULONG n = 0;
	CK_RV rv = f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &w->s);

	if (rv != CKR_OK)
		die("C_OpenSession", rv);
	if (login) {
		rv = f->C_Login(w->s, CKU_USER, (CK_UTF8CHAR_PTR)pin, strlen(pin));
		if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN)
			die("C_Login", rv);
	}
	if (f->C_FindObjectsInit(w->s, t, 2) != CKR_OK || f->C_FindObjects(w->s, &w->key, 1, &n) != CKR_OK ||
	    f->C_FindObjectsFinal(w->s) != CKR_OK || n != 1)
		die("finding the key", CKR_GENERAL_ERROR);
}

static void *
run_worker(void *arg)
{
	worker *w = arg;
	CK_MECHANISM m = { CKM_ECDSA, NULL, 0 };
	CK_SESSION_INFO info;
	unsigned char sig[72];
	CK_ULONG len;
	CK_RV rv;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (sign_op) {
			len = sizeof(sig);
			rv = f->C_SignInit(w->s, &m, w->key);
			if (rv == CKR_OK)
				rv = f->C_Sign(w->s, hash, sizeof(hash), sig, &len);
		} else {
			rv = f->C_GetSessionInfo(w->s, &info);
		}
		if (rv != CKR_OK)
			die(sign_op ? "C_Sign" : "C_GetSessionInfo", rv);
		w->ops++;
	}
	return NULL;
}

/* Runs n threads for seconds; returns the operations done. */
static unsigned long
run_threads(int n, double seconds, int go_fd)
{
	worker w[MAX_WORKERS] = { 0 };
	pthread_t t[MAX_WORKERS];
	unsigned long total = 0;
	char c;

	for (int i = 0; i < n; i++)
		open_worker(&w[i], i == 0);
	if (go_fd >= 0 && read(go_fd, &c, 1) != 1)   /* all processes ready */
		exit(1);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run_worker, &w[i]);
	nanosleep(&(struct timespec){ (time_t)seconds,
	                              (long)((seconds - (double)(time_t)seconds) * 1e9) }, NULL);
	atomic_store(&stop, true);
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		total += w[i].ops;
	}
	return total;
}

/* Round trips of one raw socket pair for at least seconds; the count,
 * and the time taken in *took. */
static unsigned long
floor_pair(double seconds, double *took)
{
	unsigned char req[20] = { 8 }, rep[44] = { 32 };
	unsigned long n = 0;
	double start;
	int sv[2];
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		exit(1);
	child = fork();
	if (child == 0) {
		close(sv[0]);
		/* The echo side: a request in, a reply out, as a server does. */
		while (read(sv[1], req, sizeof(req)) == (ssize_t)sizeof(req) &&
		       write(sv[1], rep, sizeof(rep)) == (ssize_t)sizeof(rep))
			;
		_exit(0);
	}
	close(sv[1]);
	start = now();
	do {
		for (int i = 0; i < 1000; i++) {
			if (write(sv[0], req, sizeof(req)) != (ssize_t)sizeof(req) ||
			    read(sv[0], rep, sizeof(rep)) != (ssize_t)sizeof(rep))
				exit(1);
		}
		n += 1000;
		*took = now() - start;
	} while (*took < seconds);
	close(sv[0]);
	waitpid(child, NULL, 0);
	return n;
}

/* pairs socket pairs at once, each with its own two processes: round
 * trips per second summed over the pairs, and the mean round trip. */
static void
floor_bench(double seconds, int pairs)
{
	unsigned long n;
	double took, rate = 0;
	int out[2];

	if (pairs == 1) {
		n = floor_pair(seconds, &took);
		printf("ops/s %.0f us/op %.2f\n", (double)n / took, took / (double)n * 1e6);
		return;
	}
	if (pipe(out) != 0)
		exit(1);
	for (int i = 0; i < pairs; i++) {
		if (fork() == 0) {
			double r;
			n = floor_pair(seconds, &took);
			r = (double)n / took;
			if (write(out[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(1);
			_exit(0);
		}
	}
	for (int i = 0; i < pairs; i++) {
		double r;
		if (read(out[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
			exit(1);
		rate += r;
	}
	while (wait(NULL) > 0)
		;
	printf("ops/s %.0f us/op %.2f\n", rate, 1e6 * pairs / rate);
}

int
main(int argc, char **argv)
{
	int procs = 1, threads = 1, argi = 1, go[2], out[2];
	bool floor = false;
	double seconds = 3, start, took;
	unsigned long total = 0, ops;

	for (; argi < argc && strncmp(argv[argi], "--", 2) == 0; argi++) {
		if (strcmp(argv[argi], "--floor") == 0) {
			floor = true;
			continue;
		}
		if (argi + 1 >= argc)
			break;
		if (strcmp(argv[argi], "--procs") == 0)
			procs = atoi(argv[++argi]);
		else if (strcmp(argv[argi], "--threads") == 0)
			threads = atoi(argv[++argi]);
		else if (strcmp(argv[argi], "--time") == 0)
			seconds = atof(argv[++argi]);
	}
	if (floor && argi == argc && procs >= 1 && procs <= MAX_WORKERS) {
		floor_bench(seconds, procs);
		return 0;
	}
	if (floor || argc - argi != 5 || procs < 1 || procs > MAX_WORKERS || threads < 1 ||
	    threads > MAX_WORKERS) {
		fprintf(stderr, "usage: bench-rpc [--procs N | --threads N] [--time S] info|sign "
		                "MODULE TOKEN PIN KEY\n       bench-rpc --floor [--procs N] [--time S]\n");
		return 2;
	}
	sign_op = strcmp(argv[argi], "sign") == 0;
	token = argv[argi + 2];
	pin = argv[argi + 3];
	key_label = argv[argi + 4];
	memset(hash, 0x42, sizeof(hash));
	if (pipe(go) != 0 || pipe(out) != 0)
		return 1;
	for (int i = 0; i < procs; i++) {
		int ready[2];
		char c;
		if (pipe(ready) != 0)
			return 1;
		if (fork() == 0) {
			close(go[1]);
			close(ready[0]);
			load(argv[argi + 1]);
			/* Ready once logged in: the next process starts then. */
			for (int k = 0; k < 1; k++) {
				worker probe = { 0 };
				open_worker(&probe, true);
			}
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			ops = run_threads(threads, seconds, go[0]);
			if (write(out[1], &ops, sizeof(ops)) != (ssize_t)sizeof(ops))
				_exit(1);
			_exit(0);
		}
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "bench-rpc: client %d failed to start\n", i);
			return 1;
		}
		close(ready[0]);
	}
	close(go[0]);
	start = now();
	for (int i = 0; i < procs; i++) {
		if (write(go[1], "g", 1) != 1)
			return 1;
	}
	for (int i = 0; i < procs; i++) {
		if (read(out[0], &ops, sizeof(ops)) != (ssize_t)sizeof(ops)) {
			fprintf(stderr, "bench-rpc: a client failed\n");
			return 1;
		}
		total += ops;
	}
	took = now() - start;
	while (wait(NULL) > 0)
		;
	/* took includes the stagger of the last process; each ran for seconds. */
	(void)took;
	printf("ops/s %.0f us/op %.2f\n", (double)total / seconds,
	       seconds * 1e6 * procs * threads / (double)total);
	return 0;
}
