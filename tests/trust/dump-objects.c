/*
 * dump-objects MODULE [INIT-RESERVED]: loads a PKCS#11 module, reads every
 * object of every token with a fixed list of attributes, and prints each
 * object as one line of "NAME=hex" pairs (absent attributes left out),
 * the lines sorted, so two modules' outputs compare with diff. Also used
 * by bench/trust to run the enumeration an NSS start-up does.
 *
 * Options: --counts prints "token<TAB>class<TAB>count" only;
 *          --no-print reads everything and prints nothing;
 *          --rss reads everything and prints the growth of the resident
 *          set (KiB) from before loading to after the enumeration.
 */
#include "initargs.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define A(x) { x, #x }
static const struct { CK_ATTRIBUTE_TYPE type; const char *name; } attrs[] = {
	A(CKA_CLASS), A(CKA_TOKEN), A(CKA_PRIVATE), A(CKA_LABEL), A(CKA_APPLICATION),
	A(CKA_VALUE), A(CKA_OBJECT_ID), A(CKA_CERTIFICATE_TYPE), A(CKA_ISSUER),
	A(CKA_SERIAL_NUMBER), A(CKA_AC_ISSUER), A(CKA_OWNER), A(CKA_ATTR_TYPES),
	A(CKA_TRUSTED), A(CKA_CERTIFICATE_CATEGORY), A(CKA_JAVA_MIDP_SECURITY_DOMAIN),
	A(CKA_URL), A(CKA_HASH_OF_SUBJECT_PUBLIC_KEY), A(CKA_HASH_OF_ISSUER_PUBLIC_KEY),
	A(CKA_NAME_HASH_ALGORITHM), A(CKA_CHECK_VALUE), A(CKA_KEY_TYPE), A(CKA_SUBJECT),
	A(CKA_ID), A(CKA_START_DATE), A(CKA_END_DATE), A(CKA_PUBLIC_KEY_INFO),
	A(CKA_MODIFIABLE), A(CKA_COPYABLE), A(CKA_DESTROYABLE),
	A(CKA_NSS_URL), A(CKA_NSS_EMAIL), A(CKA_NSS_MOZILLA_CA_POLICY),
	A(CKA_NSS_SERVER_DISTRUST_AFTER), A(CKA_NSS_EMAIL_DISTRUST_AFTER),
	A(CKA_CERT_SHA1_HASH), A(CKA_CERT_MD5_HASH),
	A(CKA_TRUST_DIGITAL_SIGNATURE), A(CKA_TRUST_NON_REPUDIATION),
	A(CKA_TRUST_KEY_ENCIPHERMENT), A(CKA_TRUST_DATA_ENCIPHERMENT),
	A(CKA_TRUST_KEY_AGREEMENT), A(CKA_TRUST_KEY_CERT_SIGN), A(CKA_TRUST_CRL_SIGN),
	A(CKA_TRUST_SERVER_AUTH), A(CKA_TRUST_CLIENT_AUTH), A(CKA_TRUST_CODE_SIGNING),
	A(CKA_TRUST_EMAIL_PROTECTION), A(CKA_TRUST_IPSEC_END_SYSTEM),
	A(CKA_TRUST_IPSEC_TUNNEL), A(CKA_TRUST_IPSEC_USER), A(CKA_TRUST_TIME_STAMPING),
	A(CKA_TRUST_STEP_UP_APPROVED),
	A(CKA_X_DISTRUSTED), A(CKA_X_CRITICAL), A(CKA_X_ASSERTION_TYPE),
	A(CKA_X_CERTIFICATE_VALUE), A(CKA_X_PURPOSE), A(CKA_X_PEER),
	A(CKA_X_GENERATED), A(CKA_X_ORIGIN),
};

static long
rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *dump_object(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
                         CK_OBJECT_CLASS *klass, int print);
