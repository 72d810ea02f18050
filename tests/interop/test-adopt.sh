#!/bin/bash
# p11glue adopt, with real programs on both sides, in a throwaway HOME:
# OpenSSH keys (an encrypted RSA key, ECDSA P-256 in the PEM format,
# ECDSA P-384, and Ed25519, which OpenSSH before 9.4 cannot use from a
# PKCS#11 module: the report says to keep its file), an NSS database
# made with certutil and pk12util holding a key with its certificate, a
# CA trusted for SSL and S/MIME ("CT,C,") and a distrusted one
# ("p,p,p"), and a GnuPG home with an RSA key with an RSA encryption
# subkey (passphrase-protected) and an Ed25519 key with a cv25519
# subkey. A dry run lists what it would take and changes
# nothing; adopt takes it all, then:
#   - ssh logs in to a local sshd (private network namespace) with each
#     key from the store, the key files moved away;
#   - p11glue trust lists the CA as an anchor for exactly the purposes
#     NSS trusted it for and the other CA as distrusted; in a fresh
#     Firefox profile that loads p11glue's proxy as `setup --nss`
#     registers it, certutil shows both with the trust flags of the
#     original database, and vfychain decides each chain and usage as
#     the original database did;
#   - after `setup --gnupg`, with gpg-agent's copies of the RSA keys
#     removed, gpg signs and decrypts with the original fingerprints
#     and keygrips through gnupg-pkcs11-scd; the Ed25519 key stays
#     gpg-agent's, as the report says;
#   - a second adopt adds nothing and asks for nothing.
# Every gpg-agent, scdaemon and sshd started here is stopped here, by PID.
#
# Usage: test-adopt.sh P11GLUE STORE_MODULE PROXY_MODULE TRUST_MODULE
set -u
if [ -z "${P11GLUE_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare --net --mount true 2>/dev/null; then
	export P11GLUE_IN_NETNS=1
	exec unshare --net --mount -- bash "$0" "$@"
fi
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
proxy=$(realpath -e "$3") || exit 1
trust=$(realpath -e "$4") || exit 1
. "$(dirname "$0")/common.sh"
need gpg gpgv gpg-agent gpgconf gpg-connect-agent certutil pk12util modutil vfychain \
	ssh-keygen openssl python3
[ -x /usr/bin/gnupg-pkcs11-scd ] || skip_all "gnupg-pkcs11-scd is not installed"

export HOME=$tmp/home
export XDG_DATA_HOME=$HOME/.local/share XDG_CONFIG_HOME=$HOME/.config GNUPGHOME=$HOME/.gnupg
export P11GLUE_CONFIG=$tmp/registry
unset GPG_AGENT_INFO PKCS11_MODULE_PATH SSH_AUTH_SOCK OPENSSL_CONF
mkdir -p "$HOME/.ssh" "$P11GLUE_CONFIG/modules" "$XDG_DATA_HOME/p11glue/trust"
chmod 700 "$HOME/.ssh"
pg() { client "$p11glue" "$@"; }

# ---------------------------------------------------------------------------
# Processes: gpg-agent and its scdaemon (started by gpg, also inside
# adopt), sshd; each PID recorded and stopped on exit.
pids=()
agent_pids() {
	local a s
	a=$(bound gpg-connect-agent --no-autostart 'getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	s=$(bound gpg-connect-agent --no-autostart 'scd getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
	[ -n "$a" ] && pids+=("$a")
	[ -n "$s" ] && pids+=("$s")
}
stop_all() {
	local pid i
	agent_pids
	bound gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null
		for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
}
trap 'stop_all; rm -rf "$tmp"' EXIT
fresh_agent() { stop_all; pids=(); }

# ---------------------------------------------------------------------------
# The registry: the store, and the trust module reading this test's
# "system" anchors (standing in for a distribution's bundle) and the
# user's own directory.
pki=$tmp/pki
mkdir -p "$pki"
mkca() { # NAME CN
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -out "$pki/$1.pem" \
		-subj "/CN=$2" -days 30 -addext basicConstraints=critical,CA:true \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
mkleaf() { # NAME CN CA
	openssl req -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "/CN=$2" \
		2>/dev/null &&
		openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$3.pem" -CAkey "$pki/$3.key" \
			-CAcreateserial -out "$pki/$1.pem" -days 30 2>/dev/null
}
mkca ca "Adopt Test CA" && mkca bad "Bad CA" && mkca other "Other CA" && mkleaf server server.example ca &&
	mkleaf badleaf bad.example bad && mkleaf me "Me User" ca &&
	openssl pkcs12 -export -in "$pki/me.pem" -inkey "$pki/me.key" -name "Me User" \
		-passout pass:p12pass -out "$pki/me.p12" ||
	{ echo "Bail out! openssl could not make the test PKI"; exit 1; }
cp "$pki/other.pem" "$tmp/system-anchors.pem"
printf 'module: %s\n' "$store" >"$P11GLUE_CONFIG/modules/p11glue-store.module"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s:%s\n' "$trust" \
	"$tmp/system-anchors.pem" "$XDG_DATA_HOME/p11glue/trust" \
	>"$P11GLUE_CONFIG/modules/p11glue-trust.module"
new_store
secret "$tmp/pass" "p11glue test"

# ---------------------------------------------------------------------------
# What the user has
ssh-keygen -q -t rsa -b 3072 -N 'p11glue test' -C 'rsa@laptop' -f "$HOME/.ssh/id_rsa"
ssh-keygen -q -t ecdsa -b 256 -m PEM -N '' -C 'ec@laptop' -f "$HOME/.ssh/id_ecdsa"
ssh-keygen -q -t ecdsa -b 384 -N '' -C 'ec384@desktop' -f "$HOME/.ssh/id_ecdsa384"
ssh-keygen -q -t ed25519 -N '' -C 'ed@laptop' -f "$HOME/.ssh/id_ed25519"
ssh_keys="rsa ecdsa ecdsa384"
old_ssh=false
if ssh -V 2>&1 | grep -q 'OpenSSH_[1-8]\.\|OpenSSH_9\.[0-3]'; then old_ssh=true; else ssh_keys="$ssh_keys ed25519"; fi

nssdb=$HOME/.pki/nssdb
mkdir -p "$nssdb"
certutil -N -d "sql:$nssdb" --empty-password
certutil -A -d "sql:$nssdb" -n "Adopt Test CA" -t "CT,C," -a -i "$pki/ca.pem"
certutil -A -d "sql:$nssdb" -n "Bad CA" -t "p,p,p" -a -i "$pki/bad.pem"
pk12util -i "$pki/me.p12" -d "sql:$nssdb" -W p12pass >/dev/null
# usage codes of vfychain: 1 SSL server, 4 e-mail signer, 6 object signer
verdicts() { # DB: one line per chain and usage
	local leaf u
	for leaf in server badleaf; do
		for u in 1 4 6; do
			if client vfychain -d "sql:$1" -u "$u" -a "$pki/$leaf.pem" >/dev/null 2>&1; then
				echo "$leaf usage $u: valid"
			else
				echo "$leaf usage $u: invalid"
			fi
		done
	done
}
# flags DB: NSS's trust flags of the two CAs, as certutil lists them
flags() {
	client certutil -L -d "sql:$1" -h all 2>/dev/null |
		sed -n 's/^\([^ ]*:\)\{0,1\}\(Adopt Test CA\|Bad CA\) \{1,\}\([^ ]*\) *$/\2 \3/p' | sort -u
}
nss_flags=$(flags "$nssdb")
same "NSS lists the two CAs with the user's trust flags" "$nss_flags" "Adopt Test CA CT,C,
Bad CA p,p,p"
nss_before=$(verdicts "$nssdb")
has "NSS itself: the CA is trusted for SSL and S/MIME, not object signing" "$nss_before" \
	"server usage 1: valid*server usage 4: valid*server usage 6: invalid*"
has "... and Bad CA is distrusted" "$nss_before" "*badleaf usage 1: invalid*"

mkdir -m 700 "$GNUPGHOME"
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
printf 'pinentry-program %s\n' "$tmp/pinentry" >"$GNUPGHOME/gpg-agent.conf"
cat >"$tmp/key-params" <<EOF
Key-Type: RSA
Key-Length: 2048
Key-Usage: sign
Subkey-Type: RSA
Subkey-Length: 2048
Subkey-Usage: encrypt
Name-Real: Alice Adopt
Name-Email: alice@p11glue.example
Passphrase: p11glue test
Expire-Date: 0
%commit
Key-Type: EDDSA
Key-Curve: ed25519
Key-Usage: sign
Subkey-Type: ECDH
Subkey-Curve: cv25519
Subkey-Usage: encrypt
Name-Real: Ed Adopt
%no-protection
Expire-Date: 0
%commit
EOF
run bound gpg --batch --pinentry-mode loopback --generate-key "$tmp/key-params"
ran "gpg made an RSA key with an RSA subkey, and an Ed25519 key with a cv25519 subkey"
agent_pids
keys() { gpg --with-colons --with-keygrip -K 2>/dev/null; }
# grips FPR: the keygrips of FPR's block (primary first); subfpr FPR: its
# subkey's fingerprint.
grips() {
	keys | awk -F: -v f="$1" '$1 == "sec" { blk = 0; first = 1 }
		$1 == "fpr" { if (first) blk = ($10 == f); first = 0 }
		blk && $1 == "grp" { print $10 }'
}
subfpr() {
	keys | awk -F: -v f="$1" '$1 == "sec" { blk = 0; first = 1 }
		$1 == "fpr" { if (first) blk = ($10 == f); else if (blk) print $10; first = 0 }'
}
fpr=$(keys | awk -F: '$1 == "sec" && $4 == 1 { getline; print $10; exit }')
ed_fpr=$(keys | awk -F: '$1 == "sec" && $4 == 22 { getline; print $10; exit }')
sub_fpr=$(subfpr "$fpr")
grip=$(grips "$fpr" | sed -n 1p)
sub_grip=$(grips "$fpr" | sed -n 2p)
ed_grip=$(grips "$ed_fpr" | sed -n 1p)
has "... their fingerprints" "$fpr $ed_fpr" "???????????????????????????????????????? ????????????????????????????????????????"
g() { client gpg --batch --no-tty "$@"; }
g --export "$fpr" >"$tmp/pub.gpg" 2>/dev/null

# ---------------------------------------------------------------------------
# A browser that will use p11glue: a Firefox profile, with the proxy
# registered by setup --nss (in ~/.pki/nssdb too, where adopt reads next).
firefox=$HOME/.mozilla/firefox
profile=$firefox/fresh.default
mkdir -p "$profile"
printf '[Profile0]\nName=default\nIsRelative=1\nPath=fresh.default\nDefault=1\n' >"$firefox/profiles.ini"
certutil -N -d "sql:$profile" --empty-password
run pg setup --nss
ran "p11glue setup --nss registers the proxy in both databases"
fresh_before=$(verdicts "$profile")
has "before adopt, the fresh profile does not trust the CA the user trusted in NSS" \
	"$fresh_before" "server usage 1: invalid*"
same "... and knows no trust flags of the two CAs" "$(flags "$profile")" ""

# ---------------------------------------------------------------------------
# A dry run: what would be taken, and nothing written or asked
objects() { pg list-objects --pin-source "$tmp/pin" "pkcs11:token=test" 2>/dev/null | grep -c 'pkcs11:'; }
trust_files() { ls -A "$XDG_DATA_HOME/p11glue/trust"; }
run pg adopt --dry-run </dev/null
ran "adopt --dry-run"
for want in "would adopt: ssh: ~/.ssh/id_ed25519: ssh-ed25519 key 'ed@laptop'" \
	"would adopt: ssh: ~/.ssh/id_rsa: ssh-rsa key 'rsa@laptop' (encrypted*" \
	"would adopt: ssh: ~/.ssh/id_ecdsa: ecdsa-sha2-nistp256 key 'ec@laptop'" \
	"would adopt: ssh: ~/.ssh/id_ecdsa384: ecdsa-sha2-nistp384 key 'ec384@desktop'" \
	"would adopt: nss: ~/.pki/nssdb: Me User: private key and certificate 'Me User'" \
	"would adopt: nss: ~/.pki/nssdb: Adopt Test CA: *anchor for server-auth, client-auth, email" \
	"would adopt: nss: ~/.pki/nssdb: Bad CA: *distrusted" \
	"would adopt: gnupg: ~/.gnupg: $fpr: RSA sign key 'Alice Adopt <alice@p11glue.example>'" \
	"would adopt: gnupg: ~/.gnupg: $sub_fpr: RSA encrypt subkey*" \
	"would adopt: gnupg: ~/.gnupg: $ed_fpr: EdDSA sign key 'Ed Adopt' (gnupg-pkcs11-scd 0.10 offers RSA keys only*" \
	"left: gnupg: ~/.gnupg: *: ECDH encrypt subkey 'Ed Adopt': the store holds no X25519*"; do
	has "... lists: $(cut -c1-70 <<<"$want")" "$out" "*$want*"
done
same "... writes nothing to the token" "$(objects)" 0
same "... nor to the trust" "$(trust_files)" ""

# ---------------------------------------------------------------------------
# adopt
run pg adopt --pin-source "$tmp/pin" --passphrase-source "$tmp/pass" </dev/null
ran "adopt"
report=$out
lacks "... nothing failed or was left but the cv25519 subkey" "$(grep -v 'X25519' <<<"$out")" \
	"*failed:*"
same "... adopted 4 ssh keys, the NSS key and 2 decisions, 3 GnuPG keys" \
	"$(grep -c '^adopted: ' <<<"$out")" 10
has "... names what may be removed: the ssh key files" "$out" \
	"*may remove:*~/.ssh/id_ecdsa*~/.ssh/id_ecdsa384*~/.ssh/id_rsa*"
if $old_ssh; then
	has "... and says to keep the Ed25519 key file for this OpenSSH" "$out" \
		"*adopted: ssh: ~/.ssh/id_ed25519: *OpenSSH 9.[0-3] uses no Ed25519 keys of PKCS#11 modules*keep the file for ssh*"
	lacks "... which it does not offer to remove" "$out" "*may remove:*~/.ssh/id_ed25519*"
else
	has "... the Ed25519 key file too (this OpenSSH uses it from the store)" "$out" "*may remove:*~/.ssh/id_ed25519*"
fi
has "... the NSS key" "$out" "*certutil -d sql:$nssdb -F -n 'Me User'*"
has "... gpg-agent's copies of the RSA keys (by keygrip)" "$out" \
	"*private-keys-v1.d/$grip.key*private-keys-v1.d/$sub_grip.key*"
lacks "... not the Ed25519 key, which gpg still needs" "$out" "*may remove:*$ed_grip*"
has "nothing was removed from the sources" "$(ls "$HOME/.ssh"; client certutil -K -d "sql:$nssdb" -f /dev/null 2>&1)" \
	"*id_ecdsa*id_ecdsa384*id_ed25519*id_rsa*Me User*"
agent_pids

# ---------------------------------------------------------------------------
# ssh: a login with each key from the store, the key files moved away
sshd=$(command -v sshd || echo /usr/sbin/sshd)
if [ -z "${P11GLUE_IN_NETNS:-}" ] || [ ! -x "$sshd" ] || ! command -v ssh >/dev/null; then
	for k in $ssh_keys; do
		skip "ssh logs in with the adopted $k key" "needs root, unshare, ssh and sshd"
	done
else
	ip link set lo up
	mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
	cat "$HOME"/.ssh/id_*.pub >"$tmp/authorized_keys"
	chmod 600 "$tmp/authorized_keys"
	port=2222
	cat >"$tmp/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel VERBOSE
CONF
	"$sshd" -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.log" &
	pids+=("$!")
	for _ in $(seq 100); do
		(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
		sleep 0.1
	done
	mkdir "$tmp/moved"
	for k in $ssh_keys; do mv "$HOME/.ssh/id_$k" "$tmp/moved/"; done
	printf '#!/bin/sh\necho %s\n' "$pin" >"$tmp/askpass"
	chmod 700 "$tmp/askpass"
	for k in $ssh_keys; do
		fp=$(ssh-keygen -lf "$HOME/.ssh/id_$k.pub" | awk '{ print $2 }')
		SSH_ASKPASS=$tmp/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=:0 run client ssh -F /dev/null \
			-p "$port" -o StrictHostKeyChecking=no -o "UserKnownHostsFile=$tmp/known_hosts" \
			-o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o ConnectTimeout=20 \
			-o IdentitiesOnly=yes -o "IdentityFile=$HOME/.ssh/id_$k.pub" -o "PKCS11Provider=$store" \
			root@127.0.0.1 echo "logged-in-with-$k" </dev/null
		has "ssh logs in with the adopted $k key from the store" "$out" "logged-in-with-$k"
		has "... which sshd accepted by its fingerprint" "$(cat "$tmp/sshd.log")" "*Accepted publickey for root*$fp*"
	done
	for k in $ssh_keys; do mv "$tmp/moved/id_$k" "$HOME/.ssh/"; done
fi

# ---------------------------------------------------------------------------
# NSS's decisions, through p11glue's trust
run pg trust list --filter=ca-anchors --purpose=server-auth
has "trust list: the CA is an anchor for server-auth" "$out" "*label: Adopt Test CA*"
run pg trust list --filter=ca-anchors --purpose=email
has "... for email" "$out" "*label: Adopt Test CA*"
run pg trust list --filter=ca-anchors --purpose=code-signing
lacks "... not for code-signing, which NSS did not trust it for" "$out" "*Adopt Test CA*"
run pg trust list --filter=blocklist
has "... Bad CA is distrusted" "$out" "*label: Bad CA*"
same "certutil, in the fresh profile through p11glue's proxy: the same trust flags" \
	"$(flags "$profile")" "$nss_flags"
fresh_after=$(verdicts "$profile")
same "vfychain in the fresh profile (p11glue's proxy) decides every chain and usage as the original database did" \
	"$fresh_after" "$nss_before"

# ---------------------------------------------------------------------------
# GnuPG through gnupg-pkcs11-scd, gpg-agent's RSA copies removed
fresh_agent
run client "$p11glue" setup --gnupg --module "$store"
ran "p11glue setup --gnupg"
for k in "$grip" "$sub_grip"; do rm "$GNUPGHOME/private-keys-v1.d/$k.key"; done
ok "gpg-agent's copies of the RSA keys removed"
run client gpg-connect-agent 'scd learn' /bye
agent_pids
has "gnupg-pkcs11-scd offers the adopted signing key, by the same keygrip" "$out" "*KEY-FRIEDNLY $grip *"
has "... and the encryption subkey" "$out" "*KEY-FRIEDNLY $sub_grip *"
run g --card-status
ran "gpg --card-status: gpg-agent learns they are on a token"
run g --with-keygrip -K "$fpr"
has "gpg -K: the same fingerprint and keygrips, held on a token" "$out" \
	"sec> *$fpr*Keygrip = $grip*Card serial no.*ssb> *Keygrip = $sub_grip*"
printf 'a document signed by an adopted key\n' >"$tmp/doc"
run g --local-user "$fpr" --detach-sign --output "$tmp/doc.sig" "$tmp/doc"
ran "gpg --sign with the original fingerprint"
run gpgv --keyring "$tmp/pub.gpg" "$tmp/doc.sig" "$tmp/doc"
has "... gpgv verifies it with the public key exported before adopt" "$err" "*Good signature from \"Alice Adopt*"
printf 'a secret for the adopted key\n' >"$tmp/secret"
run g --trust-model always --recipient "$fpr" --encrypt --output "$tmp/secret.gpg" "$tmp/secret"
ran "data encrypted to the original key"
fresh_agent
before=$(wc -l <"$tmp/pinentry.log" 2>/dev/null || echo 0)
run g --output "$tmp/secret.out" --decrypt "$tmp/secret.gpg"
agent_pids
ran "gpg --decrypt after a fresh agent start"
same "... to the plaintext" "$(cat "$tmp/secret.out" 2>/dev/null)" "$(cat "$tmp/secret")"
has "... through the token (its PIN asked)" "$(( $(wc -l <"$tmp/pinentry.log") - before ))" "[1-9]*"
run g --local-user "$ed_fpr" --detach-sign --output "$tmp/doc-ed.sig" "$tmp/doc"
ran "the Ed25519 key still signs from gpg-agent, as the report said"

# ---------------------------------------------------------------------------
# A second run adds nothing, and asks for nothing (no sources given)
n_objects=$(objects)
files=$(trust_files)
run pg adopt --pin-source "$tmp/pin" </dev/null
ran "a second adopt"
agent_pids
same "... adopts nothing" "$(grep -c '^adopted: ' <<<"$out")" 0
same "... finds all 10 there already" "$(grep -c '^already there: ' <<<"$out")" 10
same "... writes no object" "$(objects)" "$n_objects"
same "... and no trust decision" "$(trust_files)" "$files"
lacks "... and asks no passphrase" "$err" "*assphrase*"

stop_all
alive=
for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
same "every gpg-agent, scdaemon and sshd the test started is stopped" "$alive" ""
finish
