#!/bin/bash
# Java's SunPKCS11 provider (OpenJDK 17) with the key store module, on a
# fresh store: keytool lists the token's key entries, a small Java
# program compiled here signs with token keys (ECDSA and RSA) and openssl
# verifies the signatures; keytool generates a key pair and certificate
# on the token.
#
# Usage: test-java.sh P11GLUE STORE_MODULE
set -u
p11glue=$(realpath -e "$1") || exit 1
store=$(realpath -e "$2") || exit 1
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

# keytool making a key pair and a self-signed certificate on the token.
run bound keytool -genkeypair "${ks[@]}" -storepass "$pin" -alias java-made -keyalg EC \
	-groupname secp256r1 -dname CN=java-made -validity 2
ran "keytool -genkeypair on the token"
run bound keytool -list "${ks[@]}" -storepass "$pin"
has "... keytool then lists it" "$out" "*java-made, PrivateKeyEntry*"

finish
