# Shared by the tests that drive real TLS clients against trust decisions
# (test-user-level.sh, test-system-level.sh): a small PKI made by
# openssl, a TLS server on loopback, and one probe per client, each
# reading what that client reads by default.
#
# Source after tap.sh; set $tmp first. Probes run through $as (a command
# prefix: empty, or setpriv to another user) with the environment of a
# login shell of that user (env -i, then bash --login; a sanitizer
# build's *SAN_OPTIONS kept).
# shellcheck shell=bash

# make_pki DIR: ca.pem (a root CA), srv.pem/srv.key (localhost and
# 127.0.0.1, issued by it), crl.pem (the CA's CRL revoking srv.pem),
# crl-old.pem (an earlier CRL of the CA revoking nothing), other.pem (an
# unrelated CA).
make_pki() {
	local d=$1
	mkdir -p "$d/ca"
	(
		cd "$d" || exit 1
		export OPENSSL_CONF=/dev/null
		cat >ext.cnf <<-'CNF'
		[ca]
		basicConstraints = critical, CA:TRUE
		keyUsage = critical, keyCertSign, cRLSign
		subjectKeyIdentifier = hash
		[srv]
		basicConstraints = CA:FALSE
		keyUsage = critical, digitalSignature
		extendedKeyUsage = serverAuth
		subjectAltName = DNS:localhost, IP:127.0.0.1
		authorityKeyIdentifier = keyid
		CNF
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
			-out ca.pem -subj "/CN=p11glue Test TLS Root" -days 30 -extensions ca -config ext.cnf
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other.key \
			-out other.pem -subj "/CN=p11glue Other Root" -days 30 -extensions ca -config ext.cnf
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key \
			-out srv.csr -subj "/CN=localhost"
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -set_serial 0x5eed01 \
			-out srv.pem -days 20 -extfile ext.cnf -extensions srv
		: >ca/index.txt
		echo 01 >ca/crlnumber
		cat >ca.cnf <<-CNF
		[ca]
		default_ca = d
		[d]
		database = ca/index.txt
		crlnumber = ca/crlnumber
		default_md = sha256
		default_crl_days = 30
		CNF
		openssl ca -config ca.cnf -gencrl -keyfile ca.key -cert ca.pem -out crl-old.pem \
			-crl_lastupdate "$(date -u -d '-2 hours' +%Y%m%d%H%M%SZ)"
		openssl ca -config ca.cnf -revoke srv.pem -keyfile ca.key -cert ca.pem
		openssl ca -config ca.cnf -gencrl -keyfile ca.key -cert ca.pem -out crl.pem
	) >"$d/pki.log" 2>&1
}

# start_server DIR PORT: openssl s_server with srv.pem on 127.0.0.1:PORT.
server_pid=
start_server() {
	openssl s_server -quiet -www -accept "127.0.0.1:$2" -cert "$1/srv.pem" -key "$1/srv.key" \
		>/dev/null 2>&1 &
	server_pid=$!
	local i
	for i in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
stop_server() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	server_pid=
}

# login CMD: runs CMD (a shell command) as $as in a login shell whose
# environment is only HOME, USER, PATH, LANG and XDG_RUNTIME_DIR (then
# ~/.profile's). The runtime directory is the test's ($user_run), so that
# a session service a program starts (p11glue-client.so) ends with the
# test, when its socket is removed.
login() {
	local san=() v
	# A sanitizer build's settings go on (meson's make its reports fail).
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!v:-}" ] && san+=("$v=${!v}")
	done
	timeout 60 $as env -i HOME="$user_home" USER="${user_name:-root}" PATH=/usr/bin:/bin:/usr/sbin:/sbin \
		LANG=C.UTF-8 XDG_RUNTIME_DIR="$user_run" "${san[@]}" bash --login -c "$1" </dev/null
}

# The probes: 0 when the client accepts the server's certificate.
probe_curl() { login "curl -sS --max-time 10 -o /dev/null https://localhost:$port/"; }
probe_openssl() {
	login "openssl s_client -verify_return_error -connect 127.0.0.1:$port -servername localhost >/dev/null"
}
probe_gnutls() { login "gnutls-cli --port $port localhost >/dev/null"; }
probe_python() {
	login "/usr/bin/python3 -c 'import socket, ssl, sys
c = ssl.create_default_context()
c.wrap_socket(socket.create_connection((\"127.0.0.1\", $port)), server_hostname=\"localhost\").close()'"
}
probe_java() { login "java -cp $java_classes TlsProbe $port"; }
# NSS as Firefox reads the trust: the certificate checked for TLS server
# use (vfychain -u 1) in the NSS database $nssdb.
probe_nss() { login "vfychain -d sql:$nssdb -u 1 -a $pki/srv.pem >/dev/null"; }

# clients WANT NAME CLIENT...: one TAP line per client, accept or reject.
clients() {
	local want=$1 name=$2 c rc
	shift 2
	for c in "$@"; do
		probe_"$c" >"$tmp/probe.out" 2>&1
		rc=$?
		if { [ "$want" = accept ] && [ "$rc" = 0 ]; } || { [ "$want" = reject ] && [ "$rc" != 0 ]; }; then
			ok "$name: $c ${want}s"
		else
			not_ok "$name: $c does not $want (status $rc)" "$(tail -n 3 "$tmp/probe.out")"
		fi
	done
}

# java_setup: compiles TlsProbe into $java_classes (readable by all).
java_setup() {
	java_classes=$tmp/java
	mkdir -p "$java_classes"
	javac -d "$java_classes" "$(dirname "${BASH_SOURCE[0]}")/TlsProbe.java" >/dev/null 2>&1
	chmod -R a+rX "$java_classes"
}
