#!/bin/bash
# S/MIME (CMS, RFC 5652) with keys of the key store: a CA key and a user
# key on a fresh token, each certificate made by `p11glue certify` (the
# user's with an rfc822Name, --san email:); NSS's cmsutil signs with the
# token key (the store module added to an NSS database by modutil) and
# openssl cms verifies; openssl cms encrypts to the certificate and
# cmsutil -D and gpgsm (through gpg-agent and gnupg-pkcs11-scd, set up
# by `p11glue setup --gnupg`) decrypt; openssl cms signs and decrypts
# through the PKCS#11 engine. Every gpg-agent and scdaemon started here
# is stopped here, with gpgconf --kill and by PID.
#
# Usage: test-smime.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need cmsutil certutil modutil openssl gpgsm gpg-connect-agent gpgconf pkcs11-tool
[ -x /usr/bin/gnupg-pkcs11-scd ] || skip_all "gnupg-pkcs11-scd is not installed"

unset GPG_AGENT_INFO PKCS11_MODULE_PATH OPENSSL_CONF
export P11GLUE_CONFIG=$tmp/registry
mkdir -p "$P11GLUE_CONFIG/modules"
export GNUPGHOME=$tmp/gnupg
mkdir -m 700 "$GNUPGHOME"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
nss() { client env -u P11GLUE_STORE_DIR "$@"; }

pids=()
stop_agent() {
	local a s pid
	a=$(bound gpg-connect-agent --no-autostart 'getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	s=$(bound gpg-connect-agent --no-autostart 'scd getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	bound gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1
	for pid in $a $s "${pids[@]}"; do
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
}
trap 'stop_agent; rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------------------
# The token: a CA and a user, Alice, with certificates made by p11glue
new_store
uri() { printf 'pkcs11:token=test;object=%s?pin-source=%s' "$1" "$tmp/pin"; }
run keygen ca rsa:2048 0a
ran "a CA key"
run p certify --self-signed --is-ca --subject "CN=p11glue S/MIME test CA" "$(uri ca)"
ran "... its certificate"
run keygen alice rsa:2048 01
ran "Alice's key"
run p certify --ca "$(uri ca)" --subject "CN=Alice" --san email:alice@example.org "$(uri alice)"
ran "... her certificate, signed by the CA key on the token, with an email address"
for c in ca:0a alice:01; do
	client pkcs11-tool --module "$store" --read-object --type cert --id "${c#*:}" 2>/dev/null |
		openssl x509 -inform DER -out "$tmp/${c%:*}.pem"
done
run openssl x509 -in "$tmp/alice.pem" -noout -ext subjectAltName,keyUsage
has "... an rfc822Name, and key uses for signing and key transport" "$out" \
	"*Digital Signature, Key Encipherment*email:alice@example.org*"
printf 'Subject: a test\n\nA mail signed and encrypted with keys in the p11glue store.\n' >"$tmp/mail"

# ---------------------------------------------------------------------------
# NSS: cmsutil signs with the token key; openssl verifies
mkdir "$tmp/db"
secret "$tmp/nss-pin" "$pin"
nss certutil -N -d "sql:$tmp/db" --empty-password
run nss modutil -dbdir "sql:$tmp/db" -add p11glue-store -libfile "$store" -string "store=$P11GLUE_STORE_DIR" -force
ran "modutil adds the store to an NSS database"
run nss certutil -A -d "sql:$tmp/db" -n smime-ca -t ,C, -i "$tmp/ca.pem"
ran "... the CA trusted for mail there"
run nss cmsutil -S -N test:alice -d "sql:$tmp/db" -f "$tmp/nss-pin" -i "$tmp/mail" -o "$tmp/mail.p7s"
ran "cmsutil -S signs with Alice's key on the token"
run openssl cms -verify -inform DER -in "$tmp/mail.p7s" -CAfile "$tmp/ca.pem" -purpose smimesign -out "$tmp/mail.verified"
ran "openssl cms -verify verifies the signature up to the CA"
same "... over the mail" "$(cat "$tmp/mail.verified")" "$(cat "$tmp/mail")"
run openssl cms -verify -inform DER -in "$tmp/mail.p7s" -CAfile "$tmp/alice.pem" -partial_chain -out /dev/null
ran "... made by Alice's certificate"
cp "$tmp/mail.p7s" "$tmp/forged.p7s"
python3 - "$tmp/forged.p7s" <<'EOF'
import sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
i = d.find(b'A mail signed')
d[i] ^= 1
open(p, 'wb').write(d)
EOF
run openssl cms -verify -inform DER -in "$tmp/forged.p7s" -CAfile "$tmp/ca.pem" -out /dev/null
failed_run "... and refuses a changed mail"

# ---------------------------------------------------------------------------
# openssl encrypts to Alice's certificate; cmsutil decrypts on the token
run openssl cms -encrypt -binary -aes256 -in "$tmp/mail" -outform DER -out "$tmp/mail.p7m" "$tmp/alice.pem"
ran "openssl cms -encrypt to Alice's certificate"
run nss cmsutil -D -d "sql:$tmp/db" -f "$tmp/nss-pin" -i "$tmp/mail.p7m" -o "$tmp/mail.nss"
ran "cmsutil -D decrypts with the token key"
same "... to the mail" "$(cat "$tmp/mail.nss")" "$(cat "$tmp/mail")"

# ---------------------------------------------------------------------------
# gpgsm through gpg-agent and gnupg-pkcs11-scd
cat >"$tmp/pinentry" <<EOF
#!/bin/sh
echo "OK p11glue test pinentry"
while IFS= read -r line; do
	case \$line in
	GETPIN*) echo getpin >>"$tmp/pinentry.log"; printf 'D %s\nOK\n' "$pin" ;;
	BYE*) echo OK; exit 0 ;;
	*) echo OK ;;
	esac
