#!/bin/bash
# p11glue adopt's command line against the store module, in a throwaway
# HOME: what it takes and leaves of ~/.ssh (DSA, PuTTY and 1024-bit RSA
# keys left with the reason; config files not looked at), passphrases
# asked once for each encrypted thing (on the terminal, or one line
# each from a descriptor) and a wrong one failing only its own key; NSS
# trust flags per field turned into anchors with purposes, rejects and
# distrust (checked with `p11glue trust list --purpose`); NSS databases
# with a password (asked once), a wrong one, an orphan key, a legacy
# database, Thunderbird's profiles.ini; a key already on the token
# getting only its certificate; named PKCS#12 and PEM files; GnuPG with
# a wrong passphrase, and without gpg; no writable trust location;
# --json; a second run adding nothing.
#
# Usage: test-cli-adopt.sh P11GLUE STORE_MODULE TRUST_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
trust=$(realpath -e "$3") || exit 1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../interop/common.sh"
need openssl ssh-keygen certutil pk12util python3

export HOME=$tmp/home
export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config GNUPGHOME=$HOME/.gnupg
export P11GLUE_CONFIG=$tmp/registry
unset GPG_AGENT_INFO PKCS11_MODULE_PATH OPENSSL_CONF
mkdir -p "$HOME/.ssh" "$P11GLUE_CONFIG/modules" "$XDG_DATA_HOME/p11glue/trust"
printf 'module: %s\n' "$store" >"$P11GLUE_CONFIG/modules/p11glue-store.module"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$trust" \
	"$XDG_DATA_HOME/p11glue/trust" >"$P11GLUE_CONFIG/modules/p11glue-trust.module"
new_store
adopt() { client "$p11glue" adopt --pin-source "$tmp/pin" "$@"; }
# line OUT PATTERN: the report's line matching the glob
line() { grep -F -- "$2" <<<"$1" | head -1; }
gpg_started=false
trap '$gpg_started && gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------------------
run client "$p11glue" adopt --help
has "adopt --help" "$out" "Usage: p11glue adopt [--dry-run]*Exit status:*"
run client "$p11glue" adopt --frobnicate
status "an unknown option is a usage error" 2
run adopt </dev/null
status "an empty home: nothing to do" 0
same "... says so" "$(grep -v '^token:' <<<"$out")" "nothing found to adopt"

# ---------------------------------------------------------------------------
# ~/.ssh: what is taken and what is left
ssh-keygen -q -t ed25519 -N 'first pass' -C 'one@host' -f "$HOME/.ssh/id_a"
ssh-keygen -q -t ecdsa -N 'second pass' -C 'two@host' -f "$HOME/.ssh/id_b"
ssh-keygen -q -t ecdsa -N '' -C 'three@host' -f "$HOME/.ssh/id_c"
ssh-keygen -q -t rsa -b 1024 -N '' -C 'small@host' -f "$HOME/.ssh/id_small"
printf -- '-----BEGIN DSA PRIVATE KEY-----\nAAAA\n-----END DSA PRIVATE KEY-----\n' >"$HOME/.ssh/id_dsa"
printf 'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n' >"$HOME/.ssh/work.ppk"
printf 'Host *\n  IdentityFile ~/.ssh/id_c\n' >"$HOME/.ssh/config"
printf 'some notes\n' >"$HOME/.ssh/notes.txt"
touch "$HOME/.ssh/known_hosts"

run adopt --dry-run </dev/null
status "--dry-run with encrypted keys and no passphrase source" 0
has "... lists them, asking nothing" "$out" \
	"*would adopt: ssh: ~/.ssh/id_a: ssh-ed25519 key 'one@host' (encrypted: its passphrase is asked for*would adopt: ssh: ~/.ssh/id_b: *(encrypted*would adopt: ssh: ~/.ssh/id_c: *"
has "... a 1024-bit RSA key is left, with the reason" "$out" \
	"*left: ssh: ~/.ssh/id_small: ssh-rsa key 'small@host': an RSA key of 1024 bits: the token uses RSA keys of 2048 to *"
has "... a DSA key" "$out" "*left: ssh: ~/.ssh/id_dsa: private key: a DSA key*"
has "... a PuTTY key" "$out" "*left: ssh: ~/.ssh/work.ppk: private key: a PuTTY key: convert it with puttygen*"
lacks "... other files are not looked at" "$out" "*config*"
lacks "... nor notes" "$out" "*notes.txt*"

# A wrong passphrase fails its key only.
secret "$tmp/wrong" "not it"
run adopt --passphrase-source "$tmp/wrong" </dev/null
status "a wrong passphrase: exit 1" 1
has "... says so for each encrypted key" "$out" \
	"*failed: ssh: ~/.ssh/id_a: *wrong passphrase*failed: ssh: ~/.ssh/id_b: *wrong passphrase*"
