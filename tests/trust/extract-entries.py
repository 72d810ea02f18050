#!/usr/bin/env python3
"""extract-entries.py PATH: one line per entry of a `trust extract` output,
for comparing two outputs while leaving out named entries.

  PEM bundle     "CN<TAB>sha256 of the block" (comment lines before a block
                 belong to it), in file order
  DER file       "CN<TAB>sha256"
  EDK2 cacerts   "CN<TAB>sha256 of the certificate", in file order
  Java cacerts   "alias<TAB>CN<TAB>sha256 of the certificate" (the times are
                 left out: they are when the file was written)
  directory      "name<TAB>mode<TAB>sha256" per file, "name -> target" per
                 link, sorted by name

CN is the subject's commonName (else the whole subject in hex).
"""
import hashlib
import os
import re
import stat
import struct
import sys


def tlv(d, o):
    """(tag, header length, content length) of the element at o."""
    tag, n = d[o], d[o + 1]
    if n < 0x80:
        return tag, 2, n
    k = n & 0x7f
    return tag, 2 + k, int.from_bytes(d[o + 2:o + 2 + k], 'big')


def children(d, o):
    """Offsets of the elements inside the constructed element at o."""
    _, h, n = tlv(d, o)
    i, end = o + h, o + h + n
    while i < end:
        yield i
        _, h2, n2 = tlv(d, i)
        i += h2 + n2


def common_name(der):
    try:
        tbs = next(children(der, 0))
        fields = list(children(der, tbs))
        if der[fields[0]] == 0xa0:
            fields = fields[1:]
        subject = fields[4]
        for rdn in children(der, subject):
            for atv in children(der, rdn):
                oid, value = list(children(der, atv))[:2]
                _, h, n = tlv(der, oid)
                if der[oid + h:oid + h + n] == b'\x55\x04\x03':
                    _, h, n = tlv(der, value)
                    return der[value + h:value + h + n].decode('utf-8', 'replace')
        _, h, n = tlv(der, subject)
        return der[subject:subject + h + n].hex()
    except (IndexError, StopIteration, UnicodeError):
        return '?'


def sha(b):
    return hashlib.sha256(b).hexdigest()


def pem_entries(text):
    import base64
    out = []
    pending = ''
    for part in re.split(r'(-----BEGIN [A-Z ]+-----.*?-----END [A-Z ]+-----\n?)', text,
                         flags=re.S):
        m = re.match(r'-----BEGIN ([A-Z ]+)-----(.*?)-----END', part, re.S)
        if not m:
            pending += part
            continue
        der = base64.b64decode(''.join(m.group(2).split()))
        # A TRUSTED CERTIFICATE is the certificate and OpenSSL's data after it.
        _, h, n = tlv(der, 0)
        out.append('%s\t%s' % (common_name(der[:h + n]), sha((pending + part).encode())))
        pending = ''
    return out


def edk2_entries(d):
    out, o = [], 0
    while o + 28 <= len(d):
        size, header, sig = struct.unpack('<III', d[o + 16:o + 28])
        der = d[o + 28 + header + 16:o + size]
        out.append('%s\t%s' % (common_name(der), sha(der)))
        o += size
    return out


def jks_entries(d):
    out = []
    count = struct.unpack('>I', d[8:12])[0]
    o = 12
    for _ in range(count):
        o += 4
        n = struct.unpack('>H', d[o:o + 2])[0]
        alias = d[o + 2:o + 2 + n].decode()
        o += 2 + n + 8
        n = struct.unpack('>H', d[o:o + 2])[0]
        o += 2 + n
        n = struct.unpack('>I', d[o:o + 4])[0]
        der = d[o + 4:o + 4 + n]
        o += 4 + n
        out.append('%s\t%s\t%s' % (alias, common_name(der), sha(der)))
    return out


def entries(path):
    if os.path.isdir(path):
        out = []
        for name in sorted(os.listdir(path)):
            p = os.path.join(path, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out.append('%s -> %s' % (name, os.readlink(p)))
            else:
                out.append('%s\t%o\t%s' % (name, stat.S_IMODE(st.st_mode),
                                           sha(open(p, 'rb').read())))
        return out
    d = open(path, 'rb').read()
    if d[:4] == b'\xfe\xed\xfe\xed':
        return jks_entries(d)
    if d[:4] == bytes.fromhex('a159c0a5'):
        return edk2_entries(d)
    if b'-----BEGIN' in d:
        return pem_entries(d.decode('latin-1'))
    if d[:1] == b'\x30':
        return ['%s\t%s' % (common_name(d), sha(d))]
    return []


if __name__ == '__main__':
    try:
        for line in entries(sys.argv[1]):
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (grep -q) had enough.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
