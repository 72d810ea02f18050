#!/bin/bash
# Key store benchmark: p11glue-store.so against `openssl speed` (the same
# libcrypto, no PKCS#11 in between) and Debian's SoftHSM2, in one run.
#
# Usage: bench/run-store.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#   BUILD_DIR  a configured build directory (default: build); rebuilt first
#   SECONDS    time of each timed measurement (default: 3)
#   ROUNDS     rounds of the timed measurements (default: 3); the rounds
#              alternate between openssl, the store and SoftHSM2 so that
#              drift in the machine's speed hits all alike, and the
#              median round is reported
# Environment: P11GLUE_STORE_MODULE, SOFTHSM2_MODULE override the modules.
#
# Measures (bench/store/bench-store.c says how): ECDSA P-256, RSA-2048
# and Ed25519 signatures per second, and (with valgrind) instructions per
# signature against libcrypto alone; AES-256-GCM over 1 MiB; C_CreateObject
# of a token object; C_FindObjects by label among 10,000 objects; resident
# memory with 10,000 objects; ECDSA signing from 2 threads against 1.
# Prints each figure, the ratios, and the targets of issue #6.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
seconds=${2:-3}
rounds=${3:-3}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
store=${P11GLUE_STORE_MODULE:-$build/src/store/p11glue-store.so}
softhsm=${SOFTHSM2_MODULE:-/usr/lib/$multiarch/softhsm/libsofthsm2.so}
bench=$build/bench/store/bench-store
libcrypto_bench=$build/bench/store/bench-libcrypto

[ -f "$softhsm" ] || { echo "run-store: $softhsm is missing (softhsm2)" >&2; exit 1; }
for c in pkcs11-tool openssl; do
	command -v "$c" >/dev/null || { echo "run-store: $c is missing" >&2; exit 1; }
done
ninja -C "$build" src/store/p11glue-store.so bench/store/bench-store bench/store/bench-libcrypto >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-bench-store.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pin=123456
export P11GLUE_STORE_DIR=$tmp/store SOFTHSM2_CONF=$tmp/softhsm2.conf
mkdir -p "$tmp/store" "$tmp/softhsm"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/softhsm" \
	>"$SOFTHSM2_CONF"
for m in "$store" "$softhsm"; do
	tool() { timeout 120 pkcs11-tool --module "$m" "$@" >/dev/null 2>&1; }
	tool --init-token --label bench --so-pin 12345678
	tool --token-label bench --init-pin --login --so-pin 12345678 --new-pin "$pin"
done

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== p11glue $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'), $(openssl version), softhsm2 $(dpkg-query -W -f='${Version}' softhsm2 2>/dev/null || echo '?')"
echo "== $seconds s per measurement, $rounds rounds, median reported"
echo

# ---------------------------------------------------------------------------
# Timed measurements, in alternating rounds
declare -A val
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
# openssl speed takes whole seconds.
ossl_seconds=$(awk -v s="$seconds" 'BEGIN { n = int(s + 0.5); print n < 1 ? 1 : n }')
openssl_round() {
	openssl speed -seconds "$ossl_seconds" ecdsap256 rsa2048 ed25519 2>/dev/null | awk '
		/^rsa 2048 bits/ { print "sign-rsa", $6 }
		/ecdsa \(nistp256\)/ { print "sign-ecdsa", $7 }
		/EdDSA \(Ed25519\)/ { print "sign-ed25519", $7 }'
	openssl speed -seconds "$ossl_seconds" -bytes 1048576 -evp aes-256-gcm 2>/dev/null |
		awk '/^AES-256-GCM/ { sub(/k$/, "", $2); print "aes-gcm", $2 / 1000 }'
}
module_round() {
	timeout 600 "$bench" "$1" bench "$pin" "$seconds" sign-ecdsa sign-rsa sign-ed25519 aes-gcm threads \
		2>>"$tmp/errors" | awk '$1 == "result" { print $2, $3 }'
}
for r in $(seq "$rounds"); do
	echo "round $r of $rounds ..." >&2
	while read -r k v; do echo "$v" >>"$tmp/openssl.$k"; done < <(openssl_round)
	while read -r k v; do echo "$v" >>"$tmp/store.$k"; done < <(module_round "$store")
	while read -r k v; do echo "$v" >>"$tmp/softhsm.$k"; done < <(module_round "$softhsm")
