#!/bin/bash
# RPC benchmark: one SoftHSM2 token served by `p11glue server` (through
# p11glue-client.so) and by Debian's `p11-kit server` (through
# p11-kit-client.so), plus SoftHSM2 called directly and a raw socket-pair
# round trip (the floor), in one run.
#
# Usage: bench/run-rpc.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#   BUILD_DIR  a configured build directory (default: build); rebuilt first
#   SECONDS    time of each measurement (default: 3)
#   ROUNDS     measurements of each case (default: 3), p11glue and p11-kit
#              alternating; the median is reported
#
# Measures calls per second of C_GetSessionInfo ("info") and of ECDSA
# P-256 C_SignInit+C_Sign ("sign") with 1, 4 and 8 client processes and
# with 8 threads in one process; prints them, the ratios p11glue/p11-kit,
# and the issue's targets.
#
# Then one client pinned with taskset against servers pinned to CPU 0:
# the client on CPU 0 too (both share one processor) and on CPU 1 (each
# has its own), for `p11glue server`, `p11glue service` (serving the same
# SoftHSM2 token) and `p11-kit server`, rounds alternating between them;
# prints the median time per call and the ratios of p11glue's time to
# p11-kit's. Last, bench/run-service.sh: TLS handshakes signed through
# the session service against the key store loaded directly.
# shellcheck disable=SC2004
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
seconds=${2:-3}
rounds=${3:-3}
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
softhsm=${SOFTHSM2_MODULE:-/usr/lib/$multiarch/softhsm/libsofthsm2.so}
p11kit_client=/usr/lib/$multiarch/pkcs11/p11-kit-client.so
ours=$build/src/client/p11glue-client.so
tool=$build/src/tools/p11glue
bench=$build/bench/rpc/bench-rpc

for f in "$softhsm" "$p11kit_client"; do
	[ -f "$f" ] || { echo "run-rpc: $f is missing (softhsm2, p11-kit-modules)" >&2; exit 1; }
done
command -v p11-kit >/dev/null || { echo "run-rpc: p11-kit is missing" >&2; exit 1; }
ninja -C "$build" src/client/p11glue-client.so src/tools/p11glue bench/rpc/bench-rpc >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-bench.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/tokens" \
	>"$tmp/softhsm2.conf"
export SOFTHSM2_CONF=$tmp/softhsm2.conf
pin=123456
pk() { timeout 60 pkcs11-tool --module "$softhsm" "$@" >/dev/null 2>&1; }
pk --init-token --label bench --so-pin 12345678
pk --token-label bench --init-pin --login --so-pin 12345678 --new-pin "$pin"
pk --token-label bench --login --pin "$pin" --keypairgen --key-type EC:prime256v1 --id 01 --label bench-key

# The two servers, each in the foreground, stopped by PID at the end.
"$tool" server --foreground --provider "$softhsm" --socket "$tmp/p11glue.sock" >/dev/null &
pids+=($!)
p11-kit server --foreground --provider "$softhsm" --name "$tmp/p11kit.sock" "pkcs11:token=bench" \
	>/dev/null 2>"$tmp/p11kit.err" &
pids+=($!)
for _ in $(seq 100); do
	[ -S "$tmp/p11glue.sock" ] && [ -S "$tmp/p11kit.sock" ] && break
	sleep 0.1
done
export P11GLUE_SERVER_ADDRESS=unix:path=$tmp/p11glue.sock
export P11_KIT_SERVER_ADDRESS=unix:path=$tmp/p11kit.sock
export P11GLUE_AUTOSTART=0

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== p11glue $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'), $(dpkg-query -W -f='p11-kit ${Version}, softhsm2 ' p11-kit 2>/dev/null)$(dpkg-query -W -f='${Version}' softhsm2 2>/dev/null)"
echo "== build $build"
echo "== $seconds s per measurement, median of $rounds; ops/s summed over all clients"
echo

declare -A r
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
measure() {  # measure NAME MODULE OP ARGS...: one more sample
	local name=$1 module=$2 op=$3 line
	shift 3
	line=$(timeout 300 "$bench" "$@" --time "$seconds" "$op" "$module" bench "$pin" bench-key)
	r[$name.$op.$*]+="$(echo "$line" | awk '{print $2}') "
}
# The median of the samples of a case.
med() { echo "${r[$1]}" | tr ' ' '\n' | grep . | median; }
line=$("$bench" --floor --time "$seconds")
floor_ops=$(echo "$line" | awk '{print $2}')
floor_us=$(echo "$line" | awk '{print $4}')
printf '%-34s %12s %12s\n' "raw socket pair round trip" "$floor_ops/s" "$floor_us us"
# Eight pairs at once: what the machine's kernel allows eight clients
# that do nothing but round trips (every RPC stands on it).
floor8_ops=$("$bench" --floor --procs 8 --time "$seconds" | awk '{print $2}')
printf '%-34s %12s\n' "8 raw socket pairs at once" "$floor8_ops/s"
echo

