#!/bin/bash
# Session service benchmark: TLS handshakes whose server key (ECDSA P-256
# on a fresh key store) signs through the session service -- openssl
# s_server with the PKCS#11 engine loading p11glue-client.so, connected
# to `p11glue service` as `p11glue setup` configures it by default --
# against the same key with p11glue-store.so loaded in s_server itself,
# in one run. bench/run-rpc.sh runs it last.
#
# Usage: bench/run-service.sh [BUILD_DIR] [SECONDS] [ROUNDS]
#   BUILD_DIR  a configured build directory (default: build); rebuilt first
#   SECONDS    time of each measurement (default: 3)
#   ROUNDS     measurements of each case (default: 3), alternating; the
#              medians are reported, and the median of the rounds' ratios
#              (each round's two measurements run back to back, so a
#              change in the machine's speed moves both)
#
# The client (bench/rpc/tls-handshakes.py) makes full handshakes (no
# session resumed, so every one has s_server sign a CertificateVerify)
# and verifies the certificate (s_server -www: stdin is not read). Runs in a private network namespace when
# it can (unshare --net), else on 127.0.0.1.
# shellcheck disable=SC2004
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
seconds=${2:-3}
rounds=${3:-3}

if [ -z "${P11GLUE_BENCH_NETNS:-}" ] && unshare --net true 2>/dev/null; then
	export P11GLUE_BENCH_NETNS=1
	exec unshare --net -- "$0" "$build" "$seconds" "$rounds"
fi
[ -n "${P11GLUE_BENCH_NETNS:-}" ] && ip link set lo up

engine_so=$(openssl version -e | sed -n 's/^ENGINESDIR: "\(.*\)"$/\1/p')/pkcs11.so
[ -f "$engine_so" ] || { echo "run-service: $engine_so is missing (libengine-pkcs11-openssl)" >&2; exit 1; }
ninja -C "$build" src/client/p11glue-client.so src/store/p11glue-store.so src/tools/p11glue >/dev/null
store=$build/src/store/p11glue-store.so
client=$build/src/client/p11glue-client.so
tool=$build/src/tools/p11glue
handshakes=$src/bench/rpc/tls-handshakes.py

tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-bench-service.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
export P11GLUE_STORE_DIR=$tmp/store
mkdir -p "$P11GLUE_STORE_DIR"
(umask 077 && echo 12345678 >"$tmp/so-pin" && echo 123456 >"$tmp/pin")
{
	"$tool" init-token --module "$store" --label bench --so-pin-source "$tmp/so-pin"
	"$tool" init-pin --module "$store" --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" \
		pkcs11:token=bench
	"$tool" generate-keypair --module "$store" --type ec:secp256r1 --label tls-key \
		"pkcs11:token=bench?pin-source=$tmp/pin"
} >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; exit 1; }
key="pkcs11:token=bench;object=tls-key;type=private?pin-value=123456"
PKCS11_MODULE_PATH=$store openssl req -new -x509 -engine pkcs11 -keyform engine -key "$key" \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost -days 2 -out "$tmp/cert.pem" \
	>>"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log" >&2; exit 1; }

# The session service, on a socket of its own; the client module finds it
# through P11GLUE_SERVER_ADDRESS and never starts one itself.
"$tool" service --module "$store" --socket "$tmp/service.sock" --pinentry none \
	>/dev/null 2>"$tmp/service.err" &
pids+=($!)
for _ in $(seq 100); do [ -S "$tmp/service.sock" ] && break; sleep 0.1; done
export P11GLUE_SERVER_ADDRESS=unix:path=$tmp/service.sock P11GLUE_AUTOSTART=0

port=$((20000 + RANDOM % 20000))
# s_server with the key through MODULE, for one measurement.
measure() {  # measure NAME MODULE
	local name=$1 module=$2 pid line
	: >"$tmp/server.out"
	PKCS11_MODULE_PATH=$module openssl s_server -engine pkcs11 -keyform engine -key "$key" \
		-cert "$tmp/cert.pem" -accept "127.0.0.1:$port" -www >"$tmp/server.out" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 600); do
		grep -q ACCEPT "$tmp/server.out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	line=$(timeout 300 python3 "$handshakes" "$port" "$tmp/cert.pem" "$seconds") || {
		echo "run-service: handshakes with $name failed:" >&2
		cat "$tmp/server.out" >&2
		kill "$pid"
		exit 1
	}
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	last=$(echo "$line" | awk '{print $6}')
	r[$name]+="$last "
}
declare -A r
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
ratios=
for _ in $(seq "$rounds"); do
	measure direct "$store"
	d=$last
	measure service "$client"
	ratios+="$(awk -v v="$last" -v d="$d" 'BEGIN { printf "%.3f", v / d }') "
done
d=$(echo "${r[direct]}" | tr ' ' '\n' | grep . | median)
v=$(echo "${r[service]}" | tr ' ' '\n' | grep . | median)
x=$(echo "$ratios" | tr ' ' '\n' | grep . | median | awk '{ printf "%.2f", $1 }')
echo "TLS 1.3 handshakes, s_server's ECDSA P-256 key on the key store ($seconds s each, median of $rounds;"
echo "us per handshake, lower is better):"
printf '  %-44s %10s us\n' "p11glue-store.so loaded in s_server" "$d" \
	"p11glue-client.so through p11glue service" "$v"
echo "  rounds' ratios (service/direct): $ratios"
echo "handshake through the service / store loaded directly, median of the rounds: ${x}x (<= 1.15):" \
	"$(awk -v x="$x" 'BEGIN { print (x <= 1.15) ? "met" : "MISSED" }')"
