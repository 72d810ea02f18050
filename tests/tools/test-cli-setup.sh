#!/bin/bash
# p11glue setup and p11glue status, the gnupg target, in a temporary
# GNUPGHOME: what --dry-run prints is what the run then does, a second
# run changes nothing, the user's own lines survive every step, --undo
# removes exactly p11glue's lines, and conflicting lines of the user's
# stop the target without a change. No gpg-agent is started here (see
# tests/interop/test-gnupg.sh).
#
# Usage: test-cli-setup.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/tap.sh"

cli() { timeout 60 "$p11glue" "$@"; }
has() { case $2 in $3) ok "$1" ;; *) not_ok "$1" "output: $2" "want pattern: $3" ;; esac; }
same() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi; }
status() { if [ "$rc" = "$2" ]; then ok "$1"; else not_ok "$1" "exit status $rc, want $2" "stdout: $out" "stderr: $err"; fi; }
# snapshot DIR: every file with its mode and contents.
snapshot() {
	local f
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		printf '== %s %s\n' "$(basename "$f")" "$(stat -c %a "$f")"
		cat "$f"
	done
}

export GNUPGHOME=$tmp/gnupg
# status without a target reads every target's files: a home of its own.
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config P11GLUE_CONFIG=$tmp/conf
mkdir -p "$HOME"
store_module=$(realpath "$(dirname "$p11glue")/../store/p11glue-store.so")
proxy_module=$(realpath "$(dirname "$p11glue")/../proxy/p11glue-proxy.so")
begin="# >>> p11glue setup --gnupg: p11glue's lines, removed by --undo"
end="# <<< p11glue setup --gnupg"

# ---------------------------------------------------------------------------
# Help and usage
for c in setup status; do
	run cli "$c" --help
	if [ "$rc" = 0 ] && [[ $out == "Usage: p11glue $c "* ]] && [[ $out == *"--gnupg"* ]] &&
		[[ $out == *"Exit status:"* ]]; then
		ok "$c --help names the gnupg target"
	else
		not_ok "$c --help" "exit status $rc" "$out"
	fi
	run cli "$c" --no-such-option
	status "$c with an unknown option is a usage error" 2
	run cli "$c" --gnupg extra
	status "$c with an extra argument is a usage error" 2
done
run cli setup --direct --gnupg --system
status "setup --gnupg --system is a usage error (no system form)" 2
run cli setup --direct --gnupg --module /x --proxy
status "setup --module with --proxy is a usage error" 2
run cli setup --direct --gnupg --undo --proxy
status "setup --undo --proxy is a usage error" 2
run cli --help
has "the command list names setup and status" "$out" "*setup*status*"

# ---------------------------------------------------------------------------
# A fresh GNUPGHOME
run cli status --gnupg
status "status of nothing" 0
has "... is not configured" "$out" "gnupg: not configured*gnupghome: $GNUPGHOME*scdaemon-program: (not set)*"
run cli setup --direct --gnupg --dry-run
status "setup --gnupg --dry-run" 0
same "... prints the two files and their lines" "$out" "gnupg: would create $GNUPGHOME/gpg-agent.conf
  + $begin
  + scdaemon-program /usr/bin/gnupg-pkcs11-scd
  + $end
gnupg: would create $GNUPGHOME/gnupg-pkcs11-scd.conf
  + $begin
  + providers p11glue
  + provider-p11glue-library $store_module
  + $end"
same "... and changes nothing" "$(ls -A "$GNUPGHOME" 2>/dev/null)" ""
dry=$out
run cli setup --direct --gnupg
status "setup --gnupg" 0
same "... does what the dry run said" "$out" "${dry//would create/created}"
has "... and says to restart gpg-agent" "$err" "*gpgconf --kill gpg-agent*"
same "... GNUPGHOME is private" "$(stat -c %a "$GNUPGHOME")" 700
same "... the new files too" "$(stat -c %a "$GNUPGHOME/gpg-agent.conf" "$GNUPGHOME/gnupg-pkcs11-scd.conf" | tr '\n' ' ')" "600 600 "
same "... gpg-agent.conf" "$(cat "$GNUPGHOME/gpg-agent.conf")" "$begin
scdaemon-program /usr/bin/gnupg-pkcs11-scd
$end"
if command -v gpgconf >/dev/null; then
	run gpgconf --homedir "$GNUPGHOME" --check-options gpg-agent
	status "... gpgconf --check-options accepts it" 0
fi
before=$(snapshot "$GNUPGHOME")
run cli setup --direct --gnupg
status "a second run" 0
same "... changes nothing" "$(snapshot "$GNUPGHOME")" "$before"
same "... and says so" "$out" "gnupg: nothing to change"
run cli status --gnupg
has "status: configured, by p11glue" "$out" "gnupg: configured*scdaemon-program: /usr/bin/gnupg-pkcs11-scd (set by p11glue)*module: $store_module (set by p11glue)*"
run cli status --json
has "status --json" "$out" '{*"gnupg": {*"state": "configured",*}*}'
if command -v python3 >/dev/null; then
	run python3 -c 'import json,sys; print(json.load(sys.stdin)["gnupg"]["state"])' <<<"$out"
	same "... is JSON" "$out" configured
fi

# --proxy switches the module; the old line is shown going.
run cli setup --direct --gnupg --proxy --dry-run
same "setup --gnupg --proxy --dry-run shows the changed block" "$out" "gnupg: would change $GNUPGHOME/gnupg-pkcs11-scd.conf
  - $begin
  - providers p11glue
  - provider-p11glue-library $store_module
  - $end
  + $begin
  + providers p11glue
  + provider-p11glue-library $proxy_module
  + $end"
