#!/bin/bash
# p11glue setup and p11glue status without a target: every target, in a
# temporary home (setup-lib.sh); --user and --system (as a dry run); a
# conflict in one target stops that one only.
#
# Usage: test-cli-setup-all.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/setup-lib.sh"

all=(modules ssh openssl nss gnupg)
have_scd=false
[ -x /usr/bin/gnupg-pkcs11-scd ] && have_scd=true
have_nss=false
[ -x /usr/bin/modutil ] && have_nss=true
# files: everything p11glue may write in the temporary home, but NSS's
# database files, which NSS itself changes when it is used.
files() {
	local f
	find "$HOME" "$P11GLUE_CONFIG" "$GNUPGHOME" -type f ! -name '*.db' 2>/dev/null | LC_ALL=C sort |
		while IFS= read -r f; do snapshot "$f"; done
}

for c in setup status; do
	run cli "$c" --help
	for t in "${all[@]}" user system; do
		has "$c --help names --$t" "$out" "*--$t *"
	done
done
run cli setup --direct --gnupg --system
status "setup --gnupg --system is a usage error" 2
has "... saying so" "$err" "*--gnupg has no --system form*"
run cli status --nss --system
status "status --nss --system is a usage error" 2

orig=$(files)
run cli status
status "status of every target" 0
for t in "${all[@]}"; do
	has "... $t: not configured" "$out" "*$t: not configured*"
done
run cli setup --direct --dry-run
status "setup --dry-run (every target)" 0
has "... modules" "$out" "modules: would create $P11GLUE_CONFIG/modules/p11glue-store.module*"
has "... ssh" "$out" "*ssh: would create $HOME/.ssh/config*"
has "... openssl" "$out" "*openssl: would create $XDG_CONFIG_HOME/p11glue/openssl-pkcs11.cnf*"
if $have_nss; then
	has "... nss" "$out" "*nss: would create $HOME/.pki/nssdb/pkcs11.txt*"
else
	has "... nss left out with a note" "$err" "*nss: left out: modutil is not installed*"
fi
if $have_scd; then
	has "... gnupg" "$out" "*gnupg: would create $GNUPGHOME/gpg-agent.conf*"
else
	has "... gnupg left out with a note" "$err" "*gnupg: left out: /usr/bin/gnupg-pkcs11-scd is not installed*"
fi
same "... and changes nothing" "$(files)" "$orig"
dry=$out
run client_cli setup --direct
status "setup (every target)" 0
same "... does what the dry run said" "$out" "$(sed 's/would create/created/' <<<"$dry")"
run cli status
for t in modules ssh openssl; do
	has "status: $t configured" "$out" "*$t: configured*"
done
if $have_nss; then has "status: nss configured" "$out" "*nss: configured*"; else ok "nss # SKIP modutil"; fi
if $have_scd; then has "status: gnupg configured" "$out" "*gnupg: configured*"; else ok "gnupg # SKIP gnupg-pkcs11-scd"; fi
run cli status --json
if command -v python3 >/dev/null; then
	run python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(k+"="+d[k]["state"] for k in d))' <<<"$out"
	has "status --json: a member per target" "$out" "modules=configured service=* trust=configured ssh=configured openssl=configured nss=* gnupg=*"
fi
before=$(files)
has "(the snapshot holds what setup made)" "$before" "*p11glue-store.module*openssl-pkcs11.cnf*"
run client_cli setup --direct
status "a second run" 0
for t in modules ssh openssl; do
	has "... $t: nothing to change" "$out" "*$t: nothing to change*"
done
same "... changes nothing" "$(files)" "$before"
run client_cli setup --direct --undo
status "setup --undo (every target)" 0
same "... removes every file p11glue made (NSS's ~/.pki/nssdb stays)" \
	"$(files | sed '/^== .*\/\.pki\/nssdb\//,/^==$/d')" "$orig"
run cli status
lacks "... status: nothing configured" "$out" "*: configured*"

# A conflict in one target: that one changes nothing, the others go on.
mkdir -p "$HOME/.ssh"
printf 'PKCS11Provider /opt/mine.so\n' >"$HOME/.ssh/config"
run client_cli setup --direct
status "a conflict in one target: exit status 1" 1
has "... that target says so" "$err" "*ssh: *PKCS11Provider /opt/mine.so for every host*ssh: nothing was changed*"
has "... the others are set up" "$out" "*modules: created*openssl: created*"
same "... the user's file untouched" "$(cat "$HOME/.ssh/config")" "PKCS11Provider /opt/mine.so"
run client_cli setup --direct --undo
status "... undo" 0
rm "$HOME/.ssh/config"

# --user is the default; --system as a dry run only (P11GLUE_CONFIG unset,
# so the registry target names the system directory too).
run cli setup --direct --user --dry-run
has "setup --user --dry-run: the user's files" "$out" "*ssh: would create $HOME/.ssh/config*"
etc=(/etc/pkcs11 /etc/ssh/ssh_config.d /etc/ssl/p11glue-pkcs11.cnf /etc/ca-certificates /etc/ca-certificates.conf
	/usr/local/share/ca-certificates /etc/p11glue)
before=$(snapshot "${etc[@]}")
run env -u P11GLUE_CONFIG "$p11glue" setup --system --dry-run
status "setup --system --dry-run" 0
has "... the system's files" "$out" "modules: * /etc/pkcs11/modules/p11glue-store.module*ssh: * /etc/ssh/ssh_config.d/p11glue.conf*openssl: * /etc/ssl/p11glue-pkcs11.cnf*"
has "... leaves out the targets without a --system form" "$err" "*nss: left out: it has no --system form*gnupg: left out*"
lacks "... and does not plan them" "$out" "*nss:*"
same "... and changes nothing in /etc" "$(snapshot "${etc[@]}")" "$before"
run env -u P11GLUE_CONFIG "$p11glue" status --system
has "status --system: the targets that have one" "$out" "modules: *ssh: *file: /etc/ssh/ssh_config.d/p11glue.conf*openssl: *file: /etc/ssl/p11glue-pkcs11.cnf*"
lacks "... only" "$out" "*gnupg:*"

# --json: what a script needs to know, per target.
before=$(snapshot "$HOME" "$P11GLUE_CONFIG")
run cli setup --direct --ssh --modules --json --dry-run
status "setup --json --dry-run" 0
verdict=$(printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted(d), d["ssh"]["result"], d["ssh"]["files"][0]["action"],
      "PKCS11Provider" in " ".join(d["ssh"]["files"][0]["added"]), d["modules"]["problems"])' 2>&1)
same "... one JSON object: each target, its result, files and lines" "$verdict" \
	"['modules', 'ssh'] would change would create True []"
same "... and changes nothing" "$(snapshot "$HOME" "$P11GLUE_CONFIG")" "$before"
run cli setup --direct --ssh --json
verdict=$(printf '%s' "$out" | python3 -c '
import json, sys, os
d = json.load(sys.stdin)
f = d["ssh"]["files"][0]
print(d["ssh"]["result"], f["action"], os.path.exists(f["path"]))' 2>&1)
same "setup --ssh --json: changed, the file there" "$verdict" "changed created True"
run cli setup --direct --ssh --json
verdict=$(printf '%s' "$out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ssh"]["result"], d["ssh"]["files"])' 2>&1)
same "... again: nothing to change" "$verdict" "nothing to change []"
run cli setup --direct --ssh --undo --json
verdict=$(printf '%s' "$out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ssh"]["result"], d["ssh"]["files"][0]["action"])' 2>&1)
same "... --undo --json" "$verdict" "changed removed"
finish
