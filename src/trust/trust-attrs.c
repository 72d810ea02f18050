/*
 * The attributes of each kind of object, computed from its entry. Values
 * point into the entry (the DER read from the file, digests computed on
 * first use) or at constants; nothing is copied.
 *
 * Objects read from the persistence format keep the attributes their
 * file gives; what a file leaves out gets the values p11-kit's trust
 * module fills in for that class, so both modules show the same object.
 *
 * This is the hot path of an enumeration (one call per attribute of
 * every object, most asking for attributes the object lacks), so the
 * attribute type is first turned into a small dense code and each kind
 * of object answers with one jump table.
 */
#include "trust-attrs.h"


#include <string.h>

/* Codes of the standard types below 0x180. */
const unsigned char pg_attr_std_codes[PG_ATTR_STD_CODES] = {
	[CKA_CLASS] = PG_A_CLASS,
	[CKA_TOKEN] = PG_A_TOKEN,
	[CKA_PRIVATE] = PG_A_PRIVATE,
	[CKA_LABEL] = PG_A_LABEL,
	[CKA_APPLICATION] = PG_A_APPLICATION,
	[CKA_VALUE] = PG_A_VALUE,
	[CKA_OBJECT_ID] = PG_A_OBJECT_ID,
	[CKA_CERTIFICATE_TYPE] = PG_A_CERT_TYPE,
	[CKA_ISSUER] = PG_A_ISSUER,
	[CKA_SERIAL_NUMBER] = PG_A_SERIAL,
	[CKA_TRUSTED] = PG_A_TRUSTED,
	[CKA_CERTIFICATE_CATEGORY] = PG_A_CATEGORY,
	[CKA_JAVA_MIDP_SECURITY_DOMAIN] = PG_A_JAVA_MIDP,
	[CKA_URL] = PG_A_URL,
	[CKA_HASH_OF_SUBJECT_PUBLIC_KEY] = PG_A_HASH_SUBJECT,
	[CKA_HASH_OF_ISSUER_PUBLIC_KEY] = PG_A_HASH_ISSUER,
	[CKA_CHECK_VALUE] = PG_A_CHECK_VALUE,
	[CKA_SUBJECT] = PG_A_SUBJECT,
	[CKA_ID] = PG_A_ID,
	[CKA_START_DATE] = PG_A_START,
	[CKA_END_DATE] = PG_A_END,
	[CKA_PUBLIC_KEY_INFO] = PG_A_SPKI,
	[CKA_MODIFIABLE] = PG_A_MODIFIABLE,
};

#define SLOT(t, c) [PG_ATTR_HASH(t)] = { (uint32_t)(t), (c) }
const pg_attr_slot pg_attr_vendor[32] = {
	SLOT(CKA_TRUST_DIGITAL_SIGNATURE, PG_A_TRUST_FIRST),
	SLOT(CKA_TRUST_NON_REPUDIATION, PG_A_TRUST_FIRST + 1),
	SLOT(CKA_TRUST_KEY_ENCIPHERMENT, PG_A_TRUST_FIRST + 2),
	SLOT(CKA_TRUST_DATA_ENCIPHERMENT, PG_A_TRUST_FIRST + 3),
	SLOT(CKA_TRUST_KEY_AGREEMENT, PG_A_TRUST_FIRST + 4),
	SLOT(CKA_TRUST_KEY_CERT_SIGN, PG_A_TRUST_FIRST + 5),
	SLOT(CKA_TRUST_CRL_SIGN, PG_A_TRUST_FIRST + 6),
	SLOT(CKA_TRUST_SERVER_AUTH, PG_A_TRUST_FIRST + 7),
	SLOT(CKA_TRUST_CLIENT_AUTH, PG_A_TRUST_FIRST + 8),
	SLOT(CKA_TRUST_CODE_SIGNING, PG_A_TRUST_FIRST + 9),
	SLOT(CKA_TRUST_EMAIL_PROTECTION, PG_A_TRUST_FIRST + 10),
	SLOT(CKA_TRUST_IPSEC_END_SYSTEM, PG_A_TRUST_FIRST + 11),
	SLOT(CKA_TRUST_IPSEC_TUNNEL, PG_A_TRUST_FIRST + 12),
	SLOT(CKA_TRUST_IPSEC_USER, PG_A_TRUST_FIRST + 13),
	SLOT(CKA_TRUST_TIME_STAMPING, PG_A_TRUST_FIRST + 14),
	SLOT(CKA_TRUST_STEP_UP_APPROVED, PG_A_STEP_UP),
	SLOT(CKA_CERT_SHA1_HASH, PG_A_SHA1),
	SLOT(CKA_CERT_MD5_HASH, PG_A_MD5),
	SLOT(CKA_X_ASSERTION_TYPE, PG_A_ASSERTION_TYPE),
	SLOT(CKA_X_CERTIFICATE_VALUE, PG_A_CERT_VALUE),
	SLOT(CKA_X_PURPOSE, PG_A_PURPOSE),
	SLOT(CKA_X_DISTRUSTED, PG_A_DISTRUSTED),
	SLOT(CKA_X_GENERATED, PG_A_GENERATED),
	SLOT(CKA_X_ORIGIN, PG_A_ORIGIN),
};
#undef SLOT

