#!/bin/bash
# Stapled certificate extensions and distrust in persistence-format files
# change trust as p11-kit's do, compared with Debian's p11-kit 0.24 on one
# token: module objects attribute by attribute, `trust list`, every
# extract format with filters and purposes, and `trust dump`. Each
# difference is one of three, listed and asserted on its own:
#   1. Root D: a distrusted public key (a certificate object without a
#      value, in blocklist/) distrusts the certificate in every object;
#      p11-kit's module keeps it an anchor (only its extract drops it).
#   2. Root P: a reject list read after its certificate (blocklist/ comes
#      after anchors/) still counts; p11-kit's module loses it.
#   3. Root P, Root Q: a purpose a stapled reject list rejects is not
#      listed or extracted for that purpose; p11-kit's commands ignore
#      reject lists there.
set -u
p11glue=$(realpath "$1") module=$(realpath "$2") dump=$(realpath "$3")
here=$(dirname "$0")
. "$here/../tools/tap.sh"

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
p11kit_trust=/usr/lib/$multiarch/pkcs11/p11-kit-trust.so
entries=$here/extract-entries.py

"$here/make-fixtures.sh" "$tmp/fx" >/dev/null 2>&1
fx=$tmp/fx
ts=$tmp/ts
mkdir -p "$ts/anchors" "$ts/blocklist" "$tmp/conf/modules"
cp "$fx/root-s.pem" "$fx/root-q.pem" "$fx/root-p.pem" "$fx/root-k.pem" "$fx/root-c.pem" \
	"$fx/root-d.pem" "$fx/leaf-a2.pem" "$fx/root-r.trusted.pem" "$ts/anchors/"
cp "$fx/staple-eku-s.p11-kit" "$fx/staple-reject-q.p11-kit" "$fx/staple-bc-k.p11-kit" \
	"$fx/staple-ku-c.p11-kit" "$fx/staple-ski-s.p11-kit" "$fx/leaf-n.pem" "$ts/"
cp "$fx/staple-reject-p.p11-kit" "$fx/distrust-key-d.p11-kit" "$ts/blocklist/"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$module" "$ts" \
	>"$tmp/conf/modules/p11glue-trust.module"
ours() { P11GLUE_CONFIG="$tmp/conf" "$p11glue" "$@"; }
theirs() { "$here/p11kit-run.sh" "$ts" "$@"; }

# Hex of a label as dump-objects prints it (CKA_LABEL=...).
label_hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
D=$(label_hex "Root D") P=$(label_hex "Root P") Q=$(label_hex "Root Q")
S=$(label_hex "Root S") K=$(label_hex "Root K") C=$(label_hex "Root C")
NOT_TRUSTED=5a4353ce00000000 DELEGATOR=524353ce00000000 TRUSTED=514353ce00000000
UNKNOWN=554353ce00000000 NSS=534353ce00000000 ASSERT=644744d800000000

# --- module objects --------------------------------------------------------
"$dump" "$module" "paths=$ts" >"$tmp/o.dump" 2>/dev/null
"$dump" "$p11kit_trust" "paths=$ts" >"$tmp/t.dump" 2>/dev/null
d=$(diff <(grep -v "CKA_LABEL=\($D\|$P\) " "$tmp/o.dump" | grep -v '^token') \
	<(grep -v "CKA_LABEL=\($D\|$P\) " "$tmp/t.dump" | grep -v '^token') | head -4)
[ -z "$d" ] && ok "objects equal p11-kit's but Root D's and Root P's" || not_ok "objects differ" "$d"

