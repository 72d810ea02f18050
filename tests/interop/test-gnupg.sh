#!/bin/bash
# GnuPG with the key store, through gnupg-pkcs11-scd (Debian 12:
# gnupg 2.2, gnupg-pkcs11-scd 0.10), in a temporary GNUPGHOME set up by
# `p11glue setup --gnupg`: two RSA keys on a fresh store token, each with
# a certificate made by `p11glue certify`; gpg-agent learns them (their
# keygrips held on a token); an OpenPGP key is made on those keygrips
# from a parameter file; detached and clear signatures verify with gpgv
# and a changed file does not; data encrypted to the key decrypts
# through the token after a fresh agent start, and not without the
# store; the same through p11glue-proxy.so; a wrong PIN fails cleanly
# without locking the token. PINs come from a pinentry script of the
# test's. Every gpg-agent and scdaemon started here is stopped here:
# with gpgconf --kill and by PID.
#
# Usage: test-gnupg.sh P11GLUE STORE_MODULE PROXY_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
proxy=$(realpath -e "$3") || exit 1
. "$(dirname "$0")/common.sh"
need gpg gpgv gpg-agent gpgconf gpg-connect-agent openssl python3
[ -x /usr/bin/gnupg-pkcs11-scd ] || skip_all "gnupg-pkcs11-scd is not installed"

unset GPG_AGENT_INFO PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/registry
mkdir -p "$P11GLUE_CONFIG/modules"
export GNUPGHOME=$tmp/gnupg
mkdir -m 700 "$GNUPGHOME"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }

# ---------------------------------------------------------------------------
# gpg-agent and its scdaemon: started by gpg as needed, each one's PID
# recorded, all stopped on exit.
pids=()
agent_pids() {
	local a s
	a=$(bound gpg-connect-agent --no-autostart 'getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	s=$(bound gpg-connect-agent --no-autostart 'scd getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	[ -n "$a" ] && pids+=("$a")
	[ -n "$s" ] && pids+=("$s")
}
stop_agent() {
	local pid i
	agent_pids
	bound gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
		for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
}
trap 'stop_agent; rm -rf "$tmp"' EXIT
# g ARGS...: gpg, time-bounded, with the sanitizer runtimes the module
# needs when it was built with them (the agent and scdaemon it starts
# inherit the environment).
g() { client gpg --batch --no-tty "$@"; }
ca() { client gpg-connect-agent "$@"; }
# fresh_agent: stops the agent; the next gpg call starts a new one with
# the environment of the moment.
fresh_agent() { stop_agent; pids=(); }

# A pinentry speaking the Assuan protocol: every GETPIN is answered with
# the contents of $tmp/pinentry-pin (or cancelled, as a user would, while
# $tmp/pinentry-cancel exists) and counted in $tmp/pinentry.log.
cat >"$tmp/pinentry" <<EOF
#!/bin/sh
echo "OK p11glue test pinentry"
while IFS= read -r line; do
	case \$line in
	GETPIN*)
		echo getpin >>"$tmp/pinentry.log"
		if [ -e "$tmp/pinentry-cancel" ]; then
			echo "ERR 83886179 Operation cancelled <Pinentry>"
		else
			printf 'D %s\nOK\n' "\$(cat "$tmp/pinentry-pin")"
		fi ;;
	BYE*) echo OK; exit 0 ;;
	*) echo OK ;;
	esac
done
EOF
chmod 700 "$tmp/pinentry"
getpins() { [ -f "$tmp/pinentry.log" ] && wc -l <"$tmp/pinentry.log" || echo 0; }

# ---------------------------------------------------------------------------
# The token: two RSA keys, each with a self-signed certificate
new_store
printf '%s' "$pin" >"$tmp/pinentry-pin"
for k in gpg-sign gpg-encrypt; do
	run keygen "$k" rsa:2048
	ran "an RSA key '$k' generated on the token"
	run p certify --self-signed --subject "CN=p11glue $k" "pkcs11:token=test;object=$k?pin-source=$tmp/pin"
	ran "... with a certificate of the same CKA_ID made by p11glue certify"
done
# GnuPG's keygrip of an RSA key is SHA-1 of its modulus as an unsigned
# integer with a leading zero byte when the top bit is set (2048 bits).
grip_of() {
	p export-pubkey "pkcs11:token=test;object=$1;type=public" |
		openssl rsa -pubin -noout -modulus | cut -d= -f2 | sed 's/^\([89A-F]\)/00\1/' |
		python3 -c 'import hashlib, sys; print(hashlib.sha1(bytes.fromhex(sys.stdin.read().strip())).hexdigest().upper())'
}
sign_grip=$(grip_of gpg-sign)
enc_grip=$(grip_of gpg-encrypt)

