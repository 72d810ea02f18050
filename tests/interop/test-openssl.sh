#!/bin/bash
# OpenSSL with Debian's PKCS#11 engine (libengine-pkcs11-openssl) and the
# key store module, on a fresh store: signatures made through the engine
# (ECDSA, RSA PKCS#1 v1.5 and PSS) verified by plain openssl with the
# public key p11glue exports; a self-signed certificate made with a token
# key; TLS with openssl s_server holding its key on the token (ECDSA and
# RSA), checked by s_client; and curl authenticating to s_server with a
# client key on the token. Servers listen on loopback in a private
# network namespace and are stopped by PID.
#
# Debian 12's engine (libp11 0.4.12) stops listing private keys at the
# first key type it does not know, so this token holds no Ed25519 key.
#
# Usage: test-openssl.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need openssl
engine_so=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')/pkcs11.so
[ -f "$engine_so" ] || skip_all "the PKCS#11 engine is not installed (libengine-pkcs11-openssl)"

new_store
token=test
export PKCS11_MODULE_PATH=$store
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
key() { echo "pkcs11:token=test;object=$1;type=private?pin-value=$pin"; }
ossl() { client openssl "$@"; }

run keygen ec-key ec:secp256r1
ran "a P-256 key generated with p11glue"
run keygen rsa-key rsa:2048
ran "an RSA-2048 key generated with p11glue"
run keygen ec384-key ec:secp384r1
ran "a P-384 key generated with p11glue"
for k in ec-key rsa-key ec384-key; do
	p export-pubkey --output "$tmp/$k.pub.pem" "pkcs11:token=test;object=$k" >/dev/null 2>&1
done

# ---------------------------------------------------------------------------
# Signatures through the engine, verified without it
printf 'signed through the OpenSSL engine\n' >"$tmp/data"
printf 'something else\n' >"$tmp/other"
sign_verify() {
	local name=$1 k=$2 md=$3
	shift 3
	run ossl dgst -engine pkcs11 -keyform engine -sign "$(key "$k")" "-$md" "$@" -out "$tmp/$k.sig" "$tmp/data"
	ran "openssl dgst -engine pkcs11 -sign: $name"
	run openssl dgst "-$md" "$@" -verify "$tmp/$k.pub.pem" -signature "$tmp/$k.sig" "$tmp/data"
	has "... plain openssl verifies it" "$out" "Verified OK"
	run openssl dgst "-$md" "$@" -verify "$tmp/$k.pub.pem" -signature "$tmp/$k.sig" "$tmp/other"
	failed_run "... and not for other data"
}
sign_verify "ECDSA P-256 with SHA-256" ec-key sha256
sign_verify "ECDSA P-384 with SHA-384" ec384-key sha384
sign_verify "RSA PKCS#1 v1.5 with SHA-256" rsa-key sha256
sign_verify "RSA-PSS with SHA-256" rsa-key sha256 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32
run ossl dgst -engine pkcs11 -keyform engine -sign "pkcs11:token=test;object=ec-key;type=private?pin-value=00000000" \
	-sha256 -out "$tmp/bad.sig" "$tmp/data"
failed_run "a wrong PIN in the URI fails"

# ---------------------------------------------------------------------------
# Certificates made with token keys
for k in ec-key rsa-key; do
	run ossl req -new -x509 -engine pkcs11 -keyform engine -key "$(key "$k")" \
		-subj "/CN=localhost" -addext "subjectAltName=DNS:localhost" -days 2 -out "$tmp/$k.crt"
	ran "openssl req -x509 signs a certificate with $k"
	run openssl verify -CAfile "$tmp/$k.crt" "$tmp/$k.crt"
	has "... which verifies" "$out" "*: OK"
	same "... and holds the token's public key" "$(openssl x509 -in "$tmp/$k.crt" -noout -pubkey 2>/dev/null)" \
		"$(cat "$tmp/$k.pub.pem")"
done

