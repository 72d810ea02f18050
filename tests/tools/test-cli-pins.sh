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

finish
