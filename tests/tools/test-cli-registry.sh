#!/bin/bash
# p11glue list-modules, list-tokens, list-objects, list-mechanisms and
# print-config against Debian's real modules (softhsm2 with a private token,
# opensc without a card, p11-kit-trust), compared with p11-kit and
# pkcs11-tool where they show the same things.
#
# Usage: test-cli-registry.sh P11GLUE
# Environment (set by meson, found by hand otherwise):
#   P11GLUE_TEST_SOFTHSM, P11GLUE_TEST_OPENSC, P11GLUE_TEST_P11KIT_TRUST
set -u
p11glue=$(realpath -e "$1") || exit 1
. "$(dirname "$0")/tap.sh"

# As tap.sh's, but a diagnostic of several lines stays a TAP comment.
not_ok() {
	local arg line
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift
	for arg in "$@"; do
		while IFS= read -r line; do printf '#   %s\n' "$line"; done <<<"$arg"
	done
}

bound() { timeout 60 "$@"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# $3 is a glob pattern on purpose.
# shellcheck disable=SC2254
has() {
	case $2 in
	$3) ok "$1" ;;
	*) not_ok "$1" "output: $2" "want pattern: $3" ;;
	esac
}
# shellcheck disable=SC2254
lacks() {
	case $2 in
	$3) not_ok "$1" "output: $2" "unwanted pattern: $3" ;;
	*) ok "$1" ;;
	esac
}
# same NAME GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi
}
# status NAME RC: the last run exited with RC.
status() {
	if [ "$rc" = "$2" ]; then ok "$1"; else not_ok "$1" "exit status $rc, want $2" "stdout: $out" "stderr: $err"; fi
}
# pyjson NAME SCRIPT ARGS...: python3 reads $out as JSON into `doc` and runs
# SCRIPT, which prints nothing when the check holds, else what is wrong.
pyjson() {
	local name=$1 script=$2 msg
	shift 2
	msg=$(printf '%s' "$out" | python3 -c "
import json, sys, urllib.parse
def dec(s):
    # --json strings carry % and bytes outside printable ASCII as %XX.
    return urllib.parse.unquote(s, errors='surrogateescape') if isinstance(s, str) else s
args = sys.argv[1:]
try:
    doc = json.load(sys.stdin)
except ValueError as e:
    print('not JSON:', e); sys.exit(0)
$script" "$@" 2>&1)
	if [ -z "$msg" ]; then ok "$name"; else not_ok "$name" "$msg"; fi
}

find_lib() {
	for f in "$@"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
softhsm=${P11GLUE_TEST_SOFTHSM:-$(find_lib /usr/lib/*-linux-gnu/softhsm/libsofthsm2.so /usr/lib/softhsm/libsofthsm2.so)}
opensc=${P11GLUE_TEST_OPENSC:-$(find_lib /usr/lib/*-linux-gnu/pkcs11/opensc-pkcs11.so)}
trust=${P11GLUE_TEST_P11KIT_TRUST:-$(find_lib /usr/lib/*-linux-gnu/pkcs11/p11-kit-trust.so)}
if [ -z "$softhsm" ] || [ -z "$opensc" ] || [ -z "$trust" ] ||
	! command -v pkcs11-tool >/dev/null || ! command -v openssl >/dev/null; then
	echo "1..0 # SKIP needs softhsm2, opensc, p11-kit-modules and openssl"
	exit 0
fi

# The registry: the three modules as Debian's .module files describe them
# (opensc and p11-kit-trust by file name, found in the module path).
cfg=$tmp/conf
mkdir -p "$tmp/tokens" "$cfg/modules" "$tmp/empty"
: >"$tmp/empty.conf"
printf 'directories.tokendir = %s\nobjectstore.backend = file\n' "$tmp/tokens" >"$tmp/softhsm2.conf"
export SOFTHSM2_CONF="$tmp/softhsm2.conf"
export P11GLUE_CONFIG="$cfg"
printf '# softhsm2\n\nmodule: %s\n' "$softhsm" >"$cfg/modules/softhsm2.module"
printf '# opensc\nmodule: %s\n' "$(basename "$opensc")" >"$cfg/modules/opensc-pkcs11.module"
cat >"$cfg/modules/p11-kit-trust.module" <<EOF
# As Debian ships it.
module: $(basename "$trust")
priority: 1
trust-policy: yes
x-trust-lookup: pkcs11:library-description=PKCS%2311%20Kit%20Trust%20Module
disable-in: p11-kit-proxy
x-init-reserved:
EOF

# A token with a key pair and a certificate, made directly on SoftHSM.
so_pin=12345678
pin=87654321
direct() { bound pkcs11-tool --module "$softhsm" "$@" >/dev/null 2>&1; }
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$tmp/cert-key.pem" -subj "/CN=p11glue registry test" -days 2 \
	-outform DER -out "$tmp/cert.der" 2>/dev/null
if ! direct --init-token --label t1 --so-pin "$so_pin" ||
	! direct --token-label t1 --init-pin --login --so-pin "$so_pin" --new-pin "$pin" ||
	! direct --token-label t1 --login --pin "$pin" --keypairgen --key-type EC:prime256v1 --id 02 --label k1 ||
	! direct --token-label t1 --login --pin "$pin" --write-object "$tmp/cert.der" --type cert --id 01 --label c1; then
	echo "Bail out! cannot set up the SoftHSM2 token"
	exit 1
fi

# p11-kit as the reference: as root it reads only the system locations,
# so a private mount namespace shows it (and p11glue's built-in locations)
# a given modules directory instead of the system's.
in_ns() {
	local mods=$1
	shift
	# shellcheck disable=SC2016 # the inner shell expands its arguments
	bound unshare --mount -- /bin/sh -c '
		mount --make-rprivate / || exit 97
		mount --bind "$1" /usr/share/p11-kit/modules || exit 97
		if [ -d /etc/pkcs11/modules ]; then mount --bind "$2" /etc/pkcs11/modules || exit 97; fi
		if [ -f /etc/pkcs11/pkcs11.conf ]; then mount --bind "$3" /etc/pkcs11/pkcs11.conf || exit 97; fi
		shift 3
		exec "$@"' ns "$mods" "$tmp/empty" "$tmp/empty.conf" "$@"
}
have_ns=false
if [ "$(id -u)" = 0 ] && command -v p11-kit >/dev/null && [ -d /usr/share/p11-kit/modules ] &&
	in_ns "$cfg/modules" true 2>/dev/null; then
	have_ns=true
fi

# ---------------------------------------------------------------------------
# list-modules
run "$p11glue" list-modules
status "list-modules exits 0" 0
same "list-modules writes nothing on stderr" "$err" ""
printf '%s\n' "$out" >"$tmp/modules.txt"
modules_text=$out
same "list-modules lists the three modules, by priority then name" \
	"$(printf '%s\n' "$out" | grep -v '^ ' | cut -d: -f1 | tr '\n' ' ')" \
	"p11-kit-trust opensc-pkcs11 softhsm2 "
for want in "softhsm2: $softhsm" "opensc-pkcs11: $(basename "$opensc")" "p11-kit-trust: $(basename "$trust")"; do
	has "list-modules shows ${want%%:*} with its module file" "$out" "*$want
*"
done
has "list-modules shows SoftHSM's token with its URI" "$out" \
	"*softhsm2:*token: t1
        uri: pkcs11:token=t1;manufacturer=SoftHSM%20project;serial=*;model=SoftHSM%20v2
*"
if $have_ns; then
	run in_ns "$cfg/modules" env -u P11GLUE_CONFIG p11-kit list-modules
	printf '%s\n' "$out" >"$tmp/p11-kit.txt"
	# p11glue adds each token's URI, and prints firmware-version 0.0,
	# which p11-kit leaves out.
	grep -v -e '^        uri: ' -e '^        firmware-version: 0\.0$' "$tmp/modules.txt" >"$tmp/ours.txt"
	if [ "$rc" = 0 ] && diff -u "$tmp/p11-kit.txt" "$tmp/ours.txt" >"$tmp/diff"; then
		ok "list-modules shows what p11-kit list-modules shows for the same files"
	else
		not_ok "list-modules shows what p11-kit list-modules shows for the same files" \
			"exit status of p11-kit: $rc" "$(cat "$tmp/diff")" "$err"
	fi
	run in_ns "$cfg/modules" env -u P11GLUE_CONFIG "$p11glue" list-modules
	same "without P11GLUE_CONFIG, p11glue reads p11-kit's package directory" "$out" "$modules_text"
else
	has "library descriptions as Debian 12's modules report them (no p11-kit namespace here)" "$out" \
		"p11-kit-trust:*library-description: PKCS#11 Kit Trust Module*opensc-pkcs11:*library-description: OpenSC smartcard framework*softhsm2:*library-description: Implementation of PKCS11*"
	skip "without P11GLUE_CONFIG, p11glue reads p11-kit's package directory" "needs root and unshare"
fi

# --json: the same modules, library information and tokens as the text.
run "$p11glue" list-modules --json
status "list-modules --json exits 0" 0
cat >"$tmp/compare.py" <<'EOF'
def parse_text(path):
    """The text of list-modules as [{name, module, key: value, tokens}]."""
    mods, mod, tok = [], None, None
    for line in open(path, encoding='utf-8', errors='surrogateescape').read().split('\n'):
        if not line:
            continue
        ind = len(line) - len(line.lstrip(' '))
        key, _, value = line[ind:].partition(':')
        value = value[1:] if value.startswith(' ') else value
        if ind == 0:
            mod = {'name': key, 'module': value, 'tokens': []}
            mods.append(mod)
        elif ind == 4 and key == 'token':
            tok = {'label': value, 'flags': []}
            mod['tokens'].append(tok)
        elif ind == 4:
            mod[key] = value
        elif ind == 8 and key != 'flags':
            tok[key] = value
        elif ind == 15:
            tok['flags'].append(line.strip())
    return mods

def compare(text, doc):
    problems = []
    if [m['name'] for m in text] != [m.get('name') for m in doc]:
        return ['modules: text %s, json %s' % ([m['name'] for m in text], [m.get('name') for m in doc])]
    for t, j in zip(text, doc):
        for key, value in t.items():
            if key == 'tokens':
                continue
            if dec(j.get(key)) != value:
                problems.append('%s: %s: text %r, json %r' % (t['name'], key, value, j.get(key)))
        jt = j.get('tokens', [])
        if len(t['tokens']) != len(jt):
            problems.append('%s: %d tokens in text, %d in json' % (t['name'], len(t['tokens']), len(jt)))
            continue
        for tt, jj in zip(t['tokens'], jt):
            for key, value in tt.items():
                # URIs are text in both forms; other values are bytes (%XX in JSON).
                got = [dec(x) for x in jj.get(key, [])] if key == 'flags' else jj.get(key) if key == 'uri' else dec(jj.get(key))
                if got != value:
                    problems.append('%s: token %r: %s: text %r, json %r' % (t['name'], tt['label'], key, value, jj.get(key)))
    return problems
EOF
pyjson "list-modules --json has the content of the text output" "
exec(open(args[0]).read())
print('\n'.join(compare(parse_text(args[1]), doc)))" "$tmp/compare.py" "$tmp/modules.txt"
pyjson "list-modules --json: opensc without a card has no token" "
m = [m for m in doc if m['name'] == 'opensc-pkcs11']
if not m or m[0].get('tokens') != [] or 'error' in m[0]: print(m)"
json_uri=$(printf '%s' "$out" | python3 -c '
import json, sys
for m in json.load(sys.stdin):
    for t in m.get("tokens", []):
        if t["label"] == "t1": print(t["uri"])' 2>/dev/null)
run "$p11glue" list-tokens "$json_uri"
has "the token URI from --json selects that token" "$out" "token: t1
*"

# A broken module file: file:line on stderr, that module unusable, the
# others as before.
printf 'module: %s\nthis line has no colon\n' "$softhsm" >"$cfg/modules/broken.module"
run "$p11glue" list-modules
status "list-modules with a broken module file exits 0" 0
has "the broken file is reported with file and line" "$err" "*$cfg/modules/broken.module:2: *"
has "... and the module is shown unusable" "$out" "*
broken: $softhsm
    error: *
softhsm2:*"
same "... the other modules are listed as before" \
	"$(printf '%s\n' "$out" | sed '/^broken:/,/^[^ b]/{/^broken:/d;/^ /d}')" "$modules_text"
run "$p11glue" list-tokens pkcs11:token=t1
same "... and SoftHSM's token is not listed twice" "$(printf '%s\n' "$out" | grep -c '^token: t1$')" 1
run "$p11glue" list-modules --json
pyjson "list-modules --json: the broken module has an error and no tokens" "
m = [m for m in doc if m['name'] == 'broken']
if len(m) != 1 or 'error' not in m[0] or m[0].get('tokens'): print(m)
if len(doc) != 4: print([m['name'] for m in doc])"
rm "$cfg/modules/broken.module"

# A module file without "module:" disables that module.
printf '# nothing to load\n' >"$cfg/modules/gone.module"
run "$p11glue" list-modules
lacks "a module file without module: is not loaded" "$out" "*gone*"
rm "$cfg/modules/gone.module"

# A module file holding one word and no "module:" (it crashed every
# command): reported once by name, the other modules as before.
printf 'nokey\n' >"$cfg/modules/nokey.module"
run "$p11glue" list-tokens pkcs11:token=t1
status "list-tokens with a one-word module file exits 0" 0
same "... lists SoftHSM's token" "$(printf '%s\n' "$out" | grep -c '^token: t1$')" 1
same "... and names the file in one line of stderr" \
	"$(printf '%s\n' "$err" | grep -c "$cfg/modules/nokey.module")" 1
rm "$cfg/modules/nokey.module"

# ---------------------------------------------------------------------------
# list-tokens
tokens_of() { printf '%s\n' "$out" | sed -n 's/^token: //p' | tr '\n' '|'; }
run "$p11glue" list-tokens
status "list-tokens exits 0" 0
has "list-tokens lists the trust module's and SoftHSM's tokens" "$(tokens_of)" "*System Trust|*t1||"
has "list-tokens names each token's module" "$out" "*token: t1
*    module: softhsm2
*"
run "$p11glue" list-tokens pkcs11:token=t1
same "list-tokens pkcs11:token=t1" "$(tokens_of)" "t1|"
run "$p11glue" list-tokens "pkcs11:?module-name=softhsm2"
same "list-tokens ?module-name=softhsm2" "$(tokens_of)" "t1||"
run "$p11glue" list-tokens "pkcs11:?module-path=$softhsm"
same "list-tokens ?module-path=SoftHSM" "$(tokens_of)" "t1||"
run "$p11glue" list-tokens "pkcs11:model=p11-kit-trust"
same "list-tokens model=p11-kit-trust" "$(tokens_of)" "System Trust|"
run "$p11glue" list-tokens "pkcs11:?module-name=opensc-pkcs11"
same "list-tokens of opensc without a card: none" "$out" ""
status "... and exits 0" 0
run "$p11glue" list-tokens pkcs11:token=nope
same "list-tokens with a URI that matches nothing prints nothing" "$out" ""
status "... and exits 0 (documented: only list-objects fails on no match)" 0
run "$p11glue" list-tokens "pkcs11:?module-name=nope"
same "list-tokens of an unknown module name prints nothing" "$out" ""
run "$p11glue" list-tokens "pkcs11:?module-path=$tmp/no-such-module.so"
status "list-tokens ?module-path= of a missing file exits 1" 1
has "... saying why" "$err" "*no-such-module.so*"
run "$p11glue" list-tokens --json pkcs11:token=t1
pyjson "list-tokens --json pkcs11:token=t1" "
if [(t['label'], t['module'], t['model']) for t in doc] != [('t1', 'softhsm2', 'SoftHSM v2')]: print(doc)"
run "$p11glue" list-tokens --json pkcs11:token=nope
same "list-tokens --json with no match prints []" "$out" "[]"
for bad in "pkcs11:token=a b" "pkcs11:f.o=bar" "http://x" "pkcs11:id=%zz"; do
	run "$p11glue" list-tokens "$bad"
	status "list-tokens '$bad' exits 1" 1
	has "... as an invalid URI" "$err" "p11glue: invalid PKCS#11 URI: *"
done
# RFC 7512: a vendor path attribute (any name) makes the URI match
# nothing; one in the query is ignored.
run "$p11glue" list-tokens "pkcs11:token=t1;vendor-aaa=1"
same "list-tokens with a vendor path attribute lists nothing" "$out" ""
run "$p11glue" list-tokens "pkcs11:token=t1?vendor-bbb=1"
same "... with a vendor query attribute lists the token" "$(printf '%s\n' "$out" | grep -c '^token: t1$')" 1

# ---------------------------------------------------------------------------
# list-objects
# "label:type ..." of the objects listed, sorted (SoftHSM's order varies).
objects_of() {
	printf '%s\n' "$out" | sed -n 's/^Object: .*;object=\([^;]*\);type=\([^;]*\).*/\1:\2/p' | sort | tr '\n' ' '
}
run "$p11glue" list-objects pkcs11:token=t1
status "list-objects exits 0" 0
same "list-objects without --login: the certificate and the public key" "$(objects_of)" "c1:cert k1:public "
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-value=$pin"
status "list-objects --login with pin-value exits 0" 0
same "... and shows the private key too" "$(objects_of)" "c1:cert k1:private k1:public "
run "$p11glue" list-objects "pkcs11:token=t1?pin-value=$pin"
same "a PIN in the URI without --login does not log in" "$(objects_of)" "c1:cert k1:public "
run "$p11glue" list-objects --login "pkcs11:token=t1;type=private?pin-value=$pin"
same "list-objects type=private" "$(objects_of)" "k1:private "
run "$p11glue" list-objects "pkcs11:token=t1;object=c1"
same "list-objects object=c1" "$(objects_of)" "c1:cert "
run "$p11glue" list-objects "pkcs11:token=t1;id=%02"
same "list-objects id=%02" "$(objects_of)" "k1:public "
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-value=00000000"
status "list-objects --login with a wrong PIN exits 1" 1
has "... with C_Login's error" "$err" "*CKR_PIN_INCORRECT*"
same "... and lists nothing" "$out" ""
lacks "... and does not echo the PIN" "$err" "*00000000*"

printf '%s\n' "$pin" >"$tmp/pin"
chmod 600 "$tmp/pin"
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-source=file:$tmp/pin"
status "list-objects --login with a 0600 pin-source file exits 0" 0
same "... and shows the private key" "$(objects_of)" "c1:cert k1:private k1:public "
chmod 644 "$tmp/pin"
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-source=file:$tmp/pin"
status "a 0644 pin-source file is refused with exit 1" 1
has "... and a message" "$err" "p11glue: *$tmp/pin*permissions*"
same "... and lists nothing" "$out" ""
lacks "... and does not echo the PIN" "$err" "*$pin*"
chmod 600 "$tmp/pin"
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-source=file:$tmp/no-such-pin"
status "a missing pin-source file: exit 1" 1
ln -s "$tmp/pin" "$tmp/pin-link"
run "$p11glue" list-objects --login "pkcs11:token=t1?pin-source=file:$tmp/pin-link"
status "a pin-source that is a symbolic link: exit 1" 1
run "$p11glue" list-objects --login "pkcs11:token=t1" </dev/null
status "--login with no PIN source and no terminal: exit 1" 1

run "$p11glue" list-objects pkcs11:token=nope
status "list-objects with no token matched exits 1" 1
same "... saying so" "$err" "p11glue: no token matches the URI"
run "$p11glue" list-objects "pkcs11:token=t1;object=nope"
status "list-objects of a token without such an object exits 0" 0
same "... and lists nothing" "$out" ""
run "$p11glue" list-objects "pkcs11:type=bogus"
status "list-objects with a bad URI exits 1" 1
run "$p11glue" list-objects
status "list-objects without a URI exits 2" 2

run "$p11glue" list-objects --login --json "pkcs11:token=t1?pin-value=$pin"
status "list-objects --json exits 0" 0
pyjson "list-objects --json: classes, labels and ids" "
got = sorted((o['class'], o['label'], o['id']) for o in doc)
want = [('CKO_CERTIFICATE', 'c1', '01'), ('CKO_PRIVATE_KEY', 'k1', '02'), ('CKO_PUBLIC_KEY', 'k1', '02')]
if got != want: print(got)"
cert_uri=$(printf '%s' "$out" | python3 -c '
import json, sys
print([o["uri"] for o in json.load(sys.stdin) if o["class"] == "CKO_CERTIFICATE"][0])' 2>/dev/null)
run "$p11glue" list-objects "$cert_uri"
same "the object URI from --json selects that object" "$(objects_of)" "c1:cert "

# ---------------------------------------------------------------------------
# list-mechanisms, against what pkcs11-tool reads from SoftHSM directly.
run "$p11glue" list-mechanisms pkcs11:token=t1
status "list-mechanisms exits 0" 0
has "list-mechanisms shows CKM_ECDSA for SoftHSM" "$out" "*
    CKM_ECDSA (0x00001041): key size 112-521, sign verify ec-f-p ec-named-curve ec-uncompress
*"
printf '%s\n' "$out" >"$tmp/mech.txt"
bound pkcs11-tool --module "$softhsm" --token-label t1 -M >"$tmp/mech-tool.txt" 2>/dev/null
cat >"$tmp/mech.py" <<'EOF'
import re, sys
from collections import Counter
basic = {'encrypt', 'decrypt', 'digest', 'sign', 'verify', 'wrap', 'unwrap', 'derive',
         'generate', 'generate-key-pair', 'sign-recover', 'verify-recover', 'hw'}
ours = Counter()
for line in open(sys.argv[1]):
    m = re.match(r'    (\S+) \((0x[0-9a-f]+)\): key size \d+-\d+,(.*)', line)
    if m:
        ours[frozenset(m.group(3).split()) & basic] += 1
tool = Counter()
for line in open(sys.argv[2]):
    if line.startswith('  '):
        parts = [p.strip() for p in line.split(',')]
        tool[frozenset(p.replace('_', '-') for p in parts[1:]) & basic] += 1
if ours != tool or not ours:
    for k in sorted(set(ours) | set(tool), key=sorted):
        if ours[k] != tool[k]:
            print('%s: %d in list-mechanisms, %d in pkcs11-tool -M' % (' '.join(sorted(k)) or '-', ours[k], tool[k]))
EOF
msg=$(python3 "$tmp/mech.py" "$tmp/mech.txt" "$tmp/mech-tool.txt" 2>&1)
if [ -z "$msg" ]; then
	ok "each mechanism's flags as pkcs11-tool -M reads them from SoftHSM"
else
	not_ok "each mechanism's flags as pkcs11-tool -M reads them from SoftHSM" "$msg"
fi
run "$p11glue" list-mechanisms --json pkcs11:token=t1
pyjson "list-mechanisms --json: CKM_ECDSA signs and verifies" "
ms = [m for t in doc for m in t['mechanisms'] if m['mechanism'] == 'CKM_ECDSA']
if len(ms) != 1 or not {'sign', 'verify'} <= set(ms[0]['flags']) or 'encrypt' in ms[0]['flags']: print(ms)"
run "$p11glue" list-mechanisms pkcs11:token=nope
status "list-mechanisms with no token matched exits 1" 1
run "$p11glue" list-mechanisms
status "list-mechanisms without a URI exits 2" 2

# ---------------------------------------------------------------------------
# print-config
cat >"$cfg/pkcs11.conf" <<'EOF'
# global settings
log-calls: no
managed: yes
x-vendor: kept
EOF
printf 'module: %s\ncritical: no\nx-custom: value with spaces\n' "$softhsm" >"$cfg/modules/softhsm2.module"
run "$p11glue" print-config
status "print-config exits 0" 0
has "print-config shows the global settings" "$out" "global (user-config: *):
    log-calls: no
    managed: yes
    x-vendor: kept
*"
has "print-config shows each module's file and settings" "$out" "*
softhsm2:
    # $cfg/modules/softhsm2.module
    module: $softhsm
    critical: no
    x-custom: value with spaces*"
has "print-config keeps x-* keys of a module" "$out" "*p11-kit-trust:
    # $cfg/modules/p11-kit-trust.module
*    x-trust-lookup: pkcs11:library-description=PKCS%2311%20Kit%20Trust%20Module
*"
run "$p11glue" print-config --json
status "print-config --json exits 0" 0
pyjson "print-config --json has the same settings" "
g = doc['global']; m = doc['modules']
if g != {'log-calls': 'no', 'managed': 'yes', 'x-vendor': 'kept'}: print('global', g)
s = m['softhsm2']
if s['file'] != '$cfg/modules/softhsm2.module' or s['settings'] != {'module': '$softhsm', 'critical': 'no', 'x-custom': 'value with spaces'}: print(s)
if dec(m['p11-kit-trust']['settings'].get('x-trust-lookup')) != 'pkcs11:library-description=PKCS%2311%20Kit%20Trust%20Module': print(m['p11-kit-trust'])
if sorted(m) != ['opensc-pkcs11', 'p11-kit-trust', 'softhsm2']: print(sorted(m))"
rm "$cfg/pkcs11.conf"
printf 'module: %s\n' "$softhsm" >"$cfg/modules/softhsm2.module"

# User and system files merged: a user who is not root, p11-kit's package
# directory (in a private mount namespace) and ~/.config/pkcs11, as
# pkcs11.conf(5) describes: a user file overrides the package file's keys
# and inherits the others; a blank "module:" disables the module.
# p11-kit, run the same way, must agree.
user_ok=false
if $have_ns && command -v setpriv >/dev/null; then
	user=$tmp/user/home/.config/pkcs11/modules
	mkdir -p "$user" "$tmp/user/pkg"
	cp "$cfg/modules/"*.module "$tmp/user/pkg/"
	printf '# off for this user\nmodule:\n' >"$user/softhsm2.module"
	printf 'module: onepin-%s\n' "$(basename "$opensc")" >"$user/opensc-pkcs11.module"
	printf 'critical: no\n' >"$user/p11-kit-trust.module"
	chmod 711 "$tmp"
	chmod -R a+rX "$tmp/user"
	as_user() {
		in_ns "$tmp/user/pkg" env -u P11GLUE_CONFIG HOME="$tmp/user/home" \
			setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	}
	if [ -f "$(dirname "$opensc")/onepin-$(basename "$opensc")" ] && other_user; then
		user_ok=true
		# That user runs a copy of the build it can reach.
		user_cli=$(staged "$p11glue")
	fi
fi
if $user_ok; then
	run as_user "$user_cli" print-config
	has "print-config as a user: user-config merge" "$out" "global (user-config: merge):*"
	run as_user "$user_cli" print-config --json
	pyjson "print-config as a user: settings merged as p11-kit merges them" "
m = {k: v['settings'] for k, v in doc['modules'].items()}
if m.get('opensc-pkcs11', {}).get('module') != 'onepin-' + args[0]: print('user module: not used:', m.get('opensc-pkcs11'))
t = m.get('p11-kit-trust', {})
if t.get('critical') != 'no' or t.get('module') != args[1] or t.get('trust-policy') != 'yes': print('p11-kit-trust not merged:', t)
if m.get('softhsm2', {}).get('module'): print('blank module: did not disable softhsm2:', m.get('softhsm2'))" \
		"$(basename "$opensc")" "$(basename "$trust")"
	run as_user "$user_cli" list-modules
	ours=$out
	run as_user p11-kit list-modules
	same "list-modules as a user: the modules p11-kit loads" \
		"$(printf '%s\n' "$ours" | grep -v '^ ')" "$(printf '%s\n' "$out" | grep -v '^ ')"
	run in_ns "$tmp/user/pkg" env -u P11GLUE_CONFIG HOME="$tmp/user/home" "$p11glue" print-config
	has "as root the user's files are ignored (user-config: none)" "$out" "global (user-config: none):*"
	lacks "... none of them is read" "$out" "*/.config/*"
else
	for t in "merge" "settings merged" "modules p11-kit loads" "root ignores user files" "none read"; do
		skip "print-config as a user: $t" \
			"needs root, unshare and onepin-opensc-pkcs11.so${other_user_why:+; $other_user_why}"
	done
fi

# ---------------------------------------------------------------------------
# Usage and help.
for cmd in list-modules list-tokens list-objects list-mechanisms print-config; do
	run "$p11glue" "$cmd" --help
	status "$cmd --help exits 0" 0
	has "$cmd --help shows its usage" "$out" "Usage: p11glue $cmd *Exit status*"
	run "$p11glue" "$cmd" --nope
	status "$cmd --nope exits 2" 2
	has "... naming the option" "$err" "p11glue: unknown option '--nope'*"
done
run "$p11glue" list-tokens pkcs11:token=a pkcs11:token=b
status "list-tokens with two URIs exits 2" 2
run "$p11glue" list-modules pkcs11:
status "list-modules with an argument exits 2" 2
run "$p11glue" print-config extra
status "print-config with an argument exits 2" 2
run "$p11glue" --help
has "p11glue --help lists the registry commands" "$out" \
	"*list-modules*list-tokens*list-objects*list-mechanisms*print-config*"

finish
