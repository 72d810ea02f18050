#!/bin/bash
# The main job: shows what p11glue does, step by step, on built-in
# defaults. Nothing outside a temporary directory is touched.
#
#   scripts/main-job.sh [BUILD-DIR]   the programs and modules of a build
#                                     directory (default build/)
#   scripts/main-job.sh --installed   the installed ones (/usr/bin/p11glue,
#                                     the modules in /usr/lib/<multiarch>/pkcs11/),
#                                     as the Debian packages put them
set -uo pipefail

multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
if [ "${1:-}" = --installed ]; then
	p11glue=/usr/bin/p11glue
	modules=/usr/lib/$multiarch/pkcs11
	proxy=$modules/p11glue-proxy.so
	store_module=$modules/p11glue-store.so
	trust_module=$modules/p11glue-trust.so
	client=$modules/p11glue-client.so
else
	build=$(realpath "${1:-build}")
	p11glue="$build/src/tools/p11glue"
	proxy="$build/src/proxy/p11glue-proxy.so"
	store_module="$build/src/store/p11glue-store.so"
	trust_module=$(realpath "$build/src/trust/p11glue-trust.so")
	client="$build/src/client/p11glue-client.so"
fi
for f in "$p11glue" "$proxy" "$store_module" "$trust_module" "$client"; do
	[ -e "$f" ] || { echo "main job: $f is missing (build first, or install the packages)"; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-main.XXXXXX")
# A session service something here starts listens in the job's own runtime
# directory, and ends when the directory is removed.
export XDG_RUNTIME_DIR="$work/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
gnupg_pids=()
# The gpg-agent and scdaemon of the GnuPG steps: stopped with gpgconf and by PID.
stop_gnupg() {
	[ -d "$work/gnupg" ] || return 0
	gpgconf --homedir "$work/gnupg" --kill all >/dev/null 2>&1
	for pid in "${gnupg_pids[@]}"; do kill "$pid" 2>/dev/null; done
}
agent_pid= server_pid= service_pid=
# Everything the job started is stopped, and the directory removed.
cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null
	[ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	stop_gnupg
	rm -rf "$work"
}
trap cleanup EXIT
step=0
failed=0

# step "what this shows" CMD...: runs it, prints one line, keeps the output.
step() {
	local what=$1
	shift
	step=$((step + 1))
	if "$@" >"$work/out" 2>"$work/err"; then
		printf '[%2d] ok    %s\n' "$step" "$what"
		sed 's/^/        /' "$work/out"
	else
		printf '[%2d] FAIL  %s: %s\n' "$step" "$what" "$(tr '\n' ' ' <"$work/err")"
		failed=$((failed + 1))
	fi
}

# expect_fail "what" CMD...: the command must fail; its message is shown.
expect_fail() {
	local what=$1
	shift
	step=$((step + 1))
	if "$@" >"$work/out" 2>"$work/err"; then
		printf '[%2d] FAIL  %s: it was accepted\n' "$step" "$what"
		failed=$((failed + 1))
	else
		printf '[%2d] ok    %s\n' "$step" "$what"
		sed 's/^/        /' "$work/err"
	fi
}

echo "p11glue main job ($("$p11glue" --version), $p11glue, modules from $(dirname "$store_module"))"
step "the commands p11glue offers" "$p11glue" --help
step "a PKCS#11 URI in canonical form" \
	"$p11glue" uri parse "pkcs11:type=private;object=my%20key;token=Key%20Store?pin-source=file:%2Fhome%2Fme%2Fpin"
step "the same URI decoded as JSON" \
	"$p11glue" uri parse --json "pkcs11:type=private;object=my%20key;token=Key%20Store;id=%01%02"
step "a URI built from attribute values" \
	"$p11glue" uri build --token="Key Store" --object="ssh key" --type=private --id=0102
step "a URI found in the wild, parsed leniently" \
	"$p11glue" uri parse --lenient "pkcs11:token=SSH Keys;object=id_ecdsa"
expect_fail "a malformed URI is refused with its reason" \
	"$p11glue" uri parse "pkcs11:library-version=1.x"
step "an attribute RFC 7512 does not define is a vendor's: kept, with a warning that it matches nothing" \
	"$p11glue" uri parse "pkcs11:tokn=typo"

# The registry: modules registered once, in p11-kit's format, in a
# private configuration directory (P11GLUE_CONFIG), with a SoftHSM2 token.
softhsm=/usr/lib/$multiarch/softhsm/libsofthsm2.so
export P11GLUE_CONFIG="$work/registry"
export SOFTHSM2_CONF="$work/softhsm2.conf"
mkdir -p "$P11GLUE_CONFIG/modules" "$work/tokens"
echo "directories.tokendir = $work/tokens" >"$SOFTHSM2_CONF"
printf 'module: %s\n' "$softhsm" >"$P11GLUE_CONFIG/modules/softhsm2.module"
printf 'module: opensc-pkcs11.so\n' >"$P11GLUE_CONFIG/modules/opensc.module"
printf 'module: p11-kit-trust.so\npriority: 1\ntrust-policy: yes\ndisable-in: p11-kit-proxy\n' \
	>"$P11GLUE_CONFIG/modules/p11-kit-trust.module"
step "a SoftHSM2 token created through the proxy module" \
	pkcs11-tool --module "$proxy" --init-token --label demo --so-pin 12345678
step "its user PIN set" \
	pkcs11-tool --module "$proxy" --token-label demo --login --login-type so \
	--so-pin 12345678 --init-pin --pin 1234
step "an EC key generated on it through the proxy" \
	pkcs11-tool --module "$proxy" --token-label demo --login --pin 1234 \
	--keypairgen --key-type EC:prime256v1 --id 01 --label demo-key
step "the registered modules (p11glue list-modules)" "$p11glue" list-modules
step "the tokens, each with its URI (p11glue list-tokens)" "$p11glue" list-tokens
step "the key, found by URI (p11glue list-objects --login)" \
	"$p11glue" list-objects --login "pkcs11:token=demo;type=private?pin-value=1234"
step "the proxy module's slots, as pkcs11-tool sees them" pkcs11-tool --module "$proxy" -L
step "ssh reads the public key through the proxy (ssh-keygen -D)" ssh-keygen -D "$proxy"

# The key store: a token in the temporary directory, a key generated on
# it, and ssh and openssl using that key through p11glue-store.so.
store_dir="$work/store"
(umask 077 && printf '87654321' >"$work/so-pin" && printf '123456' >"$work/pin")
step "a key store token created in $store_dir (p11glue init-token)" \
	"$p11glue" init-token --store "$store_dir" --label mykeys --so-pin-source "$work/so-pin"
step "its user PIN set, from a PIN file (p11glue init-pin)" \
	"$p11glue" init-pin --store "$store_dir" --so-pin-source "$work/so-pin" \
	--new-pin-source "$work/pin" "pkcs11:token=mykeys"
step "an EC P-256 key generated on the token, never to leave it (p11glue generate-keypair)" \
	"$p11glue" generate-keypair --store "$store_dir" --type ec:secp256r1 --label my-key \
	"pkcs11:token=mykeys?pin-source=$work/pin"
step "its public key, as an authorized_keys line (p11glue export-pubkey --format=ssh)" \
	"$p11glue" export-pubkey --store "$store_dir" --format=ssh "pkcs11:token=mykeys;object=my-key"
step "ssh finds the key on the token (ssh-keygen -D p11glue-store.so)" \
	env P11GLUE_STORE_DIR="$store_dir" ssh-keygen -D "$store_module"
printf 'a document signed by the key store\n' >"$work/document"
step "openssl signs with the token key through the PKCS#11 engine (openssl dgst -engine pkcs11)" \
	env P11GLUE_STORE_DIR="$store_dir" PKCS11_MODULE_PATH="$store_module" \
	openssl dgst -sha256 -engine pkcs11 -keyform engine -out "$work/document.sig" \
	-sign "pkcs11:token=mykeys;object=my-key;type=private?pin-source=file:$work/pin" "$work/document"
"$p11glue" export-pubkey --store "$store_dir" --output "$work/my-key.pem" \
	"pkcs11:token=mykeys;object=my-key" 2>/dev/null
step "plain openssl verifies the signature with the exported public key" \
	openssl dgst -sha256 -verify "$work/my-key.pem" -signature "$work/document.sig" "$work/document"

# ssh signs with the key: ssh-agent holds the token (ssh-add -s, the PIN
# from an askpass program), ssh-keygen -Y signs a file through the agent.
printf '#!/bin/sh\ncat "%s"\n' "$work/pin" >"$work/askpass"
chmod 700 "$work/askpass"
eval "$(P11GLUE_STORE_DIR="$store_dir" ssh-agent -s -a "$work/agent.sock" \
	-P "$(dirname "$store_module")/*")" >/dev/null
agent_pid=${SSH_AGENT_PID:-}
step "ssh-agent holds the token's keys (ssh-add -s p11glue-store.so)" \
	env SSH_ASKPASS="$work/askpass" SSH_ASKPASS_REQUIRE=force ssh-add -s "$store_module"
"$p11glue" export-pubkey --store "$store_dir" --format=ssh "pkcs11:token=mykeys;object=my-key" \
	>"$work/my-key.pub" 2>/dev/null
printf 'a document signed by ssh\n' >"$work/ssh-doc"
step "ssh signs a file with the token key (ssh-keygen -Y sign through the agent)" \
	ssh-keygen -Y sign -f "$work/my-key.pub" -n file "$work/ssh-doc"
printf 'me %s\n' "$(cut -d' ' -f1,2 "$work/my-key.pub")" >"$work/allowed-signers"
step "ssh-keygen -Y verify checks it against the exported public key" \
	sh -c 'ssh-keygen -Y verify -f "$1" -I me -n file -s "$2.sig" <"$2"' sh \
	"$work/allowed-signers" "$work/ssh-doc"
kill "$agent_pid" 2>/dev/null
agent_pid=

# NSS signs with the key: the store added to an NSS database as
# Firefox and Chromium have theirs, a certification request signed by
# certutil with the token key, checked by openssl.
mkdir "$work/nssdb"
certutil -N -d "sql:$work/nssdb" --empty-password
step "the key store added to an NSS database (modutil -add)" \
	env P11GLUE_STORE_DIR="$store_dir" modutil -dbdir "sql:$work/nssdb" -add p11glue-store \
	-libfile "$store_module" -force
keyid=$(P11GLUE_STORE_DIR="$store_dir" certutil -K -d "sql:$work/nssdb" -h mykeys -f "$work/pin" \
	</dev/null 2>/dev/null | awk '$NF == "my-key" { print $(NF - 1) }')
step "NSS signs a certification request with the token key (certutil -R -k ${keyid:-?})" \
	env P11GLUE_STORE_DIR="$store_dir" certutil -R -d "sql:$work/nssdb" -h mykeys \
	-f "$work/pin" -k "${keyid:-none}" -s "CN=signed by NSS" -a -o "$work/nss.csr"
step "openssl checks NSS's signature (openssl req -verify)" \
	openssl req -in "$work/nss.csr" -noout -verify -subject

# Trust: the key store and p11glue's trust module registered in place of
# p11-kit's (the demo's own p11-kit registration above goes first), the
# system's anchors through it, and a bundle that openssl verify uses.
rm -f "$P11GLUE_CONFIG/modules/p11-kit-trust.module"
step "the key store and the trust module registered, p11-kit's trust module disabled (p11glue setup --modules --direct)" \
	"$p11glue" setup --modules --direct
step "the system's trust anchors through p11glue-trust.so (first 3)" \
	sh -c "'$p11glue' trust list --filter=ca-anchors | head -n 15"
step "how many anchors, blocklisted and other certificates" \
	sh -c "echo anchors: \$('$p11glue' trust list --filter=ca-anchors | grep -c 'trust: anchor'); \
	       echo blocklisted: \$('$p11glue' trust list --filter=blocklist | grep -c 'trust: distrusted')"
step "a PEM bundle of the anchors extracted for OpenSSL" \
	"$p11glue" trust extract --format=pem-bundle --filter=ca-anchors "$work/anchors.pem"
first=$(awk '/BEGIN CERT/{p=1} p{print} /END CERT/{exit}' "$work/anchors.pem" >"$work/first.pem"; echo "$work/first.pem")
step "openssl verify uses the extracted bundle (a root checks against it)" \
	openssl verify -CAfile "$work/anchors.pem" "$first"
step "OpenSSL, GnuTLS, NSS and Java agree on every anchor (p11glue trust check)" \
	"$p11glue" trust check
# GnuPG: an OpenPGP key whose secret part is a key in the store, used
# by gpg-agent through gnupg-pkcs11-scd; the signature is checked by gpgv.
export GNUPGHOME="$work/gnupg"
export P11GLUE_STORE_DIR="$store_dir"
gpg_pin=(--pinentry-mode loopback --passphrase-file "$work/pin")
step "an RSA key for OpenPGP generated on the token (p11glue generate-keypair)" \
	"$p11glue" generate-keypair --type rsa:2048 --label openpgp "pkcs11:token=mykeys?pin-source=$work/pin"
step "its certificate, signed inside the token (p11glue certify --self-signed)" \
	"$p11glue" certify --self-signed --subject "CN=Main Job" "pkcs11:token=mykeys;object=openpgp?pin-source=$work/pin"
step "GnuPG set up to use the store through gnupg-pkcs11-scd (p11glue setup --gnupg)" \
	"$p11glue" setup --gnupg --module "$store_module"
step "gpg-agent learns the key from the token (gpg-connect-agent 'scd learn')" \
	gpg-connect-agent "scd learn" /bye
grip=$(sed -n 's/^S KEY-FRIEDNLY \([0-9A-F]*\) .CN=Main Job.*/\1/p' "$work/out")
gnupg_pids+=($(gpg-connect-agent --no-autostart "getinfo pid" "scd getinfo pid" /bye 2>/dev/null | sed -n 's/^D //p'))
step "GnuPG sees the token as a card and notes its keys (gpg --card-status)" \
	gpg --batch --card-status
printf 'Key-Type: RSA\nKey-Grip: %s\nKey-Usage: sign\nName-Real: Main Job\nName-Email: main@p11glue.example\nExpire-Date: 0\n%%commit\n' \
	"$grip" >"$work/openpgp-key"
step "an OpenPGP key made on that key's keygrip (gpg --generate-key, Key-Grip: $grip)" \
	gpg --batch "${gpg_pin[@]}" --generate-key "$work/openpgp-key"
gpg --batch --export main@p11glue.example >"$work/openpgp.pub" 2>/dev/null
step "a document signed by GnuPG with the store key (gpg --detach-sign)" \
	gpg --batch "${gpg_pin[@]}" --local-user main@p11glue.example --detach-sign \
	--output "$work/document.gpgsig" "$work/document"
step "gpgv verifies the GnuPG signature" \
	sh -c 'gpgv --keyring "$1" "$2" "$3" 2>&1' gpgv "$work/openpgp.pub" "$work/document.gpgsig" "$work/document"
printf 'changed\n' >>"$work/document"
expect_fail "gpgv rejects the signature for a changed document" \
	gpgv --keyring "$work/openpgp.pub" "$work/document.gpgsig" "$work/document"
stop_gnupg

# One command for every program of a user (a home in the temporary
# directory): the registry, the NSS databases Chromium and Firefox read,
# ssh, OpenSSL and GnuPG, all reaching the store through the user's
# session service; one unlock serves them all. What it did is shown,
# then undone.
user=(env HOME="$work/home" P11GLUE_PINENTRY=none)
mkdir -p "$work/home"
step "what 'p11glue setup' would change for this user (--dry-run)" "${user[@]}" "$p11glue" setup --dry-run
step "every program set up (p11glue setup)" "${user[@]}" "$p11glue" setup
step "the key store unlocked once for the session (p11glue unlock)" \
	"${user[@]}" "$p11glue" unlock --pin-source "$work/pin" pkcs11:token=mykeys
service_pid=$("${user[@]}" "$p11glue" status --service 2>/dev/null | sed -n 's/.*service: running (pid \([0-9]*\),.*/\1/p')
step "what is set up where, and the store unlocked (p11glue status)" "${user[@]}" "$p11glue" status
step "ssh uses the key store for every host now (ssh -G, with the user's ~/.ssh/config)" \
	sh -c 'ssh -G -F "$1" example.org | grep -i "^pkcs11provider"' sh "$work/home/.ssh/config"
step "Chromium's NSS database sees the store's certificate and the system's anchors, no PIN asked (certutil -L -h all)" \
	"${user[@]}" sh -c 'certutil -L -d "sql:$1" -h all </dev/null >"$2" && grep "^mykeys:" "$2" &&
	       echo "and $(grep -c "^System Trust:.*CT,C,C" "$2") anchors from p11glue-trust.so"' \
	sh "$work/home/.pki/nssdb" "$work/nss-list"
step "the session's store locked again (p11glue lock)" "${user[@]}" "$p11glue" lock
step "all of it undone (p11glue setup --undo)" "${user[@]}" "$p11glue" setup --undo

# Remote tokens: the key store served on a socket (stopped by its PID at
# the end) and used through p11glue-client.so; then over stdin/stdout, as
# `ssh host p11glue remote ...` would carry it.
"$p11glue" server --foreground --provider "$store_module" --socket "$work/p11glue.sock" \
	>"$work/server.env" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do [ -S "$work/p11glue.sock" ] && break; sleep 0.1; done
step "the key store served on a socket: what to export (p11glue server)" cat "$work/server.env"
export P11GLUE_SERVER_ADDRESS="unix:path=$work/p11glue.sock"
step "the served token through p11glue-client.so (pkcs11-tool -L)" \
	pkcs11-tool --module "$client" -L
step "ssh reads the key from the served token (ssh-keygen -D p11glue-client.so)" \
	ssh-keygen -D "$client"
printf 'a document signed over the socket\n' >"$work/remote-doc"
step "the served token signs (pkcs11-tool --sign -m ECDSA-SHA256 through the client)" \
	pkcs11-tool --module "$client" --token-label mykeys --login --pin 123456 \
	--sign -m ECDSA-SHA256 --signature-format openssl --label my-key \
	-i "$work/remote-doc" -o "$work/remote-doc.sig"
step "plain openssl verifies that signature" \
	openssl dgst -sha256 -verify "$work/my-key.pem" -signature "$work/remote-doc.sig" "$work/remote-doc"
step "the same token over stdin/stdout (P11GLUE_SERVER_ADDRESS='|p11glue remote ...')" \
	env P11GLUE_SERVER_ADDRESS="|$p11glue remote $store_module" \
	pkcs11-tool --module "$client" --token-label mykeys --login --pin 123456 -O --type privkey
unset P11GLUE_SERVER_ADDRESS

if [ "$failed" -ne 0 ]; then
	echo "main job: $failed of $step steps failed"
	exit 1
fi
echo "main job: all $step steps succeeded"
