/*
 * p11glue list-objects [--login] [--json] URI
 */
#include "config.h"

#include "tool.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	bool json;
	bool login;
	const p11glue_uri *uri;
	pg_json out;
	int status;
} walk;

static const char *const class_names[] = {
	[CKO_DATA] = "data", [CKO_CERTIFICATE] = "cert", [CKO_PUBLIC_KEY] = "public",
	[CKO_PRIVATE_KEY] = "private", [CKO_SECRET_KEY] = "secret-key",
};

/* Reads one attribute into a new buffer; NULL when unavailable. */
static unsigned char *
get_attribute(const pg_token *t, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
              CK_ATTRIBUTE_TYPE type, CK_ULONG *len)
{
	CK_ATTRIBUTE attr = { type, NULL, 0 };
	unsigned char *value;

	if (t->funcs->C_GetAttributeValue(s, obj, &attr, 1) != CKR_OK ||
	    attr.ulValueLen == CK_UNAVAILABLE_INFORMATION)
		return NULL;
	value = malloc(attr.ulValueLen + 1);
	attr.pValue = value;
	if (value == NULL || t->funcs->C_GetAttributeValue(s, obj, &attr, 1) != CKR_OK) {
		free(value);
		return NULL;
	}
	*len = attr.ulValueLen;
	return value;
}

static CK_ULONG
get_ulong(const pg_token *t, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj,
          CK_ATTRIBUTE_TYPE type, bool *ok)
{
	CK_ULONG value = 0;
	CK_ATTRIBUTE attr = { type, &value, sizeof(value) };

	*ok = t->funcs->C_GetAttributeValue(s, obj, &attr, 1) == CKR_OK;
	return value;
}

static char *
object_uri(const pg_token *t, CK_OBJECT_CLASS klass, bool has_class,
           const unsigned char *label, CK_ULONG label_len,
           const unsigned char *id, CK_ULONG id_len)
{
	p11glue_uri *uri = p11glue_uri_new();
	const char *type = has_class && klass < PG_N_ELEMENTS(class_names) ? class_names[klass] : NULL;
	char *text = NULL;

	if (uri == NULL || p11glue_uri_set_token_info(uri, &t->token) != P11GLUE_OK)
		goto out;
	if (label && p11glue_uri_set(uri, P11GLUE_URI_OBJECT, label, label_len, NULL) != P11GLUE_OK)
		goto out;
	if (type && p11glue_uri_set(uri, P11GLUE_URI_TYPE, type, strlen(type), NULL) != P11GLUE_OK)
		goto out;
	if (id && p11glue_uri_set(uri, P11GLUE_URI_ID, id, id_len, NULL) != P11GLUE_OK)
		goto out;
	text = p11glue_uri_format(uri);
out:
	p11glue_uri_free(uri);
	return text;
}

static void
print_hex(FILE *out, const unsigned char *data, CK_ULONG len)
{
	for (CK_ULONG i = 0; i < len; i++)
		fprintf(out, "%02x", data[i]);
}

static void
print_object(walk *w, const pg_token *t, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE obj)
{
	CK_ULONG label_len = 0, id_len = 0, key_type;
	unsigned char *label = get_attribute(t, s, obj, CKA_LABEL, &label_len);
	unsigned char *id = get_attribute(t, s, obj, CKA_ID, &id_len);
	bool has_class, has_key_type;
	CK_OBJECT_CLASS klass = get_ulong(t, s, obj, CKA_CLASS, &has_class);
	char *uri = object_uri(t, klass, has_class, label, label_len, id, id_len);
	const char *class_name = has_class ? pg_name_cko(klass) : NULL;
	const char *key_name;

	key_type = get_ulong(t, s, obj, CKA_KEY_TYPE, &has_key_type);
	key_name = has_key_type ? pg_name_ckk(key_type) : NULL;
	if (w->json) {
		pg_json_begin_object(&w->out);
		pg_json_key(&w->out, "uri");
		pg_json_text(&w->out, uri ? uri : "");
		pg_json_key(&w->out, "class");
		pg_json_string(&w->out, class_name ? class_name : "unknown");
		if (label) {
			pg_json_key(&w->out, "label");
			pg_json_bytes(&w->out, label, label_len);
		}
		if (id) {
			char *hex = malloc(id_len * 2 + 1);
			for (CK_ULONG i = 0; hex && i < id_len; i++)
				snprintf(hex + i * 2, 3, "%02x", id[i]);
			pg_json_key(&w->out, "id");
			pg_json_string(&w->out, hex ? (hex[id_len * 2] = 0, hex) : "");
			free(hex);
		}
		if (key_name) {
			pg_json_key(&w->out, "key-type");
			pg_json_string(&w->out, key_name);
		}
		pg_json_end_object(&w->out);
	} else {
		printf("Object: %s\n    class: %s\n", uri ? uri : "?", class_name ? class_name : "unknown");
		if (label)
			printf("    label: %.*s\n", (int)label_len, label);
		if (id) {
			printf("    id: ");
			print_hex(stdout, id, id_len);
			printf("\n");
		}
		if (key_name)
			printf("    key-type: %s\n", key_name);
	}
	free(uri);
	free(label);
	free(id);
}