run cli setup --direct --gnupg --proxy
status "setup --gnupg --proxy" 0
has "... names the proxy" "$(cat "$GNUPGHOME/gnupg-pkcs11-scd.conf")" "*provider-p11glue-library $proxy_module*"
run cli setup --direct --gnupg --module "$tmp/missing.so"
status "--module of a missing file" 1
has "... says so" "$err" "*missing.so: no such file*nothing was changed*"

# --undo of a set-up made from nothing leaves nothing.
run cli setup --direct --gnupg --undo --dry-run
has "setup --gnupg --undo --dry-run" "$out" "gnupg: would remove $GNUPGHOME/gpg-agent.conf*  - scdaemon-program /usr/bin/gnupg-pkcs11-scd*would remove $GNUPGHOME/gnupg-pkcs11-scd.conf*"
same "... changes nothing" "$(snapshot "$GNUPGHOME" | grep -c '^== ')" 2
run cli setup --direct --gnupg --undo
status "setup --gnupg --undo" 0
same "... removes the files p11glue made" "$(ls -A "$GNUPGHOME")" ""
run cli setup --direct --gnupg --undo
same "... a second --undo has nothing to do" "$out" "gnupg: nothing to change"

# ---------------------------------------------------------------------------
# Files of the user's own
user_agent='# my agent
default-cache-ttl 600
pinentry-program /usr/bin/pinentry-curses'
printf '%s' "$user_agent" >"$GNUPGHOME/gpg-agent.conf"   # no final newline
chmod 640 "$GNUPGHOME/gpg-agent.conf"
run cli setup --direct --gnupg
status "setup --gnupg with a gpg-agent.conf of the user's" 0
has "... changes it" "$out" "gnupg: changed $GNUPGHOME/gpg-agent.conf*gnupg: created*"
same "... after the user's lines, untouched" "$(cat "$GNUPGHOME/gpg-agent.conf")" "$user_agent
$begin
scdaemon-program /usr/bin/gnupg-pkcs11-scd
$end"
same "... keeping its mode" "$(stat -c %a "$GNUPGHOME/gpg-agent.conf")" 640
printf 'max-cache-ttl 7200\n' >>"$GNUPGHOME/gpg-agent.conf"
run cli setup --direct --gnupg
same "a line the user adds later does not disturb a second run" "$out" "gnupg: nothing to change"
run cli setup --direct --gnupg --undo
status "setup --gnupg --undo" 0
same "... leaves exactly the user's lines" "$(cat "$GNUPGHOME/gpg-agent.conf")" "$user_agent
max-cache-ttl 7200"
same "... and the file's mode" "$(stat -c %a "$GNUPGHOME/gpg-agent.conf")" 640
same "... and removes the file p11glue made" "$(ls "$GNUPGHOME")" gpg-agent.conf

# A conflicting line of the user's: nothing changes, and the line is named.
printf 'scdaemon-program /usr/lib/gnupg/scdaemon\n' >>"$GNUPGHOME/gpg-agent.conf"
before=$(snapshot "$GNUPGHOME")
run cli setup --direct --gnupg
status "a scdaemon-program of the user's is a conflict" 1
has "... naming the line" "$err" "*gpg-agent.conf, line 5, sets scdaemon-program /usr/lib/gnupg/scdaemon*nothing was changed*"
same "... and nothing changed" "$(snapshot "$GNUPGHOME")" "$before"
run cli setup --direct --gnupg --dry-run
status "... the dry run reports it too" 1
run cli status --gnupg
has "status shows the user's scdaemon" "$out" "gnupg: not configured*scdaemon-program: /usr/lib/gnupg/scdaemon (set by you)*"

# The user's own gnupg-pkcs11-scd set-up naming the store counts as done.
printf 'scdaemon-program /usr/bin/gnupg-pkcs11-scd\n' >"$GNUPGHOME/gpg-agent.conf"
printf 'providers mine\nprovider-mine-library %s\n' "$store_module" >"$GNUPGHOME/gnupg-pkcs11-scd.conf"
before=$(snapshot "$GNUPGHOME")
run cli setup --direct --gnupg
same "a set-up of the user's own that names the store is left as it is" "$out" "gnupg: nothing to change"
same "... untouched" "$(snapshot "$GNUPGHOME")" "$before"
run cli status --gnupg
has "... and status says configured, by the user" "$out" "gnupg: configured*(set by you)*$store_module (set by you)*"
printf 'providers other\nprovider-other-library /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so\n' \
	>"$GNUPGHOME/gnupg-pkcs11-scd.conf"
run cli setup --direct --gnupg
status "providers of the user's that lack p11glue are a conflict" 1
has "... with what to add" "$err" "*line 1, names providers other*add 'p11glue' to it*"
run cli status --gnupg
has "... status: partly configured" "$out" "gnupg: partly configured*"

# An unterminated block is refused, not guessed at.
printf '%s\nscdaemon-program /usr/bin/gnupg-pkcs11-scd\n' "$begin" >"$GNUPGHOME/gpg-agent.conf"
rm -f "$GNUPGHOME/gnupg-pkcs11-scd.conf"
run cli setup --direct --gnupg --undo
status "an unterminated block of p11glue's is refused by --undo" 1
has "... saying why" "$err" "*no end line*"
finish
