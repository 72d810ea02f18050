#!/bin/bash
# p11glue certify and p11glue request against the store module, on a
# fresh temporary store: certificates for every key type the store holds,
# self-signed and issued by a CA key on another token, and PKCS#10
# requests, each checked with openssl (verify, req -verify, x509 -text);
# the certificate lands on the token with the key's CKA_ID and label.
#
# Usage: test-cli-certify.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/../interop/common.sh"
need openssl

unset PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/no-registry
mkdir -p "$P11GLUE_CONFIG/modules"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
key() { echo "pkcs11:token=${2:-test};object=$1?pin-source=$tmp/pin"; }
# id_of TEXT: the id= of the first URI in TEXT.
id_of() { sed -n 's/.*;id=\([%0-9A-F]*\).*/\1/p' <<<"$1" | head -n 1; }

# ---------------------------------------------------------------------------
# Help and usage errors (no token needed)
for c in certify request; do
	run client "$p11glue" "$c" --help
	if [ "$rc" = 0 ] && [[ $out == "Usage: p11glue $c "* ]] && [[ $out == *"Exit status:"* ]] &&
		[[ $out == *"Example"* ]]; then
		ok "$c --help"
	else
		not_ok "$c --help" "exit status $rc" "$out"
	fi
	run client "$p11glue" "$c" --no-such-option pkcs11:
	status "$c with an unknown option is a usage error" 2
	run client "$p11glue" "$c" --hash md5 pkcs11:object=k
	status "$c --hash md5 is a usage error" 2
done
run client "$p11glue" --help
has "the command list names certify and request" "$out" "*certify*request*"
run p certify pkcs11:object=k
status "certify without --self-signed or --ca" 2
run p certify --self-signed --ca pkcs11:object=ca pkcs11:object=k
status "certify with both --self-signed and --ca" 2
run p certify --self-signed
status "certify without a URI" 2
for d in 0 abc 36501 -1; do
	run p certify --self-signed --days "$d" pkcs11:object=k
	status "certify --days $d" 2
done
run p certify --self-signed 'pkcs11:object=k;type=cert'
status "certify of a URI naming a certificate" 2
run p request 'pkcs11:object=k;type=public'
status "request of a URI naming a public key" 2

# ---------------------------------------------------------------------------
# Self-signed certificates for every key type
new_store
secret "$tmp/wrong" 00000000
declare -A ids
for t in rsa:2048 ec:secp256r1 ec:secp384r1 ec:secp521r1 ed25519 ed448; do
	run keygen "k-$t" "$t"
	kid=$(id_of "$out")
	ids[$t]=$kid
	run p certify --self-signed --subject "CN=Key $t,O=p11glue tests" --days 30 \
		--output "$tmp/$t.pem" "$(key "k-$t")"
	ran "certify --self-signed a $t key"
	has "... prints the URI of the certificate, labelled as the key" "$out" \
		"certificate: pkcs11:token=test;*object=k-${t//:/%3A};type=cert;id=*"
	same "... which has the key's CKA_ID" "$(id_of "$out")" "$kid"
	run openssl verify -CAfile "$tmp/$t.pem" "$tmp/$t.pem"
	has "... openssl verifies its signature" "$out" "*: OK"
	run openssl x509 -in "$tmp/$t.pem" -noout -subject -issuer -nameopt RFC2253
	same "... subject and issuer as asked" "$out" \
		"subject=CN=Key $t,O=p11glue tests
issuer=CN=Key $t,O=p11glue tests"
	p export-pubkey --output "$tmp/$t.pub" "pkcs11:token=test;object=k-$t;type=public" >/dev/null 2>&1
	same "... and it holds the token key's public key" \
		"$(openssl x509 -in "$tmp/$t.pem" -noout -pubkey)" "$(cat "$tmp/$t.pub")"
	run p export-pubkey "pkcs11:token=test;object=k-$t;type=cert"
	same "... and is on the token" "$out" "$(cat "$tmp/$t.pub")"