static CK_RV
login(const pg_token *t, CK_SESSION_HANDLE s, const p11glue_uri *uri)
{
	char prompt[128], *why = NULL;
	const unsigned char *value;
	p11glue_pin *pin = NULL;
	size_t len;
	CK_RV rv;
	int r;

	int label_len = (int)sizeof(t->token.label);

	while (label_len > 0 && t->token.label[label_len - 1] == ' ')
		label_len--;
	snprintf(prompt, sizeof(prompt), "PIN for %.*s", label_len, (const char *)t->token.label);
	r = p11glue_pin_resolve(uri, prompt, P11GLUE_PIN_PROMPT, &pin, &why);
	if (r != P11GLUE_OK) {
		pg_message("no PIN: %s%s%s", p11glue_strerror(r), why ? ": " : "", why ? why : "");
		free(why);
		return CKR_PIN_INCORRECT;
	}
	value = p11glue_pin_value(pin, &len);
	rv = t->funcs->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)value, len);
	p11glue_pin_free(pin);
	if (rv == CKR_USER_ALREADY_LOGGED_IN)
		rv = CKR_OK;
	if (rv != CKR_OK)
		pg_message("C_Login: %s", pg_token_ckr(rv));
	return rv;
}

static int
list_token_objects(const pg_token *t, void *data)
{
	walk *w = data;
	CK_ATTRIBUTE tmpl[3];
	CK_OBJECT_CLASS klass;
	CK_OBJECT_HANDLE objs[64];
	CK_SESSION_HANDLE s;
	CK_ULONG n, count;
	CK_RV rv;

	rv = t->funcs->C_OpenSession(t->slot, CKF_SERIAL_SESSION, NULL, NULL, &s);
	if (rv != CKR_OK) {
		pg_message("C_OpenSession: %s", pg_token_ckr(rv));
		w->status = PG_EXIT_FAIL;
		return 0;
	}
	if (w->login && login(t, s, w->uri) != CKR_OK) {
		w->status = PG_EXIT_FAIL;
		t->funcs->C_CloseSession(s);
		return 0;
	}
	n = p11glue_uri_get_template(w->uri, tmpl, &klass);
	rv = t->funcs->C_FindObjectsInit(s, tmpl, n);
	while (rv == CKR_OK) {
		rv = t->funcs->C_FindObjects(s, objs, PG_N_ELEMENTS(objs), &count);
		if (rv != CKR_OK || count == 0)
			break;
		for (CK_ULONG i = 0; i < count; i++) {
			if (p11glue_uri_is_unrecognized(w->uri))
				break;
			print_object(w, t, s, objs[i]);
		}
	}
	t->funcs->C_FindObjectsFinal(s);
	if (rv != CKR_OK) {
		pg_message("C_FindObjects: %s", pg_token_ckr(rv));
		w->status = PG_EXIT_FAIL;
	}
	t->funcs->C_CloseSession(s);
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue list-objects [--login] [--json] URI\n"
	        "\n"
	        "Lists the objects the URI selects (object, type, id) on the tokens it\n"
	        "selects, each with the URI that names it. Private objects are only\n"
	        "visible after --login.\n"
	        "\n"
	        "Options:\n"
	        "  --login     log in to each token first; the PIN comes from the URI's\n"
	        "              pin-value or pin-source, else from a prompt on the terminal\n"
	        "  --json      print a JSON document for scripts\n"
	        "  -h, --help  show this help\n"
	        "\n"
	        "Exit status: 0 success, 1 error (bad URI, no token matched, login\n"
	        "failed), 2 usage error.\n");
}

int
pg_cmd_list_objects(int argc, char **argv)
{
	walk w = { .status = PG_EXIT_OK };
	p11glue_registry *reg = NULL;
	p11glue_uri *uri = NULL;
	size_t count = 0;
	const pg_opt table[] = {
		{ "json", 0, PG_OPT_FLAG, &w.json, 0 },
		{ "login", 0, PG_OPT_FLAG, &w.login, 0 },
	};
	int next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), usage, 0, -1,
	                                   &next);

	if (status >= 0)
		return status;
	if (argc - next != 1)
		return pg_tool_usage_error(argv[0], "expected exactly one PKCS#11 URI");
	if (!pg_token_parse_uri(argv[next], &uri))
		return PG_EXIT_FAIL;
	w.uri = uri;
	status = pg_token_open_registry(uri, &reg);
	if (status == PG_EXIT_OK) {
		pg_json_init(&w.out, stdout);
		if (w.json)
			pg_json_begin_array(&w.out);
		pg_token_each(reg, uri, list_token_objects, &w, &count);
		if (w.json) {
			pg_json_end_array(&w.out);
			pg_json_finish(&w.out);
		}
		status = w.status;
		if (count == 0) {
			pg_message("no token matches the URI");
			status = PG_EXIT_FAIL;
		}
	}
	p11glue_registry_free(reg);
	p11glue_uri_free(uri);
	return status;
}
