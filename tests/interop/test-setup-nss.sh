#!/bin/bash
# p11glue setup --nss: the proxy module added with modutil to the NSS
# databases of a temporary home (~/.pki/nssdb, made when missing, and the
# Firefox profiles of ~/.mozilla/firefox), as NSS itself then sees it:
# modutil -list names it, certutil -L lists the certificate of a store
# token through it (the store and trust module registered by setup
# --modules in P11GLUE_CONFIG); dry run, second run, undo, the user's
# modules, conflicts, legacy databases, --system.
#
# Usage: test-setup-nss.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/../tools/setup-lib.sh"
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
command -v modutil >/dev/null && command -v certutil >/dev/null ||
	skip_all "modutil and certutil (libnss3-tools) are not installed"

chromium=$HOME/.pki/nssdb
firefox=$HOME/.mozilla/firefox
profile=$firefox/abcd1234.default-release
opensc=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so
# modules DB: the module names modutil lists.
modules() { client modutil -dbdir "sql:$1" -list 2>&1 | sed -n 's/^ *[0-9]*\. //p'; }
certs() { client certutil -d "sql:$1" -L -h all 2>&1; }
# texts: the module lists of both databases, as files.
texts() { snapshot "$chromium/pkcs11.txt" "$profile/pkcs11.txt"; }

# The registry, a token with a key and its certificate.
run cli setup --direct --modules
status "setup --modules registers the store for the proxy" 0
secret "$tmp/so-pin" 12345678
secret "$tmp/pin" 87654321
run cli init-token --label setup --so-pin-source "$tmp/so-pin"
status "a token (p11glue init-token)" 0
run cli init-pin --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" 'pkcs11:token=setup'
status "its PIN (p11glue init-pin)" 0
run cli generate-keypair --type ec:secp256r1 --label web "pkcs11:token=setup?pin-source=$tmp/pin"
status "a key (p11glue generate-keypair)" 0
run cli certify --self-signed --subject CN=web 'pkcs11:token=setup;object=web?pin-source='"$tmp/pin"
status "its certificate (p11glue certify)" 0

# A Firefox profile with a module of the user's, and one never started.
mkdir -p "$profile" "$firefox/unused.default"
printf '[Install4F96D1932A9F858E]\nDefault=abcd1234.default-release\n\n[Profile1]\nName=unused\nIsRelative=1\nPath=unused.default\n\n[Profile0]\nName=default-release\nIsRelative=1\nPath=abcd1234.default-release\nDefault=1\n' \
	>"$firefox/profiles.ini"
certutil -N -d "sql:$profile" --empty-password
if [ -r "$opensc" ]; then
	client modutil -dbdir "sql:$profile" -add mine -libfile "$opensc" -force >/dev/null 2>&1
fi
orig_profile=$(snapshot "$profile/pkcs11.txt")

run cli status --nss
has "status: not configured" "$out" "nss: not configured*database [0-9]*: $profile: (no module named 'p11glue')*"
run cli setup --direct --nss --dry-run
status "setup --nss --dry-run" 0
same "... prints the modules to add" "$out" "nss: would create $chromium/pkcs11.txt
  + library=$proxy_module
  + name=p11glue
nss: would change $profile/pkcs11.txt
  + library=$proxy_module
  + name=p11glue"
has "... says ~/.pki/nssdb is made, and the profile not used yet" "$err" "*$chromium is made first, an empty NSS database without a password*unused.default: no NSS database yet*"
same "... and changes nothing" "$(ls -A "$HOME/.pki" 2>/dev/null; snapshot "$profile/pkcs11.txt")" "$orig_profile"
dry=$out
run client_cli setup --direct --nss
status "setup --nss" 0
same "... does what the dry run said" "$out" "$(sed 's/would create/created/; s/would change/changed/' <<<"$dry")"
for db in "$chromium" "$profile"; do
	has "... pkcs11.txt of $(basename "$db") holds the lines shown" "$(cat "$db/pkcs11.txt")" \
		"*library=$proxy_module
name=p11glue*"
	has "modutil -list shows the module in $(basename "$db")" "$(modules "$db")" "*p11glue*"
	has "certutil -L lists the store's certificate in $(basename "$db")" "$(certs "$db")" "*setup:web *u,u,u*"
done
if [ -r "$opensc" ]; then
	has "... the user's module stays" "$(modules "$profile")" "*mine*"
else
	ok "... the user's module stays # SKIP OpenSC's module is not installed"
