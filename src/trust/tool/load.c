/*
 * p11glue trust: loading the certificates, stapled extensions and CRLs
 * of every trust-policy module into one set (copies merged, "distrust
 * wins"), and the filters list and extract select with.
 */
#include "config.h"

#include "objects.h"
#include "trust-tool.h"

#include <p11glue/p11glue.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Loading from the modules
 */

static bool
get_bool(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_TYPE t)
{
	CK_BBOOL b = CK_FALSE;
	CK_ATTRIBUTE a = { t, &b, 1 };
	return f->C_GetAttributeValue(s, o, &a, 1) == CKR_OK && b == CK_TRUE;
}

/* A stapled extension of a token: the key it is for, its OID and value. */
typedef struct {
	unsigned char *spki, *oid, *value;
	size_t spki_len, oid_len, value_len;
} stapled_ext;

static void
stapled_clear(stapled_ext *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(x[i].spki);
		free(x[i].oid);
		free(x[i].value);
	}
	free(x);
}

/* Every stapled extension of the token, read once. */
static stapled_ext *
load_stapled(CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, size_t *n_out)
{
	CK_OBJECT_CLASS klass = CKO_X_CERTIFICATE_EXTENSION;
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_OBJECT_HANDLE *objs;
	size_t n, k = 0;
	stapled_ext *x;

	pg_objects_find(f, s, &t, 1, &objs, &n);
	x = calloc(n + 1, sizeof(*x));

	for (size_t i = 0; x && i < n; i++) {
		x[k].spki = pg_objects_get(f, s, objs[i], CKA_PUBLIC_KEY_INFO, &x[k].spki_len);
		x[k].oid = pg_objects_get(f, s, objs[i], CKA_OBJECT_ID, &x[k].oid_len);
		x[k].value = pg_objects_get(f, s, objs[i], CKA_VALUE, &x[k].value_len);
		k++;
	}
	free(objs);
	*n_out = k;
	return x;
}

/* The contents of an Extension's extnValue (RFC 5280 §4.1); a value
 * that is not one Extension (trailing bytes too) changes nothing. */
static bool
ext_value(const unsigned char *der, size_t len, pg_span *value)
{
	return pg_ext_parse(der, len, NULL, NULL, value);
}

/* The purposes in an Extension's extnValue (an extKeyUsage shape). */
static bool
ext_purposes(const unsigned char *der, size_t len, pg_oid_list *out)
{
	pg_span value;

	if (!ext_value(der, len, &value))
		return false;
	if (pg_oid_list_parse(&value, out) > 0)
		return true;
	pg_oid_list_clear(out);
	return false;
}

/* The stapled extKeyUsage, reject list and subjectKeyIdentifier of a
 * certificate's key (the first of each, as trust modules take them).
 * A stapled value that is not an Extension, or an extKeyUsage that is
 * no list of purposes, makes the certificate unreadable; a reject list
 * that is none, its reject list unreadable (p11-kit leaves such a
 * certificate out of everything, or out of OpenSSL's formats). */
static void
apply_stapled(pg_tcert *c, const stapled_ext *x, size_t n, const unsigned char *spki,
              size_t spki_len)
{
	static const unsigned char eku[] = { 0x06, 0x03, 0x55, 0x1d, 0x25 };
	static const unsigned char rej[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01,
	                                     0x99, 0x77, 0x06, 0x0a, 0x01 };
	static const unsigned char ski[] = { 0x06, 0x03, 0x55, 0x1d, 0x0e };
	bool have_eku = false, have_rej = false;
	pg_span v;

	for (size_t i = 0; i < n; i++) {
		if (x[i].spki == NULL || x[i].value == NULL || x[i].spki_len != spki_len ||
		    memcmp(x[i].spki, spki, spki_len) != 0)
			continue;
		if (!ext_value(x[i].value, x[i].value_len, &v)) {
			c->unreadable = true;
			continue;
		}
		if (x[i].oid == NULL)
			continue;
		if (!have_eku && x[i].oid_len == sizeof(eku) && memcmp(x[i].oid, eku, sizeof(eku)) == 0) {
			have_eku = true;
			c->restricted = ext_purposes(x[i].value, x[i].value_len, &c->purposes);
			c->unreadable |= !c->restricted;
		} else if (!have_rej && x[i].oid_len == sizeof(rej) &&
		           memcmp(x[i].oid, rej, sizeof(rej)) == 0) {
			have_rej = true;
			c->rejects_unreadable = !ext_purposes(x[i].value, x[i].value_len, &c->rejects);
		} else if (c->keyid == NULL && x[i].oid_len == sizeof(ski) &&
		           memcmp(x[i].oid, ski, sizeof(ski)) == 0 && v.len > 0 &&
		           (c->keyid = malloc(v.len)) != NULL) {
			/* OpenSSL's keyid is this value as it is (p11-kit
			 * does not take the identifier out of its OCTET
			 * STRING either). */
			memcpy(c->keyid, v.p, v.len);
			c->keyid_len = v.len;
		}
	}
	if (c->unreadable)
		pg_message("%s: a stapled extension cannot be read: left out", c->label);
	else if (c->rejects_unreadable)
		pg_message("%s: its stapled reject list cannot be read: left out of OpenSSL's "
		              "formats", c->label);
}

