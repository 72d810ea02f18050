/*
 * bench-libcrypto: the signatures of bench-store made by libcrypto
 * directly, as `openssl speed` makes them (one public-key context set up
 * once, EVP_PKEY_sign or EVP_DigestSign per signature), so that a
 * profiler can set the two side by side. bench/run-store.sh counts the
 * instructions of sign_loop in both under callgrind.
 *
 * Usage: bench-libcrypto TEST SECONDS
 *   TEST is sign-ecdsa (P-256, 32-byte input), sign-rsa (RSA-2048,
 *   PKCS#1 v1.5 over a 51-byte SHA-256 DigestInfo) or sign-ed25519
 *   (32 bytes). Prints "ops TEST COUNT" (every signature made, the
 *   warm-up's included) and "result TEST RATE ops/s".
 */
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Signs until the deadline; the count, or -1 on failure. Not inlined:
 * callgrind counts this function's instructions (--toggle-collect). */
__attribute__((noinline)) static long
sign_loop(EVP_PKEY_CTX *pctx, EVP_MD_CTX *md, size_t in_len, double until)
{
	unsigned char in[64], sig[512];
	size_t len;
	long n = 0;

	memset(in, 0x5a, sizeof(in));
	do {
		for (int i = 0; i < 16; i++, n++) {
			len = sizeof(sig);
			if (md != NULL ? EVP_DigestSign(md, sig, &len, in, in_len) <= 0
			               : EVP_PKEY_sign(pctx, sig, &len, in, in_len) <= 0)
				return -1;
		}
	} while (now() < until);
	return n;
}

int
main(int argc, char **argv)
{
	EVP_PKEY_CTX *pctx = NULL;
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *key;
	size_t in_len = 32;
	double seconds, t0;
	long warm, n;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-libcrypto sign-ecdsa|sign-rsa|sign-ed25519 SECONDS\n");
		return 2;
	}
	seconds = atof(argv[2]);
	if (strcmp(argv[1], "sign-ecdsa") == 0) {
		key = EVP_EC_gen("P-256");
	} else if (strcmp(argv[1], "sign-rsa") == 0) {
		key = EVP_RSA_gen(2048);
		in_len = 51;
	} else if (strcmp(argv[1], "sign-ed25519") == 0) {
		key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	} else {
		fprintf(stderr, "bench-libcrypto: no test %s\n", argv[1]);
		return 2;
	}
	if (key == NULL)
		return 1;
	if (strcmp(argv[1], "sign-ed25519") == 0) {
		md = EVP_MD_CTX_new();
		if (md == NULL || EVP_DigestSignInit(md, NULL, NULL, NULL, key) <= 0)
			return 1;
	} else {
		pctx = EVP_PKEY_CTX_new(key, NULL);
		if (pctx == NULL || EVP_PKEY_sign_init(pctx) <= 0)
			return 1;
		if (in_len == 51 && EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) <= 0)
			return 1;
	}
	warm = sign_loop(pctx, md, in_len, now() + 0.2);
	t0 = now();
	n = sign_loop(pctx, md, in_len, t0 + seconds);
	if (warm < 0 || n < 0) {
		fprintf(stderr, "bench-libcrypto: %s failed\n", argv[1]);
		return 1;
	}
	printf("ops %s %ld\n", argv[1], warm + n);
	printf("result %s %.1f ops/s\n", argv[1], (double)n / (now() - t0));
	EVP_MD_CTX_free(md);
	EVP_PKEY_CTX_free(pctx);
	EVP_PKEY_free(key);
	return 0;
}