static const CK_BBOOL ck_true = CK_TRUE, ck_false = CK_FALSE;
static const CK_ULONG zero = 0, x509 = CKC_X_509;
static const CK_OBJECT_CLASS cls_cert = CKO_CERTIFICATE, cls_nss = CKO_NSS_TRUST,
	cls_assert = CKO_X_TRUST_ASSERTION, cls_ext = CKO_X_CERTIFICATE_EXTENSION,
	cls_roots = CKO_NSS_BUILTIN_ROOT_LIST, cls_crl = CKO_NSS_CRL;
static const CK_ULONG t_anchored = CKT_X_ANCHORED_CERTIFICATE,
	t_distrusted = CKT_X_DISTRUSTED_CERTIFICATE, not_trusted = CKT_NSS_NOT_TRUSTED;
static const char roots_label[] = "Trust Anchor Roots";

#define VAL(v, l) return (pg_value){ (v), (CK_ULONG)(l) }
#define NONE return (pg_value){ NULL, CK_UNAVAILABLE_INFORMATION }
#define TRUE_ VAL(&ck_true, 1)
#define FALSE_ VAL(&ck_false, 1)
#define ULONG(p) VAL((p), sizeof(CK_ULONG))
#define EMPTY VAL("", 0)
#define SPAN(s) VAL((s).p, (s).len)

/* An attribute given by the object's file. */
static pg_value
stored(const pg_entry *e, CK_ATTRIBUTE_TYPE type)
{
	const pg_attr *a = pg_entry_attr(e, type);

	if (a == NULL)
		NONE;
	VAL(a->value, a->len);
}

static bool
found(pg_value v)
{
	return v.len != CK_UNAVAILABLE_INFORMATION;
}

/*
 * What p11-kit fills in for a certificate object without a value (a
 * distrusted issuer and serial, or a distrusted key): empty strings and
 * zeros.
 */
static pg_value
empty_cert(unsigned code)
{
	switch (code) {
	case PG_A_CLASS:
		ULONG(&cls_cert);
	case PG_A_CERT_TYPE:
		ULONG(&x509);
	case PG_A_VALUE:
	case PG_A_ISSUER:
	case PG_A_SERIAL:
	case PG_A_URL:
	case PG_A_HASH_SUBJECT:
	case PG_A_HASH_ISSUER:
	case PG_A_ID:
	case PG_A_START:
	case PG_A_END:
		EMPTY;
	case PG_A_TRUSTED:
	case PG_A_DISTRUSTED:
		FALSE_;
	case PG_A_CATEGORY:
	case PG_A_JAVA_MIDP:
		ULONG(&zero);
	default:
		NONE;
	}
}

