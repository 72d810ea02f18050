#!/bin/bash
# Writable tokens: C_CreateObject and C_DestroyObject through the module
# for certificates (trusted, or a distrusted issuer and serial or key),
# stapled extensions, NSS trust objects and trust assertions, stored as
# persistence-format files in the token's directory; each file read back
# by p11glue's module and by Debian's p11-kit 0.24 (the same objects);
# the refusals with their exact CKR codes. Differences from p11-kit, each
# asserted on its own:
#   1. p11-kit refuses to create NSS trust objects, trust assertions and
#      distrusted keys (it reads them from files).
#   2. A stored NSS trust object replaces the one made for its
#      certificate, whatever the order files are read in; p11-kit keeps
#      both when the certificate comes first and loses both when it
#      comes second.
#   3. A distrusted key distrusts its certificates (as test-stapled.sh).
set -u
module=$(realpath "$2") dump=$(realpath "$3") p11obj=$(realpath "$4")
here=$(dirname "$0")
. "$here/../tools/tap.sh"

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
p11kit_trust=/usr/lib/$multiarch/pkcs11/p11-kit-trust.so
"$here/make-fixtures.sh" "$tmp/fx" >/dev/null 2>&1
fx=$tmp/fx
tw=$tmp/tw
mkdir -p "$tw"

ours() { "$p11obj" "$module" "paths=$tw" "$@"; }
theirs() { "$p11obj" "$p11kit_trust" "paths=$1" "${@:2}"; }
# creates NAME CMD...: the call prints "created" and succeeds.
creates() {
	local name=$1
	shift
	run "$@"
	[ "$rc" = 0 ] && [ "$out" = created ] && ok "$name" || not_ok "$name" "$out" "$err"
}
# refused NAME CKR CMD...: the call fails with that CKR value.
refused() {
	local name=$1 want=$2
	shift 2
	run "$@"
	[ "$rc" = 1 ] && [ "${err##*CKR }" = "$want" ] && ok "$name" || not_ok "$name" "rc $rc" "$err"
}
hex() { od -An -tx1 | tr -d ' \n'; }
label_hex() { printf '%s' "$1" | hex; }
der() { openssl x509 -in "$1" -outform DER; }
# issuer and serial of a certificate, as hex DER.
parts() {
	python3 - "$1" <<'PY'
import subprocess, sys
d = subprocess.run(['openssl', 'x509', '-in', sys.argv[1], '-outform', 'DER'],
                   capture_output=True, check=True).stdout
def at(o):
    n = d[o + 1]
    if n < 0x80:
        return 2, n
    k = n & 0x7f
    return 2 + k, int.from_bytes(d[o + 2:o + 2 + k], 'big')
h, _ = at(0)
o = h
h, _ = at(o)
o += h
if d[o] == 0xa0:
    h, n = at(o)
    o += h + n
h, n = at(o)
serial = d[o:o + h + n]
o += h + n
h, n = at(o)
o += h + n
h, n = at(o)
print(d[o:o + h + n].hex(), serial.hex())
PY
}
for c in root-a leaf-a2 root-u; do der "$fx/$c.pem" >"$tmp/$c.der"; done
openssl x509 -in "$fx/root-a.pem" -noout -pubkey | openssl pkey -pubin -outform DER >"$tmp/root-a.spki"
openssl x509 -in "$fx/root-u.pem" -noout -pubkey | openssl pkey -pubin -outform DER >"$tmp/root-u.spki"
read -r L_ISSUER L_SERIAL < <(parts "$fx/leaf-a2.pem")
read -r A_ISSUER _ < <(parts "$fx/root-a.pem")
L_SHA1=$(sha1sum <"$tmp/leaf-a2.der" | cut -d' ' -f1)
L_MD5=$(md5sum <"$tmp/leaf-a2.der" | cut -d' ' -f1)
EKU=30130603551d25040c300a06082b06010505070301
NOT_TRUSTED=5a4353ce00000000 DELEGATOR=524353ce00000000 TRUSTED=514353ce00000000
UNKNOWN=554353ce00000000 NSS=534353ce00000000

# --- creating --------------------------------------------------------------
creates "certificate with trust" ours create class=certificate certificate_type=x_509 \
	value=file:"$tmp/root-a.der" trusted=true label=str:RootA
creates "certificate without trust" ours create class=certificate value=file:"$tmp/leaf-a2.der" \
	label=str:LeafA2
creates "stapled extKeyUsage" ours create token=true class=x_certificate_extension \
	value=hex:$EKU public_key_info=file:"$tmp/root-a.spki" label=str:RootA-EKU
