#!/bin/bash
# OpenSC's pkcs11-tool against p11glue-store.so in a temporary store:
# token and PIN set-up, key generation (RSA, EC, Ed25519, AES, generic),
# its own --test and --test-ec, and signing, verifying, encrypting,
# decrypting, wrapping, unwrapping, deriving and hashing, each checked
# against OpenSSL's command line where it can be.
#
# Usage: test-pkcs11-tool.sh MODULE
set -u
module=$1
. "$(dirname "$0")/../tools/tap.sh"

if ! command -v pkcs11-tool >/dev/null; then
	echo "1..0 # SKIP pkcs11-tool not installed (Debian package opensc)"
	exit 0
fi

# A module built with sanitizers needs their runtimes loaded first into a
# program built without them (pkcs11-tool); its own leaks are not ours.
preload=$(ldd "$module" | awk '/lib(a|ub|t)san/ { print $3 }' | paste -sd: -)
asan_options=${ASAN_OPTIONS:-}
[ -n "$preload" ] && asan_options=${asan_options:+$asan_options:}detect_leaks=0

export P11GLUE_STORE_DIR=$tmp/store
so_pin=12345678
pin=1234
tool() {
	LD_PRELOAD=$preload ASAN_OPTIONS=$asan_options pkcs11-tool --module "$module" "$@"
}
user() { tool --token-label test --login --pin "$pin" "$@"; }

# fail NAME REASON: a failure, with the last run's output as TAP comments.
fail() {
	not_ok "$1" "$2"
	printf '%s\n%s\n' "$out" "$err" | sed 's/^/#   /'
}

# check NAME CMD...: passes when CMD exits 0.
check() {
	local name=$1
	shift
	run "$@"
	if [ "$rc" -eq 0 ]; then ok "$name"; else fail "$name" "exit status $rc"; fi
}

# has NAME TEXT: passes when the last run's output contains TEXT.
has() {
	case "$out$err" in
	*"$2"*) ok "$1" ;;
	*) fail "$1" "no '$2' in the output" ;;
	esac
}

# same NAME FILE1 FILE2
same() {
	if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1" "$2 and $3 differ"; fi
}

check "init token" tool --init-token --label test --so-pin "$so_pin"
check "init PIN" tool --token-label test --login --login-type so --so-pin "$so_pin" \
	--init-pin --pin "$pin"

# Key generation.
check "keypairgen RSA 2048" user --keypairgen --key-type rsa:2048 --id 01 --label rsa
check "keypairgen EC P-256" user --keypairgen --key-type EC:prime256v1 --id 02 --label p256 \
	--usage-sign --usage-derive
check "keypairgen EC P-384" user --keypairgen --key-type EC:secp384r1 --id 03 --label p384
check "keypairgen Ed25519" user --keypairgen --key-type EC:edwards25519 --id 04 --label ed
check "keygen AES-256" user --keygen --key-type AES:32 --id 10 --label aes --extractable
check "keygen AES-128 wrapping key" user --keygen --key-type AES:16 --id 11 --label kek --usage-wrap
check "keygen generic secret" user --keygen --key-type GENERIC:32 --id 12 --label gen

run tool --token-label test -M
has "mechanism list: ECDSA" "ECDSA-SHA256, keySize={256,521}"
has "mechanism list: EdDSA" "EDDSA, keySize={255,448}"
has "mechanism list: AES-GCM" "AES-GCM, keySize={16,32}"

# pkcs11-tool's own tests (software mechanisms lack CKF_HW: --allow-sw).
check "pkcs11-tool --test" user --test --allow-sw
has "pkcs11-tool --test: no errors" "No errors"
has "pkcs11-tool --test: signatures" "all 4 signature functions seem to work"
check "pkcs11-tool --test-ec" user --test-ec --session-rw --allow-sw --id 05 --key-type EC:prime256v1
has "pkcs11-tool --test-ec: OK" "==> OK"