static uint64_t
hash_der(const unsigned char *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ len;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* Copies of one certificate across tokens and modules, found by hash in
 * an open-addressing table of indexes (+1; 0 is empty). */
typedef struct {
	size_t *slots;
	size_t size;
} cert_index;

static pg_tcert *
find_cert(pg_trust_set *set, cert_index *ix, uint64_t h, const unsigned char *der, size_t len)
{
	for (size_t i = h & (ix->size - 1); ix->slots[i]; i = (i + 1) & (ix->size - 1)) {
		pg_tcert *c = &set->certs[ix->slots[i] - 1];
		if (c->hash == h && c->der_len == len && memcmp(c->der, der, len) == 0)
			return c;
	}
	return NULL;
}

static bool
index_cert(pg_trust_set *set, cert_index *ix, size_t k)
{
	size_t i;

	/* Kept at most half full: grows (rehashing) before that. */
	if ((set->n_certs + 1) * 2 > ix->size) {
		size_t size = ix->size ? ix->size * 2 : 256;
		size_t *slots = calloc(size, sizeof(*slots));
		if (slots == NULL)
			return false;
		free(ix->slots);
		ix->slots = slots;
		ix->size = size;
		for (size_t j = 0; j < set->n_certs; j++)
			if (j != k)
				index_cert(set, ix, j);
	}
	for (i = set->certs[k].hash & (ix->size - 1); ix->slots[i]; i = (i + 1) & (ix->size - 1))
		;
	ix->slots[i] = k + 1;
	return true;
}

/* A distrusted certificate object without a value: its issuer and
 * serial number, once. */
static void
add_revoked(pg_trust_set *set, CK_FUNCTION_LIST *f, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE o)
{
	pg_trevoked r = { NULL, NULL, 0, 0, NULL }, *grown;
	size_t len = 0;

	r.issuer = pg_objects_get(f, s, o, CKA_ISSUER, &r.issuer_len);
	r.serial = pg_objects_get(f, s, o, CKA_SERIAL_NUMBER, &r.serial_len);
	for (size_t i = 0; r.issuer && r.serial && i < set->n_revoked; i++)
		if (set->revoked[i].issuer_len == r.issuer_len &&
		    set->revoked[i].serial_len == r.serial_len &&
		    memcmp(set->revoked[i].issuer, r.issuer, r.issuer_len) == 0 &&
		    memcmp(set->revoked[i].serial, r.serial, r.serial_len) == 0)
			goto out;
	if (r.issuer == NULL || r.serial == NULL || r.issuer_len == 0 || r.serial_len == 0)
		goto out;
	grown = realloc(set->revoked, (set->n_revoked + 1) * sizeof(*grown));
	if (grown == NULL)
		goto out;
	set->revoked = grown;
	r.label = (char *)pg_objects_get(f, s, o, CKA_LABEL, &len);
	if (r.label == NULL && (r.label = strdup("")) == NULL)
		goto out;
	set->revoked[set->n_revoked++] = r;
	return;
out:
	free(r.issuer);
	free(r.serial);
}

static void
load_token(pg_trust_set *set, cert_index *ix, CK_FUNCTION_LIST *f, CK_SLOT_ID slot)
{
	uint32_t bit = set->n_locations >= 1 && set->n_locations <= 32
	               ? (uint32_t)1 << (set->n_locations - 1) : 0;
	CK_SESSION_HANDLE s;
	CK_OBJECT_CLASS klass = CKO_CERTIFICATE, crl_class = CKO_NSS_CRL;
	CK_ATTRIBUTE t = { CKA_CLASS, &klass, sizeof(klass) };
	CK_ATTRIBUTE tc = { CKA_CLASS, &crl_class, sizeof(crl_class) };
	CK_OBJECT_HANDLE *objs;
	stapled_ext *stapled;
	size_t n, n_stapled = 0;

	if (f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
		return;
	stapled = load_stapled(f, s, &n_stapled);
	pg_objects_find(f, s, &t, 1, &objs, &n);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0, l2 = 0;
		unsigned char *der = pg_objects_get(f, s, objs[i], CKA_VALUE, &len), *spki;
		bool trusted = get_bool(f, s, objs[i], CKA_TRUSTED);
		bool distrusted = get_bool(f, s, objs[i], CKA_X_DISTRUSTED);
		uint64_t h;
		pg_tcert *c;
		pg_cert parsed;
		if (der == NULL || len == 0) {
			free(der);
			if (distrusted)
				add_revoked(set, f, s, objs[i]);
			continue;
		}
		h = hash_der(der, len);
		if (ix->size && (c = find_cert(set, ix, h, der, len)) != NULL) {
			/* Another copy: distrust wins; otherwise the first copy's
			 * trust stands, as with p11-kit. */
			free(der);
			c->distrusted |= distrusted;
			c->trusted = c->trusted && !c->distrusted;
			c->trusted_in |= trusted && !distrusted ? bit : 0;
			c->distrusted_in |= distrusted ? bit : 0;
			continue;
		}
		c = realloc(set->certs, (set->n_certs + 1) * sizeof(*c));
		if (c == NULL) {
			free(der);
			break;
		}
		set->certs = c;
		c = &set->certs[set->n_certs];
		memset(c, 0, sizeof(*c));
		c->der = der;
		c->der_len = len;
		c->hash = h;
		if (!index_cert(set, ix, set->n_certs)) {
			free(der);
			break;
		}
		set->n_certs++;
		c->label = (char *)pg_objects_get(f, s, objs[i], CKA_LABEL, &l2);
		if (c->label == NULL)
			c->label = strdup("");
		c->id = pg_objects_get(f, s, objs[i], CKA_ID, &c->id_len);
		{
			size_t cl = 0;
			unsigned char *cat = pg_objects_get(f, s, objs[i], CKA_CERTIFICATE_CATEGORY, &cl);
			if (cat && cl == sizeof(CK_ULONG))
				memcpy(&c->category, cat, sizeof(CK_ULONG));
			free(cat);
		}
		c->distrusted = distrusted;
		c->trusted = trusted && !distrusted;
		c->trusted_in = c->trusted ? bit : 0;
		c->distrusted_in = distrusted ? bit : 0;
		spki = pg_objects_get(f, s, objs[i], CKA_PUBLIC_KEY_INFO, &l2);
		if (spki)
			apply_stapled(c, stapled, n_stapled, spki, l2);
		free(spki);
		/* Without a stapled one, the certificate's own extKeyUsage
		 * limits the purposes it is listed and extracted for. */
		if (pg_cert_parse(der, len, &parsed) && parsed.eku.len) {
			c->has_own_eku = pg_oid_list_parse(&parsed.eku, &c->own_eku) > 0;
			if (!c->has_own_eku)
				pg_oid_list_clear(&c->own_eku);
		}
	}
	free(objs);
	stapled_clear(stapled, n_stapled);
	pg_objects_find(f, s, &tc, 1, &objs, &n);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		unsigned char *der = pg_objects_get(f, s, objs[i], CKA_VALUE, &len);
		pg_tcrl *grown;
		if (der == NULL || (grown = realloc(set->crls, (set->n_crls + 1) * sizeof(*grown))) == NULL) {
			free(der);
			continue;
		}
		set->crls = grown;
		set->crls[set->n_crls++] = (pg_tcrl){ der, len };
	}
	free(objs);
	f->C_CloseSession(s);
}

