#!/bin/bash
# p11glue setup --modules: the key store and the trust module registered
# in the registry (P11GLUE_CONFIG's modules/, and ~/.config/pkcs11/modules
# in a temporary home), p11-kit's trust module disabled beside them; the
# registry as p11glue list-modules and print-config read it; dry run,
# second run, undo, the user's lines and conflicts.
#
# Usage: test-cli-setup-modules.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/setup-lib.sh"

dir=$P11GLUE_CONFIG/modules
b=$(begin modules)
e=$(end modules)

run cli status --modules
has "status of nothing: not configured" "$out" "modules: not configured*directory: $dir*"
run cli setup --direct --modules --dry-run
status "setup --modules --dry-run" 0
same "... prints the three files and their lines" "$out" "modules: would create $dir/p11glue-store.module
  + $b
  + module: $store_module
  + $e
modules: would create $dir/p11glue-trust.module
  + $b
  + module: $trust_module
  + trust-policy: yes
  + $e
modules: would create $dir/p11-kit-trust.module
  + $b
  + module:
  + $e"
same "... and changes nothing" "$(snapshot "$P11GLUE_CONFIG")" ""
dry=$out
run cli setup --direct --modules
status "setup --modules" 0
same "... does what the dry run said" "$out" "${dry//would create/created}"
same "... p11glue-trust.module" "$(cat "$dir/p11glue-trust.module")" "$b
module: $trust_module
trust-policy: yes
$e"
same "... new files are the user's only" "$(stat -c %a "$dir/p11glue-store.module")" 600
run cli list-modules
has "list-modules shows the store and the trust module" "$out" "*p11glue-store: $store_module*p11glue-trust: $trust_module*"
lacks "... and not p11-kit's trust module" "$out" "*p11-kit-trust*"
run cli print-config
has "print-config shows p11-kit-trust disabled (empty module:)" "$out" "*p11-kit-trust:*p11-kit-trust.module*module: *p11glue-store:*"
has "... and trust-policy on p11glue's trust module" "$out" "*p11glue-trust:*trust-policy: yes*"
run cli trust list --filter=ca-anchors
status "p11glue trust reads the registered trust module" 0
before=$(snapshot "$P11GLUE_CONFIG")
run cli setup --direct --modules
same "a second run changes nothing" "$out" "modules: nothing to change"
same "... on disk" "$(snapshot "$P11GLUE_CONFIG")" "$before"
run cli status --modules
has "status: configured by p11glue" "$out" "modules: configured*store: $store_module (set by p11glue)*trust: $trust_module (set by p11glue)*p11-kit-trust: (empty: disabled) (set by p11glue)*"
run cli setup --direct --modules --undo --dry-run
has "undo --dry-run" "$out" "modules: would remove $dir/p11glue-store.module*  - module: $store_module*"
same "... changes nothing" "$(snapshot "$P11GLUE_CONFIG")" "$before"
run cli setup --direct --modules --undo
status "undo" 0
same "... removes the files p11glue made" "$(snapshot "$P11GLUE_CONFIG")" ""
run cli list-modules
lacks "... and list-modules no longer shows them" "$out" "*p11glue-store*"
run cli setup --direct --modules --undo
same "a second undo has nothing to do" "$out" "modules: nothing to change"

# A module file of the user's with settings of its own: kept byte for byte.
mkdir -p "$dir"
printf '# my settings\npriority: 5\n' >"$dir/p11glue-trust.module"
chmod 640 "$dir/p11glue-trust.module"
orig=$(snapshot "$P11GLUE_CONFIG")
run cli setup --direct --modules
status "a file of the user's without module: gets p11glue's block" 0
same "... after the user's lines" "$(cat "$dir/p11glue-trust.module")" "# my settings
priority: 5
$b
module: $trust_module
trust-policy: yes
$e"
same "... keeping its mode" "$(stat -c %a "$dir/p11glue-trust.module")" 640
run cli print-config
has "... both settings in force" "$out" "*p11glue-trust:*priority: 5*"
run cli setup --direct --modules --undo
same "undo restores the user's file exactly" "$(snapshot "$P11GLUE_CONFIG")" "$orig"