static pg_value
cert_value(pg_entry *e, unsigned code, CK_ATTRIBUTE_TYPE type)
{
	const pg_cert *c = &e->cert;

	switch (code) {
	case PG_A_CLASS:
		ULONG(&cls_cert);
	case PG_A_VALUE:
		SPAN(c->der);
	case PG_A_CERT_TYPE:
	case PG_A_JAVA_MIDP:
		ULONG(&zero);
	case PG_A_ISSUER:
		SPAN(c->issuer);
	case PG_A_SERIAL:
		SPAN(c->serial);
	case PG_A_SUBJECT:
		SPAN(c->subject);
	case PG_A_TRUSTED:
		VAL(e->trusted ? &ck_true : &ck_false, 1);
	case PG_A_DISTRUSTED:
		VAL(e->distrusted ? &ck_true : &ck_false, 1);
	case PG_A_CATEGORY:
		ULONG(&e->category);
	case PG_A_URL:
	case PG_A_HASH_ISSUER:
		EMPTY;
	case PG_A_HASH_SUBJECT:
		VAL(pg_entry_spki_sha1(e), PG_SHA1_LEN);
	case PG_A_CHECK_VALUE:
		VAL(pg_entry_sha1(e), 3);
	case PG_A_ID:
		return pg_entry_cert_id(e);
	case PG_A_START:
		if (!e->has_dates)
			NONE;
		VAL(e->start, 8);
	case PG_A_END:
		if (!e->has_dates)
			NONE;
		VAL(e->end, 8);
	case PG_A_SPKI:
		SPAN(c->spki);
	case PG_A_GENERATED:
		FALSE_;
	case PG_A_ORIGIN:
		VAL(e->origin, strlen(e->origin));
	case PG_A_OTHER:
		/* Other attributes its file gives (NSS policy flags, ...). */
		return e->n_attrs ? stored(e, type) : (pg_value){ NULL, CK_UNAVAILABLE_INFORMATION };
	default:
		NONE;
	}
}

/* The CKA_ID of a revocation: the file's (p11-kit fills in ""), none for
 * one that comes from a CRL. */
static pg_value
revoked_id(const pg_entry *e)
{
	pg_value v = stored(e, CKA_ID);

	if (found(v) || e->n_attrs == 0)
		return v;
	EMPTY;
}

static pg_value
nss_value(pg_entry *e, bool revoked, unsigned code)
{
	if (code >= PG_A_TRUST_FIRST && code <= PG_A_TRUST_LAST)
		ULONG(revoked ? &not_trusted : &e->nss[code - PG_A_TRUST_FIRST]);
	switch (code) {
	case PG_A_CLASS:
		ULONG(&cls_nss);
	case PG_A_ISSUER:
		SPAN(e->issuer);
	case PG_A_SERIAL:
		SPAN(e->serial);
	case PG_A_STEP_UP:
		FALSE_;
	case PG_A_GENERATED:
		TRUE_;
	case PG_A_ID:
		/* p11-kit copies a revocation's CKA_ID into its NSS trust object
		 * only when it is not empty. */
		if (revoked) {
			pg_value v = stored(e, CKA_ID);
			if (v.len == 0)
				NONE;
			return v;
		}
		return pg_entry_cert_id(e);
	default:
		break;
	}
	/* A revocation has no certificate: no subject or hashes, so NSS
	 * matches it by issuer and serial number. */
	if (revoked)
		NONE;
	switch (code) {
	case PG_A_SUBJECT:
		SPAN(e->cert.subject);
	case PG_A_SHA1:
		VAL(pg_entry_sha1(e), PG_SHA1_LEN);
	case PG_A_MD5:
		VAL(pg_entry_md5(e), PG_MD5_LEN);
	default:
		NONE;
	}
}

static const char *
purpose(const pg_object *o)
{
	const pg_entry *e = o->entry;
	const pg_oid_list *l = o->list == PG_LIST_PURPOSES ? e->purposes :
	                       o->list == PG_LIST_REJECTS ? e->rejects : NULL;

	if (o->list == PG_LIST_STD)
		return o->purpose < PG_N_PURPOSES ? pg_std_purposes[o->purpose] : "";
	return l && o->purpose < l->n ? l->oids[o->purpose] : "";
}

static pg_value
assert_value(const pg_object *o, unsigned code)
{
	pg_entry *e = o->entry;
	bool anchored = o->kind == PG_OBJ_ANCHORED;
	const char *p;

	switch (code) {
	case PG_A_CLASS:
		ULONG(&cls_assert);
	case PG_A_ASSERTION_TYPE:
		ULONG(anchored ? &t_anchored : &t_distrusted);
	case PG_A_PURPOSE:
		p = purpose(o);
		VAL(p, strlen(p));
	case PG_A_GENERATED:
		TRUE_;
	case PG_A_ID:
		if (o->kind == PG_OBJ_REV_ASSERT)
			return revoked_id(e);
		return pg_entry_cert_id(e);
	case PG_A_CERT_VALUE:
		if (!anchored)
			NONE;
		SPAN(e->cert.der);
	case PG_A_ISSUER:
		if (anchored)
			NONE;
		SPAN(e->issuer);
	case PG_A_SERIAL:
		if (anchored)
			NONE;
		SPAN(e->serial);
	default:
		NONE;
	}
}

