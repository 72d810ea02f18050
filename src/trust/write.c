/*
 * Writable tokens: C_CreateObject stores a certificate (with its trust
 * flags) as a persistence-format file in the token's directory;
 * C_DestroyObject removes the file that holds an object alone.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const CK_ATTRIBUTE *
get(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (t[i].type == type)
			return &t[i];
	return NULL;
}

static bool
get_bool(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	const CK_ATTRIBUTE *a = get(t, n, type);
	return a && a->pValue && a->ulValueLen == 1 && *(CK_BBOOL *)a->pValue;
}

/* A file name from the label: letters, digits, '-' and '.' kept, else '_'. */
static void
file_name(char *out, size_t size, const unsigned char *label, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size && o < 64; i++) {
		unsigned char c = label[i];
		out[o++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		           (c >= '0' && c <= '9') || c == '-' || c == '.' ? (char)c : '_';
	}
	if (o == 0)
		out[o++] = 'c';
	out[o] = 0;
}

CK_RV
pg_store_create(pg_store *s, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	const CK_ATTRIBUTE *klass = get(t, n, CKA_CLASS), *value = get(t, n, CKA_VALUE),
	                   *label = get(t, n, CKA_LABEL);
	pg_cert cert;
	pg_buf buf;
	char name[80], path[4200];
	const unsigned char *lp;
	size_t ll, len;
	pg_span cn;
	char *text;
	int fd = -1;
	static const unsigned char oid_cn[] = { 0x55, 0x04, 0x03 };

	if (!pg_store_writable(s))
		return CKR_TOKEN_WRITE_PROTECTED;
	if (klass == NULL || klass->pValue == NULL || klass->ulValueLen != sizeof(CK_ULONG))
		return CKR_TEMPLATE_INCOMPLETE;
	if (*(CK_ULONG *)klass->pValue != CKO_CERTIFICATE)
		return CKR_TEMPLATE_INCONSISTENT;
	if (value == NULL || value->pValue == NULL)
		return CKR_TEMPLATE_INCOMPLETE;
	if (!pg_cert_parse(value->pValue, value->ulValueLen, &cert))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (label && label->pValue) {
		lp = label->pValue;
		ll = label->ulValueLen;
	} else if (pg_name_find(&cert.subject, oid_cn, sizeof(oid_cn), &cn)) {
		lp = cn.p;
		ll = cn.len;
	} else {
		lp = (const unsigned char *)"certificate";
		ll = 11;
	}
	file_name(name, sizeof(name), lp, ll);
	pg_buf_init(&buf);
	pg_persist_write_cert(&buf, cert.der.p, cert.der.len, (const char *)lp, ll,
	                      get_bool(t, n, CKA_TRUSTED), get_bool(t, n, CKA_X_DISTRUSTED));
	text = pg_buf_steal(&buf, &len);
	if (text == NULL)
		return CKR_HOST_MEMORY;
	for (int i = 0; i < 1000 && fd < 0; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/%s.p11-kit", pg_store_path(s), name);
		else
			snprintf(path, sizeof(path), "%s/%s.%d.p11-kit", pg_store_path(s), name, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		pg_message("%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		free(text);
		return CKR_DEVICE_ERROR;
	}
	free(text);
	if (close(fd) != 0)
		return CKR_DEVICE_ERROR;
	return CKR_OK;
}

CK_RV
pg_store_destroy(pg_store *s, size_t index)
{
	const pg_object *o = pg_store_object(s, index);
	const char *origin;
	size_t plen = strlen(pg_store_path(s));

	if (!pg_store_writable(s))
		return CKR_TOKEN_WRITE_PROTECTED;
	if (o == NULL || o->entry == NULL || o->kind != PG_OBJ_CERT)
		return CKR_ACTION_PROHIBITED;
	origin = o->entry->origin;
	/* Only files inside this token's directory, holding this object alone. */
	if (strncmp(origin, pg_store_path(s), plen) != 0 || origin[plen] != '/')
		return CKR_ACTION_PROHIBITED;
	if (unlink(origin) != 0)
		return CKR_DEVICE_ERROR;
	pg_store_refresh(s);
	return CKR_OK;
}
