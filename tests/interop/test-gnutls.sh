#!/bin/bash
# GnuTLS (p11tool, certtool) with the key store module, on a fresh store:
# listing keys and objects, generating keys through GnuTLS, certtool
# signing a self-signed CA and a certificate from a request with token
# keys (checked by openssl), and the same through p11-kit's module
# registry, which is how GnuTLS applications find modules: there the
# module is registered in a private mount namespace, never in /usr or /etc.
#
# Usage: test-gnutls.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need p11tool certtool openssl
# With the ASan runtime preloaded, GnuTLS programs hang at exit in
# libp11-kit's destructor (freelocale waits on glibc's locale lock).
[ -n "$san_libs" ] && skip_all "GnuTLS programs deadlock at exit with the ASan runtime preloaded"

new_store
token=test
export GNUTLS_PIN=$pin GNUTLS_SO_PIN=$so_pin
p11() { client p11tool --provider "$store" "$@"; }
cert() { client certtool --provider "$store" "$@"; }

run keygen ca-key ec:secp384r1 0a
ran "a P-384 CA key generated with p11glue"
run keygen rsa-key rsa:2048 0b
ran "an RSA key generated with p11glue"
run keygen ed-key ed25519 0c
ran "an Ed25519 key generated with p11glue"

# ---------------------------------------------------------------------------
# p11tool
run p11 --list-tokens
has "p11tool --list-tokens shows the token" "$out" "*Label: test*Manufacturer: p11glue*"
run p11 --list-privkeys --login pkcs11:token=test
ran "p11tool --list-privkeys --login"
has "... the P-384 key" "$out" "*object=ca-key;type=private*Private key (EC/ECDSA-SECP384R1)*CKA_NEVER_EXTRACTABLE; CKA_SENSITIVE*"
has "... the RSA key" "$out" "*object=rsa-key;type=private*Private key (RSA-2048)*"
has "... the Ed25519 key" "$out" "*object=ed-key;type=private*Private key (EdDSA (Ed25519))*"
run p11 --list-privkeys pkcs11:token=test
lacks "without login no private key is listed" "$out" "*type=private*"
run p11 --export-pubkey "pkcs11:token=test;object=rsa-key;type=public"
ran "p11tool --export-pubkey"
same "... the key p11glue exports" "$out" \
	"$("$p11glue" export-pubkey --module "$store" "pkcs11:token=test;object=rsa-key")"
run p11 --login --generate-privkey ECDSA --curve secp256r1 --label gnutls-ec --id 0d pkcs11:token=test
ran "p11tool --generate-privkey ECDSA"
run p11 --list-privkeys --login "pkcs11:token=test;object=gnutls-ec"
has "... a private key appears" "$out" "*object=gnutls-ec;type=private*"

# ---------------------------------------------------------------------------
# certtool signing with token keys
printf 'cn = "p11glue test CA"\nexpiration_days = 2\nca\ncert_signing_key\n' >"$tmp/ca.tmpl"
run cert --generate-self-signed --load-privkey "pkcs11:token=test;object=ca-key;type=private" \
	--template "$tmp/ca.tmpl" --outfile "$tmp/ca.pem"
ran "certtool --generate-self-signed with the token's P-384 key"
run openssl verify -CAfile "$tmp/ca.pem" "$tmp/ca.pem"
has "... openssl verifies the CA" "$out" "*: OK"
printf 'cn = "leaf"\nexpiration_days = 2\ntls_www_server\ndns_name = "localhost"\n' >"$tmp/leaf.tmpl"
run cert --generate-request --load-privkey "pkcs11:token=test;object=rsa-key;type=private" \
	--template "$tmp/leaf.tmpl" --outfile "$tmp/leaf.csr"
ran "certtool --generate-request with the token's RSA key"
run openssl req -in "$tmp/leaf.csr" -noout -verify
has "... a request openssl verifies" "$out$err" "*verify OK*"
run cert --generate-certificate --load-request "$tmp/leaf.csr" --load-ca-certificate "$tmp/ca.pem" \
	--load-ca-privkey "pkcs11:token=test;object=ca-key;type=private" --template "$tmp/leaf.tmpl" \
	--outfile "$tmp/leaf.pem"
ran "certtool --generate-certificate signs it with the token CA key"
run openssl verify -CAfile "$tmp/ca.pem" "$tmp/leaf.pem"
has "... openssl verifies the chain" "$out" "*leaf.pem: OK"
printf 'cn = "ed"\nexpiration_days = 2\n' >"$tmp/ed.tmpl"
run cert --generate-self-signed --load-privkey "pkcs11:token=test;object=ed-key;type=private" \
	--template "$tmp/ed.tmpl" --outfile "$tmp/ed.pem"
ran "certtool --generate-self-signed with the token's Ed25519 key"
run openssl verify -CAfile "$tmp/ed.pem" -check_ss_sig "$tmp/ed.pem"
has "... openssl verifies the Ed25519 signature" "$out" "*: OK"
GNUTLS_PIN=00000000 run cert --generate-self-signed --load-privkey \
	"pkcs11:token=test;object=ca-key;type=private" --template "$tmp/ca.tmpl" --outfile "$tmp/no.pem"
failed_run "certtool with a wrong PIN fails"

# ---------------------------------------------------------------------------
# Through p11-kit's registry: a module file in a private mount namespace.
if [ "$(id -u)" = 0 ]; then ns=(unshare --mount); else ns=(unshare --user --map-root-user --mount); fi
mkdir -p "$tmp/modules" "$tmp/empty"
: >"$tmp/empty.conf"
printf 'module: %s\n' "$store" >"$tmp/modules/p11glue-store.module"
registry() {
	"${ns[@]}" -- /bin/sh -c '
		mount --make-rprivate / &&
		mount --bind "$1/modules" /usr/share/p11-kit/modules || exit 97
		if [ -d /etc/pkcs11/modules ]; then mount --bind "$1/empty" /etc/pkcs11/modules || exit 97; fi
		if [ -f /etc/pkcs11/pkcs11.conf ]; then mount --bind "$1/empty.conf" /etc/pkcs11/pkcs11.conf || exit 97; fi
		shift
		exec "$@"' ns "$tmp" "$@"
}
if [ ! -d /usr/share/p11-kit/modules ] || ! registry true 2>/dev/null; then
	skip "certtool through the p11-kit registry" "no private mount namespace, or no p11-kit module directory"
else
	run registry timeout 120 "${client_env[@]}" p11tool --list-tokens
	has "p11tool finds the registered store token" "$out" "*Label: test*Manufacturer: p11glue*"
	run registry timeout 120 "${client_env[@]}" certtool --generate-self-signed \
		--load-privkey "pkcs11:token=test;object=rsa-key;type=private" \
		--template "$tmp/ca.tmpl" --outfile "$tmp/registry.pem"
	ran "certtool signs with a token key found through the registry"
	run openssl verify -CAfile "$tmp/registry.pem" "$tmp/registry.pem"
	has "... openssl verifies it" "$out" "*: OK"
fi

finish
