#!/bin/bash
# p11glue-client.so driven by real clients against `p11glue server`
# serving a real SoftHSM2 token: pkcs11-tool (list, token set-up, login,
# key generation, signing, --test), openssl (verifies), ssh-keygen -D, a
# registry module file, a peer of another uid (setpriv), and, as root in
# a private network namespace: an ssh login to a local sshd with the
# served key, the stdio mode through ssh (`|ssh ... p11glue remote`), and
# socket forwarding with `ssh -R`.
#
# Usage: test-client-tools.sh CLIENT_MODULE P11GLUE_TOOL
# Environment: P11GLUE_TEST_SOFTHSM (set by meson).
set -u
client=$(realpath -e "$1") || exit 1
tool=$(realpath -e "$2") || exit 1
here=$(cd "$(dirname "$0")" && pwd)

# Everything runs in private network and mount namespaces when we can
# make them (root): sshd listens on a loopback nobody else sees.
if [ -z "${P11GLUE_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare --net --mount true 2>/dev/null; then
	export P11GLUE_IN_NETNS=1
	exec unshare --net --mount -- bash "$0" "$@"
fi

. "$here/../tools/tap.sh"
not_ok() {
	local arg line
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift
	for arg in "$@"; do
		while IFS= read -r line; do printf '#   %s\n' "$line"; done <<<"$arg"
	done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
bound() { timeout 60 "$@"; }
# shellcheck disable=SC2254
has() { case $2 in $3) ok "$1" ;; *) not_ok "$1" "output: $2" "want pattern: $3" ;; esac; }
# shellcheck disable=SC2254
lacks() { case $2 in $3) not_ok "$1" "output: $2" "unwanted pattern: $3" ;; *) ok "$1" ;; esac; }
ran() { if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1" "exit status $rc" "stdout: $out" "stderr: $err"; fi; }
failed_run() { if [ "$rc" != 0 ]; then ok "$1"; else not_ok "$1" "exit status 0, want failure" "stdout: $out"; fi; }

softhsm=${P11GLUE_TEST_SOFTHSM:-}
for need in pkcs11-tool openssl; do
	command -v "$need" >/dev/null || { echo "1..0 # SKIP $need is not installed"; exit 0; }
done
[ -f "$softhsm" ] || { echo "1..0 # SKIP needs SoftHSM2 (P11GLUE_TEST_SOFTHSM)"; exit 0; }

# Sanitizer builds: their runtimes go first into the programs that load
# the client module.
san_libs=$(ldd "$client" 2>/dev/null | sed -n 's/^[[:space:]]*lib\(asan\|ubsan\|tsan\)\.so[^ ]* => \([^ ]*\).*/\2/p' | tr '\n' ' ')
client_run() {
	if [ -n "$san_libs" ]; then
		bound env "LD_PRELOAD=${san_libs% }" \
			"ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0${san_extra:-}" "$@"
	else
		bound "$@"
	fi
}

chmod 711 "$tmp"
mkdir -p "$tmp/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/tokens" \
	>"$tmp/softhsm2.conf"
export SOFTHSM2_CONF="$tmp/softhsm2.conf"
unset P11GLUE_CONFIG
sock=$tmp/sock
export P11GLUE_SERVER_ADDRESS="unix:path=$sock"

# Servers and ssh processes started here, stopped by PID at the end.
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# start_server ARGS...: `p11glue server --foreground` on $sock.
server_pid=
start_server() {
	: >"$tmp/server.out"   # not left to the background job: a last run's line must not count
	"$tool" server --foreground --socket "$sock" "$@" >"$tmp/server.out" 2>"$tmp/server.err" &
	server_pid=$!
	pids+=("$server_pid")
	for _ in $(seq 200); do
		[ -S "$sock" ] && grep -q P11GLUE_SERVER_ADDRESS "$tmp/server.out" && return 0
		sleep 0.05
	done
	return 1
}
stop_server() {
	kill "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
}

so_pin=12345678
pin=87654321
ptool() { client_run pkcs11-tool --module "$client" "$@"; }
direct() { bound pkcs11-tool --module "$softhsm" "$@"; }

# ---------------------------------------------------------------------------
# The server prints what to export, like ssh-agent.
start_server --provider "$softhsm"
has "the server prints the address to export" "$(cat "$tmp/server.out")" \
	"P11GLUE_SERVER_ADDRESS=unix:path=$sock; export P11GLUE_SERVER_ADDRESS;*P11GLUE_SERVER_PID=$server_pid;*"
mode=$(stat -c %a "$sock")
if [ "$mode" = 600 ]; then ok "the socket is private (0600)"; else not_ok "the socket is private (0600)" "mode $mode"; fi

run ptool -L
ran "pkcs11-tool -L through the client"
has "the served SoftHSM slot is listed" "$out" "*SoftHSM slot*uninitialized*"

run ptool --init-token --label t1 --so-pin "$so_pin"
ran "--init-token through the client"
run ptool --token-label t1 --init-pin --login --so-pin "$so_pin" --new-pin "$pin"
ran "--init-pin through the client"
run ptool --token-label t1 --login --pin 00000000 -O
failed_run "a wrong PIN is refused"
has "... with CKR_PIN_INCORRECT" "$err" "*CKR_PIN_INCORRECT*"
run ptool --token-label t1 --login --pin "$pin" --keypairgen --key-type EC:prime256v1 --id 02 --label k1
ran "--keypairgen EC:prime256v1 through the client"
has "... prints the private and the public key" "$out" "*Private Key Object; EC*Public Key Object; EC*"

san_extra=:halt_on_error=0:exitcode=0 run ptool --token-label t1 --read-object --type pubkey --id 02 -o "$tmp/pub.der"
ran "--read-object of the public key"
run direct --token-label t1 --read-object --type pubkey --id 02 -o "$tmp/pub-direct.der"
if cmp -s "$tmp/pub.der" "$tmp/pub-direct.der"; then ok "the client returns the key SoftHSM holds"
else not_ok "the client returns the key SoftHSM holds"; fi
openssl pkey -pubin -inform DER -in "$tmp/pub.der" -out "$tmp/pub.pem" 2>/dev/null

printf 'signed through p11glue-client\n' >"$tmp/data"
openssl dgst -sha256 -binary "$tmp/data" >"$tmp/data.sha256"
run ptool --token-label t1 --login --pin "$pin" --sign -m ECDSA --id 02 \
	-i "$tmp/data.sha256" -o "$tmp/sig.der" --signature-format openssl
ran "--sign -m ECDSA through the client"
run openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/sig.der" "$tmp/data"
has "openssl verifies the signature" "$out" "Verified OK"
printf 'other\n' >"$tmp/other"
run openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/sig.der" "$tmp/other"
failed_run "... and not over other data"
run ptool --token-label t1 --login --pin "$pin" --verify -m ECDSA --id 02 \
	-i "$tmp/data.sha256" --signature-file "$tmp/sig.der" --signature-format openssl
ran "--verify through the client"
run ptool --token-label t1 --login --pin "$pin" --test
ran "pkcs11-tool --test through the client"
has "... reports no errors" "$out" "*No errors*"

# ssh-keygen -D lists the served key.
if command -v ssh-keygen >/dev/null; then
	want=$(ssh-keygen -i -m PKCS8 -f "$tmp/pub.pem" 2>/dev/null | cut -d' ' -f1-2)
	run client_run ssh-keygen -D "$client"
	ran "ssh-keygen -D on the client module"
	got=$(printf '%s\n' "$out" | grep '^ecdsa-sha2-nistp256 ' | cut -d' ' -f1-2)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "ssh-keygen -D prints the served key"
	else not_ok "ssh-keygen -D prints the served key" "got:  $got" "want: $want"; fi
	printf '%s\n' "$got" >"$tmp/token-key.pub"
else
	skip "ssh-keygen -D on the client module" "no ssh-keygen"
	skip "ssh-keygen -D prints the served key" "no ssh-keygen"
fi

# The registry: a module file names the client with the server in its
# C_Initialize reserved string (what "remote:" becomes).
mkdir -p "$tmp/conf/modules"
printf 'module: %s\nx-init-reserved: remote=unix:path=%s\n' "$client" "$sock" \
	>"$tmp/conf/modules/remote-token.module"
P11GLUE_CONFIG=$tmp/conf P11GLUE_SERVER_ADDRESS= run client_run "$tool" list-tokens
ran "p11glue list-tokens through a registry module of the client"
has "... shows the served token" "$out" "*t1*"

# The whole registry (through the proxy), and a token of a registry
# module named in the URI.
printf 'module: %s\n' "$softhsm" >"$tmp/conf/modules/softhsm2.module"
rm -f "$tmp/conf/modules/remote-token.module"
stop_server
P11GLUE_CONFIG=$tmp/conf start_server
run ptool -L
has "a server of the whole registry serves its tokens" "$out" "*token label*: t1*"
stop_server
P11GLUE_CONFIG=$tmp/conf start_server 'pkcs11:token=t1?module-name=softhsm2'
run ptool -L
has "a server of a URI with module-name serves that token" "$out" "*token label*: t1*"
lacks "... and no other slot" "$out" "*uninitialized*"
stop_server
start_server --provider "$softhsm"

# As a daemon (the default): the printed commands, evaluated, reach it;
# it is stopped by the PID it printed, and removes its socket.
stop_server
run "$tool" server --provider "$softhsm" --socket "$tmp/daemon.sock"
ran "p11glue server becomes a daemon"
eval "$out"
[ -n "${P11GLUE_SERVER_PID:-}" ] && pids+=("$P11GLUE_SERVER_PID")
has "... and prints its address" "$P11GLUE_SERVER_ADDRESS" "unix:path=$tmp/daemon.sock"
run ptool -L
has "... which serves the token" "$out" "*token label*: t1*"
kill "$P11GLUE_SERVER_PID"
for _ in $(seq 100); do [ -e "$tmp/daemon.sock" ] || break; sleep 0.05; done
if [ ! -e "$tmp/daemon.sock" ]; then ok "... and removes its socket when stopped"
else not_ok "... and removes its socket when stopped"; fi
run "$tool" server -c --provider "$softhsm" --socket "$tmp/daemon2.sock"
has "csh syntax with -c" "$out" "setenv P11GLUE_SERVER_ADDRESS unix:path=$tmp/daemon2.sock;*"
pid=$(printf '%s\n' "$out" | sed -n 's/^setenv P11GLUE_SERVER_PID \([0-9]*\);$/\1/p')
[ -n "$pid" ] && kill "$pid"
run "$tool" server --provider "$tmp/no-such-module.so"
failed_run "a module that does not exist is refused at start"
run client_run env P11GLUE_SERVER_ADDRESS="unix:path=$tmp/no-server.sock" pkcs11-tool --module "$client" -L
has "with no server, the client says why it has no slots" "$err" \
	"p11glue: p11glue-client.so has no slots: no server at $tmp/no-server.sock: No such file or directory*"
has "... once" "$(grep -c 'has no slots' <<<"$err")" 1
run client_run env P11GLUE_SERVER_ADDRESS='|exit 0' pkcs11-tool --module "$client" -L
has "... a command that is no server: why" "$err" "*the command 'exit 0' ended before a server answered*"
run timeout 20 "$tool" server --foreground --socket "$tmp/none.sock" \
	"pkcs11:token=no-such-token?module-path=$softhsm"
has "a URI that selects no token is refused at start (exit status 1)" "$rc" 1
has "... saying that nothing matches" "$err" "*selects no slot or token*"
[ ! -e "$tmp/none.sock" ] && ok "... before it listens" || not_ok "... before it listens"
run timeout 20 "$tool" remote "pkcs11:token=no-such-token?module-path=$softhsm" </dev/null
has "p11glue remote refuses it too" "$rc" 1
export P11GLUE_SERVER_ADDRESS="unix:path=$sock"
start_server --provider "$softhsm"

# ---------------------------------------------------------------------------
# Another uid: refused by SO_PEERCRED (the socket is opened up so that the
# file mode is not what refuses), served with --allow-uid.
if other_user; then
	chmod 666 "$sock"
	nobody() { client_run setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	# That user loads a copy of the client module it can reach.
	user_client=$(staged "$client")
	stop_server
	start_server --provider "$softhsm" --verbose
	chmod 666 "$sock"
	run nobody pkcs11-tool --module "$user_client" -L
	lacks "a peer of another uid sees no slots" "$out" "*SoftHSM*"
	has "... refused by its uid (SO_PEERCRED)" "$(cat "$tmp/server.err")" "*refused a connection from uid 65534*"
	has "... and the client says why it has no slots" "$err" \
		"*p11glue-client.so has no slots: the server at unix:path=$sock refused the connection*"
	stop_server
	start_server --provider "$softhsm" --allow-uid 65534
	chmod 666 "$sock"
	run nobody pkcs11-tool --module "$user_client" -L
	has "... and is served with --allow-uid" "$out" "*t1*"
	stop_server
	start_server --provider "$softhsm"
else
	skip "a peer of another uid is refused (and says why, and --allow-uid serves it)" \
		"$other_user_why"
fi

# ---------------------------------------------------------------------------
# ssh: a local sshd on loopback in this private network namespace.
port=2222
sshd=$(command -v sshd || echo /usr/sbin/sshd)
if [ -z "${P11GLUE_IN_NETNS:-}" ] || [ ! -x "$sshd" ] || ! command -v ssh >/dev/null; then
	for t in "ssh login with the served key" "the token's key" "stdio mode through ssh" \
		"stdio mode signs" "ssh -R socket forwarding"; do
		skip "$t" "needs root, unshare, ssh and sshd (openssh-server)"
	done
	finish
	exit
fi
ip link set lo up
# sshd wants its privilege separation directory: a private /run.
mount -t tmpfs tmpfs /run && mkdir -m 755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/user_key"
cat "$tmp/token-key.pub" "$tmp/user_key.pub" >"$tmp/authorized_keys"
chmod 600 "$tmp/authorized_keys"
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
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
CONF
"$sshd" -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.log" &
sshd_pid=$!
pids+=("$sshd_pid")
for _ in $(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
	sleep 0.1
done
ssh_opts=(-F /dev/null -p "$port" -o StrictHostKeyChecking=no -o "UserKnownHostsFile=$tmp/known_hosts"
	-o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o ConnectTimeout=20)

# A login with the key the server holds; ssh asks for the PIN through askpass.
printf '#!/bin/sh\necho %s\n' "$pin" >"$tmp/askpass"
chmod 700 "$tmp/askpass"
SSH_ASKPASS=$tmp/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=:0 \
	run client_run ssh "${ssh_opts[@]}" -I "$client" root@127.0.0.1 echo logged-in-with-token </dev/null
has "ssh login with the served key" "$out" "logged-in-with-token"
# The token's key is the only ECDSA one sshd accepts.
has "... which is the token's ECDSA key" "$(cat "$tmp/sshd.log")" "*Accepted publickey for root*ECDSA*"
run bound ssh "${ssh_opts[@]}" -o IdentitiesOnly=yes -o IdentityFile=/dev/null root@127.0.0.1 echo no
failed_run "... without it the login is refused"

# The stdio mode: the client runs ssh, which runs `p11glue remote` there.
remote="|ssh ${ssh_opts[*]} -i $tmp/user_key -o IdentitiesOnly=yes root@127.0.0.1 env SOFTHSM2_CONF=$SOFTHSM2_CONF $tool remote $softhsm"
P11GLUE_SERVER_ADDRESS=$remote run ptool -L
has "stdio mode through ssh lists the token" "$out" "*token label*: t1*"
P11GLUE_SERVER_ADDRESS=$remote run ptool --token-label t1 --login --pin "$pin" --sign -m ECDSA --id 02 \
	-i "$tmp/data.sha256" -o "$tmp/sig2.der" --signature-format openssl
ran "stdio mode signs"
run openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/sig2.der" "$tmp/data"
has "... a signature openssl verifies" "$out" "Verified OK"

# Socket forwarding: the local server's socket appears on the other side.
fwd=$tmp/forwarded.sock
timeout 120 ssh "${ssh_opts[@]}" -i "$tmp/user_key" -o IdentitiesOnly=yes -o ExitOnForwardFailure=yes \
	-N -R "$fwd:$sock" root@127.0.0.1 2>"$tmp/ssh-R.log" &
fwd_pid=$!
pids+=("$fwd_pid")
for _ in $(seq 100); do [ -S "$fwd" ] && break; sleep 0.1; done
P11GLUE_SERVER_ADDRESS=unix:path=$fwd run ptool --token-label t1 --login --pin "$pin" -O
ran "ssh -R socket forwarding: the token through the forwarded socket"
has "... with its key" "$out" "*label:*k1*"
kill "$fwd_pid" 2>/dev/null
kill "$sshd_pid" 2>/dev/null
finish
