#!/bin/bash
# Real browsers, headless, through the session service: after `p11glue
# setup --modules --nss` (the default mode: NSS gets the proxy module,
# whose registry names p11glue-client.so) and one `p11glue unlock`,
# Chromium (an AutoSelectCertificateForUrls policy, ~/.pki/nssdb) and
# Firefox ESR (a profile Firefox made, found through profiles.ini, with
# security.default_personal_cert "Select Automatically") present the
# store's client certificate to a local TLS server that requires one.
# The server's record is the outcome checked: it saw the certificate the
# token holds (its SHA-256 fingerprint), and no pinentry was asked. After
# `p11glue lock` neither browser gets the certificate through: Firefox
# logs in, so the service asks through its pinentry, which cancels;
# headless Chromium neither logs in nor sends the certificate, and waits
# until its time bound. The test's CA signs
# the server's and the client's certificates; both browsers trust it
# through their NSS databases (certutil), so no certificate error is
# ignored.
#
# Usage: test-service-browsers.sh P11GLUE STORE_MODULE PINENTRY SERVER
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
fake_pinentry=$(realpath -e "$3") || exit 1
server_py=$(realpath -e "$4") || exit 1
here=$(cd "$(dirname "$0")" && pwd)

. "$here/service-lib.sh"
chromium=$(command -v chromium)
firefox=$(command -v firefox-esr)
[ -n "$chromium" ] || [ -n "$firefox" ] || skip_all "neither chromium nor firefox-esr is installed"
need openssl python3 certutil modutil

# Loopback up in the private network namespace (nothing else to reach).
[ -n "${P11GLUE_IN_NETNS:-}" ] && ip link set lo up 2>/dev/null

# ---------------------------------------------------------------------------
# The test's CA, the server's certificate, and a client key on a store
# token with a certificate from that CA (p11glue request, then import:
# the certificate takes the key's ID, the hash of its public key).
pki=$tmp/pki
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=p11glue browsers test CA" -keyout "$pki/ca.key" -out "$pki/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
	>/dev/null 2>&1
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$pki/server.key" -out "$pki/server.csr" >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n' \
	>"$pki/server.ext"
openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
	-days 2 -extfile "$pki/server.ext" -out "$pki/server.pem" >/dev/null 2>&1

new_store
run keygen k-tls ec:secp256r1
ran "a key for TLS client authentication on a fresh store token"
run client "$p11glue" request --module "$store" --subject "CN=p11glue browser user" \
	--output "$pki/client.csr" "pkcs11:token=test;object=k-tls?pin-source=$tmp/pin"
ran "p11glue request: a certification request signed inside the token"
printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n' >"$pki/client.ext"
openssl x509 -req -in "$pki/client.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
	-days 2 -extfile "$pki/client.ext" -out "$pki/client.pem" >/dev/null 2>&1
