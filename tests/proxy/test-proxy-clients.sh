#!/bin/bash
# p11glue-proxy.so driven by real clients against a real SoftHSM2 token:
# pkcs11-tool (slots, token and PIN set-up, key generation, signing, its
# self-test), openssl (verifies what the token signed), ssh-keygen -D and
# NSS (modutil, certutil); plus enable-in / disable-in for the proxy.
#
# Usage: test-proxy-clients.sh PROXY_MODULE
# Environment (set by meson, found by hand otherwise):
#   P11GLUE_TEST_SOFTHSM, P11GLUE_TEST_OPENSC, P11GLUE_TEST_P11KIT_TRUST
set -u
proxy=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/../tools/tap.sh"

# As tap.sh's, but a diagnostic of several lines stays a TAP comment.
not_ok() {
	local arg line
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift
	for arg in "$@"; do
		while IFS= read -r line; do printf '#   %s\n' "$line"; done <<<"$arg"
	done
}

# Every client call is time-bounded.
bound() { timeout 60 "$@"; }

skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# has NAME TEXT PATTERN: a test that TEXT matches the glob PATTERN.
# $3 is a glob pattern on purpose.
# shellcheck disable=SC2254
has() {
	case $2 in
	$3) ok "$1" ;;
	*) not_ok "$1" "output: $2" "want pattern: $3" ;;
	esac
}
# shellcheck disable=SC2254
lacks() {
	case $2 in
	$3) not_ok "$1" "output: $2" "unwanted pattern: $3" ;;
	*) ok "$1" ;;
	esac
}
# ran NAME: exit status 0 from the last run, or a failure with its output.
ran() {
	if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1" "exit status $rc" "stdout: $out" "stderr: $err"; fi
}
failed_run() {
	if [ "$rc" != 0 ]; then ok "$1"; else not_ok "$1" "exit status 0, want failure" "stdout: $out"; fi
}

