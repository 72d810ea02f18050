#!/bin/bash
# p11glue setup in its default mode: programs reach the key store through
# the session service (p11glue-client.so registered, the store's own
# registration disabled; ssh, OpenSSL and GnuPG name the client module),
# --direct switching back and forth, the service target (systemctl
# --user enable p11glue.socket, with the units where a user's systemd
# finds them), and status: the mode in force, the service and its
# tokens, locked or unlocked and since when.
#
# Usage: test-cli-setup-service.sh P11GLUE
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/setup-lib.sh"

dir=$P11GLUE_CONFIG/modules
b=$(begin modules)
e=$(end modules)
service_pid=
stop_service() {
	[ -n "$service_pid" ] || return 0
	kill "$service_pid" 2>/dev/null
	for _ in $(seq 200); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.05; done
	service_pid=
}
trap 'stop_service; rm -rf "$tmp"' EXIT
# The pid the running service reports (status), or nothing.
running_pid() { cli status --service | sed -n 's/.*service: running (pid \([0-9]*\),.*/\1/p'; }

run cli setup --modules --dry-run
status "setup --modules --dry-run" 0
same "... registers the client module and disables the store's own registration" "$out" \
"modules: would create $dir/p11glue-service.module
  + $b
  + module: $client_module
  + $e
modules: would create $dir/p11glue-store.module
  + $b
  + module:
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
has "... and says how to unlock" "$err" "*p11glue unlock*"
run cli setup --modules
status "setup --modules" 0
run cli status --modules
has "status: configured, the session service's mode" "$out" \
	"modules: configured*service: $client_module (set by p11glue)*store: (empty: disabled) (set by p11glue)*mode: session service*"

# The key store commands still load the store themselves (the SO's
# commands never go through the service), and the listing commands see
# the token through the service, once.
secret "$tmp/so" 12345678
secret "$tmp/pin" 87654321
run cli init-token --label svc --so-pin-source "$tmp/so"
status "init-token in the service's mode loads the store itself" 0
run cli init-pin --so-pin-source "$tmp/so" --new-pin-source "$tmp/pin" pkcs11:token=svc
status "... and init-pin, as the SO" 0
run cli list-tokens
status "list-tokens through the registry" 0
has "... shows the token through p11glue-service (the client module)" "$out" "*token: svc*module: p11glue-service*"
same "... once" "$(grep -c 'token=svc' <<<"$out")" 1
service_pid=$(running_pid)
if [ -n "$service_pid" ]; then ok "... which started the session service"; else not_ok "... which started the session service" "$(cli status --service)"; fi
run cli status --service
has "status: the service's token is locked" "$out" "*token: 'svc': locked*"
run cli unlock --pin-source "$tmp/pin"
status "unlock" 0
run cli status --service
has "status: unlocked, and since when" "$out" "*token: 'svc': unlocked since 2[0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] *"
run cli lock
status "lock" 0
run cli status --service
has "status: locked again" "$out" "*token: 'svc': locked*"
stop_service
run cli status --service
has "status: a service that does not run" "$out" "*service: not running*"

# The other targets name the client module; GnuPG's provider may log in
# through the service's protected authentication path.
run cli setup --ssh --openssl --gnupg
status "setup --ssh --openssl --gnupg" 0
has "ssh names the client module" "$(cat "$HOME/.ssh/config")" "*PKCS11Provider $client_module*"
has "openssl names the client module" "$(cat "$XDG_CONFIG_HOME/p11glue/openssl-pkcs11.cnf")" "*MODULE_PATH = $client_module*"
same "gnupg-pkcs11-scd names the client module, with a protected authentication path" \
	"$(sed -n '/^provider/p' "$GNUPGHOME/gnupg-pkcs11-scd.conf")" \
"providers p11glue
provider-p11glue-library $client_module
provider-p11glue-allow-protected-auth"

# --direct: the store registered, the client gone; and back.
run cli setup --modules --direct --dry-run
has "--direct changes the store's registration" "$out" \
	"*would change $dir/p11glue-store.module*  - module:*  + module: $store_module*"
has "... and removes the client's" "$out" "*would remove $dir/p11glue-service.module*"
run cli setup --modules --ssh --direct
status "setup --direct" 0
run cli status --modules
has "status: configured, the direct mode" "$out" "modules: configured*store: $store_module (set by p11glue)*mode: direct*"
has "ssh names the store module again" "$(cat "$HOME/.ssh/config")" "*PKCS11Provider $store_module*"
run cli setup --modules --ssh
status "back to the service" 0
run cli status --modules
has "status: the session service's mode again" "$out" "modules: configured*mode: session service*"
run cli setup --modules --ssh --openssl --gnupg --undo
same "undo removes every file" "$(snapshot "$P11GLUE_CONFIG" "$HOME/.ssh" "$GNUPGHOME")" ""

# The service target: p11glue.socket enabled with systemctl --user, the
# units where systemd finds a user's (what meson install does for
# everyone in systemd's user unit directory).
if ! command -v systemctl >/dev/null; then
	skip "the service target" "no systemctl"
	finish
	exit
fi
units=$XDG_DATA_HOME/systemd/user
if ! systemctl --user is-enabled p11glue.socket >/dev/null 2>&1 &&
	[ "$(systemctl --user is-enabled p11glue.socket 2>&1)" != disabled ]; then
	run cli setup --service
	status "setup --service without the units is an error" 1
	has "... saying the client module starts the service" "$err" "*does not know p11glue.socket*starts the session service itself*"
	run cli setup --direct
	has "a set-up of every target leaves it out" "$err" "*service: left out: no systemd (systemctl) knows p11glue.socket*"
	run cli setup --undo
else
	skip "setup --service without the units" "p11glue.socket is installed on this system"
fi
mkdir -p "$units"
cp "$(dirname "$p11glue")/../service/p11glue.service" "$(dirname "$0")/../../src/service/p11glue.socket" "$units/"
run cli setup --service --dry-run
status "setup --service --dry-run" 0
has "... says what it runs" "$err" "*service: systemctl --user enable p11glue.socket*"
same "... and does not run it" "$(systemctl --user is-enabled p11glue.socket 2>/dev/null)" disabled
run cli setup --service
status "setup --service" 0
same "... enables p11glue.socket" "$(systemctl --user is-enabled p11glue.socket 2>/dev/null)" enabled
same "... systemd's link" "$(readlink "$XDG_CONFIG_HOME/systemd/user/sockets.target.wants/p11glue.socket")" \
	"$units/p11glue.socket"
run cli setup --service
same "a second run changes nothing" "$out" "service: nothing to change"
run cli status --service
has "status: configured" "$out" "service: configured*socket unit: enabled*starts: by systemd*"
run cli setup --service --direct
has "--direct leaves the service alone" "$err" "*--direct: programs load the key store themselves*"
run cli setup --service --undo
status "setup --service --undo" 0
same "... disables it" "$(systemctl --user is-enabled p11glue.socket 2>/dev/null)" disabled
run cli status --service
has "status: not configured" "$out" "service: not configured*socket unit: disabled*starts: by p11glue-client.so*"
finish
