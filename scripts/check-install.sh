#!/bin/bash
# Checks that `meson install --prefix=/usr` put files where a Debian
# package would: the library and pkg-config file under the multiarch
# libdir, headers under include/p11glue, the tool in bin.
set -euo pipefail
stage=$1
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
status=0
for f in \
	usr/bin/p11glue \
	"usr/lib/$arch/libp11glue.so.0" \
	"usr/lib/$arch/libp11glue.so" \
	"usr/lib/$arch/pkgconfig/p11glue.pc" \
	"usr/lib/$arch/pkcs11/p11glue-trust.so" \
	usr/include/p11glue/p11glue.h \
	usr/include/p11glue/pkcs11.h \
	usr/include/p11glue/pkcs11x.h \
	usr/include/p11glue/uri.h \
	usr/include/p11glue/registry.h \
	usr/include/p11glue/pin.h \
	usr/include/p11glue/defs.h \
	"usr/lib/$arch/pkcs11/p11glue-proxy.so" \
	"usr/lib/$arch/pkcs11/p11glue-client.so"; do
	if [ -e "$stage/$f" ]; then echo "installed: /$f"; else echo "MISSING: /$f"; status=1; fi
done
# A program built against the installed files only.
cat > "$stage/t.c" <<'C'
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
PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/$arch/pkgconfig" \
	cc -o "$stage/t" "$stage/t.c" $(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/$arch/pkgconfig" pkg-config --cflags --libs p11glue)
LD_LIBRARY_PATH="$stage/usr/lib/$arch" "$stage/t" || status=1
exit $status
