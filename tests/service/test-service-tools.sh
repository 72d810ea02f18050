#!/bin/bash
# Real programs through p11glue-client.so and the session service
# (`p11glue service` serving a fresh key store), one unlock for all of
# them: after one `p11glue unlock`, without any PIN, pkcs11-tool --sign,
# ssh to a local sshd, openssl with libp11's engine, p11tool --test-sign
# (GnuTLS), gpg --sign through gnupg-pkcs11-scd and NSS's certutil -K all
# succeed; after `p11glue lock` each one is refused (the service's
# pinentry is cancelled), and with a pinentry that answers, the first one
# unlocks the token for the others. Then: pinentry-tty driven through
# tmux; socket activation (systemd-socket-activate, and systemd --user
# where one can run); the client module starting the service itself and
# again after it stopped; two users, each reaching only their own
# service (setpriv).
#
# Everything runs in private network and mount namespaces when we can
# make them (root): sshd listens on a loopback nobody else sees. Every
# process started here is stopped by its PID.
#
# Usage: test-service-tools.sh P11GLUE STORE_MODULE CLIENT_MODULE PINENTRY
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
client_so=$(realpath -e "$3") || exit 1
fake_pinentry=$(realpath -e "$4") || exit 1
here=$(cd "$(dirname "$0")" && pwd)

. "$here/service-lib.sh"
need pkcs11-tool openssl
# Stopped before the processes by PID (service-lib.sh's cleanup).
cleanup_first() {
	[ -n "${gpg_cleanup:-}" ] && $gpg_cleanup
	[ -n "${tmux_sock:-}" ] && tmux -S "$tmux_sock" kill-server 2>/dev/null
}

# ---------------------------------------------------------------------------
# A token with an EC key (pkcs11-tool, ssh, openssl, GnuTLS, NSS) and two
# RSA keys with certificates (gnupg-pkcs11-scd finds keys by them).
new_store
run keygen k-ec ec:secp256r1 01
ran "an EC key on a fresh store token"
for k in gpg-sign gpg-encrypt; do
	keygen "$k" rsa:2048 >/dev/null 2>&1 &&
		client "$p11glue" certify --module "$store" --self-signed --subject "CN=p11glue $k" \
			"pkcs11:token=test;object=$k?pin-source=$tmp/pin" >/dev/null 2>&1
done
client "$p11glue" export-pubkey --module "$store" --output "$tmp/k-ec.pem" "pkcs11:token=test;object=k-ec" >/dev/null 2>&1
# A key whose private exponent the test knows, to look for it in the
# service's memory.
openssl genrsa -out "$tmp/known.pem" 2048 2>/dev/null
client "$p11glue" import --module "$store" "$tmp/known.pem" "pkcs11:token=test?pin-source=$tmp/pin" >/dev/null 2>&1
printf 'signed through the session service\n' >"$tmp/data"
openssl dgst -sha256 -binary "$tmp/data" >"$tmp/data.sha256"
: >"$tmp/answers"   # every dialog is cancelled until a test says otherwise

run start_service
ran "p11glue service listens on the user's socket"