# ---------------------------------------------------------------------------
# GnuPG set up by p11glue
run client "$p11glue" setup --gnupg --module "$store"
ran "p11glue setup --gnupg"
has "... names the store module" "$(cat "$GNUPGHOME/gnupg-pkcs11-scd.conf")" "*provider-p11glue-library $store*"
# The test's own lines beside p11glue's.
printf 'pinentry-program %s\n' "$tmp/pinentry" >>"$GNUPGHOME/gpg-agent.conf"
printf 'log-file %s\n' "$tmp/scd.log" >>"$GNUPGHOME/gnupg-pkcs11-scd.conf"
run client "$p11glue" status --gnupg
has "p11glue status: configured" "$out" "gnupg: configured*"

run ca 'scd learn' /bye
ran "gpg-agent starts gnupg-pkcs11-scd, which learns the token"
agent_pids
has "... the signing key, by keygrip and certificate subject" "$out" "*KEY-FRIEDNLY $sign_grip /CN=p11glue gpg-sign on test*"
has "... the encryption key" "$out" "*KEY-FRIEDNLY $enc_grip /CN=p11glue gpg-encrypt on test*"
run g --card-status
ran "gpg --card-status"
run ca "keyinfo $sign_grip" /bye
has "... the agent holds the keygrip as a key on a token (T)" "$out" "S KEYINFO $sign_grip T *"
same "... with no secret of its own: the pinentry was not asked" "$(getpins)" 0

# ---------------------------------------------------------------------------
# An OpenPGP key on the two keygrips
cat >"$tmp/key-params" <<EOF
Key-Type: RSA
Key-Grip: $sign_grip
Key-Usage: sign
Subkey-Type: RSA
Subkey-Grip: $enc_grip
Subkey-Usage: encrypt
Name-Real: p11glue test
Name-Email: test@p11glue.example
Expire-Date: 0
%commit
EOF
run g --status-fd 1 --generate-key "$tmp/key-params"
ran "gpg --generate-key with Key-Grip: an OpenPGP key on the token's keys"
fpr=$(sed -n 's/^\[GNUPG:\] KEY_CREATED [BP] \([0-9A-F]*\).*/\1/p' <<<"$out")
has "... its fingerprint" "$fpr" "????????????????????????????????????????"
has "... the token signed its self-signatures (PIN asked)" "$(getpins)" "[1-9]*"
run g --with-keygrip -K "$fpr"
has "... secret parts on a card, on the token's keygrips" "$out" \
	"sec> *Keygrip = $sign_grip*Card serial no.*ssb> *Keygrip = $enc_grip*"
g --export "$fpr" >"$tmp/pub.gpg" 2>/dev/null
sub_fpr=$(g --with-colons -k "$fpr" | awk -F: '$1 == "fpr" { n++; if (n == 2) print $10 }')

# ---------------------------------------------------------------------------
# Signatures, checked by gpgv
printf 'a document signed by a key in the p11glue store\n' >"$tmp/doc"
check_signatures() {
	local via=$1
	rm -f "$tmp/doc.sig" "$tmp/doc.asc"
	run g --local-user "$fpr" --detach-sign --output "$tmp/doc.sig" "$tmp/doc"
	ran "a detached signature$via"
	run gpgv --keyring "$tmp/pub.gpg" "$tmp/doc.sig" "$tmp/doc"
	has "... gpgv verifies it" "$err" "*Good signature from \"p11glue test <test@p11glue.example>\"*"
	printf 'changed\n' >>"$tmp/doc"
	run gpgv --keyring "$tmp/pub.gpg" "$tmp/doc.sig" "$tmp/doc"
	failed_run "... and rejects a changed file"
	has "... as a bad signature" "$err" "*BAD signature*"
	sed -i '$d' "$tmp/doc"
	run g --local-user "$fpr" --clearsign --output "$tmp/doc.asc" "$tmp/doc"
	ran "a clear signature$via"
	run gpgv --keyring "$tmp/pub.gpg" "$tmp/doc.asc"
	has "... gpgv verifies it" "$err" "*Good signature*"
	sed -i 's/signed by/forged by/' "$tmp/doc.asc"
	run gpgv --keyring "$tmp/pub.gpg" "$tmp/doc.asc"
	failed_run "... and rejects a changed text"
}
check_signatures ""

