/*
 * Writable tokens: C_CreateObject stores a certificate (with its trust
 * flags, or a distrusted issuer and serial or key without one), a stapled
 * certificate extension, an NSS trust object or a trust assertion as a
 * persistence-format file in the token's directory, one object per file,
 * named after its label. C_DestroyObject removes the file that holds an
 * object alone. p11-kit's trust module reads these files too; it accepts
 * creating only certificates and extensions itself.
 */
#include "trust-store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	const CK_ATTRIBUTE *t;
	CK_ULONG n;
} tmpl;

/* What a writer makes: a file's text, and its name without ".p11-kit". */
typedef struct {
	pg_buf text;
	char name[80];
} new_file;

static const CK_ATTRIBUTE *
get(const tmpl *t, CK_ATTRIBUTE_TYPE type)
{
	return pg_template_find(t->t, t->n, type);
}

static bool
get_ulong(const tmpl *t, CK_ATTRIBUTE_TYPE type, CK_ULONG *out)
{
	return pg_template_ulong(t->t, t->n, type, out);
}

static bool
has(const tmpl *t, CK_ATTRIBUTE_TYPE type)
{
	const CK_ATTRIBUTE *a = get(t, type);
	return a != NULL && a->ulValueLen > 0;
}

/* One DER element that spans the whole value, with that tag. */
static bool
is_der(const CK_ATTRIBUTE *a, int tag)
{
	pg_der d;

	pg_der_init(&d, a->pValue, a->ulValueLen);
	return pg_der_read(&d, tag, NULL, NULL) && pg_der_at_end(&d);
}

static bool
allowed(CK_ATTRIBUTE_TYPE type, const CK_ATTRIBUTE_TYPE *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == type)
			return true;
	return false;
}

/* Types (with sizes) every template is checked for first. */
static CK_RV
check_values(const tmpl *t, const CK_ATTRIBUTE_TYPE *ok, size_t n_ok)
{
	static const CK_ATTRIBUTE_TYPE bools[] = {
		CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE, CKA_TRUSTED, CKA_X_DISTRUSTED, CKA_X_CRITICAL,
		CKA_TRUST_STEP_UP_APPROVED,
	};

	for (CK_ULONG i = 0; i < t->n; i++) {
		const CK_ATTRIBUTE *a = &t->t[i];
		if (a->pValue == NULL && a->ulValueLen > 0)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (a->type == CKA_CLASS)
			continue;
		if (!allowed(a->type, ok, n_ok))
			return CKR_TEMPLATE_INCONSISTENT;
		if (allowed(a->type, bools, PG_N_ELEMENTS(bools)) && a->ulValueLen != 1)
			return CKR_ATTRIBUTE_VALUE_INVALID;
	}
	return CKR_OK;
}

/* A file name from the label: letters, digits, '-' and '.' kept, else '_'. */
static void
file_name(char *out, size_t size, const unsigned char *label, size_t len, const char *fallback)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size && o < 64; i++) {
		unsigned char c = label[i];
		/* Not a leading '.': readers skip hidden files. */
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9') || c == '-' || (c == '.' && o > 0);
		out[o++] = keep ? (char)c : '_';
	}
	if (o == 0)
		o = (size_t)snprintf(out, size, "%s", fallback);
	out[o] = 0;
}

/* One object as a file's text, named after the template's label, else
 * fallback. */
static void
write_object(const tmpl *t, const CK_ATTRIBUTE *attrs, CK_ULONG n, const char *fallback,
             new_file *out)
{
	const CK_ATTRIBUTE *label = get(t, CKA_LABEL);

	file_name(out->name, sizeof(out->name), label ? label->pValue : NULL,
	          label ? label->ulValueLen : 0, fallback);
	pg_persist_write_file(&out->text, attrs, n);
}

/*
 * Writes a new file NAME.p11-kit (NAME.N.p11-kit if taken), its path
 * into path[size]: whole, under a hidden temporary name (readers skip
 * dot files), then links it to its name, which it never replaces: a
 * reader sees all of it or nothing, and no file or link already there is
 * written through.
 */