find_lib() {
	for f in "$@"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
softhsm=${P11GLUE_TEST_SOFTHSM:-$(find_lib /usr/lib/*-linux-gnu/softhsm/libsofthsm2.so /usr/lib/softhsm/libsofthsm2.so)}
opensc=${P11GLUE_TEST_OPENSC:-$(find_lib /usr/lib/*-linux-gnu/pkcs11/opensc-pkcs11.so)}
trust=${P11GLUE_TEST_P11KIT_TRUST:-$(find_lib /usr/lib/*-linux-gnu/pkcs11/p11-kit-trust.so)}
for need in pkcs11-tool openssl; do
	if ! command -v "$need" >/dev/null; then
		echo "1..0 # SKIP $need is not installed"
		exit 0
	fi
done
if [ -z "$softhsm" ] || [ ! -f "$proxy" ]; then
	echo "1..0 # SKIP needs SoftHSM2 and the proxy module"
	exit 0
fi

# A private SoftHSM2 token directory and a registry holding softhsm2,
# opensc (no card: no token) and p11-kit-trust as Debian ships it
# (disabled in the proxy by its p11-kit name).
mkdir -p "$tmp/tokens" "$tmp/conf/modules"
printf 'directories.tokendir = %s\nobjectstore.backend = file\n' "$tmp/tokens" >"$tmp/softhsm2.conf"
export SOFTHSM2_CONF="$tmp/softhsm2.conf"
export P11GLUE_CONFIG="$tmp/conf"
unset PKCS11_MODULE_PATH
printf 'module: %s\n' "$softhsm" >"$tmp/conf/modules/softhsm2.module"
[ -n "$opensc" ] && printf 'module: %s\n' "$opensc" >"$tmp/conf/modules/opensc-pkcs11.module"
[ -n "$trust" ] && printf 'module: %s\ntrust-policy: yes\ndisable-in: p11-kit-proxy\n' "$trust" \
	>"$tmp/conf/modules/p11-kit-trust.module"

# A proxy built with sanitizers needs their runtimes loaded first in the
# clients; their own leaks at exit are not the proxy's.
san_libs=$(ldd "$proxy" 2>/dev/null | sed -n 's/^[[:space:]]*lib\(asan\|ubsan\|tsan\)\.so[^ ]* => \([^ ]*\).*/\2/p' | tr '\n' ' ')
# client CMD...: a program that loads the proxy ($san_extra: more
# sanitizer options).
client() {
	if [ -n "$san_libs" ]; then
		bound env "LD_PRELOAD=${san_libs% }" \
			"ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0${san_extra:-}" \
			"TSAN_OPTIONS=${TSAN_OPTIONS:-}${san_extra:-}" "$@"
	else
		bound "$@"
	fi
}

so_pin=12345678
pin=87654321
tool() { client pkcs11-tool --module "$proxy" "$@"; }
direct() { bound pkcs11-tool --module "$softhsm" "$@"; }

# ---------------------------------------------------------------------------
# Slots: the proxy shows SoftHSM's slots, nothing from opensc or the
# trust module.
run tool -L
ran "pkcs11-tool -L through the proxy"
has "the SoftHSM slot is listed, uninitialized" "$out" "*SoftHSM slot*token state:*uninitialized*"
lacks "the trust module is disabled in the proxy" "$out" "*System Trust*"
proxy_slots=$(printf '%s\n' "$out" | grep -c '^Slot ')
run direct -L
direct_slots=$(printf '%s\n' "$out" | grep -c '^Slot ')
if [ "$proxy_slots" = "$direct_slots" ] && [ "$proxy_slots" -ge 1 ]; then
	ok "as many slots as SoftHSM itself ($proxy_slots)"
else
	not_ok "as many slots as SoftHSM itself" "proxy: $proxy_slots, direct: $direct_slots"
fi

# ---------------------------------------------------------------------------
# Token and PIN set-up through the proxy, checked on SoftHSM directly.
run tool --init-token --label t1 --so-pin "$so_pin"
ran "--init-token through the proxy"
run direct -L
has "SoftHSM has the token the proxy initialized" "$out" "*token label*: t1*"
run tool --token-label t1 --init-pin --login --so-pin 00000000 --new-pin "$pin"
failed_run "--init-pin with a wrong SO PIN fails"
run direct --token-label t1 -L
lacks "... and set no user PIN" "$out" "*t1*PIN initialized*"
run tool --token-label t1 --init-pin --login --so-pin "$so_pin" --new-pin "$pin"
ran "--init-pin through the proxy"
run direct --token-label t1 --login --pin "$pin" -O
ran "SoftHSM accepts the user PIN set through the proxy"

# ---------------------------------------------------------------------------
# Key generation, signing (CKM_ECDSA over a SHA-256 hash) and openssl
# verifying the signature with the public key read through the proxy.
run tool --token-label t1 --login --pin "$pin" --keypairgen --key-type EC:prime256v1 --id 02 --label k1
ran "--keypairgen EC:prime256v1 through the proxy"
run tool --token-label t1 --login --pin 00000000 -O
failed_run "login with a wrong user PIN fails"
has "... with CKR_PIN_INCORRECT" "$err" "*CKR_PIN_INCORRECT*"

# OpenSC 0.23's pkcs11-tool reads freed memory when it decodes an EC public
# key, with SoftHSM alone too; under sanitizers it goes on, and only a
# report that names p11glue counts.
san_extra=:halt_on_error=0:exitcode=0 run tool --token-label t1 --read-object --type pubkey --id 02 -o "$tmp/pub.der"
if [ "$rc" = 0 ] && ! grep -q p11glue <<<"$err"; then
	ok "--read-object of the public key through the proxy"
else
	not_ok "--read-object of the public key through the proxy" "exit status $rc" "stderr: $err"
fi
run direct --token-label t1 --read-object --type pubkey --id 02 -o "$tmp/pub-direct.der"
if cmp -s "$tmp/pub.der" "$tmp/pub-direct.der"; then
	ok "the proxy returns the key SoftHSM holds"
else
	not_ok "the proxy returns the key SoftHSM holds" "$(od -An -tx1 "$tmp/pub.der" | head -2)"
fi
run openssl pkey -pubin -inform DER -in "$tmp/pub.der" -out "$tmp/pub.pem"
ran "the public key is a valid SubjectPublicKeyInfo"

printf 'signed through p11glue-proxy\n' >"$tmp/data"
openssl dgst -sha256 -binary "$tmp/data" >"$tmp/data.sha256"
run tool --token-label t1 --login --pin "$pin" --sign -m ECDSA --id 02 \
	-i "$tmp/data.sha256" -o "$tmp/sig.der" --signature-format openssl
ran "--sign -m ECDSA through the proxy"
run openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/sig.der" "$tmp/data"
ran "openssl verifies the signature"
has "... and says so" "$out" "Verified OK"
printf 'something else\n' >"$tmp/other"
run openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/sig.der" "$tmp/other"
failed_run "the signature does not verify other data"
run tool --token-label t1 --sign -m ECDSA --id 02 -i "$tmp/data.sha256" -o "$tmp/sig2.der"
failed_run "signing without logging in fails"

run tool --token-label t1 --login --pin "$pin" --test
ran "pkcs11-tool --test through the proxy"
has "... reports no errors" "$out" "*No errors*"

# ---------------------------------------------------------------------------
# OpenSSH reads the public key through the proxy; it must be the key
# SoftHSM holds (converted by ssh-keygen from the directly read key).
if command -v ssh-keygen >/dev/null; then
	openssl pkey -pubin -inform DER -in "$tmp/pub-direct.der" -out "$tmp/pub-direct.pem" 2>/dev/null
	want=$(ssh-keygen -i -m PKCS8 -f "$tmp/pub-direct.pem" 2>/dev/null | cut -d' ' -f1-2)
	run client ssh-keygen -D "$proxy"
	ran "ssh-keygen -D on the proxy"
	got=$(printf '%s\n' "$out" | grep '^ecdsa-sha2-nistp256 ' | cut -d' ' -f1-2)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "ssh-keygen -D prints the token's public key"
	else
		not_ok "ssh-keygen -D prints the token's public key" "got:  $got" "want: $want"
	fi
else
	skip "ssh-keygen -D on the proxy" "ssh-keygen is not installed"
	skip "ssh-keygen -D prints the token's public key" "ssh-keygen is not installed"
fi

# ---------------------------------------------------------------------------
# NSS loads the proxy and lists a certificate written through it.
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/cert-key.pem" -subj "/CN=p11glue proxy test" -days 2 \
	-outform DER -out "$tmp/cert.der" 2>/dev/null
run tool --token-label t1 --login --pin "$pin" --write-object "$tmp/cert.der" --type cert --id 01 --label c1
ran "--write-object of a certificate through the proxy"
if command -v certutil >/dev/null && command -v modutil >/dev/null; then
	mkdir "$tmp/nss"
	run client certutil -N -d "sql:$tmp/nss" --empty-password
	ran "certutil -N creates an NSS database"
	run client modutil -dbdir "sql:$tmp/nss" -add p11glue -libfile "$proxy" -force
	ran "modutil -add loads the proxy"
	run client modutil -dbdir "sql:$tmp/nss" -list p11glue -force
	has "modutil lists the proxy with the token" "$out" "*Name: p11glue*Token Name: t1 *User Pin: Initialized*"
	run client certutil -L -d "sql:$tmp/nss" -h all
	ran "certutil -L -h all"
	has "certutil lists the token's certificate as t1:c1" "$out" "*t1:c1 *"
	# Reading one certificate makes NSS log in to the token: PIN from a file.
	(umask 077 && printf '%s\n' "$pin" >"$tmp/nss-pin")
	client certutil -L -d "sql:$tmp/nss" -h t1 -f "$tmp/nss-pin" -n t1:c1 -r \
		>"$tmp/nss-cert.der" 2>"$tmp/err" </dev/null
	if cmp -s "$tmp/nss-cert.der" "$tmp/cert.der"; then
		ok "NSS logs in and reads back the certificate that was written"
	else
		not_ok "NSS logs in and reads back the certificate that was written" \
			"got $(wc -c <"$tmp/nss-cert.der") bytes, want $(wc -c <"$tmp/cert.der")" "$(cat "$tmp/err")"
	fi
	run client certutil -L -d "sql:$tmp/nss" -h t1 -f "$tmp/nss-pin" -n t1:nope -r </dev/null
	failed_run "NSS finds no certificate under another label"
	printf '00000000\n' >"$tmp/nss-bad-pin"
	run client certutil -L -d "sql:$tmp/nss" -h t1 -f "$tmp/nss-bad-pin" -n t1:c1 -r </dev/null
	failed_run "NSS with a wrong PIN reads nothing"
	has "... and says the password is wrong" "$err" "*SEC_ERROR_BAD_PASSWORD*"
else
	for t in "certutil -N" "modutil -add" "modutil -list" "certutil -L" "t1:c1" "read back" \
		"other label" "wrong PIN" "wrong PIN message"; do
		skip "NSS: $t" "libnss3-tools is not installed"
	done
fi

# ---------------------------------------------------------------------------
# A module file that is not a configuration file (one word, no "module:")
# next to the good ones: clients keep working, and the file is reported
# once on stderr, by name.
printf 'nokey\n' >"$tmp/conf/modules/bad.module"
count_bad() { printf '%s\n' "$1" | grep -c "$tmp/conf/modules/bad.module"; }
run tool -L
ran "pkcs11-tool -L with a bad module file"
has "... lists SoftHSM's token" "$out" "*token label*: t1*"
same_count() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got $2, want $3" "stderr: $err"; fi
}
same_count "... and names the bad file once on stderr" "$(count_bad "$err")" 1
if command -v ssh-keygen >/dev/null; then
	run client ssh-keygen -D "$proxy"
	ran "ssh-keygen -D with a bad module file"
	# (The certificate written for NSS shows up as a key too.)
	got=$(printf '%s\n' "$out" | grep '^ecdsa-sha2-nistp256 ' | cut -d' ' -f1-2)
	if [ -n "$want" ] && grep -qxF "$want" <<<"$got"; then
		ok "... prints the token's public key"
	else
		not_ok "... prints the token's public key" "got:  $got" "want: $want"
	fi
	same_count "... and names the bad file once on stderr" "$(count_bad "$err")" 1
else
	for t in "ssh-keygen -D" "key" "stderr"; do skip "bad module file: $t" "ssh-keygen is not installed"; done
fi
rm "$tmp/conf/modules/bad.module"

# A registered module that cannot initialize for this user (SoftHSM
# without its configuration file): a program loading the proxy says
# nothing about it on every start; `p11glue status -v` names it, once.
run client env SOFTHSM2_CONF="$tmp/no-such.conf" pkcs11-tool --module "$proxy" -I
has "pkcs11-tool -I with a module that cannot initialize: the proxy loads" "$out" "*Library*p11glue proxy module*"
lacks "... says nothing about that module on stderr" "$err" "*softhsm2*"
p11glue_tool=$(dirname "$proxy")/../tools/p11glue
if [ -x "$p11glue_tool" ]; then
	run env SOFTHSM2_CONF="$tmp/no-such.conf" "$p11glue_tool" status --modules -v
	has "... p11glue status -v names it and why" "$out" \
		"*registered: softhsm2: *(cannot be used: C_Initialize failed: CKR_*"
else
	skip "... p11glue status -v names it and why" "the p11glue command is not built beside the proxy"
fi

# ---------------------------------------------------------------------------
# enable-in / disable-in, with the proxy's names: p11glue-proxy and, for
# files written for p11-kit, p11-kit-proxy. SoftHSM then shows up or not.
softhsm_slots() {
	P11GLUE_CONFIG=$1 client pkcs11-tool --module "$proxy" -L 2>/dev/null | grep -c '^Slot .*SoftHSM'
}
with_line() {
	local dir=$tmp/conf-$2
	mkdir -p "$dir/modules"
	printf 'module: %s\n%s\n' "$softhsm" "$1" >"$dir/modules/softhsm2.module"
	echo "$dir"
}
check_slots() {
	local name=$1 want=$2 got
	got=$(softhsm_slots "$3")
	if [ "$want" = some ] && [ "$got" -ge 1 ]; then
		ok "$name"
	elif [ "$want" = 0 ] && [ "$got" = 0 ]; then
		ok "$name"
	else
		not_ok "$name" "SoftHSM slots through the proxy: $got, want $want"
	fi
}
check_slots "disable-in: p11-kit-proxy hides the module" 0 "$(with_line 'disable-in: p11-kit-proxy' a)"
check_slots "disable-in: p11glue-proxy hides the module" 0 "$(with_line 'disable-in: other, p11glue-proxy' b)"
check_slots "disable-in of another program does not" some "$(with_line 'disable-in: firefox' c)"
check_slots "enable-in: p11glue-proxy shows the module" some "$(with_line 'enable-in: p11glue-proxy' d)"
check_slots "enable-in: p11-kit-proxy shows the module" some "$(with_line 'enable-in: p11-kit-proxy' e)"
check_slots "enable-in of another program only hides it" 0 "$(with_line 'enable-in: firefox' f)"
check_slots "enable-in of the client program is not the proxy's" 0 "$(with_line 'enable-in: pkcs11-tool' g)"

# A module that cannot load is skipped, unless it is critical.
dir=$(with_line '' h)
printf 'module: %s\n' "$tmp/no-such-module.so" >"$dir/modules/absent.module"
check_slots "a module that fails to load is skipped" some "$dir"
dir=$(with_line '' i)
printf 'module: %s\ncritical: yes\n' "$tmp/no-such-module.so" >"$dir/modules/absent.module"
P11GLUE_CONFIG=$dir run tool -L
failed_run "a critical module that fails to load fails the proxy"

finish
