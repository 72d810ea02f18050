/*
 * p11-object MODULE RESERVED [--first] [--ro] ACTION ATTR=VALUE...:
 * creates, finds or destroys objects on the first writable token of a
 * trust module (with --first: the first token, writable or not; with
 * --ro: in a read-only session), for the writing tests (the same calls go
 * to p11glue's module and to p11-kit's).
 *
 * ACTION: create (prints "created"), find (prints the number of matches)
 * or destroy (destroys every match, prints the number destroyed).
 * ATTR is a CKA_ name without the prefix, lower or upper case (class,
 * value, trust_server_auth, x_purpose, ...). VALUE is one of
 *   true | false                      a CK_BBOOL
 *   a number or a known constant      a CK_ULONG (certificate, nss_trust,
 *                                     x_trust_assertion,
 *                                     x_certificate_extension, x_509,
 *                                     nss_trusted_delegator, nss_trusted,
 *                                     nss_not_trusted, nss_trust_unknown,
 *                                     nss_must_verify_trust,
 *                                     x_anchored_certificate,
 *                                     x_distrusted_certificate,
 *                                     x_pinned_certificate)
 *   hex:HEX                           bytes
 *   str:TEXT                          bytes of TEXT
 *   file:PATH                         the bytes of a file
 * Exit status: 0 when the call returned CKR_OK, else 1 with the CKR
 * value on stderr; 2 for usage errors.
 */
#include "initargs.h"

#include <p11glue/pkcs11.h>
#include <p11glue/pkcs11x.h>

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N(x) { #x, x }
static const struct { const char *name; CK_ULONG value; } attr_names[] = {
	N(CKA_CLASS), N(CKA_TOKEN), N(CKA_PRIVATE), N(CKA_LABEL), N(CKA_VALUE),
	N(CKA_OBJECT_ID), N(CKA_CERTIFICATE_TYPE), N(CKA_ISSUER), N(CKA_SERIAL_NUMBER),
	N(CKA_TRUSTED), N(CKA_CERTIFICATE_CATEGORY), N(CKA_SUBJECT), N(CKA_ID),
	N(CKA_MODIFIABLE), N(CKA_PUBLIC_KEY_INFO), N(CKA_CERT_SHA1_HASH), N(CKA_CERT_MD5_HASH),
	N(CKA_TRUST_DIGITAL_SIGNATURE), N(CKA_TRUST_NON_REPUDIATION),
	N(CKA_TRUST_KEY_ENCIPHERMENT), N(CKA_TRUST_DATA_ENCIPHERMENT),
	N(CKA_TRUST_KEY_AGREEMENT), N(CKA_TRUST_KEY_CERT_SIGN), N(CKA_TRUST_CRL_SIGN),
	N(CKA_TRUST_SERVER_AUTH), N(CKA_TRUST_CLIENT_AUTH), N(CKA_TRUST_CODE_SIGNING),
	N(CKA_TRUST_EMAIL_PROTECTION), N(CKA_TRUST_IPSEC_END_SYSTEM),
	N(CKA_TRUST_IPSEC_TUNNEL), N(CKA_TRUST_IPSEC_USER), N(CKA_TRUST_TIME_STAMPING),
	N(CKA_TRUST_STEP_UP_APPROVED), N(CKA_X_DISTRUSTED), N(CKA_X_CRITICAL),
	N(CKA_X_ASSERTION_TYPE), N(CKA_X_CERTIFICATE_VALUE), N(CKA_X_PURPOSE), N(CKA_X_PEER),
};
static const struct { const char *name; CK_ULONG value; } value_names[] = {
	N(CKO_CERTIFICATE), N(CKO_NSS_TRUST), N(CKO_X_TRUST_ASSERTION),
	N(CKO_X_CERTIFICATE_EXTENSION), N(CKO_DATA), N(CKC_X_509),
	N(CKT_NSS_TRUSTED_DELEGATOR), N(CKT_NSS_TRUSTED), N(CKT_NSS_NOT_TRUSTED),
	N(CKT_NSS_TRUST_UNKNOWN), N(CKT_NSS_MUST_VERIFY_TRUST),
	N(CKT_X_ANCHORED_CERTIFICATE), N(CKT_X_DISTRUSTED_CERTIFICATE),
	N(CKT_X_PINNED_CERTIFICATE),
};
#undef N

/* Compares "x_purpose" with "CKA_X_PURPOSE" (prefix of 4 characters). */
static int
name_is(const char *arg, size_t len, const char *name)
{
	return strlen(name + 4) == len && strncasecmp(arg, name + 4, len) == 0;
}

static unsigned char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (f == NULL)
		return NULL;
	do {
		cap += 65536;
		buf = realloc(buf, cap);
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	return buf;
}

static int
parse_attr(const char *arg, CK_ATTRIBUTE *a)
{
	const char *eq = strchr(arg, '=');
	const char *v;
	size_t i;

	if (eq == NULL)
		return 0;
	for (i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++)
		if (name_is(arg, (size_t)(eq - arg), attr_names[i].name))
			break;
	if (i == sizeof(attr_names) / sizeof(attr_names[0]))
		return 0;
	a->type = attr_names[i].value;
	v = eq + 1;
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		CK_BBOOL *b = malloc(1);
		*b = v[0] == 't';
		a->pValue = b;
		a->ulValueLen = 1;
	} else if (strncmp(v, "hex:", 4) == 0) {
		size_t n = strlen(v + 4) / 2;
		unsigned char *p = malloc(n + 1);
		for (size_t k = 0; k < n; k++)
			sscanf(v + 4 + 2 * k, "%2hhx", &p[k]);
		a->pValue = p;
		a->ulValueLen = n;
	} else if (strncmp(v, "str:", 4) == 0) {
		a->pValue = strdup(v + 4);
		a->ulValueLen = strlen(v + 4);
	} else if (strncmp(v, "file:", 5) == 0) {
		size_t n;
		a->pValue = read_all(v + 5, &n);
		if (a->pValue == NULL)
			return 0;
		a->ulValueLen = n;
	} else {
		CK_ULONG *u = malloc(sizeof(*u));
		char *end;
		*u = strtoul(v, &end, 0);
		if (*end != 0 || end == v) {
			for (i = 0; i < sizeof(value_names) / sizeof(value_names[0]); i++)
				if (name_is(v, strlen(v), value_names[i].name))
					break;
			if (i == sizeof(value_names) / sizeof(value_names[0]))
				return 0;
			*u = value_names[i].value;
		}
		a->pValue = u;
		a->ulValueLen = sizeof(*u);
	}
	return 1;
}

