/*
 * Writing a backup (backup.h): the tokens of the store as SQLite copies
 * them while they are in use, the trust directory's files, the registry
 * directory's files and the state of each setup target, as records in
 * sealed chunks (seal.c).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "backup.h"
#include "places.h"
#include "seal.h"
#include "tokendb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_STEP (4u << 20)

typedef struct {
	const pg_backup_opts *opts;
	pg_backup_manifest *m;
	pg_seal seal;
	uint64_t shown;              /* bytes when progress was last shown */
} writer;

static void
progress(writer *w, const char *what, bool done)
{
	if (!w->opts->progress || (!done && w->seal.offset - w->shown < PROGRESS_STEP))
		return;
	w->shown = w->seal.offset;
	fprintf(stderr, "\rp11glue: backup: %.1f MiB written%s%s%s", w->seal.offset / 1048576.0,
	        what ? " (" : "", what ? what : "", what ? ")" : "");
	fprintf(stderr, done ? "\n" : "\033[K");
}

/* A whole record: its head and data, written in pieces for progress. */
static bool
record(writer *w, pg_backup_kind kind, const char *name, uint32_t mode, const void *data,
       uint64_t size)
{
	uint8_t head[15 + PG_BACKUP_NAME_MAX];
	size_t n = pg_backup_record_head(head, kind, name, mode, size), step;
	const uint8_t *p = data;

	if (n == 0 || !pg_seal_write(&w->seal, head, n))
		return false;
	for (uint64_t left = size; left > 0; left -= step, p += step) {
		step = left < PROGRESS_STEP ? (size_t)left : PROGRESS_STEP;
		if (!pg_seal_write(&w->seal, p, step))
			return false;
		progress(w, name, false);
	}
	return true;
}

static bool
write_tokens(writer *w, const char *store)
{
	pg_places_list l;
	pg_tokendb_snap snap;
	pg_backup_item *it;
	char *path;
	bool ok, not_token;

	if (!pg_places_tokens(store, &l))
		return false;
	ok = true;
	for (size_t i = 0; ok && i < l.n; i++) {
		if (asprintf(&path, "%s/%s", store, l.names[i]) < 0) {
			ok = false;
			break;
		}
		if (!pg_tokendb_snapshot(path, &snap, &not_token)) {
			free(path);
			/* A file the store does not offer as a token is left out
			 * (the store reports it too); a token that cannot be read
			 * fails the backup. */
			if (!not_token) {
				ok = false;
				break;
			}
			pg_backup_note(w->m, "%s/%s: left out: not a token of the key store", store,
			               l.names[i]);
			continue;
		}
		free(path);
		it = pg_backup_manifest_add(w->m, PG_BACKUP_TOKEN, l.names[i]);
		ok = it != NULL && record(w, PG_BACKUP_TOKEN, l.names[i], 0600, snap.data, snap.len);
		if (it != NULL) {
			it->size = snap.len;
			it->mode = 0600;
			memcpy(it->label, snap.label, sizeof(it->label));
			memcpy(it->serial, snap.serial, sizeof(it->serial));
		}
		pg_tokendb_snapshot_clear(&snap);
	}
	pg_places_list_clear(&l);
	return ok;
}

static bool
write_files(writer *w, pg_backup_kind kind, const char *dir)
{
	pg_places_list l;
	pg_backup_item *it;
	pg_buf data;
	uint32_t mode;
	bool ok = true;

	if (dir == NULL || !pg_places_files(dir, &l))
		return false;
	for (size_t i = 0; ok && i < l.n; i++) {
		ok = pg_places_read(dir, l.names[i], &data, &mode);
		it = ok ? pg_backup_manifest_add(w->m, kind, l.names[i]) : NULL;
		ok = it != NULL && record(w, kind, l.names[i], mode, data.data, data.len);
		if (it != NULL) {
			it->size = data.len;
			it->mode = mode;
		}
		pg_buf_clear(&data);
	}
	pg_places_list_clear(&l);
	return ok;
}

/* Whether a status names the proxy module. */
static bool
names_proxy(const pg_setup_status *st)
{
	for (size_t k = 0; k < st->n; k++) {
		if (st->values[k] != NULL && strstr(st->values[k], "p11glue-proxy.so") != NULL)
			return true;
	}
	return false;
}

/* The state of each target as `p11glue status` finds it. */
static bool
write_setup(writer *w)
{
	pg_setup_env env = { 0 };
	pg_setup_status st;
	pg_backup_item *it;
	pg_buf data;
	bool ok = true;

	if (w->opts->setup != NULL)
		env = *w->opts->setup;
	env.system = false;
	env.verbose = false;
	for (size_t i = 0; ok && i < PG_SETUP_N_TARGETS; i++) {
		const pg_setup_target *t = pg_setup_targets[i];
		memset(&st, 0, sizeof(st));
		t->status(&env, &st);
		pg_buf_init(&data);
		pg_buf_printf(&data, "%s\n%s", st.state, names_proxy(&st) ? "proxy\n" : "");
		it = pg_backup_manifest_add(w->m, PG_BACKUP_SETUP, t->name);
		ok = it != NULL && !data.failed && (it->state = strdup(st.state)) != NULL &&
		     record(w, PG_BACKUP_SETUP, t->name, 0, data.data, data.len);
		if (it != NULL)
			it->proxy = names_proxy(&st);
		pg_buf_clear(&data);
		pg_setup_status_clear(&st);
	}
	return ok;
}

int
pg_backup_write(const pg_backup_opts *opts, FILE *out, pg_backup_manifest *m)
{
	writer w = { .opts = opts, .m = m };
	char *store = pg_places_store(opts->store_dir);
	char *trust = pg_places_trust();
	char *registry = pg_places_registry();
	bool ok = store != NULL && trust != NULL && registry != NULL;

	memset(m, 0, sizeof(*m));
	m->log2n = opts->log2n ? opts->log2n : PG_BACKUP_LOG2N_DEFAULT;
	ok = ok && pg_seal_write_start(&w.seal, out, opts->pass, opts->pass_len, m->log2n);
	m->r = w.seal.h.r;
	m->p = w.seal.h.p;
	ok = ok && write_tokens(&w, store);
	ok = ok && write_files(&w, PG_BACKUP_TRUST, trust);
	ok = ok && write_files(&w, PG_BACKUP_REGISTRY, registry);
	ok = ok && write_setup(&w);
	ok = ok && record(&w, PG_BACKUP_END, "", 0, NULL, 0) && pg_seal_write_finish(&w.seal);
	if (ok && (fflush(out) != 0 || ferror(out))) {
		pg_message("writing the backup failed");
		ok = false;
	}
	if (!ok && ferror(out))
		pg_message("writing the backup: %s", strerror(errno));
	if (ok)
		progress(&w, NULL, w.shown > 0);
	m->bytes = w.seal.offset;
	pg_seal_clear(&w.seal);
	free(store);
	free(trust);
	free(registry);
	return ok ? PG_EXIT_OK : PG_EXIT_FAIL;
}
