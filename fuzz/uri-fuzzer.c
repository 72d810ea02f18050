/*
 * libFuzzer target for the PKCS#11 URI parser. Checks, for every input:
 * no crash or leak; a URI that parses formats to text that parses back
 * strictly to the same URI; formatting is a fixed point; a URI matches
 * the object template made from it unless it has a path attribute that
 * no matcher knows, and then it matches nothing.
 */
#include "config.h"

#include <p11glue/p11glue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
path_vendor(const p11glue_uri *uri)
{
	bool in_query;

	return p11glue_uri_vendor_get(uri, 0, &in_query, NULL, NULL, NULL) && !in_query;
}

static void
check(const char *text, unsigned flags)
{
	p11glue_uri *uri, *back;
	p11glue_uri_error error;
	CK_TOKEN_INFO token;
	CK_INFO info;
	CK_SLOT_INFO slot;
	CK_ATTRIBUTE attrs[3];
	CK_OBJECT_CLASS klass;
	char *formatted, *again;
	CK_ULONG n;

	if (p11glue_uri_parse(text, flags, &uri, &error) != P11GLUE_OK)
		return;
	formatted = p11glue_uri_format(uri);
	if (formatted == NULL)
		abort();
	if (p11glue_uri_parse(formatted, 0, &back, &error) != P11GLUE_OK) {
		fprintf(stderr, "canonical form does not parse: %s: %s\n", formatted, error.detail);
		abort();
	}
	/* Unrecognized attributes are not formatted; compare the rest. */
	if (!p11glue_uri_is_unrecognized(uri) && !p11glue_uri_equal(uri, back)) {
		fprintf(stderr, "round trip changed the URI: %s\n", formatted);
		abort();
	}
	again = p11glue_uri_format(back);
	if (again == NULL || strcmp(again, formatted) != 0) {
		fprintf(stderr, "format is not a fixed point: %s\n", formatted);
		abort();
	}
	memset(&token, ' ', sizeof(token));
	memset(&info, ' ', sizeof(info));
	memset(&slot, ' ', sizeof(slot));
	p11glue_uri_match_token_info(uri, &token);
	p11glue_uri_match_module_info(uri, &info);
	p11glue_uri_match_slot_info(uri, 0, &slot);
	/* A URI matches the template made from it, unless it has a path
	 * attribute no matcher knows (RFC 7512 §2.3): then it matches nothing. */
	n = p11glue_uri_get_template(uri, attrs, &klass);
	if (p11glue_uri_is_unrecognized(uri) || path_vendor(uri)) {
		if (p11glue_uri_match_attributes(uri, attrs, n) ||
		    p11glue_uri_match_token_info(uri, &token) ||
		    p11glue_uri_match_module(uri, NULL, NULL))
			abort();
	} else if (!p11glue_uri_match_attributes(uri, attrs, n)) {
		abort();
	}
	free(again);
	free(formatted);
	p11glue_uri_free(back);
	p11glue_uri_free(uri);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	check(text, 0);
	check(text, P11GLUE_URI_LENIENT);
	free(text);
	return 0;
}