# ---------------------------------------------------------------------------
# The programs, each a check that it signs (or lists keys) or does not.
ptool_sign() {
	rm -f "$tmp/sig.der"
	run client pkcs11-tool --module "$client_so" --sign -m ECDSA --id 01 \
		-i "$tmp/data.sha256" -o "$tmp/sig.der" --signature-format openssl
	[ "$rc" = 0 ] && openssl dgst -sha256 -verify "$tmp/k-ec.pem" -signature "$tmp/sig.der" "$tmp/data" >/dev/null 2>&1
}
engine_so=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')/pkcs11.so
engine_sign() {
	rm -f "$tmp/esig"
	run client env PKCS11_MODULE_PATH="$client_so" openssl dgst -engine pkcs11 -keyform engine \
		-sign "pkcs11:token=test;object=k-ec;type=private" -sha256 -out "$tmp/esig" "$tmp/data"
	[ "$rc" = 0 ] && openssl dgst -sha256 -verify "$tmp/k-ec.pem" -signature "$tmp/esig" "$tmp/data" >/dev/null 2>&1
}
gnutls_sign() {
	run client p11tool --provider "$client_so" --test-sign "pkcs11:token=test;object=k-ec;type=private"
	[ "$rc" = 0 ] && case $out$err in *"Verifying against public key in the token... ok"*) true ;; *) false ;; esac
}
nss_db=$tmp/nssdb
mkdir -p "$nss_db"
certutil -N -d "sql:$nss_db" --empty-password >/dev/null 2>&1
client modutil -dbdir "sql:$nss_db" -add p11glue -libfile "$client_so" -force >/dev/null 2>&1
nss_keys() {
	run client certutil -K -d "sql:$nss_db" -h test
	[ "$rc" = 0 ] && case $out in *k-ec*) true ;; *) false ;; esac
}
check() {   # check NAME FUNCTION: ok when the function succeeds
	if "$2"; then ok "$1"; else not_ok "$1" "exit status $rc" "stdout: $out" "stderr: $err"; fi
}
refused() {   # refused NAME FUNCTION: ok when it fails
	if "$2"; then not_ok "$1" "it succeeded" "stdout: $out"; else ok "$1"; fi
}
have_engine=false; [ -f "$engine_so" ] && have_engine=true
have_gnutls=false; command -v p11tool >/dev/null && have_gnutls=true
have_nss=false; command -v certutil >/dev/null && command -v modutil >/dev/null && have_nss=true

# Before any unlock: locked for all (the dialog is cancelled).
refused "locked: pkcs11-tool --sign is refused" ptool_sign
has "... told the login was cancelled" "$err" "*CKR_FUNCTION_CANCELED*"
has "... after the service asked through pinentry" "$(getpins)" "[1-9]*"
if kill -0 "$svc" 2>/dev/null; then ok "... and the service keeps running"; else not_ok "... and the service keeps running"; fi

run client "$p11glue" unlock --pin-source "$tmp/pin"
ran "p11glue unlock"
# key_in_service: how many pieces of the known key's private exponent the
# service's memory holds ("" when it cannot be read).
key_in_service() { python3 "$here/key-in-memory.py" "$svc" "$tmp/known.pem" 2>/dev/null; }
wipe_check=false
if command -v python3 >/dev/null && [ -n "$(key_in_service)" ]; then
	wipe_check=true
	has "unlocked: the service holds the key unwrapped (what lock must wipe)" "$(key_in_service)" "[1-9]*"
else
	skip "the service's memory" "cannot read it here (python3, ptrace)"
fi
: >"$PINENTRY_LOG"
check "unlocked: pkcs11-tool --sign, no PIN" ptool_sign
if $have_engine; then check "unlocked: openssl dgst -engine pkcs11, no PIN" engine_sign
else skip "unlocked: openssl engine" "libengine-pkcs11-openssl is not installed"; fi
if $have_gnutls; then check "unlocked: p11tool --test-sign (GnuTLS), no PIN" gnutls_sign
else skip "unlocked: p11tool" "gnutls-bin is not installed"; fi
if $have_nss; then check "unlocked: NSS certutil -K lists the token's key, no password" nss_keys
else skip "unlocked: certutil -K" "libnss3-tools is not installed"; fi
same "... no program asked for a PIN through pinentry" "$(getpins)" 0

# ---------------------------------------------------------------------------
# ssh to a local sshd in this private network namespace
sshd=$(command -v sshd || echo /usr/sbin/sshd)
ssh_ok=false
if [ -n "${P11GLUE_IN_NETNS:-}" ] && [ -x "$sshd" ] && command -v ssh >/dev/null &&
	ip link set lo up 2>/dev/null && mount -t tmpfs -o mode=755 none /run 2>/dev/null &&
	mkdir -m 755 /run/sshd; then
	ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
	ssh-keygen -i -m PKCS8 -f "$tmp/k-ec.pem" >"$tmp/authorized_keys"
	chmod 600 "$tmp/authorized_keys"
	cat >"$tmp/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port 2222
HostKey $tmp/host_key
AuthorizedKeysFile $tmp/authorized_keys
PidFile $tmp/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
LogLevel VERBOSE
CONF
	cat >"$tmp/ssh_config" <<CONF
Host *
	PKCS11Provider $client_so
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	PasswordAuthentication no
	KbdInteractiveAuthentication no
