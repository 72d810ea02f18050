#!/bin/bash
# Files the commands write and read: an existing file is refused without
# --overwrite, nothing is written through a symbolic link (nor into a
# FIFO), a failed command leaves no file, and a FIFO or device given to
# import is refused instead of waited on.
#
# Usage: test-cli-files.sh P11GLUE STORE_MODULE TRUST_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
trust=$(realpath -e "$3") || exit 1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../interop/common.sh"
need openssl mkfifo

unset P11GLUE_CONFIG PKCS11_MODULE_PATH
export P11GLUE_CONFIG=$tmp/no-registry
mkdir -p "$P11GLUE_CONFIG/modules"
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
# unchanged NAME FILE TEXT: FILE still holds TEXT.
unchanged() {
	if [ "$(cat "$2" 2>&1)" = "$3" ]; then ok "$1"; else not_ok "$1" "$(cat "$2" 2>&1)"; fi
}
new_store
P=(--pin-source "$tmp/pin")
keygen k ec:secp256r1 >/dev/null || { echo "Bail out! no key"; exit 1; }
key="pkcs11:token=test;object=k"
printf 'precious\n' >"$tmp/precious"
ln -s "$tmp/precious" "$tmp/link"
ln -s "$tmp/nowhere" "$tmp/dangling"
mkfifo "$tmp/fifo"

# ---------------------------------------------------------------------------
# export-pubkey --output
run p export-pubkey --output "$tmp/k.pem" "$key"
ran "export-pubkey --output a new file"
run openssl pkey -pubin -in "$tmp/k.pem" -noout
ran "... holds the key"
printf 'old\n' >"$tmp/k.pem"
chmod 640 "$tmp/k.pem"
run p export-pubkey --output "$tmp/k.pem" "$key"
status "export-pubkey --output an existing file is refused" 1
has "... saying so" "$err" "*k.pem: exists already; not overwritten (--overwrite replaces it)*"
unchanged "... which is unchanged" "$tmp/k.pem" old
run p export-pubkey --output "$tmp/k.pem" --overwrite "$key"
ran "export-pubkey --output --overwrite"
run openssl pkey -pubin -in "$tmp/k.pem" -noout
ran "... replaced the file"
same "... keeping its permissions" "$(stat -c %a "$tmp/k.pem")" 640
same "... and leaving no temporary file" "$(ls -A "$tmp" | grep -c '^\.k\.pem\.')" 0
for opt in "" --overwrite; do
	run p export-pubkey --output "$tmp/link" $opt "$key"
	status "export-pubkey --output a symbolic link ${opt:-without --overwrite} is refused" 1
	has "... saying so" "$err" "*link: a symbolic link; not written through*"
	unchanged "... its target is unchanged" "$tmp/precious" precious
	[ -L "$tmp/link" ] && ok "... and the link is still there" || not_ok "... the link is gone"
done
run p export-pubkey --output "$tmp/dangling" "$key"
status "export-pubkey --output a dangling link is refused" 1
[ -e "$tmp/nowhere" ] && not_ok "... and its target was made" || ok "... and its target is not made"
run timeout 30 "${client_env[@]}" "$p11glue" export-pubkey --module "$store" --output "$tmp/fifo" --overwrite "$key"
status "export-pubkey --output a FIFO is refused, without waiting for a reader" 1
has "... saying so" "$err" "*fifo: exists and is not a regular file*"
run p export-pubkey --output "$tmp/none.pem" "pkcs11:token=test;object=nothing"
failed_run "export-pubkey of nothing to a new file"
[ -e "$tmp/none.pem" ] && not_ok "... leaves the file" || ok "... leaves no file"
run p export-pubkey --output - "$key"
has "export-pubkey --output - writes to standard output" "$out" "-----BEGIN PUBLIC KEY-----*"

