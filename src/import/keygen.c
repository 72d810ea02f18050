/*
 * Key pairs generated on a token (keys.h): the templates of the store's
 * key kinds, an ID checked to be free or derived from the new public key.
 */
#include "config.h"

#include "keys.h"

#include <string.h>

static void
keygen_templates(const pg_key_kind *kind, unsigned bits, const char *label,
                 const unsigned char *id, size_t id_len, pg_tmpl *pub, pg_tmpl *priv)
{
	static const unsigned char f4[] = { 0x01, 0x00, 0x01 };

	pg_key_pair_templates(pub, priv, kind, label, id, id_len);
	if (kind->key_type == CKK_RSA) {
		pg_tmpl_add_ulong(pub, CKA_MODULUS_BITS, bits);
		pg_tmpl_add(pub, CKA_PUBLIC_EXPONENT, f4, sizeof(f4));
	} else {
		pg_tmpl_add_ec_params(pub, kind->group);
	}
}

/* Sets the CKA_ID of both halves to the public key's identifier. */
static int
set_derived_id(pg_keytoken *kt, CK_OBJECT_HANDLE pub, CK_OBJECT_HANDLE priv)
{
	unsigned char id[20];
	CK_ATTRIBUTE attr = { CKA_ID, id, sizeof(id) };
	const char *why;
	EVP_PKEY *key = pg_keytoken_public_key(kt, pub, &why);
	CK_RV rv;

	if (key == NULL || !pg_key_id(key, id)) {
		EVP_PKEY_free(key);
		pg_message("the new public key cannot be read back (%s); the keys have no ID", why);
		return PG_EXIT_FAIL;
	}
	EVP_PKEY_free(key);
	rv = kt->f->C_SetAttributeValue(kt->session, pub, &attr, 1);
	if (rv == CKR_OK)
		rv = kt->f->C_SetAttributeValue(kt->session, priv, &attr, 1);
	if (rv != CKR_OK) {
		pg_keytoken_error("setting CKA_ID", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* Refuses an ID that an object on the token already has. */
static int
check_id_free(pg_keytoken *kt, const unsigned char *id, size_t id_len)
{
	CK_ATTRIBUTE attr = { CKA_ID, (void *)id, id_len };
	CK_OBJECT_HANDLE found;
	long n = pg_keytoken_find(kt, NULL, &attr, 1, &found, 1);

	if (n < 0)
		return PG_EXIT_FAIL;
	if (n > 0) {
		pg_message("an object with this ID is on the token already");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

void
pg_key_warn_kind(const pg_key_kind *kind)
{
	if (kind == NULL || kind->key_type == CKK_RSA || kind->key_type == CKK_EC)
		return;
	pg_message("warning: OpenSSL's PKCS#11 engine (libp11 0.4.12, Debian 12) cannot list "
	           "the private keys of a token that holds a key of type %s, so it finds none "
	           "of them, RSA and EC keys included; keep %s keys on a token of their own if "
	           "OpenSSL's engine is to use the others", kind->name, kind->name);
}

int
pg_key_generate(pg_keytoken *kt, const pg_key_kind *kind, unsigned bits, const char *label,
                const unsigned char *id, size_t id_len, CK_OBJECT_HANDLE *pub,
                CK_OBJECT_HANDLE *priv)
{
	CK_MECHANISM mech = { kind->keygen, NULL, 0 };
	pg_tmpl pub_t, priv_t;
	int status;
	CK_RV rv;

	if (id != NULL && (status = check_id_free(kt, id, id_len)) != PG_EXIT_OK)
		return status;
	pg_tmpl_init(&pub_t);
	pg_tmpl_init(&priv_t);
	keygen_templates(kind, bits, label, id, id_len, &pub_t, &priv_t);
	if (pub_t.failed || priv_t.failed) {
		rv = CKR_HOST_MEMORY;
	} else {
		rv = kt->f->C_GenerateKeyPair(kt->session, &mech, pub_t.items, pub_t.n, priv_t.items,
		                              priv_t.n, pub, priv);
	}
	pg_tmpl_clear(&pub_t);
	pg_tmpl_clear(&priv_t);
	if (rv != CKR_OK) {
		pg_keytoken_error("C_GenerateKeyPair", rv);
		return PG_EXIT_FAIL;
	}
	pg_key_warn_kind(kind);
	return id == NULL ? set_derived_id(kt, *pub, *priv) : PG_EXIT_OK;
}