# ---------------------------------------------------------------------------
# TLS in a private network namespace
if [ "$(id -u)" = 0 ]; then ns=(unshare --net); else ns=(unshare --user --map-root-user --net); fi
if ! "${ns[@]}" -- true 2>/dev/null; then
	skip "TLS" "no private network namespace here (unshare --net)"
	finish
	exit
fi
# A client certificate for curl, issued by the RSA certificate's key.
run ossl req -new -engine pkcs11 -keyform engine -key "$(key ec384-key)" -subj "/CN=token client" \
	-out "$tmp/client.csr"
ran "openssl req makes a request for a token client key"
run ossl x509 -req -in "$tmp/client.csr" -engine pkcs11 -CAkeyform engine -CAkey "$(key rsa-key)" \
	-CA "$tmp/rsa-key.crt" -CAcreateserial -days 2 -out "$tmp/client.crt"
ran "openssl x509 -req issues it with the token's RSA key as CA"

# The scenario inside the namespace: s_server, then one client; the
# server is stopped by PID whatever happens. $2: the server's key;
# $3: "s_client" or "curl".
cat >"$tmp/tls.sh" <<'SCRIPT'
set -u
tmp=$1 k=$2 client=$3 key=$4 pre=$5
ip link set lo up || exit 97
extra=()
[ "$client" = curl ] && extra=(-Verify 1 -CAfile "$tmp/rsa-key.crt")
# Emptied here, not by the server's redirection, which runs later in the
# background: the last run's ACCEPT must not count as this one's.
: >"$tmp/server.out"
$pre openssl s_server -engine pkcs11 -keyform engine -key "$key" -cert "$tmp/$k.crt" \
	-accept 127.0.0.1:4433 -naccept 1 -www "${extra[@]}" >"$tmp/server.out" 2>&1 </dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
# Up to a minute: the server logs in to the token first, slow on a loaded machine.
for _ in $(seq 1200); do grep -q ACCEPT "$tmp/server.out" 2>/dev/null && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if [ "$client" = s_client ]; then
	echo | timeout 60 openssl s_client -connect 127.0.0.1:4433 -servername localhost \
		-CAfile "$tmp/$k.crt" -verify_return_error -verify_hostname localhost 2>&1
else
	timeout 60 $pre curl -sS --resolve localhost:4433:127.0.0.1 --cacert "$tmp/$k.crt" \
		--engine pkcs11 --key-type ENG --key "$(sed "s/ec-key\|rsa-key/ec384-key/" <<<"$key")" \
		--cert "$tmp/client.crt" https://localhost:4433/ 2>&1
fi
SCRIPT
pre=${client_env[*]}
tls() { run timeout 120 "${ns[@]}" -- bash "$tmp/tls.sh" "$tmp" "$1" "$2" "$(key "$1")" "$pre"; }

for k in ec-key rsa-key; do
	tls "$k" s_client
	if [ "$rc" = 97 ]; then skip "TLS with $k" "cannot set up the network namespace"; continue; fi
	has "s_server with its $k on the token: s_client verifies the server" "$out" "*Verify return code: 0 (ok)*"
	has "... over TLS 1.3" "$out" "*TLSv1.3*"
	lacks "... without a handshake failure" "$out" "*alert*"
done
want_sig=ECDSA
tls ec-key s_client
has "... the server signed with ECDSA" "$out" "*Peer signature type: $want_sig*"
tls rsa-key s_client
has "... the RSA server signed with RSA-PSS" "$out" "*Peer signature type: RSA-PSS*"

if [ -n "$san_libs" ]; then
	# curl links GnuTLS and p11-kit, whose destructor deadlocks at exit
	# with the ASan runtime preloaded (see test-gnutls.sh).
	skip "curl with a token client key" "curl hangs at exit with the ASan runtime preloaded"
elif command -v curl >/dev/null; then
	tls ec-key curl
	has "curl --engine pkcs11 authenticates with a client key on the token" "$out" "*<HTML>*"
	has "... s_server saw the token client's certificate" "$(cat "$tmp/server.out")" "*token client*"
else
	skip "curl with a token client key" "curl is not installed"
fi

finish