done
run openssl x509 -in "$tmp/rsa:2048.pem" -noout -text
has "RSA: sha256WithRSAEncryption, version 3" "$out" "*Version: 3 (0x2)*Signature Algorithm: sha256WithRSAEncryption*"
has "... an end-entity certificate" "$out" "*Basic Constraints: critical*CA:FALSE*Key Usage: critical*Digital Signature, Key Encipherment*"
ski=$(openssl x509 -in "$tmp/rsa:2048.pem" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' :')
same "... whose subject key identifier is the CKA_ID" "$ski" "$(tr -d % <<<"${ids[rsa:2048]}")"
run openssl x509 -in "$tmp/ec:secp384r1.pem" -noout -text
has "P-384: ecdsa-with-SHA384" "$out" "*Signature Algorithm: ecdsa-with-SHA384*"
run openssl x509 -in "$tmp/ec:secp521r1.pem" -noout -text
has "P-521: ecdsa-with-SHA512" "$out" "*Signature Algorithm: ecdsa-with-SHA512*"
run openssl x509 -in "$tmp/ed448.pem" -noout -text
has "Ed448: ED448" "$out" "*Signature Algorithm: ED448*"
start=$(date -d "$(openssl x509 -in "$tmp/ed25519.pem" -noout -startdate | cut -d= -f2)" +%s)
end=$(date -d "$(openssl x509 -in "$tmp/ed25519.pem" -noout -enddate | cut -d= -f2)" +%s)
same "--days 30: valid for 30 days" "$((end - start))" "$((30 * 86400))"

# Options of the certificate.
run keygen opts ec:secp256r1
run p certify --self-signed --subject "/C=DE/O=Example/CN=Opt\\, Key" --hash sha512 \
	--san DNS:host.example --san email:me@example.org --san IP:192.0.2.1 \
	--label "opts cert" --output - "$(key opts)"
ran "certify with --subject in OpenSSL's order, --hash, --san, --label and --output -"
has "... prints the certificate" "$out" "*object=opts%20cert;type=cert*-----BEGIN CERTIFICATE-----*"
sed -n '/BEGIN CERT/,/END CERT/p' <<<"$out" >"$tmp/opts.pem"
run openssl x509 -in "$tmp/opts.pem" -noout -subject -nameopt RFC2253 -ext subjectAltName
has "... the subject and alternative names" "$out" \
	"subject=CN=Opt\\\\, Key,O=Example,C=DE*DNS:host.example, email:me@example.org, IP Address:192.0.2.1*"
run openssl x509 -in "$tmp/opts.pem" -noout -text
has "... signed with SHA-512" "$out" "*ecdsa-with-SHA512*"
run p certify --self-signed "$(key opts)"
failed_run "a second certificate for a key is refused"
has "... saying why" "$err" "*already*--replace*"
run p certify --self-signed --days 2 --replace "$(key opts)"
ran "--replace replaces it"
has "... saying so" "$out" "replaced: *certificate: *"
run p export-pubkey "pkcs11:token=test;object=opts%20cert;type=cert"
failed_run "... the old certificate is gone"
run p export-pubkey "pkcs11:token=test;object=opts;type=cert"
ran "... the new one has the key's label"
run p certify --self-signed --subject "CN" "$(key opts)"
status "a malformed --subject is a usage error" 2
run p certify --self-signed --subject "NoSuchType=x" --replace "$(key opts)"
status "an unknown attribute type in --subject" 2
run p certify --self-signed --hash sha256 --replace "$(key k-ed25519)"
failed_run "Ed25519 with --hash is refused"
run p certify --self-signed --san "DNS" --replace "$(key opts)"
failed_run "a malformed --san is refused"
run p certify --self-signed --replace "pkcs11:token=test;object=opts?pin-source=$tmp/wrong"
failed_run "a wrong PIN fails"
has "... saying so" "$err" "*wrong PIN*"
run p certify --self-signed "$(key no-such-key)"
failed_run "a URI that names no key fails"
has "... saying so" "$err" "*no private key matches*"
run p certify --self-signed "pkcs11:token=test?pin-source=$tmp/pin"
failed_run "a URI that names several keys fails"
has "... and lists them" "$err" "*private keys match*object=k-rsa%3A2048*"

# ---------------------------------------------------------------------------
# A CA on its own token issues a certificate for a key on this one
run client "$p11glue" init-token --module "$store" --label ca --so-pin-source "$tmp/so-pin"
run client "$p11glue" init-pin --module "$store" --so-pin-source "$tmp/so-pin" \
	--new-pin-source "$tmp/pin" pkcs11:token=ca
token=ca run keygen root ec:secp384r1
ran "a CA key on a second token"
run p certify --self-signed --is-ca --subject "CN=p11glue test CA" --days 60 --output "$tmp/ca.pem" \
	"$(key root ca)"
ran "certify --self-signed --is-ca"
run openssl x509 -in "$tmp/ca.pem" -noout -text
has "... a CA certificate" "$out" "*CA:TRUE*Certificate Sign, CRL Sign*"
run keygen leaf rsa:3072
run p certify --ca "$(key root ca)" --subject CN=leaf.example --san DNS:leaf.example \
	--output "$tmp/leaf.pem" "$(key leaf)"
