/*
 * `p11glue adopt` (adopt.h): the token opened and logged in to, what it
 * holds read once, then each source in turn (adopt-ssh.c, adopt-nss.c,
 * adopt-gnupg.c), and the temporary files removed whatever happened.
 */
#include "config.h"

#include "adopt-core.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
pg_adopt_result_clear(pg_adopt_result *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		pg_adopt_item *it = &r->items[i];
		free(it->from);
		free(it->what);
		free(it->why);
		free(it->remove);
		free(it->der);
		free(it->label);
		pg_report_clear(&it->objects);
	}
	free(r->items);
	free(r->token);
	memset(r, 0, sizeof(*r));
}

size_t
pg_adopt_count(const pg_adopt_result *r, pg_adopt_state st, bool trust)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->items[i].state == st && r->items[i].trust == trust;
	return n;
}

/* $HOME, else the password database's. */
static char *
home_dir(const pg_adopt_options *opts)
{
	const char *home = opts->home ? opts->home : getenv("HOME");
	struct passwd *pw;

	if ((home == NULL || home[0] != '/') && (pw = getpwuid(getuid())) != NULL)
		home = pw->pw_dir;
	return home ? strdup(home) : NULL;
}

/* The token: selected, a session (read-write unless dry), logged in
 * (unless dry). */
static int
open_token(pg_adopt *a, pg_store_opts *store, const p11glue_uri *uri)
{
	bool dry = a->opts->dry_run;
	int status = pg_keytoken_load(&a->kt, store, uri);

	a->loaded = status == PG_EXIT_OK;
	if (status == PG_EXIT_OK)
		status = pg_keytoken_select(&a->kt, uri, 0);
	if (status == PG_EXIT_OK)
		status = pg_keytoken_open(&a->kt, !dry);
	if (status == PG_EXIT_OK && !dry)
		status = pg_keytoken_login(&a->kt, CKU_USER, uri);
	if (status == PG_EXIT_OK)
		a->result->token = pg_keytoken_uri(&a->kt);
	return status;
}

int
pg_adopt_run(pg_store_opts *store, const p11glue_uri *uri, const pg_adopt_options *opts,
             pg_adopt_result *result)
{
	pg_adopt a;
	int status;

	memset(&a, 0, sizeof(a));
	memset(result, 0, sizeof(*result));
	a.opts = opts;
	a.result = result;
	a.home = home_dir(opts);
	if (a.home == NULL) {
		pg_message("no home directory: set HOME");
		return PG_EXIT_FAIL;
	}
	status = open_token(&a, store, uri);
	if (status == PG_EXIT_OK && !pg_adopt_index(&a))
		status = PG_EXIT_FAIL;
	if (status == PG_EXIT_OK) {
		pg_adopt_ssh(&a);
		pg_adopt_nss(&a);
		pg_adopt_gnupg(&a);
		pg_adopt_files(&a);
		pg_adopt_tmp_clear(&a);
		status = a.status;
		if (result->failed) {
			pg_message("out of memory: the report is incomplete");
			status = PG_EXIT_FAIL;
		}
	}
	if (a.loaded)
		pg_keytoken_clear(&a.kt);
	for (size_t i = 0; i < a.n_keys; i++) {
		free(a.keys[i].spki);
		free(a.keys[i].blob);
		free(a.keys[i].id);
	}
	free(a.keys);
	for (size_t i = 0; i < a.n_certs; i++)
		free(a.certs[i]);
	free(a.certs);
	free(a.cert_lens);
	free(a.home);
	return status;
}