static pg_value
ext_value(pg_entry *e, unsigned code)
{
	switch (code) {
	case PG_A_CLASS:
		ULONG(&cls_ext);
	case PG_A_VALUE:
		VAL(e->ext_value.p, e->ext_value.len);
	case PG_A_OBJECT_ID:
		VAL(e->ext_oid.p, e->ext_oid.len);
	case PG_A_ID:
		VAL(pg_entry_spki_sha1(e), PG_SHA1_LEN);
	case PG_A_SPKI:
		VAL(e->ext_spki.p, e->ext_spki.len);
	case PG_A_GENERATED:
		FALSE_;
	case PG_A_ORIGIN:
		VAL(e->origin, strlen(e->origin));
	default:
		NONE;
	}
}

static pg_value
rev_cert_value(const pg_entry *e, unsigned code)
{
	switch (code) {
	case PG_A_ISSUER:
		SPAN(e->issuer);
	case PG_A_SERIAL:
		SPAN(e->serial);
	case PG_A_DISTRUSTED:
		TRUE_;
	case PG_A_GENERATED:
		/* From a CRL: made here; from a file: as stored. */
		VAL(e->n_attrs ? &ck_false : &ck_true, 1);
	case PG_A_ORIGIN:
		VAL(e->origin, strlen(e->origin));
	default:
		return empty_cert(code);
	}
}

/* Any other object of a persistence file, with p11-kit's defaults. */
static pg_value
stored_value(const pg_entry *e, unsigned code)
{
	switch (code) {
	case PG_A_CLASS:
		ULONG(&e->klass);
	case PG_A_GENERATED:
		FALSE_;
	case PG_A_ORIGIN:
		VAL(e->origin, strlen(e->origin));
	default:
		break;
	}
	if (e->klass == CKO_CERTIFICATE)
		return empty_cert(code);
	if (e->klass == CKO_DATA && (code == PG_A_VALUE || code == PG_A_APPLICATION || code == PG_A_OBJECT_ID))
		EMPTY;
	NONE;
}

#define BIT(c) ((uint64_t)1 << (c))
#define COMMON (BIT(PG_A_TOKEN) | BIT(PG_A_PRIVATE) | BIT(PG_A_MODIFIABLE) | BIT(PG_A_LABEL) | BIT(PG_A_CLASS))
#define EMPTY_CERT                                                                          \
	(BIT(PG_A_CERT_TYPE) | BIT(PG_A_VALUE) | BIT(PG_A_ISSUER) | BIT(PG_A_SERIAL) | BIT(PG_A_URL) |        \
	 BIT(PG_A_HASH_SUBJECT) | BIT(PG_A_HASH_ISSUER) | BIT(PG_A_ID) | BIT(PG_A_START) | BIT(PG_A_END) |    \
	 BIT(PG_A_TRUSTED) | BIT(PG_A_DISTRUSTED) | BIT(PG_A_CATEGORY) | BIT(PG_A_JAVA_MIDP))
#define TRUST_CODES (((BIT(PG_A_TRUST_LAST) << 1) - 1) & ~(BIT(PG_A_TRUST_FIRST) - 1))

