#!/bin/bash
# PINs on the command line: where each command takes them from
# (--pin-source, --so-pin-source, --new-pin-source with file:, a path,
# env:, fd:, the URI's pin-source and pin-value, the terminal), PINs that
# nobody could type, what a wrong PIN says, and the terminal after a
# signal at the prompt (run on a pseudo-terminal by pty-prompt.py).
#
# Usage: test-cli-pins.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../interop/common.sh"
need python3 stty

unset P11GLUE_CONFIG PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/no-registry
mkdir -p "$P11GLUE_CONFIG/modules"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
# on_pty PROMPT ACTION... -- ARGS...: p11glue ARGS on a pseudo-terminal.
on_pty() {
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	bound "${client_env[@]}" python3 "$here/pty-prompt.py" "${args[@]}" -- "$p11glue" "$@"
}
# echo_on NAME: the terminal of the last on_pty run shows echo.
echo_on() {
	if grep -Eq '^stty: .*(^| )echo( |$)' <<<"$out"; then ok "$1"; else not_ok "$1" "$out"; fi
}

new_store
keygen=(generate-keypair --module "$store" --type ed25519)

# ---------------------------------------------------------------------------
# A signal at the prompt leaves the terminal as it was.
run on_pty "PIN for test: " 'key:12\x03' -- "${keygen[@]}" --label k1 pkcs11:token=test
has "the PIN prompt turns echo off" "$out" "*echo at the prompt: off*"
has "Ctrl-C at the prompt ends the command by SIGINT" "$out" "*status: signal 2*"
echo_on "... and echo is on again"
run on_pty "PIN for test: " signal:TERM -- "${keygen[@]}" --label k1 pkcs11:token=test
has "SIGTERM at the prompt ends the command" "$out" "*status: signal 15*"
echo_on "... and echo is on again"
run on_pty "PIN for test: " signal:HUP -- "${keygen[@]}" --label k1 pkcs11:token=test
has "SIGHUP at the prompt ends the command" "$out" "*status: signal 1*"
echo_on "... and echo is on again"
# Ctrl-Z: nothing stops a program of an orphaned process group, so the
# prompt comes back (echo off again) and the entry goes on.
run on_pty "PIN for test: " 'key:\x1a' prompt "key:$pin\n" -- "${keygen[@]}" --label k1 pkcs11:token=test
has "after Ctrl-Z the prompt asks again" "$out" "*prompt again: seen*"
has "... and the PIN typed then logs in" "$out" "*status: exit 0*private key: pkcs11:token=test;*object=k1*"
echo_on "... with echo on afterwards"
lacks "... the PIN was not echoed" "$out" "*$pin*"

# ---------------------------------------------------------------------------
# Every command that logs in takes the PIN options.
for c in list-objects generate-keypair import export-pubkey delete-object certify request set-pin; do
	run "$p11glue" "$c" --help
	has "$c --help offers --pin-source" "$out" "*--pin-source SRC*"
done
for c in init-token init-pin set-pin; do
	run "$p11glue" "$c" --help
	has "$c --help offers --so-pin-source" "$out" "*--so-pin-source SRC*"
done
for c in init-pin set-pin; do
	run "$p11glue" "$c" --help
	has "$c --help offers --new-pin-source" "$out" "*--new-pin-source SRC*"
done
run "$p11glue" generate-keypair --help
has "the help names the forms of SRC" "$out" "*file:PATH*env:NAME*fd:N*"

# ---------------------------------------------------------------------------
# The forms of a PIN source, with generate-keypair.
gen() { p generate-keypair --type ed25519 --label "$1" "${@:2}"; }
run gen src-file --pin-source "file:$tmp/pin" pkcs11:token=test
ran "--pin-source file:PATH"
run gen src-path --pin-source "$tmp/pin" pkcs11:token=test
ran "--pin-source PATH"
run bash -c 'cd "$1" && shift && "$@"' - "$tmp" "${client_env[@]}" "$p11glue" generate-keypair \
	--module "$store" --type ed25519 --label src-rel --pin-source pin pkcs11:token=test
ran "--pin-source with a relative file name"
run bash -c 'cd "$1" && shift && "$@"' - "$tmp" "${client_env[@]}" "$p11glue" generate-keypair \
	--module "$store" --type ed25519 --label src-rel2 --pin-source file:pin pkcs11:token=test
ran "--pin-source file: with a relative file name"
ln -s "$tmp/pin" "$tmp/pin-link"
run gen src-link --pin-source "$tmp/pin-link" pkcs11:token=test
failed_run "--pin-source through a symbolic link is refused"
run env PG_TEST_PIN="$pin" "$p11glue" generate-keypair --module "$store" --type ed25519 \
	--label src-env --pin-source env:PG_TEST_PIN pkcs11:token=test
