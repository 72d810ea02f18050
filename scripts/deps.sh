#!/bin/bash
# Installs the Debian 12 packages p11glue needs to build and test.
# The one list of dependencies: ./run and .ci/run both use it.
set -euo pipefail

packages=(
	# build
	meson ninja-build gcc pkg-config libc6-dev python3
	# tests: reference headers and libraries for differential tests
	libp11-kit-dev libnss3-dev
	# fuzzing and sanitizer runs
	clang libclang-rt-14-dev
	# registry and proxy: real modules and clients as the other side
	softhsm2 opensc p11-kit p11-kit-modules libnss3-tools openssh-client valgrind
	# store: build dependencies and real clients (tests/interop, bench/run-store.sh)
	libssl-dev libsqlite3-dev opensc openssh-client openssh-server libengine-pkcs11-openssl
	gnutls-bin libnss3-tools openjdk-17-jdk-headless curl iproute2 util-linux softhsm2
	# trust: p11-kit for differential tests, real consumers, libcrypto
	openssl ca-certificates ca-certificates-java
	# remote: sshd for the ssh tests (login, stdio mode, -R forwarding); ip for loopback
	openssh-server iproute2
	# packaging: dpkg-buildpackage, and CI's install check
	debhelper dpkg-dev fakeroot build-essential groff-base man-db
	# gnupg: GnuPG with gnupg-pkcs11-scd as the client of the store (tests/interop/test-gnupg.sh)
	gnupg gpg-agent gpgv gnupg-pkcs11-scd
	# setup tests: chattr makes a file that cannot be replaced (e2fsprogs)
	e2fsprogs
	# backup tests and bench/run-backup.sh: the sqlite3 command (WAL checks,
	# locks, the reference .backup), bc for the bench's ratios
	sqlite3 bc
	# S/MIME tests: gpgsm through gnupg-pkcs11-scd (cmsutil: libnss3-tools)
	gpgsm
	# the session service: a real pinentry driven in a terminal (tmux), socket
	# activation (systemd-socket-activate, systemctl for setup --service)
	pinentry-tty tmux systemd
	# the session service with real browsers, headless: the store's client
	# certificate in TLS (tests/service/test-service-browsers.sh)
	chromium firefox-esr
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "p11glue: installing ${missing[*]}" >&2
sudo=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "p11glue: run as root to install: ${missing[*]}" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
