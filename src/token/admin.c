/*
 * What the commands do to a token beyond reading it (token.h): setting it
 * up and its PINs, destroying objects, and walking the objects of the
 * tokens of a registry walk, logged in with the command's PINs (pins.c).
 */
#include "config.h"

#include "token.h"
#include "objects.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Token administration
 */

int
pg_keytoken_init_token(pg_keytoken *kt, const p11glue_pin *so_pin, const char *label)
{
	CK_UTF8CHAR padded[32];
	size_t len;
	const unsigned char *value = p11glue_pin_value(so_pin, &len);
	CK_RV rv;

	pg_pad(padded, sizeof(padded), label);
	rv = kt->f->C_InitToken(kt->slot, (CK_UTF8CHAR_PTR)value, len, padded);
	if (rv != CKR_OK) {
		pg_keytoken_pin_error(kt, CKU_SO, "C_InitToken", rv);
		return PG_EXIT_FAIL;
	}
	pg_keytoken_refresh(kt);
	return PG_EXIT_OK;
}

int
pg_keytoken_init_pin(pg_keytoken *kt, const p11glue_pin *pin)
{
	size_t len;
	const unsigned char *value = p11glue_pin_value(pin, &len);
	CK_RV rv = kt->f->C_InitPIN(kt->session, (CK_UTF8CHAR_PTR)value, len);

	if (rv != CKR_OK) {
		pg_keytoken_error("C_InitPIN", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

int
pg_keytoken_set_pin(pg_keytoken *kt, CK_USER_TYPE who, const p11glue_pin *old,
                    const p11glue_pin *pin)
{
	size_t old_len, len;
	const unsigned char *old_value = p11glue_pin_value(old, &old_len);
	const unsigned char *value = p11glue_pin_value(pin, &len);
	CK_RV rv = CKR_OK;

	/* Not logged in, C_SetPIN changes the user PIN; the SO's needs the
	 * SO logged in (base specification §5.6). */
	if (who == CKU_SO)
		rv = kt->f->C_Login(kt->session, CKU_SO, (CK_UTF8CHAR_PTR)old_value, old_len);
	if (rv == CKR_OK)
		rv = kt->f->C_SetPIN(kt->session, (CK_UTF8CHAR_PTR)old_value, old_len,
		                     (CK_UTF8CHAR_PTR)value, len);
	if (who == CKU_SO)
		pg_keytoken_logout(kt);
	if (rv != CKR_OK) {
		pg_keytoken_pin_error(kt, who, who == CKU_SO ? "changing the SO PIN"
		                                             : "changing the PIN", rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

void
pg_keytoken_logout(pg_keytoken *kt)
{
	kt->f->C_Logout(kt->session);
}

int
pg_keytoken_destroy(pg_keytoken *kt, CK_OBJECT_HANDLE obj, const char *what)
{
	CK_RV rv = kt->f->C_DestroyObject(kt->session, obj);

	if (rv != CKR_OK) {
		pg_keytoken_error(what, rv);
		return PG_EXIT_FAIL;
	}
	return PG_EXIT_OK;
}

CK_RV
pg_token_mechanisms(const pg_token *t, CK_MECHANISM_TYPE **types, CK_ULONG *n)
{
	CK_RV rv = t->funcs->C_GetMechanismList(t->slot, NULL, n);

	*types = NULL;
	if (rv == CKR_OK && *n > 0) {
		*types = calloc(*n, sizeof(**types));
		rv = *types ? t->funcs->C_GetMechanismList(t->slot, *types, n) : CKR_HOST_MEMORY;
	}
	if (rv != CKR_OK) {
		free(*types);
		*types = NULL;
		*n = 0;
	}
	return rv;
}

CK_RV
pg_token_mechanism_info(const pg_token *t, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO *info)
{
	/* Some modules add flags to what the structure held: start clean. */
	memset(info, 0, sizeof(*info));
	return t->funcs->C_GetMechanismInfo(t->slot, type, info);
}

CK_RV
pg_token_module_info(p11glue_module *mod, CK_INFO *info)
{
	CK_FUNCTION_LIST *f = p11glue_module_functions(mod);

	return f != NULL ? f->C_GetInfo(info) : CKR_GENERAL_ERROR;
}

/* ---------------------------------------------------------------------------
 * Walking objects
 */

int
pg_token_each_object(const pg_token *t, const p11glue_uri *uri, bool login, pg_pins *pins,
                     pg_object_func func, void *data)
{
	pg_keytoken kt = { .f = t->funcs, .slot = t->slot, .token = t->token, .pins = pins };
	CK_ATTRIBUTE tmpl[3];
	CK_OBJECT_CLASS klass;
	CK_OBJECT_HANDLE *found = NULL;
	size_t count = 0;
	int status = pg_keytoken_open(&kt, false);
	CK_RV rv;

	if (status == PG_EXIT_OK && login)
		status = pg_keytoken_login(&kt, CKU_USER, uri);
	if (status == PG_EXIT_OK && !p11glue_uri_is_unrecognized(uri)) {
		rv = pg_objects_find(kt.f, kt.session, tmpl, p11glue_uri_get_template(uri, tmpl, &klass),
		                     &found, &count);
		if (rv != CKR_OK) {
			pg_keytoken_error("C_FindObjects", rv);
			status = PG_EXIT_FAIL;
		}
	}
	for (size_t i = 0; status == PG_EXIT_OK && i < count; i++)
		status = func(&kt, found[i], data);
	free(found);
	if (kt.has_session)
		kt.f->C_CloseSession(kt.session);
	return status;
}
