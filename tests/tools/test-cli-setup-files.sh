#!/bin/bash
# How `p11glue setup` treats the files it writes, whatever the target: a
# module path with blanks (quoted for ssh), a file whose end marker has
# gained a CR, new system directories readable by everyone under any
# umask, the owner of a user's file kept when root runs it (and new files
# given to the home's owner), and a target whose second file cannot be
# replaced changing nothing at all.
#
# Usage: test-cli-setup-files.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/setup-lib.sh"

conf=$HOME/.ssh/config

# A module path with a blank: quoted, and ssh reads it whole.
spaced="$tmp/lib dir/p11glue-store.so"
mkdir -p "$tmp/lib dir"
cp "$store_module" "$spaced"
run cli setup --ssh --module "$spaced"
status "setup --ssh --module 'PATH WITH BLANK'" 0
has "... writes the path in double quotes" "$(cat "$conf")" "*PKCS11Provider \"$spaced\"*"
if command -v ssh >/dev/null; then
	run ssh -G -F "$conf" somehost
	status "... ssh -G accepts the file" 0
	has "... and takes the whole path" "$out" "*pkcs11provider $spaced*"
else
	ok "ssh -G # SKIP ssh is not installed"
	ok "ssh -G path # SKIP ssh is not installed"
fi
run cli status --ssh
has "status reads the quoted path back" "$out" "*pkcs11provider: $spaced (set by p11glue)*"
run cli setup --ssh --module "$spaced"
same "a second run changes nothing" "$out" "ssh: nothing to change"

# The file converted to CRLF line ends: the block is still found.
sed -i 's/$/\r/' "$conf"
run cli setup --ssh --undo
status "undo after the file gained CRs" 0
[ ! -e "$conf" ] && ok "... removes p11glue's block (and the file, empty then)" ||
	not_ok "... the file is left" "$(cat -A "$conf")"

# A symbolic link (a dotfile manager's) is left alone, with the reason.
mkdir -p "$HOME/.ssh"
printf 'User alice\n' >"$tmp/dotfiles-ssh-config"
ln -s "$tmp/dotfiles-ssh-config" "$conf"
run cli setup --ssh
status "setup --ssh with ~/.ssh/config a symbolic link" 1
has "... says why" "$err" "*$conf is a symbolic link, which p11glue does not replace*"
same "... the link stays" "$(readlink "$conf")" "$tmp/dotfiles-ssh-config"
same "... and the file it points to is unchanged" "$(cat "$tmp/dotfiles-ssh-config")" "User alice"
rm -f "$conf"

# A FIFO where a file should be: refused at once, not waited on.
mkfifo "$conf"
run timeout 10 "$p11glue" setup --ssh
status "setup --ssh with a FIFO for ~/.ssh/config fails, without hanging" 1
rm -f "$conf"

# --system (into P11GLUE_CONFIG): directories made 0755 under umask 077.
rm -rf "$P11GLUE_CONFIG"
run sh -c 'umask 077 && exec "$@"' sh "$p11glue" setup --modules --system
status "setup --modules --system under umask 077" 0
same "... the directory it made is 0755" "$(stat -c %a "$P11GLUE_CONFIG/modules")" 755
same "... the files 0644" "$(stat -c %a "$P11GLUE_CONFIG/modules/p11glue-store.module")" 644
run cli setup --modules --system --undo
rm -rf "$P11GLUE_CONFIG"
mkdir -p "$P11GLUE_CONFIG"

if [ "$(id -u)" != 0 ]; then
	for t in "owner of a user's file kept" "new files given to the home's owner" \
		"a target whose second file cannot be replaced changes nothing"; do
		ok "$t # SKIP needs root"
	done
	finish
	exit
fi

# Root working in a user's home: the user's file stays the user's, and
# what p11glue makes there is the user's too.
user_uid=4242 user_gid=4343
chown "$user_uid:$user_gid" "$HOME"
mkdir -p "$HOME/.ssh"
printf 'User alice\n' >"$conf"
chown -R "$user_uid:$user_gid" "$HOME/.ssh"
run cli setup --ssh --openssl
status "root: setup --ssh --openssl in a user's home" 0
same "... the owner of a user's file kept" "$(stat -c %u:%g "$conf")" "$user_uid:$user_gid"
same "... new files given to the home's owner" \
	"$(stat -c %u:%g "$HOME/.config" "$HOME/.config/p11glue" "$HOME/.config/p11glue/openssl-pkcs11.cnf" | sort -u)" \
	"$user_uid:$user_gid"
run cli setup --ssh --openssl --undo
chown -R 0:0 "$HOME"

# A target of two files whose second cannot be replaced (immutable):
# the first is not left changed either.
export GNUPGHOME=$tmp/gnupg-immutable
mkdir -p "$GNUPGHOME"
printf '# mine\n' >"$GNUPGHOME/gnupg-pkcs11-scd.conf"
if ! command -v gnupg-pkcs11-scd >/dev/null || ! chattr +i "$GNUPGHOME/gnupg-pkcs11-scd.conf" 2>/dev/null; then
	ok "a target whose second file cannot be replaced changes nothing # SKIP no gnupg-pkcs11-scd or chattr +i"
	finish
	exit
fi
before=$(snapshot "$GNUPGHOME")
run cli setup --gnupg --module "$store_module"
chattr -i "$GNUPGHOME/gnupg-pkcs11-scd.conf"
if [ "$rc" = 1 ] && [ "$(snapshot "$GNUPGHOME")" = "$before" ] && [ -z "$(ls -A "$GNUPGHOME" | grep p11glue-)" ]; then
	ok "a target whose second file cannot be replaced changes nothing"
else
	not_ok "a target whose second file cannot be replaced changes nothing" "rc=$rc" "$err" \
		"$(ls -la "$GNUPGHOME")"
fi
finish
