#!/bin/bash
# make-fixtures.sh DIR: generates a small PKI with openssl for the trust
# tests. Everything is made fresh (new keys) each run; names are fixed.
#
#   root-a.pem     anchor CA (SKI, KU certSign+cRLSign, basicConstraints CA)
#   inter-a.pem    intermediate under root-a
#   leaf-a1.pem    leaf under inter-a (serverAuth), later revoked by crl-a
#   leaf-a2.pem    leaf under inter-a, not revoked
#   root-b.pem     anchor that is also blocklisted (distrust wins)
#   leaf-b.pem     leaf under root-b
#   root-c.pem     CA without extensions (v1 certificate)
#   leaf-c.pem     leaf under root-c, distrusted itself
#   root-e.pem     expired anchor;  leaf-e.pem under it
#   root-u.pem     unknown root (never configured); leaf-u.pem under it
#   root-t.pem     TRUSTED CERTIFICATE rejecting emailProtection, trusting serverAuth
#   leaf-t.pem     leaf under root-t
#   crl-inter-a.pem  CRL of inter-a revoking leaf-a1
#   crl-bad.pem      CRL for inter-a signed by the wrong key (ignored)
#   crl-expired.pem  CRL of inter-a whose nextUpdate has passed (ignored)
#   junk-bundle.pem  a bundle with text, a corrupt block and good blocks
#
# Stapled extensions and other persistence-format objects:
#   root-s.pem     anchor; staple-eku-s.p11-kit restricts it to serverAuth
#   root-q.pem     anchor; staple-reject-q.p11-kit rejects clientAuth
#   root-p.pem     anchor; staple-reject-p.p11-kit rejects emailProtection
#   root-k.pem     anchor; staple-bc-k.p11-kit says it is no CA
#   staple-ku-c.p11-kit  keyUsage digitalSignature only, for root-c
#   staple-ski-s.p11-kit subjectKeyIdentifier 5e11e5ab1ed5... for root-s (OpenSSL
#                        extracts write it as the keyid)
#   bad/*.p11-kit        unusable stapled extensions for root-s, -q, -p, -k
#   root-d.pem     anchor; distrust-key-d.p11-kit distrusts its public key
#   leaf-n.pem     a version 3 certificate without basicConstraints
#   root-r.trusted.pem  TRUSTED CERTIFICATE with a reject and no trust
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
export OPENSSL_CONF=/dev/null

cat > ext.cnf <<'CNF'
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:test.example
[leaf_noaki]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:test.example
[none]
CNF

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

# root NAME CN [days-start days]: self-signed CA
root() {
	key "$1"
	openssl req -x509 -new -key "$1.key" -subj "/O=p11glue test/CN=$2" \
		-days "${3:-3650}" -set_serial "0x$(openssl rand -hex 8)" \
		-extensions "${4:-ca}" -config ext.cnf -out "$1.pem" 2>/dev/null
}

# sign NAME CN ISSUER EXT [days]
sign() {
	key "$1"
	openssl req -new -key "$1.key" -subj "/O=p11glue test/CN=$2" -out "$1.csr" -config ext.cnf 2>/dev/null
	openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" \
		-set_serial "0x$(openssl rand -hex 8)" -days "${5:-365}" \
		-extfile ext.cnf -extensions "$4" -out "$1.pem" 2>/dev/null
	rm -f "$1.csr"
}

root root-a "Root A"
sign inter-a "Intermediate A" root-a ca
sign leaf-a1 "test.example" inter-a leaf
sign leaf-a2 "test.example" inter-a leaf
root root-b "Root B"
sign leaf-b "test.example" root-b leaf
# A version 1 certificate: no extensions at all.
key root-c
openssl req -new -key root-c.key -subj "/O=p11glue test/CN=Root C" -out root-c.csr -config ext.cnf 2>/dev/null
openssl x509 -req -in root-c.csr -signkey root-c.key -days 3650 -set_serial 0x0c0c -out root-c.pem 2>/dev/null
rm -f root-c.csr
sign leaf-c "test.example" root-c leaf_noaki
root root-u "Root U"
sign leaf-u "test.example" root-u leaf
root root-t "Root T"
sign leaf-t "test.example" root-t leaf
openssl x509 -in root-t.pem -addtrust serverAuth -addreject emailProtection \
	-setalias "Root T alias" -trustout -out root-t.trusted.pem 2>/dev/null