run client "$p11glue" import --module "$store" "$pki/client.pem" "pkcs11:token=test?pin-source=$tmp/pin"
ran "p11glue import: the CA's certificate next to the key"
fpr=$(openssl x509 -in "$pki/client.pem" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g')

# ---------------------------------------------------------------------------
# The user's browsers as setup finds them: a Firefox profile that Firefox
# made itself (its first run, headless) and that profiles.ini lists;
# Chromium's ~/.pki/nssdb, which setup makes.
profile=$HOME/.mozilla/firefox/p11glue.default-release
if [ -n "$firefox" ]; then
	mkdir -p "$profile"
	printf '[Profile0]\nName=default-release\nIsRelative=1\nPath=p11glue.default-release\nDefault=1\n\n[General]\nStartWithLastProfile=1\nVersion=2\n' \
		>"$HOME/.mozilla/firefox/profiles.ini"
	cat >"$profile/user.js" <<'PREFS'
user_pref("security.default_personal_cert", "Select Automatically");
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.enabled", false);
PREFS
	run client timeout 120 "$firefox" --headless --no-remote --profile "$profile" \
		--screenshot "$tmp/first-run.png" about:blank
	if [ -f "$profile/cert9.db" ]; then ok "Firefox's first run makes its profile's NSS database"
	else not_ok "Firefox's first run makes its profile's NSS database" "exit status $rc" "stderr: $err"; fi
fi

# Chromium reads AutoSelectCertificateForUrls from
# /etc/chromium/policies/managed only (Debian's build ignores --policy):
# the test's copy of /etc/chromium is mounted over it in a mount
# namespace of the test's own, so the real /etc is never touched.
chromium_etc=$tmp/etc-chromium
mkdir -p "$chromium_etc/policies/managed"
for f in /etc/chromium/*; do [ -f "$f" ] && cp "$f" "$chromium_etc/"; done
# chromium_ns: the prefix that runs a command where /etc/chromium is the
# test's copy (nothing to add when the whole test has its own mount
# namespace).
chromium_ns=()
[ -n "${P11GLUE_IN_NETNS:-}" ] || chromium_ns=(unshare --user --map-root-user --mount -- sh -c
	'mount --bind "$0" /etc/chromium && exec "$@"' "$chromium_etc")
if [ -n "$chromium" ]; then
	if [ -n "${P11GLUE_IN_NETNS:-}" ] && [ -d /etc/chromium ] &&
		mount --bind "$chromium_etc" /etc/chromium; then
		ok "Chromium's policies: the test's own, in a private mount namespace"
	elif [ -z "${P11GLUE_IN_NETNS:-}" ] && "${chromium_ns[@]}" true 2>/dev/null; then
		ok "Chromium's policies: the test's own, in a private user and mount namespace"
	else
		not_ok "Chromium's policies: the test's own, in a private mount namespace" \
			"needs /etc/chromium, and root or unprivileged user namespaces (unshare)"
	fi
fi

# ---------------------------------------------------------------------------
# The service, and setup in its default mode.
: >"$tmp/answers"   # every pinentry dialog is cancelled
run start_service
ran "p11glue service listens on the user's socket"
run client "$p11glue" setup --modules --nss
ran "p11glue setup --modules --nss (the session service's mode)"
has "... adds the proxy module to ~/.pki/nssdb" "$out" "*created $HOME/.pki/nssdb/pkcs11.txt*"
[ -n "$firefox" ] && has "... and to the Firefox profile" "$out" "*changed $profile/pkcs11.txt*"
# Both browsers trust the test's CA (the server's certificate).
for db in "$HOME/.pki/nssdb" ${firefox:+"$profile"}; do
	client certutil -A -d "sql:$db" -n "p11glue browsers test CA" -t C,, -i "$pki/ca.pem"
done

# ---------------------------------------------------------------------------
# The server, and the browsers' fetches.
"$server_py" "$pki/server.pem" "$pki/server.key" "$pki/ca.pem" "$tmp/port" "$tmp/server.log" \
	2>"$tmp/server.err" &
pids+=($!)
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port" 2>/dev/null)
url=https://127.0.0.1:$port/
if [ -n "$port" ]; then ok "a TLS server that requires a client certificate"
else not_ok "a TLS server that requires a client certificate" "$(cat "$tmp/server.err")"; fi
printf '{"AutoSelectCertificateForUrls":["{\\"pattern\\":\\"https://127.0.0.1:%s\\",\\"filter\\":{}}"]}\n' \
	"$port" >"$chromium_etc/policies/managed/p11glue-test.json"

# Each fetch: a fresh server log; the browser bounded in time. Chromium:
# a fresh profile each time; --no-sandbox, as its sandbox refuses root.
chromium_fetch() {
	local t=$SECONDS
	: >"$tmp/server.log"
	rm -rf "$tmp/chromium-profile"
	run client "${chromium_ns[@]}" timeout 60 "$chromium" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$tmp/chromium-profile" --dump-dom "$url"
	echo "# Chromium: exit status $rc after $((SECONDS - t)) s"
}
firefox_fetch() {
	local t=$SECONDS
	: >"$tmp/server.log"
	rm -f "$tmp/firefox.png"
	run client timeout 60 "$firefox" --headless --no-remote --profile "$profile" \
		--screenshot "$tmp/firefox.png" "$url"
	echo "# Firefox: exit status $rc after $((SECONDS - t)) s"
}
seen() { grep -c "^seen sha256=$fpr " "$tmp/server.log" 2>/dev/null; }
server_log() { cat "$tmp/server.log" 2>/dev/null; }

run client "$p11glue" unlock --pin-source "$tmp/pin"
ran "p11glue unlock"
: >"$PINENTRY_LOG"
if [ -n "$chromium" ]; then
	chromium_fetch
	has "unlocked: Chromium presents the token's certificate, no PIN" "$(server_log)" \
		"*seen sha256=$fpr subject=CN=p11glue browser user*"
	has "... and gets the page" "$out" "*client certificate sha256=$fpr*"
else
	skip "unlocked: Chromium" "chromium is not installed"
fi
if [ -n "$firefox" ]; then
	firefox_fetch
	has "unlocked: Firefox presents the token's certificate, no PIN" "$(server_log)" \
		"*seen sha256=$fpr subject=CN=p11glue browser user*"
	if [ -s "$tmp/firefox.png" ]; then ok "... and shows the page"
	else not_ok "... and shows the page" "exit status $rc" "stderr: $err"; fi
else
	skip "unlocked: Firefox" "firefox-esr is not installed"
fi
same "... no pinentry dialog" "$(getpins)" 0

run "$p11glue" lock
ran "p11glue lock"
: >"$PINENTRY_LOG"
if [ -n "$chromium" ]; then
	chromium_fetch
	same "locked: Chromium does not get the certificate through" "$(seen)" 0
	lacks "... nor the page" "$out" "*client certificate sha256=*"
fi
if [ -n "$firefox" ]; then
	: >"$PINENTRY_LOG"
	firefox_fetch
	same "locked: Firefox does not get the certificate through" "$(seen)" 0
	has "... its login made the service ask through pinentry (cancelled)" "$(getpins)" "[1-9]*"
fi
finish