configs=("--procs 1" "--procs 4" "--procs 8" "--threads 8")
printf '%-6s %-12s %14s %14s %14s %10s\n' op clients direct p11glue p11-kit "p11glue/p11-kit"
for op in info sign; do
	for c in "${configs[@]}"; do
		# shellcheck disable=SC2086
		measure direct "$softhsm" "$op" $c
		for _ in $(seq "$rounds"); do
			# shellcheck disable=SC2086
			measure p11glue "$ours" "$op" $c
			# shellcheck disable=SC2086
			measure p11-kit "$p11kit_client" "$op" $c
		done
		for n in direct p11glue p11-kit; do r[$n.$op.$c]=$(med "$n.$op.$c"); done
		d=${r[direct.$op.$c]} g=${r[p11glue.$op.$c]} k=${r[p11-kit.$op.$c]}
		printf '%-6s %-12s %14s %14s %14s %10s\n' "$op" "${c#--}" "$d" "$g" "$k" \
			"$(awk -v g="$g" -v k="$k" 'BEGIN { printf "%.2fx", g / k }')"
	done
done

# CPU time the server spends per call (its worker processes, one client,
# C_GetSessionInfo), sampled from /proc while the client runs: less
# sensitive to what else the machine is doing than the rates above.
hz=$(getconf CLK_TCK)
worker_ticks() {  # the summed utime+stime of the children of server PID $1
	local t=0 c f
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		f=$(cut -d' ' -f14,15 /proc/"$c"/stat 2>/dev/null) || continue
		t=$((t + ${f% *} + ${f#* }))
	done
	echo "$t"
}
cpu_per_call() {  # cpu_per_call MODULE SERVER_PID
	local t1 t2 span line
	span=$(awk -v s="$seconds" 'BEGIN { print (s > 2 ? s - 1.5 : s / 2) }')
	"$bench" --time "$seconds" info "$1" bench "$pin" bench-key >"$tmp/cpu.out" &
	local b=$!
	sleep 1
	t1=$(worker_ticks "$2")
	sleep "$span"
	t2=$(worker_ticks "$2")
	wait "$b"
	line=$(cat "$tmp/cpu.out")
	awk -v d=$((t2 - t1)) -v hz="$hz" -v ops="$(echo "$line" | awk '{print $2}')" -v s="$span" \
		'BEGIN { printf "%.2f", d / hz * 1e6 / (ops * s) }'
}
echo
cg=$(cpu_per_call "$ours" "${pids[0]}")
ck=$(cpu_per_call "$p11kit_client" "${pids[1]}")
echo "server CPU per C_GetSessionInfo (1 client): p11glue $cg us, p11-kit $ck us"

# ---------------------------------------------------------------------------
# One client, pinned: servers on CPU 0, the client on CPU 0 or CPU 1.
taskset -c 0 "$tool" server --foreground --provider "$softhsm" --socket "$tmp/pin-server.sock" \
	>/dev/null &
pids+=($!)
taskset -c 0 "$tool" service --module "$softhsm" --socket "$tmp/pin-service.sock" --pinentry none \
	>/dev/null 2>"$tmp/service.err" &
pids+=($!)
taskset -c 0 p11-kit server --foreground --provider "$softhsm" --name "$tmp/pin-p11kit.sock" \
	"pkcs11:token=bench" >/dev/null 2>>"$tmp/p11kit.err" &
pids+=($!)
for _ in $(seq 100); do
	[ -S "$tmp/pin-server.sock" ] && [ -S "$tmp/pin-service.sock" ] && [ -S "$tmp/pin-p11kit.sock" ] &&
		break
	sleep 0.1
done
pinned() {  # pinned NAME CPU OP: one more sample of the time per call (us)
	local name=$1 cpu=$2 op=$3 module=$ours line
	case $name in
	server) export P11GLUE_SERVER_ADDRESS=unix:path=$tmp/pin-server.sock ;;
	service) export P11GLUE_SERVER_ADDRESS=unix:path=$tmp/pin-service.sock ;;
	p11-kit)
		export P11_KIT_SERVER_ADDRESS=unix:path=$tmp/pin-p11kit.sock
		module=$p11kit_client
		;;
	esac
	line=$(timeout 300 taskset -c "$cpu" "$bench" --time "$seconds" "$op" "$module" bench "$pin" bench-key)
	r[pin.$name.$cpu.$op]+="$(echo "$line" | awk '{print $4}') "
}
echo
echo "One client pinned: servers on CPU 0 (taskset -c 0), the client on CPU 0 (same CPU)"
echo "or CPU 1 (other CPU); median us per call, lower is better; ratio = p11glue time /"
echo "p11-kit time (below 1: p11glue is faster)"
printf '%-6s %-10s %14s %14s %14s %15s %16s\n' op client p11glue-server p11glue-service \
	p11-kit server/p11-kit service/p11-kit
