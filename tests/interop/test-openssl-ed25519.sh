#!/bin/bash
# Ed25519 keys and OpenSSL's PKCS#11 engine (libengine-pkcs11-openssl):
# Debian 12's engine (libp11 0.4.12) gives up listing a token's private
# keys at the first CKK_EC_EDWARDS key, so the token's RSA key is not
# found either; the store cannot change that within PKCS#11 (the engine
# reads only CKA_KEY_TYPE before it gives up), so p11glue warns when it
# makes or imports such a key, and an Ed25519 key on a token of its own
# leaves the engine's view of the other token whole.
#
# Usage: test-openssl-ed25519.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need openssl ssh-keygen
engine_so=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')/pkcs11.so
[ -f "$engine_so" ] || skip_all "the PKCS#11 engine is not installed (libengine-pkcs11-openssl)"

new_store
export PKCS11_MODULE_PATH=$store
printf 'signed through the OpenSSL engine\n' >"$tmp/data"
# sign TOKEN: the engine signs with TOKEN's RSA key.
sign() {
	client openssl pkeyutl -engine pkcs11 -keyform engine \
		-inkey "pkcs11:token=$1;object=rsa-key;type=private?pin-value=$pin" \
		-sign -in "$tmp/data" -out "$tmp/sig"
}

run keygen rsa-key rsa:2048
ran "an RSA key generated with p11glue"
run sign test
ran "the engine signs with it"

# A second token for Ed25519 keys.
run bound "$p11glue" init-token --module "$store" --label edwards --so-pin-source "$tmp/so-pin"
ran "a second token"
run bound "$p11glue" init-pin --module "$store" --so-pin-source "$tmp/so-pin" \
	--new-pin-source "$tmp/pin" "pkcs11:token=edwards"
ran "... with a user PIN"
token=edwards run keygen ed-key ed25519
ran "an Ed25519 key generated on it"
has "... with a warning about OpenSSL's engine" "$err" "*warning: OpenSSL's PKCS#11 engine*ed25519*"
run sign test
ran "the engine still signs with the RSA key of the first token"

# On the same token as the RSA key: the warning, and what it warns of.
run ssh-keygen -q -t ed25519 -N '' -C ed-import -f "$tmp/id_ed25519"
ran "an OpenSSH Ed25519 key"
run bound "$p11glue" import --module "$store" "$tmp/id_ed25519" "pkcs11:token=test?pin-source=$tmp/pin"
ran "imported beside the RSA key"
has "... with a warning about OpenSSL's engine" "$err" "*warning: OpenSSL's PKCS#11 engine*ed25519*"
run keygen rsa-key-2 rsa:2048
ran "another key generated there"
lacks "... an RSA key without a warning" "$err" "*warning*"
run sign test
if [ "$rc" = 0 ]; then
	ok "the engine signs with the RSA key (this libp11 lists Ed25519 keys)"
else
	has "the engine fails for the whole token, as the warning says" "$err" "*rror*"
fi

finish
