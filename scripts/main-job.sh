#!/bin/bash
# The main job: shows what p11glue does, step by step, on built-in
# defaults. Nothing outside a temporary directory is touched.
set -uo pipefail

build=${1:-build}
p11glue="$build/src/tools/p11glue"
work=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-main.XXXXXX")
trap 'rm -rf "$work"' EXIT
step=0
failed=0

# step "what this shows" CMD...: runs it, prints one line, keeps the output.
step() {
	local what=$1
	shift
	step=$((step + 1))
	if "$@" >"$work/out" 2>"$work/err"; then
		printf '[%2d] ok    %s\n' "$step" "$what"
		sed 's/^/        /' "$work/out"
	else
		printf '[%2d] FAIL  %s: %s\n' "$step" "$what" "$(tr '\n' ' ' <"$work/err")"
		failed=$((failed + 1))
	fi
}

# expect_fail "what" CMD...: the command must fail; its message is shown.
expect_fail() {
	local what=$1
	shift
	step=$((step + 1))
	if "$@" >"$work/out" 2>"$work/err"; then
		printf '[%2d] FAIL  %s: it was accepted\n' "$step" "$what"
		failed=$((failed + 1))
	else
		printf '[%2d] ok    %s\n        %s\n' "$step" "$what" "$(cat "$work/err")"
	fi
}

echo "p11glue main job ($("$p11glue" --version))"
step "the commands p11glue offers" "$p11glue" --help
step "a PKCS#11 URI in canonical form" \
	"$p11glue" uri parse "pkcs11:type=private;object=my%20key;token=Key%20Store?pin-source=file:%2Fhome%2Fme%2Fpin"
step "the same URI decoded as JSON" \
	"$p11glue" uri parse --json "pkcs11:type=private;object=my%20key;token=Key%20Store;id=%01%02"
step "a URI built from attribute values" \
	"$p11glue" uri build --token="Key Store" --object="ssh key" --type=private --id=0102
step "a URI found in the wild, parsed leniently" \
	"$p11glue" uri parse --lenient "pkcs11:token=SSH Keys;object=id_ecdsa"
expect_fail "a malformed URI is refused with its reason" \
	"$p11glue" uri parse "pkcs11:library-version=1.x"
expect_fail "an unknown attribute is refused" \
	"$p11glue" uri parse "pkcs11:tokn=typo"

if [ "$failed" -ne 0 ]; then
	echo "main job: $failed of $step steps failed"
	exit 1
fi
echo "main job: all $step steps succeeded"
