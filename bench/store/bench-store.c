/*
 * bench-store: what a software token costs its clients, measured through
 * the PKCS#11 interface of any module (the key store, SoftHSM2) so that
 * both are measured alike. bench/run-store.sh runs it.
 *
 * Usage: bench-store MODULE TOKEN PIN SECONDS TEST...
 *
 * MODULE is loaded with dlopen and initialized (OS locking); the token
 * labelled TOKEN is logged in to with PIN. Tests:
 *
 *   sign-ecdsa    C_SignInit + C_Sign, CKM_ECDSA over a 32-byte hash, P-256
 *   sign-rsa      C_SignInit + C_Sign, CKM_RSA_PKCS over a SHA-256
 *                 DigestInfo, RSA-2048
 *   sign-ed25519  C_SignInit + C_Sign, CKM_EDDSA over 32 bytes, Ed25519
 *   aes-gcm       C_EncryptInit + C_Encrypt of 1 MiB, CKM_AES_GCM
 *                 (96-bit IV, 128-bit tag), AES-256: bytes per second
 *   threads       sign-ecdsa from 1 thread, then from 2 threads (each
 *                 with its own session): operations per second
 *   create        10,000 C_CreateObject of token data objects (label
 *                 "bench-NNNNN", 64-byte value): mean time per call
 *   find          C_FindObjectsInit (CKA_LABEL) + C_FindObjects +
 *                 C_FindObjectsFinal for random labels among those
 *                 10,000: mean time per lookup
 *   rss           the process's resident memory after logging in and
 *                 finding every object (the module holds them all)
 *
 * Keys are session objects generated here. Each timed test runs for
 * SECONDS. Output: "result TEST VALUE UNIT" lines (and for the sign
 * tests "ops TEST COUNT", every signature made); failures on stderr
 * (a test the module cannot do prints "result TEST unsupported CKR").
 * Exit status 0 when every test ran, 1 otherwise.
 */
#include <p11glue/pkcs11.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_OBJECTS 10000

static CK_FUNCTION_LIST_PTR f;
static CK_SLOT_ID slot;
static double seconds;
static int failures;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool
check(const char *what, CK_RV rv)
{
	if (rv == CKR_OK)
		return true;
	fprintf(stderr, "bench-store: %s: CK_RV 0x%08lx\n", what, rv);
	return false;
}

static void
unsupported(const char *test, const char *what, CK_RV rv)
{
	printf("result %s unsupported 0x%08lx\n", test, rv);
	fprintf(stderr, "bench-store: %s: %s: CK_RV 0x%08lx\n", test, what, rv);
}

static bool
open_session(CK_SESSION_HANDLE *s)
{
	return check("C_OpenSession",
	             f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, s));
}

/* ---------------------------------------------------------------------------
 * Keys (session objects)
 */

static const CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

static CK_RV
keypair(CK_SESSION_HANDLE s, CK_MECHANISM_TYPE mech, CK_ATTRIBUTE *pub_extra, CK_ULONG n_extra,
        CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM m = { mech, NULL, 0 };
	CK_ATTRIBUTE pub[4] = { { CKA_TOKEN, (void *)&no, 1 }, { CKA_VERIFY, (void *)&yes, 1 } };
	CK_ATTRIBUTE prv[3] = {
		{ CKA_TOKEN, (void *)&no, 1 }, { CKA_SIGN, (void *)&yes, 1 },
		{ CKA_SENSITIVE, (void *)&yes, 1 },
	};
	CK_OBJECT_HANDLE pubh;

	for (CK_ULONG i = 0; i < n_extra; i++)
		pub[2 + i] = pub_extra[i];
	return f->C_GenerateKeyPair(s, &m, pub, 2 + n_extra, prv, 3, &pubh, priv);
}