CONF
	# An askpass that records being asked: ssh must not ask for a PIN.
	printf '#!/bin/sh\necho asked >>"%s"\n' "$tmp/askpass.log" >"$tmp/askpass"
	chmod 755 "$tmp/askpass"
	"$sshd" -D -e -f "$tmp/sshd_config" >"$tmp/sshd.log" 2>&1 </dev/null &
	pids+=($!)
	for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/2222) 2>/dev/null && break; sleep 0.05; done
	ssh_ok=true
fi
ssh_login() {
	run client env SSH_ASKPASS="$tmp/askpass" SSH_ASKPASS_REQUIRE=force DISPLAY=none \
		ssh -F "$tmp/ssh_config" -p 2222 "$(id -un)@127.0.0.1" 'echo logged-in-through-the-service' </dev/null
	[ "$rc" = 0 ] && [ "$out" = logged-in-through-the-service ]
}
if $ssh_ok; then
	check "unlocked: ssh logs in with the token's key, no PIN" ssh_login
	has "... sshd accepted the token's key" "$(cat "$tmp/sshd.log")" "*Accepted publickey for*ECDSA*"
	if [ -e "$tmp/askpass.log" ]; then not_ok "... and ssh asked for no PIN" "$(cat "$tmp/askpass.log")"
	else ok "... and ssh asked for no PIN"; fi
else
	skip "unlocked: ssh" "needs root, unshare, ssh and sshd"
fi

# ---------------------------------------------------------------------------
# gnutls-cli presenting the token's certificate to a TLS server that
# requires one, and Java's SunPKCS11 signing with the token's key
[ -n "${P11GLUE_IN_NETNS:-}" ] && ip link set lo up 2>/dev/null
# (GnuTLS programs can hang at exit, and the JVM cannot run, with a
# sanitizer's runtime preloaded.)
tls_ok=false
if [ -z "$san_libs" ] && command -v gnutls-cli >/dev/null &&
	client pkcs11-tool --module "$client_so" --read-object --type cert --label gpg-sign \
		-o "$tmp/gpg-sign.der" >/dev/null 2>&1 &&
	openssl x509 -inform DER -in "$tmp/gpg-sign.der" -out "$tmp/gpg-sign.pem" 2>/dev/null &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
		-keyout "$tmp/tls-server.key" -out "$tmp/tls-server.pem" -days 2 2>/dev/null; then
	tls_port=$((20000 + $$ % 20000))
	# -www answers with the client certificate it was shown.
	openssl s_server -accept "127.0.0.1:$tls_port" -cert "$tmp/tls-server.pem" \
		-key "$tmp/tls-server.key" -Verify 1 -verify_return_error -CAfile "$tmp/gpg-sign.pem" \
		-www -quiet >"$tmp/s_server.log" 2>&1 </dev/null &
	pids+=($!)
	for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null && break; sleep 0.05; done
	tls_ok=true
fi
gnutls_tls() {
	run client sh -c 'printf "GET / HTTP/1.0\r\n\r\n" | gnutls-cli --provider "$1" --no-ca-verification \
		--x509certfile "pkcs11:token=test;object=gpg-sign;type=cert" \
		--x509keyfile "pkcs11:token=test;object=gpg-sign;type=private" -p "$2" 127.0.0.1' \
		gnutls_tls "$client_so" "$tls_port"
	case $out in *"Client certificate"*"CN"*"p11glue gpg-sign"*) true ;; *) false ;; esac
}
if $tls_ok; then check "unlocked: gnutls-cli shows the token's client certificate, no PIN" gnutls_tls
else skip "unlocked: gnutls-cli" "needs gnutls-bin, a certificate on the token, no sanitizer"; fi

java_ok=false
if [ -z "$san_libs" ] && command -v javac >/dev/null && command -v java >/dev/null; then
	mkdir -p "$tmp/java"
	cat >"$tmp/java/Sign.java" <<'JAVA'
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;

