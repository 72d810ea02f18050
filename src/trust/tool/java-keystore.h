/*
 * Java keystores as `p11glue trust check` reads them (java-keystore.c).
 */
#ifndef PG_TOOL_JAVA_KEYSTORE_H
#define PG_TOOL_JAVA_KEYSTORE_H

#include <openssl/x509.h>

#include <stdbool.h>
#include <stddef.h>

/*
 * Reads a Java keystore: JKS (its integrity digest checked with the
 * password) or PKCS#12. Every certificate of a trusted-certificate entry
 * goes to *certs (a new stack), and its alias to *aliases (same order).
 * false with a message in err[size] when the file is not a keystore.
 */
bool pg_java_keystore_read(const unsigned char *data, size_t len, const char *password,
                           STACK_OF(X509) **certs, char ***aliases, char *err, size_t size);

#endif /* PG_TOOL_JAVA_KEYSTORE_H */
