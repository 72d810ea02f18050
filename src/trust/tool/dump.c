/*
 * trust dump: every object of the trust modules' tokens in the
 * persistence format, each after a "# pkcs11:" line naming it by CKA_ID
 * and type, as p11-kit's `trust dump` prints them. Attributes come in
 * ascending order of type (the names table), which is also the order
 * p11-kit asks for them in; what an object lacks is left out.
 */
#include "config.h"

#include "nicks.h"
#include "objects.h"
#include "trust-tool.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	const p11glue_uri *uri;        /* NULL: every object */
	pg_buf out;
	FILE *file;
} dump_job;

/* The object part of a PKCS#11 URI: id (every byte %XX), then type. */
static void
add_uri(pg_buf *out, const CK_ATTRIBUTE *attrs, CK_ULONG n)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *type = NULL;
	bool id = false;

	pg_buf_add_str(out, "# pkcs11:");
	for (CK_ULONG i = 0; i < n; i++) {
		const unsigned char *p = attrs[i].pValue;
		if (attrs[i].ulValueLen == CK_UNAVAILABLE_INFORMATION)
			continue;
		if (attrs[i].type == CKA_ID && attrs[i].ulValueLen > 0) {
			pg_buf_add_str(out, "id=");
			for (CK_ULONG k = 0; k < attrs[i].ulValueLen; k++) {
				char esc[3] = { '%', hex[p[k] >> 4], hex[p[k] & 15] };
				pg_buf_add(out, esc, 3);
			}
			id = true;
		} else if (attrs[i].type == CKA_CLASS && attrs[i].ulValueLen == sizeof(CK_ULONG)) {
			CK_OBJECT_CLASS klass;
			memcpy(&klass, p, sizeof(klass));
			type = klass == CKO_CERTIFICATE ? "cert" : klass == CKO_PUBLIC_KEY ? "public" :
			       klass == CKO_PRIVATE_KEY ? "private" : klass == CKO_SECRET_KEY ? "secret-key" :
			       klass == CKO_DATA ? "data" : NULL;
		}
	}
	if (type)
		pg_buf_printf(out, "%stype=%s", id ? ";" : "", type);
	pg_buf_add_byte(out, '\n');
}

/* Reads every named attribute of an object; lengths of those it lacks
 * stay CK_UNAVAILABLE_INFORMATION. Values freed by the caller. */
static CK_ATTRIBUTE *
load_attrs(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o, CK_ULONG *n_out)
{
	CK_ULONG n = (CK_ULONG)pg_nick_count();
	CK_ATTRIBUTE *a = calloc(n, sizeof(*a));
	CK_RV rv;

	if (a == NULL)
		return NULL;
	for (CK_ULONG i = 0; i < n; i++)
		a[i].type = pg_nick_type_at(i);
	rv = f->C_GetAttributeValue(s, o, a, n);
	if (rv != CKR_OK && rv != CKR_ATTRIBUTE_TYPE_INVALID && rv != CKR_ATTRIBUTE_SENSITIVE) {
		free(a);
		return NULL;
	}
	for (CK_ULONG i = 0; i < n; i++)
		if (a[i].ulValueLen != CK_UNAVAILABLE_INFORMATION &&
		    (a[i].pValue = malloc(a[i].ulValueLen + 1)) == NULL)
			a[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
	/* Ask for the values of those that have one; a value that changed
	 * size between the calls is left out. */
	for (CK_ULONG i = 0; i < n; i++)
		if (a[i].pValue && f->C_GetAttributeValue(s, o, &a[i], 1) != CKR_OK) {
			free(a[i].pValue);
			a[i].pValue = NULL;
			a[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
		}
	*n_out = n;
	return a;
}

static bool
matches(const dump_job *job, const CK_ATTRIBUTE *a, CK_ULONG n)
{
	CK_ATTRIBUTE pick[3];
	CK_ULONG k = 0;

	if (job->uri == NULL)
		return true;
	for (CK_ULONG i = 0; i < n && k < 3; i++)
		if (a[i].type == CKA_CLASS || a[i].type == CKA_LABEL || a[i].type == CKA_ID)
			pick[k++] = a[i];
	return p11glue_uri_match_attributes(job->uri, pick, k);
}

static void
dump_token(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, bool policy, void *data)
{
	dump_job *job = data;
	CK_SESSION_HANDLE s;
	CK_OBJECT_HANDLE *found = NULL;
	size_t count = 0;

	(void)policy;

	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
		return;
	/* The search ends before the attributes are read: not every module
	 * lets a search and reads interleave in one session. */
	if (pg_objects_find(f, s, NULL, 0, &found, &count) != CKR_OK)
		pg_message("could not list the objects of a trust token");
	for (size_t i = 0; i < count; i++) {
		CK_ULONG n = 0;
		CK_ATTRIBUTE *a = load_attrs(f, s, found[i], &n);
		if (a == NULL) {
			pg_message("could not dump object");
			continue;
		}
		if (matches(job, a, n)) {
			add_uri(&job->out, a, n);
			pg_persist_write(&job->out, a, n);
			pg_buf_add_byte(&job->out, '\n');
		}
		for (CK_ULONG k = 0; k < n; k++)
			free(a[k].pValue);
		free(a);
		/* Written as it goes: a large token is not held in memory. */
		if (job->out.len > 0)
			fwrite(job->out.data, 1, job->out.len, job->file);
		pg_buf_clear(&job->out);
	}
	free(found);
	f->C_CloseSession(s);
}

int
pg_trust_dump(const p11glue_uri *filter, FILE *out)
{
	dump_job job = { filter, { NULL, 0, 0, false }, out };
	int status;

	pg_buf_init(&job.out);
	status = pg_trust_each_token(dump_token, &job);
	pg_buf_clear(&job.out);
	pg_trust_release();
	return status;
}

