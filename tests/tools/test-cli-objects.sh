#!/bin/bash
# What the commands that change a token do and say: delete-object deletes
# what the URI names and nothing more (--all, --dry-run), import and
# generate-keypair warn of a label or ID that is taken, and every command
# that changes something prints a JSON object with --json.
#
# Usage: test-cli-objects.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../interop/common.sh"
need python3 ssh-keygen openssl

unset P11GLUE_CONFIG PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/no-registry
mkdir -p "$P11GLUE_CONFIG/modules"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
# json NAME EXPR: the last run printed one JSON document (d) for which the
# Python expression is true.
json() {
	local got
	got=$(python3 -c 'import json, sys
d = json.loads(sys.argv[2])
print("yes" if eval(sys.argv[1]) else "no")' "$2" "$out" 2>&1)
	if [ "$got" = yes ]; then ok "$1"; else not_ok "$1" "$got" "stdout: $out" "stderr: $err" "want: $2"; fi
}
# count TEXT: objects on the token whose URI holds TEXT.
count() {
	client "$p11glue" list-objects --pin-source "$tmp/pin" "pkcs11:token=test?module-path=$store" |
		grep -cF -e "$1"
}
new_store
tok=pkcs11:token=test
P=(--pin-source "$tmp/pin")

# ---------------------------------------------------------------------------
# Two OpenSSH keys with one comment: the second import warns. (Not
# Ed25519 keys: those come with a warning of their own, about OpenSSL's
# engine.)
ssh-keygen -q -t ecdsa -b 384 -N '' -C user@host -f "$tmp/one"
ssh-keygen -q -t ecdsa -N '' -C user@host -f "$tmp/two"
run p import "${P[@]}" "$tmp/one" "$tok"
ran "import of an OpenSSH key labelled user@host"
one_id=$(sed -n 's/^private key: .*;id=//p' <<<"$out")
same "... no warning when the label is new" "$err" ""
run p import "${P[@]}" "$tmp/two" "$tok"
ran "import of a second key with the same comment"
has "... warns that the label is taken, naming what has it" "$err" \
	"*warning: token 'test' has 2 objects labelled 'user@host' already*object=user%40host;type=public*"
run p generate-keypair "${P[@]}" --type ec:secp256r1 --label user@host "$tok"
ran "generate-keypair with a taken label"
has "... warns too" "$err" "*warning: token 'test' has 4 objects labelled 'user@host' already*"
run p generate-keypair "${P[@]}" --type ec:secp256r1 --label fresh "$tok"
same "... and not for a new label" "$err" ""
id=$(sed -n 's/.*type=private;id=//p' <<<"$out")
run p generate-keypair "${P[@]}" --type ed25519 --label other --id "$(tr -d % <<<"$id")" "$tok"
failed_run "generate-keypair with a taken --id is refused"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/c.key" \
	-subj /CN=fresh -days 2 -out "$tmp/c.pem" 2>/dev/null
run p import "${P[@]}" --id "$(tr -d % <<<"$id")" "$tmp/c.pem" "$tok"
ran "import of a certificate with an ID a key has (how they pair)"
has "... warns of the label only" "$err" "*labelled 'fresh' already*"
lacks "... not of the ID" "$err" "*with this ID*"
openssl req -x509 -key "$tmp/c.key" -subj /CN=fresh2 -days 3 -out "$tmp/c2.pem" 2>/dev/null
run p import "${P[@]}" --id "$(tr -d % <<<"$id")" "$tmp/c2.pem" "$tok"
has "a second certificate with that ID is warned of" "$err" "*1 object (certificates) with this ID already*type=cert*"

# ---------------------------------------------------------------------------
# delete-object: several objects only with --all.
same "six objects are labelled user@host" "$(count ';object=user%40host;')" 6
run p delete-object "${P[@]}" "$tok;object=user%40host"
status "delete-object of a URI that selects six objects is refused" 1
has "... saying so and listing them" "$err" "*the URI selects 6 objects; nothing was deleted*--all*object=user%40host;type=p*"
same "... nothing was deleted" "$(count ';object=user%40host;')" 6
run p delete-object "${P[@]}" --dry-run "$tok;object=user%40host"
ran "delete-object --dry-run"
same "... lists the six" "$(grep -c '^would delete pkcs11:token=test;.*object=user%40host;' <<<"$out")" 6
same "... and deletes nothing" "$(count ';object=user%40host;')" 6
run p delete-object "${P[@]}" --dry-run --json "$tok;object=user%40host"
json "delete-object --dry-run --json" \
	'd["dry-run"] is True and len(d["would-delete"]) == 6 and d["token"].startswith("pkcs11:token=test;") and "deleted" not in d'
run p delete-object "${P[@]}" "$tok;object=user%40host;type=private;id=$one_id"
ran "delete-object of a URI that selects one object"
same "... deletes it" "$(grep -c '^deleted pkcs11:token=test;.*type=private' <<<"$out")" 1
same "... and only it" "$(count ';object=user%40host;')" 5
run p delete-object "${P[@]}" --all --json "$tok;object=user%40host"
ran "delete-object --all"
json "... --json lists the five deleted" 'd["dry-run"] is False and len(d["deleted"]) == 5 and all("object=user%40host" in u for u in d["deleted"])'
same "... which are gone" "$(count ';object=user%40host;')" 0
run p delete-object "${P[@]}" --dry-run "$tok;object=user%40host"
failed_run "delete-object --dry-run of nothing"

# ---------------------------------------------------------------------------
# --json of every command that changes something.
mkdir "$tmp/js"
export P11GLUE_STORE_DIR=$tmp/js
run p init-token --json --label js --so-pin-source "$tmp/so-pin"
ran "init-token --json"
json "... the token, label, slot" 'd["token"].startswith("pkcs11:token=js;") and d["label"] == "js" and d["slot"] == 0 and d["reinitialized"] is False'
run p init-pin --json --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" pkcs11:token=js
ran "init-pin --json"
json "... says the user PIN was set" 'd["token"].startswith("pkcs11:token=js;") and d["set"] == "user PIN"'
run p set-pin --json --pin-source "$tmp/pin" --new-pin-source "$tmp/pin" pkcs11:token=js
ran "set-pin --json"
json "... says what changed" 'd["changed"] == "user PIN"'
run p set-pin --so --json --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/so-pin" pkcs11:token=js
json "set-pin --so --json" 'd["changed"] == "SO PIN"'
run p generate-keypair --json "${P[@]}" --type ec:secp256r1 --label k pkcs11:token=js
ran "generate-keypair --json"
json "... both URIs" '";object=k;type=private;id=" in d["private-key"] and ";object=k;type=public;id=" in d["public-key"]'
run p import --json "${P[@]}" "$tmp/one" pkcs11:token=js
ran "import --json"
json "... every object made" '[o["object"] for o in d["created"]] == ["public key", "private key"] and d["skipped"] == [] and d["file"].endswith("/one")'
run p import --json "${P[@]}" "$tmp/c.pem" pkcs11:token=js
run p import --json "${P[@]}" "$tmp/c.pem" pkcs11:token=js
json "import --json of a certificate on the token already: skipped" 'd["created"] == [] and len(d["skipped"]) == 1 and "type=cert" in d["skipped"][0]'
run p certify --json "${P[@]}" --self-signed "pkcs11:token=js;object=k"
ran "certify --json"
json "... the key and the certificate" '"type=private" in d["key"] and ";object=k;type=cert;" in d["certificate"] and d["replaced"] == [] and "pem" not in d'
run p certify --json "${P[@]}" --self-signed --replace --output - "pkcs11:token=js;object=k"
json "certify --json --replace --output -: the PEM in the object, what was replaced" \
	'd["pem"].startswith("-----BEGIN CERTIFICATE-----") and len(d["replaced"]) == 1'
run p request --json "${P[@]}" "pkcs11:token=js;object=k"
ran "request --json"
json "... the PEM text" 'd["pem"].startswith("-----BEGIN CERTIFICATE REQUEST-----") and "type=private" in d["key"]'
run p request --json "${P[@]}" --output "$tmp/r.csr" "pkcs11:token=js;object=k"
json "request --json --output FILE names the file" 'd["output"].endswith("/r.csr") and "pem" not in d'
run openssl req -in "$tmp/r.csr" -noout -verify
ran "... which holds the request"
run p delete-object --json "${P[@]}" "pkcs11:token=js;object=k;type=cert"
json "delete-object --json" 'len(d["deleted"]) == 1 and "type=cert" in d["deleted"][0]'
run p init-token --json --force --label js --so-pin-source "$tmp/so-pin"
json "init-token --force --json" 'd["reinitialized"] is True'

finish