# What p11-kit and p11glue agree on, asserted too (so that the equality
# above cannot pass with both wrong).
obj() { grep "CKA_CLASS=$1 .*CKA_LABEL=$2 " "$3"; }
if obj "$NSS" "$S" "$tmp/o.dump" | grep -q "CKA_TRUST_SERVER_AUTH=$DELEGATOR CKA_TRUST_CLIENT_AUTH=$UNKNOWN" &&
   [ "$(obj "$ASSERT" "$S" "$tmp/o.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0300')" = 1 ]; then
	ok "stapled extKeyUsage: Root S anchors server authentication only (NSS trust, one assertion)"
else not_ok "stapled extKeyUsage on Root S"; fi
if obj "$NSS" "$Q" "$tmp/o.dump" | grep -q "CKA_TRUST_SERVER_AUTH=$UNKNOWN CKA_TRUST_CLIENT_AUTH=$NOT_TRUSTED" &&
   obj "$ASSERT" "$Q" "$tmp/o.dump" | grep -q 'CKA_X_ASSERTION_TYPE=0100.*CKA_X_PURPOSE=312e332e362e312e352e352e372e332e32'; then
	ok "stapled reject list: Root Q distrusted for client authentication"
else not_ok "stapled reject list on Root Q"; fi
if grep "CKA_CLASS=0100000000000000 .*CKA_LABEL=$K " "$tmp/o.dump" | grep -q "CKA_CERTIFICATE_CATEGORY=0300" &&
   obj "$NSS" "$K" "$tmp/o.dump" | grep -q "CKA_TRUST_SERVER_AUTH=$TRUSTED" &&
   [ "$(obj "$ASSERT" "$K" "$tmp/o.dump" | wc -l)" = 0 ]; then
	ok "stapled basicConstraints: Root K is no authority (other entity, NSS TRUSTED, no anchor assertion)"
else not_ok "stapled basicConstraints on Root K"; fi
if obj "$NSS" "$C" "$tmp/o.dump" | grep -q "CKA_TRUST_DIGITAL_SIGNATURE=$DELEGATOR .*CKA_TRUST_KEY_CERT_SIGN=$UNKNOWN"; then
	ok "stapled keyUsage: Root C delegates digital signatures only"
else not_ok "stapled keyUsage on Root C"; fi

# Intended difference 1: the distrusted key.
if grep "CKA_CLASS=0100000000000000 .*CKA_LABEL=$D " "$tmp/o.dump" | grep -q "CKA_TRUSTED=00 .*CKA_X_DISTRUSTED=01" &&
   obj "$NSS" "$D" "$tmp/o.dump" | grep -q "CKA_TRUST_SERVER_AUTH=$NOT_TRUSTED" &&
   [ "$(obj "$ASSERT" "$D" "$tmp/o.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0100')" = 8 ]; then
	ok "intended: a distrusted key distrusts Root D in every object"
else not_ok "Root D not distrusted by its key"; fi
if grep "CKA_CLASS=0100000000000000 .*CKA_LABEL=$D " "$tmp/t.dump" | grep -q "CKA_TRUSTED=01" &&
   [ "$(obj "$ASSERT" "$D" "$tmp/t.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0300')" = 8 ]; then
	ok "p11-kit 0.24 keeps Root D an anchor in its module (the difference)"
else not_ok "p11-kit now distrusts Root D: revisit intended difference 1"; fi
# Intended difference 2: the reject list after its certificate.
if obj "$NSS" "$P" "$tmp/o.dump" | grep -q "CKA_TRUST_SERVER_AUTH=$UNKNOWN .*CKA_TRUST_EMAIL_PROTECTION=$NOT_TRUSTED" &&
   obj "$ASSERT" "$P" "$tmp/o.dump" | grep -q 'CKA_X_ASSERTION_TYPE=0100.*CKA_X_PURPOSE=312e332e362e312e352e352e372e332e34'; then
	ok "intended: a reject list read after its certificate distrusts Root P for email"
else not_ok "Root P's reject list not applied"; fi
if obj "$NSS" "$P" "$tmp/t.dump" | grep -q "CKA_TRUST_EMAIL_PROTECTION=$DELEGATOR"; then
	ok "p11-kit 0.24 loses that reject list (the difference)"
else not_ok "p11-kit now applies Root P's reject list: revisit intended difference 2"; fi

# --- trust list ------------------------------------------------------------
entries_of() { awk 'BEGIN{RS=""} {gsub("\n"," "); print}' "$1" | sed 's/pkcs11:[^ ]* //' | sort; }
for args in "" "--filter=ca-anchors" "--filter=blocklist" "--filter=certificates" \
	"--filter=certificates --purpose=server-auth" "--filter=trust-policy --purpose=email" \
	"--filter=certificates --purpose=client-auth"; do
	# shellcheck disable=SC2086
	ours trust list $args >"$tmp/o.list" 2>/dev/null
	# shellcheck disable=SC2086
	theirs trust list $args >"$tmp/t.list" 2>/dev/null
	d=$(diff <(entries_of "$tmp/o.list" | grep -v 'label: Root [DPQ] ') \
		<(entries_of "$tmp/t.list" | grep -v 'label: Root [DPQ] '))
	[ -z "$d" ] && ok "trust list $args equals p11-kit's but Root D, P, Q" ||
		not_ok "trust list $args differs" "$d"
done
ours trust list >"$tmp/o.list" 2>/dev/null
theirs trust list >"$tmp/t.list" 2>/dev/null
if grep -A3 'label: Root D' "$tmp/o.list" | grep -q 'trust: distrusted' && ! grep -q 'label: Root D' "$tmp/t.list"; then
	ok "intended: trust list shows Root D distrusted (p11-kit lists it nowhere in the policy)"
else not_ok "trust list and Root D"; fi
ours trust list --filter=certificates --purpose=client-auth >"$tmp/o.list" 2>/dev/null
theirs trust list --filter=certificates --purpose=client-auth >"$tmp/t.list" 2>/dev/null
if ! grep -q 'label: Root Q' "$tmp/o.list" && grep -q 'label: Root Q' "$tmp/t.list"; then
	ok "intended: Root Q is not listed for the purpose it rejects (p11-kit lists it)"
else not_ok "trust list --purpose and Root Q's reject list"; fi

# --- extract ---------------------------------------------------------------
# Every format, filter and purpose: entries equal but those of Root D, P,
# Q; then what each of those does, per case.
skip_dpq() { grep -Ev 'Root[ _][DPQ]([^A-Za-z]|$)|^root[dpq]'; }
mkdir -p "$tmp/eo" "$tmp/et"
for format in pem-bundle openssl-bundle x509-file x509-directory pem-directory pem-directory-hash \
	openssl-directory java-cacerts edk2-cacerts; do
	for args in "" "--filter=certificates" "--filter=blocklist" "--filter=trust-policy" \
		"--purpose=email" "--purpose=client-auth" "--filter=certificates --purpose=server-auth"; do
		name="$format ${args:-(defaults)}"
		out=$(printf '%s' "$format$args" | tr -c 'a-z0-9-' _)
		# shellcheck disable=SC2086
		ours trust extract --format=$format $args "$tmp/eo/$out" 2>/dev/null
		a=$?
		# shellcheck disable=SC2086
		theirs trust extract --format=$format $args "$tmp/et/$out" 2>/dev/null
		b=$?
		if [ "$a" != "$b" ]; then
			not_ok "extract $name: exit status $a, p11-kit $b"
		elif [ "$a" != 0 ]; then
			ok "extract $name: refused, as by p11-kit"
		elif [ "$format$args" = "x509-file--filter=blocklist" ]; then
			# One certificate: the first distrusted one read, which
			# for p11glue may be Root D (difference 1).
			if "$entries" "$tmp/eo/$out" | grep -Eq '^Root [DR]	' &&
			   "$entries" "$tmp/et/$out" | grep -Eq '^Root R	'; then
				ok "extract $name: the first distrusted certificate"
			else not_ok "extract $name" "$("$entries" "$tmp/eo/$out")"; fi
		else
			d=$(diff <("$entries" "$tmp/eo/$out" | skip_dpq) <("$entries" "$tmp/et/$out" | skip_dpq))
			[ -z "$d" ] && ok "extract $name equals p11-kit's but Root D, P, Q" ||
				not_ok "extract $name differs" "$d"
		fi
	done
done
has() { "$entries" "$1" | grep -Eq "$2"; }
if has "$tmp/eo/pem-directory--filter_blocklist" '^Root_D\.pem' &&
   ! has "$tmp/et/pem-directory--filter_blocklist" '^Root_D\.pem' &&
   ! has "$tmp/eo/pem-directory" '^Root_D\.pem' && ! has "$tmp/et/pem-directory" '^Root_D\.pem'; then
	ok "intended: extracts write Root D as blocklisted, never as an anchor (p11-kit: neither)"
else not_ok "Root D in extracts"; fi
if openssl x509 -in "$tmp/eo/openssl-directory--filter_certificates/Root_D.pem" -noout -text 2>/dev/null |
	grep -A1 'Rejected Uses' | grep -q 'TLS Web Server'; then
	ok "intended: openssl-directory --filter=certificates rejects every purpose of Root D"
else not_ok "Root D in openssl-directory"; fi
if ! has "$tmp/eo/pem-bundle--purpose_email" '^Root P' && has "$tmp/et/pem-bundle--purpose_email" '^Root P' &&
   ! has "$tmp/eo/x509-directory--purpose_client-auth" '^Root_Q' &&
   has "$tmp/et/x509-directory--purpose_client-auth" '^Root_Q'; then
	ok "intended: --purpose leaves out anchors that reject that purpose (p11-kit keeps them)"
else not_ok "--purpose and reject lists in extracts"; fi
if openssl x509 -in "$tmp/eo/openssl-directory/Root_S.pem" -noout -text 2>/dev/null |
	grep -A1 'Trusted Uses' | grep -q 'TLS Web Server' &&
   ! has "$tmp/eo/pem-bundle--purpose_email" '^Root S'; then
	ok "stapled extKeyUsage: Root S trusted for server authentication only in extracts"
else not_ok "Root S in extracts"; fi
# OpenSSL's keyid (X509_CERT_AUX) is the stapled subjectKeyIdentifier's
# extnValue as it is (an OCTET STRING in an OCTET STRING), not Root S's own.
if openssl asn1parse -in "$tmp/eo/openssl-directory/Root_S.pem" 2>/dev/null | tail -1 |
	grep -q 'OCTET STRING *\[HEX DUMP\]:04145E11E5AB1ED5CA1AB1E5E11E5AB1ED5CA1AB1E$'; then
	ok "stapled subjectKeyIdentifier: the keyid of Root S in OpenSSL's formats"
else not_ok "Root S keyid" "$(openssl asn1parse -in "$tmp/eo/openssl-directory/Root_S.pem" 2>&1 | tail -2)"; fi

# --- trust dump ------------------------------------------------------------
# One line per object (objects are separated by blank lines), sorted.
blocks() { awk 'BEGIN{RS=""} {gsub("\n","|"); print}' "$1" | sort; }
ours trust dump >"$tmp/o.txt" 2>/dev/null
theirs trust dump >"$tmp/t.txt" 2>/dev/null
d=$(diff <(blocks "$tmp/o.txt" | grep -v 'label: "Root [DP]"') <(blocks "$tmp/t.txt" | grep -v 'label: "Root [DP]"') | head -4)
[ -z "$d" ] && ok "trust dump: every object as p11-kit prints it but Root D's and Root P's" ||
	not_ok "trust dump differs" "$d"

# --- unusable stapled extensions (a second token) ----------------------------
# Root S: an extKeyUsage without purposes (trusted for none); Root Q: an
# extKeyUsage that is a SET; Root P: a reject list that is a SET; Root K:
# an Extension followed by more; Root C: none. The modules ignore all but
# Root S's; p11-kit's commands leave Root Q and Root K out of everything
# and Root P out of OpenSSL's formats, and so does p11glue. The one
# difference (4): the object whose value is no Extension keeps CKA_TOKEN,
# CKA_PRIVATE and CKA_X_GENERATED, which p11-kit's module leaves out.
bad=$tmp/bad
mkdir -p "$bad/anchors" "$tmp/conf-bad/modules"
cp "$fx/root-s.pem" "$fx/root-q.pem" "$fx/root-p.pem" "$fx/root-k.pem" "$fx/root-c.pem" "$bad/anchors/"
cp "$fx"/bad/*.p11-kit "$bad/"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$module" "$bad" \
	>"$tmp/conf-bad/modules/p11glue-trust.module"
ours_bad() { P11GLUE_CONFIG="$tmp/conf-bad" "$p11glue" "$@"; }
theirs_bad() { "$here/p11kit-run.sh" "$bad" "$@"; }
EXT=c84744d800000000
"$dump" "$module" "paths=$bad" >"$tmp/ob.dump" 2>/dev/null
"$dump" "$p11kit_trust" "paths=$bad" >"$tmp/tb.dump" 2>/dev/null
strip_raw() { sed -E "/CKA_CLASS=$EXT /{s/ CKA_(TOKEN|PRIVATE|X_GENERATED)=[0-9a-f]*//g}" "$1"; }
d=$(diff <(strip_raw "$tmp/ob.dump" | sort) <(strip_raw "$tmp/tb.dump" | sort) | head -4)
[ -z "$d" ] && ok "unusable staples: objects equal p11-kit's but the attributes of difference 4" ||
	not_ok "unusable staples: objects differ" "$d"
raw_ours=$(grep -c "CKA_CLASS=$EXT CKA_TOKEN=01 CKA_PRIVATE=00 CKA_LABEL=737461706c6564 CKA_VALUE=[0-9a-f]*0500 " "$tmp/ob.dump")
raw_theirs=$(grep -c "CKA_CLASS=$EXT CKA_LABEL=737461706c6564 CKA_VALUE=[0-9a-f]*0500 " "$tmp/tb.dump")
[ "$raw_ours" = 1 ] && [ "$raw_theirs" = 1 ] &&
	ok "intended: the object whose value is no Extension has CKA_TOKEN and CKA_PRIVATE (p11-kit: none)" ||
	not_ok "difference 4" "$raw_ours $raw_theirs"
if [ "$(obj "$ASSERT" "$S" "$tmp/ob.dump" | wc -l)" = 0 ] &&
   [ "$(obj "$ASSERT" "$K" "$tmp/ob.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0300')" = 8 ] &&
   [ "$(obj "$ASSERT" "$Q" "$tmp/ob.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0300')" = 8 ] &&
   [ "$(obj "$ASSERT" "$P" "$tmp/ob.dump" | grep -c 'CKA_X_ASSERTION_TYPE=0300')" = 8 ]; then
	ok "unusable staples: the module anchors Root S for nothing, Root K, Q, P for every purpose"
else not_ok "unusable staples in the module"; fi
ours_bad trust list >"$tmp/ob.list" 2>"$tmp/ob.err"
theirs_bad trust list >"$tmp/tb.list" 2>/dev/null
d=$(diff "$tmp/ob.list" "$tmp/tb.list")
[ -z "$d" ] && ok "unusable staples: trust list equals p11-kit's" || not_ok "unusable staples: list" "$d"
if grep -q 'label: Root S' "$tmp/ob.list" && grep -q 'label: Root P' "$tmp/ob.list" &&
   ! grep -q 'label: Root Q' "$tmp/ob.list" && ! grep -q 'label: Root K' "$tmp/ob.list" &&
   grep -q 'Root Q: a stapled extension cannot be read' "$tmp/ob.err"; then
	ok "unusable staples: Root Q and Root K left out of trust list, with a message"
else not_ok "unusable staples: list contents" "$(cat "$tmp/ob.list" "$tmp/ob.err")"; fi
mkdir -p "$tmp/ebo" "$tmp/ebt"
for format in pem-bundle openssl-bundle pem-directory openssl-directory java-cacerts edk2-cacerts; do
	for args in "" "--purpose=server-auth"; do
		name="$format ${args:-(defaults)}"
		out=$(printf '%s' "$format$args" | tr -c 'a-z0-9-' _)
		# shellcheck disable=SC2086
		ours_bad trust extract --format=$format $args "$tmp/ebo/$out" 2>/dev/null
		# shellcheck disable=SC2086
		theirs_bad trust extract --format=$format $args "$tmp/ebt/$out" 2>/dev/null
		d=$(diff <("$entries" "$tmp/ebo/$out") <("$entries" "$tmp/ebt/$out"))
		[ -z "$d" ] && ok "unusable staples: extract $name equals p11-kit's" ||
			not_ok "unusable staples: extract $name" "$d"
	done
done
if has "$tmp/ebo/pem-bundle" '^Root P' && ! has "$tmp/ebo/openssl-bundle" '^Root P' &&
   ! has "$tmp/ebo/pem-bundle" '^Root [QK]' && has "$tmp/ebo/pem-bundle" '^Root C' &&
   ! has "$tmp/ebo/pem-bundle--purpose_server-auth" '^Root S' &&
   openssl asn1parse -in "$tmp/ebo/openssl-directory/Root_S.pem" 2>/dev/null | tail -2 | head -1 |
	grep -q 'd=1 *hl=2 l= *0 cons: SEQUENCE'; then
	ok "unusable staples: Root P out of OpenSSL's formats only; Root S with an empty trust list"
else not_ok "unusable staples: extract contents"; fi
finish