fi
same "~/.pki/nssdb is private" "$(stat -c %a "$chromium")" 700
has "... and an NSS database" "$(ls "$chromium")" "*cert9.db*key4.db*pkcs11.txt*"
before=$(texts)
run client_cli setup --direct --nss
same "a second run changes nothing" "$out" "nss: nothing to change"
same "... on disk" "$(texts)" "$before"
run cli status --nss
has "status: configured" "$out" "nss: configured*database [0-9]*: $chromium: $proxy_module*database [0-9]*: $profile: $proxy_module*"
run cli setup --direct --nss --undo --dry-run
has "undo --dry-run shows the module going" "$out" "nss: would change $chromium/pkcs11.txt*  - library=$proxy_module*  - name=p11glue*"
same "... and changes nothing" "$(texts)" "$before"
run client_cli setup --direct --nss --undo
status "undo" 0
for db in "$chromium" "$profile"; do
	lacks "... modutil -list no longer shows it in $(basename "$db")" "$(modules "$db")" "*p11glue*"
	lacks "... certutil -L no longer lists the store's certificate in $(basename "$db")" "$(certs "$db")" "*setup:web*"
done
same "... the profile's module list is as it was, byte for byte" "$(snapshot "$profile/pkcs11.txt")" "$orig_profile"
run client_cli setup --direct --nss --undo
same "a second undo has nothing to do" "$out" "nss: nothing to change"

# A module of the user's named p11glue that is not p11glue's: a conflict.
printf 'library=/opt/other/pkcs11.so\nname=p11glue\n\n' >>"$profile/pkcs11.txt"
before=$(texts)
run client_cli setup --direct --nss
status "a module of the user's named p11glue is a conflict" 1
has "... named" "$err" "*$profile: a module of yours is named 'p11glue' (library /opt/other/pkcs11.so)*nothing was changed*"
same "... and nothing changed, in either database" "$(texts)" "$before"
run client_cli setup --direct --nss --undo
same "... undo leaves it alone" "$(texts)" "$before"
run cli status --nss
has "... status: not configured, the user's module named" "$out" "nss: not configured*$profile: /opt/other/pkcs11.so (a module of yours named 'p11glue')*"
client modutil -dbdir "sql:$profile" -delete p11glue -force >/dev/null 2>&1
same "(the user's module removed again)" "$(snapshot "$profile/pkcs11.txt")" "$orig_profile"

# The user's own registration of the proxy under another name counts.
client modutil -dbdir "sql:$profile" -add theirs -libfile "$proxy_module" -force >/dev/null 2>&1
run cli setup --direct --nss --dry-run
status "setup --nss --dry-run with the proxy registered under another name" 0
has "... still plans the other database" "$out" "*$chromium*"
lacks "... and leaves that database alone" "$out" "*$profile*"
client modutil -dbdir "sql:$profile" -delete theirs -force >/dev/null 2>&1

# A legacy database (cert8.db only) is a problem: nothing is done.
mkdir -p "$firefox/old.profile"
: >"$firefox/old.profile/cert8.db"
: >"$firefox/old.profile/secmod.db"
before=$(texts)
run client_cli setup --direct --nss
status "a legacy cert8.db profile stops the target" 1
has "... saying so" "$err" "*old.profile holds a legacy NSS database (cert8.db, secmod.db)*nothing was changed*"
same "... and nothing changed" "$(texts)" "$before"
rm -rf "$firefox/old.profile"

# Firefox running with a profile (its lock link names a live process).
ln -s "127.0.0.1:+$$" "$profile/lock"
run cli setup --direct --nss --dry-run
has "a running Firefox is warned about" "$err" "*warning: Firefox runs with $profile: close it*"
rm "$profile/lock"
ln -s "127.0.0.1:+999999999" "$profile/lock"
run cli setup --direct --nss --dry-run
lacks "... a stale lock is not" "$err" "*Firefox runs with*"
rm "$profile/lock"

# --module: p11glue's modules only (the name marks the entry as p11glue's).
run cli setup --direct --nss --module "$store_module" --dry-run
has "--module names the store" "$out" "*library=$store_module*"
if [ -r "$opensc" ]; then
	run cli setup --direct --nss --module "$opensc" --dry-run
	status "--module of another library is refused" 1
	has "... saying why" "$err" "*NSS gets p11glue's modules only*"
fi

# No --system form.
run cli setup --direct --nss --system
status "setup --nss --system is refused" 2
has "... clearly" "$err" "*--nss has no --system form*"
run cli setup --direct --nss --system --dry-run
status "... also as a dry run" 2
finish
