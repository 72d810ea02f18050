#!/bin/bash
# The key store commands of the p11glue CLI (init-token, init-pin, set-pin,
# generate-keypair, import, export-pubkey, delete-object) against the
# store module, each against a fresh temporary store; keys and files are
# checked with openssl, ssh-keygen and pkcs11-tool.
#
# Usage: test-cli-store.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/../interop/common.sh"
need openssl ssh-keygen pkcs11-tool

unset P11GLUE_CONFIG PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/no-registry
mkdir -p "$P11GLUE_CONFIG/modules"
cli() { client "$p11glue" "$@"; }
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
tool() { client pkcs11-tool --module "$store" "$@"; }
uri="pkcs11:token=test?pin-source=$tmp/pin"

# ---------------------------------------------------------------------------
# Help and usage errors
for c in init-token init-pin set-pin generate-keypair import export-pubkey delete-object; do
	run cli "$c" --help
	if [ "$rc" = 0 ] && [[ $out == "Usage: p11glue $c "* ]] && [[ $out == *"Exit status:"* ]]; then
		ok "$c --help"
	else
		not_ok "$c --help" "exit status $rc" "$out"
	fi
	run cli "$c" --no-such-option
	status "$c with an unknown option is a usage error" 2
done
run cli --help
has "the command list names the store commands" "$out" "*generate-keypair*import*export-pubkey*delete-object*"
run p generate-keypair --label x
status "generate-keypair without --type" 2
run p generate-keypair --type dsa:1024 --label x
status "generate-keypair with an unknown type" 2
run p generate-keypair --type rsa:1024 --label x
status "generate-keypair rsa:1024 is refused" 2
run p generate-keypair --type ed25519 --label x --id zz
status "generate-keypair with a bad --id" 2
run p export-pubkey --format=xml pkcs11:
status "export-pubkey --format=xml" 2
run p export-pubkey
status "export-pubkey without a URI" 2
run p delete-object 'pkcs11:token=test'
status "delete-object of a URI without object= or id=" 2
run p init-token
status "init-token without a label" 2
run p init-token --label 123456789012345678901234567890123
status "init-token with a 33-byte label" 2
run p import
status "import without a file" 2

# ---------------------------------------------------------------------------
# Tokens and PINs
export P11GLUE_STORE_DIR=$tmp/store
mkdir -p "$P11GLUE_STORE_DIR"
secret "$tmp/so-pin" "$so_pin"
secret "$tmp/pin" "$pin"
secret "$tmp/wrong" 00000000
printf '%s\n' "$so_pin" >"$tmp/open-pin"
chmod 644 "$tmp/open-pin"

run p init-token --label test --so-pin-source "$tmp/open-pin"
failed_run "a PIN file others can read is refused"
has "... saying why" "$err" "*permissions too open*"
run p init-token --label test --so-pin-source "$tmp/so-pin"
ran "init-token --label --so-pin-source"
has "... prints the new token's URI" "$out" "initialized token 'test' in slot 0: pkcs11:token=test;manufacturer=p11glue;*"
run cli list-tokens "pkcs11:token=test?module-path=$store"
has "list-tokens sees it" "$out" "*token: test*token-initialized*"
lacks "... without a user PIN yet" "$out" "*user-pin-initialized*"
run p init-token --label test --so-pin-source "$tmp/so-pin"
failed_run "init-token of an existing label without --force"
has "... saying so" "$err" "*exists already*--force*"
run p init-token --force --label test --so-pin-source "$tmp/wrong"
failed_run "init-token --force with a wrong SO PIN"
has "... is a wrong PIN" "$err" "*wrong PIN*CKR_PIN_INCORRECT*"
run p init-pin --so-pin-source "$tmp/wrong" --new-pin-source "$tmp/pin" pkcs11:token=test
failed_run "init-pin with a wrong SO PIN"
run p init-pin --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" pkcs11:token=test
ran "init-pin"
run p init-token "pkcs11:token=second?pin-source=$tmp/so-pin"
ran "init-token with the label and SO PIN in the URI"
has "... in the next free slot" "$out" "initialized token 'second' in slot 1: *"
run p generate-keypair --type ec:secp256r1 --label k "pkcs11:?pin-source=$tmp/pin"
failed_run "with two tokens, a URI must name one"
has "... and the error lists them" "$err" "*2 tokens match*'test' (slot 0)*'second' (slot 1)*"
run setsid -w "$p11glue" generate-keypair --module "$store" --type ed25519 --label k pkcs11:token=test
failed_run "without a PIN source or a terminal there is no PIN"
has "... saying so" "$err" "*none entered*"
run p generate-keypair --type ed25519 --label k "pkcs11:token=test?pin-source=$tmp/wrong"
failed_run "a wrong user PIN fails"
has "... saying so" "$err" "*login: wrong PIN*"

