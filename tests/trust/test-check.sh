#!/bin/bash
# p11glue trust check: all consumers agree on the Debian bundle and on
# the fixtures (anchors, a blocklist, a CRL revocation); a disagreement
# planted in each artefact a consumer reads is found and named, and the
# real consumer (openssl verify, keytool, vfychain) shows it is real.
set -u
p11glue=$(realpath "$1") module=$(realpath "$2") dump=$(realpath "$3")
here=$(dirname "$0")
. "$here/../tools/tap.sh"

"$here/make-fixtures.sh" "$tmp/fx" >/dev/null 2>&1
fx=$tmp/fx
store=$tmp/store
mkdir -p "$store/anchors" "$store/blocklist" "$store/crls"
cp "$fx/root-a.pem" "$fx/root-b.pem" "$fx/root-c.pem" "$fx/root-t.trusted.pem" "$store/anchors/"
cp "$fx/root-b.pem" "$fx/leaf-c.pem" "$store/blocklist/"
cp "$fx/inter-a.pem" "$store/"
cp "$fx/crl-inter-a.pem" "$store/crls/"
registry() { # registry DIR PATHS: our module, trust-policy, on PATHS
	mkdir -p "$1/modules"
	printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$module" "$2" \
		>"$1/modules/p11glue-trust.module"
}
registry "$tmp/conf" "$store"
registry "$tmp/debian" /etc/ssl/certs/ca-certificates.crt
export P11GLUE_CONFIG=$tmp/conf
check() { run "$p11glue" trust check --fresh "$@"; }

# --- agreement ---------------------------------------------------------
P11GLUE_CONFIG=$tmp/debian run "$p11glue" trust check --fresh
bundle=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
if [ "$rc" = 0 ] && grep -q "^trust check for server-auth: $bundle anchors, 0 distrusted, 0 revoked; OpenSSL, GnuTLS, NSS and Java agree$" <<<"$out"; then
	ok "the Debian bundle: all $bundle anchors agree (exit 0)"
else
	not_ok "the Debian bundle" "rc=$rc" "$out" "$err"
fi

check
if [ "$rc" = 0 ] && grep -q '3 anchors, 2 distrusted, 1 revoked; OpenSSL, GnuTLS, NSS and Java agree' <<<"$out"; then
	ok "fixtures: anchors, blocklist and CRL agree (exit 0)"
else
	not_ok "fixtures agree" "rc=$rc" "$out" "$err"
fi

check --verbose
want=(
	'"Root B" (distrusted): expected reject'
	'    OpenSSL  reject rejected for server-auth in the extracted openssl-directory'
	'    GnuTLS   reject distrusted in the module of "PKCS#11 Kit (p11glue)"'
	'    NSS      reject its NSS trust object says not trusted for server-auth'
	'    Java     reject not in the extracted java-cacerts'
)
missing=
for line in "${want[@]}"; do grep -qxF "$line" <<<"$out" || missing+="$line; "; done
[ -z "$missing" ] && ok "--verbose: each consumer's decision on the blocklisted root, with its reason" ||
	not_ok "--verbose decisions" "missing: $missing" "$out"
# A blocklisted end-entity certificate: OpenSSL reads no trust for one,
# and a cacerts keystore holds no distrust: listed, not a disagreement.
if grep -A2 '"test.example" (distrusted)' <<<"$out" | grep -q 'OpenSSL  n/a    cannot express distrust'; then
	ok "a distrusted leaf is listed as what OpenSSL cannot express"
else
	not_ok "leaf n/a" "$out"
fi
if grep -A3 '(revoked): expected reject' <<<"$out" | grep -q 'OpenSSL  reject revoked by a CRL in the extracted openssl-directory'; then
	ok "the CRL revocation reaches OpenSSL through the extracted directory"
else
	not_ok "revocation" "$out"
fi

# Purposes: root-t is trusted for serverAuth and rejects emailProtection.
check --purpose=email --verbose
if [ "$rc" = 0 ] && grep -q '"Root T alias" (anchor, not for this purpose): expected reject' <<<"$out" &&
   grep -q 'GnuTLS   reject its stapled extendedKeyUsage excludes email' <<<"$out"; then
	ok "--purpose=email: the rejected purpose agrees everywhere"
else
	not_ok "--purpose=email" "rc=$rc" "$out"
fi

