/*
 * The reference side of the differential URI test: Debian's libp11-kit.
 */
#include "uri-p11kit-ref.h"

#include <p11-kit/uri.h>

#include <stdio.h>
#include <string.h>

/* Fixed-size blank-padded field: unset while p11-kit leaves it zeroed. */
static void
take_padded(ref_uri *out, int field, const unsigned char *data, size_t size)
{
	size_t len = size;

	if (data[0] == 0)
		return;
	while (len > 0 && data[len - 1] == ' ')
		len--;
	out->has[field] = true;
	memcpy(out->value[field], data, len);
	out->len[field] = len;
}

static void
take_bytes(ref_uri *out, int field, const void *data, size_t len)
{
	if (len >= sizeof(out->value[field]))
		len = sizeof(out->value[field]) - 1;
	out->has[field] = true;
	memcpy(out->value[field], data, len);
	out->len[field] = len;
}

static void
take_string(ref_uri *out, int field, const char *str)
{
	if (str != NULL)
		take_bytes(out, field, str, strlen(str));
}

static const char *
class_name(CK_OBJECT_CLASS klass)
{
	switch (klass) {
	case CKO_PUBLIC_KEY: return "public";
	case CKO_PRIVATE_KEY: return "private";
	case CKO_CERTIFICATE: return "cert";
	case CKO_SECRET_KEY: return "secret-key";
	case CKO_DATA: return "data";
	default: return "?";
	}
}

void
ref_p11kit_parse(const char *text, const char *const *vendor_names, size_t n_vendor,
                 ref_uri *out)
{
	P11KitUri *uri = p11_kit_uri_new();
	CK_TOKEN_INFO *token;
	CK_INFO *info;
	CK_SLOT_INFO *slot;
	CK_ATTRIBUTE *attr;
	char num[32];

	memset(out, 0, sizeof(*out));
	out->result = p11_kit_uri_parse(text, P11_KIT_URI_FOR_ANY, uri);
	if (out->result != P11_KIT_URI_OK) {
		p11_kit_uri_free(uri);
		return;
	}
	out->unrecognized = p11_kit_uri_any_unrecognized(uri);
	token = p11_kit_uri_get_token_info(uri);
	take_padded(out, REF_TOKEN, token->label, sizeof(token->label));
	take_padded(out, REF_MANUFACTURER, token->manufacturerID, sizeof(token->manufacturerID));
	take_padded(out, REF_SERIAL, token->serialNumber, sizeof(token->serialNumber));
	take_padded(out, REF_MODEL, token->model, sizeof(token->model));
	info = p11_kit_uri_get_module_info(uri);
	take_padded(out, REF_LIBRARY_MANUFACTURER, info->manufacturerID,
	            sizeof(info->manufacturerID));
	take_padded(out, REF_LIBRARY_DESCRIPTION, info->libraryDescription,
	            sizeof(info->libraryDescription));
	if (info->libraryVersion.major != (CK_BYTE)-1) {
		snprintf(num, sizeof(num), "%u.%u", info->libraryVersion.major,
		         info->libraryVersion.minor);
		take_string(out, REF_LIBRARY_VERSION, num);
	}
	slot = p11_kit_uri_get_slot_info(uri);
	take_padded(out, REF_SLOT_DESCRIPTION, slot->slotDescription,
	            sizeof(slot->slotDescription));
	take_padded(out, REF_SLOT_MANUFACTURER, slot->manufacturerID,
	            sizeof(slot->manufacturerID));
	if (p11_kit_uri_get_slot_id(uri) != (CK_SLOT_ID)-1) {
		snprintf(num, sizeof(num), "%lu", p11_kit_uri_get_slot_id(uri));
		take_string(out, REF_SLOT_ID, num);
	}
	attr = p11_kit_uri_get_attribute(uri, CKA_LABEL);
	if (attr)
		take_bytes(out, REF_OBJECT, attr->pValue, attr->ulValueLen);
	attr = p11_kit_uri_get_attribute(uri, CKA_ID);
	if (attr)
		take_bytes(out, REF_ID, attr->pValue, attr->ulValueLen);
	attr = p11_kit_uri_get_attribute(uri, CKA_CLASS);
	if (attr && attr->ulValueLen == sizeof(CK_OBJECT_CLASS))
		take_string(out, REF_TYPE, class_name(*(CK_OBJECT_CLASS *)attr->pValue));
	take_string(out, REF_PIN_SOURCE, p11_kit_uri_get_pin_source(uri));
	take_string(out, REF_PIN_VALUE, p11_kit_uri_get_pin_value(uri));
	take_string(out, REF_MODULE_NAME, p11_kit_uri_get_module_name(uri));
	take_string(out, REF_MODULE_PATH, p11_kit_uri_get_module_path(uri));
	for (size_t i = 0; i < n_vendor && i < REF_MAX_VENDOR; i++) {
		const char *v = p11_kit_uri_get_vendor_query(uri, vendor_names[i]);
		if (v) {
			out->has_vendor[i] = true;
			snprintf(out->vendor[i], sizeof(out->vendor[i]), "%s", v);
		}
	}
	p11_kit_uri_free(uri);
}
