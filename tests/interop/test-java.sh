#!/bin/bash
# Java's SunPKCS11 provider (OpenJDK 17) with the key store module, on a
# fresh store: keytool lists the token's key entries, a small Java
# program compiled here signs with token keys (ECDSA and RSA) and openssl
# verifies the signatures; keytool generates a key pair and certificate
# on the token.
#
# With PROXY, the same keys through p11glue-proxy.so with "slot = N" in
# the provider's configuration: SunPKCS11 then asks C_GetSlotInfo(N)
# before any C_GetSlotList, so N must be valid from C_Initialize on (and
# the same N in every process).
#
# Usage: test-java.sh P11GLUE STORE_MODULE [PROXY]
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
proxy=
[ $# -ge 3 ] && { proxy=$(realpath -e "$3") || exit 1; }
. "$(dirname "$0")/common.sh"
need java javac keytool openssl
# A sanitizer runtime preloaded into the JVM does not survive it.
[ -n "$san_libs" ] && skip_all "the module is built with sanitizers, which the JVM cannot host"

new_store
token=test
p() { client "$p11glue" "$1" --module "$store" "${@:2}"; }
printf 'name = p11glue\nlibrary = %s\nslotListIndex = 0\n' "$store" >"$tmp/pkcs11.cfg"
ks=(-storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 -providerArg "$tmp/pkcs11.cfg")

# Keys with certificates (Java shows private keys that have one).
for t in ec rsa; do
	if [ "$t" = ec ]; then alg=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1); else alg=(-newkey rsa:2048); fi
	openssl req -x509 "${alg[@]}" -nodes -keyout "$tmp/$t.key" -subj "/CN=java $t" -days 2 \
		-out "$tmp/$t.pem" 2>/dev/null
	cat "$tmp/$t.key" "$tmp/$t.pem" >"$tmp/$t-bundle.pem"
	run p import --label "java-$t" "$tmp/$t-bundle.pem" "pkcs11:token=test?pin-source=$tmp/pin"
	ran "p11glue imports an $t key with its certificate"
done

run bound keytool -list "${ks[@]}" -storepass "$pin"
ran "keytool -list"
has "... shows the EC key entry" "$out" "*java-ec, PrivateKeyEntry*"
has "... and the RSA one" "$out" "*java-rsa, PrivateKeyEntry*"
run bound keytool -list "${ks[@]}" -storepass 00000000
failed_run "keytool -list with a wrong PIN"

# A signature made by Java through SunPKCS11, verified by openssl.
mkdir "$tmp/java"
cat >"$tmp/java/Sign.java" <<'JAVA'
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;

/* Sign CONFIG PIN ALIAS ALGORITHM IN OUT: signs IN with the token key. */
public class Sign {
	public static void main(String[] args) throws Exception {
		Provider p = Security.getProvider("SunPKCS11").configure(args[0]);
		KeyStore ks = KeyStore.getInstance("PKCS11", p);
		ks.load(null, args[1].toCharArray());
		PrivateKey key = (PrivateKey) ks.getKey(args[2], null);
		Signature s = Signature.getInstance(args[3], p);
		s.initSign(key);
		s.update(Files.readAllBytes(Path.of(args[4])));
		Files.write(Path.of(args[5]), s.sign());
		System.out.println("signed with " + key.getAlgorithm() + " key " + args[2]);
	}
}
JAVA
run bound javac -d "$tmp/java" "$tmp/java/Sign.java"
ran "javac compiles the signing program"
printf 'signed by Java through SunPKCS11\n' >"$tmp/data"
for t in ec rsa; do
	if [ "$t" = ec ]; then algo=SHA256withECDSA; else algo=SHA256withRSA; fi
	run bound java -cp "$tmp/java" Sign "$tmp/pkcs11.cfg" "$pin" "java-$t" "$algo" "$tmp/data" "$tmp/$t.sig"
	ran "Java signs with $algo and the token's $t key"
	openssl x509 -in "$tmp/$t.pem" -noout -pubkey >"$tmp/$t.pub"
	run openssl dgst -sha256 -verify "$tmp/$t.pub" -signature "$tmp/$t.sig" "$tmp/data"
	has "... openssl verifies it with the certificate's key" "$out" "Verified OK"
