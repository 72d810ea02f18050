#!/bin/bash
# p11glue setup --openssl: the OpenSSL configuration p11glue owns, used by
# a real openssl through OPENSSL_CONF: it signs with a key of the store
# (a token made by the p11glue CLI in a temporary store), plain openssl
# verifies with the exported public key; dry run, second run, undo, a
# file of the user's, --system as a dry run.
#
# Usage: test-setup-openssl.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/../tools/setup-lib.sh"
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
command -v openssl >/dev/null || skip_all "openssl is not installed"
engines=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"/\1/p')
[ -r "$engines/pkcs11.so" ] || skip_all "libengine-pkcs11-openssl is not installed"

cnf=$XDG_CONFIG_HOME/p11glue/openssl-pkcs11.cnf
# sign CONF OUT: openssl signs $tmp/doc through the engine with CONF as
# its configuration (in a shell of its own, which reports a crash of the
# engine to $err rather than to the test's output).
sign() {
	run bash -c '"$@"; exit $?' sign "${client_env[@]}" OPENSSL_CONF="$1" timeout 120 openssl dgst -sha256 -engine pkcs11 \
		-keyform engine -sign "pkcs11:token=setup;object=signer;type=private?pin-source=file:$tmp/pin" \
		-out "$2" "$tmp/doc"
}
b=$(begin openssl)
e=$(end openssl)

run cli status --openssl
has "status of nothing: not configured" "$out" "openssl: not configured*file: $cnf*engine: $engines/pkcs11.so*"
run cli setup --direct --openssl --dry-run
status "setup --openssl --dry-run" 0
has "... prints the file" "$out" "openssl: would create $cnf
  + $b
  + openssl_conf = p11glue_openssl_init
*  + dynamic_path = $engines/pkcs11.so
  + MODULE_PATH = $store_module
  + init = 0
  + $e"
has "... says how to use it" "$err" "*OPENSSL_CONF=$cnf openssl*.include $cnf*"
same "... and changes nothing" "$(snapshot "$HOME")" ""
dry=$out
run cli setup --direct --openssl
status "setup --openssl" 0
same "... does what the dry run said" "$out" "${dry//would create/created}"
same "... a file of the user's only" "$(stat -c %a "$cnf")" 600
before=$(snapshot "$HOME")
run cli setup --direct --openssl
same "a second run changes nothing" "$out" "openssl: nothing to change"
same "... on disk" "$(snapshot "$HOME")" "$before"
run cli status --openssl
has "status: configured" "$out" "openssl: configured*module: $store_module*"

# A key on a fresh token, used by openssl through the configuration.
secret "$tmp/so-pin" 12345678
secret "$tmp/pin" 87654321
run cli init-token --label setup --so-pin-source "$tmp/so-pin"
status "a token (p11glue init-token)" 0
run cli init-pin --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" 'pkcs11:token=setup'
status "its PIN (p11glue init-pin)" 0
run cli generate-keypair --type ec:secp256r1 --label signer "pkcs11:token=setup?pin-source=$tmp/pin"
status "a key (p11glue generate-keypair)" 0
run cli export-pubkey --output "$tmp/signer.pem" 'pkcs11:token=setup;object=signer'
printf 'signed through the configuration p11glue wrote\n' >"$tmp/doc"
sign "$cnf" "$tmp/doc.sig"
status "OPENSSL_CONF=<file> openssl dgst -engine pkcs11 signs with the store key" 0
run openssl dgst -sha256 -verify "$tmp/signer.pem" -signature "$tmp/doc.sig" "$tmp/doc"
has "... plain openssl verifies the signature" "$out" "Verified OK"
sign /dev/null "$tmp/doc2.sig"
if [ "$rc" != 0 ] && [ ! -s "$tmp/doc2.sig" ]; then ok "... without it the engine has no module"; else not_ok "without the configuration openssl signed anyway"; fi
run cli status --openssl
lacks "status: no warning while the token has no Ed25519 key" "$out" "*warning:*"
run cli generate-keypair --type ed25519 --label edwards "pkcs11:token=setup?pin-source=$tmp/pin"
run cli status --openssl
has "status warns of a token the engine cannot list (an Ed25519 key)" "$out" \
	"openssl: configured*warning: token 'setup' holds an Ed25519 or Ed448 key: the engine (libp11 0.4.12) lists none of that token's private keys*"

run cli setup --direct --openssl --undo
status "undo" 0
has "... removes the file" "$out" "openssl: removed $cnf*"
same "... gone" "$(find "$HOME" -type f)" ""
sign "$cnf" "$tmp/doc3.sig"
if [ "$rc" != 0 ] && [ ! -s "$tmp/doc3.sig" ]; then ok "... and openssl can no longer sign through it"; else not_ok "openssl signed after undo"; fi
run cli setup --direct --openssl --undo
same "a second undo has nothing to do" "$out" "openssl: nothing to change"

# A file of that name with lines of the user's: not p11glue's, left alone.
mkdir -p "$(dirname "$cnf")"
printf 'openssl_conf = mine\n' >"$cnf"
before=$(snapshot "$HOME")
run cli setup --direct --openssl
status "a file of the user's at that path is a conflict" 1
has "... named" "$err" "*$cnf is not p11glue's*nothing was changed*"
same "... and nothing changed" "$(snapshot "$HOME")" "$before"
run cli setup --direct --openssl --undo
same "... undo leaves it alone" "$(snapshot "$HOME")" "$before"
rm "$cnf"

# --proxy and --module.
run cli setup --direct --openssl --proxy --dry-run
has "--proxy names the proxy" "$out" "*MODULE_PATH = $proxy_module*"
run cli setup --direct --openssl --module "$tmp/missing.so"
status "--module of a missing file" 1

# --system: a dry run only.
before=$(snapshot /etc/ssl/p11glue-pkcs11.cnf)
run cli setup --direct --openssl --system --dry-run
status "setup --openssl --system --dry-run" 0
has "... names /etc/ssl/p11glue-pkcs11.cnf" "$out" "openssl: would * /etc/ssl/p11glue-pkcs11.cnf*"
same "... and changes nothing" "$(snapshot /etc/ssl/p11glue-pkcs11.cnf)" "$before"
finish