# set-pin: user, then SO.
secret "$tmp/pin2" 11112222
run p set-pin --new-pin-source "$tmp/pin2" "pkcs11:token=test?pin-source=$tmp/wrong"
failed_run "set-pin with a wrong current PIN"
run p set-pin --new-pin-source "$tmp/pin2" "$uri"
ran "set-pin"
run tool --token-label test --login --pin "$pin" -O
failed_run "... the old PIN no longer works"
run tool --token-label test --login --pin 11112222 -O
ran "... the new one does"
run p set-pin --new-pin-source "$tmp/pin" "pkcs11:token=test?pin-source=$tmp/pin2"
ran "set-pin back"
secret "$tmp/so-pin2" 99998888
run p set-pin --so --new-pin-source "$tmp/so-pin2" "pkcs11:token=test?pin-source=$tmp/so-pin"
ran "set-pin --so"
run p init-pin --so-pin-source "$tmp/so-pin2" --new-pin-source "$tmp/pin" pkcs11:token=test
ran "... the new SO PIN works for init-pin"
# A locked user PIN, unlocked by the SO.
for _ in $(seq 12); do tool --token-label test --login --pin 00000000 -O >/dev/null 2>&1; done
run p generate-keypair --type ed25519 --label k "$uri"
failed_run "after too many wrong PINs the user PIN is locked"
has "... saying so" "$err" "*locked*CKR_PIN_LOCKED*"
run p init-pin --so-pin-source "$tmp/so-pin2" --new-pin-source "$tmp/pin" pkcs11:token=test
ran "init-pin unlocks it"

# ---------------------------------------------------------------------------
# generate-keypair and export-pubkey
for t in rsa:2048 rsa:3072 rsa:4096 ec:secp256r1 ec:secp384r1 ec:secp521r1 ed25519 ed448; do
	run p generate-keypair --type "$t" --label "gen-$t" "$uri"
	ran "generate-keypair --type $t"
	has "... prints both URIs" "$out" "private key: pkcs11:token=test;*type=private;id=*public key:  pkcs11:token=test;*type=public;id=*"
	run p export-pubkey --output "$tmp/$t.pem" "pkcs11:token=test;object=gen-$t"
	ran "export-pubkey --format=pem of $t"
	run openssl pkey -pubin -in "$tmp/$t.pem" -noout -text
	ran "... openssl reads it"
done
run openssl pkey -pubin -in "$tmp/rsa:3072.pem" -noout -text
has "the rsa:3072 key has 3072 bits" "$out" "*Public-Key: (3072 bit)*"
run openssl pkey -pubin -in "$tmp/ec:secp384r1.pem" -noout -text
has "the ec:secp384r1 key is on P-384" "$out" "*NIST CURVE: P-384*"
run openssl pkey -pubin -in "$tmp/ed448.pem" -noout -text
has "the ed448 key is Ed448" "$out" "*ED448 Public-Key*"
# The derived ID is the SHA-1 of the public key bits (for EC: the point).
id=$(openssl pkey -pubin -in "$tmp/ec:secp256r1.pem" -outform DER | tail -c 65 | sha1sum | cut -c1-40)
run p export-pubkey "pkcs11:token=test;object=gen-ec:secp256r1;id=$(sed 's/../%&/g' <<<"$id")"
ran "the CKA_ID is SHA-1 of the public point"
run p generate-keypair --type ec:p-256 --label with-id --id a1:b2 "$uri"
has "--id is used" "$out" "*object=with-id;type=private;id=%A1%B2*"
run p generate-keypair --type ed25519 --label again --id a1b2 "$uri"
failed_run "an ID already on the token is refused"

