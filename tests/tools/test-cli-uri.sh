#!/bin/bash
# p11glue uri parse|build: output, errors and exit codes.
set -u
p11glue=$1
. "$(dirname "$0")/tap.sh"

bad="p11glue: invalid PKCS#11 URI: "

# Valid URIs print their canonical form.
expect "parse: canonical form" 0 "pkcs11:token=My%20Token;object=k;type=private?pin-source=file:/p" "" \
	"$p11glue" uri parse "pkcs11:type=private;object=k;token=My%20Token?pin-source=file:%2Fp"
expect "parse: empty URI" 0 "pkcs11:" "" "$p11glue" uri parse "pkcs11:"
expect "parse: id fully encoded" 0 "pkcs11:id=%41%00" "" "$p11glue" uri parse "pkcs11:id=A%00"
expect "parse: option after the URI" 0 "pkcs11:token=a" "" "$p11glue" uri parse "pkcs11:token=a" --lenient

# Each error class: nothing on stdout, reason on stderr, exit 1.
expect "error: bad scheme" 1 "" "${bad}not a PKCS#11 URI" "$p11glue" uri parse "http://x"
expect "error: bad syntax" 1 "" "${bad}bad URI syntax" "$p11glue" uri parse "pkcs11:token=a b"
expect "error: no '='" 1 "" "${bad}bad URI syntax: attribute 'token' has no '='" \
	"$p11glue" uri parse "pkcs11:token"
expect "error: not an attribute name" 1 "" "${bad}unknown URI attribute: 'f.o' is no attribute name" \
	"$p11glue" uri parse "pkcs11:token=a;f.o=bar"
expect "parse: a vendor attribute of any name, a path one with a warning" 0 \
	"pkcs11:token=a;foo=bar?vendor-bbb=b" \
	"p11glue: warning: 'foo' is no attribute of RFC 7512 (a vendor's): a URI with it in the path matches nothing here" \
	"$p11glue" uri parse "pkcs11:foo=bar;token=a?vendor-bbb=b"
expect "parse: a vendor query attribute alone: no warning" 0 "pkcs11:token=a?vendor-bbb=b" "" \
	"$p11glue" uri parse "pkcs11:token=a?vendor-bbb=b"
expect "error: bad type" 1 "" "${bad}invalid URI attribute value: value of 'type'" \
	"$p11glue" uri parse "pkcs11:type=foo"
expect "error: bad library-version" 1 "" "${bad}invalid URI attribute value: value of 'library-version'" \
	"$p11glue" uri parse "pkcs11:library-version=1.x"
expect "parse: a value longer than its field is valid" 0 "pkcs11:token=123456789012345678901234567890123" "" \
	"$p11glue" uri parse "pkcs11:token=123456789012345678901234567890123"
expect "error: bad percent-encoding" 1 "" "${bad}bad percent-encoding" \
	"$p11glue" uri parse "pkcs11:id=%zz"
expect "error: duplicate" 1 "" "${bad}URI attribute given more than once: attribute 'id' given twice (at byte 14)" \
	"$p11glue" uri parse "pkcs11:id=%01;id=%02"
expect "error: pin never echoed" 1 "" "$bad" "$p11glue" uri parse "pkcs11:?pin-value=hunter2%g"
case $err in *hunter2*) not_ok "error: pin absent from message" "$err" ;; *) ok "error: pin absent from message" ;; esac

# Lenient parsing.
expect "lenient: white space" 0 "pkcs11:token=SSHKeys" "" "$p11glue" uri parse --lenient "pkcs11:token=SSH Keys"
expect "lenient: white space anywhere" 0 "pkcs11:token=ab;type=cert" "" \
	"$p11glue" uri parse --lenient $'pk cs11:to\tken=a\n b; object-type = cert\n'
expect "lenient: repeated attribute" 0 "pkcs11:token=b" "" "$p11glue" uri parse --lenient "pkcs11:token=a;token=b"
expect "lenient: still rejects bad encoding" 1 "" "${bad}bad percent-encoding" \
	"$p11glue" uri parse --lenient "pkcs11:token=%z1"

# JSON output, checked by a JSON parser.
json_check() {
	local name=$1 uri=$2 want=$3
	shift 3
	run "$p11glue" uri parse --json "$@" "$uri"
	if [ "$rc" != 0 ]; then
		not_ok "$name" "exit status $rc" "$err"
		return
	fi
	got=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))' 2>&1)
	if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name" "got:  $got" "want: $want"; fi
}
json_check "json: attributes" "pkcs11:token=My%20Token;id=%01%ff;type=cert;slot-id=03?pin-value=1" \
	'{"id": "%01%FF", "pin-value": "1", "slot-id": "3", "token": "My Token", "type": "cert"}'
