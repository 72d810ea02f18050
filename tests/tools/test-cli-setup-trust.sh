#!/bin/bash
# setup --trust and status --trust in a temporary home: the lines of
# environment.d, ~/.profile and ~/.curlrc name files that exist before
# the lines do, a second run changes nothing (the files neither), what
# no per-user switch reaches is said, --undo takes lines and files away
# and keeps the user's own lines, a link is not replaced, a path that
# would need quoting is refused; --system as a dry run only.
set -u
p11glue=$(realpath "$1")
. "$(dirname "$0")/setup-lib.sh"
unset SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE CURL_HOME XDG_DATA_HOME JAVA_TOOL_OPTIONS
data=$HOME/.local/share/p11glue/extracted
envd=$XDG_CONFIG_HOME/environment.d/60-p11glue-trust.conf
# Every file below the directories with its mode and digest (a keystore is binary).
sums() { find "$@" -type f -exec stat -c '%n %a' {} \; -exec md5sum {} \; 2>/dev/null | LC_ALL=C sort; }

run cli setup --trust --dry-run
status "setup --trust --dry-run" 0
has "... plans environment.d, ~/.profile and ~/.curlrc" "$out" \
	"trust: would create $envd*SSL_CERT_FILE=$data/ca-certificates.crt*trust: would create $HOME/.profile*export SSL_CERT_FILE=*trust: would create $HOME/.curlrc*capath = \"$data/certs\"*"
[ ! -e "$data" ] && [ ! -e "$HOME/.profile" ] && ok "... and makes nothing" || not_ok "dry run made files"

printf '# mine\nexport EDITOR=vi\n' >"$HOME/.profile"
run cli setup --trust
status "setup --trust" 0
has "... says what no per-user switch reaches" "$err" "*not reached per user: GnuTLS's default trust file*"
for f in ca-certificates.crt certs java-cacerts; do
	[ -e "$data/$f" ] || missing="${missing:-} $f"
done
[ -z "${missing:-}" ] && ok "... the files the lines name exist" || not_ok "missing:$missing"
grep -q "BEGIN CERTIFICATE" "$data/ca-certificates.crt" && ok "... the bundle holds the anchors" ||
	not_ok "empty bundle"
same "... ~/.profile keeps the user's lines first" "$(head -n 2 "$HOME/.profile")" "# mine
export EDITOR=vi"
run env -i HOME="$HOME" PATH=/usr/bin:/bin sh -c '. "$HOME/.profile"; printf "%s|%s|%s" "$SSL_CERT_FILE" "$SSL_CERT_DIR" "$JAVA_TOOL_OPTIONS"'
same "... a login shell gets the variables" "$out" \
	"$data/ca-certificates.crt|$data/certs|-Djavax.net.ssl.trustStore=$data/java-cacerts "
run env -i HOME="$HOME" PATH=/usr/bin:/bin JAVA_TOOL_OPTIONS="-Djavax.net.ssl.trustStore=$data/java-cacerts -Xmx1g" \
	sh -c '. "$HOME/.profile"; printf "%s" "$JAVA_TOOL_OPTIONS"'
same "... and does not add the trustStore twice" "$out" "-Djavax.net.ssl.trustStore=$data/java-cacerts -Xmx1g"

before=$(sums "$HOME" "$P11GLUE_CONFIG")
run cli setup --trust
status "a second run" 0
has "... finds nothing to change" "$out" "trust: nothing to change"
same "... and changes no file, the extracted ones neither" "$(sums "$HOME" "$P11GLUE_CONFIG")" "$before"

run cli status --trust
has "status --trust: configured" "$out" "trust: configured*environment.d: $envd (p11glue's lines)*not reached per user: GnuTLS*"
has "... and this session lacks the variables" "$out" "*this session: SSL_CERT_FILE is not p11glue's here*"
run cli status --trust --json
verdict=$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["trust"]["state"])' <<<"$out" 2>&1)
same "status --trust --json" "$verdict" "configured"

touch "$HOME/.bash_profile"
rm -rf "$data"
run cli setup --trust
has "a missing file is made again" "$(ls "$data" 2>&1)" "*ca-certificates.crt*"
has "... and bash's own profile is noted" "$err" "*bash reads $HOME/.bash_profile instead of ~/.profile*"
rm "$HOME/.bash_profile"

run cli setup --trust --undo
status "setup --trust --undo" 0
[ ! -e "$envd" ] && [ ! -e "$data" ] && [ ! -e "$HOME/.curlrc" ] && ok "... removes the files p11glue made" ||
	not_ok "undo left files" "$(ls -la "$HOME" "$data" 2>&1)"
same "... and keeps the user's lines" "$(cat "$HOME/.profile")" "# mine
export EDITOR=vi"
run cli status --trust
has "status after --undo" "$out" "trust: not configured*"

# A link is the user's to follow: nothing of the target changes.
printf 'x\n' >"$tmp/real-profile"
ln -sf "$tmp/real-profile" "$HOME/.profile"
run cli setup --trust
status "~/.profile a link: exit 1" 1
has "... says so" "$err" "*.profile is a symbolic link*"
[ ! -e "$envd" ] && same "... and writes nothing" "$(cat "$tmp/real-profile")" "x" || not_ok "wrote through a link"
rm "$HOME/.profile"

run env XDG_DATA_HOME="$tmp/with space" "$p11glue" setup --trust
status "a data directory that would need quoting: exit 1" 1
has "... says so" "$err" "*would need quoted*"

run cli setup --bogus
status "an unknown option: usage (2)" 2

if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/update-ca-certificates ]; then
	before=$(snapshot /etc/ca-certificates /usr/local/share/ca-certificates)
	run env -u P11GLUE_CONFIG "$p11glue" setup --system --trust --dry-run
	status "setup --system --trust --dry-run" 0
	has "... plans update-ca-certificates' hook" "$out" \
		"trust: would create /etc/ca-certificates/update.d/p11glue*+ exec $p11glue trust extract-compat --hook*"
	same "... and changes nothing" "$(snapshot /etc/ca-certificates /usr/local/share/ca-certificates)" "$before"
else
	skip "setup --system --trust --dry-run" "needs root and update-ca-certificates"
fi

finish
