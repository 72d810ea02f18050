# Shared by the shell tests of the session service (test-service-tools.sh,
# test-service-browsers.sh): private network and mount namespaces when we
# can make them (root), tests/interop/common.sh's TAP helpers and key
# store, a throwaway home and runtime directory, the scripted pinentry's
# log and answers, and `p11glue service` started and stopped by PID.
#
# Source after setting: p11glue (the CLI), store (p11glue-store.so) and
# fake_pinentry (fake-pinentry.sh). A test may define cleanup_first, run
# at exit before the processes in pids are stopped.
# shellcheck shell=bash

# Everything runs in private network and mount namespaces when we can
# make them: servers listen on a loopback nobody else sees.
if [ -z "${P11GLUE_IN_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare --net --mount true 2>/dev/null; then
	export P11GLUE_IN_NETNS=1
	exec unshare --net --mount -- bash "$0" "$@"
fi

. "$(dirname "${BASH_SOURCE[0]}")/../interop/common.sh"
chmod 711 "$tmp"

export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_DATA_HOME=$tmp/home/.local/share
export XDG_RUNTIME_DIR=$tmp/run P11GLUE_CONFIG=$tmp/conf GNUPGHOME=$tmp/gnupg
export PINENTRY_LOG=$tmp/pinentry.log PINENTRY_ANSWERS=$tmp/answers
unset P11GLUE_SERVER_ADDRESS P11GLUE_PINENTRY PKCS11_MODULE_PATH OPENSSL_CONF GPG_AGENT_INFO PINENTRY_HOLD
mkdir -p "$HOME" "$P11GLUE_CONFIG/modules"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$GNUPGHOME"
sock=$XDG_RUNTIME_DIR/p11glue/pkcs11

# Processes started here, stopped by PID at the end.
pids=()
cleanup() {
	declare -F cleanup_first >/dev/null && cleanup_first
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# The pid of the service answering on the user's socket (status), or "".
service_pid() { "$p11glue" status --service 2>/dev/null | sed -n 's/.*service: running (pid \([0-9]*\),.*/\1/p'; }
# start_service ARGS...: `p11glue service` in the foreground, verbose, with
# the scripted pinentry unless ARGS say otherwise.
start_service() {
	"$p11glue" service --verbose --pinentry "$fake_pinentry" "$@" 2>>"$tmp/service.err" </dev/null &
	svc=$!
	pids+=("$svc")
	for _ in $(seq 400); do [ -S "$sock" ] && [ -n "$(service_pid)" ] && return 0; sleep 0.05; done
	return 1
}
stop_pid() {
	kill "$1" 2>/dev/null
	for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	return 1
}
# How many PINs the scripted pinentry was asked for since its log was emptied.
getpins() { cat "$PINENTRY_LOG" 2>/dev/null | grep -c GETPIN; }
