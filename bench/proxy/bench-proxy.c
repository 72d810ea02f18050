/*
 * bench-proxy: what going through a proxy module costs, measured in one
 * process against one SoftHSM2 token: the same calls made directly on
 * the module, through p11glue-proxy.so and through p11-kit's proxy.
 *
 * Usage: bench-proxy [--time SECONDS] [--rounds N] [--ir N] TOKEN PIN KEY
 *                    NAME=MODULE...
 *
 * The first NAME=MODULE is the baseline (the module itself); the others
 * are proxies that expose the same token. Each target is loaded with
 * dlopen, initialized (OS locking) and logged in to the token labelled
 * TOKEN; KEY labels an EC P-256 private key on it. Then, per operation:
 *
 *   slotlist     C_GetSlotList(CK_TRUE) twice, size query then fill, as
 *                applications call it
 *   sign         C_SignInit + C_Sign, CKM_ECDSA over a 32-byte hash
 *   sessioninfo  C_GetSessionInfo
 *
 * Rounds alternate between the targets so that drift in the machine's
 * speed hits all of them alike; each round runs about SECONDS/ROUNDS;
 * the median round is reported with the spread of all rounds.
 *
 * With --ir N, nothing is timed: each operation runs N times on the last
 * target, inside its own function (ir_slotlist, ir_sign, ir_sessioninfo)
 * for the runner to count instructions with callgrind --toggle-collect.
 * Give the module itself first, so that it is initialized the same way
 * (by us, OS locking) whichever target is counted: p11-kit would
 * otherwise pass its own mutex callbacks, which SoftHSM then uses.
 *
 * Output: one line per operation and target, then the ratios. Exit
 * status 0 when every target worked, 1 otherwise.
 */
#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TARGETS 4
#define MAX_ROUNDS 101

typedef struct {
	const char *name;
	const char *path;
	void *dl;
	CK_FUNCTION_LIST_PTR f;
	CK_SLOT_ID slot;
	CK_SESSION_HANDLE session;
	CK_OBJECT_HANDLE key;
	double ns[3][MAX_ROUNDS];       /* per operation, per round */
} target;

typedef bool (*op_fn)(target *t, unsigned long n);

static unsigned char hash[32];

static bool
check(const target *t, const char *what, CK_RV rv)
{
	if (rv == CKR_OK)
		return true;
	fprintf(stderr, "bench-proxy: %s: %s: CK_RV 0x%08lx\n", t->name, what, rv);
	return false;
}

/* ---------------------------------------------------------------------------
 * The operations, each n times
 */

static bool
op_slotlist(target *t, unsigned long n)
{
	CK_SLOT_ID slots[64];
	CK_ULONG count;

	for (unsigned long i = 0; i < n; i++) {
		count = 0;
		if (t->f->C_GetSlotList(CK_TRUE, NULL, &count) != CKR_OK || count == 0 ||
		    count > 64)
			return check(t, "C_GetSlotList (size)", CKR_GENERAL_ERROR);
		if (t->f->C_GetSlotList(CK_TRUE, slots, &count) != CKR_OK)
			return check(t, "C_GetSlotList", CKR_GENERAL_ERROR);
	}
	return true;
}

static bool
op_sign(target *t, unsigned long n)
{
	CK_MECHANISM mech = { CKM_ECDSA, NULL, 0 };
	unsigned char sig[132];
	CK_ULONG len;
	CK_RV rv;

	for (unsigned long i = 0; i < n; i++) {
		rv = t->f->C_SignInit(t->session, &mech, t->key);
		if (rv != CKR_OK)
			return check(t, "C_SignInit", rv);
		len = sizeof(sig);
		rv = t->f->C_Sign(t->session, hash, sizeof(hash), sig, &len);
		if (rv != CKR_OK || len != 64)
			return check(t, "C_Sign", rv != CKR_OK ? rv : CKR_GENERAL_ERROR);
	}
	return true;
}

static bool
op_sessioninfo(target *t, unsigned long n)
{
	CK_SESSION_INFO info;
	CK_RV rv;

	for (unsigned long i = 0; i < n; i++) {
		rv = t->f->C_GetSessionInfo(t->session, &info);
		if (rv != CKR_OK)
			return check(t, "C_GetSessionInfo", rv);
	}
	return info.state == CKS_RO_USER_FUNCTIONS ||
	       check(t, "C_GetSessionInfo: not logged in", CKR_GENERAL_ERROR);
}

static const struct {
	const char *name;
	const char *what;
	op_fn run;
} ops[3] = {
	{ "slotlist", "C_GetSlotList x2", op_slotlist },
	{ "sign", "C_SignInit+C_Sign", op_sign },
	{ "sessioninfo", "C_GetSessionInfo", op_sessioninfo },
};