# Signatures, verified by pkcs11-tool and by OpenSSL.
printf 'the data to sign\n' >"$tmp/data"
openssl dgst -sha256 -binary "$tmp/data" >"$tmp/hash"
# The public keys for OpenSSL: RSA and Ed25519 through pkcs11-tool; EC keys
# from their CKA_EC_POINT, because pkcs11-tool 0.23 reads freed memory when
# it exports one (AddressSanitizer shows it; SoftHSM2's keys fail the same).
spki_prefix() {
	case $1 in
	02) echo 3059301306072a8648ce3d020106082a8648ce3d030107034200 ;;
	03) echo 3076301006072a8648ce3d020106052b81040022036200 ;;
	esac
}
public_key() {
	local id=$1 point
	if [ -z "$(spki_prefix "$id")" ]; then
		check "read public key $id" user --read-object --type pubkey --id "$id" -o "$tmp/pub-$id"
		# DER, or PEM for Edwards keys: OpenSSL reads either into PEM.
		openssl pkey -pubin -in "$tmp/pub-$id" -out "$tmp/pub-$id.pem" 2>/dev/null ||
			openssl pkey -pubin -inform DER -in "$tmp/pub-$id" -out "$tmp/pub-$id.pem"
		return
	fi
	# (--list-objects lists every public key: take the point listed with this id.)
	run user --list-objects --type pubkey
	point=$(printf '%s\n' "$out" | awk -v id="$id" '
		$1 == "EC_POINT:" { p = $2 }
		$1 == "ID:" && $2 == id { print substr(p, 5) }')
	if [ -n "$point" ]; then ok "EC point of key $id"; else fail "EC point of key $id" "none listed"; fi
	perl -e 'print pack("H*", $ARGV[0])' "$(spki_prefix "$id")$point" >"$tmp/pub-$id.der"
	openssl pkey -pubin -inform DER -in "$tmp/pub-$id.der" -out "$tmp/pub-$id.pem"
}

for spec in "01 SHA256-RSA-PKCS -sha256" "01 SHA256-RSA-PKCS-PSS pss" "02 ECDSA-SHA256 -sha256" \
	"03 ECDSA-SHA384 -sha384" "04 EDDSA ed"; do
	set -- $spec
	id=$1 mech=$2 how=$3
	check "sign $mech" user --sign --id "$id" -m "$mech" -i "$tmp/data" -o "$tmp/sig-$id" \
		--signature-format openssl
	check "verify $mech" user --verify --id "$id" -m "$mech" -i "$tmp/data" \
		--signature-file "$tmp/sig-$id" --signature-format openssl
	public_key "$id"
	case $how in
	pss) check "openssl verifies $mech" openssl dgst -sha256 -sigopt rsa_padding_mode:pss \
		-sigopt rsa_pss_saltlen:-1 -verify "$tmp/pub-$id.pem" -signature "$tmp/sig-$id" "$tmp/data" ;;
	ed) check "openssl verifies $mech" openssl pkeyutl -verify -pubin -inkey "$tmp/pub-$id.pem" \
		-rawin -in "$tmp/data" -sigfile "$tmp/sig-$id" ;;
	*) check "openssl verifies $mech" openssl dgst "$how" \
		-verify "$tmp/pub-$id.pem" -signature "$tmp/sig-$id" "$tmp/data" ;;
	esac
done
check "sign ECDSA (a digest)" user --sign --id 02 -m ECDSA -i "$tmp/hash" -o "$tmp/sig-raw"
check "verify ECDSA (a digest)" user --verify --id 02 -m ECDSA -i "$tmp/hash" \
	--signature-file "$tmp/sig-raw"
byte=$(od -An -tu1 -j5 -N1 "$tmp/sig-raw")
printf "\\$(printf %03o $(((byte + 1) % 256)))" | dd of="$tmp/sig-raw" bs=1 seek=5 conv=notrunc 2>/dev/null
run user --verify --id 02 -m ECDSA -i "$tmp/hash" --signature-file "$tmp/sig-raw"
has "a damaged signature is invalid" "Invalid signature"

# Encryption and decryption.
head -c 100 /dev/urandom >"$tmp/plain"
for mech in AES-CBC-PAD AES-ECB AES-CBC; do
	in=$tmp/plain
	[ "$mech" = AES-CBC-PAD ] || { head -c 96 "$tmp/plain" >"$tmp/plain96"; in=$tmp/plain96; }
	check "encrypt $mech" user --encrypt --id 10 -m "$mech" --iv 000102030405060708090a0b0c0d0e0f \
		-i "$in" -o "$tmp/enc"
	check "decrypt $mech" user --decrypt --id 10 -m "$mech" --iv 000102030405060708090a0b0c0d0e0f \
		-i "$tmp/enc" -o "$tmp/dec"
	same "$mech round trip" "$in" "$tmp/dec"
done
head -c 48 /dev/urandom >"$tmp/secret"
openssl pkeyutl -encrypt -pubin -inkey "$tmp/pub-01.pem" -in "$tmp/secret" \
	-out "$tmp/rsa-enc"
check "decrypt RSA-PKCS (OpenSSL's ciphertext)" user --decrypt --id 01 -m RSA-PKCS \
	-i "$tmp/rsa-enc" -o "$tmp/rsa-dec"
same "RSA-PKCS plaintext" "$tmp/secret" "$tmp/rsa-dec"
openssl pkeyutl -encrypt -pubin -inkey "$tmp/pub-01.pem" -pkeyopt rsa_padding_mode:oaep \
	-pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256 -in "$tmp/secret" -out "$tmp/rsa-enc"
