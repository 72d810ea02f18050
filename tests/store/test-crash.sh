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
# Kill after 1 to $window ms: lands in C_Initialize, C_Login (about 10 ms
# of KDF here) and the writes that follow. On a slow or loaded machine
# (sanitizer builds, parallel tests) a child may not reach its writes in
# that time: while nothing has been logged, every 20 rounds the window
# doubles (up to 2 s), so the kills still land in the writes.
window=60
for ((i = 0; i < kills; i++)); do
	if ((i > 0 && i % 20 == 0 && window < 2000)) && [ ! -s "$work/log" ]; then
		window=$((window * 2))
	fi
	"$prog" child "$work/store" "$work/log" &
	pid=$!
	delay=$((RANDOM % window + 1))
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
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
echo "# $kills kills in $((SECONDS - start)) s (last window $window ms)"
exec "$prog" verify "$work/store" "$work/log"