/* DER OIDs of the curves (CKA_EC_PARAMS): P-256, Ed25519. */
static const unsigned char p256_oid[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
static const unsigned char ed25519_oid[] = { 0x06, 0x03, 0x2b, 0x65, 0x70 };

typedef struct {
	const char *name;
	CK_MECHANISM_TYPE sign;
	CK_ULONG in_len;
	CK_ULONG sig_max;
} sign_kind;

static const sign_kind kinds[] = {
	{ "sign-ecdsa", CKM_ECDSA, 32, 72 },
	{ "sign-rsa", CKM_RSA_PKCS, 51, 512 },
	{ "sign-ed25519", CKM_EDDSA, 32, 64 },
};

static CK_RV
make_key(CK_SESSION_HANDLE s, int kind, CK_OBJECT_HANDLE *key)
{
	static const unsigned char f4[] = { 1, 0, 1 };
	CK_ULONG bits = 2048;
	CK_ATTRIBUTE ec[1] = { { CKA_EC_PARAMS, (void *)p256_oid, sizeof(p256_oid) } };
	CK_ATTRIBUTE ed[1] = { { CKA_EC_PARAMS, (void *)ed25519_oid, sizeof(ed25519_oid) } };
	CK_ATTRIBUTE rsa[2] = {
		{ CKA_MODULUS_BITS, &bits, sizeof(bits) },
		{ CKA_PUBLIC_EXPONENT, (void *)f4, sizeof(f4) },
	};

	if (kind == 0)
		return keypair(s, CKM_EC_KEY_PAIR_GEN, ec, 1, key);
	if (kind == 1)
		return keypair(s, CKM_RSA_PKCS_KEY_PAIR_GEN, rsa, 2, key);
	return keypair(s, CKM_EC_EDWARDS_KEY_PAIR_GEN, ed, 1, key);
}

/* Signs until the deadline; returns the count, or -1 on failure. Not
 * inlined: callgrind counts this function's instructions
 * (bench/run-store.sh, --toggle-collect). */
__attribute__((noinline)) static long
sign_loop(CK_SESSION_HANDLE s, const sign_kind *k, CK_OBJECT_HANDLE key, double until)
{
	unsigned char in[64], sig[512];
	CK_MECHANISM m = { k->sign, NULL, 0 };
	CK_ULONG len;
	long n = 0;

	memset(in, 0x5a, sizeof(in));
	do {
		for (int i = 0; i < 16; i++, n++) {
			len = sizeof(sig);
			if (f->C_SignInit(s, &m, key) != CKR_OK || f->C_Sign(s, in, k->in_len, sig, &len) != CKR_OK)
				return -1;
		}
	} while (now() < until);
	return n;
}

static void
test_sign(CK_SESSION_HANDLE s, int kind)
{
	const sign_kind *k = &kinds[kind];
	CK_OBJECT_HANDLE key;
	double t0;
	long warm, n;
	CK_RV rv = make_key(s, kind, &key);

	if (rv != CKR_OK) {
		unsupported(k->name, "C_GenerateKeyPair", rv);
		return;
	}
	warm = sign_loop(s, k, key, now() + 0.2);
	t0 = now();
	n = sign_loop(s, k, key, t0 + seconds);
	if (warm < 0 || n < 0) {
		unsupported(k->name, "C_Sign", CKR_FUNCTION_FAILED);
		return;
	}
	printf("ops %s %ld\n", k->name, warm + n);
	printf("result %s %.1f ops/s\n", k->name, (double)n / (now() - t0));
}

/* ---------------------------------------------------------------------------
 * AES-256-GCM over 1 MiB
 */

static void
test_aes_gcm(CK_SESSION_HANDLE s)
{
	CK_ULONG len32 = 32;
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_AES;
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &cls, sizeof(cls) }, { CKA_KEY_TYPE, &kt, sizeof(kt) },
		{ CKA_VALUE_LEN, &len32, sizeof(len32) }, { CKA_TOKEN, (void *)&no, 1 },
		{ CKA_ENCRYPT, (void *)&yes, 1 }, { CKA_DECRYPT, (void *)&yes, 1 },
	};
	CK_MECHANISM gen = { CKM_AES_KEY_GEN, NULL, 0 };
	unsigned char iv[12] = { 0 };
	CK_GCM_PARAMS gcm = { iv, sizeof(iv), 96, NULL, 0, 128 };
	CK_MECHANISM m = { CKM_AES_GCM, &gcm, sizeof(gcm) };
	size_t size = 1 << 20;
	unsigned char *in = calloc(1, size), *out = malloc(size + 16);
	CK_OBJECT_HANDLE key;
	CK_ULONG len;
	double t0 = 0;
	long n = 0;
	CK_RV rv = f->C_GenerateKey(s, &gen, tmpl, sizeof(tmpl) / sizeof(tmpl[0]), &key);

	for (int warm = 1; rv == CKR_OK && warm >= 0; warm--) {
		double until = now() + (warm ? 0.2 : seconds);
		if (!warm)
			t0 = now();
		n = 0;
		do {
			iv[0]++;                             /* a fresh IV each time */
			len = (CK_ULONG)size + 16;
			rv = f->C_EncryptInit(s, &m, key);
			if (rv == CKR_OK)
				rv = f->C_Encrypt(s, in, (CK_ULONG)size, out, &len);
			n++;
		} while (rv == CKR_OK && now() < until);
	}
	if (rv != CKR_OK)
		unsupported("aes-gcm", "AES-256-GCM", rv);
	else
		printf("result aes-gcm %.1f MB/s\n", (double)n * (double)size / 1e6 / (now() - t0));
	free(in);
	free(out);
}