creates "NSS trust object" ours create class=nss_trust issuer=hex:"$L_ISSUER" \
	serial_number=hex:"$L_SERIAL" cert_sha1_hash=hex:"$L_SHA1" cert_md5_hash=hex:"$L_MD5" \
	trust_server_auth=nss_trusted trust_client_auth=nss_trust_unknown label=str:LeafA2-trust
creates "trust assertion (pinned certificate)" ours create class=x_trust_assertion \
	x_purpose=str:1.3.6.1.5.5.7.3.1 x_assertion_type=x_pinned_certificate \
	x_certificate_value=file:"$tmp/leaf-a2.der" x_peer=str:test.example label=str:pin
creates "distrusted issuer and serial" ours create class=certificate issuer=hex:"$A_ISSUER" \
	serial_number=hex:020199 x_distrusted=true label=str:revoked
creates "certificate to distrust by key" ours create class=certificate \
	value=file:"$tmp/root-u.der" trusted=true label=str:RootU
creates "distrusted key" ours create class=certificate public_key_info=file:"$tmp/root-u.spki" \
	x_distrusted=true label=str:RootU-key
files=$(cd "$tw" && ls | tr '\n' ' ')
[ "$files" = "LeafA2-trust.p11-kit LeafA2.p11-kit RootA-EKU.p11-kit RootA.p11-kit RootU-key.p11-kit RootU.p11-kit pin.p11-kit revoked.p11-kit " ] &&
	ok "one persistence-format file per object, named after its label" || not_ok "files" "$files"

# --- what the module makes of them ---------------------------------------
"$dump" "$module" "paths=$tw" >"$tmp/o.dump" 2>/dev/null
nss_of() { grep "CKA_CLASS=$NSS .*CKA_ISSUER=$1 CKA_SERIAL_NUMBER=$2 " "$tmp/o.dump"; }
if grep "CKA_CLASS=$NSS .*CKA_LABEL=$(label_hex RootA) " "$tmp/o.dump" |
	grep -q "CKA_TRUST_SERVER_AUTH=$DELEGATOR CKA_TRUST_CLIENT_AUTH=$UNKNOWN"; then
	ok "the stored extKeyUsage restricts Root A to server authentication"
else not_ok "stored extKeyUsage not applied"; fi
if [ "$(nss_of "$L_ISSUER" "$L_SERIAL" | wc -l)" = 1 ] &&
   nss_of "$L_ISSUER" "$L_SERIAL" | grep -q "CKA_TRUST_SERVER_AUTH=$TRUSTED .*CKA_X_GENERATED=00"; then
	ok "intended: the stored NSS trust object replaces the one made for Leaf A2"
else not_ok "stored NSS trust object" "$(nss_of "$L_ISSUER" "$L_SERIAL")"; fi
if grep -q "CKA_X_ASSERTION_TYPE=0200000000000000 .*CKA_X_PEER=$(label_hex test.example)" "$tmp/o.dump"; then
	ok "the stored pinned-certificate assertion is an object"
else not_ok "stored assertion"; fi
if nss_of "$A_ISSUER" 020199 | grep -q "CKA_TRUST_SERVER_AUTH=$NOT_TRUSTED" &&
   grep "CKA_CLASS=0100000000000000 .*CKA_SERIAL_NUMBER=020199 " "$tmp/o.dump" | grep -q "CKA_X_DISTRUSTED=01"; then
	ok "the stored distrusted issuer and serial: certificate and NSS trust objects"
else not_ok "stored distrusted issuer and serial"; fi
if grep "CKA_CLASS=0100000000000000 .*CKA_LABEL=$(label_hex RootU) " "$tmp/o.dump" | grep -q "CKA_X_DISTRUSTED=01"; then
	ok "intended: the stored distrusted key distrusts Root U"
else not_ok "stored distrusted key"; fi

# --- read back, file by file, by both modules ----------------------------
# Each file alone in a token: both modules show the same objects (what
# they make of them aside: the NSS trust file needs no certificate).
for f in "$tw"/*.p11-kit; do
	d=$tmp/one/$(basename "$f" .p11-kit)
	mkdir -p "$d"
	cp "$f" "$d/"
	"$dump" "$module" "paths=$d" 2>/dev/null | sed 's/ CKA_X_ORIGIN=[0-9a-f]*//' >"$tmp/o1"
	"$dump" "$p11kit_trust" "paths=$d" 2>/dev/null | sed 's/ CKA_X_ORIGIN=[0-9a-f]*//' >"$tmp/t1"
	if cmp -s "$tmp/o1" "$tmp/t1" && [ "$(wc -l <"$tmp/o1")" -ge 3 ]; then
		ok "read back by both modules: $(basename "$f")"
	else not_ok "read back $(basename "$f")" "$(diff "$tmp/o1" "$tmp/t1" | head -3)"; fi