const uint64_t pg_attr_kind_codes[PG_OBJ_STORED + 1] = {
	[PG_OBJ_CERT] = COMMON | EMPTY_CERT | BIT(PG_A_SUBJECT) | BIT(PG_A_CHECK_VALUE) | BIT(PG_A_SPKI) |
	                BIT(PG_A_GENERATED) | BIT(PG_A_ORIGIN),
	[PG_OBJ_NSS_TRUST] = COMMON | TRUST_CODES | BIT(PG_A_ISSUER) | BIT(PG_A_SERIAL) | BIT(PG_A_STEP_UP) |
	                     BIT(PG_A_GENERATED) | BIT(PG_A_ID) | BIT(PG_A_SUBJECT) | BIT(PG_A_SHA1) | BIT(PG_A_MD5),
	[PG_OBJ_REV_NSS] = COMMON | TRUST_CODES | BIT(PG_A_ISSUER) | BIT(PG_A_SERIAL) | BIT(PG_A_STEP_UP) |
	                   BIT(PG_A_GENERATED) | BIT(PG_A_ID),
	[PG_OBJ_ANCHORED] = COMMON | BIT(PG_A_ASSERTION_TYPE) | BIT(PG_A_PURPOSE) | BIT(PG_A_GENERATED) |
	                    BIT(PG_A_ID) | BIT(PG_A_CERT_VALUE),
	[PG_OBJ_DISTRUSTED] = COMMON | BIT(PG_A_ASSERTION_TYPE) | BIT(PG_A_PURPOSE) | BIT(PG_A_GENERATED) |
	                      BIT(PG_A_ID) | BIT(PG_A_ISSUER) | BIT(PG_A_SERIAL),
	[PG_OBJ_REV_ASSERT] = COMMON | BIT(PG_A_ASSERTION_TYPE) | BIT(PG_A_PURPOSE) | BIT(PG_A_GENERATED) |
	                      BIT(PG_A_ID) | BIT(PG_A_ISSUER) | BIT(PG_A_SERIAL),
	[PG_OBJ_EXT] = COMMON | BIT(PG_A_VALUE) | BIT(PG_A_OBJECT_ID) | BIT(PG_A_ID) | BIT(PG_A_SPKI) |
	               BIT(PG_A_GENERATED) | BIT(PG_A_ORIGIN),
	[PG_OBJ_ROOT_LIST] = COMMON,
	[PG_OBJ_REV_CERT] = COMMON | EMPTY_CERT | BIT(PG_A_GENERATED) | BIT(PG_A_ORIGIN),
	[PG_OBJ_CRL] = COMMON | BIT(PG_A_VALUE) | BIT(PG_A_SUBJECT) | BIT(PG_A_ORIGIN),
	[PG_OBJ_STORED] = COMMON | EMPTY_CERT | BIT(PG_A_APPLICATION) | BIT(PG_A_OBJECT_ID) |
	                  BIT(PG_A_GENERATED) | BIT(PG_A_ORIGIN),
};

pg_value
pg_object_value(pg_object *o, CK_ATTRIBUTE_TYPE type)
{
	return pg_object_value_code(o, pg_attr_code(type), type);
}

pg_value
pg_object_value_code(pg_object *o, unsigned code, CK_ATTRIBUTE_TYPE type)
{
	pg_entry *e = o->entry;
	pg_value v;

	switch (code) {
	case PG_A_TOKEN:
		TRUE_;
	case PG_A_PRIVATE:
	case PG_A_MODIFIABLE:
		/* An object of a persistence file may say otherwise (below). */
		if (o->kind != PG_OBJ_STORED && o->kind != PG_OBJ_EXT && o->kind != PG_OBJ_REV_CERT)
			FALSE_;
		break;
	case PG_A_LABEL:
		if (e == NULL)
			VAL(roots_label, sizeof(roots_label) - 1);
		SPAN(e->label);
	default:
		break;
	}
	switch (o->kind) {
	case PG_OBJ_CERT:
		return cert_value(e, code, type);
	case PG_OBJ_NSS_TRUST:
		return nss_value(e, false, code);
	case PG_OBJ_REV_NSS:
		return nss_value(e, true, code);
	case PG_OBJ_ANCHORED:
	case PG_OBJ_DISTRUSTED:
	case PG_OBJ_REV_ASSERT:
		return assert_value(o, code);
	case PG_OBJ_ROOT_LIST:
		if (code == PG_A_CLASS)
			ULONG(&cls_roots);
		NONE;
	case PG_OBJ_CRL:
		switch (code) {
		case PG_A_CLASS:
			ULONG(&cls_crl);
		case PG_A_VALUE:
			VAL(e->ext_value.p, e->ext_value.len);
		case PG_A_SUBJECT:
			SPAN(e->issuer);
		case PG_A_ORIGIN:
			VAL(e->origin, strlen(e->origin));
		default:
			NONE;
		}
	default:
		break;
	}
	/* Objects of a persistence file: what their file gives first. */
	v = stored(e, type);
	if (found(v))
		return v;
	if (code == PG_A_PRIVATE || code == PG_A_MODIFIABLE)
		FALSE_;
	switch (o->kind) {
	case PG_OBJ_EXT:
		return ext_value(e, code);
	case PG_OBJ_REV_CERT:
		return rev_cert_value(e, code);
	case PG_OBJ_STORED:
		return stored_value(e, code);
	default:
		NONE;
	}
}