done
for t in openssl store softhsm; do
	for k in sign-ecdsa sign-rsa sign-ed25519 aes-gcm threads-1 threads-2; do
		val[$t.$k]=$(cat "$tmp/$t.$k" 2>/dev/null | median || true)
	done
done

# ---------------------------------------------------------------------------
# Instructions per signature under callgrind (the signing loop only): the
# same count on every run, where the rates above move by 10% from one run
# to the next on a shared machine. libcrypto alone (bench-libcrypto signs
# as `openssl speed` does) against the store and SoftHSM2. Kernel time is
# not counted, so SoftHSM2's file locking does not show here.
per_op() {  # per_op COMMAND...: instructions per signature, or "-"
	local out=$tmp/callgrind.out
	if ! timeout 600 valgrind --tool=callgrind --toggle-collect=sign_loop --callgrind-out-file="$out" \
		"$@" >"$tmp/vg.stdout" 2>"$tmp/vg.stderr"; then
		echo -
		return
	fi
	awk -v ir="$(awk '/Collected/ { print $4; exit }' "$tmp/vg.stderr")" \
		'$1 == "ops" && $3 > 0 && ir != "" { printf "%.0f", ir / $3; found = 1 } END { if (!found) print "-" }' \
		"$tmp/vg.stdout"
}
if command -v valgrind >/dev/null; then
	for k in sign-ecdsa sign-rsa sign-ed25519; do
		echo "callgrind: $k ..." >&2
		val[ir.libcrypto.$k]=$(per_op "$libcrypto_bench" "$k" 0.5)
		val[ir.store.$k]=$(per_op "$bench" "$store" bench "$pin" 0.5 "$k")
		val[ir.softhsm.$k]=$(per_op "$bench" "$softhsm" bench "$pin" 0.5 "$k")
	done
fi

# ---------------------------------------------------------------------------
# 10,000 token objects: creation, lookup, memory (one process each)
objects() {
	local name=$1 m=$2
	echo "$name: creating 10,000 token objects ..." >&2
	timeout 3600 "$bench" "$m" bench "$pin" "$seconds" create 2>>"$tmp/errors" |
		awk -v n="$name" '$1 == "result" { print n "." $2, $3 }'
	timeout 600 "$bench" "$m" bench "$pin" "$seconds" find 2>>"$tmp/errors" |
		awk -v n="$name" '$1 == "result" { print n "." $2, $3 }'
	timeout 600 "$bench" "$m" bench "$pin" "$seconds" rss 2>>"$tmp/errors" |
		awk -v n="$name" '$1 == "result" { print n "." $2, $3 }'
}
while read -r k v; do val[$k]=$v; done < <(objects store "$store"; objects softhsm "$softhsm")

# ---------------------------------------------------------------------------
# Report
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "unsupported" || b == "unsupported" || b == 0) print "-"; else printf "%.2f", a / b }'
}
verdict() { if [ "$1" = 1 ]; then echo "met"; else echo "MISSED"; fi; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a != "-" && a >= b) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a != "-" && a <= b) }'; }
v() { echo "${val[$1]:--}"; }

echo "== Throughput (median of $rounds rounds; higher is better)"
printf '%-28s %12s %12s %12s %10s %10s\n' "" "openssl" "p11glue" "SoftHSM2" "p11glue/" "p11glue/"
printf '%-28s %12s %12s %12s %10s %10s\n' "" "speed" "store" "2.6.1" "openssl" "SoftHSM2"
for k in sign-ecdsa sign-rsa sign-ed25519 aes-gcm; do
	case $k in
	sign-ecdsa) label="ECDSA P-256 sign/s" ;;
	sign-rsa) label="RSA-2048 sign/s" ;;
	sign-ed25519) label="Ed25519 sign/s" ;;
	aes-gcm) label="AES-256-GCM 1 MiB, MB/s" ;;
	esac
	printf '%-28s %12s %12s %12s %10s %10s\n' "$label" "$(v "openssl.$k")" "$(v "store.$k")" \
		"$(v "softhsm.$k")" "$(ratio "$(v "store.$k")" "$(v "openssl.$k")")" \
		"$(ratio "$(v "store.$k")" "$(v "softhsm.$k")")"