check --json
if [ "$rc" = 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["agree"] is True and d["disagreements"] == [] and d["purpose"] == "server-auth"
assert (d["anchors"], d["distrusted"], d["revoked"]) == (3, 2, 1)
' <<<"$out"; then ok "--json: counts, agree, no disagreements"; else not_ok "--json" "$out"; fi

# --- planted disagreements ---------------------------------------------
# OpenSSL: an anchor removed from an extracted directory.
"$p11glue" trust extract --format=openssl-directory --filter=trust-policy "$tmp/ossl" 2>/dev/null
chmod u+w "$tmp/ossl"
openssl verify -CApath "$tmp/ossl" -untrusted "$fx/inter-a.pem" "$fx/leaf-a2.pem" >/dev/null 2>&1 ||
	not_ok "openssl verify rejects the chain to Root A before the plant"
for f in "$tmp/ossl"/*; do
	if [ "$(readlink -f "$f")" = "$(readlink -f "$tmp/ossl/Root_A.pem")" ]; then rm -f "$f"; fi
done
check --openssl-directory="$tmp/ossl"
if [ "$rc" = 1 ] && grep -qxF "disagreement: \"Root A\" (anchor): OpenSSL: expected accept, actual reject: not in $tmp/ossl" <<<"$out" &&
   [ "$(grep -c '^disagreement' <<<"$out")" = 1 ] && grep -q '; 1 disagreement$' <<<"$out"; then
	ok "an anchor removed from the OpenSSL directory: named, exit 1"
else
	not_ok "anchor removed" "rc=$rc" "$out" "$err"
fi
if ! openssl verify -CApath "$tmp/ossl" -untrusted "$fx/inter-a.pem" "$fx/leaf-a2.pem" >/dev/null 2>&1; then
	ok "openssl verify agrees: the chain to Root A fails with that directory"
else not_ok "openssl verify accepted without Root A"; fi

# OpenSSL: the CRL removed from an extracted directory.
"$p11glue" trust extract --format=openssl-directory --filter=trust-policy "$tmp/ossl2" 2>/dev/null
chmod u+w "$tmp/ossl2"
rm -f "$tmp/ossl2"/*.r0 "$tmp/ossl2"/crl-*
check --openssl-directory="$tmp/ossl2" --json
if [ "$rc" = 1 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["agree"] is False, d
[x] = d["disagreements"]
assert x["kind"] == "revoked" and x["consumer"] == "OpenSSL", x
assert (x["expected"], x["actual"]) == ("reject", "accept"), x
assert "Intermediate A" in x["certificate"] and x["serial"], x
' <<<"$out"; then ok "a CRL missing from the OpenSSL directory: the revoked serial is named (JSON)"
else not_ok "CRL removed" "rc=$rc" "$out" "$err"; fi

# Java: keytool adds the blocklisted root to a copy of the cacerts.
"$p11glue" trust extract --format=java-cacerts --purpose=server-auth "$tmp/cacerts" 2>/dev/null
cp "$tmp/cacerts" "$tmp/planted"
chmod u+w "$tmp/planted"
keytool -importcert -noprompt -keystore "$tmp/planted" -storepass changeit \
	-alias planted-b -file "$fx/root-b.pem" >/dev/null 2>&1
check --java-cacerts="$tmp/planted"
if [ "$rc" = 1 ] && grep -qxF "disagreement: \"Root B\" (distrusted): Java: expected reject, actual accept: a trusted entry of $tmp/planted (alias planted-b)" <<<"$out"; then
	ok "a distrusted root added to cacerts with keytool: named, exit 1"
else
	not_ok "keytool plant" "rc=$rc" "$out" "$err"
fi
check --java-cacerts="$tmp/cacerts"
[ "$rc" = 0 ] && ok "the unaltered cacerts agrees" || not_ok "cacerts" "$out" "$err"
# A keystore whose integrity digest does not match is an error, not a pass.
cp "$tmp/cacerts" "$tmp/corrupt"
chmod u+w "$tmp/corrupt"
printf 'X' | dd of="$tmp/corrupt" bs=1 seek=40 conv=notrunc 2>/dev/null
check --java-cacerts="$tmp/corrupt"
[ "$rc" = 1 ] && grep -q "integrity check fails\|damaged entry" <<<"$err" &&
	ok "a damaged cacerts is refused (exit 1)" || not_ok "corrupt keystore" "rc=$rc" "$out" "$err"

# NSS: the trust object of Root A replaced in the writable token by a
# stored one that says "not trusted" (the persistence format).
nss_accepts() { vfychain -d "sql:$tmp/nssdb" -u 1 -a "$fx/leaf-a2.pem" "$fx/inter-a.pem" >/dev/null 2>&1; }
sanitized=false
ldd "$module" | grep -q 'libasan\|libtsan' && sanitized=true
mkdir -p "$tmp/nssdb"
certutil -N -d "sql:$tmp/nssdb" --empty-password
modutil -dbdir "sql:$tmp/nssdb" -add p11glue-trust -libfile "$module" -string "paths=$store" -force >/dev/null 2>&1
$sanitized || nss_accepts || not_ok "vfychain rejects the chain to Root A before the plant"
line=$("$dump" "$module" "paths=$store" | grep 'CKA_CLASS=534353ce00000000' |
	grep "CKA_LABEL=$(printf 'Root A' | od -An -tx1 | tr -d ' \n')" | head -n 1)
field() { tr ' ' '\n' <<<"$line" | sed -n "s/^$1=//p" | sed 's/../%&/g'; }
cat >"$store/altered.p11-kit" <<EOF
[p11-kit-object-v1]
class: nss-trust
issuer: "$(field CKA_ISSUER)"
serial-number: "$(field CKA_SERIAL_NUMBER)"
trust-server-auth: nss-not-trusted
trust-client-auth: nss-not-trusted
EOF
check
if [ "$rc" = 1 ] && grep -qxF 'disagreement: "Root A" (anchor): NSS: expected accept, actual reject: its NSS trust object says not trusted for server-auth' <<<"$out" &&
   [ "$(grep -c '^disagreement' <<<"$out")" = 1 ]; then
	ok "a trust object altered in the writable token: NSS named, exit 1"
else
	not_ok "NSS plant" "rc=$rc" "$out" "$err"
fi
if $sanitized; then
	ok "vfychain cross-check # SKIP NSS cannot load a sanitizer-built module"
elif ! nss_accepts; then
	ok "vfychain agrees: NSS now rejects the chain to Root A"
else not_ok "vfychain still accepts"; fi
rm -f "$store/altered.p11-kit"

# --- usage ---------------------------------------------------------------
check --bogus
[ "$rc" = 2 ] && ok "an unknown option is a usage error (2)" || not_ok "bogus option rc=$rc"
check extra
[ "$rc" = 2 ] && ok "an argument is a usage error (2)" || not_ok "argument rc=$rc"
check --purpose=nonsense
[ "$rc" = 2 ] && ok "an unknown purpose is a usage error (2)" || not_ok "purpose rc=$rc"
check --java-cacerts="$tmp/none"
[ "$rc" = 1 ] && grep -q 'cannot read the keystore' <<<"$err" && ok "a missing keystore is an error (1)" ||
	not_ok "missing keystore rc=$rc" "$err"
# Keystores Java itself refuses: a JKS entry of an unknown type (integrity
# digest right), and one cut short after its header.
seeds=$here/../../fuzz/java-keystore.in
check --java-cacerts="$seeds/unknown-entry.jks"
[ "$rc" = 1 ] && grep -q 'entry type 7 is not JKS' <<<"$err" &&
	ok "a JKS entry of an unknown type makes the keystore unreadable (1)" || not_ok "unknown entry rc=$rc" "$err"
check --java-cacerts="$seeds/truncated-header.jks"
[ "$rc" = 1 ] && grep -q 'truncated keystore' <<<"$err" &&
	ok "a JKS cut short after its header is refused (1)" || not_ok "truncated rc=$rc" "$err"
check --help
[ "$rc" = 0 ] && grep -q -- '--openssl-directory=DIR' <<<"$out" && ok "--help" || not_ok "--help"
# The other trust commands answer --help too, rather than acting.
run "$p11glue" trust dump --help
[ "$rc" = 0 ] && grep -q '^usage: trust dump' <<<"$out" && ! grep -q 'BEGIN CERTIFICATE' <<<"$out" &&
	ok "trust dump --help prints help, not the certificates" || not_ok "dump --help" "$out"
run "$p11glue" trust dump --filter=blocklist
[ "$rc" = 2 ] && grep -q "couldn't parse pkcs11 uri filter" <<<"$err" &&
	ok "trust dump --filter takes all or a URI, as p11-kit's (2)" || not_ok "dump --filter" "$rc $err"
run "$p11glue" trust check-format --help
[ "$rc" = 0 ] && grep -q '^usage: trust check-format' <<<"$out" &&
	ok "trust check-format --help" || not_ok "check-format --help" "rc=$rc" "$out"
finish