done

# Through the proxy, by slot ID. The registry holds OpenSC (no card, no
# slot) and SoftHSM2 around the store, so the store's token is neither
# the first slot nor slot 0 of the proxy; pkcs11-tool, another process,
# says which ID it has.
if [ -n "$proxy" ] && command -v pkcs11-tool >/dev/null; then
	export P11GLUE_CONFIG=$tmp/registry
	mkdir -p "$P11GLUE_CONFIG/modules" "$tmp/softhsm"
	printf 'module: %s\n' "$store" >"$P11GLUE_CONFIG/modules/p11glue-store.module"
	for lib in /usr/lib/*-linux-gnu/pkcs11/opensc-pkcs11.so; do
		[ -f "$lib" ] && printf 'module: %s\n' "$lib" >"$P11GLUE_CONFIG/modules/opensc-pkcs11.module"
	done
	for lib in /usr/lib/*-linux-gnu/softhsm/libsofthsm2.so; do
		[ -f "$lib" ] && printf 'module: %s\n' "$lib" >"$P11GLUE_CONFIG/modules/softhsm2.module"
	done
	printf 'directories.tokendir = %s\n' "$tmp/softhsm" >"$tmp/softhsm2.conf"
	export SOFTHSM2_CONF=$tmp/softhsm2.conf
	run bound pkcs11-tool --module "$proxy" -L
	ran "pkcs11-tool -L through the proxy"
	# "Slot 1 (0x100): ..." then the slot's lines; the one whose token is "test".
	slot=$(printf '%s\n' "$out" | awk '
		/^Slot / { id = $3; gsub(/[():]/, "", id) }
		/token label *: test$/ { print id; exit }')
	[ -n "$slot" ] && slot=$((slot))
	if [ -n "$slot" ] && [ "$slot" != 0 ]; then
		ok "the store's token has proxy slot $slot"
	else
		not_ok "the store's token has a proxy slot other than 0" "slot: '$slot'" "$out"
	fi
	printf 'name = p11glue-proxy\nlibrary = %s\nslot = %s\n' "$proxy" "${slot:-0}" >"$tmp/proxy.cfg"
	pks=(-storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 -providerArg "$tmp/proxy.cfg")
	run bound keytool -list "${pks[@]}" -storepass "$pin"
	ran "keytool -list through the proxy with slot = $slot"
	has "... shows the EC key entry" "$out" "*java-ec, PrivateKeyEntry*"
	has "... and the RSA one" "$out" "*java-rsa, PrivateKeyEntry*"
	for t in ec rsa; do
		if [ "$t" = ec ]; then algo=SHA256withECDSA; else algo=SHA256withRSA; fi
		rm -f "$tmp/$t-proxy.sig"
		run bound java -cp "$tmp/java" Sign "$tmp/proxy.cfg" "$pin" "java-$t" "$algo" "$tmp/data" \
			"$tmp/$t-proxy.sig"
		ran "Java signs with $algo through the proxy with slot = $slot"
		run openssl dgst -sha256 -verify "$tmp/$t.pub" -signature "$tmp/$t-proxy.sig" "$tmp/data"
		has "... openssl verifies it" "$out" "Verified OK"
	done
	unset P11GLUE_CONFIG SOFTHSM2_CONF
else
	skip "Java through the proxy with slot = N" "no proxy module or no pkcs11-tool"
fi

# keytool making a key pair and a self-signed certificate on the token.
run bound keytool -genkeypair "${ks[@]}" -storepass "$pin" -alias java-made -keyalg EC \
	-groupname secp256r1 -dname CN=java-made -validity 2
ran "keytool -genkeypair on the token"
run bound keytool -list "${ks[@]}" -storepass "$pin"
has "... keytool then lists it" "$out" "*java-made, PrivateKeyEntry*"

finish