done
# The whole token: the same but for differences 2 and 3.
"$dump" "$p11kit_trust" "paths=$tw" >"$tmp/t.dump" 2>/dev/null
skip() { grep -v "CKA_LABEL=\($(label_hex RootU)\|$(label_hex LeafA2)\) " | grep -v "CKA_ISSUER=$L_ISSUER CKA_SERIAL_NUMBER=$L_SERIAL " | grep -v '^token'; }
d=$(diff <(sed 's/ CKA_X_ORIGIN=[0-9a-f]*//' "$tmp/o.dump" | skip) <(sed 's/ CKA_X_ORIGIN=[0-9a-f]*//' "$tmp/t.dump" | skip))
[ -z "$d" ] && ok "the whole token: p11-kit reads the same objects but Leaf A2's and Root U's" ||
	not_ok "the token read by p11-kit" "$d"
# Difference 2, both orders of reading: certificate first (anchors/ is
# read after the top directory) and NSS trust object first.
mkdir -p "$tmp/o2/anchors" "$tmp/o3/anchors"
cp "$tw/LeafA2.p11-kit" "$tmp/o2/" && cp "$tw/LeafA2-trust.p11-kit" "$tmp/o2/anchors/"
cp "$tw/LeafA2-trust.p11-kit" "$tmp/o3/" && cp "$tw/LeafA2.p11-kit" "$tmp/o3/anchors/"
count() { "$dump" "$1" "paths=$2" 2>/dev/null | grep -c "CKA_CLASS=$NSS "; }
if [ "$(count "$module" "$tmp/o2")" = 1 ] && [ "$(count "$module" "$tmp/o3")" = 1 ] &&
   [ "$(count "$p11kit_trust" "$tmp/o2")" = 2 ] && [ "$(count "$p11kit_trust" "$tmp/o3")" = 0 ]; then
	ok "intended: one NSS trust object in either order (p11-kit: two, or none)"
else not_ok "NSS trust objects by order" "$(count "$p11kit_trust" "$tmp/o2") $(count "$p11kit_trust" "$tmp/o3")"; fi

# --- p11-kit creates fewer kinds (difference 1) --------------------------
tp=$tmp/tp
mkdir -p "$tp"
refused "p11-kit refuses NSS trust objects (CKR_TEMPLATE_INCONSISTENT)" 0xd1 \
	theirs "$tp" create token=true class=nss_trust issuer=hex:"$L_ISSUER" serial_number=hex:"$L_SERIAL"
refused "p11-kit refuses trust assertions" 0xd1 theirs "$tp" create token=true \
	class=x_trust_assertion x_purpose=str:1.3.6.1.5.5.7.3.1 x_assertion_type=x_pinned_certificate
refused "p11-kit refuses distrusted keys (CKR_ATTRIBUTE_READ_ONLY)" 0x10 theirs "$tp" create \
	token=true class=certificate certificate_type=x_509 public_key_info=file:"$tmp/root-u.spki" \
	x_distrusted=true
creates "p11-kit creates a stapled extension too" theirs "$tp" create token=true \
	class=x_certificate_extension value=hex:$EKU public_key_info=file:"$tmp/root-a.spki" label=str:RootA-EKU
if "$dump" "$module" "paths=$tp" 2>/dev/null | grep -q "CKA_OBJECT_ID=0603551d25"; then
	ok "p11glue reads the extension p11-kit wrote"
else not_ok "p11-kit's file"; fi

# --- refusals --------------------------------------------------------------
refused "NSS trust object without issuer, serial or SHA-1: CKR_TEMPLATE_INCOMPLETE" 0xd0 \
	ours create class=nss_trust trust_server_auth=nss_trusted
refused "NSS trust value that is none: CKR_ATTRIBUTE_VALUE_INVALID" 0x13 \
	ours create class=nss_trust issuer=hex:"$L_ISSUER" serial_number=hex:"$L_SERIAL" trust_server_auth=7
refused "NSS trust object with a certificate's value: CKR_TEMPLATE_INCONSISTENT" 0xd1 \
	ours create class=nss_trust issuer=hex:"$L_ISSUER" serial_number=hex:"$L_SERIAL" value=hex:00
refused "issuer that is no DER name: CKR_ATTRIBUTE_VALUE_INVALID" 0x13 \
	ours create class=nss_trust issuer=hex:0102 serial_number=hex:"$L_SERIAL"