ran "certify --ca with the CA key on another token"
run openssl verify -CAfile "$tmp/ca.pem" "$tmp/leaf.pem"
has "... openssl verify -CAfile ca.pem accepts it" "$out" "*leaf.pem: OK"
run openssl verify -CAfile "$tmp/ec:secp256r1.pem" "$tmp/leaf.pem"
failed_run "... and another CA does not"
run openssl x509 -in "$tmp/leaf.pem" -noout -issuer -text
has "... issued by the CA, signed with its P-384 key" "$out" "issuer=CN = p11glue test CA*ecdsa-with-SHA384*"
ca_ski=$(openssl x509 -in "$tmp/ca.pem" -noout -ext subjectKeyIdentifier | tail -n 1 | tr -d ' ')
has "... naming the CA's key identifier" "$(openssl x509 -in "$tmp/leaf.pem" -noout -ext authorityKeyIdentifier)" \
	"*$ca_ski*"
run p export-pubkey "pkcs11:token=test;object=leaf;type=cert"
ran "... and it is on the key's token"
run keygen notca ec:secp256r1
run p certify --self-signed "$(key notca)"
run keygen leaf2 ec:secp256r1
run p certify --ca "$(key notca)" "$(key leaf2)"
failed_run "a CA key whose certificate is not a CA's is refused"
has "... saying so" "$err" "*no CA certificate*"
run p export-pubkey "pkcs11:token=test;object=leaf2;type=cert"
failed_run "... and nothing is stored"

# ---------------------------------------------------------------------------
# PKCS#10 requests
for t in rsa:2048 ec:secp256r1 ed25519; do
	run p request --subject "CN=req $t" --san "DNS:req.example" "$(key "k-$t")"
	ran "request for a $t key"
	printf '%s\n' "$out" >"$tmp/$t.csr"
	run openssl req -in "$tmp/$t.csr" -noout -verify -subject -nameopt RFC2253
	has "... openssl req -verify accepts it" "$err" "*verify OK*"
	same "... with the subject asked for" "$out" "subject=CN=req $t"
	same "... it holds the key's public key" "$(openssl req -in "$tmp/$t.csr" -noout -pubkey)" \
		"$(cat "$tmp/$t.pub")"
	run openssl req -in "$tmp/$t.csr" -noout -text
	has "... with the subjectAltName requested" "$out" "*Requested Extensions:*DNS:req.example*"
done
run p request --output "$tmp/default.csr" "$(key k-ec:secp384r1)"
ran "request --output"
run openssl req -in "$tmp/default.csr" -noout -text
has "... the subject defaults to the key's label" "$out" "*Subject: CN = k-ec:secp384r1*ecdsa-with-SHA384*"
run p request "pkcs11:token=test;object=k-ed25519?pin-source=$tmp/wrong"
failed_run "request with a wrong PIN fails"

# A request signed by a CA elsewhere: the certificate, imported alone,
# takes the CKA_ID of its key on the token (given with --id here, not the
# one the key's public value gives), so that programs pair the two.
run keygen issued ec:secp256r1 5c
ran "(a key with --id 5c)"
run p request --subject "CN=issued elsewhere" --output "$tmp/issued.csr" "$(key issued)"
ran "(its request)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=other CA" \
	-keyout "$tmp/other-ca.key" -out "$tmp/other-ca.pem" -days 2 2>/dev/null
openssl x509 -req -in "$tmp/issued.csr" -CA "$tmp/other-ca.pem" -CAkey "$tmp/other-ca.key" \
	-CAcreateserial -days 2 -out "$tmp/issued.pem" 2>/dev/null
run p import "$tmp/issued.pem" "pkcs11:token=test?pin-source=$tmp/pin"
ran "import of the certificate the other CA issued"
run client "$p11glue" list-objects "pkcs11:token=test;object=issued%20elsewhere;type=cert?module-path=$store"
has "... stored with its key's CKA_ID" "$out" "*;id=%5C*"

# A key with CKA_ALWAYS_AUTHENTICATE (made by pkcs11-tool --always-auth):
# certify gives the PIN again for its signature (C_Login with
# CKU_CONTEXT_SPECIFIC), from the same PIN source.
if command -v pkcs11-tool >/dev/null &&
	client pkcs11-tool --module "$store" --token-label test --login --pin "$pin" --keypairgen \
		--key-type EC:prime256v1 --id 7a --label always --always-auth >/dev/null 2>&1; then
	run p certify --self-signed --output "$tmp/always.pem" "$(key always)"
	ran "certify with a CKA_ALWAYS_AUTHENTICATE key logs in for the signature"
	run openssl verify -CAfile "$tmp/always.pem" "$tmp/always.pem"
	has "... and openssl verifies the certificate" "$out" "*: OK"
else
	skip "certify with a CKA_ALWAYS_AUTHENTICATE key" "pkcs11-tool cannot make one here"
	skip "... and openssl verifies the certificate" "pkcs11-tool cannot make one here"
fi
finish
