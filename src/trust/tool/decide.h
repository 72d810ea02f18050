/*
 * Inside the trust decisions (decide.c): one certificate's decision on
 * the writable trust token, with the purposes of an anchor
 * (decide-cert.c).
 */
#ifndef PG_TOOL_TRUST_DECIDE_H
#define PG_TOOL_TRUST_DECIDE_H

#include "trust-tool.h"

/* A session on the writable trust token. */
typedef struct {
	CK_FUNCTION_LIST *f;
	CK_SESSION_HANDLE s;
} pg_decide_token;

/* A CKR_ value for messages: its name, else its number in buf. */
const char *pg_decide_ckr_text(CK_RV rv, char *buf, size_t size);

/* SHA-1 of der in hex into out. */
void pg_decide_sha1_hex(const unsigned char *der, size_t len, char out[41]);

/* The certificate's name for the report: its subject's CN, else all of
 * the subject (RFC 2253); free(). */
char *pg_decide_cert_name(const unsigned char *der, size_t len);

/* What an anchor is trusted for (no purposes and no rejects: every
 * purpose). */
typedef struct {
	const char *label;           /* for the objects made, or NULL */
	const char *const *purposes; /* dotted OIDs */
	size_t n_purposes;
	const char *const *rejects;
	size_t n_rejects;
	bool dry_run;                /* decide, write nothing ("would ...") */
} pg_decide_how;

/*
 * One certificate decision on the token. add: store it (as an anchor,
 * or with distrust a distrusted certificate), replacing the other
 * decision there, and for an anchor the stapled extKeyUsage and reject
 * list that how asks for (how NULL: the stapled extensions are left as
 * they are); else remove that decision.
 * Sets it->result (and it->replaced). False after a message.
 */
bool pg_decide_one_cert(const pg_decide_token *t, pg_decide_item *it, const unsigned char *der,
                    size_t len, bool add, bool distrust, const pg_decide_how *how);

#endif /* PG_TOOL_TRUST_DECIDE_H */