refused "assertion without a purpose: CKR_TEMPLATE_INCOMPLETE" 0xd0 \
	ours create class=x_trust_assertion x_assertion_type=x_anchored_certificate \
	x_certificate_value=file:"$tmp/root-a.der"
refused "distrusted assertion without issuer and serial: CKR_TEMPLATE_INCOMPLETE" 0xd0 \
	ours create class=x_trust_assertion x_assertion_type=x_distrusted_certificate x_purpose=str:1.2.3
refused "anchored assertion with a bad certificate: CKR_ATTRIBUTE_VALUE_INVALID" 0x13 \
	ours create class=x_trust_assertion x_assertion_type=x_anchored_certificate x_purpose=str:1.2.3 \
	x_certificate_value=hex:3003020101
refused "extension that is no Extension: CKR_ATTRIBUTE_VALUE_INVALID" 0x13 ours create \
	class=x_certificate_extension value=hex:0401 public_key_info=file:"$tmp/root-a.spki"
refused "extension without a key: CKR_TEMPLATE_INCOMPLETE" 0xd0 ours create \
	class=x_certificate_extension value=hex:$EKU
refused "certificate without value that distrusts nothing: CKR_TEMPLATE_INCOMPLETE" 0xd0 \
	ours create class=certificate issuer=hex:"$A_ISSUER" serial_number=hex:020199
refused "session object (CKA_TOKEN false): CKR_TEMPLATE_INCONSISTENT" 0xd1 \
	ours create token=false class=certificate value=file:"$tmp/leaf-a2.der"
refused "a class that is not kept: CKR_TEMPLATE_INCONSISTENT" 0xd1 ours create class=data
refused "read-only session: CKR_SESSION_READ_ONLY" 0xb5 \
	ours --ro create class=certificate value=file:"$tmp/leaf-a2.der"
refused "distribution path: CKR_TOKEN_WRITE_PROTECTED" 0xe2 "$p11obj" "$module" \
	paths=/usr/share/ca-certificates --first create class=certificate value=file:"$tmp/leaf-a2.der"
refused "a file token: CKR_TOKEN_WRITE_PROTECTED" 0xe2 "$p11obj" "$module" \
	"paths=$fx/root-a.pem" --first create class=certificate value=file:"$tmp/leaf-a2.der"
[ "$(cd "$tw" && ls | wc -l)" = 8 ] && ok "refused objects leave no file" || not_ok "stray files" "$(ls "$tw")"

# --- destroying ------------------------------------------------------------
expect "made objects cannot be destroyed: CKR_ACTION_PROHIBITED" 1 "" "p11-object: destroy: CKR 0x1b" \
	ours destroy class=nss_trust label=str:RootA
cat "$tw/RootA-EKU.p11-kit" "$tw/RootA-EKU.p11-kit" |
	awk '/^label:/ { if (++n == 2) sub(/RootA-EKU/, "second") } { print }' >"$tw/two.p11-kit"
expect "an object sharing its file cannot be destroyed" 1 "" "p11-object: destroy: CKR 0x1b" \
	ours destroy class=x_certificate_extension label=str:second
rm -f "$tw/two.p11-kit"
for spec in "LeafA2-trust class=nss_trust label=str:LeafA2-trust" \
	"pin class=x_trust_assertion label=str:pin" \
	"RootA-EKU class=x_certificate_extension label=str:RootA-EKU" \
	"revoked class=certificate label=str:revoked" \
	"RootU-key class=certificate label=str:RootU-key" \
	"RootA class=certificate label=str:RootA"; do
	# shellcheck disable=SC2086
	set -- $spec
	name=$1
	shift
	expect "destroy $name" 0 1 "" ours destroy "$@"
	[ ! -e "$tw/$name.p11-kit" ] && ok "$name.p11-kit removed" || not_ok "$name.p11-kit still there"
done
"$dump" "$module" "paths=$tw" >"$tmp/o.dump" 2>/dev/null
if [ "$(nss_of "$L_ISSUER" "$L_SERIAL" | wc -l)" = 1 ] &&
   nss_of "$L_ISSUER" "$L_SERIAL" | grep -q "CKA_TRUST_SERVER_AUTH=$UNKNOWN .*CKA_X_GENERATED=01" &&
   grep "CKA_CLASS=0100000000000000 .*CKA_LABEL=$(label_hex RootU) " "$tmp/o.dump" | grep -q "CKA_TRUSTED=01 .*CKA_X_DISTRUSTED=00"; then
	ok "with the stored objects gone, the module makes Leaf A2's NSS trust again and trusts Root U"
else not_ok "objects after destroying"; fi
expect "nothing left to destroy" 0 0 "" ours destroy class=nss_trust label=str:LeafA2-trust
finish