/* Sign CONFIG ALIAS IN OUT: signs IN with the token's key, no PIN given. */
public class Sign {
	public static void main(String[] args) throws Exception {
		Provider p = Security.getProvider("SunPKCS11").configure(args[0]);
		KeyStore ks = KeyStore.getInstance("PKCS11", p);
		ks.load(null, null);
		PrivateKey key = (PrivateKey) ks.getKey(args[1], null);
		Signature s = Signature.getInstance("SHA256withRSA", p);
		s.initSign(key);
		s.update(Files.readAllBytes(Path.of(args[2])));
		Files.write(Path.of(args[3]), s.sign());
	}
}
JAVA
	printf 'name = p11glue-service\nlibrary = %s\nslotListIndex = 0\n' "$client_so" >"$tmp/java/pkcs11.cfg"
	openssl x509 -in "$tmp/gpg-sign.pem" -noout -pubkey >"$tmp/gpg-sign.pub" 2>/dev/null &&
		bound javac -d "$tmp/java" "$tmp/java/Sign.java" >/dev/null 2>&1 && java_ok=true
fi
java_sign() {
	rm -f "$tmp/java.sig"
	run client java -cp "$tmp/java" Sign "$tmp/java/pkcs11.cfg" gpg-sign "$tmp/data" "$tmp/java.sig"
	[ "$rc" = 0 ] && openssl dgst -sha256 -verify "$tmp/gpg-sign.pub" -signature "$tmp/java.sig" "$tmp/data" >/dev/null 2>&1
}
if $java_ok; then check "unlocked: Java (SunPKCS11) signs with the token's key, no PIN" java_sign
else skip "unlocked: Java" "needs a JDK and a module without sanitizers"; fi
same "... neither asked for a PIN through pinentry" "$(getpins)" 0

# ---------------------------------------------------------------------------
# gpg --sign through gnupg-pkcs11-scd, set up by p11glue (the client
# module, with a protected authentication path)
gpg_ok=false
if command -v gpg >/dev/null && [ -x /usr/bin/gnupg-pkcs11-scd ] && command -v python3 >/dev/null; then
	gpg_ok=true
	g() { client gpg --batch --no-tty "$@"; }
	gpg_cleanup() {
		local a s
		a=$(timeout 20 gpg-connect-agent --no-autostart 'getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
		s=$(timeout 20 gpg-connect-agent --no-autostart 'scd getinfo pid' /bye 2>/dev/null | sed -n 's/^D //p')
		timeout 20 gpgconf --homedir "$GNUPGHOME" --kill all >/dev/null 2>&1
		for p in $a $s; do stop_pid "$p" || kill -9 "$p" 2>/dev/null; done
	}
	gpg_cleanup=gpg_cleanup
	grip_of() {
		client "$p11glue" export-pubkey --module "$store" "pkcs11:token=test;object=$1;type=public" |
			openssl rsa -pubin -noout -modulus | cut -d= -f2 | sed 's/^\([89A-F]\)/00\1/' |
			python3 -c 'import hashlib, sys; print(hashlib.sha1(bytes.fromhex(sys.stdin.read().strip())).hexdigest().upper())'
	}
	run client "$p11glue" setup --gnupg
	ran "p11glue setup --gnupg names the client module"
	# gpg-agent's own PINs (it would ask for the token's when it may not
	# log in without one) are cancelled.
	printf '#!/bin/sh\necho OK\nwhile read -r l; do case $l in GETPIN*) echo "ERR 83886179 cancelled";; BYE*) echo OK; exit 0;; *) echo OK;; esac; done\n' \
		>"$tmp/agent-pinentry"
	chmod 700 "$tmp/agent-pinentry"
	printf 'pinentry-program %s\n' "$tmp/agent-pinentry" >>"$GNUPGHOME/gpg-agent.conf"
	sign_grip=$(grip_of gpg-sign)
	enc_grip=$(grip_of gpg-encrypt)
	client gpg-connect-agent 'scd learn' /bye >"$tmp/learn.log" 2>&1
	# The agent keeps the token's keys as keys on a card (their keygrips).
	g --card-status >>"$tmp/learn.log" 2>&1
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
	fpr=$(sed -n 's/^\[GNUPG:\] KEY_CREATED [BP] \([0-9A-F]*\).*/\1/p' <<<"$out")
	case $fpr in
	????????????????????????????????????????) ok "unlocked: gpg makes an OpenPGP key on the token's keys (signed by the token)" ;;
	*) not_ok "unlocked: gpg makes an OpenPGP key on the token's keys (signed by the token)" \
		"stdout: $out" "stderr: $err" "scd learn: $(cat "$tmp/learn.log")" ;;
	esac
	g --export "$fpr" >"$tmp/pub.gpg" 2>/dev/null
