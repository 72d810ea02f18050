#!/bin/bash
# p11glue backup and restore between two throwaway homes: a key made
# while another process holds the token open is only in the -wal file
# when the backup runs, and is restored; the same URIs name the same
# keys, whose signatures (pkcs11-tool) verify with the public keys
# exported before (openssl); trust and registry files and the setup of
# ssh come back. A changed header or body, a truncated file, a wrong
# passphrase and a full disk (a file size limit, and a small tmpfs in a
# private mount namespace when root) each fail clearly and change
# nothing; a token there already is refused, replaced or put beside;
# kill -9 in the middle of a backup and of a restore leaves both sides
# usable.
#
# Usage: test-cli-backup.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
. "$(dirname "$0")/../interop/common.sh"
need openssl pkcs11-tool python3 sqlite3 cmp

unset PKCS11_MODULE_PATH OPENSSL_CONF XDG_DATA_HOME XDG_CONFIG_HOME
secret "$tmp/pass" "correct horse battery"
secret "$tmp/wrong-pass" "wrong horse battery"
cli() { client "$p11glue" "$@"; }
# A cheap scrypt for the tests; the default is checked once.
backup() { cli backup --passphrase-source "$tmp/pass" --scrypt-log2n 10 "$@"; }
restore() { cli restore --passphrase-source "$tmp/pass" "$@"; }
# home NAME: HOME, the store, the registry of a machine of the test.
home() {
	export HOME=$tmp/$1 P11GLUE_STORE_DIR=$tmp/$1/.local/share/p11glue/store
	export P11GLUE_CONFIG=$tmp/$1/registry
	mkdir -p "$HOME"
}
# state DIR: every file below DIR with its checksum (what "untouched" means).
state() { (cd "$1" 2>/dev/null && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum); }
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# hold DB MODE: a python process holding the database open: "read" keeps a
# read transaction (the WAL is not checkpointed past it), "lock" holds an
# exclusive lock (readers and writers wait). Its PID is in $held.
hold() {
	rm -f "$tmp/held"
	python3 - "$1" "$2" "$tmp/held" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == 'lock':
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE token SET change = change WHERE id = 1")
    db.execute("COMMIT")
else:
    db.execute("BEGIN")
    db.execute("SELECT count(*) FROM object").fetchone()
open(sys.argv[3], 'w').write('ready')
time.sleep(300)
EOF
	held=$!
	pids+=("$held")
	for _ in $(seq 100); do [ -e "$tmp/held" ] && break; sleep 0.1; done
}
release() { kill "$held" 2>/dev/null; wait "$held" 2>/dev/null; }

# ---------------------------------------------------------------------------
# Usage
run cli backup --help
has "backup --help" "$out" "Usage: p11glue backup *Exit status:*"
run cli restore --help
has "restore --help" "$out" "Usage: p11glue restore *Exit status:*"
run cli restore
status "restore without a file is a usage error" 2
run cli restore --replace --beside x
status "--replace with --beside is a usage error" 2
run cli backup --scrypt-log2n 30
status "backup with a scrypt cost out of bounds is a usage error" 2

# ---------------------------------------------------------------------------
# The old machine: two tokens, keys, a trust decision, a registry file, ssh set up
home old
new_store
export P11GLUE_STORE_DIR=$tmp/store
run keygen ec-key ec:secp256r1 01
ran "an EC key pair"
run keygen rsa-key rsa:2048 02
ran "an RSA key pair"
secret "$tmp/so-pin2" "$so_pin"
cli init-token --module "$store" --label second --so-pin-source "$tmp/so-pin" >/dev/null &&
	cli init-pin --module "$store" --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" \
		pkcs11:token=second >/dev/null
token=second run keygen other ec:secp384r1 03
ran "a key on a second token"
mkdir -p "$HOME/.local/share/p11glue/trust/anchors" "$P11GLUE_CONFIG/modules"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout /dev/null \
	-subj /CN=backup-test-ca -days 30 -out "$HOME/.local/share/p11glue/trust/anchors/ca.pem" 2>/dev/null
printf 'module: opensc-pkcs11.so\n' >"$P11GLUE_CONFIG/modules/opensc.module"
run cli setup --ssh --module "$store"
ran "setup --ssh on the old machine"
for k in ec-key rsa-key; do
	cli export-pubkey --module "$store" --format pem "pkcs11:token=test;object=$k;type=public" >"$tmp/$k.pub"
done
printf 'a document\n' >"$tmp/doc"

# A key made while another process holds the token: it is in the WAL only.
hold "$P11GLUE_STORE_DIR/token-0.sqlite" read
run keygen wal-key ec:secp256r1 04
ran "a key made while another process holds the token open"
cli export-pubkey --module "$store" --format pem "pkcs11:token=test;object=wal-key;type=public" >"$tmp/wal-key.pub"
if ! grep -q wal-key "$P11GLUE_STORE_DIR/token-0.sqlite" && grep -q wal-key "$P11GLUE_STORE_DIR/token-0.sqlite-wal"; then
	ok "... it is in token-0.sqlite-wal, not yet in token-0.sqlite"
