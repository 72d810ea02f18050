# Shared TAP helpers for shell tests: source it, call `check NAME CMD...`
# style functions, then `finish`.
n=0
failed=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift; for line in "$@"; do printf '#   %s\n' "$line"; done
}

skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# run CMD...: runs it, keeping stdout in $out, stderr in $err, status in $rc.
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# expect NAME RC STDOUT STDERR-PREFIX CMD...: an exact stdout (or '*' for
# any), a stderr that starts with the given prefix ('' for empty stderr).
expect() {
	local name=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 4
	run "$@"
	if [ "$rc" != "$want_rc" ]; then
		not_ok "$name" "exit status $rc, want $want_rc" "stdout: $out" "stderr: $err"
	elif [ "$want_out" != '*' ] && [ "$out" != "$want_out" ]; then
		not_ok "$name" "stdout: $out" "want:   $want_out"
	elif [ -z "$want_err" ] && [ -n "$err" ]; then
		not_ok "$name" "unexpected stderr: $err"
	elif [ -n "$want_err" ] && [ "${err#"$want_err"}" = "$err" ]; then
		not_ok "$name" "stderr: $err" "want prefix: $want_err"
	else
		ok "$name"
	fi
}

finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
