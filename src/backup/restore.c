/*
 * Restoring a backup (backup.h): staged and checked first (stage.c),
 * then compared with what is there, then put in place: each token whole
 * (a new file linked into place, never over another; a token in use
 * replaced in one SQLite transaction), each file whole (renamed into
 * place), and at the end setup re-run for the targets the backup
 * recorded as configured (resetup.c).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "backup.h"
#include "places.h"
#include "stage.h"
#include "resetup.h"
#include "tokendb.h"

#include <openssl/rand.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKEN_NUMBER 999999999UL

/* A token file of the target store, as read before anything changes. */
typedef struct {
	char *name;
	char label[33];
	char serial[PG_TOKENDB_SERIAL_LEN + 1];
} target_token;

typedef struct {
	const pg_restore_opts *opts;
	pg_backup_manifest *m;
	char *store, *trust, *registry, *staging;
	target_token *there;
	size_t n_there;
	size_t conflicts;
} restorer;

static const char *
dir_of(const restorer *r, pg_backup_kind kind)
{
	return kind == PG_BACKUP_TRUST ? r->trust : r->registry;
}

/* The tokens of the target store with their serials. */
static bool
read_target(restorer *r)
{
	pg_places_list l;
	char *path;
	bool ok;

	if (!pg_places_tokens(r->store, &l))
		return false;
	r->there = calloc(l.n ? l.n : 1, sizeof(*r->there));
	ok = r->there != NULL;
	for (size_t i = 0; ok && i < l.n; i++) {
		target_token *t = &r->there[r->n_there];
		if (asprintf(&path, "%s/%s", r->store, l.names[i]) < 0)
			break;
		/* A file that does not open as a token is no token the
		 * backup's could be; its name stays taken. */
		if (pg_tokendb_info(path, false, t->label, t->serial)) {
			t->name = l.names[i];
			l.names[i] = NULL;
			r->n_there++;
		}
		free(path);
	}
	pg_places_list_clear(&l);
	return ok;
}

static const target_token *
there_by_serial(const restorer *r, const char *serial)
{
	for (size_t i = 0; i < r->n_there; i++) {
		if (strcmp(r->there[i].serial, serial) == 0)
			return &r->there[i];
	}
	return NULL;
}

static bool
label_taken(const restorer *r, const char *label)
{
	for (size_t i = 0; i < r->n_there; i++) {
		if (strcmp(r->there[i].label, label) == 0)
			return true;
	}
	for (size_t i = 0; i < r->m->n; i++) {
		if (r->m->items[i].kind == PG_BACKUP_TOKEN && strcmp(r->m->items[i].label, label) == 0)
			return true;
	}
	return false;
}

static bool
serial_taken(const restorer *r, const char *serial)
{
	for (size_t i = 0; i < r->m->n; i++) {
		if (r->m->items[i].kind == PG_BACKUP_TOKEN && strcmp(r->m->items[i].serial, serial) == 0)
			return true;
	}
	return there_by_serial(r, serial) != NULL;
}

/* True when no file of token number n, nor its journal, is in the store
 * and no token of this restore is to take it. */
static bool
number_free(const restorer *r, unsigned long n)
{
	static const char *const ends[] = { "", "-wal", "-shm", "-journal" };
	char *path;
	struct stat st;
	bool taken = false;

	for (size_t i = 0; i < r->m->n && !taken; i++) {
		const pg_backup_item *it = &r->m->items[i];
		taken = it->kind == PG_BACKUP_TOKEN && it->detail != NULL &&
		        strtoul(it->detail + 6, NULL, 10) == n;
	}
	for (size_t i = 0; i < PG_N_ELEMENTS(ends) && !taken; i++) {
		if (asprintf(&path, "%s/token-%lu.sqlite%s", r->store, n, ends[i]) < 0)
			return false;
		taken = lstat(path, &st) == 0 || errno != ENOENT;
		free(path);
	}
	return !taken;
}

/* Chooses the file a new token goes to: its own name when free, else the
 * lowest free number. */