# An expired root: valid from 3 days ago for 1 day, built with -not_before
# equivalents through a CA database-free path (x509 -days accepts no past
# date, so sign with ca -startdate/-enddate).
mkdir -p ca-e
touch ca-e/index.txt
cat > ca-e.cnf <<CNF
[ca]
default_ca = e
[e]
database = ca-e/index.txt
new_certs_dir = ca-e
serial = ca-e/serial
default_md = sha256
policy = p
unique_subject = no
[p]
commonName = supplied
organizationName = supplied
CNF
echo 0E0E > ca-e/serial
key root-e
openssl req -new -key root-e.key -subj "/O=p11glue test/CN=Root E" -out root-e.csr 2>/dev/null
openssl ca -batch -config ca-e.cnf -selfsign -keyfile root-e.key -in root-e.csr \
	-startdate 20200101000000Z -enddate 20200201000000Z -extfile ext.cnf -extensions ca \
	-notext -out root-e.pem 2>/dev/null
rm -rf root-e.csr ca-e ca-e.cnf
sign leaf-e "test.example" root-e leaf

# CRLs of inter-a.
mkdir -p ca-a
touch ca-a/index.txt
echo 01 > ca-a/crlnumber
cat > ca-a.cnf <<CNF
[ca]
default_ca = a
[a]
database = ca-a/index.txt
crlnumber = ca-a/crlnumber
default_md = sha256
default_crl_days = 30
CNF
openssl ca -config ca-a.cnf -revoke leaf-a1.pem -keyfile inter-a.key -cert inter-a.pem 2>/dev/null
openssl ca -config ca-a.cnf -gencrl -keyfile inter-a.key -cert inter-a.pem -out crl-inter-a.pem 2>/dev/null
# The same CRL with its signature's last byte changed.
openssl crl -in crl-inter-a.pem -outform DER -out crl-bad.der
size=$(stat -c %s crl-bad.der)
last=$(od -An -tu1 -j $((size - 1)) crl-bad.der | tr -d ' ')
printf "$(printf '\\%03o' $(((last + 1) % 256)))" |
	dd of=crl-bad.der bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
openssl crl -inform DER -in crl-bad.der -out crl-bad.pem
rm -f crl-bad.der
openssl ca -config ca-a.cnf -gencrl -keyfile inter-a.key -cert inter-a.pem -crl_lastupdate 20200101000000Z -crl_nextupdate 20200201000000Z -out crl-expired.pem 2>/dev/null
rm -rf ca-a ca-a.cnf


