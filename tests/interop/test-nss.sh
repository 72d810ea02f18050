#!/bin/bash
# NSS with the key store module, on a fresh store: modutil registers it
# (the store directory passed as the module's parameter string),
# certutil lists the token's keys and certificates, NSS creates keys and
# certificates on the token (certutil -S, pk12util -i), and selfserv
# serves TLS 1.3 with a key and certificate on the token (ECDSA, then RSA
# with RSA-PSS), checked by tstclnt. Servers listen on loopback in a
# private network namespace and are stopped by PID.
#
# Usage: test-nss.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need modutil certutil pk12util selfserv tstclnt openssl

new_store
token=test
dir=$P11GLUE_STORE_DIR
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
# NSS finds the store through the module's parameter string only.
nss() { client env -u P11GLUE_STORE_DIR "$@"; }
secret "$tmp/nss-pin" "$pin"
secret "$tmp/wrong-pin" 00000000

# A CA and two server certificates (EC, RSA) whose keys go to the token
# through p11glue import.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/ca.key" \
	-subj /CN=NSS-test-CA -days 2 -out "$tmp/ca.pem" 2>/dev/null
for t in ec rsa; do
	if [ "$t" = ec ]; then alg=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1); else alg=(-newkey rsa:2048); fi
	openssl req "${alg[@]}" -nodes -keyout "$tmp/$t.key" -subj "/CN=localhost $t" \
		-addext subjectAltName=DNS:localhost -out "$tmp/$t.csr" 2>/dev/null
	openssl x509 -req -in "$tmp/$t.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
		-days 2 -copy_extensions copy -out "$tmp/$t.pem" 2>/dev/null
	cat "$tmp/$t.key" "$tmp/$t.pem" >"$tmp/$t-bundle.pem"
	run p import --label "server-$t" "$tmp/$t-bundle.pem" "pkcs11:token=test?pin-source=$tmp/pin"
	ran "p11glue imports the $t server key and certificate"
done
run keygen generated ec:secp384r1
ran "a key generated with p11glue"

# ---------------------------------------------------------------------------
# modutil, certutil
mkdir "$tmp/db" "$tmp/client-db"
run nss certutil -N -d "sql:$tmp/db" --empty-password
ran "certutil -N"
run nss modutil -dbdir "sql:$tmp/db" -add p11glue-store -libfile "$store" -string "store=$dir" -force
ran "modutil -add with -string store=DIR"
run nss modutil -dbdir "sql:$tmp/db" -list p11glue-store
has "modutil -list shows the token" "$out" "*Name: p11glue-store*PKCS #11 Version 3.0*Token Name: test *"
run nss certutil -K -d "sql:$tmp/db" -h test -f "$tmp/nss-pin"
ran "certutil -K"
has "... lists the EC server key" "$out" "*<*> ec *server-ec*"
has "... the RSA server key" "$out" "*<*> rsa *server-rsa*"
has "... and the generated key" "$out" "*<*> ec *generated*"
run nss certutil -K -d "sql:$tmp/db" -h test -f "$tmp/wrong-pin"
failed_run "certutil -K with a wrong PIN"
run nss certutil -L -d "sql:$tmp/db" -h test -f "$tmp/nss-pin"
has "certutil -L lists the token's EC server certificate" "$out" "*test:server-ec *u,u,u*"
has "... and the RSA one" "$out" "*test:server-rsa *u,u,u*"
run nss certutil -L -d "sql:$tmp/db" -h test -f "$tmp/nss-pin" -n test:server-ec -a
same "... the certificate that was imported" "$(openssl x509 -in <(printf '%s\n' "$out") 2>/dev/null)" \
	"$(openssl x509 -in "$tmp/ec.pem")"

# NSS writing to the token: a key pair and a self-signed certificate, and
# a PKCS#12 file (key unwrapped into the token, certificate created).
# Both create certificate objects without CKA_PUBLIC_KEY_INFO (store bug
# at the time of writing, see the report).
run nss certutil -S -d "sql:$tmp/db" -h test -f "$tmp/nss-pin" -n nss-made -s CN=nss-made -x \
	-t u,u,u -k ec -q nistp256 -z "$tmp/nss-pin"
ran "certutil -S makes a key pair and certificate on the token"
openssl req -newkey rsa:2048 -nodes -keyout "$tmp/p12.key" -subj /CN=p12 -x509 -days 2 \
	-out "$tmp/p12.pem" 2>/dev/null
openssl pkcs12 -export -inkey "$tmp/p12.key" -in "$tmp/p12.pem" -name p12 -passout pass:p12pass \
	-out "$tmp/p12.p12"
run nss pk12util -i "$tmp/p12.p12" -d "sql:$tmp/db" -h test -k "$tmp/nss-pin" -W p12pass
ran "pk12util -i imports a PKCS#12 file into the token"

# ---------------------------------------------------------------------------
# TLS: selfserv with the token's key, tstclnt checking it.
run nss certutil -N -d "sql:$tmp/client-db" --empty-password
run nss certutil -A -d "sql:$tmp/client-db" -n ca -t C,, -i "$tmp/ca.pem"
ran "a client database trusting the CA"
if [ "$(id -u)" = 0 ]; then ns=(unshare --net); else ns=(unshare --user --map-root-user --net); fi
if ! "${ns[@]}" -- true 2>/dev/null; then
	skip "TLS" "no private network namespace here (unshare --net)"
	finish
	exit
fi
cat >"$tmp/tls.sh" <<'SCRIPT'
set -u
tmp=$1 nick=$2 pre=$3
ip link set lo up || exit 97
$pre env -u P11GLUE_STORE_DIR selfserv -d "sql:$tmp/db" -n "$nick" -p 4443 -f "$tmp/nss-pin" \
	-V tls1.3:tls1.3 >"$tmp/server.out" 2>&1 </dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
for _ in $(seq 1200); do   # up to a minute: selfserv logs in to the token first
	(echo >/dev/tcp/127.0.0.1/4443) 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
# (tstclnt waits forever with stdin at /dev/null; a pipe it reads to EOF.)
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 30 tstclnt -Q -C -h 127.0.0.1 -p 4443 -a localhost \
	-d "sql:$tmp/client-db" -V tls1.3:tls1.3 2>&1
SCRIPT
for t in ec rsa; do
	run timeout 120 "${ns[@]}" -- bash "$tmp/tls.sh" "$tmp" "test:server-$t" "${client_env[*]}"
	if [ "$rc" = 97 ]; then skip "TLS with the $t key" "cannot set up the network namespace"; continue; fi
	ran "selfserv with its $t key on the token: tstclnt completes a TLS 1.3 handshake"
	has "... and verifies the server certificate" "$out" "*subject DN: CN=localhost $t*issuer  DN: CN=NSS-test-CA*"
done

finish
