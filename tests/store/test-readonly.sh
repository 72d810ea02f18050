#!/bin/bash
# A token file made read-only and writable again, driven with OpenSC's
# pkcs11-tool as a user who is not root (root writes read-only files):
# while token-N.sqlite is read-only the token says it is write-protected
# and a write fails with CKR_TOKEN_WRITE_PROTECTED and a message naming
# the file; SQLite's -wal and -shm files, which it made read-only
# meanwhile, are made writable again once the token file is, so the
# token is writable again; a -shm file the store cannot repair (the
# directory is not writable) is named in the message.
#
# Usage: test-readonly.sh MODULE
set -u
module=$1
. "$(dirname "$0")/../tools/tap.sh"

if ! command -v pkcs11-tool >/dev/null; then
	echo "1..0 # SKIP pkcs11-tool not installed (Debian package opensc)"
	exit 0
fi
# As root, run as nobody; as anyone else, as oneself.
as_user=()
if [ "$(id -u)" = 0 ]; then
	if ! other_user; then
		echo "1..0 # SKIP runs as a user who is not root (root writes read-only files): $other_user_why"
		exit 0
	fi
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# That user loads a copy of the module it can reach.
	module=$(staged "$module")
fi

preload=$(ldd "$module" | awk '/lib(a|ub|t)san/ { print $3 }' | paste -sd: -)
asan_options=${ASAN_OPTIONS:-}
[ -n "$preload" ] && asan_options=${asan_options:+$asan_options:}detect_leaks=0

store=$tmp/store
mkdir "$store"
chmod 755 "$tmp"
[ ${#as_user[@]} -gt 0 ] && chown 65534:65534 "$store"
so_pin=12345678
pin=1234
tool() {
	"${as_user[@]}" env P11GLUE_STORE_DIR="$store" LD_PRELOAD="$preload" ASAN_OPTIONS="$asan_options" \
		pkcs11-tool --module "$module" "$@"
}
user() { tool --token-label ro --login --pin "$pin" "$@"; }
# fail NAME REASON: a failure, with the last run's output as TAP comments.
fail() {
	not_ok "$1" "$2"
	printf '%s\n%s\n' "$out" "$err" | sed 's/^/#   /'
}
check() {
	local name=$1
	shift
	run "$@"
	if [ "$rc" -eq 0 ]; then ok "$name"; else fail "$name" "exit status $rc"; fi
}
fails_with() {
	local name=$1 want=$2
	shift 2
	run "$@"
	case "$rc:$out$err" in
	0:*) fail "$name" "succeeded" ;;
	*"$want"*) ok "$name" ;;
	*) fail "$name" "no '$want' in the output" ;;
	esac
}
has() {
	case "$out$err" in
	*"$2"*) ok "$1" ;;
	*) fail "$1" "no '$2' in the output" ;;
	esac
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
mode() { stat -c %a "$1" 2>/dev/null; }

token=$store/token-0.sqlite
check "init token" tool --init-token --label ro --so-pin "$so_pin"
check "init PIN" tool --token-label ro --login --login-type so --so-pin "$so_pin" --init-pin --new-pin "$pin"
check "a key on the writable token" user --keypairgen --key-type EC:prime256v1 --label first --id 01

chmod 400 "$token"
check "the read-only token is read" user -O
has "... and shows its key" "first"
run tool -L
has "the token says it is write-protected" "readonly"
fails_with "a new key on the read-only token is refused" CKR_TOKEN_WRITE_PROTECTED \
	user --keypairgen --key-type EC:prime256v1 --label second --id 02
has "... naming the read-only file" "$token"
fails_with "a wrong PIN is refused as a wrong PIN" CKR_PIN_INCORRECT \
	tool --token-label ro --login --pin 9999 -O

chmod 600 "$token"
check "a new key once the token file is writable again" \
	user --keypairgen --key-type EC:prime256v1 --label second --id 02
has "... after the store made SQLite's files writable again" "made it writable again"
for f in "$token-shm" "$token-wal"; do
	m=$(mode "$f")
	if [ -z "$m" ] || [ "$m" = 600 ]; then ok "${f##*/} is writable (${m:-absent})"
	else not_ok "${f##*/} is writable" "mode $m"; fi
done
run user -O
has "both keys are there" "second"

# SQLite's files left read-only where the store cannot repair them: the
# directory is not writable.
chmod 400 "$token"
run user -O
chmod 600 "$token"
chmod 500 "$store"
fails_with "with SQLite's files left read-only, a write is refused" CKR_TOKEN_WRITE_PROTECTED \
	user --keypairgen --key-type EC:prime256v1 --label third --id 03
has "... naming them" "$token-shm"
has "... and what to do" "chmod u+w"
chmod 700 "$store"
check "repaired once the directory is writable" \
	user --keypairgen --key-type EC:prime256v1 --label third --id 03

finish
