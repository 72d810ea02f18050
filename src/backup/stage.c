/*
 * Reading a backup into a staging directory (stage.h).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "stage.h"
#include "seal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGE_PREFIX ".restore-"
#define PROGRESS_STEP (4u << 20)

char *
pg_stage_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *path = NULL, *end;
	long pid;

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(STAGE_PREFIX), &end, 10);
		if (pid <= 0 || *end != '.' || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
			if (asprintf(&path, "%s/%s", dir, e->d_name) >= 0) {
				pg_remove_tree(path);
				free(path);
			}
		}
	}
	if (d != NULL)
		closedir(d);
	if (asprintf(&path, "%s/" STAGE_PREFIX "%ld.XXXXXX", dir, (long)getpid()) < 0) {
		pg_message("out of memory");
		return NULL;
	}
	if (mkdtemp(path) == NULL) {
		pg_message("%s: %s", dir, strerror(errno));
		free(path);
		return NULL;
	}
	return path;
}

typedef struct {
	pg_backup_manifest *m;
	const char *staging;
	pg_backup_item *cur;
	int fd;                      /* the token being written, or -1 */
	bool failed;                 /* a message was printed */
} stager;

static bool
on_begin(void *data, pg_backup_kind kind, const char *name, uint32_t mode, uint64_t size)
{
	stager *st = data;
	pg_backup_item *it;

	if (kind == PG_BACKUP_END) {
		st->cur = NULL;
		return true;
	}
	for (size_t i = 0; i < st->m->n; i++) {
		if (st->m->items[i].kind == kind && strcmp(st->m->items[i].name, name) == 0)
			return false;
	}
	it = st->cur = pg_backup_manifest_add(st->m, kind, name);
	if (it == NULL) {
		st->failed = true;
		return false;
	}
	it->size = size;
	it->mode = mode;
	if (kind != PG_BACKUP_TOKEN)
		return true;
	if (asprintf(&it->staged, "%s/%s", st->staging, name) < 0) {
		it->staged = NULL;
		pg_message("out of memory");
		st->failed = true;
		return false;
	}
	st->fd = open(it->staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (st->fd < 0) {
		pg_message("%s: %s", it->staged, strerror(errno));
		st->failed = true;
		return false;
	}
	return true;
}

static bool
on_data(void *data, const uint8_t *bytes, size_t len)
{
	stager *st = data;

	if (st->cur == NULL)
		return false;
	if (st->fd >= 0) {
		if (pg_write_all(st->fd, bytes, len))
			return true;
		pg_message("%s: %s", st->cur->staged, strerror(errno));
		st->failed = true;
		return false;
	}
	pg_buf_add(&st->cur->data, bytes, len);
	return !st->cur->data.failed;
}

static bool
on_end(void *data)
{
	stager *st = data;
	pg_backup_item *it = st->cur;
	const char *text, *nl;

	if (it == NULL)
		return true;
	st->cur = NULL;
	if (st->fd >= 0) {
		bool ok = fsync(st->fd) == 0;
		ok = close(st->fd) == 0 && ok;
		st->fd = -1;
		if (!ok) {
			pg_message("%s: %s", it->staged, strerror(errno));
			st->failed = true;
		}
		return ok;
	}
	if (it->kind != PG_BACKUP_SETUP)
		return true;
	text = it->data.data ? (const char *)it->data.data : "";
	nl = strchr(text, '\n');
	it->state = strndup(text, nl ? (size_t)(nl - text) : strlen(text));
	it->proxy = nl != NULL && strncmp(nl + 1, "proxy\n", 6) == 0;
	return it->state != NULL;
}

/* Says what is wrong with the file. */
static void
report(pg_seal_status s, pg_backup_hdr_status h, const pg_seal *seal, const char *path)
{
	switch (s) {
	case PG_SEAL_OK:
	case PG_SEAL_NOMEM:
		break;
	case PG_SEAL_IO:
		pg_message("%s: %s", path, strerror(errno));
		break;
	case PG_SEAL_HEADER:
		if (h == PG_BACKUP_HDR_SHORT)
			pg_message("%s: truncated: too short for a backup's header", path);
		else if (h == PG_BACKUP_HDR_MAGIC)
			pg_message("%s: not a p11glue backup", path);
		else if (h == PG_BACKUP_HDR_VERSION)
			pg_message("%s: a backup of a format this p11glue cannot read (version %u); a "
			           "newer p11glue made it", path, seal->h.bytes[8]);
		else if (h == PG_BACKUP_HDR_DAMAGED)
			pg_message("%s: damaged: the header's checksum does not match", path);
		else
			pg_message("%s: damaged: the header's KDF parameters are out of bounds", path);
		break;
	case PG_SEAL_PASSPHRASE:
		pg_message("%s: wrong passphrase", path);
		break;
	case PG_SEAL_DAMAGED:
		pg_message("%s: damaged or altered: chunk %llu (at byte %llu) does not verify", path,
		           (unsigned long long)seal->index, (unsigned long long)seal->offset);
		break;
	case PG_SEAL_TRUNCATED:
		pg_message("%s: truncated: it ends inside or after chunk %llu, before the last one",
		           path, (unsigned long long)seal->index);
		break;
	case PG_SEAL_TRAILING:
		pg_message("%s: damaged: data after its last chunk (at byte %llu)", path,
		           (unsigned long long)seal->offset);
		break;
	}
}

bool
pg_stage_read(int fd, const char *path, const uint8_t *pass, size_t pass_len, const char *staging,
              bool show_progress, pg_backup_manifest *m)
{
	stager st = { .m = m, .staging = staging, .fd = -1 };
	pg_backup_parser p = { .begin = on_begin, .data = on_data, .end = on_end, .user = &st };
	pg_backup_hdr_status h = PG_BACKUP_HDR_OK;
	pg_seal seal;
	pg_seal_status s;
	const uint8_t *data;
	uint64_t shown = 0;
	size_t len;
	bool ok;

	pg_backup_parser_init(&p);
	s = pg_seal_read_start(&seal, fd, pass, pass_len, &h);
	m->log2n = seal.h.log2n;
	m->r = seal.h.r;
	m->p = seal.h.p;
	while (s == PG_SEAL_OK && !seal.last) {
		s = pg_seal_read(&seal, &data, &len);
		if (s != PG_SEAL_OK || !pg_backup_parser_feed(&p, data, len))
			break;
		if (show_progress && seal.offset - shown >= PROGRESS_STEP) {
			shown = seal.offset;
			fprintf(stderr, "\rp11glue: restore: %.1f MiB read\033[K", shown / 1048576.0);
		}
	}
	if (show_progress && shown > 0)
		fprintf(stderr, "\n");
	/* After the last chunk the file ends, and so do the records. */
	if (s == PG_SEAL_OK && seal.last && p.error == NULL)
		s = pg_seal_read(&seal, &data, &len);
	report(s, h, &seal, path);
	ok = s == PG_SEAL_OK && !st.failed;
	if (ok && (p.error != NULL || !pg_backup_parser_finish(&p))) {
		/* The seal holds but the records do not: written wrong. */
		pg_message("%s: the records inside are malformed (%s)", path, p.error);
		ok = false;
	}
	if (st.fd >= 0)
		close(st.fd);
	m->bytes = seal.offset;
	pg_seal_clear(&seal);
	return ok;
}