/* For callgrind --toggle-collect=ir_*: only these are counted. */
bool ir_slotlist(target *t, unsigned long n);
bool ir_sign(target *t, unsigned long n);
bool ir_sessioninfo(target *t, unsigned long n);
__attribute__((noinline)) bool ir_slotlist(target *t, unsigned long n) { return op_slotlist(t, n); }
__attribute__((noinline)) bool ir_sign(target *t, unsigned long n) { return op_sign(t, n); }
__attribute__((noinline)) bool ir_sessioninfo(target *t, unsigned long n) { return op_sessioninfo(t, n); }

/* ---------------------------------------------------------------------------
 * Set-up
 */

static bool
label_is(const CK_UTF8CHAR label[32], const char *want)
{
	size_t n = strlen(want);

	if (n > 32 || memcmp(label, want, n) != 0)
		return false;
	for (size_t i = n; i < 32; i++) {
		if (label[i] != ' ')
			return false;
	}
	return true;
}

static bool
find_slot(target *t, const char *token)
{
	CK_SLOT_ID slots[64];
	CK_ULONG n = 64;
	CK_TOKEN_INFO info;

	if (!check(t, "C_GetSlotList", t->f->C_GetSlotList(CK_TRUE, slots, &n)))
		return false;
	for (CK_ULONG i = 0; i < n; i++) {
		if (t->f->C_GetTokenInfo(slots[i], &info) == CKR_OK && label_is(info.label, token)) {
			t->slot = slots[i];
			return true;
		}
	}
	fprintf(stderr, "bench-proxy: %s: no token labelled '%s' among %lu slots\n",
	        t->name, token, n);
	return false;
}

static bool
find_key(target *t, const char *label)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_LABEL, (void *)label, strlen(label) },
	};
	CK_ULONG found = 0;

	if (!check(t, "C_FindObjectsInit", t->f->C_FindObjectsInit(t->session, tmpl, 2)) ||
	    !check(t, "C_FindObjects", t->f->C_FindObjects(t->session, &t->key, 1, &found)) ||
	    !check(t, "C_FindObjectsFinal", t->f->C_FindObjectsFinal(t->session)))
		return false;
	if (found != 1)
		fprintf(stderr, "bench-proxy: %s: no private key labelled '%s'\n", t->name, label);
	return found == 1;
}

static bool
open_target(target *t, const char *token, const char *pin, const char *key)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	CK_C_GetFunctionList get;
	CK_RV rv;

	t->dl = dlopen(t->path, RTLD_NOW | RTLD_LOCAL);
	if (t->dl == NULL) {
		fprintf(stderr, "bench-proxy: %s: %s\n", t->name, dlerror());
		return false;
	}
	get = (CK_C_GetFunctionList)dlsym(t->dl, "C_GetFunctionList");
	if (get == NULL || !check(t, "C_GetFunctionList", get(&t->f)))
		return false;
	/* Proxies load the same library: a second C_Initialize of the module
	 * by them is theirs to handle; ours is the first. The module given
	 * twice (--ir on the module itself) is the same library. */
	rv = t->f->C_Initialize(&args);
	if (rv == CKR_CRYPTOKI_ALREADY_INITIALIZED)
		rv = CKR_OK;
	if (!check(t, "C_Initialize", rv) || !find_slot(t, token))
		return false;
	rv = t->f->C_OpenSession(t->slot, CKF_SERIAL_SESSION, NULL, NULL, &t->session);
	if (!check(t, "C_OpenSession", rv))
		return false;
	/* One SoftHSM instance serves all targets: the login is shared. */
	rv = t->f->C_Login(t->session, CKU_USER, (CK_UTF8CHAR_PTR)pin, strlen(pin));
	if (rv != CKR_USER_ALREADY_LOGGED_IN && !check(t, "C_Login", rv))
		return false;
	return find_key(t, key);
}

/* ---------------------------------------------------------------------------
 * Timing
 */

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Iterations that take about budget_ns on t. */
static unsigned long
calibrate(target *t, op_fn run, double budget_ns)
{
	unsigned long n = 1;

	for (;;) {
		double start = now_ns(), took;
		if (!run(t, n))
			return 0;
		took = now_ns() - start;
		if (took > budget_ns / 4 || n > (1UL << 30))
			return (unsigned long)((double)n * budget_ns / (took > 1 ? took : 1)) + 1;
		n *= 4;
	}
}

static int
compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
stats(const double *values, int n, double *median, double *lo, double *hi)
{
	double sorted[MAX_ROUNDS];

	memcpy(sorted, values, (size_t)n * sizeof(double));
	qsort(sorted, (size_t)n, sizeof(double), compare_double);
	*median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	*lo = sorted[0];
	*hi = sorted[n - 1];
}

