/*
 * PINs for the commands (token.h): the sources a command was given, read
 * once; the URI's pin-value and pin-source; the prompt; logins, and what
 * a refused PIN says about the token.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "token.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
pg_pins_clear(pg_pins *pins)
{
	if (pins == NULL)
		return;
	p11glue_pin_free(pins->user);
	p11glue_pin_free(pins->so);
	pins->user = pins->so = NULL;
}

/* ---------------------------------------------------------------------------
 * Sources
 */

/*
 * A PIN source as a URI's pin-source: a file name, and file: with a
 * relative name, made absolute from the current directory (links are
 * not resolved here: the file is opened without following one).
 */
static int
source_uri(const char *source, p11glue_uri **uri)
{
	const char *rel = strncmp(source, "file:", 5) == 0 ? source + 5
	                  : strchr(source, ':') == NULL ? source : NULL;
	char *abs = NULL, *cwd = NULL;
	const char *value = source;
	int rv;

	*uri = p11glue_uri_new();
	if (*uri == NULL)
		return P11GLUE_ERR_NOMEM;
	if (rel != NULL && rel[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (cwd == NULL || *rel == 0 || asprintf(&abs, "%s/%s", cwd, rel) < 0) {
			pg_message("%s: %s", source, *rel == 0 ? "no file name"
			           : cwd == NULL ? strerror(errno) : "out of memory");
			free(cwd);
			return P11GLUE_ERR_PIN_SOURCE;
		}
		free(cwd);
		value = abs;
	}
	rv = p11glue_uri_set(*uri, P11GLUE_URI_PIN_SOURCE, value, strlen(value), NULL);
	free(abs);
	if (rv != P11GLUE_OK)
		pg_message("%s: not usable as a PIN source", source);
	return rv;
}

/* The URI's PIN (the URI is the user's own: env: and fd: too), else a
 * prompt. */
static int
resolve(const p11glue_uri *uri, const char *prompt, p11glue_pin **pin)
{
	char *why = NULL;
	int r = p11glue_pin_resolve(uri, prompt, P11GLUE_PIN_PROMPT | P11GLUE_PIN_TRUSTED_URI, pin,
	                            &why);

	if (r == P11GLUE_OK)
		return PG_EXIT_OK;
	if (r == P11GLUE_ERR_PIN_CANCELLED)
		pg_message("%s: none entered (no terminal to ask on? give a PIN source)", prompt);
	else
		pg_message("%s: %s%s%s", prompt, p11glue_strerror(r), why ? ": " : "", why ? why : "");
	free(why);
	return PG_EXIT_FAIL;
}

bool
pg_pin_typable(const p11glue_pin *pin, const char *what)
{
	static const struct {
		unsigned char byte;
		const char *name;
	} untypable[] = { { '\n', "a newline" }, { '\r', "a carriage return" }, { 0, "a NUL byte" } };
	size_t len;
	const unsigned char *value = p11glue_pin_value(pin, &len);

	for (size_t i = 0; i < PG_N_ELEMENTS(untypable); i++) {
		if (memchr(value, untypable[i].byte, len) != NULL) {
			pg_message("%s: the PIN holds %s, which nobody could type at a prompt; "
			           "refused (a PIN file may end with one newline, which is not "
			           "part of the PIN)", what, untypable[i].name);
			return false;
		}
	}
	return true;
}

int
pg_store_read_secret(const char *source, const char *prompt, unsigned flags, p11glue_pin **pin)
{
	p11glue_uri *uri = NULL;
	p11glue_pin *again = NULL;
	const unsigned char *a, *b;
	size_t alen, blen;
	char prompt2[256];
	int status;

	*pin = NULL;
	if (source != NULL && source_uri(source, &uri) != P11GLUE_OK) {
		p11glue_uri_free(uri);
		return PG_EXIT_FAIL;
	}
	status = resolve(uri, prompt, pin);
	p11glue_uri_free(uri);
	if (status == PG_EXIT_OK && source == NULL && (flags & PG_SECRET_CONFIRM)) {
		snprintf(prompt2, sizeof(prompt2), "%s (again)", prompt);
		status = resolve(NULL, prompt2, &again);
		if (status == PG_EXIT_OK) {
			a = p11glue_pin_value(*pin, &alen);
			b = p11glue_pin_value(again, &blen);
			if (alen != blen || !pg_ct_equal(a, b, alen)) {
				pg_message("the two entries differ");
				status = PG_EXIT_FAIL;
			}
		}
		p11glue_pin_free(again);
	}
	if (status == PG_EXIT_OK && (flags & PG_SECRET_NEW_PIN) && !pg_pin_typable(*pin, prompt))
		status = PG_EXIT_FAIL;
	if (status != PG_EXIT_OK) {
		p11glue_pin_free(*pin);
		*pin = NULL;
	}
	return status;
}

/* ---------------------------------------------------------------------------
 * The PIN of a login
 */

/* The option's source for who and where its PIN is kept. */
static const char *
option_source(pg_keytoken *kt, CK_USER_TYPE who, p11glue_pin ***kept)
{
	if (kt->pins == NULL)
		return NULL;
	*kept = who == CKU_SO ? &kt->pins->so : &kt->pins->user;
	return who == CKU_SO ? kt->pins->so_source : kt->pins->user_source;
}

int
pg_keytoken_read_pin(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri, p11glue_pin **pin)
{
	p11glue_pin **kept = NULL;
	const char *source = option_source(kt, who, &kept);
	const unsigned char *value;
	char prompt[96];
	size_t len;
	int status;

	snprintf(prompt, sizeof(prompt), "%s for %s", who == CKU_SO ? "SO PIN" : "PIN",
	         pg_keytoken_label(kt));
	if (source == NULL)
		return resolve(uri, prompt, pin);
	/* Read once: the next login of the command gets the same PIN. */
	if (*kept == NULL && (status = pg_store_read_secret(source, prompt, 0, kept)) != PG_EXIT_OK)
		return status;
	value = p11glue_pin_value(*kept, &len);
	*pin = p11glue_pin_new(value, len);
	if (*pin == NULL) {
		pg_message("out of memory");
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* Whether the user is logged in to the session's token (a login is per
 * token, and another session of this process may have made it). */
static bool
user_logged_in(pg_keytoken *kt)
{
	CK_SESSION_INFO info;

	return kt->f->C_GetSessionInfo(kt->session, &info) == CKR_OK &&
	       (info.state == CKS_RO_USER_FUNCTIONS || info.state == CKS_RW_USER_FUNCTIONS);
}

/*
 * C_Login as who, its result in *rv: on a reader's own PIN pad when pad
 * allows it and the command named no PIN, else with the PIN read for
 * who. A status other than PG_EXIT_OK when no PIN could be read.
 */
static int
log_in(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri, bool pad, CK_RV *rv)
{
	p11glue_pin **kept = NULL;
	bool named = option_source(kt, who, &kept) != NULL ||
	             (uri && (p11glue_uri_get(uri, P11GLUE_URI_PIN_VALUE, NULL) ||
	                      p11glue_uri_get(uri, P11GLUE_URI_PIN_SOURCE, NULL)));
	p11glue_pin *pin = NULL;
	const unsigned char *value;
	size_t len = 0;
	int status;

	/* A reader with its own PIN pad asks there. */
	if (pad && !named && (kt->token.flags & CKF_PROTECTED_AUTHENTICATION_PATH)) {
		*rv = kt->f->C_Login(kt->session, who, NULL, 0);
		return PG_EXIT_OK;
	}
	status = pg_keytoken_read_pin(kt, who, uri, &pin);
	if (status != PG_EXIT_OK)
		return status;
	value = p11glue_pin_value(pin, &len);
	*rv = kt->f->C_Login(kt->session, who, (CK_UTF8CHAR_PTR)value, len);
	p11glue_pin_free(pin);
	return PG_EXIT_OK;
}

int
pg_keytoken_login(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_uri *uri)
{
	int status;
	CK_RV rv;

	/* Logged in already: no PIN to ask for. */
	if (who == CKU_USER && user_logged_in(kt))
		return PG_EXIT_OK;
	status = log_in(kt, who, uri, true, &rv);
	if (status != PG_EXIT_OK)
		return status;
	if (rv == CKR_USER_ALREADY_LOGGED_IN)
		rv = CKR_OK;
	if (rv != CKR_OK) {
		pg_keytoken_pin_error(kt, who, who == CKU_SO ? "SO login" : "login", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_keytoken_unlock(pg_keytoken *kt, const p11glue_uri *uri, bool prompt_here, bool *was)
{
	int status;
	CK_RV rv;

	*was = user_logged_in(kt);
	if (*was)
		return PG_EXIT_OK;
	status = log_in(kt, CKU_USER, uri, !prompt_here, &rv);
	if (status != PG_EXIT_OK)
		return status;
	/* Another program unlocked it meanwhile. */
	if (rv == CKR_USER_ALREADY_LOGGED_IN)
		*was = true;
	else if (rv != CKR_OK) {
		pg_keytoken_pin_error(kt, CKU_USER, "unlock", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

/* ---------------------------------------------------------------------------
 * What a refused PIN says
 */

void
pg_keytoken_pin_error(pg_keytoken *kt, CK_USER_TYPE who, const char *what, CK_RV rv)
{
	bool so = who == CKU_SO;
	CK_FLAGS low = so ? CKF_SO_PIN_COUNT_LOW : CKF_USER_PIN_COUNT_LOW;
	CK_FLAGS final = so ? CKF_SO_PIN_FINAL_TRY : CKF_USER_PIN_FINAL_TRY;
	CK_FLAGS locked = so ? CKF_SO_PIN_LOCKED : CKF_USER_PIN_LOCKED;
	const char *pin = so ? "SO PIN" : "user PIN";
	CK_FLAGS flags;
	char *uri;

	pg_keytoken_error(what, rv);
	if (rv != CKR_PIN_INCORRECT && rv != CKR_PIN_LOCKED)
		return;
	/* CK_TOKEN_INFO flags, PKCS#11 base specification §3.2. */
	pg_keytoken_refresh(kt);
	flags = kt->token.flags;
	if ((flags & locked) || rv == CKR_PIN_LOCKED) {
		if (so) {
			pg_message("token '%s': the SO PIN is locked; no SO login works any more",
			           pg_keytoken_label(kt));
			return;
		}
		uri = pg_keytoken_uri(kt);
		pg_message("token '%s': the user PIN is locked; the security officer unlocks it by "
		           "setting a new one with the SO PIN: p11glue init-pin '%s'",
		           pg_keytoken_label(kt), uri ? uri : "pkcs11:");
		free(uri);
		return;
	}
	if (flags & (low | final))
		pg_message("token '%s', %s: %s%s%s", pg_keytoken_label(kt), pin,
		           (flags & low) ? "a wrong PIN was entered since the last good one" : "",
		           (flags & low) && (flags & final) ? "; " : "",
		           (flags & final) ? "one try left before the PIN locks" : "");
	else
		pg_message("token '%s', %s: the token does not say how many tries are left",
		           pg_keytoken_label(kt), pin);
}
