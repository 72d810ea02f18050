#!/usr/bin/env python3
"""TLS handshakes against a server for a while: bench/run-service.sh.

Usage: tls-handshakes.py PORT CA_CERT SECONDS

Each handshake is a full one (a new context's connection, no session
resumed), verifying the server's certificate for "localhost" against
CA_CERT, then closing. Prints "handshakes N seconds S us/handshake U".
"""
import socket
import ssl
import sys
import time


def main():
    port, ca, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    n = 0
    start = time.monotonic()
    while True:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                tls.do_handshake()
        n += 1
        took = time.monotonic() - start
        if took >= seconds:
            break
    print(f"handshakes {n} seconds {took:.3f} us/handshake {took * 1e6 / n:.1f}")


if __name__ == "__main__":
    main()