for op in info sign; do
	for cpu in 0 1; do
		for _ in $(seq "$rounds"); do
			for n in server service p11-kit; do pinned "$n" "$cpu" "$op"; done
		done
		for n in server service p11-kit; do r[pin.$n.$cpu.$op]=$(med "pin.$n.$cpu.$op"); done
		gs=${r[pin.server.$cpu.$op]} gv=${r[pin.service.$cpu.$op]} k=${r[pin.p11-kit.$cpu.$op]}
		printf '%-6s %-10s %14s %14s %14s %15s %16s\n' "$op" \
			"$([ "$cpu" = 0 ] && echo "same CPU" || echo "other CPU")" "$gs" "$gv" "$k" \
			"$(awk -v g="$gs" -v k="$k" 'BEGIN { printf "%.2fx", g / k }')" \
			"$(awk -v g="$gv" -v k="$k" 'BEGIN { printf "%.2fx", g / k }')"
	done
done
export P11GLUE_SERVER_ADDRESS=unix:path=$tmp/p11glue.sock
export P11_KIT_SERVER_ADDRESS=unix:path=$tmp/p11kit.sock

echo
echo "== Targets"
verdict() { if [ "$1" = 1 ]; then echo "met"; else echo "MISSED"; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for op in info sign; do
	x=$(ratio "${r[p11glue.$op.--procs 8]}" "${r[p11-kit.$op.--procs 8]}")
	echo "$op, 8 processes: p11glue/p11-kit ${x}x (>= 2): $(verdict "$(awk -v x="$x" 'BEGIN { print (x >= 2) }')")"
	if [ "$op" = info ]; then
		echo "  (8 raw socket pairs reach $(ratio "$floor8_ops" "${r[p11-kit.info.--procs 8]}")x p11-kit's rate here: no protocol of round trips passes that)"
	fi
	x=$(ratio "${r[p11glue.$op.--threads 8]}" "${r[p11-kit.$op.--threads 8]}")
	echo "$op, 8 threads in one process: p11glue/p11-kit ${x}x (>= 3): $(verdict "$(awk -v x="$x" 'BEGIN { print (x >= 3) }')")"
	x=$(ratio "${r[p11glue.$op.--procs 1]}" "${r[p11-kit.$op.--procs 1]}")
	echo "$op, 1 client: p11glue/p11-kit ${x}x (>= 1): $(verdict "$(awk -v x="$x" 'BEGIN { print (x >= 1) }')")"
done
us=$(awk -v o="${r[p11glue.info.--procs 1]}" 'BEGIN { printf "%.2f", 1e6 / o }')
x=$(awk -v u="$us" -v f="$floor_us" 'BEGIN { printf "%.2f", u / f }')
echo "C_GetSessionInfo through p11glue ${us} us vs socket pair floor ${floor_us} us: ${x}x (<= 1.2): $(verdict "$(awk -v x="$x" 'BEGIN { print (x <= 1.2) }')")"
x=$(ratio "${r[p11glue.sign.--procs 1]}" "${r[direct.sign.--procs 1]}")
echo "ECDSA sign, 1 client, p11glue/direct: ${x}x"
x=$(ratio "${r[p11-kit.sign.--procs 1]}" "${r[direct.sign.--procs 1]}")
echo "ECDSA sign, 1 client, p11-kit/direct: ${x}x"
for cpu in 0 1; do
	where=$([ "$cpu" = 0 ] && echo "same CPU" || echo "other CPU")
	for n in server service; do
		x=$(ratio "${r[pin.$n.$cpu.info]}" "${r[pin.p11-kit.$cpu.info]}")
		echo "info, 1 client pinned ($where), p11glue $n time/p11-kit time: ${x}x (<= 1):" \
			"$(verdict "$(awk -v x="$x" 'BEGIN { print (x <= 1) }')")"
	done
done

# TLS handshakes signed through the session service against the store
# loaded directly.
echo
"$src/bench/run-service.sh" "$build" "$seconds" "$rounds"
