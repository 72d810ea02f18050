#!/bin/bash
# p11glue setup --ssh: a "Host *" block with PKCS11Provider at the end of
# ~/.ssh/config (in a temporary home), as `ssh -G` reads it: in force for
# every host, never over a setting of the user's that comes first; dry
# run, second run, undo, the user's lines, conflicts and notes.
#
# Usage: test-cli-setup-ssh.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/setup-lib.sh"

conf=$HOME/.ssh/config
b=$(begin ssh)
e=$(end ssh)
# provider HOST: the PKCS11Provider ssh uses for HOST with this file.
provider() {
	if command -v ssh >/dev/null; then
		ssh -G -F "$conf" "$1" 2>&1 | sed -n 's/^pkcs11provider //p'
	else
		echo "(no ssh)"
	fi
}
have_ssh() { command -v ssh >/dev/null; }

run cli status --ssh
has "status of nothing: not configured" "$out" "ssh: not configured*file: $conf*pkcs11provider: (not set)*"
run cli setup --direct --ssh --dry-run
status "setup --ssh --dry-run" 0
same "... prints the block" "$out" "ssh: would create $conf
  + $b
  + Host *
  + PKCS11Provider $store_module
  + $e"
same "... and changes nothing" "$(ls -A "$HOME")" ""
dry=$out
run cli setup --direct --ssh
status "setup --ssh" 0
same "... does what the dry run said" "$out" "${dry//would create/created}"
same "... ~/.ssh is private" "$(stat -c %a "$HOME/.ssh")" 700
same "... and the file too" "$(stat -c %a "$conf")" 600
if have_ssh; then
	same "ssh -G: the store module for any host" "$(provider somehost)" "$store_module"
else
	ok "ssh -G # SKIP ssh is not installed"
fi
before=$(snapshot "$HOME")
run cli setup --direct --ssh
same "a second run changes nothing" "$out" "ssh: nothing to change"
same "... on disk" "$(snapshot "$HOME")" "$before"
run cli status --ssh
has "status: configured, by p11glue" "$out" "ssh: configured*pkcs11provider: $store_module (set by p11glue)*"
run cli setup --direct --ssh --proxy --dry-run
has "--proxy: the block changes" "$out" "ssh: would change $conf*  - PKCS11Provider $store_module*  + PKCS11Provider $proxy_module*"
run cli setup --direct --ssh --undo
status "undo" 0
has "... says what it removes" "$out" "ssh: removed $conf*  - PKCS11Provider $store_module*"
same "... and removes the file p11glue made" "$(snapshot "$HOME")" ""
run cli setup --direct --ssh --undo
same "a second undo has nothing to do" "$out" "ssh: nothing to change"

# The user's file: its lines before the block, their values first.
user='# mine
User alice
Host work
    PKCS11Provider /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so
    Port 2222
'
printf '%s' "$user" >"$conf"
chmod 644 "$conf"
orig=$(snapshot "$HOME")
run cli setup --direct --ssh
status "setup --ssh with a config of the user's" 0
has "... notes the user's PKCS11Provider for some hosts" "$err" "*line 4, sets PKCS11Provider /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so for some hosts*"
same "... appends the block after the user's lines" "$(cat "$conf")" "$user$b
Host *
PKCS11Provider $store_module
$e"
same "... keeping the mode" "$(stat -c %a "$conf")" 644
if have_ssh; then
	same "ssh -G: the store module for other hosts" "$(provider elsewhere)" "$store_module"
	same "ssh -G: the user's module for the user's host" "$(provider work)" \
		/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so
	has "ssh -G: the user's other settings stay" "$(ssh -G -F "$conf" work 2>/dev/null)" "*port 2222*"
else
	ok "ssh -G # SKIP ssh is not installed"
fi
run cli status --ssh
has "status shows both" "$out" "ssh: configured*pkcs11provider: $store_module (set by p11glue)*for some hosts: /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so (line 4)*"
printf 'ServerAliveInterval 30\n' >>"$conf"
run cli setup --direct --ssh
same "a line the user adds after the block does not disturb a second run" "$out" "ssh: nothing to change"
run cli setup --direct --ssh --undo
same "undo leaves exactly the user's lines" "$(cat "$conf")" "$user"'ServerAliveInterval 30'
sed -i '$d' "$conf"
same "... byte for byte" "$(snapshot "$HOME")" "$orig"

# A PKCS11Provider of the user's for every host: a conflict.
for first in 'PKCS11Provider /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so' \
	'Host *
  PKCS11Provider=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so' \
	'Match all
  pkcs11provider "/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"'; do
	printf '%s\n' "$first" >"$conf"
	before=$(snapshot "$HOME")
	run cli setup --direct --ssh
	status "a PKCS11Provider of the user's for every host is a conflict ($(head -1 <<<"$first"))" 1
	has "... named" "$err" "*sets PKCS11Provider /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so for every host*nothing was changed*"
	same "... nothing changed" "$(snapshot "$HOME")" "$before"
done
run cli status --ssh
has "status: another module of the user's first is not configured, the line named" "$out" \
	"ssh: not configured*pkcs11provider: /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so (set by you)*conflict: $conf, line 2, sets PKCS11Provider /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so for every host, not a p11glue module*"
printf 'PKCS11Provider %s\n' "$store_module" >"$conf"
run cli status --ssh
has "status: the user's own line naming the store is configured" "$out" \
	"ssh: configured*pkcs11provider: $store_module (set by you)*"
before=$(snapshot "$HOME")
run cli setup --direct --ssh
same "the user's own PKCS11Provider naming the store leaves nothing to do" "$out" "ssh: nothing to change"
same "... untouched" "$(snapshot "$HOME")" "$before"
rm -f "$conf"

# --system: a dry run only.
before=$(snapshot /etc/ssh/ssh_config.d)
run cli setup --direct --ssh --system --dry-run
status "setup --ssh --system --dry-run" 0
has "... names /etc/ssh/ssh_config.d/p11glue.conf" "$out" "ssh: would * /etc/ssh/ssh_config.d/p11glue.conf*"
same "... and changes nothing" "$(snapshot /etc/ssh/ssh_config.d)" "$before"
finish
