#!/bin/bash
# p11kit-run.sh PATHS CMD...: runs CMD where p11-kit sees only its trust
# module, on PATHS, through a private mount namespace (nothing in /etc or
# /usr changes: a temporary module directory is bind-mounted over them).
set -e
paths=$1
shift
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'module: p11-kit-trust.so\ntrust-policy: yes\nx-init-reserved: paths=%s\n' "$paths" \
	>"$d/p11-kit-trust.module"
unshare --mount bash -c '
	mount --bind "$0" /usr/share/p11-kit/modules
	[ -d /etc/pkcs11/modules ] && mount --bind "$0" /etc/pkcs11/modules
	exec "$@"' "$d" "$@"