has "... and adopts the rest" "$out" "*adopted: ssh: ~/.ssh/id_c: ecdsa-sha2-nistp256 key 'three@host'*"
lacks "... offering to remove only what it adopted" "$out" "*may remove:*id_a*"

# On a terminal: each encrypted key asks once.
run bound "${client_env[@]}" python3 "$here/pty-prompt.py" "Passphrase for" 'key:first pass\r' prompt \
	'key:second pass\r' -- "$p11glue" adopt --pin-source "$tmp/pin"
has "on a terminal: a prompt for the first encrypted key, without echo" "$out" "echo at the prompt: off*"
has "... then one for the second" "$out" "*prompt again: seen*status: exit 0*"
same "... two prompts in all" "$(grep -o 'Passphrase for' <<<"$out" | wc -l)" 2
has "... each key adopted" "$out" "*adopted: ssh: ~/.ssh/id_a*adopted: ssh: ~/.ssh/id_b*already there: ssh: ~/.ssh/id_c*"

# A second run knows them by their public keys: no passphrase asked.
run adopt </dev/null
status "a second run with no passphrase source" 0
has "... finds the keys there, asking nothing" "$out" \
	"*already there: ssh: ~/.ssh/id_a*already there: ssh: ~/.ssh/id_b*already there: ssh: ~/.ssh/id_c*"
lacks "... and adopts nothing" "$out" "*adopted:*"
rm "$HOME"/.ssh/id_*

# A descriptor gives one line for each key, in the report's order.
new_store
ssh-keygen -q -t ed25519 -N 'first pass' -C 'one@host' -f "$HOME/.ssh/id_a"
ssh-keygen -q -t ed25519 -N 'second pass' -C 'two@host' -f "$HOME/.ssh/id_b"
run adopt --passphrase-source fd:3 3< <(printf 'first pass\nsecond pass\n')
status "--passphrase-source fd:3: one line for each key" 0
has "... both adopted" "$out" "*adopted: ssh: ~/.ssh/id_a*adopted: ssh: ~/.ssh/id_b*"
# An OpenSSH key without its .pub is recognized from the key file itself.
rm "$HOME/.ssh/id_a.pub"
run adopt </dev/null
has "a key without its .pub file is still known, from the public key the file keeps" "$out" \
	"*already there: ssh: ~/.ssh/id_a: ssh-ed25519 key*"
rm "$HOME"/.ssh/id_*

# ---------------------------------------------------------------------------
# NSS: trust flags per field, a password, an orphan key
pki=$tmp/pki
mkdir -p "$pki"
mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$pki/$1.key" \
		-out "$pki/$1.pem" -subj "/CN=$2" -days 30 -addext basicConstraints=critical,CA:true 2>/dev/null
}
mkca ssl "SSL Only CA"; mkca mixed "Mixed CA"; mkca peers "Peer CA"; mkca partial "Partial CA"
mkca cached "Cached CA"
openssl req -newkey rsa:2048 -nodes -keyout "$pki/me.key" -out "$pki/me.csr" -subj "/CN=Me User" 2>/dev/null
openssl x509 -req -in "$pki/me.csr" -CA "$pki/ssl.pem" -CAkey "$pki/ssl.key" -CAcreateserial \
	-out "$pki/me.pem" -days 30 2>/dev/null
openssl pkcs12 -export -in "$pki/me.pem" -inkey "$pki/me.key" -name "Me User" -passout pass:x \
	-out "$pki/me.p12"
db=$HOME/.pki/nssdb
mkdir -p "$db"
certutil -N -d "sql:$db" --empty-password
for c in "ssl SSL Only CA C,," "mixed Mixed CA p,C," "peers Peer CA P,P,P" "partial Partial CA ,,p" \
	"cached Cached CA ,,"; do
	set -- $c
	certutil -A -d "sql:$db" -n "${*:2:$#-2}" -t "${!#}" -a -i "$pki/$1.pem"
done
pk12util -i "$pki/me.p12" -d "sql:$db" -W x >/dev/null
printf 'db pass\n' >"$tmp/dbpass"
certutil -W -d "sql:$db" -f <(printf '\n') -@ "$tmp/dbpass" >/dev/null
certutil -R -d "sql:$db" -s "CN=orphan" -k rsa -g 2048 -z "$pki/me.csr" -o /dev/null -f "$tmp/dbpass" >/dev/null 2>&1
# A Thunderbird profile outside its directory (IsRelative=0), with
# another password; and a legacy Firefox database.
tb=$tmp/elsewhere/tb-profile
mkdir -p "$tb" "$HOME/.thunderbird" "$HOME/.mozilla/firefox/old.default"
printf '[Profile0]\nName=mail\nIsRelative=0\nPath=%s\n' "$tb" >"$HOME/.thunderbird/profiles.ini"
certutil -N -d "sql:$tb" -f <(printf 'other pass\n')
openssl pkcs12 -export -in "$pki/ssl.pem" -inkey "$pki/ssl.key" -name "TB Key" -passout pass:x \
	-out "$pki/tb.p12"