static bool
measure(target *targets, int n_targets, int op, int rounds, double seconds)
{
	unsigned long iters[MAX_TARGETS];
	double budget = seconds * 1e9 / rounds / n_targets / 3;

	for (int i = 0; i < n_targets; i++) {
		iters[i] = calibrate(&targets[i], ops[op].run, budget);
		if (iters[i] == 0)
			return false;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n_targets; i++) {
			double start = now_ns();
			if (!ops[op].run(&targets[i], iters[i]))
				return false;
			targets[i].ns[op][r] = (now_ns() - start) / (double)iters[i];
		}
	}
	return true;
}

static void
report(const target *targets, int n_targets, int rounds)
{
	double med[3][MAX_TARGETS], lo, hi;

	printf("%-12s %-18s %-10s %12s %12s %18s %8s\n", "operation", "calls", "target",
	       "ns/op", "ops/s", "spread (ns)", "ratio");
	for (int op = 0; op < 3; op++) {
		for (int i = 0; i < n_targets; i++) {
			stats(targets[i].ns[op], rounds, &med[op][i], &lo, &hi);
			printf("%-12s %-18s %-10s %12.0f %12.0f %8.0f-%-9.0f %7.2fx\n", ops[op].name,
			       ops[op].what, targets[i].name, med[op][i], 1e9 / med[op][i], lo, hi,
			       med[op][i] / med[op][0]);
		}
	}
	printf("\nratios (median ns/op):\n");
	for (int op = 0; op < 3; op++) {
		for (int i = 1; i < n_targets; i++)
			printf("  %-12s %s/%s = %.2f, added %+.0f ns/op\n", ops[op].name,
			       targets[i].name, targets[0].name, med[op][i] / med[op][0],
			       med[op][i] - med[op][0]);
		for (int i = 2; i < n_targets; i++)
			printf("  %-12s %s vs %s: %.2f (time), added cost %s/%s = %.2f\n", ops[op].name,
			       targets[1].name, targets[i].name, med[op][1] / med[op][i],
			       targets[1].name, targets[i].name,
			       (med[op][1] - med[op][0]) / (med[op][i] - med[op][0]));
	}
}

static void
usage(void)
{
	fprintf(stderr, "Usage: bench-proxy [--time SECONDS] [--rounds N] [--ir N] TOKEN PIN KEY "
	                "NAME=MODULE...\n");
}

int
main(int argc, char **argv)
{
	target targets[MAX_TARGETS] = { 0 };
	double seconds = 12;
	int rounds = 15, n_targets = 0, argi = 1;
	unsigned long ir = 0;
	bool ok = true;

	for (; argi + 1 < argc && strncmp(argv[argi], "--", 2) == 0; argi += 2) {
		if (strcmp(argv[argi], "--time") == 0)
			seconds = atof(argv[argi + 1]);
		else if (strcmp(argv[argi], "--rounds") == 0)
			rounds = atoi(argv[argi + 1]);
		else if (strcmp(argv[argi], "--ir") == 0)
			ir = strtoul(argv[argi + 1], NULL, 10);
		else
			break;
	}
	if (argc - argi < 4 || argc - argi - 3 > MAX_TARGETS || rounds < 1 ||
	    rounds > MAX_ROUNDS || seconds <= 0) {
		usage();
		return 2;
	}
	for (size_t i = 0; i < sizeof(hash); i++)
		hash[i] = (unsigned char)(i * 7 + 1);
	for (int a = argi + 3; a < argc; a++) {
		target *t = &targets[n_targets++];
		char *eq = strchr(argv[a], '=');
		if (eq == NULL) {
			usage();
			return 2;
		}
		*eq = 0;
		t->name = argv[a];
		t->path = eq + 1;
		if (!open_target(t, argv[argi], argv[argi + 1], argv[argi + 2]))
			return 1;
	}
	if (ir > 0) {
		target *t = &targets[n_targets - 1];
		ok = ir_slotlist(t, ir) && ir_sign(t, ir) && ir_sessioninfo(t, ir);
		return ok ? 0 : 1;
	}
	printf("%d targets, %d rounds, about %.0f s in all\n\n", n_targets, rounds, seconds);
	for (int op = 0; op < 3 && ok; op++)
		ok = measure(targets, n_targets, op, rounds, seconds);
	if (!ok)
		return 1;
	report(targets, n_targets, rounds);
	/* Sessions and modules stay as they are: finalizing one target would
	 * finalize the library the others share. The process ends here. */
	return 0;
}
