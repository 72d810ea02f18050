/*
 * Where trust decisions are written by default: one directory for the
 * system and one per user, each with anchors/, blocklist/ and crls/ as
 * p11glue-trust.so reads them (docs/DESIGN.md, "The trust module").
 * The module adds them to its built-in paths; `p11glue trust` writes
 * there and keeps the files other programs read up to date.
 */
#ifndef PG_TRUST_DIRS_H
#define PG_TRUST_DIRS_H

#include "common.h"

/* The system's directory: -Dsystem_trust_dir (/etc/p11glue/trust). */
const char *pg_trust_system_dir(void);

/*
 * A directory of the user's p11glue data: $XDG_DATA_HOME/p11glue/<leaf>
 * (XDG_DATA_HOME when absolute), else ~/.local/share/p11glue/<leaf>.
 * NULL in a set-id program (whose environment is not its user's), when
 * there is no home directory, or out of memory. free().
 */
char *pg_trust_user_path(const char *leaf);

/* The user's trust directory: pg_trust_user_path("trust"). free(). */
char *pg_trust_user_dir(void);

/*
 * The files `p11glue trust` keeps up to date for a user's programs, in
 * pg_trust_user_path(PG_TRUST_EXTRACTED); `p11glue setup --trust` points
 * them there (SSL_CERT_FILE, SSL_CERT_DIR, ...).
 */
#define PG_TRUST_EXTRACTED "extracted"
#define PG_TRUST_EXTRACTED_BUNDLE "ca-certificates.crt" /* TLS anchors, PEM */
#define PG_TRUST_EXTRACTED_DIR "certs"          /* OpenSSL's hashed directory: distrust, CRLs */
#define PG_TRUST_EXTRACTED_JAVA "java-cacerts"  /* a JKS keystore */

/*
 * Debian's system files (ca-certificates, ca-certificates-java): what
 * update-ca-certificates builds, and what it is built from. p11glue adds
 * its anchors to its inputs (PG_CA_LOCAL_DIR/p11glue), deselects
 * distrusted ones in PG_CA_CONF, and reapplies that from its hook.
 */
#define PG_CA_UPDATE "/usr/sbin/update-ca-certificates"
#define PG_CA_CONF "/etc/ca-certificates.conf"
#define PG_CA_SHARE_DIR "/usr/share/ca-certificates"
#define PG_CA_LOCAL_DIR "/usr/local/share/ca-certificates"
#define PG_CA_HOOKS_DIR "/etc/ca-certificates/update.d"
#define PG_CA_HOOK "p11glue"
#define PG_CA_CERTS_DIR "/etc/ssl/certs"
#define PG_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define PG_CA_JAVA "/etc/ssl/certs/java/cacerts"

#endif /* PG_TRUST_DIRS_H */