fi
gpg_sign() {
	rm -f "$tmp/data.sig"
	run g --local-user "$fpr" --detach-sign --output "$tmp/data.sig" "$tmp/data"
	[ "$rc" = 0 ] && gpgv --keyring "$tmp/pub.gpg" "$tmp/data.sig" "$tmp/data" >/dev/null 2>&1
}
if $gpg_ok; then
	check "unlocked: gpg --sign through gnupg-pkcs11-scd, no PIN" gpg_sign
else
	skip "unlocked: gpg --sign" "needs gpg, gnupg-pkcs11-scd and python3"
fi
same "... still no pinentry dialog" "$(getpins)" 0

# ---------------------------------------------------------------------------
# Locked: every one of them refused; the service asks through pinentry,
# which is cancelled.
run "$p11glue" lock
ran "p11glue lock"
has "... locks the token" "$out" "token 'test' locked"
if $wipe_check; then same "... and wipes the unwrapped key from the service's memory" "$(key_in_service)" 0; fi
refused "locked: pkcs11-tool --sign is refused" ptool_sign
if $have_engine; then refused "locked: the openssl engine is refused" engine_sign; fi
if $have_gnutls; then refused "locked: p11tool --test-sign is refused" gnutls_sign; fi
if $have_nss; then refused "locked: certutil -K lists no key" nss_keys; fi
if $ssh_ok; then refused "locked: ssh does not log in with the token" ssh_login; fi
if $gpg_ok; then refused "locked: gpg --sign is refused" gpg_sign; fi
if $tls_ok; then refused "locked: gnutls-cli shows no client certificate" gnutls_tls; fi
if $java_ok; then refused "locked: Java does not sign" java_sign; fi
has "... each asked through the service's pinentry (cancelled)" "$(getpins)" "[1-9]*"
if kill -0 "$svc" 2>/dev/null; then ok "... and the service keeps running"; else not_ok "... and the service keeps running"; fi

# A pinentry that answers: the first program that needs the key unlocks
# the token for all the others.
printf 'pin %s\n' "$pin" >"$tmp/answers"
: >"$PINENTRY_LOG"
check "pinentry: pkcs11-tool --sign unlocks the token through it" ptool_sign
same "... one dialog" "$(getpins)" 1
has "... naming the token" "$(cat "$PINENTRY_LOG")" '*SETDESC *"test"*'
if $have_gnutls; then check "... then p11tool signs without a dialog" gnutls_sign; fi
if $ssh_ok; then check "... and ssh logs in" ssh_login; fi
if $gpg_ok; then check "... and gpg signs" gpg_sign; fi
same "... still one dialog" "$(getpins)" 1
run "$p11glue" status --service
has "status: unlocked, and since when" "$out" "*token: 'test': unlocked since 2*"

# ---------------------------------------------------------------------------
# The service stops (a restart): clients recover, the token is locked.
stop_pid "$svc"
run "$p11glue" status --service
has "the service stopped: status says so" "$out" "*service: not running*"
: >"$tmp/answers"
run client pkcs11-tool --module "$client_so" -L
ran "the next client starts the service again (p11glue-client.so)"
has "... and sees the token" "$out" "*token label*: test*"
svc=$(service_pid)
[ -n "$svc" ] && pids+=("$svc")
if [ -n "$svc" ]; then ok "... a service of its own start"; else not_ok "... a service of its own start"; fi
refused "... which starts locked" ptool_sign
stop_pid "$svc"