pk12util -i "$pki/tb.p12" -d "sql:$tb" -W x -K 'other pass' >/dev/null
: >"$HOME/.mozilla/firefox/old.default/cert8.db"

# The NSS key's key is on the token already, imported alone.
run client "$p11glue" import --module "$store" "$pki/me.key" "pkcs11:token=test?pin-source=$tmp/pin"
ran "(the NSS key imported alone first, without its certificate)"
secret "$tmp/pass" "db pass"
# pk12util as adopt runs it, watched: where its files are, and how.
mkdir -p "$tmp/watch" "$tmp/adopt-tmp"
real_pk12util=$(command -v pk12util)
cat >"$tmp/watch/pk12util" <<WATCH
#!/bin/bash
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
	case \${args[i]} in
	-o) out=\${args[i + 1]} ;;
	-w) pw=\${args[i + 1]} ;;
	esac
done
printf 'dir %s output %s password %s %s\n' "\$(stat -c %a "\$(dirname "\$out")")" \
	"\$(stat -c %a "\$out")" "\$(stat -c %a "\$pw")" "\$(wc -c <"\$pw")" >>"$tmp/watch.log"
case " \$* " in *" -W "*) echo "a password on the command line" >>"$tmp/watch.log" ;; esac
# A daemon it leaves behind holds its output open, as gpg-agent could.
sleep 600 &
echo \$! >>"$tmp/daemons"
exec "$real_pk12util" "\$@"
WATCH
chmod 755 "$tmp/watch/pk12util"
run bound "${client_env[@]}" PATH="$tmp/watch:$PATH" TMPDIR="$tmp/adopt-tmp" "$p11glue" adopt \
	--pin-source "$tmp/pin" --passphrase-source "$tmp/pass" </dev/null
status "adopt (pk12util leaving a daemon behind); the Thunderbird database's password is wrong: exit 1" 1
kill $(cat "$tmp/daemons") 2>/dev/null
has "pk12util exports into a private directory, to a 0600 file, under a random password in a 0600 file" \
	"$(cat "$tmp/watch.log")" "dir 700 output 600 password 600 48*"
lacks "... never a password on its command line" "$(cat "$tmp/watch.log")" "*command line*"
same "... and the directory is gone afterwards" "$(ls -A "$tmp/adopt-tmp")" ""
has "C,, is an anchor for server-auth only" "$(line "$out" "SSL Only CA")" \
	"adopted: nss: ~/.pki/nssdb: SSL Only CA: certificate 'SSL Only CA' (trust C,,): anchor for server-auth"
has "p,C, an anchor for email, distrusted for SSL's purposes" "$(line "$out" "Mixed CA")" \
	"*: anchor for email; distrusted for server-auth, client-auth"
has "P,P,P an anchor for every purpose" "$(line "$out" "Peer CA")" "*(trust P,P,P): anchor for every purpose"
has ",,p distrusted, saying NSS distrusted it for some purposes only" "$(line "$out" "Partial CA")" \
	"*(trust ,,p): distrusted (NSS distrusts it for some purposes; p11glue distrusts it for every purpose)"
lacks "a certificate NSS only keeps (,,) is not listed" "$out" "*Cached CA*"
has "the NSS key, behind the database's password: its key was there, its certificate is added" \
	"$(line "$out" "Me User")" "adopted: nss: ~/.pki/nssdb: Me User: *its key was on the token already; its certificate is added*"
has "a key without a certificate is left, with the reason" "$out" \
	"*left: nss: ~/.pki/nssdb: key *: private key without a certificate: NSS exports a key only with its certificate*"
has "Thunderbird's profile (profiles.ini, IsRelative=0): a wrong password fails its key" "$out" \
	"*failed: nss: $tb: TB Key: private key and certificate 'SSL Only CA': wrong password for the NSS database*"
