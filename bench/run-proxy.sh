#!/bin/bash
# Proxy benchmark: SoftHSM2 called directly, through p11glue-proxy.so and
# through p11-kit's proxy, against one temporary token, in one run.
#
# Usage: bench/run-proxy.sh [BUILD_DIR] [SECONDS]
#   BUILD_DIR  a configured build directory (default: build); rebuilt first
#   SECONDS    time budget of the timed part (default: 12)
# Environment: P11GLUE_PROXY, P11KIT_PROXY, SOFTHSM2_MODULE override the
# module paths (P11GLUE_PROXY: to measure a patched proxy built elsewhere).
#
# p11-kit reads only /usr/share/p11-kit/modules and /etc/pkcs11 as root,
# so everything runs in a private mount namespace where a temporary
# modules directory holding only softhsm2 is bind-mounted over them;
# p11glue gets the same registry through P11GLUE_CONFIG.
#
# Prints (1) timed ops/s and ratios from bench-proxy, (2) instructions
# per operation counted by callgrind (exact, unlike the timings of a
# 45 us signature), (3) instructions for dlopen + C_GetFunctionList +
# C_Initialize + C_Finalize of each module, and (4) the issue's targets.
# ${} in arithmetic: keys of associative arrays hold dots and dashes.
# shellcheck disable=SC2004,SC2016
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
seconds=${2:-12}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
softhsm=${SOFTHSM2_MODULE:-/usr/lib/$multiarch/softhsm/libsofthsm2.so}
p11kit=${P11KIT_PROXY:-/usr/lib/$multiarch/p11-kit-proxy.so}
ours=${P11GLUE_PROXY:-$build/src/proxy/p11glue-proxy.so}
bench=$build/bench/proxy/bench-proxy
load=$build/bench/proxy/bench-load

for f in "$softhsm" "$p11kit"; do
	[ -f "$f" ] || { echo "run-proxy: $f is missing (softhsm2, p11-kit-modules)" >&2; exit 1; }
done
for c in pkcs11-tool valgrind callgrind_annotate unshare; do
	command -v "$c" >/dev/null || { echo "run-proxy: $c is missing" >&2; exit 1; }
done

ninja -C "$build" src/proxy/p11glue-proxy.so bench/proxy/bench-proxy bench/proxy/bench-load >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tokens" "$tmp/conf/modules" "$tmp/empty"
: >"$tmp/empty.conf"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/tokens" \
	>"$tmp/softhsm2.conf"
printf 'module: %s\n' "$softhsm" >"$tmp/conf/modules/softhsm2.module"
export SOFTHSM2_CONF=$tmp/softhsm2.conf
export P11GLUE_CONFIG=$tmp/conf

# The token: one EC P-256 key pair.
pin=123456
tool() { timeout 60 pkcs11-tool --module "$softhsm" "$@" >/dev/null 2>&1; }
tool --init-token --label bench --so-pin 12345678
tool --token-label bench --init-pin --login --so-pin 12345678 --new-pin "$pin"
tool --token-label bench --login --pin "$pin" --keypairgen --key-type EC:prime256v1 --id 01 --label bench-key

# in_ns CMD...: CMD where p11-kit sees only $tmp/conf/modules.
if [ "$(id -u)" = 0 ]; then ns=(unshare --mount); else ns=(unshare --user --map-root-user --mount); fi
in_ns() {
	"${ns[@]}" -- /bin/sh -c '
		mount --make-rprivate / &&
		mount --bind "$1/conf/modules" /usr/share/p11-kit/modules || exit 97
		if [ -d /etc/pkcs11/modules ]; then mount --bind "$1/empty" /etc/pkcs11/modules || exit 97; fi
		if [ -f /etc/pkcs11/pkcs11.conf ]; then mount --bind "$1/empty.conf" /etc/pkcs11/pkcs11.conf || exit 97; fi
		shift
		exec "$@"' ns "$tmp" "$@"
}

targets=("direct=$softhsm" "p11glue=$ours" "p11-kit=$p11kit")
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== p11glue $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'), $(dpkg-query -W -f='p11-kit ${Version}, softhsm2 ' p11-kit-modules 2>/dev/null)$(dpkg-query -W -f='${Version}' softhsm2 2>/dev/null)"
echo
echo "== 1. Timed: $bench --time $seconds --rounds 15 bench $pin bench-key ${targets[*]}"
in_ns timeout 600 "$bench" --time "$seconds" --rounds 15 bench "$pin" bench-key "${targets[@]}" |
	tee "$tmp/timed.txt"