json_check "json: escaping" 'pkcs11:object=%22%5C%25%0A%C3%A9' \
	'{"object": "\"\\%25%0A%C3%A9"}'
json_check "json: vendor attributes" "pkcs11:x-a=1?x-b=2" \
	'{"vendor-path": {"x-a": "1"}, "vendor-query": {"x-b": "2"}}'
json_check "json: empty" "pkcs11:" '{}'
json_check "json: unrecognized" "pkcs11:f.o=1" '{"unrecognized": true}' --lenient
expect "json: invalid URI prints nothing" 1 "" "$bad" "$p11glue" uri parse --json "pkcs11:type=x"

# Usage errors exit 2.
expect "usage: no URI" 2 "" "p11glue: expected exactly one URI" "$p11glue" uri parse
expect "usage: two URIs" 2 "" "p11glue: expected exactly one URI" "$p11glue" uri parse pkcs11: pkcs11:
expect "usage: bad option" 2 "" "p11glue: unknown option '--nope'" "$p11glue" uri parse --nope pkcs11:
expect "usage: missing value" 2 "" "p11glue: option '--token' needs a value" "$p11glue" uri build --token
expect "usage: bad top-level option" 2 "" "p11glue: unknown option '--frob'" "$p11glue" --frob
expect "usage: unknown command" 2 "" "p11glue: unknown command 'frobnicate'" "$p11glue" frobnicate
expect "usage: unknown uri command" 2 "" "p11glue: unknown command 'frob'" "$p11glue" uri frob
expect "usage: no command" 2 "" "Usage: p11glue" "$p11glue"

# Help and version.
expect "help: top level" 0 "*" "" "$p11glue" --help
case $out in *"uri "*"Exit status"*) ok "help: lists commands and exit codes" ;; *) not_ok "help: lists commands and exit codes" "$out" ;; esac
expect "help: uri" 0 "*" "" "$p11glue" uri --help
expect "help: uri parse" 0 "*" "" "$p11glue" uri parse --help
case $out in *"--json"*"--lenient"*) ok "help: uri parse lists its options" ;; *) not_ok "help: uri parse lists its options" "$out" ;; esac
expect "help: uri build" 0 "*" "" "$p11glue" uri build --help
expect "version" 0 "*" "" "$p11glue" --version
case $out in "p11glue "[0-9]*) ok "version: format" ;; *) not_ok "version: format" "$out" ;; esac

# uri build.
expect "build: canonical" 0 "pkcs11:token=My%20Token;object=key%201;type=private;id=%01%A2?module-path=/usr/lib/m.so" "" \
	"$p11glue" uri build --module-path=/usr/lib/m.so --id=01:a2 --type=private --object="key 1" --token="My Token"
expect "build: every attribute" 0 \
	"pkcs11:token=t;manufacturer=m;serial=s;model=mo;library-manufacturer=lm;library-description=ld;library-version=1.0;object=o;type=data;id=%FF;slot-description=sd;slot-manufacturer=sm;slot-id=4;x-v=1?pin-source=ps&pin-value=pv&module-name=mn&module-path=mp&x-q=2" "" \
	"$p11glue" uri build --token=t --manufacturer=m --serial=s --model=mo --library-manufacturer=lm \
	--library-description=ld --library-version=1 --object=o --type=data --id=ff --slot-description=sd \
	--slot-manufacturer=sm --slot-id=4 --pin-source=ps --pin-value=pv --module-name=mn --module-path=mp \
	--vendor=x-v=1 --vendor-query=x-q=2
expect "build: nothing" 0 "pkcs11:" "" "$p11glue" uri build
expect "build: bad type" 1 "" "p11glue: invalid --type: value of 'type' must be" "$p11glue" uri build --type=key
expect "build: bad id" 1 "" "p11glue: --id wants hex digits" "$p11glue" uri build --id=0g
expect "build: odd id" 1 "" "p11glue: --id wants hex digits" "$p11glue" uri build --id=012
expect "build: a serial longer than its field" 0 "pkcs11:serial=12345678901234567" "" \
	"$p11glue" uri build --serial=12345678901234567
expect "build: bad vendor name" 1 "" "p11glue: 'token' is not a vendor attribute name" "$p11glue" uri build --vendor=token=1
expect "build: stray argument" 2 "" "p11glue: unexpected argument 'x'" "$p11glue" uri build x

# What build prints, parse accepts unchanged.
run "$p11glue" uri build --object=$'\xc3\xa9 /?;&' --pin-source=file:/a/b
built=$out
expect "build output parses to itself" 0 "$built" "" "$p11glue" uri parse "$built"

finish
