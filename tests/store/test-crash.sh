#!/bin/bash
# Crash safety: a process that loops over C_Initialize, C_Login,
# C_CreateObject and C_GenerateKeyPair is killed (SIGKILL) at random
# moments, again and again; afterwards everything it was told was
# created is there and usable, nothing is half-written, and the token
# opens and passes an integrity check (store-crash verify, TAP).
#   test-crash.sh STORE-CRASH-PROGRAM [KILLS]
set -u
prog=$1
kills=${2:-200}
work=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-crash.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! "$prog" init "$work/store"; then
	echo "1..1"
	echo "not ok 1 crash/init - cannot make the token"
	exit 1
fi
start=$SECONDS
for ((i = 0; i < kills; i++)); do
	"$prog" child "$work/store" "$work/log" &
	pid=$!
	# 1-60 ms: lands in C_Initialize, C_Login (about 10 ms of KDF here)
	# and the writes that follow.
	sleep "0.0$(printf '%02d' $((RANDOM % 60 + 1)))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	status=$?
	# 137: killed, as intended; anything else means the child failed.
	if [ "$status" -ne 137 ]; then
		echo "1..1"
		echo "not ok 1 crash/loop - the child exited with $status on round $i"
		exit 1
	fi
done
echo "# $kills kills in $((SECONDS - start)) s"
exec "$prog" verify "$work/store" "$work/log"