else
	not_ok "... it is in token-0.sqlite-wal, not yet in token-0.sqlite"
fi
cp "$P11GLUE_STORE_DIR/token-0.sqlite" "$tmp/plain-copy.sqlite"
run backup --output "$tmp/b.p11b" --json
ran "backup while the token is held open"
has "... its manifest lists both tokens" "$out" '*"file": "token-0.sqlite"*"label": "test"*"file": "token-1.sqlite"*"label": "second"*'
has "... the trust file" "$out" '*"trust": [*"file": "anchors/ca.pem"*'
has "... the registry file" "$out" '*"registry": [*"file": "modules/opensc.module"*'
has "... ssh configured" "$out" '*"ssh": {*"state": "configured"*'
has "... the KDF parameters" "$out" '*"name": "scrypt"*"log2n": 10*"r": 8*"p": 1*'
same "... the file is readable by its owner only" "$(stat -c %a "$tmp/b.p11b")" 600
release
run sqlite3 "$tmp/plain-copy.sqlite" "SELECT count(*) FROM object"
same "(a plain copy of the file alone lacks the key)" "$out" 4
objects_old=$(cli list-objects --login "pkcs11:token=test?module-path=$store&pin-source=$tmp/pin" 2>&1)
objects_old2=$(cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin" 2>&1)
has "(the old token lists the WAL key)" "$objects_old" "*wal-key*"

run backup --output "$tmp/b.p11b"
status "a second backup to the same name is refused" 1
has "... saying why" "$err" "*exists already*--overwrite*"
ln -s "$tmp/target" "$tmp/link.p11b"
run backup --output "$tmp/link.p11b" --overwrite
status "a backup through a symbolic link is refused" 1
[ -e "$tmp/target" ] && not_ok "... nothing was written through it" || ok "... nothing was written through it"
run cli backup --passphrase-source "$tmp/pass" --output "$tmp/default-cost.p11b" --json
has "the default scrypt cost is 2^17" "$out" '*"log2n": 17*'
cli backup --passphrase-source "$tmp/pass" --scrypt-log2n 10 --output - >"$tmp/stdout.p11b" 2>/dev/null
same "backup to standard output" "$?,$(head -c 7 "$tmp/stdout.p11b")" "0,P11GBAK"

# ---------------------------------------------------------------------------
# The new machine
home new
run restore "$tmp/b.p11b"
ran "restore into a new home"
has "... both tokens restored under their own names" "$out" "*token token-0.sqlite: 'test'*restored as token-0.sqlite*token-1.sqlite: 'second'*restored as token-1.sqlite*"
same "... the same objects under the same URIs" \
	"$(cli list-objects --login "pkcs11:token=test?module-path=$store&pin-source=$tmp/pin" 2>&1)" "$objects_old"
same "... on the second token too" \
	"$(cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin" 2>&1)" "$objects_old2"
