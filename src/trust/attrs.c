/*
 * The attributes of each kind of object, computed from its entry. Values
 * point into the entry (the DER read from the file, hashes computed once)
 * or at constants; nothing is copied.
 */
#include "store.h"

#include <string.h>

static const CK_BBOOL ck_true = CK_TRUE, ck_false = CK_FALSE;
static const CK_ULONG zero = 0;
static const CK_OBJECT_CLASS cls_cert = CKO_CERTIFICATE, cls_nss = CKO_NSS_TRUST,
	cls_assert = CKO_X_TRUST_ASSERTION, cls_ext = CKO_X_CERTIFICATE_EXTENSION,
	cls_roots = CKO_NSS_BUILTIN_ROOT_LIST, cls_crl = CKO_NSS_CRL;
static const CK_ULONG t_anchored = CKT_X_ANCHORED_CERTIFICATE,
	t_distrusted = CKT_X_DISTRUSTED_CERTIFICATE, not_trusted = CKT_NSS_NOT_TRUSTED;
static const char roots_label[] = "Trust Anchor Roots";

#define SET(v, l) do { *value = (v); *len = (CK_ULONG)(l); return true; } while (0)

static bool
common(const pg_object *o, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	switch (type) {
	case CKA_TOKEN:
		SET(&ck_true, 1);
	case CKA_PRIVATE:
	case CKA_MODIFIABLE:
		SET(&ck_false, 1);
	case CKA_LABEL:
		if (o->entry == NULL)
			SET(roots_label, sizeof(roots_label) - 1);
		SET(o->entry->label.p, o->entry->label.len);
	default:
		return false;
	}
}

static bool
cert_attr(const pg_entry *e, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	const pg_cert *c = &e->cert;

	switch (type) {
	case CKA_CLASS:
		SET(&cls_cert, sizeof(CK_ULONG));
	case CKA_VALUE:
		SET(c->der.p, c->der.len);
	case CKA_CERTIFICATE_TYPE:
	case CKA_JAVA_MIDP_SECURITY_DOMAIN:
		SET(&zero, sizeof(CK_ULONG));
	case CKA_ISSUER:
		SET(c->issuer.p, c->issuer.len);
	case CKA_SERIAL_NUMBER:
		SET(c->serial.p, c->serial.len);
	case CKA_SUBJECT:
		SET(c->subject.p, c->subject.len);
	case CKA_TRUSTED:
		SET(e->trusted ? &ck_true : &ck_false, 1);
	case CKA_X_DISTRUSTED:
		SET(e->distrusted ? &ck_true : &ck_false, 1);
	case CKA_CERTIFICATE_CATEGORY:
		SET(&e->category, sizeof(CK_ULONG));
	case CKA_URL:
	case CKA_HASH_OF_ISSUER_PUBLIC_KEY:
		SET("", 0);
	case CKA_HASH_OF_SUBJECT_PUBLIC_KEY:
		SET(e->spki_sha1, 20);
	case CKA_CHECK_VALUE:
		SET(e->sha1, 3);
	case CKA_ID:
		if (c->ski.len)
			SET(c->ski.p, c->ski.len);
		SET(e->spki_sha1, 20);
	case CKA_START_DATE:
		if (!e->has_dates)
			return false;
		SET(e->start, 8);
	case CKA_END_DATE:
		if (!e->has_dates)
			return false;
		SET(e->end, 8);
	case CKA_PUBLIC_KEY_INFO:
		SET(c->spki.p, c->spki.len);
	case CKA_X_GENERATED:
		SET(&ck_false, 1);
	case CKA_X_ORIGIN:
		SET(e->origin, strlen(e->origin));
	default:
		return false;
	}
}

static bool
nss_attr(const pg_entry *e, bool revoked, CK_ATTRIBUTE_TYPE type, const void **value,
         CK_ULONG *len)
{
	if (type >= CKA_TRUST_DIGITAL_SIGNATURE && type <= CKA_TRUST_TIME_STAMPING)
		SET(revoked ? &not_trusted : &e->nss[type - CKA_TRUST_DIGITAL_SIGNATURE],
		    sizeof(CK_ULONG));
	switch (type) {
	case CKA_CLASS:
		SET(&cls_nss, sizeof(CK_ULONG));
	case CKA_ISSUER:
		SET(e->issuer.p, e->issuer.len);
	case CKA_SERIAL_NUMBER:
		SET(e->serial.p, e->serial.len);
	case CKA_TRUST_STEP_UP_APPROVED:
		SET(&ck_false, 1);
	case CKA_X_GENERATED:
		SET(&ck_true, 1);
	default:
		break;
	}
	/* A revocation has no certificate: no subject, id or hashes, so NSS
	 * matches it by issuer and serial number. */
	if (revoked)
		return false;
	switch (type) {
	case CKA_SUBJECT:
		SET(e->cert.subject.p, e->cert.subject.len);
	case CKA_ID:
		return cert_attr(e, CKA_ID, value, len);
	case CKA_CERT_SHA1_HASH:
		SET(e->sha1, 20);
	case CKA_CERT_MD5_HASH:
		SET(e->md5, 16);
	default:
		return false;
	}
}

static const char *
purpose(const pg_object *o)
{
	const pg_entry *e = o->entry;

	if (o->purpose_list == 1)
		return o->purpose < e->n_trust ? e->trust_oids[o->purpose] : "";
	if (o->purpose_list == 2)
		return o->purpose < e->n_reject ? e->reject_oids[o->purpose] : "";
	return o->purpose < PG_N_PURPOSES ? pg_std_purposes[o->purpose] : "";
}