check "decrypt RSA-PKCS-OAEP (OpenSSL's ciphertext)" user --decrypt --id 01 -m RSA-PKCS-OAEP \
	--hash-algorithm SHA256 --mgf MGF1-SHA256 -i "$tmp/rsa-enc" -o "$tmp/rsa-dec"
same "RSA-PKCS-OAEP plaintext" "$tmp/secret" "$tmp/rsa-dec"

# Wrapping and unwrapping an AES key, then using the unwrapped copy.
check "wrap AES-KEY-WRAP" user --wrap -m AES-KEY-WRAP --id 11 --application-id 10 -o "$tmp/wrapped"
check "unwrap AES-KEY-WRAP" user --unwrap -m AES-KEY-WRAP --id 11 -i "$tmp/wrapped" --key-type AES: \
	--application-id 20 --application-label unwrapped
check "keypairgen RSA 2048 for wrapping" user --keypairgen --key-type rsa:2048 --id 05 --label rsa-wrap \
	--usage-wrap
check "wrap RSA-PKCS" user --wrap -m RSA-PKCS --id 05 --application-id 10 -o "$tmp/wrapped-rsa"
check "unwrap RSA-PKCS" user --unwrap -m RSA-PKCS --id 05 -i "$tmp/wrapped-rsa" --key-type AES: \
	--application-id 21 --application-label unwrapped-rsa
check "encrypt with the original key" user --encrypt --id 10 -m AES-CBC-PAD \
	--iv 000102030405060708090a0b0c0d0e0f -i "$tmp/plain" -o "$tmp/enc"
for id in 20 21; do
	check "decrypt with unwrapped key $id" user --decrypt --id $id -m AES-CBC-PAD \
		--iv 000102030405060708090a0b0c0d0e0f -i "$tmp/enc" -o "$tmp/dec-$id"
	same "unwrapped key $id decrypts" "$tmp/plain" "$tmp/dec-$id"
done

# Wrap, then decrypt what was wrapped: refused with the keys as made above.
run user --wrap -m RSA-PKCS --id 01 --application-id 10 -o "$tmp/wrapped-01"
if [ "$rc" -ne 0 ] && [ ! -s "$tmp/wrapped-01" ]; then ok "a key pair that decrypts does not wrap"
else fail "a key pair that decrypts does not wrap" "exit status $rc"; fi
run user --decrypt --id 11 -m AES-ECB -i "$tmp/wrapped" -o "$tmp/unwrapped-by-decrypt"
if [ "$rc" -ne 0 ] && [ ! -s "$tmp/unwrapped-by-decrypt" ]; then ok "a wrapping key does not decrypt"
else fail "a wrapping key does not decrypt" "exit status $rc"; fi
check "keygen AES-256 with the defaults" user --keygen --key-type AES:32 --id 13 --label aes-plain
run user --wrap -m AES-KEY-WRAP --id 13 --application-id 10 -o "$tmp/wrapped-13"
if [ "$rc" -ne 0 ] && [ ! -s "$tmp/wrapped-13" ]; then ok "a key made with the defaults does not wrap"
else fail "a key made with the defaults does not wrap" "exit status $rc"; fi

# ECDH: the token's shared secret is OpenSSL's.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/peer.pem" 2>/dev/null
openssl pkey -in "$tmp/peer.pem" -pubout -outform DER -out "$tmp/peer.der"
check "derive ECDH1-DERIVE" user --derive --id 02 -m ECDH1-DERIVE -i "$tmp/peer.der" -o "$tmp/z"
openssl pkeyutl -derive -inkey "$tmp/peer.pem" -peerkey "$tmp/pub-02.pem" -out "$tmp/z2"
same "ECDH shared secret matches OpenSSL" "$tmp/z" "$tmp/z2"

# Hashing and random numbers.
check "hash SHA256" tool --token-label test -h -m SHA256 -i "$tmp/data" -o "$tmp/digest"
same "SHA256 matches OpenSSL" "$tmp/hash" "$tmp/digest"
check "generate random" tool --token-label test --generate-random 64 -o "$tmp/random"
if [ "$(stat -c %s "$tmp/random")" = 64 ]; then ok "64 random bytes"; else not_ok "64 random bytes"; fi

# Initialising the token again makes a new token, with a serial of its own.
serial() { tool -L 2>/dev/null | sed -n 's/^ *serial num *: *//p' | head -1; }
old_serial=$(serial)
check "init the token again" tool --init-token --token-label test --label test --so-pin "$so_pin"
new_serial=$(serial)
if [ -n "$old_serial" ] && [ -n "$new_serial" ] && [ "$old_serial" != "$new_serial" ]; then
	ok "a token initialised again has a new serial"
else
	not_ok "a token initialised again has a new serial" "before: $old_serial, after: $new_serial"
fi

finish