# ---------------------------------------------------------------------------
# pinentry-tty in a terminal (tmux): the service runs in the pane, its
# pinentry asks there.
if command -v tmux >/dev/null && command -v pinentry-tty >/dev/null; then
	tmux_sock=$tmp/tmux.sock
	tty_sock=$tmp/tty.sock
	tmux -S "$tmux_sock" new-session -d -x 150 -y 40 \
		"exec env P11GLUE_STORE_DIR='$P11GLUE_STORE_DIR' XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' $p11glue service --socket '$tty_sock' --pinentry pinentry-tty 2>'$tmp/tty-service.err'"
	for _ in $(seq 200); do [ -S "$tty_sock" ] && break; sleep 0.05; done
	pids+=("$(tmux -S "$tmux_sock" list-panes -F '#{pane_pid}')")
	tty_sign() {
		client env P11GLUE_SERVER_ADDRESS="unix:path=$tty_sock" pkcs11-tool --module "$client_so" \
			--sign -m ECDSA --id 01 -i "$tmp/data.sha256" -o "$tmp/tty.sig" \
			--signature-format openssl >"$tmp/tty.out" 2>&1
	}
	screen() { tmux -S "$tmux_sock" capture-pane -p; }
	# wait_screen TEXT: until the pane shows it (at most 60 s).
	wait_screen() { for _ in $(seq 600); do case $(screen) in *"$1"*) return 0 ;; esac; sleep 0.1; done; return 1; }
	tty_sign &
	signer=$!
	if wait_screen "PIN:"; then
		ok "pinentry-tty asks in the service's terminal"
		has "... naming the token" "$(screen)" '*"test"*'
		tmux -S "$tmux_sock" send-keys "$pin" Enter
		wait "$signer"
		rc=$?
		if [ "$rc" = 0 ]; then ok "... the PIN typed there unlocks the token: pkcs11-tool signs"
		else not_ok "... the PIN typed there unlocks the token: pkcs11-tool signs" "$(cat "$tmp/tty.out")"; fi
		if client env P11GLUE_SERVER_ADDRESS="unix:path=$tty_sock" pkcs11-tool --module "$client_so" \
			--sign -m ECDSA --id 01 -i "$tmp/data.sha256" -o "$tmp/tty.sig" \
			--signature-format openssl >/dev/null 2>&1; then
			ok "... and the next signature needs no PIN"
		else
			not_ok "... and the next signature needs no PIN"
		fi
		"$p11glue" lock --socket "$tty_sock" >/dev/null
		tty_sign &
		signer=$!
		if wait_screen "PIN:"; then
			# An empty entry is no PIN: the login is cancelled.
			tmux -S "$tmux_sock" send-keys Enter
			wait "$signer"
			rc=$?
			if [ "$rc" != 0 ]; then ok "pinentry-tty left empty: refused"; else not_ok "pinentry-tty left empty: refused"; fi
			has "... as CKR_FUNCTION_CANCELED" "$(cat "$tmp/tty.out")" "*CKR_FUNCTION_CANCELED*"
		else
			kill "$signer" 2>/dev/null
			not_ok "pinentry-tty asks again after lock" "$(screen)"
		fi
	else
		kill "$signer" 2>/dev/null
		not_ok "pinentry-tty asks in the service's terminal" "$(screen)" "$(cat "$tmp/tty-service.err")"
	fi
	tmux -S "$tmux_sock" kill-server 2>/dev/null
	tmux_sock=
else
	skip "pinentry-tty through tmux" "needs tmux and pinentry-tty"
fi

# ---------------------------------------------------------------------------
# Socket activation: systemd-socket-activate listens, starts the service
# on the first connection and passes the socket ($LISTEN_FDS).
if command -v systemd-socket-activate >/dev/null; then
	sa_sock=$tmp/activated.sock
	systemd-socket-activate -l "$sa_sock" -E P11GLUE_STORE_DIR -E XDG_RUNTIME_DIR -E HOME \
		-E PINENTRY_LOG -E PINENTRY_ANSWERS ${LD_PRELOAD:+-E LD_PRELOAD} \
		"$p11glue" service --pinentry "$fake_pinentry" >"$tmp/activate.log" 2>&1 &
	activated=$!
	pids+=("$activated")
	for _ in $(seq 200); do [ -S "$sa_sock" ] && break; sleep 0.05; done
	run client env P11GLUE_SERVER_ADDRESS="unix:path=$sa_sock" pkcs11-tool --module "$client_so" -L
	ran "socket activation: the first client starts the service"
	has "... which serves the token" "$out" "*token label*: test*"
	run "$p11glue" lock --socket "$sa_sock"
	ran "... a session service (its control calls answer)"
	has "... in the process systemd-socket-activate started" "$(tr '\0' ' ' </proc/"$activated"/cmdline)" \
		"*p11glue service*"
	stop_pid "$activated"
	if [ -S "$sa_sock" ]; then ok "... which leaves systemd's socket in place"
	else not_ok "... which leaves systemd's socket in place"; fi
else
	skip "socket activation" "no systemd-socket-activate"
fi