static CK_RV
write_new(pg_tstore *s, new_file *file, char *path, size_t size)
{
	size_t len;
	char *text = pg_buf_steal(&file->text, &len), tmp[4200];
	bool ok;
	int fd = -1;

	if (text == NULL)
		return CKR_HOST_MEMORY;
	if (!pg_tstore_make_dir(s)) {
		free(text);
		return CKR_DEVICE_ERROR;
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", pg_tstore_path(s), file->name);
	fd = mkstemp(tmp);
	ok = fd >= 0 && fchmod(fd, 0644) == 0 && pg_write_all(fd, text, len) && fsync(fd) == 0;
	if (fd >= 0)
		ok = close(fd) == 0 && ok;
	free(text);
	for (int i = 0; ok && i < 1000; i++) {
		if (i == 0)
			snprintf(path, size, "%s/%s.p11-kit", pg_tstore_path(s), file->name);
		else
			snprintf(path, size, "%s/%s.%d.p11-kit", pg_tstore_path(s), file->name, i);
		if (link(tmp, path) == 0) {
			unlink(tmp);
			return CKR_OK;
		}
		ok = errno == EEXIST;
	}
	pg_message("%s: cannot write: %s", fd < 0 ? pg_tstore_path(s) : path, strerror(errno));
	if (fd >= 0)
		unlink(tmp);
	return CKR_DEVICE_ERROR;
}

static const CK_ATTRIBUTE_TYPE cert_types[] = {
	CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE, CKA_LABEL, CKA_CERTIFICATE_TYPE, CKA_VALUE,
	CKA_TRUSTED, CKA_X_DISTRUSTED, CKA_ISSUER, CKA_SERIAL_NUMBER, CKA_SUBJECT, CKA_ID,
	CKA_PUBLIC_KEY_INFO, CKA_CERTIFICATE_CATEGORY, CKA_START_DATE, CKA_END_DATE,
};

/* A certificate: with a value, stored with its trust flags and label;
 * without one, a distrusted issuer and serial or a distrusted key. */
static CK_RV
certificate(const tmpl *t, new_file *out)
{
	static const unsigned char oid_cn[] = { 0x55, 0x04, 0x03 };
	const CK_ATTRIBUTE *value = get(t, CKA_VALUE), *label = get(t, CKA_LABEL);
	CK_ULONG type;
	bool trusted, distrusted;
	pg_cert cert;
	pg_span cn;
	CK_RV rv = check_values(t, cert_types, PG_N_ELEMENTS(cert_types));

	if (rv != CKR_OK)
		return rv;
	if (get(t, CKA_CERTIFICATE_TYPE) &&
	    (!get_ulong(t, CKA_CERTIFICATE_TYPE, &type) || type != CKC_X_509))
		return CKR_TEMPLATE_INCONSISTENT;
	trusted = pg_template_bool(t->t, t->n, CKA_TRUSTED) == 1;
	distrusted = pg_template_bool(t->t, t->n, CKA_X_DISTRUSTED) == 1;
	if (value == NULL || value->ulValueLen == 0) {
		CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
		CK_ULONG x509 = CKC_X_509;
		CK_BBOOL yes = CK_TRUE;
		CK_ATTRIBUTE attrs[6] = {
			{ CKA_CLASS, &klass, sizeof(klass) },
			{ CKA_CERTIFICATE_TYPE, &x509, sizeof(x509) },
			{ CKA_X_DISTRUSTED, &yes, 1 },
		};
		CK_ULONG n = 3;
		bool by_serial = has(t, CKA_ISSUER) && has(t, CKA_SERIAL_NUMBER);
		bool by_key = has(t, CKA_PUBLIC_KEY_INFO);
		if (!distrusted || (!by_serial && !by_key))
			return CKR_TEMPLATE_INCOMPLETE;
		if ((by_serial && (!is_der(get(t, CKA_ISSUER), 0x30) ||
		                   !is_der(get(t, CKA_SERIAL_NUMBER), 0x02))) ||
		    (by_key && !is_der(get(t, CKA_PUBLIC_KEY_INFO), 0x30)))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (label)
			attrs[n++] = *label;
		if (by_serial) {
			attrs[n++] = *get(t, CKA_ISSUER);
			attrs[n++] = *get(t, CKA_SERIAL_NUMBER);
		} else {
			attrs[n++] = *get(t, CKA_PUBLIC_KEY_INFO);
		}
		write_object(t, attrs, n, "distrusted", out);
		return CKR_OK;
	}
	if (!pg_cert_parse(value->pValue, value->ulValueLen, &cert))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (label) {
		cn.p = label->pValue;
		cn.len = label->ulValueLen;
	} else if (!pg_name_find(&cert.subject, oid_cn, sizeof(oid_cn), &cn)) {
		cn.p = (const unsigned char *)"certificate";
		cn.len = 11;
	}
	file_name(out->name, sizeof(out->name), cn.p, cn.len, "certificate");
	pg_persist_write_cert(&out->text, cert.der.p, cert.der.len, (const char *)cn.p, cn.len,
	                      trusted, distrusted);
	return CKR_OK;
}

/* A stapled extension: an Extension DER and the key it is about. */
static CK_RV
extension(const tmpl *t, new_file *out)
{
	static const CK_ATTRIBUTE_TYPE ok[] = {
		CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE, CKA_LABEL, CKA_VALUE, CKA_PUBLIC_KEY_INFO,
		CKA_OBJECT_ID, CKA_ID, CKA_X_CRITICAL,
	};
	const CK_ATTRIBUTE *value = get(t, CKA_VALUE), *spki = get(t, CKA_PUBLIC_KEY_INFO);
	const CK_ATTRIBUTE *label = get(t, CKA_LABEL);
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	CK_ATTRIBUTE attrs[8] = { { CKA_CLASS, &klass, sizeof(klass) } };
	CK_ULONG n = 1;
	pg_der d, ext;
	pg_span oid;
	CK_RV rv = check_values(t, ok, PG_N_ELEMENTS(ok));

	if (rv != CKR_OK)
		return rv;
	if (!has(t, CKA_VALUE) || !has(t, CKA_PUBLIC_KEY_INFO))
		return CKR_TEMPLATE_INCOMPLETE;
	pg_der_init(&d, value->pValue, value->ulValueLen);
	if (!pg_der_enter(&d, 0x30, &ext) || !pg_der_at_end(&d) ||
	    !pg_der_read(&ext, 0x06, &oid, NULL) || !is_der(spki, 0x30))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	pg_der_read_optional(&ext, 0x01, NULL, NULL);
	if (!pg_der_read(&ext, 0x04, NULL, NULL) || !pg_der_at_end(&ext))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (has(t, CKA_OBJECT_ID) &&
	    (get(t, CKA_OBJECT_ID)->ulValueLen != oid.len ||
	     memcmp(get(t, CKA_OBJECT_ID)->pValue, oid.p, oid.len) != 0))
		return CKR_TEMPLATE_INCONSISTENT;
	if (label)
		attrs[n++] = *label;
	attrs[n++] = *value;
	attrs[n++] = (CK_ATTRIBUTE){ CKA_OBJECT_ID, (void *)oid.p, oid.len };
	if (get(t, CKA_ID))
		attrs[n++] = *get(t, CKA_ID);
	if (get(t, CKA_X_CRITICAL))
		attrs[n++] = *get(t, CKA_X_CRITICAL);
	attrs[n++] = *spki;
	write_object(t, attrs, n, "extension", out);
	return CKR_OK;
}

static bool
nss_trust_value(CK_ULONG v)
{
	return v == CKT_NSS_TRUSTED || v == CKT_NSS_TRUSTED_DELEGATOR ||
	       v == CKT_NSS_MUST_VERIFY_TRUST || v == CKT_NSS_TRUST_UNKNOWN ||
	       v == CKT_NSS_NOT_TRUSTED || v == CKT_NSS_VALID_DELEGATOR;
}

/* Both kinds of trust object are stored as given (less CKA_TOKEN). */
static CK_RV
as_given(const tmpl *t, const char *fallback, new_file *out)
{
	CK_ATTRIBUTE *attrs = malloc((t->n + 1) * sizeof(*attrs));
	CK_ULONG n = 0;

	if (attrs == NULL)
		return CKR_HOST_MEMORY;
	/* The class first, as readers expect. */
	attrs[n++] = *get(t, CKA_CLASS);
	for (CK_ULONG i = 0; i < t->n; i++)
		if (t->t[i].type != CKA_CLASS && t->t[i].type != CKA_TOKEN)
			attrs[n++] = t->t[i];
	write_object(t, attrs, n, fallback, out);
	free(attrs);
	return CKR_OK;
}

/* An NSS trust object: for a certificate named by issuer and serial (or
 * SHA-1), CK_TRUST values for usages and purposes. */
static CK_RV
nss_trust(const tmpl *t, new_file *out)
{
	static const CK_ATTRIBUTE_TYPE ok[] = {
		CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE, CKA_LABEL, CKA_ID, CKA_SUBJECT, CKA_ISSUER,
		CKA_SERIAL_NUMBER, CKA_CERT_SHA1_HASH, CKA_CERT_MD5_HASH,
		CKA_TRUST_DIGITAL_SIGNATURE, CKA_TRUST_NON_REPUDIATION, CKA_TRUST_KEY_ENCIPHERMENT,
		CKA_TRUST_DATA_ENCIPHERMENT, CKA_TRUST_KEY_AGREEMENT, CKA_TRUST_KEY_CERT_SIGN,
		CKA_TRUST_CRL_SIGN, CKA_TRUST_SERVER_AUTH, CKA_TRUST_CLIENT_AUTH,
		CKA_TRUST_CODE_SIGNING, CKA_TRUST_EMAIL_PROTECTION, CKA_TRUST_IPSEC_END_SYSTEM,
		CKA_TRUST_IPSEC_TUNNEL, CKA_TRUST_IPSEC_USER, CKA_TRUST_TIME_STAMPING,
		CKA_TRUST_STEP_UP_APPROVED,
	};
	CK_RV rv = check_values(t, ok, PG_N_ELEMENTS(ok));
	const CK_ATTRIBUTE *sha1 = get(t, CKA_CERT_SHA1_HASH), *md5 = get(t, CKA_CERT_MD5_HASH);

	if (rv != CKR_OK)
		return rv;
	if (!(has(t, CKA_ISSUER) && has(t, CKA_SERIAL_NUMBER)) && !has(t, CKA_CERT_SHA1_HASH))
		return CKR_TEMPLATE_INCOMPLETE;
	if ((has(t, CKA_ISSUER) && !is_der(get(t, CKA_ISSUER), 0x30)) ||
	    (has(t, CKA_SERIAL_NUMBER) && !is_der(get(t, CKA_SERIAL_NUMBER), 0x02)) ||
	    (sha1 && sha1->ulValueLen != PG_SHA1_LEN) || (md5 && md5->ulValueLen != PG_MD5_LEN))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	for (CK_ATTRIBUTE_TYPE a = CKA_TRUST_DIGITAL_SIGNATURE; a <= CKA_TRUST_TIME_STAMPING; a++) {
		CK_ULONG v;
		if (get(t, a) && (!get_ulong(t, a, &v) || !nss_trust_value(v)))
			return CKR_ATTRIBUTE_VALUE_INVALID;
	}
	return as_given(t, "nss-trust", out);
}

/* A trust assertion: anchored or pinned (a certificate value) or
 * distrusted (issuer and serial), for one purpose. */
static CK_RV
assertion(const tmpl *t, new_file *out)
{
	static const CK_ATTRIBUTE_TYPE ok[] = {
		CKA_TOKEN, CKA_PRIVATE, CKA_MODIFIABLE, CKA_LABEL, CKA_ID, CKA_X_PURPOSE,
		CKA_X_ASSERTION_TYPE, CKA_X_CERTIFICATE_VALUE, CKA_ISSUER, CKA_SERIAL_NUMBER, CKA_X_PEER,
	};
	CK_RV rv = check_values(t, ok, PG_N_ELEMENTS(ok));
	CK_ULONG type;
	pg_cert cert;

	if (rv != CKR_OK)
		return rv;
	if (!has(t, CKA_X_PURPOSE) || !get(t, CKA_X_ASSERTION_TYPE))
		return CKR_TEMPLATE_INCOMPLETE;
	if (!get_ulong(t, CKA_X_ASSERTION_TYPE, &type) ||
	    (type != CKT_X_ANCHORED_CERTIFICATE && type != CKT_X_PINNED_CERTIFICATE &&
	     type != CKT_X_DISTRUSTED_CERTIFICATE))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (type == CKT_X_DISTRUSTED_CERTIFICATE) {
		if (!has(t, CKA_ISSUER) || !has(t, CKA_SERIAL_NUMBER))
			return CKR_TEMPLATE_INCOMPLETE;
		if (!is_der(get(t, CKA_ISSUER), 0x30) || !is_der(get(t, CKA_SERIAL_NUMBER), 0x02))
			return CKR_ATTRIBUTE_VALUE_INVALID;
	} else {
		const CK_ATTRIBUTE *v = get(t, CKA_X_CERTIFICATE_VALUE);
		if (!has(t, CKA_X_CERTIFICATE_VALUE) ||
		    (type == CKT_X_PINNED_CERTIFICATE && !has(t, CKA_X_PEER)))
			return CKR_TEMPLATE_INCOMPLETE;
		if (!pg_cert_parse(v->pValue, v->ulValueLen, &cert))
			return CKR_ATTRIBUTE_VALUE_INVALID;
	}
	return as_given(t, "trust-assertion", out);
}

/* How each class is checked and written. */
typedef CK_RV writer_fn(const tmpl *t, new_file *out);

static const struct {
	CK_OBJECT_CLASS klass;
	writer_fn *write;
} writers[] = {
	{ CKO_CERTIFICATE, certificate },
	{ CKO_X_CERTIFICATE_EXTENSION, extension },
	{ CKO_NSS_TRUST, nss_trust },
	{ CKO_X_TRUST_ASSERTION, assertion },
};

/* The object read from the file at path (the first, as each holds one). */
static bool
object_of(pg_tstore *s, const char *path, size_t *index)
{
	for (size_t i = 0; i < pg_tstore_count(s); i++) {
		const pg_object *o = pg_tstore_object(s, i);
		if (o->entry && (o->kind == PG_OBJ_CERT || o->kind == PG_OBJ_EXT ||
		                 o->kind == PG_OBJ_STORED || o->kind == PG_OBJ_REV_CERT) &&
		    strcmp(o->entry->origin, path) == 0) {
			*index = i;
			return true;
		}
	}
	return false;
}

CK_RV
pg_tstore_create(pg_tstore *s, const CK_ATTRIBUTE *attrs, CK_ULONG n, size_t *index)
{
	tmpl t = { attrs, n };
	CK_ULONG klass;
	writer_fn *writer = NULL;
	new_file file;
	char path[4200];
	CK_RV rv;

	if (!pg_tstore_writable(s))
		return CKR_TOKEN_WRITE_PROTECTED;
	if (!get(&t, CKA_CLASS))
		return CKR_TEMPLATE_INCOMPLETE;
	if (!get_ulong(&t, CKA_CLASS, &klass))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	/* Everything here is a token object: there are no session objects. */
	if (pg_template_bool(attrs, n, CKA_TOKEN) == 0)
		return CKR_TEMPLATE_INCONSISTENT;
	for (size_t i = 0; i < PG_N_ELEMENTS(writers) && writer == NULL; i++)
		if (writers[i].klass == klass)
			writer = writers[i].write;
	if (writer == NULL)
		return CKR_TEMPLATE_INCONSISTENT;
	pg_buf_init(&file.text);
	rv = writer(&t, &file);
	if (rv == CKR_OK)
		rv = write_new(s, &file, path, sizeof(path));
	pg_buf_clear(&file.text);
	if (rv != CKR_OK)
		return rv;
	pg_tstore_refresh(s);
	if (!object_of(s, path, index))
		return CKR_GENERAL_ERROR;
	return CKR_OK;
}

CK_RV
pg_tstore_destroy(pg_tstore *s, size_t index)
{
	const pg_object *o = pg_tstore_object(s, index);
	const pg_source *src;
	const char *origin;
	size_t plen = strlen(pg_tstore_path(s)), certs = 0;

	if (!pg_tstore_writable(s))
		return CKR_TOKEN_WRITE_PROTECTED;
	/* Generated objects (NSS trust, assertions, ...) follow their
	 * certificate; only what a file holds can go. */
	if (o == NULL || o->entry == NULL ||
	    (o->kind != PG_OBJ_CERT && o->kind != PG_OBJ_EXT && o->kind != PG_OBJ_STORED &&
	     o->kind != PG_OBJ_REV_CERT))
		return CKR_ACTION_PROHIBITED;
	origin = o->entry->origin;
	/* Only files inside this token's directory, holding this object alone. */
	if (strncmp(origin, pg_tstore_path(s), plen) != 0 || origin[plen] != '/' ||
	    strchr(origin + plen + 1, '/') != NULL || (src = pg_tstore_source_of(s, o->entry)) == NULL)
		return CKR_ACTION_PROHIBITED;
	for (size_t i = 0; i < src->n_entries; i++)
		certs += src->entries[i].kind == PG_ENTRY_CERT;
	if (src->n_sections > 1 ||
	    (src->n_sections == 0 && (certs != 1 || o->kind != PG_OBJ_CERT)))
		return CKR_ACTION_PROHIBITED;
	if (unlink(origin) != 0)
		return CKR_DEVICE_ERROR;
	pg_tstore_refresh(s);
	return CKR_OK;
}
