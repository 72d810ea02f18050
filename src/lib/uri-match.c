/*
 * Matching a PKCS#11 URI against module, slot, token and object data.
 */
#include "config.h"

#include "uri-private.h"

#include <p11glue/p11glue.h>

#include <stdio.h>
#include <string.h>

/*
 * RFC 7512 §2.3: a URI with a path attribute the consumer does not know
 * identifies nothing it can find. p11glue's matchers know the standard
 * attributes only, so every vendor path attribute counts (a consumer
 * that knows one removes it from a copy before matching); vendor query
 * attributes are ignored. Lenient parsing marks what it could not
 * understand as unrecognized, with the same effect.
 */
static bool
matches_nothing(const p11glue_uri *uri)
{
	return uri->unrecognized || pg_uri_has_path_vendor(uri);
}

/*
 * PKCS#11 (v3.0 §3.3) pads the text fields of CK_INFO, CK_SLOT_INFO and
 * CK_TOKEN_INFO with blanks and does not terminate them; some modules pad
 * with NULs instead, so both count as padding here.
 */
static bool
match_padded(const pg_uri_value *v, const CK_UTF8CHAR *field, size_t size)
{
	if (v->data == NULL)
		return true;
	if (v->len > size || memcmp(v->data, field, v->len) != 0)
		return false;
	for (size_t i = v->len; i < size; i++) {
		if (field[i] != ' ' && field[i] != 0)
			return false;
	}
	return true;
}

bool
p11glue_uri_match_module_info(const p11glue_uri *uri, const CK_INFO *info)
{
	CK_VERSION version;

	pg_return_val_if_fail(uri != NULL && info != NULL, false);
	if (matches_nothing(uri))
		return false;
	if (p11glue_uri_get_library_version(uri, &version) &&
	    (version.major != info->libraryVersion.major ||
	     version.minor != info->libraryVersion.minor))
		return false;
	return match_padded(&uri->fields[P11GLUE_URI_LIBRARY_MANUFACTURER],
	                    info->manufacturerID, sizeof(info->manufacturerID)) &&
	       match_padded(&uri->fields[P11GLUE_URI_LIBRARY_DESCRIPTION],
	                    info->libraryDescription, sizeof(info->libraryDescription));
}

bool
p11glue_uri_match_slot_info(const p11glue_uri *uri, CK_SLOT_ID slot_id,
                            const CK_SLOT_INFO *info)
{
	CK_SLOT_ID wanted;

	pg_return_val_if_fail(uri != NULL && info != NULL, false);
	if (matches_nothing(uri))
		return false;
	if (p11glue_uri_get_slot_id(uri, &wanted) && wanted != slot_id)
		return false;
	return match_padded(&uri->fields[P11GLUE_URI_SLOT_DESCRIPTION],
	                    info->slotDescription, sizeof(info->slotDescription)) &&
	       match_padded(&uri->fields[P11GLUE_URI_SLOT_MANUFACTURER],
	                    info->manufacturerID, sizeof(info->manufacturerID));
}

bool
p11glue_uri_match_token_info(const p11glue_uri *uri, const CK_TOKEN_INFO *info)
{
	pg_return_val_if_fail(uri != NULL && info != NULL, false);
	if (matches_nothing(uri))
		return false;
	return match_padded(&uri->fields[P11GLUE_URI_TOKEN],
	                    info->label, sizeof(info->label)) &&
	       match_padded(&uri->fields[P11GLUE_URI_MANUFACTURER],
	                    info->manufacturerID, sizeof(info->manufacturerID)) &&
	       match_padded(&uri->fields[P11GLUE_URI_SERIAL],
	                    info->serialNumber, sizeof(info->serialNumber)) &&
	       match_padded(&uri->fields[P11GLUE_URI_MODEL],
	                    info->model, sizeof(info->model));
}

static const CK_ATTRIBUTE *
find_attribute(const CK_ATTRIBUTE *attrs, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++) {
		if (attrs[i].type == type)
			return &attrs[i];
	}
	return NULL;
}

/* An unset URI value matches; else the attribute must hold exactly it. */
static bool
match_bytes(const pg_uri_value *v, const CK_ATTRIBUTE *attrs, CK_ULONG n,
            CK_ATTRIBUTE_TYPE type)
{
	const CK_ATTRIBUTE *attr;

	if (v->data == NULL)
		return true;
	attr = find_attribute(attrs, n, type);
	if (attr == NULL || attr->ulValueLen == CK_UNAVAILABLE_INFORMATION ||
	    attr->ulValueLen != v->len)
		return false;
	return v->len == 0 || (attr->pValue != NULL &&
	                       memcmp(attr->pValue, v->data, v->len) == 0);
}

bool
p11glue_uri_match_attributes(const p11glue_uri *uri, const CK_ATTRIBUTE *attrs,
                             CK_ULONG n_attrs)
{
	const CK_ATTRIBUTE *attr;
	CK_OBJECT_CLASS klass, have;

	pg_return_val_if_fail(uri != NULL, false);
	pg_return_val_if_fail(attrs != NULL || n_attrs == 0, false);
	if (matches_nothing(uri))
		return false;
	if (p11glue_uri_get_class(uri, &klass)) {
		attr = find_attribute(attrs, n_attrs, CKA_CLASS);
		if (attr == NULL || attr->pValue == NULL ||
		    attr->ulValueLen != sizeof(CK_OBJECT_CLASS))
			return false;
		memcpy(&have, attr->pValue, sizeof(have));
		if (have != klass)
			return false;
	}
	return match_bytes(&uri->fields[P11GLUE_URI_OBJECT], attrs, n_attrs, CKA_LABEL) &&
	       match_bytes(&uri->fields[P11GLUE_URI_ID], attrs, n_attrs, CKA_ID);
}

