# Shared by the shell tests of `p11glue setup` targets: tap.sh, a private
# home (HOME, XDG_CONFIG_HOME, P11GLUE_CONFIG, P11GLUE_STORE_DIR and
# GNUPGHOME all inside the test's temporary directory, so neither the
# real home nor /etc is touched) and helpers for comparing files.
#
# Source after setting p11glue (the CLI).
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

export HOME=$tmp/home
export XDG_CONFIG_HOME=$HOME/.config
export P11GLUE_CONFIG=$tmp/conf
export P11GLUE_STORE_DIR=$tmp/store
export GNUPGHOME=$tmp/gnupg
export XDG_DATA_HOME=$HOME/.local/share
export XDG_RUNTIME_DIR=$tmp/run
unset OPENSSL_CONF PKCS11_MODULE_PATH P11GLUE_SERVER_ADDRESS
mkdir -p "$HOME" "$P11GLUE_CONFIG" "$P11GLUE_STORE_DIR"
mkdir -m 700 "$XDG_RUNTIME_DIR"

store_module=$(realpath "$(dirname "$p11glue")/../store/p11glue-store.so")
trust_module=$(realpath "$(dirname "$p11glue")/../trust/p11glue-trust.so")
proxy_module=$(realpath "$(dirname "$p11glue")/../proxy/p11glue-proxy.so")
client_module=$(realpath "$(dirname "$p11glue")/../client/p11glue-client.so")

cli() { timeout 120 "$p11glue" "$@"; }
# A module built with sanitizers needs their runtimes loaded first in the
# programs that load it (modutil, certutil, openssl); their own leaks at
# exit are not the module's. client CMD... runs such a program, and
# client_cli runs p11glue for a target whose apply runs one (modutil).
san_libs=$(ldd "$store_module" 2>/dev/null |
	sed -n 's/^[[:space:]]*lib\(asan\|ubsan\|tsan\)\.so[^ ]* => \([^ ]*\).*/\2/p' | tr '\n' ':')
client_env=(env)
if [ -n "$san_libs" ]; then
	client_env=(env "LD_PRELOAD=${san_libs%:}"
		"ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0:verify_asan_link_order=0")
fi
client() { timeout 300 "${client_env[@]}" "$@"; }
client_cli() { client "$p11glue" "$@"; }
# has / lacks NAME TEXT PATTERN ($3 is a glob pattern on purpose).
# shellcheck disable=SC2254
has() { case $2 in $3) ok "$1" ;; *) not_ok "$1" "output: $2" "want pattern: $3" ;; esac; }
# shellcheck disable=SC2254
lacks() { case $2 in $3) not_ok "$1" "output: $2" "unwanted pattern: $3" ;; *) ok "$1" ;; esac; }
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi; }
status() { if [ "$rc" = "$2" ]; then ok "$1"; else not_ok "$1" "exit status $rc, want $2" "stdout: $out" "stderr: $err"; fi; }
# begin/end TARGET: the marker lines of a target's block.
begin() { printf "# >>> p11glue setup --%s: p11glue's lines, removed by --undo" "$1"; }
end() { printf '# <<< p11glue setup --%s' "$1"; }
# snapshot DIR...: every file below them with its mode and contents
# (a missing directory gives nothing).
snapshot() {
	local f
	find "$@" -type f 2>/dev/null | LC_ALL=C sort | while IFS= read -r f; do
		printf '== %s %s\n' "$f" "$(stat -c %a "$f")"
		cat "$f"
		printf '\n==\n'
	done
}
# secret FILE VALUE: a PIN file without a final newline.
secret() { (umask 077 && printf '%s' "$2" >"$1"); }