static bool
choose_name(restorer *r, pg_backup_item *it)
{
	unsigned long own = strtoul(it->name + 6, NULL, 10), n = own;

	for (unsigned long k = 0; !number_free(r, n); n = k++) {
		if (k > MAX_TOKEN_NUMBER)
			return false;
	}
	free(it->detail);
	return asprintf(&it->detail, "token-%lu.sqlite", n) >= 0 || (it->detail = NULL);
}

/* A new label and serial for a token put beside the one it was. */
static bool
rename_token(restorer *r, pg_backup_item *it)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[PG_TOKENDB_SERIAL_LEN / 2];
	char serial[PG_TOKENDB_SERIAL_LEN + 1], label[33];

	do {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1)
			return false;
		for (size_t i = 0; i < sizeof(rnd); i++) {
			serial[2 * i] = hex[rnd[i] >> 4];
			serial[2 * i + 1] = hex[rnd[i] & 15];
		}
		serial[PG_TOKENDB_SERIAL_LEN] = 0;
	} while (serial_taken(r, serial));
	for (int k = 1; k < 100; k++) {
		char suffix[16];
		snprintf(suffix, sizeof(suffix), k == 1 ? " (restored)" : " (restored %d)", k);
		snprintf(label, sizeof(label), "%.*s%s", (int)(32 - strlen(suffix)), it->label, suffix);
		if (!label_taken(r, label))
			break;
	}
	if (!pg_tokendb_relabel(it->staged, label, serial))
		return false;
	pg_backup_note(r->m, "%s: token '%s' (serial %s) is here already: restored beside it as "
	               "'%s', serial %s", it->name, it->label, it->serial, label, serial);
	snprintf(it->label, sizeof(it->label), "%s", label);
	memcpy(it->serial, serial, sizeof(it->serial));
	return true;
}

/* What becomes of a token: checked, then new, replaced or put beside. */
static bool
plan_token(restorer *r, pg_backup_item *it)
{
	const target_token *t;
	char label[33], serial[PG_TOKENDB_SERIAL_LEN + 1];

	if (!pg_tokendb_info(it->staged, true, label, serial))
		return false;
	memcpy(it->label, label, sizeof(label));
	memcpy(it->serial, serial, sizeof(serial));
	t = there_by_serial(r, serial);
	if (t == NULL) {
		it->action = "restored";
		return choose_name(r, it);
	}
	if (r->opts->existing == PG_RESTORE_REPLACE) {
		it->action = "replaced";
		return (it->detail = strdup(t->name)) != NULL;
	}
	if (r->opts->existing == PG_RESTORE_BESIDE) {
		it->action = "restored beside";
		return rename_token(r, it) && choose_name(r, it);
	}
	it->action = "conflict";
	r->conflicts++;
	pg_message("%s: token '%s' (serial %s) is here already as %s/%s", it->name, label, serial,
	           r->store, t->name);
	return true;
}

/* What becomes of a trust or registry file. */
static void
plan_file(restorer *r, pg_backup_item *it)
{
	int same = pg_places_compare(dir_of(r, it->kind), it->name, &it->data);

	if (same == 1) {
		it->action = "unchanged";
	} else if (same == -1) {
		it->action = "restored";
	} else if (r->opts->existing == PG_RESTORE_REPLACE) {
		it->action = "replaced";
	} else if (r->opts->existing == PG_RESTORE_BESIDE) {
		it->action = "kept";
		pg_backup_note(r->m, "%s/%s: yours differs from the backup's; kept yours",
		               dir_of(r, it->kind), it->name);
	} else {
		it->action = "conflict";
		r->conflicts++;
		pg_message("%s/%s: is here already and differs from the backup's", dir_of(r, it->kind),
		           it->name);
	}
}

static bool
plan(restorer *r)
{
	for (size_t i = 0; i < r->m->n; i++) {
		pg_backup_item *it = &r->m->items[i];
		if (it->kind == PG_BACKUP_TOKEN && !plan_token(r, it))
			return false;
		if (it->kind == PG_BACKUP_TRUST || it->kind == PG_BACKUP_REGISTRY)
			plan_file(r, it);
	}
	if (r->conflicts > 0) {
		pg_message("nothing was restored: --replace puts the backup's tokens and files over "
		           "these, --beside restores tokens beside them under new labels and serials");
		return false;
	}
	return true;
}