has "a legacy database is left" "$out" "*left: nss: ~/.mozilla/firefox/old.default: an NSS database: a legacy database (cert8.db)*"
run client "$p11glue" trust list --filter=ca-anchors --purpose=email
has "trust list --purpose=email: the mixed and peer CAs" "$out" "*label: Mixed CA*"
has "... and the peer CA" "$out" "*label: Peer CA*"
lacks "... not the SSL-only CA" "$out" "*SSL Only CA*"
run client "$p11glue" trust list --filter=ca-anchors --purpose=server-auth
has "--purpose=server-auth: the SSL-only CA" "$out" "*label: SSL Only CA*"
lacks "... not the mixed CA NSS distrusted for SSL" "$out" "*Mixed CA*"
run client "$p11glue" trust list --filter=blocklist
has "the blocklist: the partly distrusted CA" "$out" "*label: Partial CA*"
run adopt </dev/null
status "a second run: exit 1 (the Thunderbird key still fails)" 1
same "... adopts nothing" "$(grep -c '^adopted:' <<<"$out")" 0
has "... the trust decisions are there already" "$(line "$out" "Mixed CA")" "already there: *"
has "... and the NSS key, asking for no password" "$(line "$out" "Me User")" "already there: *"
rm -rf "$tb" "$HOME/.thunderbird" "$HOME/.mozilla"

# ---------------------------------------------------------------------------
# Files named on the command line
openssl pkcs12 -export -in "$pki/peers.pem" -inkey "$pki/peers.key" -name "Named" \
	-passout pass:'db pass' -out "$tmp/named.p12"
run adopt --passphrase-source "$tmp/pass" "$tmp/named.p12" "$pki/cached.pem" pkcs11:token=test </dev/null
status "named PKCS#12 and PEM files, and a token URI" 0
has "... the PKCS#12 file" "$out" "*adopted: file: $tmp/named.p12: PKCS#12 file: private key 'Named' and 1 certificate*"
has "... the certificate" "$out" "*adopted: file: $pki/cached.pem: *1 certificate*"
has "... both may be removed" "$out" "*may remove:*$tmp/named.p12*$pki/cached.pem*"
run adopt --passphrase-source "$tmp/pass" "$tmp/named.p12" "$pki/cached.pem" </dev/null
same "... a second run: both there" "$(grep -c "^already there: file:" <<<"$out")" 2
run adopt "$tmp/missing.pem" </dev/null
status "a missing file fails" 1
has "... saying why" "$out" "*failed: file: $tmp/missing.pem: *No such file*"

# ---------------------------------------------------------------------------
# GnuPG
if command -v gpg >/dev/null && command -v gpg-agent >/dev/null; then
	gpg_started=true
	mkdir -m 700 "$GNUPGHOME"
	printf 'Key-Type: RSA\nKey-Length: 2048\nKey-Usage: sign\nName-Real: Bob\nPassphrase: gpg pass\nExpire-Date: 0\n%%commit\n' |
		bound gpg --batch --pinentry-mode loopback --generate-key >/dev/null 2>&1
	fpr=$(gpg --with-colons -K 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
	run adopt --passphrase-source "$tmp/wrong" </dev/null
	status "GnuPG: a wrong passphrase: exit 1" 1
	has "... says gpg-agent refused it" "$out" "*failed: gnupg: ~/.gnupg: $fpr: RSA sign key 'Bob': wrong passphrase (gpg-agent refused it)*"
	secret "$tmp/gpgpass" "gpg pass"
	run adopt --json --passphrase-source "$tmp/gpgpass" </dev/null
	status "... the right one: adopted" 0
	if python3 -c '
import json, sys
d = json.load(sys.stdin)
items = [i for i in d["items"] if i["source"] == "gnupg"]
assert d["token"].startswith("pkcs11:token=test"), d
assert d["dry-run"] is False
assert len(items) == 1 and items[0]["state"] == "adopted", items
objs = sorted(o["object"] for o in items[0]["objects"])
assert objs == ["certificate", "private key", "public key"], objs
assert "private-keys-v1.d/" in items[0]["may-remove"], items[0]
' <<<"$out"; then ok "... --json: the key pair and its certificate, what may be removed"; else
		not_ok "... --json" "$out"; fi
	# Without gpg in PATH, GnuPG's keys are left, saying why.
	mkdir "$tmp/bin"
	for p in certutil pk12util; do ln -s "$(command -v "$p")" "$tmp/bin/$p"; done
	run "${client_env[@]}" PATH="$tmp/bin" "$p11glue" adopt --pin-source "$tmp/pin" </dev/null
	has "without gpg: left, saying why" "$out" "*left: gnupg: ~/.gnupg: GnuPG's keys: gpg is not installed*"
	gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1
else
	skip "GnuPG" "gpg is not installed"
fi

# ---------------------------------------------------------------------------
# No writable trust location: the decisions fail, the keys do not
rm "$P11GLUE_CONFIG/modules/p11glue-trust.module"
mkdir -p "$db"
run adopt --dry-run </dev/null
status "without p11glue's trust module: exit 1" 1
has "... the decision fails, saying where it would go" "$out" \
	"*failed: nss: ~/.pki/nssdb: SSL Only CA: *no writable trust location*"
finish