static p11glue_registry *trust_registry;

int
pg_trust_each_token(void (*fn)(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, bool policy, void *data),
                    void *data)
{
	size_t used = 0;
	int rv;

	p11glue_registry_free(trust_registry);
	rv = p11glue_registry_load(P11GLUE_REGISTRY_UNMANAGED, &trust_registry);
	for (int pass = 0; pass < 2 && used == 0; pass++) {
		if (pass == 1) {
			/* No trust-policy module registered: our module (the build
			 * tree's when this program runs from one), its defaults. */
			char *built = pg_build_tree_file("trust/p11glue-trust.so");
			p11glue_registry_free(trust_registry);
			trust_registry = NULL;
			rv = p11glue_registry_load_file(built ? built : P11GLUE_MODULE_DIR "/p11glue-trust.so",
			                                "p11glue-trust", NULL,
			                                P11GLUE_REGISTRY_UNMANAGED, &trust_registry);
			free(built);
		}
		if (rv != P11GLUE_OK)
			continue;
		for (size_t m = 0; m < p11glue_registry_count(trust_registry); m++) {
			p11glue_module *mod = p11glue_registry_module(trust_registry, m);
			CK_FUNCTION_LIST *f = p11glue_module_functions(mod);
			CK_SLOT_ID slots[64];
			CK_ULONG n = 64;
			if (f == NULL || (pass == 0 && !p11glue_module_is_trust_policy(mod)))
				continue;
			if (f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
				continue;
			used++;
			for (CK_ULONG i = 0; i < n; i++)
				fn(f, slots[i], pass == 0, data);
		}
	}
	if (used == 0) {
		pg_message("no trust module could be loaded");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* The first writable token of a trust module: (function list, slot). */
bool
pg_trust_writable_token(CK_FUNCTION_LIST **fp, CK_SLOT_ID *slot)
{
	return pg_trust_writable_token_at(NULL, fp, slot);
}

bool
pg_trust_writable_token_at(const char *path, CK_FUNCTION_LIST **fp, CK_SLOT_ID *slot)
{
	char location[65];

	for (size_t m = 0; m < p11glue_registry_count(trust_registry); m++) {
		p11glue_module *mod = p11glue_registry_module(trust_registry, m);
		CK_FUNCTION_LIST *f = p11glue_module_functions(mod);
		CK_SLOT_ID slots[64];
		CK_ULONG n = 64;
		if (f == NULL || !p11glue_module_is_trust_policy(mod) ||
		    f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
			continue;
		for (CK_ULONG i = 0; i < n; i++) {
			CK_TOKEN_INFO ti;
			if (path != NULL) {
				pg_trust_token_location(f, slots[i], location);
				if (!pg_trust_location_is(location, path))
					continue;
			}
			if (f->C_GetTokenInfo(slots[i], &ti) == CKR_OK &&
			    !(ti.flags & CKF_WRITE_PROTECTED)) {
				*fp = f;
				*slot = slots[i];
				return true;
			}
		}
	}
	return false;
}

void
pg_trust_release(void)
{
	p11glue_registry_free(trust_registry);
	trust_registry = NULL;
}

typedef struct {
	pg_trust_set *set;
	cert_index ix;
	bool (*keep)(const char *location, void *data);
	void *data;
} load_job;

void
pg_trust_token_location(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, char out[65])
{
	CK_SLOT_INFO info;
	size_t len = 0;

	if (f->C_GetSlotInfo(slot, &info) == CKR_OK) {
		memcpy(out, info.slotDescription, sizeof(info.slotDescription));
		for (len = sizeof(info.slotDescription); len > 0 && out[len - 1] == ' '; len--)
			;
	}
	out[len] = 0;
}

bool
pg_trust_location_is(const char *location, const char *path)
{
	size_t len = strlen(path);

	/* A slot description holds 64 bytes: a longer path is cut there. */
	if (len > 64)
		len = 64;
	return path[0] != 0 && strlen(location) == len && memcmp(location, path, len) == 0;
}

/* Remembers the module of a token that is read, for `trust check`. */
static void
add_module(pg_trust_set *set, CK_FUNCTION_LIST *f, CK_SLOT_ID slot, bool policy)
{
	pg_tmodule *m = set->n_modules ? &set->modules[set->n_modules - 1] : NULL;
	CK_SLOT_ID *slots;
	CK_INFO info;
	size_t len;

	if (m == NULL || m->funcs != f) {
		m = realloc(set->modules, (set->n_modules + 1) * sizeof(*m));
		if (m == NULL)
			return;
		set->modules = m;
		m = &set->modules[set->n_modules++];
		memset(m, 0, sizeof(*m));
		m->funcs = f;
		m->trust_policy = policy;
		if (f->C_GetInfo(&info) == CKR_OK) {
			memcpy(m->manufacturer, info.manufacturerID, sizeof(info.manufacturerID));
			for (len = sizeof(info.manufacturerID);
			     len > 0 && m->manufacturer[len - 1] == ' '; len--)
				;
			m->manufacturer[len] = 0;
		}
	}
	if ((slots = realloc(m->slots, (m->n_slots + 1) * sizeof(*slots))) == NULL)
		return;
	m->slots = slots;
	m->slots[m->n_slots++] = slot;
}

static void
load_one(CK_FUNCTION_LIST *f, CK_SLOT_ID slot, bool policy, void *data)
{
	load_job *job = data;
	pg_trust_set *set = job->set;
	char location[65], **grown;

	pg_trust_token_location(f, slot, location);
	if (job->keep && !job->keep(location, job->data))
		return;
	grown = realloc(set->locations, (set->n_locations + 1) * sizeof(*grown));
	if (grown == NULL || (grown[set->n_locations] = strdup(location)) == NULL) {
		if (grown)
			set->locations = grown;
		return;
	}
	set->locations = grown;
	set->n_locations++;
	add_module(set, f, slot, policy);
	load_token(set, &job->ix, f, slot);
}

int
pg_trust_load_where(pg_trust_set *set, bool (*keep)(const char *location, void *data),
                    void *data)
{
	load_job job = { set, { NULL, 0 }, keep, data };
	int rv;

	memset(set, 0, sizeof(*set));
	rv = pg_trust_each_token(load_one, &job);
	free(job.ix.slots);
	return rv;
}

int
pg_trust_load(pg_trust_set *set)
{
	return pg_trust_load_where(set, NULL, NULL);
}

void
pg_trust_clear(pg_trust_set *set)
{
	for (size_t i = 0; i < set->n_certs; i++) {
		pg_tcert *c = &set->certs[i];
		free(c->der);
		free(c->label);
		free(c->id);
		free(c->keyid);
		pg_oid_list_clear(&c->purposes);
		pg_oid_list_clear(&c->rejects);
		pg_oid_list_clear(&c->own_eku);
	}
	free(set->certs);
	for (size_t i = 0; i < set->n_modules; i++)
		free(set->modules[i].slots);
	free(set->modules);
	for (size_t i = 0; i < set->n_crls; i++)
		free(set->crls[i].der);
	free(set->crls);
	for (size_t i = 0; i < set->n_locations; i++)
		free(set->locations[i]);
	free(set->locations);
	for (size_t i = 0; i < set->n_revoked; i++) {
		free(set->revoked[i].issuer);
		free(set->revoked[i].serial);
		free(set->revoked[i].label);
	}
	free(set->revoked);
	memset(set, 0, sizeof(*set));
	pg_trust_release();
}

bool
pg_trust_selected(const pg_tcert *c, int filter, const p11glue_uri *uri, const char *purpose)
{
	const pg_oid_list *eku;
	bool ok;

	if (c->unreadable)
		return false;
	switch (filter) {
	case PG_F_ANCHORS:
		/* Trusted authorities: a trusted certificate of another
		 * category is not a CA anchor (as with p11-kit). */
		ok = c->trusted && !c->distrusted && c->category == 2;
		break;
	case PG_F_BLOCKLIST:
		ok = c->distrusted;
		break;
	case PG_F_POLICY:
		ok = c->trusted || c->distrusted;
		break;
	case PG_F_URI: {
		CK_OBJECT_CLASS klass = CKO_CERTIFICATE;
		CK_ATTRIBUTE a[] = { { CKA_CLASS, &klass, sizeof(klass) },
		                     { CKA_LABEL, c->label, strlen(c->label) },
		                     { CKA_ID, c->id, c->id ? c->id_len : CK_UNAVAILABLE_INFORMATION } };
		ok = p11glue_uri_match_attributes(uri, a, 3);
		break;
	}
	default:
		ok = true;
	}
	if (!ok || purpose == NULL)
		return ok;
	/* The purposes of its extKeyUsage (stapled, else its own); none
	 * means every purpose, as does anyExtendedKeyUsage. */
	eku = c->restricted ? &c->purposes : c->has_own_eku ? &c->own_eku : NULL;
	if (eku && !pg_oid_list_has(eku, purpose) && !pg_oid_list_has(eku, "2.5.29.37.0"))
		return false;
	/* A purpose its trust rejects is no use of it (p11-kit's commands
	 * list and extract it anyway). */
	return !(c->trusted && pg_oid_list_has(&c->rejects, purpose));
}

const char *
pg_trust_purpose_oid(const char *name)
{
	if (strcmp(name, "server-auth") == 0)
		return "1.3.6.1.5.5.7.3.1";
	if (strcmp(name, "client-auth") == 0)
		return "1.3.6.1.5.5.7.3.2";
	if (strcmp(name, "email") == 0 || strcmp(name, "email-protection") == 0)
		return "1.3.6.1.5.5.7.3.4";
	if (strcmp(name, "code-signing") == 0)
		return "1.3.6.1.5.5.7.3.3";
	if (strspn(name, "0123456789.") == strlen(name) && strchr(name, '.'))
		return name;
	return NULL;
}