static bool
assert_attr(const pg_object *o, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	const pg_entry *e = o->entry;
	bool anchored = o->kind == PG_OBJ_ANCHORED;
	const char *p;

	switch (type) {
	case CKA_CLASS:
		SET(&cls_assert, sizeof(CK_ULONG));
	case CKA_X_ASSERTION_TYPE:
		SET(anchored ? &t_anchored : &t_distrusted, sizeof(CK_ULONG));
	case CKA_X_PURPOSE:
		p = purpose(o);
		SET(p, strlen(p));
	case CKA_X_GENERATED:
		SET(&ck_true, 1);
	case CKA_ID:
		if (o->kind == PG_OBJ_REV_ASSERT)
			return false;
		return cert_attr(e, CKA_ID, value, len);
	case CKA_X_CERTIFICATE_VALUE:
		if (!anchored)
			return false;
		SET(e->cert.der.p, e->cert.der.len);
	case CKA_ISSUER:
		if (anchored)
			return false;
		SET(e->issuer.p, e->issuer.len);
	case CKA_SERIAL_NUMBER:
		if (anchored)
			return false;
		SET(e->serial.p, e->serial.len);
	default:
		return false;
	}
}

static bool
ext_attr(const pg_object *o, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	const pg_entry *e = o->entry;
	static const unsigned char oid_eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
	static const unsigned char oid_reject[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
	                                            0x99, 0x77, 0x06, 0x0a, 0x01 };

	switch (type) {
	case CKA_CLASS:
		SET(&cls_ext, sizeof(CK_ULONG));
	case CKA_LABEL:
		if (o->purpose_list)
			SET("", 0);
		SET(e->label.p, e->label.len);
	case CKA_VALUE:
		if (o->purpose_list == 1)
			SET(e->eku_ext, e->eku_ext_len);
		if (o->purpose_list == 2)
			SET(e->rej_ext, e->rej_ext_len);
		SET(e->ext_value.p, e->ext_value.len);
	case CKA_OBJECT_ID:
		if (o->purpose_list == 1)
			SET(oid_eku, sizeof(oid_eku));
		if (o->purpose_list == 2)
			SET(oid_reject, sizeof(oid_reject));
		SET(e->ext_oid.p, e->ext_oid.len);
	case CKA_ID:
		SET(o->purpose_list ? e->spki_sha1 : e->ext_id, 20);
	case CKA_PUBLIC_KEY_INFO:
		if (o->purpose_list)
			SET(e->cert.spki.p, e->cert.spki.len);
		SET(e->ext_spki.p, e->ext_spki.len);
	case CKA_X_GENERATED:
		SET(&ck_false, 1);
	case CKA_X_ORIGIN:
		SET(e->origin, strlen(e->origin));
	default:
		return false;
	}
}

static bool
rev_cert_attr(const pg_entry *e, CK_ATTRIBUTE_TYPE type, const void **value, CK_ULONG *len)
{
	switch (type) {
	case CKA_CLASS:
		SET(&cls_cert, sizeof(CK_ULONG));
	case CKA_CERTIFICATE_TYPE:
		SET(&zero, sizeof(CK_ULONG));
	case CKA_VALUE:
		SET("", 0);
	case CKA_ISSUER:
		SET(e->issuer.p, e->issuer.len);
	case CKA_SERIAL_NUMBER:
		SET(e->serial.p, e->serial.len);
	case CKA_TRUSTED:
		SET(&ck_false, 1);
	case CKA_X_DISTRUSTED:
	case CKA_X_GENERATED:
		SET(&ck_true, 1);
	case CKA_X_ORIGIN:
		SET(e->origin, strlen(e->origin));
	default:
		return false;
	}
}

bool
pg_object_attr(const pg_store *s, const pg_object *o, CK_ATTRIBUTE_TYPE type,
               const void **value, CK_ULONG *len)
{
	(void)s;
	if (type != CKA_LABEL || !(o->kind == PG_OBJ_EXT && o->purpose_list))
		if (common(o, type, value, len))
			return true;
	switch (o->kind) {
	case PG_OBJ_CERT:
		return cert_attr(o->entry, type, value, len);
	case PG_OBJ_NSS_TRUST:
		return nss_attr(o->entry, false, type, value, len);
	case PG_OBJ_REV_NSS:
		return nss_attr(o->entry, true, type, value, len);
	case PG_OBJ_ANCHORED:
	case PG_OBJ_DISTRUSTED:
	case PG_OBJ_REV_ASSERT:
		return assert_attr(o, type, value, len);
	case PG_OBJ_EXT:
		return ext_attr(o, type, value, len);
	case PG_OBJ_REV_CERT:
		return rev_cert_attr(o->entry, type, value, len);
	case PG_OBJ_CRL:
		switch (type) {
		case CKA_CLASS:
			SET(&cls_crl, sizeof(CK_ULONG));
		case CKA_VALUE:
			SET(o->entry->ext_value.p, o->entry->ext_value.len);
		case CKA_SUBJECT:
			SET(o->entry->issuer.p, o->entry->issuer.len);
		case CKA_X_ORIGIN:
			SET(o->entry->origin, strlen(o->entry->origin));
		default:
			return false;
		}
	case PG_OBJ_ROOT_LIST:
		if (type == CKA_CLASS)
			SET(&cls_roots, sizeof(CK_ULONG));
		return false;
	default:
		return false;
	}
}
