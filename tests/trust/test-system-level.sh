#!/bin/bash
# The system's trust decisions (`p11glue trust` as root), seen by real
# clients against a TLS server on loopback: curl, openssl s_client,
# gnutls-cli, Python's ssl, Java and NSS (vfychain), each reading what it
# reads by default on Debian (/etc/ssl/certs, its bundle, Java's cacerts
# built by update-ca-certificates and ca-certificates-java; NSS through
# the trust module). Anchor, distrust (of p11glue's anchor, and of a CA
# the distribution ships), CRL, removal; a later update-ca-certificates
# (--fresh too), dpkg-reconfigure ca-certificates and a package shipping
# a distrusted CA under a new name do not undo them; `trust check` reads
# the same files; setup --system --trust --undo.
#
# Root only: everything runs in private mount and network namespaces
# where /etc, /usr/share/ca-certificates, /usr/local/share/ca-certificates
# and dpkg's and debconf's state are overlays on a tmpfs, so that
# update-ca-certificates, dpkg's triggers and `p11glue setup --system`
# run for real and the real system is never changed.
#
# Usage: test-system-level.sh P11GLUE_TOOL TRUST_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
module=$(realpath -e "$2") || exit 1
here=$(cd "$(dirname "$0")" && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP the system level needs root (for private mount namespaces)"
	exit 0
fi
for need in update-ca-certificates dpkg-reconfigure curl openssl gnutls-cli vfychain certutil modutil \
	java javac keytool /usr/bin/python3; do
	command -v "$need" >/dev/null || { echo "1..0 # SKIP $need is not installed"; exit 0; }
done
if [ -z "${P11GLUE_IN_NETNS:-}" ]; then
	unshare --net --mount true 2>/dev/null || { echo "1..0 # SKIP no mount namespace"; exit 0; }
	export P11GLUE_IN_NETNS=1
	exec unshare --net --mount -- bash "$0" "$@"
fi

. "$here/../tools/tap.sh"
. "$here/tls-lib.sh"

# --- a private system --------------------------------------------------
mount --make-rprivate / || { echo "1..0 # SKIP cannot make mounts private"; exit 0; }
mkdir -p "$tmp/ov"
mount -t tmpfs tmpfs "$tmp/ov"
overlay() { # overlay DIR NAME: DIR writable here, its changes on the tmpfs
	mkdir -p "$tmp/ov/$2.up" "$tmp/ov/$2.work"
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$tmp/ov/$2.up,workdir=$tmp/ov/$2.work" "$1"
}
for d in /etc:etc /usr/share/ca-certificates:share /usr/local/share/ca-certificates:local \
	/var/lib/dpkg:dpkg /var/cache/debconf:debconf /var/lib/ca-certificates-java:cajava; do
	[ -d "${d%%:*}" ] || continue
	overlay "${d%%:*}" "${d##*:}" || { echo "1..0 # SKIP overlayfs is not available"; exit 0; }
done
ip link set lo up
unset P11GLUE_CONFIG
export DEBIAN_FRONTEND=noninteractive
sanitized=false
ldd "$p11glue" | grep -q 'libasan\|libtsan' && sanitized=true

as=
user_home=$tmp/root user_run=$tmp/run
mkdir -p "$user_home"
mkdir -m 700 "$user_run"
export HOME=$user_home XDG_RUNTIME_DIR=$user_run
port=$((20000 + RANDOM % 20000))
pki=$tmp/pki
make_pki "$pki" || { echo "1..0 # SKIP openssl could not make the test PKI"; exit 0; }
java_setup
nssdb=$tmp/nssdb
mkdir -p "$nssdb"
certutil -N -d "sql:$nssdb" --empty-password
modutil -dbdir "sql:$nssdb" -add p11glue-trust -libfile "$module" -force >/dev/null 2>&1
trap 'stop_server; umount -l "$tmp/ov" 2>/dev/null; rm -rf "$tmp"' EXIT
start_server "$pki" "$port" || { echo "1..0 # SKIP the TLS server did not start"; exit 0; }

pg() { run login "$(printf '%q ' "$p11glue" "$@")"; }
all=(curl openssl gnutls python java)
$sanitized || all+=(nss)
ours=/usr/local/share/ca-certificates/p11glue/p11glue-p11glue_Test_TLS_Root.crt
java_has() { keytool -list -cacerts -storepass changeit 2>/dev/null | grep -c "p11glue_test_tls_root\|test-root"; }
upgrade() { # what a package upgrade does: update-ca-certificates, then the postinst
	update-ca-certificates >/dev/null 2>&1
	update-ca-certificates --fresh >/dev/null 2>&1
	dpkg-reconfigure ca-certificates >/dev/null 2>&1
}

# --- set-up ------------------------------------------------------------
pg trust anchor --store "$pki/ca.pem"
if [ "$rc" = 1 ] && grep -q 'no configured writable location' <<<"$err"; then
	ok "before setup: p11-kit's registered trust module has no writable location (exit 1)"
else
	ok "before setup: anchor --store # SKIP the system's registry has a writable trust token"
fi
pg setup --system --modules --trust
[ "$rc" = 0 ] && [ -x /etc/ca-certificates/update.d/p11glue ] &&
	[ "$(head -n 1 /etc/ca-certificates/update.d/p11glue)" = '#!/bin/sh' ] &&
	ok "setup --system --modules --trust: update-ca-certificates' hook installed" ||
	not_ok "setup --system" "rc=$rc" "$out" "$err"

# --- anchor ------------------------------------------------------------
pg trust anchor --store --json "$pki/ca.pem"
if [ "$rc" = 0 ] && /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["level"] == "system" and d["location"] == "/etc/p11glue/trust", d
assert d["results"][0]["result"] == "stored", d
p = d["propagated"]
assert p["updated"] and "+" + sys.argv[1] in p["changed"], p
' "$ours" <<<"$out"; then
	ok "anchor --store as root: in /etc/p11glue/trust, and an input of update-ca-certificates (JSON)"
else not_ok "anchor --store --json" "rc=$rc" "$out" "$err"; fi
clients accept "system anchor" "${all[@]}"
pg trust check
[ "$rc" = 0 ] && grep -q 'OpenSSL, curl, GnuTLS, GnuTLS-p11, NSS, Chromium and Java agree' <<<"$out" &&
	ok "trust check: every client agrees with the system's anchor" || not_ok "check" "rc=$rc" "$out"
pg trust anchor --remove "$pki/ca.pem"
[ "$rc" = 0 ] && [ ! -e "$ours" ] && ok "anchor --remove: its file is gone" || not_ok "remove" "$err"
clients reject "system anchor removed" "${all[@]}"
[ "$(java_has)" = 0 ] && ok "Java's cacerts lost the entry (hooks told)" || not_ok "java entry kept"
pg trust anchor --store "$pki/ca.pem"
upgrade
clients accept "system anchor, after update-ca-certificates (--fresh) and dpkg-reconfigure" "${all[@]}"

# --- distrust ----------------------------------------------------------
pg trust distrust "$pki/ca.pem"
[ "$rc" = 0 ] && [ ! -e "$ours" ] && ok "distrust replaces p11glue's anchor" || not_ok "distrust" "$err"
clients reject "system distrust" "${all[@]}"
upgrade
clients reject "system distrust, after update-ca-certificates (--fresh) and dpkg-reconfigure" "${all[@]}"
pg trust check
[ "$rc" = 0 ] && ok "trust check agrees with the distrust" || not_ok "check distrust" "$out"
pg trust distrust --remove "$pki/ca.pem"

# --- distrust of a CA the distribution ships ----------------------------
mkdir -p /usr/share/ca-certificates/p11glue-test
cp "$pki/ca.pem" /usr/share/ca-certificates/p11glue-test/test-root.crt
echo p11glue-test/test-root.crt >>/etc/ca-certificates.conf
update-ca-certificates >/dev/null 2>&1
clients accept "a CA the distribution ships" curl gnutls java
pg trust distrust --verbose "$pki/ca.pem"
grep -qx '!p11glue-test/test-root.crt' /etc/ca-certificates.conf &&
	grep -qx '# p11glue-test/test-root.crt' /etc/ca-certificates.conf &&
	ok "distrust deselects it in /etc/ca-certificates.conf, in p11glue's block" ||
	not_ok "deselected" "$(tail -n 5 /etc/ca-certificates.conf)" "$err"
clients reject "distrusted distribution CA" "${all[@]}"
# An upgrade that ships the same certificate under another name: the hook
# deselects that one too.
cp "$pki/ca.pem" /usr/share/ca-certificates/p11glue-test/test-root-2.crt
echo p11glue-test/test-root-2.crt >>/etc/ca-certificates.conf
update-ca-certificates >/dev/null 2>&1
grep -qx '!p11glue-test/test-root-2.crt' /etc/ca-certificates.conf &&
	ok "the hook deselects the same CA shipped under a new name" ||
	not_ok "new name" "$(tail -n 6 /etc/ca-certificates.conf)"
clients reject "distrusted CA shipped again under a new name" curl openssl gnutls java
dpkg-reconfigure ca-certificates >/dev/null 2>&1
grep -qx '!p11glue-test/test-root.crt' /etc/ca-certificates.conf &&
	ok "dpkg-reconfigure ca-certificates keeps the deselection" || not_ok "reconfigure"
clients reject "distrusted CA after dpkg-reconfigure" curl gnutls java
pg trust distrust --remove "$pki/ca.pem"
grep -qx 'p11glue-test/test-root.crt' /etc/ca-certificates.conf &&
	grep -qx 'p11glue-test/test-root-2.crt' /etc/ca-certificates.conf &&
	! grep -q '^# p11glue-test' /etc/ca-certificates.conf &&
	ok "distrust --remove selects both names again" || not_ok "reselected" "$(tail -n 6 /etc/ca-certificates.conf)"
clients accept "distribution CA trusted again" curl gnutls java
# The distribution stops shipping it.
sed -i '/p11glue-test/d' /etc/ca-certificates.conf
rm -rf /usr/share/ca-certificates/p11glue-test
update-ca-certificates --fresh >/dev/null 2>&1

# --- CRL -----------------------------------------------------------------
pg trust crl --add "$pki/crl.pem"
[ "$rc" = 1 ] && grep -q 'not a certificate of this location' <<<"$err" &&
	ok "a CRL whose issuer is not in /etc/p11glue/trust is refused, with why" ||
	not_ok "crl without issuer" "rc=$rc" "$err"
pg trust anchor --store "$pki/ca.pem"
pg trust crl --add "$pki/crl.pem"
[ "$rc" = 0 ] && [ -n "$(ls /etc/p11glue/trust/crls/)" ] && ok "crl --add into /etc/p11glue/trust/crls" ||
	not_ok "crl --add" "rc=$rc" "$err"
if $sanitized; then
	ok "NSS rejects the revoked certificate # SKIP NSS cannot load a sanitizer-built module"
else
	clients reject "system CRL" nss
fi
clients accept "system CRL (no CRL check by default)" curl openssl gnutls python java
pg trust check
if [ "$rc" = 0 ] && grep -q '(revoked): GnuTLS: checks no CRL' <<<"$out" &&
   grep -q '(revoked): OpenSSL: checks no CRL' <<<"$out"; then
	ok "trust check: agreement, and what does not check CRLs is named"
else not_ok "check crl" "rc=$rc" "$out"; fi
pg trust crl --remove "$pki/crl.pem"

# --- check reads what the clients read ----------------------------------
# The bundle edited behind everyone's back: GnuTLS (which reads only it)
# rejects, and check names it; OpenSSL still finds the CA in /etc/ssl/certs.
/usr/bin/python3 - "$pki/ca.pem" <<'EOF'
import sys
ca = open(sys.argv[1]).read().strip()
b = open("/etc/ssl/certs/ca-certificates.crt").read()
open("/etc/ssl/certs/ca-certificates.crt", "w").write(b.replace(ca + "\n", ""))
EOF
clients reject "the CA taken out of the bundle by hand" gnutls
pg trust check
grep -q '^disagreement: "p11glue Test TLS Root" (anchor): GnuTLS: expected accept, actual reject: not in /etc/ssl/certs/ca-certificates.crt' <<<"$out" &&
	[ "$rc" = 1 ] && ok "trust check names GnuTLS, which reads the bundle" || not_ok "check planted" "$out"
update-ca-certificates >/dev/null 2>&1
clients accept "update-ca-certificates puts it back" gnutls

# --- undo ----------------------------------------------------------------
pg setup --system --trust --undo
[ "$rc" = 0 ] && [ ! -e /etc/ca-certificates/update.d/p11glue ] && [ ! -e "$ours" ] &&
	ok "setup --system --trust --undo: hook and p11glue's inputs gone" || not_ok "undo" "rc=$rc" "$err"
[ -n "$(ls /etc/p11glue/trust)" ] && ok "--undo keeps the decisions in /etc/p11glue/trust" || not_ok "undo keeps"
clients reject "after --undo" curl gnutls

finish
