#!/bin/bash
# `p11glue adopt` of many OpenSSH keys (issue 16: 100 keys in under 5 s),
# against the same keys brought in one `p11glue import` each, in one run:
# a throwaway HOME whose ~/.ssh holds N keys (Ed25519, ECDSA P-256 and
# RSA-2048 in turn, none encrypted: a passphrase costs the user's time
# and bcrypt_pbkdf's, not adopt's), a fresh store token for each way,
# then a second adopt, which finds every key there.
#
# Usage: bench/run-adopt.sh [BUILD_DIR] [N]
#   BUILD_DIR  a configured build directory (default: build); rebuilt first
#   N          how many keys (default: 100)
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
n=${2:-100}
p11glue=$build/src/tools/p11glue
store=$build/src/store/p11glue-store.so
ninja -C "$build" src/tools/p11glue src/store/p11glue-store.so >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-bench-adopt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp/home P11GLUE_CONFIG=$tmp/registry
unset GNUPGHOME XDG_DATA_HOME
mkdir -p "$HOME/.ssh" "$P11GLUE_CONFIG/modules"
printf 'module: %s\n' "$store" >"$P11GLUE_CONFIG/modules/p11glue-store.module"
(umask 077 && printf '12345678' >"$tmp/so" && printf '87654321' >"$tmp/pin")
types=("-t ed25519" "-t ecdsa -b 256" "-t rsa -b 2048")
for i in $(seq "$n"); do
	# shellcheck disable=SC2086
	ssh-keygen -q ${types[$((i % 3))]} -N '' -C "key$i@bench" -f "$HOME/.ssh/key$i"
done

# fresh_store DIR: an initialized token in DIR.
fresh_store() {
	export P11GLUE_STORE_DIR=$1
	mkdir -p "$1"
	"$p11glue" init-token --label bench --so-pin-source "$tmp/so" >/dev/null
	"$p11glue" init-pin --so-pin-source "$tmp/so" --new-pin-source "$tmp/pin" \
		pkcs11:token=bench >/dev/null
}
now() { date +%s.%N; }
elapsed() { python3 -c "print('%.2f' % ($2 - $1))"; }

fresh_store "$tmp/store-import"
t0=$(now)
for i in $(seq "$n"); do
	"$p11glue" import --pin-source "$tmp/pin" "$HOME/.ssh/key$i" pkcs11:token=bench >/dev/null 2>&1
done
t_import=$(elapsed "$t0" "$(now)")

fresh_store "$tmp/store-adopt"
t0=$(now)
"$p11glue" adopt --pin-source "$tmp/pin" >"$tmp/adopt.out" 2>/dev/null
t_adopt=$(elapsed "$t0" "$(now)")
adopted=$(grep -c '^adopted: ssh:' "$tmp/adopt.out")
t0=$(now)
"$p11glue" adopt --pin-source "$tmp/pin" >"$tmp/again.out" 2>/dev/null
t_again=$(elapsed "$t0" "$(now)")
there=$(grep -c '^already there: ssh:' "$tmp/again.out")

echo "keys: $n (adopted $adopted; found again $there)"
echo "adopt:                   $t_adopt s (issue 16: under 5 s for 100 keys)"
echo "one import per key:      $t_import s"
echo "second adopt (no change): $t_again s"
python3 -c "print('adopt / imports: %.2f' % ($t_adopt / $t_import))"
