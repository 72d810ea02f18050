/*
 * A tiny streaming JSON writer for --json output.
 */
#include "config.h"

#include "tool.h"

#include <string.h>

void
pg_json_init(pg_json *json, FILE *out)
{
	memset(json, 0, sizeof(*json));
	json->out = out;
	json->first[0] = true;
}

static void
indent(pg_json *json)
{
	fputc('\n', json->out);
	for (int i = 0; i < json->depth; i++)
		fputs("  ", json->out);
}

/* Separator and indentation before a value or key. */
static void
before(pg_json *json)
{
	if (json->after_key) {
		json->after_key = false;
		return;
	}
	if (!json->first[json->depth])
		fputc(',', json->out);
	json->first[json->depth] = false;
	if (json->depth > 0)
		indent(json);
}

static void
open_container(pg_json *json, char c)
{
	before(json);
	fputc(c, json->out);
	if (json->depth + 1 < (int)(sizeof(json->first) / sizeof(json->first[0])))
		json->depth++;
	json->first[json->depth] = true;
}

static void
close_container(pg_json *json, char c)
{
	bool empty = json->first[json->depth];

	if (json->depth > 0)
		json->depth--;
	if (!empty)
		indent(json);
	fputc(c, json->out);
}

void pg_json_begin_object(pg_json *json) { open_container(json, '{'); }
void pg_json_end_object(pg_json *json) { close_container(json, '}'); }
void pg_json_begin_array(pg_json *json) { open_container(json, '['); }
void pg_json_end_array(pg_json *json) { close_container(json, ']'); }

void
pg_json_key_begin_object(pg_json *json, const char *key)
{
	pg_json_key(json, key);
	open_container(json, '{');
}

void
pg_json_key_begin_array(pg_json *json, const char *key)
{
	pg_json_key(json, key);
	open_container(json, '[');
}

void
pg_json_key(pg_json *json, const char *key)
{
	before(json);
	pg_tool_json_string(json->out, (const unsigned char *)key, strlen(key));
	fputs(": ", json->out);
	json->after_key = true;
}

void
pg_json_string(pg_json *json, const char *value)
{
	pg_json_bytes(json, value, strlen(value));
}

void
pg_json_key_string(pg_json *json, const char *key, const char *value)
{
	pg_json_key(json, key);
	pg_json_string(json, value);
}

void
pg_json_text(pg_json *json, const char *text)
{
	before(json);
	fputc('"', json->out);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(json->out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(json->out, "\\u%04x", *p);
		else
			fputc(*p, json->out);
	}
	fputc('"', json->out);
}

void
pg_json_key_text(pg_json *json, const char *key, const char *text)
{
	pg_json_key(json, key);
	pg_json_text(json, text);
}

void
pg_json_bytes(pg_json *json, const void *value, size_t len)
{
	before(json);
	pg_tool_json_string(json->out, value, len);
}

void
pg_json_padded(pg_json *json, const unsigned char *value, size_t size)
{
	while (size > 0 && (value[size - 1] == ' ' || value[size - 1] == 0))
		size--;
	pg_json_bytes(json, value, size);
}

void
pg_json_ulong(pg_json *json, unsigned long value)
{
	before(json);
	fprintf(json->out, "%lu", value);
}

void
pg_json_key_ulong(pg_json *json, const char *key, unsigned long value)
{
	pg_json_key(json, key);
	pg_json_ulong(json, value);
}

void
pg_json_bool(pg_json *json, bool value)
{
	before(json);
	fputs(value ? "true" : "false", json->out);
}

void
pg_json_key_bool(pg_json *json, const char *key, bool value)
{
	pg_json_key(json, key);
	pg_json_bool(json, value);
}

void
pg_json_finish(pg_json *json)
{
	fputc('\n', json->out);
}

int
pg_tool_walk_tokens(const p11glue_uri *uri, pg_json *json, bool need_one, pg_token_func fn,
                    void *data)
{
	pg_token_modules modules;
	size_t count = 0;
	int status = pg_token_open_registry(uri, &modules);

	if (status == PG_EXIT_OK) {
		if (json != NULL) {
			pg_json_init(json, stdout);
			pg_json_begin_array(json);
		}
		status = pg_token_each(&modules, uri, fn, data, &count);
		if (json != NULL) {
			pg_json_end_array(json);
			pg_json_finish(json);
		}
		if (status == 0 && count == 0 && need_one) {
			pg_message("no token matches the URI");
			status = PG_EXIT_FAIL;
		}
	}
	pg_token_close_registry(&modules);
	return status;
}
