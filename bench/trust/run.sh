#!/bin/bash
# bench/trust/run.sh BUILD: the trust module and command against Debian's
# p11-kit, in one run, on the system bundle and a synthetic bundle of
# 10,000 certificates. Prints instruction counts (callgrind), resident
# memory growth (median of 5) and wall and processor times (medians of 21
# runs; of 3 for the synthetic bundle, where p11-kit takes a minute a run)
# with ratios. Processor time is the steadier figure on a loaded machine.
#
# p11-kit's commands run in a private mount namespace that shows them
# only its trust module on the same paths (tests/trust/p11kit-run.sh);
# the timing loop runs inside it, so setting up the namespace is not
# counted against p11-kit.
set -euo pipefail
build=$(realpath "${1:-build}")
src=$(cd "$(dirname "$0")/../.." && pwd)
ours=$build/src/trust/p11glue-trust.so
theirs=/usr/lib/$(gcc -print-multiarch)/pkcs11/p11-kit-trust.so
dump=$build/tests/trust/dump-objects
p11glue=$build/src/tools/p11glue
timeit=$src/bench/trust/timeit.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

instr() { # MODULE PATHS: Ir of the first full enumeration (load + every attribute)
	valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$dump" --no-print "$1" "paths=$2" >/dev/null 2>&1
	callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
rss() { # MODULE PATHS: median growth of 5 runs
	for i in 1 2 3 4 5; do
		"$dump" --rss "$1" "paths=$2" 2>/dev/null | awk '/rss-growth-kib/ {print $2}'
	done | sort -n | sed -n 3p
}
ratio() { echo "scale=3; $1 / $2" | bc; }
times() { # WHAT "WALL CPU" "WALL CPU": ours, then p11-kit's
	set -- "$1" $2 $3
	echo "$1, wall (ms): p11glue $2, p11-kit $4, p11-kit/p11glue $(ratio "$4" "$2")"
	echo "$1, processor (ms): p11glue $3, p11-kit $5, p11-kit/p11glue $(ratio "$5" "$3")"
}

"$build/bench/trust/gen-bundle" 10000 "$work/synthetic.pem"
for bundle in /etc/ssl/certs/ca-certificates.crt "$work/synthetic.pem"; do
	n=$(grep -c 'BEGIN CERTIFICATE' "$bundle")
	echo "== $bundle ($n certificates)"
	runs=3
	if [ "$n" -lt 1000 ]; then
		# Under callgrind p11-kit needs minutes for the synthetic bundle.
		a=$(instr "$ours" "$bundle"); b=$(instr "$theirs" "$bundle")
		echo "first full enumeration, instructions: p11glue $a, p11-kit $b, ratio $(ratio "$a" "$b")"
		runs=21
	fi
	a=$(rss "$ours" "$bundle"); b=$(rss "$theirs" "$bundle")
	echo "resident memory growth (KiB): p11glue $a, p11-kit $b, ratio $(ratio "$a" "$b")"
	mkdir -p "$work/ours/modules"
	printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$ours" "$bundle" \
		>"$work/ours/modules/t.module"
	a=$(P11GLUE_CONFIG=$work/ours "$timeit" "$runs" "$p11glue" trust list)
	b=$("$src/tests/trust/p11kit-run.sh" "$bundle" "$timeit" "$runs" trust list)
	times "trust list" "$a" "$b"
	a=$(P11GLUE_CONFIG=$work/ours "$timeit" "$runs" "$p11glue" trust extract -f --format=pem-bundle "$work/o.pem")
	b=$("$src/tests/trust/p11kit-run.sh" "$bundle" "$timeit" "$runs" trust extract -f --format=pem-bundle "$work/t.pem")
	times "trust extract --format=pem-bundle" "$a" "$b"
done
