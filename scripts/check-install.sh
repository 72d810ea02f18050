#!/bin/bash
# check-install.sh ROOT: checks that the files a Debian package carries
# are where Debian puts them under ROOT: a staging directory that
# `meson install --prefix=/usr` filled (DESTDIR), or / after the .deb
# packages were installed. Then builds a program against the installed
# headers and library only, runs it, and reads each manual page.
set -euo pipefail
root=${1:?usage: check-install.sh ROOT}
root=${root%/}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
status=0
for f in \
	usr/bin/p11glue \
	"usr/lib/$arch/libp11glue.so.0" \
	"usr/lib/$arch/libp11glue.so" \
	"usr/lib/$arch/pkgconfig/p11glue.pc" \
	"usr/lib/$arch/pkcs11/p11glue-proxy.so" \
	"usr/lib/$arch/pkcs11/p11glue-store.so" \
	"usr/lib/$arch/pkcs11/p11glue-trust.so" \
	usr/share/p11-kit/modules/p11glue-store.module \
	usr/share/p11glue/modules/p11glue-trust.module \
	usr/include/p11glue/p11glue.h \
	usr/include/p11glue/pkcs11.h \
	usr/include/p11glue/pkcs11x.h \
	usr/include/p11glue/uri.h \
	usr/include/p11glue/registry.h \
	usr/include/p11glue/pin.h \
	usr/include/p11glue/defs.h \
	"usr/lib/$arch/pkcs11/p11glue-proxy.so" \
	"usr/lib/$arch/pkcs11/p11glue-client.so" \
	usr/lib/systemd/user/p11glue.socket \
	usr/lib/systemd/user/p11glue.service; do
	if [ -e "$root/$f" ]; then echo "installed: /$f"; else echo "MISSING: /$f"; status=1; fi
done
# Manual pages: plain from meson install, compressed in a package.
for page in man1/p11glue.1 man1/p11glue-trust.1 man5/p11glue.conf.5 man8/p11glue-store.8; do
	found=
	for f in "$root/usr/share/man/$page" "$root/usr/share/man/$page.gz"; do
		[ -e "$f" ] && found=$f
	done
	if [ -z "$found" ]; then
		echo "MISSING: /usr/share/man/$page"
		status=1
	elif ! out=$(man -l "$found" 2>&1 </dev/null) || [ -z "$out" ]; then
		echo "UNREADABLE: ${found#"$root"}"
		status=1
	else
		echo "installed: ${found#"$root"} ($(wc -l <<<"$out") lines)"
	fi
done
# `trust` is p11-kit's command: never installed by default.
if [ -e "$root/usr/bin/trust" ] && [ "$(readlink "$root/usr/bin/trust")" = p11glue ]; then
	echo "UNEXPECTED: /usr/bin/trust points to p11glue"
	status=1
fi
# The modules export the PKCS#11 entry points and nothing of ours.
for m in p11glue-proxy p11glue-store p11glue-trust; do
	so="$root/usr/lib/$arch/pkcs11/$m.so"
	[ -e "$so" ] || continue
	if ! nm -D --defined-only "$so" | grep -q ' C_GetFunctionList$'; then
		echo "BROKEN: $m.so does not export C_GetFunctionList"
		status=1
	fi
done

# A program built against the installed files only.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/t.c" <<'C'
#include <p11glue/p11glue.h>
#include <stdio.h>
int main(void) {
	p11glue_uri *u;
	if (p11glue_uri_parse("pkcs11:token=x", 0, &u, NULL) != P11GLUE_OK) return 1;
	p11glue_uri_free(u);
	puts(p11glue_version());
	return 0;
}
C
if [ "$root" = "" ]; then
	pc=(pkg-config)
else
	pc=(env PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_PATH="$root/usr/lib/$arch/pkgconfig" pkg-config)
fi
# shellcheck disable=SC2046
cc -o "$work/t" "$work/t.c" $("${pc[@]}" --cflags --libs p11glue) || status=1
if LD_LIBRARY_PATH="$root/usr/lib/$arch" "$work/t"; then
	echo "a program built with pkg-config p11glue runs"
else
	status=1
fi
exit $status
