/*
 * libFuzzer target for the OpenPGP key reader of `p11glue adopt`
 * (src/import/openpgp.c, openpgp-secret.c): packets, key material,
 * fingerprints and keygrips, and every secret key unlocked with the
 * passphrase "fuzz" (the seeds are protected with it), S2K counts capped
 * low. Checks, for every input: no crash or leak; a failed parse leaves
 * the ring empty; fingerprints have their version's size; a key that
 * unlocks is the key pair of its packet's public key.
 */
#include "config.h"

#include "openpgp.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_key(const pg_pgp_ring *ring, const pg_pgp_key *key, const p11glue_pin *pass)
{
	unsigned char grip[20];
	char why[200];
	EVP_PKEY *priv = NULL;

	if (key->fpr_len != 0 && key->fpr_len != (key->version >= 5 ? 32u : 20u))
		abort();
	if (key->primary >= ring->n || (key->subkey && key->primary == (size_t)(key - ring->keys)))
		abort();
	if (pg_pgp_keygrip(key, grip) && key->public_key == NULL && key->unsupported == NULL)
		abort();
	if (pg_pgp_unlock(key, pass, 1u << 16, &priv, why, sizeof(why)) != PG_PGP_OK) {
		if (priv != NULL)
			abort();
		return;
	}
	if (priv == NULL || key->public_key == NULL || EVP_PKEY_eq(priv, key->public_key) != 1)
		abort();
	EVP_PKEY_free(priv);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	p11glue_pin *pass = p11glue_pin_new("fuzz", 4);
	pg_pgp_ring ring;
	char why[200];

	pg_pgp_ring_init(&ring);
	if (pg_pgp_parse(data, size, &ring, why, sizeof(why)) != PG_PGP_OK) {
		if (ring.n != 0 || ring.keys != NULL)
			abort();
	} else {
		for (size_t i = 0; i < ring.n; i++)
			check_key(&ring, &ring.keys[i], pass);
	}
	pg_pgp_ring_clear(&ring);
	p11glue_pin_free(pass);
	return 0;
}