done
EOF
chmod 700 "$tmp/pinentry"
run client "$p11glue" setup --gnupg --module "$store"
ran "p11glue setup --gnupg"
printf 'pinentry-program %s\n' "$tmp/pinentry" >>"$GNUPGHOME/gpg-agent.conf"
gs() { client gpgsm --batch --disable-crl-checks --disable-policy-checks "$@"; }
run gs --import "$tmp/ca.pem"
ran "gpgsm imports the CA certificate"
printf '%s S\n' "$(openssl x509 -in "$tmp/ca.pem" -noout -fingerprint -sha1 | cut -d= -f2)" \
	>"$GNUPGHOME/trustlist.txt"
run gs --learn-card
ran "gpgsm --learn-card: the token's keys and certificates through gnupg-pkcs11-scd"
run gs -K
has "... Alice's key is a secret key on a card" "$out" "*CN=Alice*alice@example.org*"
run gs --output "$tmp/mail.gpgsm" --decrypt "$tmp/mail.p7m"
ran "gpgsm --decrypt decrypts with the token key"
same "... to the mail" "$(cat "$tmp/mail.gpgsm" 2>/dev/null)" "$(cat "$tmp/mail")"
has "... after a login with the PIN" "$(cat "$tmp/pinentry.log" 2>/dev/null)" "getpin*"
stop_agent

# ---------------------------------------------------------------------------
# openssl cms through the PKCS#11 engine
engine_so=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')/pkcs11.so
if [ -f "$engine_so" ]; then
	key="pkcs11:token=test;object=alice;type=private?pin-value=$pin"
	run client env PKCS11_MODULE_PATH="$store" openssl cms -sign -engine pkcs11 -keyform engine \
		-inkey "$key" -signer "$tmp/alice.pem" -nodetach -binary -in "$tmp/mail" -outform DER -out "$tmp/mail-e.p7s"
	ran "openssl cms -sign through the engine"
	run openssl cms -verify -inform DER -in "$tmp/mail-e.p7s" -CAfile "$tmp/ca.pem" -out /dev/null
	ran "... verifies"
	run client env PKCS11_MODULE_PATH="$store" openssl cms -decrypt -engine pkcs11 -keyform engine \
		-inkey "$key" -recip "$tmp/alice.pem" -inform DER -in "$tmp/mail.p7m" -out "$tmp/mail.eng"
	ran "openssl cms -decrypt through the engine"
	same "... to the mail" "$(cat "$tmp/mail.eng" 2>/dev/null)" "$(cat "$tmp/mail")"
else
	skip "openssl cms through the engine" "libengine-pkcs11-openssl is not installed"
fi

finish