run p export-pubkey --format=ssh "pkcs11:token=test;object=gen-ed25519"
ran "export-pubkey --format=ssh"
has "... is an OpenSSH line with the label as comment" "$out" "ssh-ed25519 AAAA* gen-ed25519"
printf '%s\n' "$out" >"$tmp/ed.pub"
run ssh-keygen -l -f "$tmp/ed.pub"
ran "... that ssh-keygen reads"
run p export-pubkey --format=ssh "pkcs11:token=test;object=gen-ec:secp256r1"
ssh-keygen -i -m PKCS8 -f "$tmp/ec:secp256r1.pem" >"$tmp/ec-conv.pub" 2>/dev/null
same "the ssh export is the key of the PEM export" "$(cut -d' ' -f1-2 <<<"$out")" "$(cut -d' ' -f1-2 "$tmp/ec-conv.pub")"
run p export-pubkey --format=ssh "pkcs11:token=test;type=public"
status "export-pubkey of every public key exits 1 because of Ed448" 1
has "... and prints the others" "$(grep -c '^ssh-\|^ecdsa-' <<<"$out")" 8
has "... saying why" "$err" "*gen-ed448*OpenSSH has no format*"
run p export-pubkey "pkcs11:token=test;object=nothing"
failed_run "export-pubkey of no key"

# The private keys stay in the token.
run tool --token-label test --login --pin "$pin" --list-objects --type privkey
has "generated private keys are sensitive, never extractable" "$out" "*gen-ed25519*Access: * sensitive, always sensitive, never extractable*"

# ---------------------------------------------------------------------------
# import: OpenSSH keys
data=$(cd "$(dirname "$0")/../data" && pwd)
secret "$tmp/ssh-pass" "p11glue test"
secret "$tmp/bad-pass" "p11glue tesT"
for k in ed25519-plain ed25519-aes256-ctr ed25519-aes256-gcm ecdsa-256 ecdsa-384 ecdsa-521 rsa-2048 rsa-3072-plain; do
	run p import --passphrase-source "$tmp/ssh-pass" "$data/openssh/$k" "$uri"
	ran "import OpenSSH key $k"
	label=$(cut -d' ' -f3- "$data/openssh/$k.pub")
	run p export-pubkey --format=ssh "pkcs11:token=test;object=$(sed 's/ /%20/g' <<<"$label")"
	same "... export-pubkey gives back its .pub line" "$out" "$(cat "$data/openssh/$k.pub")"
done
run p import --passphrase-source "$tmp/bad-pass" "$data/openssh/ed25519-aes128-ctr" "$uri"
failed_run "import with a wrong passphrase"
has "... saying so" "$err" "*wrong passphrase*"
run p export-pubkey "pkcs11:token=test;object=ed25519%20aes128-ctr"
failed_run "... and nothing was imported"
run p import --passphrase-source "$tmp/ssh-pass" "$data/openssh/ed25519-plain" "$uri"
failed_run "importing the same key twice is refused"
has "... saying so" "$err" "*on the token already*"
run p import --passphrase-source "$tmp/ssh-pass" "$data/openssh/dsa" "$uri"
failed_run "a DSA key is refused"
run p import "$data/openssh/ed25519-plain.pub" "$uri"
failed_run "a .pub file is refused"
has "... saying why" "$err" "*public key (.pub)*"
run p import --label renamed --id 0c0d --passphrase-source "$tmp/ssh-pass" "$data/openssh/ed25519-aes128-gcm" "$uri"
has "import --label --id" "$out" "*object=renamed;type=private;id=%0C%0D*"

# id_of LABEL: the hexadecimal CKA_ID of the private key labelled LABEL.
id_of() {
	"$p11glue" list-objects --login \
		"pkcs11:token=test;type=private;object=$1?module-path=$store&pin-source=$tmp/pin" |
		sed -n 's/^    id: //p'
}

# The imported private key signs, and the file's public key verifies.
printf 'data to sign\n' >"$tmp/data"
openssl dgst -sha256 -binary "$tmp/data" >"$tmp/data.sha256"
run tool --token-label test --login --pin "$pin" --sign -m ECDSA --id "$(id_of ecdsa-384)" \
	-i "$tmp/data.sha256" -o "$tmp/sig" --signature-format openssl
ran "pkcs11-tool signs with the imported ecdsa-384 key"
ssh-keygen -e -m PKCS8 -f "$data/openssh/ecdsa-384.pub" >"$tmp/ecdsa-384.pem"
run openssl dgst -sha256 -verify "$tmp/ecdsa-384.pem" -signature "$tmp/sig" "$tmp/data"
has "openssl verifies it with the OpenSSH file's public key" "$out" "Verified OK"
run tool --token-label test --login --pin "$pin" --sign -m SHA256-RSA-PKCS --id "$(id_of rsa-2048)" \
	-i "$tmp/data" -o "$tmp/rsa-sig"