/* ---------------------------------------------------------------------------
 * Signing from several threads
 */

typedef struct {
	CK_OBJECT_HANDLE key;
	double start, until;
	long count;
} worker;

static void *
work(void *data)
{
	worker *w = data;
	CK_SESSION_HANDLE s;

	w->count = -1;
	if (!open_session(&s))
		return NULL;
	while (now() < w->start)
		;
	w->count = sign_loop(s, &kinds[0], w->key, w->until);
	f->C_CloseSession(s);
	return NULL;
}

static double
threaded(CK_OBJECT_HANDLE key, int n)
{
	pthread_t th[8];
	worker w[8];
	double start = now() + 0.1, total = 0;

	for (int i = 0; i < n; i++) {
		w[i] = (worker){ key, start, start + seconds, 0 };
		pthread_create(&th[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (w[i].count < 0)
			return -1;
		total += (double)w[i].count;
	}
	return total / seconds;
}

static void
test_threads(CK_SESSION_HANDLE s)
{
	CK_OBJECT_HANDLE key;
	double one, two;
	CK_RV rv = make_key(s, 0, &key);

	if (rv != CKR_OK) {
		unsupported("threads", "C_GenerateKeyPair", rv);
		return;
	}
	one = threaded(key, 1);
	two = threaded(key, 2);
	if (one <= 0 || two <= 0) {
		unsupported("threads", "C_Sign", CKR_FUNCTION_FAILED);
		return;
	}
	printf("result threads-1 %.1f ops/s\n", one);
	printf("result threads-2 %.1f ops/s\n", two);
}

/* ---------------------------------------------------------------------------
 * Many token objects
 */

static void
label_of(char *buf, size_t size, int i)
{
	snprintf(buf, size, "bench-%05d", i);
}

static void
test_create(CK_SESSION_HANDLE s)
{
	CK_OBJECT_CLASS cls = CKO_DATA;
	unsigned char value[64];
	char label[32];
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &cls, sizeof(cls) }, { CKA_TOKEN, (void *)&yes, 1 },
		{ CKA_PRIVATE, (void *)&no, 1 }, { CKA_LABEL, label, 0 },
		{ CKA_VALUE, value, sizeof(value) },
	};
	CK_OBJECT_HANDLE obj;
	double t0 = now(), first = 0;

	memset(value, 0xa5, sizeof(value));
	for (int i = 0; i < N_OBJECTS; i++) {
		label_of(label, sizeof(label), i);
		tmpl[3].ulValueLen = strlen(label);
		if (!check("C_CreateObject", f->C_CreateObject(s, tmpl, 5, &obj))) {
			failures++;
			return;
		}
		if (i == 99)
			first = now() - t0;
	}
	printf("result create-first-100 %.3f ms\n", first * 1e3 / 100);
	printf("result create %.3f ms\n", (now() - t0) * 1e3 / N_OBJECTS);
}

