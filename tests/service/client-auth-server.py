#!/usr/bin/env python3
"""A TLS server on 127.0.0.1 that requires a client certificate, for the
browser test (test-service-browsers.sh).

Usage: client-auth-server.py CERT KEY CA PORT_FILE LOG

It listens on a free port, writes the port number to PORT_FILE, and then
serves every connection on a thread of its own. The client must present
a certificate CA verifies (TLS 1.2 or 1.3); LOG gets one line per
connection, flushed at once:

  seen sha256=HEX subject=CN=...   a client certificate was presented
  refused REASON                   the handshake failed (no certificate,
                                   one CA did not issue, ...)

and a client that got through is answered with a small HTML page naming
the certificate's SHA-256 fingerprint. Every connection is bounded in
time; the server runs until it is killed.
"""
import hashlib
import os
import socket
import ssl
import sys
import threading

cert, key, ca, port_file, log_file = sys.argv[1:6]

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.minimum_version = ssl.TLSVersion.TLSv1_2
ctx.load_cert_chain(cert, key)
ctx.load_verify_locations(cafile=ca)
ctx.verify_mode = ssl.CERT_REQUIRED

log_lock = threading.Lock()


def log(line):
    with log_lock, open(log_file, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def subject_of(peer):
    parts = []
    for rdn in peer.get("subject", ()):
        for name, value in rdn:
            parts.append("%s=%s" % ({"commonName": "CN"}.get(name, name), value))
    return ",".join(parts)


def serve(conn):
    conn.settimeout(60)
    try:
        with ctx.wrap_socket(conn, server_side=True) as tls:
            der = tls.getpeercert(binary_form=True)
            fpr = hashlib.sha256(der).hexdigest().upper()
            log("seen sha256=%s subject=%s" % (fpr, subject_of(tls.getpeercert())))
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536:
                chunk = tls.recv(4096)
                if not chunk:
                    break
                request += chunk
            body = ("<html><body><p id=seen>client certificate sha256=%s</p></body></html>\n"
                    % fpr).encode()
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except (ssl.SSLError, OSError) as e:
        log("refused %s" % e)
    finally:
        conn.close()


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(port_file + ".new", "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(port_file + ".new", port_file)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