for k in ec-key:01 wal-key:04 rsa-key:02; do
	id=${k#*:} k=${k%:*} m=ECDSA-SHA256
	[ "$k" = rsa-key ] && m=SHA256-RSA-PKCS
	run client pkcs11-tool --module "$store" --token-label test --login --pin "$pin" --sign -m "$m" \
		--id "$id" --signature-format openssl --input-file "$tmp/doc" --output-file "$tmp/$k.sig"
	ran "$k signs on the new machine (pkcs11-tool)"
	run openssl dgst -sha256 -verify "$tmp/$k.pub" -signature "$tmp/$k.sig" "$tmp/doc"
	has "... and openssl verifies it with the public key exported before" "$out" "Verified OK"
done
run cmp "$tmp/old/.local/share/p11glue/trust/anchors/ca.pem" "$HOME/.local/share/p11glue/trust/anchors/ca.pem"
ran "the trust decision is restored"
run cmp "$tmp/old/registry/modules/opensc.module" "$P11GLUE_CONFIG/modules/opensc.module"
ran "the registry file is restored"
has "ssh is set up again" "$(cat "$HOME/.ssh/config" 2>/dev/null)" "*PKCS11Provider*"
run cli status --ssh
has "... status says so" "$out" "ssh: configured*"

# ---------------------------------------------------------------------------
# A token that is here already
before=$(state "$HOME")
run restore "$tmp/b.p11b"
status "restoring again is refused (the tokens are here)" 1
has "... naming the token in the way" "$err" "*token 'test' (serial *) is here already*--replace*--beside*"
same "... nothing changed" "$(state "$HOME")" "$before"
run restore --beside "$tmp/b.p11b" --json
ran "--beside restores next to them"
has "... under new labels" "$out" "*\"label\": \"test (restored)\"*\"as\": \"token-2.sqlite\"*"
run cli list-objects --login "pkcs11:token=test%20(restored)?module-path=$store&pin-source=$tmp/pin"
has "... holding the backup's keys" "$out" "*wal-key*"
keygen extra ec:secp256r1 05 >/dev/null 2>&1
has "(a key made since)" "$(cli list-objects --login "pkcs11:token=test?module-path=$store&pin-source=$tmp/pin" 2>&1)" "*extra*"
hold "$P11GLUE_STORE_DIR/token-0.sqlite" read
run restore --replace --no-setup "$tmp/b.p11b"
ran "--replace puts the backup over a token in use"
release
after=$(cli list-objects --login "pkcs11:token=test?module-path=$store&pin-source=$tmp/pin" 2>&1)
same "... which then holds what the backup held" "$after" "$objects_old"

# ---------------------------------------------------------------------------
# Bad files, a wrong passphrase, a full disk: clear errors, nothing changed
home third
cli init-token --module "$store" --label third --so-pin-source "$tmp/so-pin" >/dev/null &&
	cli init-pin --module "$store" --so-pin-source "$tmp/so-pin" --new-pin-source "$tmp/pin" \
		pkcs11:token=third >/dev/null
token=third keygen mine ec:secp256r1 09 >/dev/null
before=$(state "$tmp/third"; state "$P11GLUE_STORE_DIR")
unchanged() { same "... nothing changed" "$(state "$tmp/third"; state "$P11GLUE_STORE_DIR")" "$before"; }
size=$(stat -c %s "$tmp/b.p11b")
flip() { cp "$tmp/b.p11b" "$tmp/bad.p11b"; printf "\\x$(printf %02x $(( $(od -An -tu1 -j "$1" -N1 "$tmp/b.p11b") ^ 1 )))" |
	dd of="$tmp/bad.p11b" bs=1 seek="$1" conv=notrunc status=none; }
flip 20
run restore "$tmp/bad.p11b"
status "a flipped byte in the header" 1
has "... is reported as damage" "$err" "*damaged: the header's checksum does not match*nothing was restored*"
unchanged
flip $((size / 2))
run restore "$tmp/bad.p11b"
status "a flipped byte in the body" 1
has "... is reported as damage" "$err" "*damaged or altered: chunk * does not verify*nothing was restored*"
unchanged
flip $((size - 1))
run restore "$tmp/bad.p11b"
status "a flipped byte in the last tag" 1
unchanged
head -c $((size - 100)) "$tmp/b.p11b" >"$tmp/bad.p11b"
run restore "$tmp/bad.p11b"
status "a truncated backup" 1
has "... is reported as truncated" "$err" "*truncated*nothing was restored*"
unchanged
cp "$tmp/b.p11b" "$tmp/bad.p11b"; printf 'x' >>"$tmp/bad.p11b"
run restore "$tmp/bad.p11b"
status "bytes after the end" 1
has "... are reported" "$err" "*data after its last chunk*"
run cli restore --passphrase-source "$tmp/wrong-pass" "$tmp/b.p11b"
status "a wrong passphrase" 1
has "... is reported as such" "$err" "*wrong passphrase*nothing was restored*"
unchanged
printf 'not a backup at all\n' >"$tmp/bad.p11b"
run restore "$tmp/bad.p11b"
has "another file is not a backup" "$err" "*not a p11glue backup*"
run bash -c 'ulimit -f 16; exec "$@"' - "$p11glue" restore --passphrase-source "$tmp/pass" "$tmp/b.p11b"
status "a file size limit while restoring" 1
has "... is reported" "$err" "*File too large*nothing was restored*"
unchanged
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
	mkdir -p "$tmp/small"
	run unshare --mount bash -c '
		mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
		cp -a "$2/." "$1/"
		before=$(cd "$1" && find . -type f | sort | xargs sha256sum)
		"$3" restore --store "$1" --passphrase-source "$4" "$5"
		rc=$?
		after=$(cd "$1" && find . -type f | sort | xargs sha256sum)
		[ "$before" = "$after" ] || { echo "the store changed"; exit 98; }
		exit $rc' - "$tmp/small" "$P11GLUE_STORE_DIR" "$p11glue" "$tmp/pass" "$tmp/b.p11b"
	status "a full disk (64 KiB tmpfs) while restoring: an error, the store unchanged" 1
	has "... is reported" "$err" "*No space left on device*nothing was restored*"
else
	skip "a full disk while restoring" "needs root and unshare --mount"
	skip "... is reported" "needs root and unshare --mount"
fi
unchanged

# ---------------------------------------------------------------------------
# kill -9 in the middle
# A backup stopped while the second token is locked: the first token's
# chunks are written, the file is not at its name.
home kill
export P11GLUE_STORE_DIR=$tmp/store
sqlite3 "$P11GLUE_STORE_DIR/token-0.sqlite" "INSERT INTO object (uid, class, private, version, attrs)
	SELECT randomblob(16), class, private, version, attrs FROM object WHERE private = 0;" 2>/dev/null
for _ in 1 2 3 4 5 6 7 8; do
	sqlite3 "$P11GLUE_STORE_DIR/token-0.sqlite" "INSERT INTO object (uid, class, private, version, attrs)
		SELECT randomblob(16), class, private, version, attrs FROM object WHERE private = 0;"
done
hold "$P11GLUE_STORE_DIR/token-1.sqlite" lock
# Started without the time bound's wrapper: $! is p11glue itself.
"${client_env[@]}" "$p11glue" backup --passphrase-source "$tmp/pass" --scrypt-log2n 10 \
	--output "$tmp/killed.p11b" >/dev/null 2>&1 &
bp=$!
for _ in $(seq 200); do
	t=$(ls "$tmp"/.killed.p11b.* 2>/dev/null | head -1)
	[ -n "$t" ] && [ "$(stat -c %s "$t")" -gt 262144 ] && break
	sleep 0.05
done
kill -9 "$bp"; wait "$bp" 2>/dev/null
has "a backup killed with -9 in the middle had written chunks" "$(stat -c %s "$t" 2>/dev/null)" "[0-9][0-9][0-9][0-9][0-9][0-9]*"
[ -e "$tmp/killed.p11b" ] && not_ok "... and left no file at its name" || ok "... and left no file at its name"
release
run cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin"
has "... the store is usable" "$out" "*other*"
run backup --output "$tmp/killed.p11b"
ran "... and the next backup succeeds"
# The file cut right after a chunk that is not the last.
head -c $((88 + 4 + 262144 + 16)) "$tmp/killed.p11b" >"$tmp/bad.p11b"
run restore "$tmp/bad.p11b"
status "a backup cut at the end of a chunk that is not the last" 1
has "... is reported as truncated" "$err" "*truncated*"
# A large store: progress on a terminal (script gives one), none otherwise.
for _ in 1 2 3 4; do
	sqlite3 "$P11GLUE_STORE_DIR/token-0.sqlite" "INSERT INTO object (uid, class, private, version, attrs)
		SELECT randomblob(16), class, private, version, attrs FROM object WHERE private = 0;"
done
run script -qec "$p11glue backup --passphrase-source $tmp/pass --scrypt-log2n 10 --output $tmp/big.p11b" /dev/null
has "a backup of a large store shows its progress on a terminal" "$out" "*p11glue: backup: *MiB written*"
run backup --output "$tmp/big2.p11b"
lacks "... and not when standard error is no terminal" "$err" "*MiB written*"

# A restore stopped while it waits to replace a locked token.
home kill-restore
restore --no-setup "$tmp/b.p11b" >/dev/null 2>&1
token=second keygen extra2 ec:secp256r1 0a >/dev/null 2>&1
second_before=$(cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin" 2>&1)
has "(a key made on the restored second token)" "$second_before" "*extra2*"
hold "$P11GLUE_STORE_DIR/token-1.sqlite" lock
"${client_env[@]}" "$p11glue" restore --passphrase-source "$tmp/pass" --replace --no-setup \
	"$tmp/b.p11b" >/dev/null 2>&1 &
rp=$!
for _ in $(seq 200); do
	[ -e "$(ls -d "$P11GLUE_STORE_DIR"/.restore-* 2>/dev/null | head -1)/token-1.sqlite" ] && break
	sleep 0.05
done
sleep 0.5
kill -9 "$rp"; wait "$rp" 2>/dev/null
release
has "a restore killed with -9 while replacing a token left its staging directory" "$(ls -a "$P11GLUE_STORE_DIR")" "*.restore-*"
for t in 0 1; do
	run sqlite3 "$P11GLUE_STORE_DIR/token-$t.sqlite" "PRAGMA integrity_check"
	same "... token-$t.sqlite is intact" "$out" ok
done
same "... the token it waited for is as it was" \
	"$(cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin" 2>&1)" "$second_before"
run cli list-objects --login "pkcs11:token=test?module-path=$store&pin-source=$tmp/pin"
has "... the store is usable" "$out" "*wal-key*"
run restore --replace --no-setup "$tmp/b.p11b"
ran "... the next restore succeeds"
lacks "... and takes the dead one's staging directory away" "$(ls -a "$P11GLUE_STORE_DIR")" "*.restore-*"
same "... the token is the backup's again" \
	"$(cli list-objects --login "pkcs11:token=second?module-path=$store&pin-source=$tmp/pin" 2>&1)" "$objects_old2"

finish