CK_ULONG
p11glue_uri_get_template(const p11glue_uri *uri, CK_ATTRIBUTE attrs[3],
                         CK_OBJECT_CLASS *klass)
{
	const pg_uri_value *v;
	CK_ULONG n = 0;

	pg_return_val_if_fail(uri != NULL && attrs != NULL && klass != NULL, 0);
	v = &uri->fields[P11GLUE_URI_OBJECT];
	if (v->data != NULL)
		attrs[n++] = (CK_ATTRIBUTE){ CKA_LABEL, v->data, v->len };
	if (p11glue_uri_get_class(uri, klass))
		attrs[n++] = (CK_ATTRIBUTE){ CKA_CLASS, klass, sizeof(*klass) };
	v = &uri->fields[P11GLUE_URI_ID];
	if (v->data != NULL)
		attrs[n++] = (CK_ATTRIBUTE){ CKA_ID, v->data, v->len };
	return n;
}

bool
p11glue_uri_match_module(const p11glue_uri *uri, const char *name, const char *path)
{
	const pg_uri_value *v;

	pg_return_val_if_fail(uri != NULL, false);
	if (matches_nothing(uri))
		return false;
	v = &uri->fields[P11GLUE_URI_MODULE_NAME];
	if (v->data != NULL && (name == NULL || strlen(name) != v->len ||
	                        memcmp(name, v->data, v->len) != 0))
		return false;
	v = &uri->fields[P11GLUE_URI_MODULE_PATH];
	if (v->data != NULL && (path == NULL || strlen(path) != v->len ||
	                        memcmp(path, v->data, v->len) != 0))
		return false;
	return true;
}

/* Sets a text field from a blank-padded PKCS#11 field. */
static int
set_padded(p11glue_uri *uri, p11glue_uri_field field, const CK_UTF8CHAR *data, size_t size)
{
	while (size > 0 && (data[size - 1] == ' ' || data[size - 1] == 0))
		size--;
	return p11glue_uri_set(uri, field, data, size, NULL);
}

int
p11glue_uri_set_module_info(p11glue_uri *uri, const CK_INFO *info)
{
	char version[16];
	int rv;

	pg_return_val_if_fail(uri != NULL && info != NULL, P11GLUE_ERR_ARGS);
	snprintf(version, sizeof(version), "%u.%u", info->libraryVersion.major,
	         info->libraryVersion.minor);
	rv = set_padded(uri, P11GLUE_URI_LIBRARY_MANUFACTURER, info->manufacturerID,
	                sizeof(info->manufacturerID));
	if (rv == P11GLUE_OK)
		rv = set_padded(uri, P11GLUE_URI_LIBRARY_DESCRIPTION, info->libraryDescription,
		                sizeof(info->libraryDescription));
	if (rv == P11GLUE_OK)
		rv = p11glue_uri_set(uri, P11GLUE_URI_LIBRARY_VERSION, version, strlen(version), NULL);
	return rv;
}

int
p11glue_uri_set_slot_info(p11glue_uri *uri, CK_SLOT_ID slot_id, const CK_SLOT_INFO *info)
{
	char id[32];
	int rv;

	pg_return_val_if_fail(uri != NULL && info != NULL, P11GLUE_ERR_ARGS);
	snprintf(id, sizeof(id), "%lu", slot_id);
	rv = set_padded(uri, P11GLUE_URI_SLOT_DESCRIPTION, info->slotDescription,
	                sizeof(info->slotDescription));
	if (rv == P11GLUE_OK)
		rv = set_padded(uri, P11GLUE_URI_SLOT_MANUFACTURER, info->manufacturerID,
		                sizeof(info->manufacturerID));
	if (rv == P11GLUE_OK)
		rv = p11glue_uri_set(uri, P11GLUE_URI_SLOT_ID, id, strlen(id), NULL);
	return rv;
}

int
p11glue_uri_set_token_info(p11glue_uri *uri, const CK_TOKEN_INFO *info)
{
	int rv;

	pg_return_val_if_fail(uri != NULL && info != NULL, P11GLUE_ERR_ARGS);
	rv = set_padded(uri, P11GLUE_URI_TOKEN, info->label, sizeof(info->label));
	if (rv == P11GLUE_OK)
		rv = set_padded(uri, P11GLUE_URI_MANUFACTURER, info->manufacturerID,
		                sizeof(info->manufacturerID));
	if (rv == P11GLUE_OK)
		rv = set_padded(uri, P11GLUE_URI_SERIAL, info->serialNumber,
		                sizeof(info->serialNumber));
	if (rv == P11GLUE_OK)
		rv = set_padded(uri, P11GLUE_URI_MODEL, info->model, sizeof(info->model));
	return rv;
}
