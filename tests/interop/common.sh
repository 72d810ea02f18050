# Shared by the key store's shell tests (tests/interop/*.sh and
# tests/tools/test-cli-store.sh): TAP helpers on top of tests/tools/tap.sh,
# time bounds, and a fresh key store with a token made by the p11glue CLI.
#
# Source after setting: p11glue (the CLI) and store (p11glue-store.so).
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/../tools/tap.sh"

# As tap.sh's, but a diagnostic of several lines stays a TAP comment.
not_ok() {
	local arg line
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift
	for arg in "$@"; do
		while IFS= read -r line; do printf '#   %s\n' "$line"; done <<<"$arg"
	done
}

# Every client call is time-bounded.
bound() { timeout 120 "$@"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }

# has / lacks NAME TEXT PATTERN ($3 is a glob pattern on purpose).
# shellcheck disable=SC2254
has() {
	case $2 in
	$3) ok "$1" ;;
	*) not_ok "$1" "output: $2" "want pattern: $3" ;;
	esac
}
# shellcheck disable=SC2254
lacks() {
	case $2 in
	$3) not_ok "$1" "output: $2" "unwanted pattern: $3" ;;
	*) ok "$1" ;;
	esac
}
# same NAME GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi
}
# ran NAME: the last run exited 0; failed_run NAME: it did not.
ran() {
	if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1" "exit status $rc" "stdout: $out" "stderr: $err"; fi
}
failed_run() {
	if [ "$rc" != 0 ]; then ok "$1"; else not_ok "$1" "exit status 0, want failure" "stdout: $out" "stderr: $err"; fi
}
# status NAME RC: the last run exited with RC.
status() {
	if [ "$rc" = "$2" ]; then ok "$1"; else not_ok "$1" "exit status $rc, want $2" "stdout: $out" "stderr: $err"; fi
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip_all "$c is not installed"
	done
}

# A module built with sanitizers needs their runtimes loaded first in
# programs that load it; their own leaks at exit are not the module's.
san_libs=$(ldd "$store" 2>/dev/null |
	sed -n 's/^[[:space:]]*lib\(asan\|ubsan\|tsan\)\.so[^ ]* => \([^ ]*\).*/\2/p' | tr '\n' ' ')
# client_env: a command prefix that gives a client those runtimes (empty
# without sanitizers), for commands run through other programs.
client_env=(env)
if [ -n "$san_libs" ]; then
	# Colons, not blanks, between libraries: the prefix may be word-split.
	client_env=(env "LD_PRELOAD=$(tr ' ' ':' <<<"${san_libs% }")"
		"ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0:verify_asan_link_order=0")
fi
# client CMD...: a client program that loads the store module
# ($san_extra: more sanitizer options for this call).
client() {
	if [ -n "$san_libs" ]; then
		bound "${client_env[@]:0:2}" "${client_env[2]}${san_extra:-}" "$@"
	else
		bound "$@"
	fi
}

# secret FILE VALUE: a PIN or passphrase file only its owner can read.
secret() {
	(umask 077 && printf '%s\n' "$2" >"$1")
}

# new_store [LABEL]: a fresh store in $tmp/store with an initialized token
# (SO PIN $so_pin, user PIN $pin) made by the p11glue CLI; the tests use
# it through P11GLUE_STORE_DIR. Prints nothing; exits the test on failure.
so_pin=12345678
pin=87654321
new_store() {
	local label=${1:-test}
	export P11GLUE_STORE_DIR=$tmp/store
	rm -rf "$P11GLUE_STORE_DIR"
	mkdir -p "$P11GLUE_STORE_DIR"
	secret "$tmp/so-pin" "$so_pin"
	secret "$tmp/pin" "$pin"
	if ! bound "$p11glue" init-token --module "$store" --label "$label" \
		--so-pin-source "$tmp/so-pin" >"$tmp/setup.log" 2>&1 ||
		! bound "$p11glue" init-pin --module "$store" --so-pin-source "$tmp/so-pin" \
			--new-pin-source "$tmp/pin" "pkcs11:token=$label" >>"$tmp/setup.log" 2>&1; then
		echo "Bail out! cannot create a token: $(cat "$tmp/setup.log")"
		exit 1
	fi
}

# keygen LABEL TYPE [ID]: a key pair made with the p11glue CLI.
keygen() {
	bound "$p11glue" generate-keypair --module "$store" --type "$2" --label "$1" \
		${3:+--id "$3"} "pkcs11:token=${token:-test}?pin-source=$tmp/pin"
}