# Instructions per operation: one target at a time under callgrind, only
# the ir_* functions collected (set-up excluded); SoftHSM itself is always
# loaded and initialized first, as in the timed run.
n=200
echo
echo "== 2. Instructions per operation (callgrind, $n calls each, set-up excluded)"
declare -A ir inmod fwd
for t in "${targets[@]}"; do
	name=${t%%=*}
	in_ns valgrind --tool=callgrind --callgrind-out-file="$tmp/ops.$name" \
		--toggle-collect=ir_slotlist --toggle-collect=ir_sign --toggle-collect=ir_sessioninfo \
		"$bench" --ir "$n" bench "$pin" bench-key "${targets[0]}" "$t" >/dev/null 2>"$tmp/valgrind.log" ||
		{ cat "$tmp/valgrind.log" >&2; exit 1; }
	callgrind_annotate --inclusive=yes --threshold=100 "$tmp/ops.$name" >"$tmp/ops.$name.txt"
	while read -r count op; do
		ir[$name.$op]=${count//,/}
	done < <(sed -n 's/^ *\([0-9,]*\) .*:ir_\([a-z]*\) .*/\1 \2/p' "$tmp/ops.$name.txt")
	# Inclusive cost of SoftHSM's own entry points: what remains is the
	# caller's loop plus the proxy's forwarding.
	while read -r count fn; do
		case $fn in
		C_GetSlotList) op=slotlist ;;
		C_SignInit | C_Sign) op=sign ;;
		C_GetSessionInfo) op=sessioninfo ;;
		*) continue ;;
		esac
		inmod[$name.$op]=$((${inmod[$name.$op]:-0} + ${count//,/}))
	done < <(sed -n 's/^ *\([0-9,]*\) .*???:\(C_[A-Za-z]*\) \[.*libsofthsm2[^ ]*\]$/\1 \2/p' "$tmp/ops.$name.txt")
done
printf '%-12s %-9s %14s %14s %14s\n' operation target "Ir/op" "Ir/op outside" "forwarding"
printf '%-12s %-9s %14s %14s %14s\n' "" "" "" "the module" "Ir/op"
for op in slotlist sign sessioninfo; do
	base=$(((${ir[direct.$op]} - ${inmod[direct.$op]:-0}) / n))
	for t in "${targets[@]}"; do
		name=${t%%=*}
		key=$name.$op
		total=$((${ir[$key]} / n))
		outside=$(((${ir[$key]} - ${inmod[$key]:-0}) / n))
		fwd[$key]=$((outside - base))
		printf '%-12s %-9s %14d %14d %14d\n' "$op" "$name" "$total" "$outside" "${fwd[$key]}"
	done
done

# Load + initialize + finalize, counted from dlopen on.
echo
echo "== 3. dlopen + C_GetFunctionList + C_Initialize + C_Finalize (callgrind, Ir)"
declare -A load_ir
for t in "${targets[@]}"; do
	name=${t%%=*}
	in_ns valgrind --tool=callgrind --callgrind-out-file="$tmp/load.$name" \
		--toggle-collect=load_init_finalize "$load" "${t#*=}" >/dev/null 2>"$tmp/valgrind.log" ||
		{ cat "$tmp/valgrind.log" >&2; exit 1; }
	load_ir[$name]=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p;s/^summary: *\([0-9]*\).*/\1/p' "$tmp/load.$name" | head -n1)
	printf '%-10s %14d Ir\n' "$name" "${load_ir[$name]}"
done
printf 'p11glue/p11-kit = %s; over the module itself: p11glue %+d, p11-kit %+d Ir\n' \
	"$(awk -v a="${load_ir[p11glue]}" -v b="${load_ir[p11-kit]}" 'BEGIN { printf "%.3f", a / b }')" \
	$((${load_ir[p11glue]} - ${load_ir[direct]})) $((${load_ir[p11-kit]} - ${load_ir[direct]}))

# The issue's targets: C_GetSlotList on time, the others on instruction
# counts (repeatable; a 45 us signature hides a few hundred instructions).
echo
echo "== 4. Targets"
verdict() { if [ "$1" = 1 ]; then echo "met"; else echo "MISSED"; fi; }
sl=$(awk -v g="${ir[p11glue.slotlist]}" -v d="${ir[direct.slotlist]}" 'BEGIN { printf "%.2f", g / d }')
slt=$(sed -n 's/^ *slotlist *p11glue\/direct = \([0-9.]*\),.*/\1/p' "$tmp/timed.txt")
# Timed, as the issue states it; SoftHSM's own call is dominated by a
# getpid system call, so the instruction ratio (shown too) overstates it.
echo "C_GetSlotList through p11glue <= 1.5x direct: ${slt}x timed (${sl}x in instructions):" \
	"$(verdict "$(awk -v r="$slt" 'BEGIN { print (r <= 1.5) }')")"
ga=${fwd[p11glue.sign]} ka=${fwd[p11-kit.sign]}
echo "forwarded C_SignInit+C_Sign adds no more than p11-kit's: p11glue +$ga, p11-kit +$ka Ir/op" \
	"(outside SoftHSM): $(verdict $((ga <= ka)))"
echo "load+init fewer instructions than p11-kit's: ${load_ir[p11glue]} vs ${load_ir[p11-kit]}: $(verdict $((${load_ir[p11glue]} < ${load_ir[p11-kit]})))"