ran "pkcs11-tool signs with the imported RSA key"
ssh-keygen -e -m PKCS8 -f "$data/openssh/rsa-2048.pub" >"$tmp/rsa-2048.pem"
run openssl dgst -sha256 -verify "$tmp/rsa-2048.pem" -signature "$tmp/rsa-sig" "$tmp/data"
has "... and openssl verifies it" "$out" "Verified OK"
run tool --token-label test --login --pin "$pin" --list-objects --type privkey
access=$(awk '/^Private Key Object/ { mine = 0 } /label: *ed25519 plain$/ { mine = 1 }
	mine && /Access:/ { sub(/^ *Access: */, ""); print }' <<<"$out")
same "an imported key is sensitive, not extractable (nor always sensitive: it was not made here)" \
	"$access" "sensitive"

# ---------------------------------------------------------------------------
# import: PEM, PKCS#8, PKCS#12, certificates
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/ca.key" \
	-subj /CN=Test-CA -days 2 -out "$tmp/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$tmp/leaf.key" -subj /CN=leaf.test -out "$tmp/leaf.csr" 2>/dev/null
openssl x509 -req -in "$tmp/leaf.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
	-days 2 -out "$tmp/leaf.pem" 2>/dev/null
openssl pkcs12 -export -inkey "$tmp/leaf.key" -in "$tmp/leaf.pem" -certfile "$tmp/ca.pem" \
	-name "my leaf" -passout "pass:p11glue test" -out "$tmp/leaf.p12"
run p import --passphrase-source "$tmp/ssh-pass" "$tmp/leaf.p12" "$uri"
ran "import PKCS#12"
has "... makes the public key, private key, certificate and CA certificate" "$out" \
	"public key: *object=my%20leaf;type=public;id=*private key: *object=my%20leaf;type=private;id=*certificate: *object=my%20leaf;type=cert;id=*certificate: *object=Test-CA;type=cert;id=*"
ski=$(openssl x509 -in "$tmp/ca.pem" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr a-f A-F)
has "... the CA certificate's ID is its subject key identifier" "$out" "*object=Test-CA;type=cert;id=$(sed 's/../%&/g' <<<"$ski")"
leaf_id=$(sed -n 's/^private key: .*;id=//p' <<<"$out")
has "... and the key and its certificate share an ID" "$out" "*type=cert;id=$leaf_id*"
run p export-pubkey "pkcs11:token=test;object=my%20leaf;type=cert"
ran "export-pubkey of a certificate's key"
same "... is the certificate's key" "$out" "$(openssl x509 -in "$tmp/leaf.pem" -noout -pubkey)"
run tool --token-label test --read-object --type cert --label "my leaf" -o "$tmp/leaf-back.der"
ran "pkcs11-tool reads the certificate"
same "... the very certificate" "$(openssl x509 -inform DER -in "$tmp/leaf-back.der" -outform PEM)" "$(cat "$tmp/leaf.pem")"
run p import --passphrase-source "$tmp/bad-pass" "$tmp/leaf.p12" "$uri"
failed_run "PKCS#12 with a wrong passphrase"

openssl pkcs8 -topk8 -in "$tmp/ca.key" -passout "pass:p11glue test" -out "$tmp/ca-enc.pem"
run p import --passphrase-source "$tmp/ssh-pass" "$tmp/ca-enc.pem" "$uri"
ran "import encrypted PKCS#8"
has "... labelled after the file" "$out" "*object=ca-enc;type=private;*"
run p import "$tmp/ca.pem" "$uri"
ran "import a certificate on the token already"
has "... skips it" "$out" "*Test-CA' is on the token already: skipped*"
openssl genpkey -algorithm ed448 -outform DER -out "$tmp/ed448.der"
run p import "$tmp/ed448.der" "$uri"
ran "import a DER PKCS#8 Ed448 key"
cat "$tmp/leaf.key" "$tmp/leaf.pem" >"$tmp/bundle.pem"
run p import --id 77 "$tmp/bundle.pem" "$uri"
ran "import a PEM key with its certificate"
has "... the certificate gets the key's ID and name" "$out" "*private key: *object=leaf.test;type=private;id=%77*certificate: *object=leaf.test;type=cert;id=%77*"
openssl genpkey -algorithm x25519 -out "$tmp/x25519.pem"
run p import "$tmp/x25519.pem" "$uri"
failed_run "an X25519 key is refused"
has "... saying the store cannot hold it" "$err" "*cannot hold this type of key*"

# ---------------------------------------------------------------------------
# delete-object
run p delete-object "pkcs11:token=test;object=my%20leaf;type=cert?pin-source=$tmp/pin"
ran "delete-object of a certificate"
has "... prints what it deleted" "$out" "deleted pkcs11:token=test;*object=my%20leaf;type=cert;*"
run p delete-object "pkcs11:token=test;object=my%20leaf?pin-source=$tmp/pin"
status "delete-object of a key pair without --all is refused" 1
run p delete-object --all "pkcs11:token=test;object=my%20leaf?pin-source=$tmp/pin"
ran "delete-object --all of a key pair"
has "... deletes both halves" "$(grep -c '^deleted ' <<<"$out")" 2
run p export-pubkey "pkcs11:token=test;object=my%20leaf"
failed_run "... which are gone"
run p delete-object "pkcs11:token=test;object=my%20leaf?pin-source=$tmp/pin"
failed_run "delete-object of nothing"

# ---------------------------------------------------------------------------
# Choosing the module and the store
run cli generate-keypair --type ed25519 --label default-module "$uri"
ran "without --module, the build tree's module is used"
mkdir -p "$tmp/other"
run p init-token --store "$tmp/other" --label elsewhere --so-pin-source "$tmp/so-pin"
ran "init-token --store DIR"
[ -f "$tmp/other/token-0.sqlite" ] && ok "... makes the token in DIR" || not_ok "... makes the token in DIR" "$(ls "$tmp/other")"
mkdir -p "$tmp/reg/modules" "$tmp/third"
printf 'module: %s\nx-init-reserved: store=%s\n' "$store" "$tmp/third" >"$tmp/reg/modules/p11glue-store.module"
run env P11GLUE_CONFIG="$tmp/reg" "$p11glue" init-token --label third --so-pin-source "$tmp/so-pin"
ran "the registered p11glue-store module is used, with its x-init-reserved"
[ -f "$tmp/third/token-0.sqlite" ] && ok "... which names its store" || not_ok "... which names its store" "$(ls "$tmp/third")"
run cli export-pubkey "pkcs11:token=test;object=gen-ed25519?module-path=$store"
ran "a URI with module-path selects the module"
run cli export-pubkey "pkcs11:token=test;object=gen-ed25519?module-name=nonesuch"
failed_run "a URI with an unregistered module-name fails"
has "... saying so" "$err" "*no module named 'nonesuch'*"
run cli export-pubkey --module "$tmp/nothing.so" "pkcs11:token=test"
failed_run "a missing --module fails"
run p init-token --store "$tmp/with space" --label x --so-pin-source "$tmp/so-pin"
status "--store with white space is a usage error" 2

# Every command finds the key store the same way: without a registry
# that names it, the listing commands see the store the store commands
# use (here the build tree's), not only the registered modules.
mkdir -p "$tmp/home"
same_way=(env -u P11GLUE_CONFIG HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
	P11GLUE_STORE_DIR="$tmp/same-way" "${client_env[@]}" timeout 120 "$p11glue")
run "${same_way[@]}" init-token --label sameway --so-pin-source "$tmp/so-pin"
ran "init-token on the unregistered key store"
printf '%s' 1234 >"$tmp/sw-pin"; chmod 600 "$tmp/sw-pin"
run "${same_way[@]}" init-pin --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/sw-pin" 'pkcs11:token=sameway'
ran "... init-pin"
run "${same_way[@]}" generate-keypair --type ec:secp256r1 --label k "pkcs11:token=sameway?pin-source=$tmp/sw-pin"
ran "... generate-keypair"
run "${same_way[@]}" list-tokens 'pkcs11:token=sameway'
ran "list-tokens finds that token"
has "... by its label" "$out" "*sameway*"
run "${same_way[@]}" list-objects 'pkcs11:token=sameway;object=k'
ran "list-objects finds its objects"
has "... the public key" "$out" "*object=k;type=public*"
run "${same_way[@]}" list-modules
lacks "list-modules still lists registered modules only, as p11-kit does" "$out" "*p11glue key store*"

finish