static char *
dump_object(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o,
            CK_OBJECT_CLASS *klass, int print)
{
	size_t cap = 256, len = 0;
	char *line = malloc(cap);

	line[0] = 0;
	*klass = (CK_ULONG)-1;
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		CK_ATTRIBUTE a = { attrs[i].type, NULL, 0 };
		unsigned char *v;
		if (f->C_GetAttributeValue(s, o, &a, 1) != CKR_OK ||
		    a.ulValueLen == CK_UNAVAILABLE_INFORMATION)
			continue;
		v = malloc(a.ulValueLen + 1);
		a.pValue = v;
		if (f->C_GetAttributeValue(s, o, &a, 1) != CKR_OK) {
			free(v);
			continue;
		}
		if (attrs[i].type == CKA_CLASS && a.ulValueLen == sizeof(CK_ULONG))
			memcpy(klass, v, sizeof(CK_ULONG));
		if (print) {
			size_t need = len + strlen(attrs[i].name) + 2 * a.ulValueLen + 4;
			if (need > cap) {
				while (cap < need)
					cap *= 2;
				line = realloc(line, cap);
			}
			len += (size_t)sprintf(line + len, "%s%s=", len ? " " : "", attrs[i].name);
			for (CK_ULONG j = 0; j < a.ulValueLen; j++)
				len += (size_t)sprintf(line + len, "%02x", v[j]);
		}
		free(v);
	}
	return line;
}

int
main(int argc, char **argv)
{
	int counts = 0, print = 1, argi = 1, rss = 0;
	long rss_before = rss_kib();
	void *dl;
	CK_C_GetFunctionList get;
	CK_FUNCTION_LIST *f;
	CK_C_INITIALIZE_ARGS init = { 0 };
	CK_SLOT_ID slots[64];
	CK_ULONG n_slots = 64;

	for (; argi < argc && argv[argi][0] == '-'; argi++) {
		if (strcmp(argv[argi], "--counts") == 0)
			counts = 1;
		else if (strcmp(argv[argi], "--no-print") == 0)
			print = 0;
		else if (strcmp(argv[argi], "--rss") == 0)
			print = 0, rss = 1;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: dump-objects [--counts|--no-print] MODULE [RESERVED]\n");
		return 2;
	}
	dl = dlopen(argv[argi], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	get = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList");
	if (get == NULL || get(&f) != CKR_OK)
		return 1;
	init.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	init.pReserved = argi + 1 < argc ? argv[argi + 1] : NULL;
	if (f->C_Initialize(&init) != CKR_OK ||
	    f->C_GetSlotList(CK_TRUE, slots, &n_slots) != CKR_OK) {
		fprintf(stderr, "initialization failed\n");
		return 1;
	}
	for (CK_ULONG i = 0; i < n_slots; i++) {
		CK_TOKEN_INFO ti;
		CK_SESSION_HANDLE s;
		CK_OBJECT_HANDLE objs[256];
		CK_ULONG n;
		char **lines = NULL;
		size_t n_lines = 0;
		char label[33];
		struct { CK_OBJECT_CLASS klass; unsigned long n; } per[16];
		size_t n_per = 0;

		if (f->C_GetTokenInfo(slots[i], &ti) != CKR_OK ||
		    f->C_OpenSession(slots[i], CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
			return 1;
		memcpy(label, ti.label, 32);
		label[32] = 0;
		for (int k = 31; k >= 0 && label[k] == ' '; k--)
			label[k] = 0;
		f->C_FindObjectsInit(s, NULL, 0);
		while (f->C_FindObjects(s, objs, 256, &n) == CKR_OK && n > 0) {
			for (CK_ULONG j = 0; j < n; j++) {
				CK_OBJECT_CLASS klass;
				char *line = dump_object(f, s, objs[j], &klass, print && !counts);
				size_t k;
				for (k = 0; k < n_per && per[k].klass != klass; k++)
					;
				if (k == n_per && n_per < 16) {
					per[n_per].klass = klass;
					per[n_per++].n = 0;
				}
				if (k < 16)
					per[k].n++;
				lines = realloc(lines, (n_lines + 1) * sizeof(*lines));
				lines[n_lines++] = line;
			}
		}
		f->C_FindObjectsFinal(s);
		f->C_CloseSession(s);
		if (counts) {
			for (size_t k = 0; k < n_per; k++)
				printf("%s\t0x%lx\t%lu\n", label, per[k].klass, per[k].n);
		} else if (print) {
			if (n_lines > 1)
				qsort(lines, n_lines, sizeof(*lines), cmp_str);
			printf("token %s: %zu objects\n", label, n_lines);
			for (size_t k = 0; k < n_lines; k++)
				printf("%s\n", lines[k]);
		}
		/* Out now: a leak checker that finds a module's leaks at exit
		 * ends the process without flushing stdio. */
		fflush(stdout);
		for (size_t k = 0; k < n_lines; k++)
			free(lines[k]);
		free(lines);
	}
	if (rss)
		printf("rss-growth-kib %ld\n", rss_kib() - rss_before);
	f->C_Finalize(NULL);
	return 0;
}