int
main(int argc, char **argv)
{
	CK_ATTRIBUTE tmpl[64];
	CK_ULONG n = 0, count = 0;
	CK_FUNCTION_LIST *f;
	CK_C_GetFunctionList get;
	CK_C_INITIALIZE_ARGS init = { 0 };
	CK_SLOT_ID slots[16];
	CK_ULONG n_slots = 16, i;
	CK_SESSION_HANDLE s = 0;
	CK_OBJECT_HANDLE h, found[1024];
	CK_RV rv = CKR_TOKEN_NOT_PRESENT;
	CK_FLAGS flags = CKF_SERIAL_SESSION | CKF_RW_SESSION;
	int first = 0, argi = 3;
	const char *action;
	void *dl;

	for (; argi < argc && strncmp(argv[argi], "--", 2) == 0; argi++) {
		if (strcmp(argv[argi], "--first") == 0)
			first = 1;
		else if (strcmp(argv[argi], "--ro") == 0)
			flags = CKF_SERIAL_SESSION;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: p11-object MODULE RESERVED [--first] [--ro] "
		                "create|find|destroy ATTR=VALUE...\n");
		return 2;
	}
	action = argv[argi];
	for (int k = argi + 1; k < argc; k++)
		if (n == 64 || !parse_attr(argv[k], &tmpl[n++])) {
			fprintf(stderr, "p11-object: bad attribute: %s\n", argv[k]);
			return 2;
		}
	if ((dl = dlopen(argv[1], RTLD_NOW)) == NULL ||
	    (get = (CK_C_GetFunctionList)dlsym(dl, "C_GetFunctionList")) == NULL ||
	    get(&f) != CKR_OK) {
		fprintf(stderr, "p11-object: cannot load %s\n", argv[1]);
		return 1;
	}
	init.flags = CKF_OS_LOCKING_OK | PG_CKF_RESERVED_STRING;
	init.pReserved = argv[2];
	if (f->C_Initialize(&init) != CKR_OK || f->C_GetSlotList(CK_TRUE, slots, &n_slots) != CKR_OK)
		return 1;
	for (i = 0; i < n_slots && !first; i++) {
		CK_TOKEN_INFO ti;
		if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK && !(ti.flags & CKF_WRITE_PROTECTED))
			break;
	}
	if (i < n_slots)
		rv = f->C_OpenSession(slots[i], flags, NULL, NULL, &s);
	if (rv == CKR_OK && strcmp(action, "create") == 0) {
		rv = f->C_CreateObject(s, tmpl, n, &h);
		if (rv == CKR_OK)
			printf("created\n");
	} else if (rv == CKR_OK) {
		rv = f->C_FindObjectsInit(s, tmpl, n);
		if (rv == CKR_OK)
			rv = f->C_FindObjects(s, found, 1024, &count);
		f->C_FindObjectsFinal(s);
		for (i = 0; rv == CKR_OK && strcmp(action, "destroy") == 0 && i < count; i++)
			rv = f->C_DestroyObject(s, found[i]);
		if (rv == CKR_OK)
			printf("%lu\n", count);
	}
	if (rv != CKR_OK)
		fprintf(stderr, "p11-object: %s: CKR 0x%lx\n", action, rv);
	f->C_Finalize(NULL);
	for (i = 0; i < n; i++)
		free(tmpl[i].pValue);
	return rv == CKR_OK ? 0 : 1;
}