# ---------------------------------------------------------------------------
# Encryption; decryption through the token after a fresh agent start
printf 'a secret for the p11glue store\n' >"$tmp/secret"
run g --trust-model always --recipient "$fpr" --encrypt --output "$tmp/secret.gpg" "$tmp/secret"
ran "data encrypted to the key (public operation)"
run gpg --list-packets "$tmp/secret.gpg"
has "... to the encryption subkey" "$out" "*pubkey enc packet: version 3, algo 1, keyid ${sub_fpr:24}*"
check_decrypt() {
	local via=$1 before
	fresh_agent
	before=$(getpins)
	run g --output "$tmp/secret.out" --decrypt "$tmp/secret.gpg"
	ran "it decrypts after a fresh agent start$via"
	agent_pids
	same "... to the plaintext" "$(cat "$tmp/secret.out" 2>/dev/null)" "$(cat "$tmp/secret")"
	has "... through the token (after a login with the PIN)" "$(( $(getpins) - before ))" "[1-9]*"
	rm -f "$tmp/secret.out"
}
check_decrypt ""
# Without the store the same agent set-up cannot decrypt: gnupg-pkcs11-scd
# asks for the token through the pinentry, and the user cancels.
mkdir -p "$tmp/empty-store"
fresh_agent
touch "$tmp/pinentry-cancel"
run env P11GLUE_STORE_DIR="$tmp/empty-store" "${client_env[@]}" timeout 120 gpg --batch --no-tty \
	--output "$tmp/secret.out" --decrypt "$tmp/secret.gpg"
agent_pids
failed_run "with an empty store there is no key to decrypt with"
[ -e "$tmp/secret.out" ] && not_ok "... and no plaintext" || ok "... and no plaintext"
rm -f "$tmp/pinentry-cancel"
fresh_agent

# ---------------------------------------------------------------------------
# A wrong PIN: a clean failure, and the token stays usable
printf '00000000' >"$tmp/pinentry-pin"
wrong_sign() {
	local before
	fresh_agent
	before=$(getpins)
	run g --local-user "$fpr" --detach-sign --output "$tmp/bad.sig" "$tmp/doc"
	agent_pids
	failed_run "signing with a wrong PIN fails$1"
	has "... as a bad PIN" "$err" "*Bad PIN*"
	tries=$(( $(getpins) - before ))
	has "... after gnupg-pkcs11-scd asked for it (it tries three times)" "$tries" "[1-9]*"
}
wrong_sign ""
wrong_sign " a second time"
[ -e "$tmp/bad.sig" ] && not_ok "... and no signature is written" || ok "... and no signature is written"
run client "$p11glue" list-tokens "pkcs11:token=test?module-path=$store"
lacks "the user PIN is not locked after two failed gpg operations" "$out" "*user-pin-locked*"
lacks "... nor at its final try (the store allows 10 wrong PINs)" "$out" "*user-pin-final-try*"
has "... though it counts them" "$out" "*user-pin-count-low*"
printf '%s' "$pin" >"$tmp/pinentry-pin"
fresh_agent
check_signatures " with the right PIN again"
run client "$p11glue" list-tokens "pkcs11:token=test?module-path=$store"
lacks "... which resets the count" "$out" "*user-pin-count-low*"

# ---------------------------------------------------------------------------
# The same through the proxy module
printf 'module: %s\n' "$store" >"$P11GLUE_CONFIG/modules/p11glue-store.module"
fresh_agent
run client "$p11glue" setup --gnupg --direct --proxy
ran "p11glue setup --gnupg --proxy"
has "... names the proxy module" "$(cat "$GNUPGHOME/gnupg-pkcs11-scd.conf")" "*provider-p11glue-library $proxy*"
has "... and kept the test's own line" "$(cat "$GNUPGHOME/gnupg-pkcs11-scd.conf")" "*log-file $tmp/scd.log*"
run ca 'scd learn' /bye
agent_pids
has "through the proxy, gnupg-pkcs11-scd learns the same keys" "$out" "*KEY-FRIEDNLY $sign_grip *"
has "... both" "$out" "*KEY-FRIEDNLY $enc_grip *"
check_signatures " through the proxy"
check_decrypt " through the proxy"

# ---------------------------------------------------------------------------
# Undo, and every process stopped
fresh_agent
run client "$p11glue" setup --gnupg --undo
ran "p11glue setup --gnupg --undo"
same "... leaves only the test's own lines" "$(cat "$GNUPGHOME/gpg-agent.conf")" "pinentry-program $tmp/pinentry"
stop_agent
alive=
for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
same "every gpg-agent and scdaemon the test started is stopped" "$alive" ""
finish
