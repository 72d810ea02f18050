#!/bin/bash
# Trust decisions of one user, as that user makes them (an unprivileged
# user: nobody, through setpriv, when the test runs as root), seen by
# real clients against a TLS server on loopback: curl, openssl s_client,
# gnutls-cli, Python's ssl, Java and NSS (vfychain), each in a login
# shell of that user after `p11glue setup --modules --trust --nss`.
# anchor, distrust, CRL, removal; `trust check` names the clients that
# disagree (GnuTLS's default trust file has no per-user switch) and what
# a client cannot express; a later setup keeps the decisions, --undo
# takes the files away and keeps them; --json and exit codes; files are
# never written through a link.
#
# Usage: test-user-level.sh P11GLUE_TOOL
set -u
p11glue=$(realpath -e "$1") || exit 1
here=$(cd "$(dirname "$0")" && pwd)

# As root: a private network namespace (the server's loopback) and mount
# namespace, and the user part as nobody.
if [ -z "${P11GLUE_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare --net --mount true 2>/dev/null; then
	export P11GLUE_IN_NETNS=1
	exec unshare --net --mount -- bash "$0" "$@"
fi

. "$here/../tools/tap.sh"
. "$here/tls-lib.sh"

for need in curl openssl gnutls-cli vfychain certutil modutil java javac /usr/bin/python3; do
	command -v "$need" >/dev/null || { echo "1..0 # SKIP $need is not installed"; exit 0; }
done
sanitized=false
ldd "$p11glue" | grep -q 'libasan\|libtsan' && sanitized=true

user_home=$tmp/home user_run=$tmp/run
mkdir -p "$user_home"
mkdir -m 700 "$user_run"
if [ "$(id -u)" = 0 ]; then
	# Root's programs do not read a user's ~/.config/pkcs11: the user
	# part needs another user.
	other_user || { echo "1..0 # SKIP $other_user_why"; exit 0; }
	[ -n "${P11GLUE_IN_NETNS:-}" ] && ip link set lo up
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
	user_name=nobody
	chmod 755 "$tmp"
	chown 65534:65534 "$user_home" "$user_run"
	# That user runs a copy of the build it can reach.
	p11glue=$(staged "$p11glue")
else
	as=
	user_name=$(id -un)
fi
port=$((20000 + RANDOM % 20000))
pki=$tmp/pki
make_pki "$pki" || { echo "1..0 # SKIP openssl could not make the test PKI"; exit 0; }
chmod -R a+rX "$pki"
java_setup
nssdb=$user_home/.pki/nssdb
trap 'stop_server; rm -rf "$tmp"' EXIT
start_server "$pki" "$port" || { echo "1..0 # SKIP the TLS server did not start"; exit 0; }

# p11glue as the user, in a login shell (its ~/.profile read).
pg() { run login "$(printf '%q ' "$p11glue" "$@")"; }
trust_dir=$user_home/.local/share/p11glue/trust
all=(curl openssl python java)
$sanitized || all+=(nss)

# --- set-up ------------------------------------------------------------
pg trust anchor --store "$pki/ca.pem"
if [ "$rc" = 1 ] && grep -q 'no configured writable location' <<<"$err"; then
	ok "before setup: p11-kit's registered trust module has no writable location (exit 1)"
else
	# Not an assertion about p11glue: the system may register p11glue's module.
	ok "before setup: anchor --store # SKIP the system's registry has a writable trust token"
fi
# NSS cannot load a sanitizer-built module (modutil fails): --nss only
# with a plain build.
targets=(--modules --trust)
$sanitized || targets+=(--nss)
pg setup "${targets[@]}"
if [ "$rc" = 0 ]; then ok "setup ${targets[*]}"; else
	not_ok "setup ${targets[*]}" "rc=$rc" "$out" "$err"; fi
grep -q 'not reached per user: GnuTLS' <<<"$err" &&
	ok "setup says GnuTLS's default trust file is not reached per user" ||
	not_ok "setup names what is not reached" "$err"
pg status --trust
grep -q '^trust: configured' <<<"$out" && grep -q 'not reached per user: GnuTLS' <<<"$out" &&
	ok "status: trust configured, and what is not reached per user" || not_ok "status --trust" "$out"

# --- anchor ------------------------------------------------------------
pg trust anchor --store --json "$pki/ca.pem"
if [ "$rc" = 0 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["ok"] is True and d["level"] == "user" and d["location"] == sys.argv[1], d
[r] = d["results"]
assert r["result"] == "stored" and r["certificate"] == "p11glue Test TLS Root", r
p = d["propagated"]
assert p["level"] == "user" and p["updated"] is True, p
assert any(c.endswith("/extracted/ca-certificates.crt") for c in p["changed"]), p
' "$trust_dir" <<<"$out"; then
	ok "anchor --store after setup: stored in the user's directory, files updated (JSON)"
else
	not_ok "anchor --store --json" "rc=$rc" "$out" "$err"
fi
[ -z "$(find "$trust_dir" -name '.*' -type f)" ] && ok "no temporary file is left behind" ||
	not_ok "temporary files left" "$(ls -A "$trust_dir")"
clients accept "user anchor" "${all[@]}"
clients reject "user anchor (GnuTLS's default file has no per-user switch)" gnutls
pg trust check
if [ "$rc" = 1 ] && [ "$(grep -c '^disagreement:' <<<"$out")" = 1 ] &&
   grep -q '^disagreement: "p11glue Test TLS Root" (anchor): GnuTLS: expected accept, actual reject: not in /etc/ssl/certs/ca-certificates.crt' <<<"$out"; then
	ok "trust check: GnuTLS, the one client that rejects the user's anchor, is named (exit 1)"
else
	not_ok "trust check after a user anchor" "rc=$rc" "$out" "$err"
fi
# Without the login shell's variables, the files read are the system's:
# every such client disagrees, and check says so (curl reads ~/.curlrc).
run timeout 60 $as env -i HOME="$user_home" XDG_RUNTIME_DIR="$user_run" PATH=/usr/bin:/bin "$p11glue" trust check
for c in OpenSSL GnuTLS Java; do
	grep -q "^disagreement: \"p11glue Test TLS Root\" (anchor): $c: expected accept, actual reject" <<<"$out" ||
		missing_c+=" $c"
done
if [ "$rc" = 1 ] && [ -z "${missing_c:-}" ] && ! grep -q '^disagreement: .*: \(NSS\|curl\):' <<<"$out" &&
   grep -q 'this environment does not name' <<<"$out"; then
	ok "trust check in an environment without setup's variables names OpenSSL, GnuTLS and Java"
else
	not_ok "check without the variables" "missing:${missing_c:-}" "$out"
fi

# --- distrust ----------------------------------------------------------
pg trust distrust --json "$pki/ca.pem"
if [ "$rc" = 0 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
[r] = d["results"]
assert (r["result"], r["replaced"]) == ("distrusted", "anchor"), r
' <<<"$out"; then ok "distrust replaces the user's anchor (JSON)"; else
	not_ok "distrust --json" "rc=$rc" "$out" "$err"; fi
pg trust list --filter=blocklist
grep -q 'label: p11glue Test TLS Root' <<<"$out" && grep -q 'trust: distrusted' <<<"$out" &&
	ok "trust list shows the distrusted certificate" || not_ok "list blocklist" "$out"
clients reject "user distrust" "${all[@]}" gnutls
pg trust check
[ "$rc" = 0 ] && ok "trust check: every client agrees with the distrust (exit 0)" ||
	not_ok "check after distrust" "rc=$rc" "$out"
pg trust distrust --remove "$pki/ca.pem"
[ "$rc" = 0 ] && ok "distrust --remove" || not_ok "distrust --remove" "$err"
pg trust list --filter=trust-policy
! grep -q 'p11glue Test TLS Root' <<<"$out" && ok "lifted: neither anchor nor distrusted" ||
	not_ok "lifted" "$out"
clients reject "no decision (an unknown CA)" curl openssl

# --- CRL ---------------------------------------------------------------
pg trust anchor --store "$pki/ca.pem"
pg trust crl --add --json "$pki/crl.pem"
if [ "$rc" = 0 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
[r] = d["results"]
assert r["result"] == "stored" and r["file"].startswith(sys.argv[1] + "/crls/"), r
' "$trust_dir" <<<"$out"; then ok "crl --add: in the user's crls/ (JSON)"; else
	not_ok "crl --add" "rc=$rc" "$out" "$err"; fi
pg trust list --filter=blocklist
if grep -q 'issuer: CN=p11glue Test TLS Root' <<<"$out" && grep -q 'serial: 5EED01' <<<"$out"; then
	ok "trust list shows the revocation: issuer and serial number"
else not_ok "list shows the CRL entry" "$out"; fi
pg trust list --filter=blocklist --json
/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any(e.get("serial") == "5EED01" and e["issuer"] == "CN=p11glue Test TLS Root" for e in d), d
' <<<"$out" && ok "trust list --json: the revocation's issuer and serial" || not_ok "list --json" "$out"
if $sanitized; then
	ok "NSS rejects the revoked server certificate # SKIP NSS cannot load a sanitizer-built module"
else
	clients reject "CRL revokes the server's certificate" nss
fi
clients accept "CRL (no CRL check by default)" curl openssl python java
pg trust check
if grep -q '^cannot express: "serial 5EED01 of .*" (revoked): curl: checks no CRL' <<<"$out" &&
   grep -q '^cannot express: .*(revoked): Chromium: ' <<<"$out" &&
   ! grep -q '^disagreement: "serial' <<<"$out"; then
	ok "trust check: the revocation is what curl and Chromium cannot express, NSS agrees"
else not_ok "check after CRL" "$out"; fi
pg trust crl --add "$pki/crl.pem"
[ "$rc" = 0 ] && ok "crl --add of the same CRL again: nothing to do (exit 0)" || not_ok "crl again" "$err"
pg trust crl --add "$pki/crl-old.pem"
[ "$rc" = 1 ] && grep -q 'older than the CRL of the same issuer' <<<"$err" &&
	ok "an older CRL of the same issuer is refused (exit 1)" || not_ok "older CRL" "rc=$rc" "$err"
pg trust crl --add "$pki/other.pem"
[ "$rc" = 1 ] && grep -q 'no CRL found' <<<"$err" && ok "crl --add of a certificate: no CRL (exit 1)" ||
	not_ok "crl of a cert" "rc=$rc" "$err"
pg trust crl --remove "$pki/ca.pem"
[ "$rc" = 0 ] && ok "crl --remove by the issuer's certificate" || not_ok "crl --remove" "rc=$rc" "$err"
$sanitized || clients accept "CRL removed" nss

# --- removal -----------------------------------------------------------
pg trust anchor --remove "$pki/ca.pem"
[ "$rc" = 0 ] && ok "anchor --remove" || not_ok "anchor --remove" "rc=$rc" "$err"
clients reject "user anchor removed" "${all[@]}"
pg trust anchor --remove "$pki/ca.pem"
[ "$rc" = 1 ] && grep -q 'not stored in a writable location' <<<"$err" &&
	ok "anchor --remove of what is not stored: exit 1" || not_ok "remove again" "rc=$rc" "$err"

# --- files: never through a link, never replaced ------------------------
ln -s "$tmp/target" "$trust_dir/p11glue_Other_Root.p11-kit"
pg trust anchor --store "$pki/other.pem"
if [ "$rc" = 0 ] && [ ! -e "$tmp/target" ] && [ -f "$trust_dir/p11glue_Other_Root.1.p11-kit" ]; then
	ok "a link where the file would go is not written through (another name is taken)"
else not_ok "symlink" "rc=$rc" "$(ls -la "$trust_dir")"; fi
rm -f "$trust_dir/p11glue_Other_Root.p11-kit"

# --- a later setup keeps the decisions; --undo ---------------------------
pg trust anchor --store "$pki/ca.pem"
pg setup --modules --trust
pg trust list --filter=ca-anchors
grep -q 'label: p11glue Test TLS Root' <<<"$out" && ok "a later setup keeps the user's anchor" ||
	not_ok "setup keeps decisions" "$out"
clients accept "after a later setup" curl
pg setup --trust --undo
[ "$rc" = 0 ] && [ ! -e "$user_home/.local/share/p11glue/extracted" ] &&
	! grep -q p11glue "$user_home/.curlrc" 2>/dev/null && ok "setup --trust --undo removes the files and lines" ||
	not_ok "undo" "rc=$rc" "$err"
pg trust list --filter=ca-anchors
grep -q 'label: p11glue Test TLS Root' <<<"$out" && ok "--undo keeps the decisions" || not_ok "undo keeps" "$out"
clients reject "after --undo (the system's files again)" curl openssl
pg trust anchor --remove "$pki/other.pem"
grep -q "setup --trust" <<<"$err" && ok "without setup --trust, a decision says which programs do not see it" ||
	not_ok "note without setup" "$err"

# --- usage ---------------------------------------------------------------
pg trust distrust
[ "$rc" = 2 ] && ok "distrust without a file: usage (2)" || not_ok "distrust usage rc=$rc"
pg trust crl --bogus
[ "$rc" = 2 ] && ok "crl --bogus: usage (2)" || not_ok "crl usage rc=$rc"
pg trust anchor --store "$tmp/none.pem"
[ "$rc" = 1 ] && ok "anchor --store of a missing file: exit 1" || not_ok "missing file rc=$rc"
pg trust extract --format=pem-bundle --json "$user_home/anchors.pem"
if [ "$rc" = 0 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d == {"operation": "extract", "ok": True, "format": "pem-bundle", "destination": sys.argv[1]}, d
' "$user_home/anchors.pem" <<<"$out" && grep -q 'BEGIN CERTIFICATE' "$user_home/anchors.pem"; then
	ok "extract --json: what was written"
else not_ok "extract --json" "rc=$rc" "$out" "$err"; fi

finish
