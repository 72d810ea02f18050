#!/bin/bash
# bench/trust/run.sh BUILD: the trust module and command against Debian's
# p11-kit, in one run, on the system bundle and a synthetic bundle of
# 10,000 certificates. Prints instruction counts (callgrind), resident
# memory growth, and wall times (median of 5) with ratios.
set -euo pipefail
build=$(realpath "${1:-build}")
src=$(cd "$(dirname "$0")/../.." && pwd)
ours=$build/src/trust/p11glue-trust.so
theirs=/usr/lib/$(gcc -print-multiarch)/pkcs11/p11-kit-trust.so
dump=$build/tests/trust/dump-objects
p11glue=$build/src/tools/p11glue
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

instr() { # MODULE PATHS: Ir of the first full enumeration (load + every attribute)
	valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$dump" --no-print "$1" "paths=$2" >/dev/null 2>&1
	callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
rss() { "$dump" --rss "$1" "paths=$2" 2>/dev/null | awk '/rss-growth-kib/ {print $2}'; }
median() { # CMD...: median wall seconds of 5 runs
	for i in 1 2 3 4 5; do
		/usr/bin/time -f %e "$@" >/dev/null 2>>"$work/t.$$" || true
	done
	sort -n "$work/t.$$" | sed -n 3p
	rm -f "$work/t.$$"
}
conf() { # PATHS: registry directories for both commands
	mkdir -p "$work/ours/modules" "$work/theirs"
	printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$ours" "$1" >"$work/ours/modules/t.module"
}

"$build/bench/trust/gen-bundle" 10000 "$work/synthetic.pem"
for bundle in /etc/ssl/certs/ca-certificates.crt "$work/synthetic.pem"; do
	n=$(grep -c 'BEGIN CERTIFICATE' "$bundle")
	echo "== $bundle ($n certificates)"
	if [ "$n" -lt 1000 ]; then
		# Under callgrind p11-kit needs minutes for the synthetic bundle.
		a=$(instr "$ours" "$bundle"); b=$(instr "$theirs" "$bundle")
		echo "first full enumeration, instructions: p11glue $a, p11-kit $b, ratio $(echo "scale=3; $a / $b" | bc)"
	fi
	a=$(rss "$ours" "$bundle"); b=$(rss "$theirs" "$bundle")
	echo "resident memory growth (KiB): p11glue $a, p11-kit $b, ratio $(echo "scale=3; $a / $b" | bc)"
	conf "$bundle"
	a=$(P11GLUE_CONFIG=$work/ours median "$p11glue" trust extract -f --format=pem-bundle "$work/o.pem")
	b=$(median "$src/tests/trust/p11kit-run.sh" "$bundle" trust extract -f --format=pem-bundle "$work/t.pem")
	echo "trust extract --format=pem-bundle (s): p11glue $a, p11-kit $b"
	a=$(P11GLUE_CONFIG=$work/ours median "$p11glue" trust list)
	b=$(median "$src/tests/trust/p11kit-run.sh" "$bundle" trust list)
	echo "trust list (s): p11glue $a, p11-kit $b"
done