done
printf '%-28s %12s %12s %12s\n' "ECDSA sign/s, 1 thread" "" "$(v store.threads-1)" "$(v softhsm.threads-1)"
printf '%-28s %12s %12s %12s\n' "ECDSA sign/s, 2 threads" "" "$(v store.threads-2)" "$(v softhsm.threads-2)"
printf '%-28s %12s %12s %12s\n' "  2 threads / 1 thread" "" "$(ratio "$(v store.threads-2)" "$(v store.threads-1)")" \
	"$(ratio "$(v softhsm.threads-2)" "$(v softhsm.threads-1)")"
if command -v valgrind >/dev/null; then
	echo
	echo "== Instructions per signature (callgrind, the signing loop only; lower is better)"
	printf '%-28s %12s %12s %12s %10s %10s\n' "" "libcrypto" "p11glue" "SoftHSM2" "libcrypto/" "SoftHSM2/"
	printf '%-28s %12s %12s %12s %10s %10s\n' "" "alone" "store" "2.6.1" "p11glue" "p11glue"
	for k in sign-ecdsa sign-rsa sign-ed25519; do
		printf '%-28s %12s %12s %12s %10s %10s\n' "$k" "$(v "ir.libcrypto.$k")" "$(v "ir.store.$k")" \
			"$(v "ir.softhsm.$k")" "$(ratio "$(v "ir.libcrypto.$k")" "$(v "ir.store.$k")")" \
			"$(ratio "$(v "ir.softhsm.$k")" "$(v "ir.store.$k")")"
	done
fi
echo
echo "== 10,000 token objects (lower is better)"
printf '%-40s %12s %12s %10s\n' "" "p11glue" "SoftHSM2" "SoftHSM2/"
printf '%-40s %12s %12s %10s\n' "" "store" "2.6.1" "p11glue"
printf '%-40s %12s %12s %10s\n' "C_CreateObject (token), ms, first 100" "$(v store.create-first-100)" \
	"$(v softhsm.create-first-100)" "$(ratio "$(v softhsm.create-first-100)" "$(v store.create-first-100)")"
printf '%-40s %12s %12s %10s\n' "C_CreateObject (token), ms, all 10,000" "$(v store.create)" \
	"$(v softhsm.create)" "$(ratio "$(v softhsm.create)" "$(v store.create)")"
printf '%-40s %12s %12s %10s\n' "C_FindObjects by label, ms" "$(v store.find)" "$(v softhsm.find)" \
	"$(ratio "$(v softhsm.find)" "$(v store.find)")"
printf '%-40s %12s %12s %10s\n' "RSS of the process, MB" "$(v store.rss)" "$(v softhsm.rss)" \
	"$(ratio "$(v softhsm.rss)" "$(v store.rss)")"
[ "$(v softhsm.sign-ed25519)" = unsupported ] && echo "(SoftHSM2: no Ed25519 signing here: $(grep -m1 sign-ed25519 "$tmp/errors" || true))"
if [ -s "$tmp/errors" ]; then
	echo
	echo "== Messages"
	sort -u "$tmp/errors" | sed 's/^/  /'
fi

echo
echo "== Targets (issue #6)"
for k in sign-ecdsa sign-rsa sign-ed25519; do
	ro=$(ratio "$(v "store.$k")" "$(v "openssl.$k")")
	rs=$(ratio "$(v "store.$k")" "$(v "softhsm.$k")")
	echo "$k >= 0.9x openssl speed: ${ro}x: $(verdict "$(ge "$ro" 0.9)");" \
		"2x SoftHSM2: ${rs}x: $( [ "$rs" = - ] && echo "no SoftHSM2 figure" || verdict "$(ge "$rs" 2)")"
done
ro=$(ratio "$(v store.aes-gcm)" "$(v openssl.aes-gcm)")
echo "AES-256-GCM 1 MiB >= 0.8x openssl speed: ${ro}x: $(verdict "$(ge "$ro" 0.8)")"
echo "C_FindObjects by label < 0.1 ms: $(v store.find) ms: $(verdict "$(le "$(v store.find)" 0.1)")"
echo "C_CreateObject of a token object < 1 ms: $(v store.create) ms: $(verdict "$(le "$(v store.create)" 1)")"
echo "RSS with 10,000 objects < 20 MB: $(v store.rss) MB: $(verdict "$(le "$(v store.rss)" 20)")"
rt=$(ratio "$(v store.threads-2)" "$(v store.threads-1)")
echo "2 threads >= 1.9x 1 thread: ${rt}x: $(verdict "$(ge "$rt" 1.9)") ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