ran "--pin-source env:NAME"
run gen src-env2 --pin-source env:PG_TEST_UNSET pkcs11:token=test
failed_run "--pin-source env: of an unset variable"
has "... saying so" "$err" "*env:PG_TEST_UNSET: the variable is not set*"
run gen src-fd --pin-source fd:3 pkcs11:token=test 3<<<"$pin"
ran "--pin-source fd:N"
run gen src-fd2 --pin-source fd:3 pkcs11:token=test 3</dev/null
failed_run "--pin-source fd: that gives nothing"
has "... saying so, without trying an empty PIN" "$err" "*fd:3: nothing to read*"
lacks "... (no login was tried)" "$err" "*CKR_PIN_INCORRECT*"
run gen src-fd3 --pin-source fd:9 pkcs11:token=test
failed_run "--pin-source fd: of a closed descriptor"
has "... saying so" "$err" "*fd:9: not an open descriptor*"
run gen src-bad --pin-source nosuch:x pkcs11:token=test
failed_run "an unknown PIN source"
# The URI's own pin-source and pin-value keep working, env: and fd: too.
run gen uri-file "pkcs11:token=test?pin-source=file:$tmp/pin"
ran "the URI's pin-source=file:"
run gen uri-value "pkcs11:token=test?pin-value=$pin"
ran "the URI's pin-value"
run env PG_TEST_PIN="$pin" "$p11glue" generate-keypair --module "$store" --type ed25519 \
	--label uri-env "pkcs11:token=test?pin-source=env:PG_TEST_PIN"
ran "the URI's pin-source=env:NAME"
run gen uri-fd "pkcs11:token=test?pin-source=fd:3" 3<<<"$pin"
ran "the URI's pin-source=fd:N"
# The option goes before the URI's PIN.
secret "$tmp/wrong" 00000000
run gen over --pin-source "$tmp/pin" "pkcs11:token=test?pin-source=$tmp/wrong"
ran "--pin-source wins over the URI's pin-source"

# ---------------------------------------------------------------------------
# Every command that logs in, with a PIN from a descriptor or a variable.
run client "$p11glue" list-objects --pin-source fd:3 "pkcs11:token=test;type=private?module-path=$store" 3<<<"$pin"
ran "list-objects --pin-source (implies --login)"
has "... shows private objects" "$out" "*type=private*object=src-fd*"
openssl genpkey -algorithm ed25519 -out "$tmp/k.pem" 2>/dev/null
run p import --pin-source fd:3 "$tmp/k.pem" pkcs11:token=test 3<<<"$pin"
ran "import --pin-source"
run p export-pubkey --pin-source fd:3 "pkcs11:token=test;object=src-fd;type=private" 3<<<"$pin"
ran "export-pubkey --pin-source (implies --login: a private key's public half)"
run p certify --self-signed --pin-source fd:3 "pkcs11:token=test;object=src-fd" 3<<<"$pin"
ran "certify --pin-source"
run p request --pin-source fd:3 "pkcs11:token=test;object=src-env" 3<<<"$pin"
ran "request --pin-source"
has "... prints the request" "$out" "*BEGIN CERTIFICATE REQUEST*"
run p delete-object --pin-source fd:3 "pkcs11:token=test;object=k;type=private" 3<<<"$pin"
ran "delete-object --pin-source"
# A second token with the same PIN: one descriptor, read once, serves both.
run p init-token --label second --so-pin-source env:PG_SO
failed_run "init-token --so-pin-source env: of an unset variable"
run env PG_SO="$so_pin" "$p11glue" init-token --module "$store" --label second \
	--so-pin-source env:PG_SO
ran "init-token --so-pin-source env:NAME"
run p init-pin --so-pin-source fd:3 --new-pin-source fd:4 pkcs11:token=second 3<<<"$so_pin" 4<<<"$pin"
ran "init-pin --so-pin-source fd: --new-pin-source fd:"
run p generate-keypair --type ed25519 --label on-second --pin-source "$tmp/pin" pkcs11:token=second
ran "... its PIN works"
run client "$p11glue" list-objects --pin-source fd:3 "pkcs11:type=private?module-path=$store" 3<<<"$pin"
ran "list-objects --pin-source over two tokens reads the descriptor once"
has "... and logs in to both" "$out" "*token=test;*type=private*token=second;*object=on-second;type=private*"
# set-pin: current and new PIN as two lines of one descriptor.
run p set-pin --pin-source fd:3 --new-pin-source fd:3 pkcs11:token=second 3< <(printf '%s\n11112222\n' "$pin")
ran "set-pin --pin-source fd:3 --new-pin-source fd:3 (two lines)"
run p generate-keypair --type ed25519 --label new-pin "pkcs11:token=second?pin-value=11112222"
ran "... the second line is the new PIN"
run p set-pin --so --so-pin-source env:PG_SO --new-pin-source env:PG_NEW pkcs11:token=second
failed_run "set-pin --so without the variables set"
run env PG_SO="$so_pin" PG_NEW=99998888 "$p11glue" set-pin --module "$store" --so \
	--so-pin-source env:PG_SO --new-pin-source env:PG_NEW pkcs11:token=second
ran "set-pin --so --so-pin-source --new-pin-source"
run p init-pin --so-pin-source env:PG_SO --new-pin-source "$tmp/pin" pkcs11:token=second
failed_run "... the old SO PIN is gone"
run env PG_SO=99998888 "$p11glue" init-pin --module "$store" --so-pin-source env:PG_SO \
	--new-pin-source "$tmp/pin" pkcs11:token=second