# systemd --user itself, where one can run here (not in most containers).
if command -v systemd >/dev/null && command -v systemctl >/dev/null; then
	units=$XDG_CONFIG_HOME/systemd/user
	mkdir -p "$units"
	cp "$here/../../src/service/p11glue.socket" "$units/"
	sed "s|^ExecStart=.*|ExecStart=$p11glue service --pinentry none|" \
		"$(dirname "$p11glue")/../service/p11glue.service" >"$units/p11glue.service"
	timeout 60 systemd --user >"$tmp/systemd.log" 2>&1 </dev/null &
	manager=$!
	pids+=("$manager")
	for _ in $(seq 100); do
		[ -S "$XDG_RUNTIME_DIR/systemd/private" ] && break
		kill -0 "$manager" 2>/dev/null || break
		sleep 0.05
	done
	if [ -S "$XDG_RUNTIME_DIR/systemd/private" ] && timeout 30 systemctl --user start p11glue.socket 2>/dev/null; then
		run client pkcs11-tool --module "$client_so" -L
		ran "systemd --user: p11glue.socket starts the service on the first connection"
		has "... which serves the token" "$out" "*token label*: test*"
		run timeout 30 systemctl --user is-active p11glue.service
		same "... as p11glue.service" "$out" active
		timeout 30 systemctl --user stop p11glue.socket p11glue.service 2>/dev/null
	else
		skip "socket activation under systemd --user" "systemd --user cannot run here"
	fi
	stop_pid "$manager"
	rm -rf "$units"
else
	skip "socket activation under systemd --user" "no systemd"
fi

# ---------------------------------------------------------------------------
# Two users on one machine: each reaches only their own service.
if other_user; then
	start_service
	chmod 755 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/p11glue"
	chmod 666 "$sock"
	other=$tmp/nobody
	mkdir -p "$other/run" "$other/home"
	chmod 700 "$other/run"
	chown -R 65534:65534 "$other"
	# That user runs a copy of the build it can reach.
	user_client=$(staged "$client_so") user_p11glue=$(staged "$p11glue")
	nobody() {
		client setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$other/home" \
			XDG_RUNTIME_DIR="$other/run" XDG_DATA_HOME="$other/home/.local/share" \
			P11GLUE_STORE_DIR="$other/home/store" "$@"
	}
	run nobody env P11GLUE_SERVER_ADDRESS="unix:path=$sock" pkcs11-tool --module "$user_client" -L
	lacks "another user's client does not see this user's token" "$out" "*token label*: test*"
	has "... the service refused it (SO_PEERCRED)" "$err" "*refused the connection*"
	has "... and says so" "$(cat "$tmp/service.err")" "*refused a connection from uid 65534*"
	run nobody pkcs11-tool --module "$user_client" -L
	ran "that user's client starts that user's own service"
	lacks "... which serves that user's store, not this one's token" "$out" "*token label*: test*"
	nobody_svc=$(nobody "$user_p11glue" status --service 2>/dev/null | sed -n 's/.*service: running (pid \([0-9]*\),.*/\1/p')
	[ -n "$nobody_svc" ] && pids+=("$nobody_svc")
	same "... running as that user" "$(awk '/^Uid:/ { print $2 }' "/proc/$nobody_svc/status" 2>/dev/null)" 65534
	run nobody dd if="/proc/$nobody_svc/mem" of=/dev/null bs=1 count=1 status=none
	has "... whose memory that user's other programs cannot open (not dumpable)" "$err" \
		"*/proc/$nobody_svc/mem*Permission denied*"
	same "... and which writes no core file" \
		"$(awk '/^Max core file size/ { print $5 "/" $6 }' "/proc/$nobody_svc/limits" 2>/dev/null)" 0/0
	chmod 755 "$other" "$other/run" "$other/run/p11glue" 2>/dev/null
	chmod 666 "$other/run/p11glue/pkcs11" 2>/dev/null
	run client env P11GLUE_SERVER_ADDRESS="unix:path=$other/run/p11glue/pkcs11" \
		pkcs11-tool --module "$client_so" -L
	has "this user's client is refused by the other user's service" "$err" "*refused the connection*"
	stop_pid "$nobody_svc"
	stop_pid "$svc"
else
	skip "two users" "$other_user_why"
fi
finish