# A bundle with text between blocks and one corrupt block.
{
	echo "# a comment before the first certificate"
	cat root-a.pem
	echo "some text between"
	echo "-----BEGIN CERTIFICATE-----"
	echo "MIIBnotbase64@@@@"
	echo "-----END CERTIFICATE-----"
	cat root-u.pem | head -n 3
	echo
	cat root-c.pem
} > junk-bundle.pem
# staple CERT OID [--junk] [--critical] PURPOSE... | --raw HEX: a
# persistence-format stapled extension for the certificate's public key,
# on stdout; --junk appends a NULL after the Extension (no Extension then).
staple() {
	python3 - "$@" <<'PY'
import subprocess, sys
def length(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, 'big')
    return bytes([0x80 | len(b)]) + b
def tlv(tag, v):
    return bytes([tag]) + length(len(v)) + v
def oid(text):
    a = [int(x) for x in text.split('.')]
    out = bytes([a[0] * 40 + a[1]])
    for x in a[2:]:
        enc = [x & 0x7f]
        x >>= 7
        while x:
            enc.insert(0, 0x80 | (x & 0x7f))
            x >>= 7
        out += bytes(enc)
    return tlv(6, out)
cert, ext_oid, args = sys.argv[1], sys.argv[2], sys.argv[3:]
junk = bool(args) and args[0] == '--junk'
args = args[1:] if junk else args
critical = bool(args) and args[0] == '--critical'
args = args[1:] if critical else args
if args and args[0] == '--raw':
    inner = bytes.fromhex(args[1])
else:
    inner = tlv(0x30, b''.join(oid(p) for p in args))
ext = tlv(0x30, oid(ext_oid) + (tlv(1, b'\xff') if critical else b'') + tlv(4, inner))
if junk:
    ext += b'\x05\x00'
pub = subprocess.run(['openssl', 'x509', '-in', cert, '-noout', '-pubkey'],
                     capture_output=True, text=True, check=True).stdout
value = ''.join(chr(c) if c < 128 and (chr(c).isalnum() or chr(c) in '-_.') else '%%%02X' % c for c in ext)
print('[p11-kit-object-v1]\nclass: x-certificate-extension\nlabel: "stapled"')
print('object-id: %s\nvalue: "%s"\n%s' % (ext_oid, value, pub), end='')
PY
}

root root-s "Root S"
root root-q "Root Q"
root root-p "Root P"
root root-k "Root K"
root root-d "Root D"
staple root-s.pem 2.5.29.37 1.3.6.1.5.5.7.3.1 > staple-eku-s.p11-kit
staple root-q.pem 1.3.6.1.4.1.3319.6.10.1 1.3.6.1.5.5.7.3.2 > staple-reject-q.p11-kit
staple root-p.pem 1.3.6.1.4.1.3319.6.10.1 1.3.6.1.5.5.7.3.4 > staple-reject-p.p11-kit
staple root-k.pem 2.5.29.19 --raw 3000 > staple-bc-k.p11-kit
staple root-c.pem 2.5.29.15 --raw 03020780 > staple-ku-c.p11-kit
staple root-s.pem 2.5.29.14 --raw 04145e11e5ab1ed5ca1ab1e5e11e5ab1ed5ca1ab1e > staple-ski-s.p11-kit
# Unusable ones (test-stapled.sh, second token): an extKeyUsage without
# purposes, one that is a SET, a reject list that is a SET, a value that
# is an Extension followed by more.
mkdir -p bad
staple root-s.pem 2.5.29.37 --raw 3000 > bad/staple-eku-none-s.p11-kit
staple root-q.pem 2.5.29.37 --raw 310406022b06 > bad/staple-eku-set-q.p11-kit
staple root-p.pem 1.3.6.1.4.1.3319.6.10.1 --raw 310406022b06 > bad/staple-reject-set-p.p11-kit
staple root-k.pem 2.5.29.37 --junk 1.3.6.1.5.5.7.3.1 > bad/staple-junk-k.p11-kit
{
	echo "[p11-kit-object-v1]"
	echo "class: certificate"
	echo "certificate-type: x-509"
	echo "x-distrusted: true"
	echo 'label: "Distrusted key of Root D"'
	openssl x509 -in root-d.pem -noout -pubkey
} > distrust-key-d.p11-kit
cat > nobc.cnf <<'CNF'
[nobc]
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
CNF
key leaf-n
openssl req -new -key leaf-n.key -subj "/O=p11glue test/CN=No Constraints" -out leaf-n.csr -config ext.cnf 2>/dev/null
openssl x509 -req -in leaf-n.csr -CA inter-a.pem -CAkey inter-a.key -set_serial 0x4e4e \
	-days 365 -extfile nobc.cnf -extensions nobc -out leaf-n.pem 2>/dev/null
rm -f leaf-n.csr nobc.cnf
root root-r "Root R"
openssl x509 -in root-r.pem -addreject emailProtection -trustout -out root-r.trusted.pem 2>/dev/null

rm -f ext.cnf *.srl
