/*
 * The targets of `p11glue setup` and `p11glue status` (one file each
 * under targets/), for the table in targets.c: each one's plan and
 * status, and where it has them its apply and unavailable. Private to
 * this folder.
 */
#ifndef PG_SETUP_TARGETS_H
#define PG_SETUP_TARGETS_H

#include "setup.h"

/* Names and files the targets write, which their descriptions name too. */
#define PG_SETUP_SCD_PROGRAM "/usr/bin/gnupg-pkcs11-scd"
#define PG_SETUP_SCD_PROVIDER "p11glue"
#define PG_SETUP_NSS_NAME "p11glue"
#define PG_SETUP_OPENSSL_SYSTEM_FILE "/etc/ssl/p11glue-pkcs11.cnf"
#define PG_SETUP_SSH_SYSTEM_FILE "/etc/ssh/ssh_config.d/p11glue.conf"

/* targets/module-files.c */
bool pg_setup_modules_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
void pg_setup_modules_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/service.c */
const char *pg_setup_service_unavailable(void);
bool pg_setup_service_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
bool pg_setup_service_apply(const pg_setup_env *env, const pg_setup_plan *plan);
void pg_setup_service_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/trust.c */
bool pg_setup_trust_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
bool pg_setup_trust_apply(const pg_setup_env *env, const pg_setup_plan *plan);
void pg_setup_trust_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/ssh.c */
bool pg_setup_ssh_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
void pg_setup_ssh_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/openssl.c */
bool pg_setup_openssl_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
void pg_setup_openssl_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/nss.c */
const char *pg_setup_nss_unavailable(void);
bool pg_setup_nss_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
bool pg_setup_nss_apply(const pg_setup_env *env, const pg_setup_plan *plan);
void pg_setup_nss_status(const pg_setup_env *env, pg_setup_status *status);

/* targets/gnupg.c */
const char *pg_setup_gnupg_unavailable(void);
bool pg_setup_gnupg_plan(const pg_setup_env *env, bool undo, pg_setup_plan *plan);
void pg_setup_gnupg_status(const pg_setup_env *env, pg_setup_status *status);

#endif /* PG_SETUP_TARGETS_H */