# Conflicts: nothing written, the file named.
printf 'module: /usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-trust.so\n' >"$dir/p11-kit-trust.module"
before=$(snapshot "$P11GLUE_CONFIG")
run cli setup --direct --modules
status "a p11-kit-trust.module of the user's that enables it is a conflict" 1
has "... naming the file" "$err" "*p11-kit-trust.module, a module file of yours, sets module: /usr/lib/*nothing was changed*"
same "... and nothing changed" "$(snapshot "$P11GLUE_CONFIG")" "$before"
rm "$dir/p11-kit-trust.module"
printf 'module: /opt/other.so\n' >"$dir/p11glue-store.module"
printf 'module:\n' >"$dir/p11-kit-trust.module"
before=$(snapshot "$P11GLUE_CONFIG")
run cli setup --direct --modules
status "a p11glue-store.module of the user's naming another file is a conflict" 1
same "... nothing changed" "$(snapshot "$P11GLUE_CONFIG")" "$before"
run cli status --modules
has "... status: partly configured, the user's file" "$out" "modules: partly configured*store: /opt/other.so, not p11glue's setting (set by you)*"
# The user's own registration of the same modules counts as done.
printf 'module: %s\n' "$store_module" >"$dir/p11glue-store.module"
printf 'module: %s\ntrust-policy: yes\n' "$trust_module" >"$dir/p11glue-trust.module"
printf 'module:\n' >"$dir/p11-kit-trust.module"
before=$(snapshot "$P11GLUE_CONFIG")
run cli setup --direct --modules
same "the user's own registration of p11glue's modules is left as it is" "$out" "modules: nothing to change"
same "... untouched" "$(snapshot "$P11GLUE_CONFIG")" "$before"
run cli status --modules
has "... status: configured, by the user" "$out" "modules: configured*(set by you)*(set by you)*(set by you)*"
rm -rf "$dir"

# Without P11GLUE_CONFIG: the user's directory, in the temporary home,
# as a user whose programs read it. Root's programs do not (unless the
# system file sets user-config, which it does not on a test machine):
# there setup refuses rather than write files nothing reads, and the
# user part runs as nobody with a home of its own.
as_user=(env)
user_cli=$p11glue user_store=$store_module user_trust=$trust_module
if [ "$(id -u)" = 0 ]; then
	run env -u P11GLUE_CONFIG "$p11glue" setup --direct --modules
	status "as root, setup --modules without P11GLUE_CONFIG is refused" 1
	has "... pointing to --system" "$err" "*ignore ~/.config/pkcs11*use --system*"
	same "... and writes nothing" "$(snapshot "$HOME/.config")" ""
	run env -u P11GLUE_CONFIG "$p11glue" status --modules
	has "... status: not configured, the user files ignored" "$out" \
		"modules: not configured*user files: programs run by this user (root) ignore ~/.config/pkcs11*"
	if other_user; then
		mkdir -p "$tmp/nobody"
		chown 65534:65534 "$tmp/nobody"
		# That user runs a copy of the build it can reach.
		user_cli=$(staged "$p11glue")
		user_store=$(staged "$store_module") user_trust=$(staged "$trust_module")
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$tmp/nobody")
		HOME=$tmp/nobody
	else
		as_user=()
	fi
fi
if [ ${#as_user[@]} -gt 0 ]; then
	run "${as_user[@]}" env -u P11GLUE_CONFIG "$user_cli" setup --direct --modules
	status "setup --modules without P11GLUE_CONFIG" 0
	has "... writes ~/.config/pkcs11/modules" "$out" "modules: created $HOME/.config/pkcs11/modules/p11glue-store.module*"
	same "... the directory is private" "$(stat -c %a "$HOME/.config/pkcs11/modules")" 700
	run "${as_user[@]}" env -u P11GLUE_CONFIG "$user_cli" status --modules
	has "... status lists the registry as that user's programs read it" "$out" \
		"modules: configured*registered: p11glue-store: $user_store*registered: p11glue-trust: $user_trust*"
	run "${as_user[@]}" env -u P11GLUE_CONFIG "$user_cli" setup --direct --modules --undo
	same "... and undo removes them" "$(snapshot "$HOME/.config/pkcs11")" ""
else
	skip "setup --modules as a user who is not root" "$other_user_why"
fi
HOME=$tmp/home

# --system: a dry run names the system directory and changes nothing.
sysdir=$(cli setup --direct --modules --help | sed -n 's/.*(with --system \([^ ,]*\),.*/\1/p')
before=$(snapshot "$sysdir")
run env -u P11GLUE_CONFIG "$p11glue" setup --direct --modules --system --dry-run
status "setup --modules --system --dry-run" 0
has "... names the system directory" "$out" "modules: *$sysdir/p11glue-store.module*"
same "... and changes nothing there" "$(snapshot "$sysdir")" "$before"
# With P11GLUE_CONFIG, --system too works on its directory: a real run.
run cli setup --direct --modules --system
status "setup --modules --system with P11GLUE_CONFIG" 0
same "... writes files everyone may read" "$(stat -c %a "$dir/p11glue-store.module")" 644
run cli setup --direct --modules --system --undo
same "... undone" "$(snapshot "$P11GLUE_CONFIG")" ""
finish