ran "... the new one sets the user PIN"

# ---------------------------------------------------------------------------
# A PIN that nobody could type is refused where a PIN is set.
run env PG_NEW=$'1234\n5678' "$p11glue" set-pin --module "$store" --pin-source "$tmp/pin" \
	--new-pin-source env:PG_NEW pkcs11:token=second
failed_run "set-pin with a newline inside the new PIN"
has "... saying why" "$err" "*holds a newline, which nobody could type*"
run env PG_NEW=$'12345678\r' "$p11glue" set-pin --module "$store" --pin-source "$tmp/pin" \
	--new-pin-source env:PG_NEW pkcs11:token=second
failed_run "set-pin with a carriage return in the new PIN"
has "... saying why" "$err" "*holds a carriage return*"
(umask 077 && printf '1234\0005678\n' >"$tmp/nul-pin")
run p init-pin --so-pin-source env:PG_SO --new-pin-source "$tmp/nul-pin" pkcs11:token=second
failed_run "init-pin with a NUL byte in the new PIN"
run env PG_SO=99998888 "$p11glue" init-pin --module "$store" --so-pin-source env:PG_SO \
	--new-pin-source "$tmp/nul-pin" pkcs11:token=second
failed_run "init-pin with a NUL byte in the new PIN (SO PIN right)"
has "... saying why" "$err" "*holds a NUL byte*"
(umask 077 && printf '1234\n5678\n' >"$tmp/two-line-pin")
run p init-token --label third --so-pin-source "$tmp/two-line-pin"
failed_run "init-token with a newline inside the new SO PIN"
has "... saying why" "$err" "*holds a newline*"
run p init-token --label third "pkcs11:?pin-value=12%0A34"
failed_run "init-token with a newline in the URI's pin-value"
run "$p11glue" list-tokens "pkcs11:token=third?module-path=$store"
lacks "... and no token was made" "$out" "*token: third*"
run p generate-keypair --type ed25519 --label still "pkcs11:token=second?pin-source=$tmp/pin"
ran "... the refused changes changed nothing"
(umask 077 && printf '55556666\n' >"$tmp/nl-pin")
run p set-pin --pin-source "$tmp/pin" --new-pin-source "$tmp/nl-pin" pkcs11:token=second
ran "a PIN file's one trailing newline is not part of the PIN"
run p generate-keypair --type ed25519 --label nl "pkcs11:token=second?pin-value=55556666"
ran "... the PIN is the line"

# ---------------------------------------------------------------------------
# A wrong PIN says so in words, with the token's state.
run p generate-keypair --type ed25519 --label w --pin-source "$tmp/wrong" pkcs11:token=second
failed_run "a wrong user PIN"
has "... is a wrong PIN" "$err" "*login: wrong PIN (CKR_PIN_INCORRECT)*"
has "... and a wrong PIN was entered since the last good one" "$err" \
	"*token 'second', user PIN: a wrong PIN was entered since the last good one*"
lacks "... with tries left" "$err" "*one try left*"
for _ in 1 2 3 4 5 6 7; do
	p generate-keypair --type ed25519 --label w --pin-source "$tmp/wrong" pkcs11:token=second >/dev/null 2>&1
done
run p generate-keypair --type ed25519 --label w --pin-source "$tmp/wrong" pkcs11:token=second
has "the ninth wrong PIN: one try left" "$err" \
	"*user PIN: a wrong PIN was entered since the last good one; one try left before the PIN locks*"
run p generate-keypair --type ed25519 --label w --pin-source "$tmp/wrong" pkcs11:token=second
failed_run "the tenth wrong PIN"
has "... locks the PIN, and says how to unlock it" "$err" \
	"*the user PIN is locked*p11glue init-pin 'pkcs11:token=second;*"
run p generate-keypair --type ed25519 --label w --pin-source "$tmp/nl-pin" pkcs11:token=second
failed_run "the right PIN does not help a locked PIN"
has "... which says it is locked" "$err" "*the user PIN is locked*init-pin*"
run env PG_SO=00000000 "$p11glue" init-pin --module "$store" --so-pin-source env:PG_SO \
	--new-pin-source "$tmp/pin" pkcs11:token=second
failed_run "init-pin with a wrong SO PIN"
has "... says so of the SO PIN" "$err" "*SO login: wrong PIN*token 'second', SO PIN: a wrong PIN was entered since the last good one*"
run env PG_SO=99998888 "$p11glue" init-pin --module "$store" --so-pin-source env:PG_SO \
	--new-pin-source "$tmp/pin" pkcs11:token=second
ran "init-pin with the SO PIN unlocks the user PIN"
run p set-pin --pin-source "$tmp/wrong" --new-pin-source "$tmp/nl-pin" pkcs11:token=second
failed_run "set-pin with a wrong current PIN"
has "... says so in words too" "$err" "*changing the PIN: wrong PIN*a wrong PIN was entered since the last good one*"

finish
