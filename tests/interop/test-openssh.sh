#!/bin/bash
# OpenSSH with the key store module, on a fresh store: ssh-keygen -D lists
# the token's keys; ssh -I logs in to a local sshd with a key generated on
# the token, with an RSA key, and with an OpenSSH key imported from a
# passphrase-protected file. sshd runs in a private network namespace
# (loopback only) and is stopped by PID.
#
# Usage: test-openssh.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/common.sh"
need ssh ssh-keygen unshare ip
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || skip_all "sshd is not installed (openssh-server)"
data=$(cd "$(dirname "$0")/../data" && pwd)

new_store
token=test
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
line_of() { p export-pubkey --format=ssh "pkcs11:token=test;object=$1" 2>/dev/null | cut -d' ' -f1-2; }

run keygen ssh-ec ec:secp256r1
ran "a P-256 key generated with p11glue"
run keygen ssh-rsa rsa:3072
ran "an RSA-3072 key generated with p11glue"
run keygen ssh-ed ed25519
ran "an Ed25519 key generated with p11glue"
secret "$tmp/pass" "p11glue test"
run p import --passphrase-source "$tmp/pass" "$data/openssh/ecdsa-384" "pkcs11:token=test?pin-source=$tmp/pin"
ran "an encrypted OpenSSH key imported with p11glue"

# ---------------------------------------------------------------------------
# ssh-keygen -D
run client ssh-keygen -D "$store"
ran "ssh-keygen -D"
listed=$out
has "... lists the generated P-256 key" "$listed" "*$(line_of ssh-ec)*"
has "... lists the RSA key" "$listed" "*$(line_of ssh-rsa)*"
has "... lists the imported key as its .pub file has it" "$listed" "*$(cut -d' ' -f1-2 "$data/openssh/ecdsa-384.pub")*"
# OpenSSH 9.2 reads no Ed25519 keys from PKCS#11 modules ("skipping
# unsupported key type"); later versions do.
if ssh -V 2>&1 | grep -q 'OpenSSH_9\.[0-3]'; then
	lacks "... and not the Ed25519 key, which OpenSSH before 9.4 cannot use" "$listed" "*ssh-ed25519*"
else
	has "... lists the Ed25519 key" "$listed" "*$(line_of ssh-ed)*"
fi

# ---------------------------------------------------------------------------
# ssh -I against sshd in a private network namespace
[ "$(id -u)" = 0 ] || { skip "ssh logins" "sshd needs root for privilege separation"; finish; exit; }
if ! unshare --net --mount -- true 2>/dev/null; then
	skip "ssh logins" "no private network namespace here (unshare --net)"
	finish
	exit
fi
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
port=2222
cat >"$tmp/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $tmp/host_key
AuthorizedKeysFile $tmp/authorized_keys
PidFile $tmp/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
LogLevel VERBOSE
CONF
# IdentitiesOnly would keep ssh from offering token keys not named by an
# IdentityFile; the sshd accepts only the key under test anyway.
cat >"$tmp/ssh_config" <<CONF
Host *
	PKCS11Provider $store
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	BatchMode no
CONF
printf '#!/bin/sh\ncat "%s"\n' "$tmp/askpin" >"$tmp/askpass"
chmod 755 "$tmp/askpass"

# The scenario inside the namespace: sshd on loopback, one ssh login,
# sshd stopped by its PID whatever happens.
cat >"$tmp/login.sh" <<'SCRIPT'
set -u
tmp=$1 sshd=$2 port=$3 pre=$4
ip link set lo up || exit 97
# sshd wants /run/sshd: a private /run in this mount namespace.
mount -t tmpfs -o mode=755 none /run && mkdir -m 755 /run/sshd || exit 97
rm -f "$tmp/sshd.pid"
"$sshd" -D -e -f "$tmp/sshd_config" >"$tmp/sshd.log" 2>&1 </dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
for _ in $(seq 600); do [ -s "$tmp/sshd.pid" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
SSH_ASKPASS=$tmp/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=none \
	timeout 60 $pre ssh -F "$tmp/ssh_config" -p "$port" "$(id -un)@127.0.0.1" 'echo "logged in as $(id -un)"' </dev/null
SCRIPT

# login NAME PUBLIC_KEY_LINE PIN: ssh with only that key authorized.
login() {
	printf '%s\n' "$2" >"$tmp/authorized_keys"
	printf '%s\n' "$3" >"$tmp/askpin"
	run timeout 120 unshare --net --mount -- bash "$tmp/login.sh" "$tmp" "$sshd" "$port" "${client_env[*]}"
	if [ "$rc" = 97 ]; then
		skip "$1" "cannot set up the network namespace"
		return 1
	fi
	return 0
}

me=$(id -un)
if login "ssh -I with the generated P-256 key" "$(line_of ssh-ec)" "$pin"; then
	ran "ssh -I with the generated P-256 key"
	has "... runs the command on the server" "$out" "logged in as $me"
	has "... sshd accepted the token's key" "$(cat "$tmp/sshd.log")" "*Accepted publickey for $me*ECDSA*"
fi
if login "ssh -I with the RSA-3072 key" "$(line_of ssh-rsa)" "$pin"; then
	ran "ssh -I with the RSA-3072 key"
	has "... sshd accepted an RSA signature" "$(cat "$tmp/sshd.log")" "*Accepted publickey for $me*RSA*"
fi
if login "ssh -I with the imported OpenSSH key" "$(cat "$data/openssh/ecdsa-384.pub")" "$pin"; then
	ran "ssh -I with the imported OpenSSH key"
	has "... authorized by the original .pub file" "$out" "logged in as $me"
fi
if login "ssh -I with a wrong PIN" "$(line_of ssh-ec)" 00000000; then
	failed_run "ssh -I with a wrong PIN fails"
	lacks "... and runs nothing" "$out" "*logged in*"
fi
if login "ssh -I with a key the server does not know" "$(cut -d' ' -f1-2 "$data/openssh/ed25519-plain.pub")" "$pin"; then
	failed_run "ssh -I is refused when no token key is authorized"
fi

finish