# ---------------------------------------------------------------------------
# certify and request --output
printf 'old\n' >"$tmp/cert.pem"
run p certify "${P[@]}" --self-signed --output "$tmp/cert.pem" "$key"
status "certify --output an existing file is refused" 1
has "... saying so" "$err" "*cert.pem: exists already*--overwrite*"
unchanged "... which is unchanged" "$tmp/cert.pem" old
run p export-pubkey "pkcs11:token=test;object=k;type=cert"
failed_run "... before any certificate is made"
run p certify "${P[@]}" --self-signed --output "$tmp/link" "$key"
status "certify --output a symbolic link is refused" 1
unchanged "... its target is unchanged" "$tmp/precious" precious
run p certify "${P[@]}" --self-signed --overwrite --output "$tmp/cert.pem" "$key"
ran "certify --overwrite --output"
run openssl x509 -in "$tmp/cert.pem" -noout -subject
has "... replaced the file with the certificate" "$out" "subject=CN = k"
run p certify "${P[@]}" --self-signed --replace --output - "$key"
has "certify --output - writes to standard output" "$out" "*certificate: pkcs11:*-----BEGIN CERTIFICATE-----*"
printf 'old\n' >"$tmp/req.csr"
run p request "${P[@]}" --output "$tmp/req.csr" "$key"
status "request --output an existing file is refused" 1
unchanged "... which is unchanged" "$tmp/req.csr" old
run p request "${P[@]}" --output "$tmp/dangling" "$key"
status "request --output a dangling link is refused" 1
[ -e "$tmp/nowhere" ] && not_ok "... and its target was made" || ok "... and its target is not made"
run p request "${P[@]}" --overwrite --output "$tmp/req.csr" "$key"
ran "request --overwrite --output"
run openssl req -in "$tmp/req.csr" -noout -verify
ran "... replaced the file with the request"
run p request "${P[@]}" "$key"
has "request writes to standard output by default" "$out" "-----BEGIN CERTIFICATE REQUEST-----*"

# ---------------------------------------------------------------------------
# import: a FIFO or a device is refused, not waited on.
run timeout 30 "${client_env[@]}" "$p11glue" import --module "$store" "${P[@]}" "$tmp/fifo" pkcs11:token=test
status "import of a FIFO returns at once with exit 1" 1
has "... naming the file" "$err" "*$tmp/fifo: not a regular file*"
run timeout 30 "${client_env[@]}" "$p11glue" import --module "$store" "${P[@]}" /dev/zero pkcs11:token=test
status "import of a device is refused" 1
has "... naming it" "$err" "*/dev/zero: not a regular file*"

# ---------------------------------------------------------------------------
# trust extract: the same rules (its --overwrite is -f).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/ca.key" \
	-subj /CN=Files-CA -days 2 -out "$tmp/ca.pem" 2>/dev/null
mkdir -p "$tmp/reg/modules"
printf 'module: %s\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$trust" "$tmp/ca.pem" \
	>"$tmp/reg/modules/p11glue-trust.module"
ex() { client env P11GLUE_CONFIG="$tmp/reg" "$p11glue" trust extract "$@"; }
run ex --format=pem-bundle --filter=ca-anchors "$tmp/bundle.pem"
ran "trust extract to a new file"
has "... holds the anchor" "$(cat "$tmp/bundle.pem")" "*BEGIN CERTIFICATE*"
printf 'old\n' >"$tmp/old.pem"
run ex --format=pem-bundle --filter=ca-anchors "$tmp/old.pem"
status "trust extract over an existing file is refused" 1
unchanged "... which is unchanged" "$tmp/old.pem" old
run ex --format=pem-bundle --filter=ca-anchors "$tmp/link"
status "trust extract to a symbolic link is refused" 1
unchanged "... its target is unchanged" "$tmp/precious" precious
run ex -f --format=pem-bundle --filter=ca-anchors "$tmp/link"
ran "trust extract -f to a symbolic link replaces the link"
unchanged "... not its target" "$tmp/precious" precious
[ -L "$tmp/link" ] && not_ok "... the link is a file now" || ok "... the link is a file now"
mkdir "$tmp/realdir"
ln -s "$tmp/realdir" "$tmp/dirlink"
run ex -f --format=pem-directory --filter=ca-anchors "$tmp/dirlink"
status "trust extract -f of a directory format to a link to a directory is refused" 1
same "... nothing is written into the linked directory" "$(ls -A "$tmp/realdir")" ""

finish
