#!/bin/bash
# Real consumers of one trust store: NSS (vfychain through our module),
# OpenSSL (verify -CApath on the extracted openssl-directory, with
# -crl_check for revocations), GnuTLS (p11tool on our module, which then
# reads its paths from the p11glue configuration because GnuTLS drops
# x-init-reserved). The consistency matrix: every case, every consumer
# that can express it, the same decision.
set -u
p11glue=$(realpath "$1") module=$(realpath "$2")
here=$(dirname "$0")
# NSS, GnuTLS and p11tool are not built with sanitizers: they cannot load
# a module that needs the AddressSanitizer runtime first.
if ldd "$module" | grep -q 'libasan\|libtsan'; then
	echo "1..0 # SKIP consumers cannot load a sanitizer-built module"
	exit 0
fi
. "$here/../tools/tap.sh"

"$here/make-fixtures.sh" "$tmp/fx" >/dev/null 2>&1
fx=$tmp/fx
store=$tmp/store
mkdir -p "$store/anchors" "$store/blocklist" "$store/crls"
cp "$fx/root-a.pem" "$fx/root-b.pem" "$fx/root-c.pem" "$fx/root-e.pem" "$fx/root-t.trusted.pem" "$store/anchors/"
cp "$fx/root-b.pem" "$fx/leaf-c.pem" "$store/blocklist/"
cp "$fx/inter-a.pem" "$store/"
cp "$fx/crl-inter-a.pem" "$store/crls/"
mkdir -p "$tmp/conf/modules"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$module" "$store" \
	>"$tmp/conf/modules/p11glue-trust.module"
export P11GLUE_CONFIG=$tmp/conf

# NSS: our module in a fresh database.
db=$tmp/nssdb
mkdir -p "$db"
certutil -N -d "sql:$db" --empty-password
modutil -dbdir "sql:$db" -add p11glue-trust -libfile "$module" -string "paths=$store" -force >/dev/null 2>&1
nss() { vfychain -d "sql:$db" -u 1 -a "$@" >/dev/null 2>&1 && echo accept || echo reject; }

# OpenSSL: the extracted directory (certificates, so rejections show, and CRLs).
"$p11glue" trust extract --filter=trust-policy --format=openssl-directory "$tmp/ossl" 2>/dev/null
ossl() {
	local leaf=$1
	shift
	local chain=()
	# Chains through inter-a, which has a CRL, are checked against it.
	[ $# -gt 0 ] && chain=(-untrusted "$1" -crl_check)
	openssl verify -purpose sslserver -CApath "$tmp/ossl" "${chain[@]}" "$leaf" >/dev/null 2>&1 &&
		echo accept || echo reject
}

# GnuTLS: what it sees as trusted and distrusted through our module.
p11tool --provider "$module" --list-all-trusted --only-urls 'pkcs11:' >"$tmp/gnutls" 2>/dev/null
gnutls_trusted() { grep -qF "object=$1;" "$tmp/gnutls" && echo accept || echo reject; }

# case NAME WANT NSS OPENSSL [GNUTLS]: one row of the matrix.
matrix() {
	local name=$1 want=$2
	shift 2
	local got=("$@") i=0 names=(NSS OpenSSL GnuTLS)
	for g in "${got[@]}"; do
		if [ "$g" = "-" ]; then
			ok "$name: ${names[$i]} cannot express it (listed)"
		elif [ "$g" = "$want" ]; then
			ok "$name: ${names[$i]} ${want}s"
		else
			not_ok "$name: ${names[$i]} says $g, want $want"
		fi
		i=$((i + 1))
	done
}

matrix "leaf under an anchor via an intermediate" accept \
	"$(nss "$fx/leaf-a2.pem" "$fx/inter-a.pem")" "$(ossl "$fx/leaf-a2.pem" "$fx/inter-a.pem")" \
	"$(gnutls_trusted "Root%20A")"
matrix "leaf revoked by the intermediate's CRL" reject \
	"$(nss "$fx/leaf-a1.pem" "$fx/inter-a.pem")" "$(ossl "$fx/leaf-a1.pem" "$fx/inter-a.pem")" -
matrix "leaf under an anchored and blocklisted root" reject \
	"$(nss "$fx/leaf-b.pem")" "$(ossl "$fx/leaf-b.pem")" "$(gnutls_trusted "Root%20B")"
# OpenSSL applies a stored certificate's rejections to the chain it
# builds from the store, not to the leaf it was given: it cannot express
# a distrusted leaf (listed), and accepts it.
matrix "distrusted leaf under an anchor" reject \
	"$(nss "$fx/leaf-c.pem")" - -
matrix "leaf under an unknown root" reject \
	"$(nss "$fx/leaf-u.pem")" "$(ossl "$fx/leaf-u.pem")" "$(gnutls_trusted "Root%20U")"
matrix "leaf under an expired anchor" reject \
	"$(nss "$fx/leaf-e.pem")" "$(ossl "$fx/leaf-e.pem")" -
matrix "leaf under a root trusted for serverAuth only (TLS server use)" accept \
	"$(nss "$fx/leaf-t.pem")" "$(ossl "$fx/leaf-t.pem")" "$(gnutls_trusted "Root%20T%20alias")"
# The rejected purpose (emailProtection) of root-t: usage 4 is email signer.
if vfychain -d "sql:$db" -u 4 -a "$fx/leaf-t.pem" >/dev/null 2>&1; then
	not_ok "rejected purpose: NSS accepts emailProtection under root-t"
else
	ok "rejected purpose: NSS refuses emailProtection under root-t"
fi
if openssl verify -purpose smimesign -CApath "$tmp/ossl" "$fx/leaf-t.pem" >/dev/null 2>&1; then
	not_ok "rejected purpose: OpenSSL accepts S/MIME under root-t"
else
	ok "rejected purpose: OpenSSL refuses S/MIME under root-t"
fi
# OpenSSL without -crl_check accepts the revoked leaf: the CRL is what rejects it.
if openssl verify -CApath "$tmp/ossl" -untrusted "$fx/inter-a.pem" "$fx/leaf-a1.pem" >/dev/null 2>&1 &&
   ls "$tmp/ossl"/*.r0 >/dev/null 2>&1; then
	ok "OpenSSL: the CRL and its .r0 link are in the directory; -crl_check uses them"
else not_ok "OpenSSL CRL link"; fi

# keytool reads the java-cacerts extraction.
"$p11glue" trust extract --format=java-cacerts --purpose=server-auth "$tmp/cacerts" 2>/dev/null
count=$(keytool -list -keystore "$tmp/cacerts" -storepass changeit 2>/dev/null | grep -c trustedCertEntry)
[ "$count" = 4 ] && ok "keytool lists the 4 server-auth anchors" || not_ok "keytool count $count"
finish