static void
test_find(CK_SESSION_HANDLE s)
{
	char label[32];
	CK_OBJECT_CLASS cls = CKO_DATA;
	CK_ATTRIBUTE tmpl[] = { { CKA_LABEL, label, 0 }, { CKA_CLASS, &cls, sizeof(cls) } };
	CK_OBJECT_HANDLE found[16];
	CK_ULONG count;
	unsigned seed = 12345;
	double t0, until;
	long n = 0;

	/* The first lookup may load the token: not timed. */
	label_of(label, sizeof(label), 0);
	tmpl[0].ulValueLen = strlen(label);
	f->C_FindObjectsInit(s, tmpl, 1);
	f->C_FindObjects(s, found, 16, &count);
	f->C_FindObjectsFinal(s);
	t0 = now();
	until = t0 + seconds;
	do {
		label_of(label, sizeof(label), (int)(rand_r(&seed) % N_OBJECTS));
		tmpl[0].ulValueLen = strlen(label);
		if (f->C_FindObjectsInit(s, tmpl, 1) != CKR_OK ||
		    f->C_FindObjects(s, found, 16, &count) != CKR_OK || count != 1 ||
		    f->C_FindObjectsFinal(s) != CKR_OK) {
			fprintf(stderr, "bench-store: find %s: %lu objects\n", label, count);
			failures++;
			return;
		}
		n++;
	} while (now() < until);
	printf("result find %.4f ms\n", (now() - t0) * 1e3 / (double)n);
}

static long
rss_kb(void)
{
	FILE *st = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (st && fgets(line, sizeof(line), st)) {
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	}
	if (st)
		fclose(st);
	return kb;
}

static void
test_rss(CK_SESSION_HANDLE s)
{
	CK_OBJECT_HANDLE found[256];
	CK_ULONG count;
	long total = 0;

	if (f->C_FindObjectsInit(s, NULL, 0) == CKR_OK) {
		while (f->C_FindObjects(s, found, 256, &count) == CKR_OK && count > 0)
			total += (long)count;
		f->C_FindObjectsFinal(s);
	}
	printf("result objects %ld objects\n", total);
	printf("result rss %.1f MB\n", (double)rss_kb() / 1024.0);
}

/* ---------------------------------------------------------------------------
 * Setting up
 */

static bool
find_token(const char *label)
{
	CK_SLOT_ID slots[64];
	CK_ULONG n = 64;
	CK_TOKEN_INFO info;
	size_t len = strlen(label);

	if (!check("C_GetSlotList", f->C_GetSlotList(CK_TRUE, slots, &n)))
		return false;
	for (CK_ULONG i = 0; i < n; i++) {
		if (f->C_GetTokenInfo(slots[i], &info) != CKR_OK)
			continue;
		if (memcmp(info.label, label, len) == 0 && (len == 32 || info.label[len] == ' ')) {
			slot = slots[i];
			return true;
		}
	}
	fprintf(stderr, "bench-store: no token '%s'\n", label);
	return false;
}

int
main(int argc, char **argv)
{
	CK_C_INITIALIZE_ARGS init = { .flags = CKF_OS_LOCKING_OK };
	CK_C_GetFunctionList get;
	CK_SESSION_HANDLE s;
	void *dl;

	if (argc < 6) {
		fprintf(stderr, "usage: bench-store MODULE TOKEN PIN SECONDS TEST...\n");
		return 2;
	}
	seconds = atof(argv[4]);
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	get = dl ? (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList") : NULL;
	if (get == NULL || get(&f) != CKR_OK) {
		fprintf(stderr, "bench-store: cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	if (!check("C_Initialize", f->C_Initialize(&init)) || !find_token(argv[2]) || !open_session(&s) ||
	    !check("C_Login", f->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)argv[3], strlen(argv[3]))))
		return 1;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "sign-ecdsa") == 0)
			test_sign(s, 0);
		else if (strcmp(argv[i], "sign-rsa") == 0)
			test_sign(s, 1);
		else if (strcmp(argv[i], "sign-ed25519") == 0)
			test_sign(s, 2);
		else if (strcmp(argv[i], "aes-gcm") == 0)
			test_aes_gcm(s);
		else if (strcmp(argv[i], "threads") == 0)
			test_threads(s);
		else if (strcmp(argv[i], "create") == 0)
			test_create(s);
		else if (strcmp(argv[i], "find") == 0)
			test_find(s);
		else if (strcmp(argv[i], "rss") == 0)
			test_rss(s);
		else {
			fprintf(stderr, "bench-store: unknown test %s\n", argv[i]);
			failures++;
		}
		fflush(stdout);
	}
	f->C_Logout(s);
	f->C_CloseSession(s);
	f->C_Finalize(NULL);
	return failures ? 1 : 0;
}