static bool
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok = fd >= 0 && fsync(fd) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* A new token file, linked into place: never over another file. */
static bool
put_token(restorer *r, pg_backup_item *it)
{
	char *to = NULL;
	bool ok;

	for (int tries = 0;; tries++) {
		if (asprintf(&to, "%s/%s", r->store, it->detail) < 0)
			return false;
		ok = link(it->staged, to) == 0;
		if (ok || errno != EEXIST || tries > 100) {
			if (!ok)
				pg_message("%s: %s", to, strerror(errno));
			break;
		}
		/* Someone made a token of that number meanwhile. */
		free(to);
		free(it->detail);
		it->detail = NULL;
		if (!choose_name(r, it))
			return false;
	}
	free(to);
	return ok && sync_dir(r->store);
}

static bool
apply(restorer *r)
{
	bool ok = true;
	char *to;

	for (size_t i = 0; ok && i < r->m->n; i++) {
		pg_backup_item *it = &r->m->items[i];
		if (it->kind == PG_BACKUP_TOKEN && strcmp(it->action, "replaced") == 0) {
			if (asprintf(&to, "%s/%s", r->store, it->detail) < 0)
				to = NULL;
			ok = to != NULL && pg_tokendb_replace(it->staged, to);
			free(to);
		} else if (it->kind == PG_BACKUP_TOKEN) {
			ok = put_token(r, it);
		} else if ((it->kind == PG_BACKUP_TRUST || it->kind == PG_BACKUP_REGISTRY) &&
		           (strcmp(it->action, "restored") == 0 || strcmp(it->action, "replaced") == 0)) {
			ok = pg_places_write(dir_of(r, it->kind), it->name, &it->data, it->mode);
		}
		if (!ok)
			it->action = "failed";
	}
	return ok;
}

/* The directories of path that do not exist, innermost first, so a
 * restore that stops early can take away what it made. */
static size_t
missing_dirs(const char *path, char **made, size_t max)
{
	char *copy = strdup(path), *slash;
	struct stat st;
	size_t n = 0;

	while (copy != NULL && n < max && lstat(copy, &st) != 0 && errno == ENOENT) {
		made[n++] = strdup(copy);
		slash = strrchr(copy, '/');
		if (slash == NULL || slash == copy)
			break;
		*slash = 0;
	}
	free(copy);
	return n;
}

int
pg_restore_read(const pg_restore_opts *opts, int fd, const char *path, pg_backup_manifest *m)
{
	restorer r = { .opts = opts, .m = m };
	char *made[16] = { NULL };
	size_t n_made = 0;
	bool ok, changed = false;

	memset(m, 0, sizeof(*m));
	r.store = pg_places_store(opts->store_dir);
	r.trust = pg_places_trust();
	r.registry = pg_places_registry();
	ok = r.store != NULL && r.trust != NULL && r.registry != NULL;
	if (ok) {
		n_made = missing_dirs(r.store, made, PG_N_ELEMENTS(made));
		ok = pg_places_mkdirs(r.store) && (r.staging = pg_stage_dir(r.store)) != NULL;
	}
	ok = ok && pg_stage_read(fd, path, opts->pass, opts->pass_len, r.staging, opts->progress, m);
	ok = ok && read_target(&r) && plan(&r);
	if (ok) {
		changed = true;
		ok = apply(&r);
		if (ok && !opts->no_setup)
			ok = pg_resetup(opts->setup, m);
	}
	if (r.staging != NULL)
		pg_remove_tree(r.staging);
	for (size_t i = 0; i < n_made; i++) {
		if (!changed)
			rmdir(made[i]);
		free(made[i]);
	}
	for (size_t i = 0; i < r.n_there; i++)
		free(r.there[i].name);
	free(r.there);
	free(r.staging);
	free(r.store);
	free(r.trust);
	free(r.registry);
	if (!ok && !changed)
		pg_message("nothing was restored");
	return ok ? PG_EXIT_OK : PG_EXIT_FAIL;
}
