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

# other_user: true when this test can run programs as another user
# (nobody, 65534, through setpriv): as root, with a setpriv that can change
# user, and a temporary directory that user reaches ($tmp is made
# passable; its parents must be). Else false, with the reason in
# $other_user_why for the test's skip.
other_user() {
	other_user_why=
	if [ "$(id -u)" != 0 ]; then
		other_user_why="needs root"
	elif ! command -v setpriv >/dev/null ||
		! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		other_user_why="setpriv cannot change user here"
	else
		chmod o+x "$tmp"
		setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$tmp" ||
			other_user_why="user 65534 cannot reach the temporary directory $tmp (set TMPDIR)"
	fi
	[ -z "$other_user_why" ]
}

# staged PATH: where another user finds PATH, a program or module of the
# build (BUILD/src/PART/FILE): the same file in a copy of the build's
# programs and modules under $tmp/build (made on first use, readable by
# every user, $tmp made passable), so that a test runs another user's
# programs from any checkout location (a clone under /root is 0700) without
# loosening a home's permissions. The copy keeps the build's layout: the
# CLI finds the modules beside it there as it does in the build.
staged() {
	local real src
	real=$(realpath "$1")
	src=$(dirname "$(dirname "$real")")
	if [ ! -d "$tmp/build/src" ]; then
		mkdir -p "$tmp/build/src"
		(cd "$src" && find . -path '*.p' -prune -o \( -type f -o -type l \) \
			\( -name '*.so' -o -name '*.so.*' -o -perm -u+x \) -print0 |
			xargs -0 cp -P --parents -t "$tmp/build/src")
		chmod -R a+rX "$tmp/build"
		chmod o+x "$tmp"
	fi
	echo "$tmp/build/src/${real#"$src"/}"
}

finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
