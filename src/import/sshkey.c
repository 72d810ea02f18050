/*
 * OpenSSH public key blobs and lines (import.h): the wire encodings of
 * RFC 4251 §5 (string, mpint), key formats of RFC 4253 §6.6 (ssh-rsa),
 * RFC 5656 §3.1 (ecdsa-sha2-*) and RFC 8709 §4 (ssh-ed25519).
 */
#include "config.h"

#include "import.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>

#include <stdlib.h>
#include <string.h>

void
pg_ssh_put_string(pg_buf *out, const void *data, size_t len)
{
	uint8_t be[4];

	if (len > UINT32_MAX) {
		out->failed = true;
		return;
	}
	be[0] = (uint8_t)(len >> 24);
	be[1] = (uint8_t)(len >> 16);
	be[2] = (uint8_t)(len >> 8);
	be[3] = (uint8_t)len;
	pg_buf_add(out, be, 4);
	pg_buf_add(out, data, len);
}

void
pg_ssh_put_mpint(pg_buf *out, const uint8_t *be, size_t len)
{
	uint8_t zero = 0;
	size_t pad;

	/* Minimal two's complement: no leading zeros, one more when the
	 * high bit is set (values here are never negative). */
	while (len > 0 && be[0] == 0) {
		be++;
		len--;
	}
	pad = len > 0 && (be[0] & 0x80) ? 1 : 0;
	if (len + pad > UINT32_MAX) {
		out->failed = true;
		return;
	}
	pg_buf_add(out, (uint8_t[4]){ (uint8_t)((len + pad) >> 24), (uint8_t)((len + pad) >> 16),
	                              (uint8_t)((len + pad) >> 8), (uint8_t)(len + pad) }, 4);
	if (pad)
		pg_buf_add(out, &zero, 1);
	pg_buf_add(out, be, len);
}

static bool
put_bn_param(pg_buf *out, EVP_PKEY *key, const char *name)
{
	BIGNUM *bn = NULL;
	uint8_t *bytes;
	int len;
	bool ok = false;

	if (!EVP_PKEY_get_bn_param(key, name, &bn))
		return false;
	len = BN_num_bytes(bn);
	bytes = malloc(len > 0 ? (size_t)len : 1);
	if (bytes != NULL && BN_bn2bin(bn, bytes) == len) {
		pg_ssh_put_mpint(out, bytes, (size_t)len);
		ok = true;
	}
	free(bytes);
	BN_free(bn);
	return ok;
}

static const struct {
	const char *group;      /* libcrypto's name */
	const char *alias;      /* NIST name */
	const char *ssh_curve;  /* RFC 5656 §10.1 */
	const char *ssh_type;
} ssh_curves[] = {
	{ "prime256v1", "P-256", "nistp256", "ecdsa-sha2-nistp256" },
	{ "secp384r1", "P-384", "nistp384", "ecdsa-sha2-nistp384" },
	{ "secp521r1", "P-521", "nistp521", "ecdsa-sha2-nistp521" },
};

bool
pg_ec_uncompressed_point(EVP_PKEY *key, uint8_t *buf, size_t cap, size_t *len)
{
	EVP_PKEY *copy;
	bool ok;

	if (!EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, cap, len))
		return false;
	if (*len > 0 && buf[0] == 0x04)
		return true;
	/* A key read in compressed form: ask a copy for the other form. */
	copy = EVP_PKEY_dup(key);
	ok = copy != NULL &&
	     EVP_PKEY_set_utf8_string_param(copy, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
	                                    "uncompressed") &&
	     EVP_PKEY_get_octet_string_param(copy, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, buf, cap,
	                                     len) &&
	     *len > 0 && buf[0] == 0x04;
	EVP_PKEY_free(copy);
	return ok;
}

bool
pg_ssh_public_blob(EVP_PKEY *key, pg_buf *out, const char **type_name)
{
	char group[64];
	uint8_t point[1 + 2 * 66];
	size_t len;

	if (EVP_PKEY_is_a(key, "RSA")) {
		*type_name = "ssh-rsa";
		pg_ssh_put_string(out, "ssh-rsa", 7);
		return put_bn_param(out, key, OSSL_PKEY_PARAM_RSA_E) &&
		       put_bn_param(out, key, OSSL_PKEY_PARAM_RSA_N) && !out->failed;
	}
	if (EVP_PKEY_is_a(key, "ED25519")) {
		len = sizeof(point);
		if (!EVP_PKEY_get_raw_public_key(key, point, &len) || len != 32)
			return false;
		*type_name = "ssh-ed25519";
		pg_ssh_put_string(out, "ssh-ed25519", 11);
		pg_ssh_put_string(out, point, len);
		return !out->failed;
	}
	if (!EVP_PKEY_is_a(key, "EC") ||
	    !EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
	                                    NULL))
		return false;
	for (size_t i = 0; i < PG_N_ELEMENTS(ssh_curves); i++) {
		if (strcmp(group, ssh_curves[i].group) != 0 && strcmp(group, ssh_curves[i].alias) != 0)
			continue;
		if (!pg_ec_uncompressed_point(key, point, sizeof(point), &len))
			return false;
		*type_name = ssh_curves[i].ssh_type;
		pg_ssh_put_string(out, *type_name, strlen(*type_name));
		pg_ssh_put_string(out, ssh_curves[i].ssh_curve, strlen(ssh_curves[i].ssh_curve));
		pg_ssh_put_string(out, point, len);
		return !out->failed;
	}
	return false;
}

char *
pg_ssh_public_line(EVP_PKEY *key, const char *comment)
{
	const char *type = NULL;
	pg_buf blob, line;
	unsigned char *b64 = NULL;
	char *text = NULL;

	pg_buf_init(&blob);
	pg_buf_init(&line);
	if (!pg_ssh_public_blob(key, &blob, &type) || blob.len > INT32_MAX / 2)
		goto out;
	b64 = malloc(blob.len / 3 * 4 + 8);
	if (b64 == NULL)
		goto out;
	EVP_EncodeBlock(b64, blob.data, (int)blob.len);
	pg_buf_printf(&line, "%s %s", type, b64);
	if (comment != NULL && *comment)
		pg_buf_printf(&line, " %s", comment);
	text = pg_buf_steal(&line, NULL);
out:
	free(b64);
	pg_buf_clear(&blob);
	pg_buf_clear(&line);
	return text;
}
