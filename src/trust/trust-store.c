/*
 * One token's store: scanning its path, keeping sources whose mtime and
 * size did not change, applying CRLs, deciding trust (trust.c), and the
 * object list with its indexes.
 */
#include "trust-store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The attributes searches are indexed by (PG_STORE_KEYS of them), each
 * index built on first use; KEY_ISSUER_SERIAL stands for the pair. */
#define KEY_ISSUER_SERIAL ((CK_ATTRIBUTE_TYPE)0x7fff0001UL)
static const CK_ATTRIBUTE_TYPE index_keys[PG_STORE_KEYS] = {
	KEY_ISSUER_SERIAL, CKA_VALUE, CKA_CERT_SHA1_HASH, CKA_ID, CKA_SUBJECT,
	CKA_PUBLIC_KEY_INFO, CKA_X_CERTIFICATE_VALUE, CKA_LABEL, CKA_CLASS,
};
#define N_KEYS PG_STORE_KEYS

pg_tstore *
pg_tstore_new(const char *path)
{
	pg_tstore *s = calloc(1, sizeof(*s));
	size_t len;
	const char *base;
	struct stat st;

	if (s == NULL || (s->path = strdup(path)) == NULL) {
		free(s);
		return NULL;
	}
	len = strlen(s->path);
	while (len > 1 && s->path[len - 1] == '/')
		s->path[--len] = 0;
	s->is_dir = stat(s->path, &st) == 0 && S_ISDIR(st.st_mode);
	/* Token labels as trust modules give them: configuration under /etc
	 * is the system's, data under /usr/share the distribution's default. */
	if (strncmp(s->path, "/etc/", 5) == 0)
		base = "System Trust";
	else if (strncmp(s->path, "/usr/share/", 11) == 0)
		base = "Default Trust";
	else {
		base = strrchr(s->path, '/');
		base = base && base[1] ? base + 1 : s->path;
	}
	snprintf(s->label, sizeof(s->label), "%s", base);
	return s;
}

static void
clear_objects(pg_tstore *s)
{
	for (size_t i = 0; i < s->n_revoked; i++)
		pg_entry_clear(&s->revoked[i]);
	free(s->revoked);
	s->revoked = NULL;
	s->n_revoked = 0;
	free(s->objects);
	s->objects = NULL;
	s->n_objects = s->cap_objects = 0;
	for (size_t k = 0; k < N_KEYS; k++) {
		free(s->index[k]);
		s->index[k] = NULL;
		s->n_index[k] = 0;
	}
}

void
pg_tstore_free(pg_tstore *s)
{
	if (s == NULL)
		return;
	clear_objects(s);
	for (size_t i = 0; i < s->n_sources; i++) {
		pg_source_clear(&s->sources[i]);
		free(s->sources[i].path);
	}
	free(s->sources);
	free(s->path);
	free(s);
}

const char *
pg_tstore_path(const pg_tstore *s)
{
	return s->path;
}

const char *
pg_tstore_label(const pg_tstore *s)
{
	return s->label;
}

pg_tstore *
pg_tstore_new_default(const char *path, const char *label, unsigned mode)
{
	pg_tstore *s = pg_tstore_new(path);

	if (s == NULL)
		return NULL;
	s->is_dir = true;
	s->create_mode = mode;
	snprintf(s->label, sizeof(s->label), "%s", label);
	return s;
}

/* The nearest directory of path that exists: writable? */
static bool
creatable(const char *path)
{
	char *dir = strdup(path), *slash;
	struct stat st;
	bool ok = false;

	while (dir != NULL && (slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir)
			slash[1] = 0;
		else
			*slash = 0;
		if (lstat(dir, &st) == 0) {
			ok = S_ISDIR(st.st_mode) && access(dir, W_OK) == 0;
			break;
		}
		if (slash == dir)
			break;
	}
	free(dir);
	return ok;
}

bool
pg_tstore_writable(const pg_tstore *s)
{
	struct stat st;

	/* Distribution-owned locations are never written. */
	if (strncmp(s->path, "/usr/", 5) == 0 && strncmp(s->path, "/usr/local/", 11) != 0)
		return false;
	if (stat(s->path, &st) == 0)
		return S_ISDIR(st.st_mode) && access(s->path, W_OK) == 0;
	return s->create_mode != 0 && errno == ENOENT && creatable(s->path);
}

bool
pg_tstore_make_dir(const pg_tstore *s)
{
	struct stat st;

	if (stat(s->path, &st) == 0 || s->create_mode == 0)
		return S_ISDIR(st.st_mode);
	return pg_trust_make_dirs(s->path, (mode_t)s->create_mode, true);
}

const pg_source *
pg_tstore_source_of(const pg_tstore *s, const pg_entry *e)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		const pg_source *src = &s->sources[i];
		uintptr_t first = (uintptr_t)src->entries, at = (uintptr_t)e;
		if (src->n_entries && at >= first && at < first + src->n_entries * sizeof(*e))
			return src;
	}
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Scanning
 */

static pg_source *
find_source(pg_tstore *s, const char *path)
{
	for (size_t i = 0; i < s->n_sources; i++)
		if (strcmp(s->sources[i].path, path) == 0)
			return &s->sources[i];
	return NULL;
}

static bool
read_file(const char *path, unsigned char **data, size_t *len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf;
	size_t got = 0;

	if (fd < 0)
		return false;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_size > (1 << 28)) {
		close(fd);
		return false;
	}
	buf = malloc((size_t)st->st_size + 1);
	while (buf && got < (size_t)st->st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st->st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (buf == NULL)
		return false;
	buf[got] = 0;
	*data = buf;
	*len = got;
	return true;
}

/* Looks at one file (st: its stat); returns true when something changed. */
static bool
scan_file(pg_tstore *s, const char *path, struct stat st, int trust, bool *oom)
{
	pg_source *src = find_source(s, path), *grown;
	unsigned char *data;
	size_t len;

	if (src != NULL) {
		src->seen = true;
		if (src->size == st.st_size && src->mtime.tv_sec == st.st_mtim.tv_sec &&
		    src->mtime.tv_nsec == st.st_mtim.tv_nsec && src->ino == st.st_ino &&
		    src->dev == st.st_dev && src->src_trust == trust)
			return false;
		pg_source_clear(src);
	} else {
		grown = realloc(s->sources, (s->n_sources + 1) * sizeof(*grown));
		if (grown == NULL) {
			*oom = true;
			return false;
		}
		s->sources = grown;
		src = &s->sources[s->n_sources];
		memset(src, 0, sizeof(*src));
		if ((src->path = strdup(path)) == NULL) {
			*oom = true;
			return false;
		}
		s->n_sources++;
		src->seen = true;
	}
	src->src_trust = trust;
	if (!read_file(path, &data, &len, &st)) {
		pg_message("%s: cannot read: %s", path, strerror(errno));
		src->size = -1;
		return true;
	}
	src->dev = st.st_dev;
	src->ino = st.st_ino;
	src->mtime = st.st_mtim;
	src->size = st.st_size;
	if (!pg_source_parse(src, data, len))
		*oom = true;
	return true;
}

/* Files of one directory in the order the directory lists them. */
static bool
scan_dir(pg_tstore *s, const char *dir, int trust, bool *oom)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool changed = false;
	char path[4096];

	if (d == NULL)
		return false;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		changed |= scan_file(s, path, st, trust, oom);
	}
	closedir(d);
	return changed;
}

static bool
scan(pg_tstore *s, bool *oom)
{
	bool changed = false;
	char sub[4096];
	size_t kept = 0;

	for (size_t i = 0; i < s->n_sources; i++)
		s->sources[i].seen = false;
	if (!s->is_dir) {
		struct stat st;
		if (stat(s->path, &st) == 0 && S_ISREG(st.st_mode))
			changed |= scan_file(s, s->path, st, PG_SRC_ANCHOR, oom);
	} else {
		changed |= scan_dir(s, s->path, PG_SRC_PLAIN, oom);
		snprintf(sub, sizeof(sub), "%s/anchors", s->path);
		changed |= scan_dir(s, sub, PG_SRC_ANCHOR, oom);
		snprintf(sub, sizeof(sub), "%s/blocklist", s->path);
		changed |= scan_dir(s, sub, PG_SRC_DISTRUST, oom);
		snprintf(sub, sizeof(sub), "%s/blacklist", s->path);
		changed |= scan_dir(s, sub, PG_SRC_DISTRUST, oom);
		snprintf(sub, sizeof(sub), "%s/crls", s->path);
		changed |= scan_dir(s, sub, PG_SRC_PLAIN, oom);
	}
	/* Sources whose file went away. */
	for (size_t i = 0; i < s->n_sources; i++) {
		if (s->sources[i].seen) {
			s->sources[kept++] = s->sources[i];
			continue;
		}
		pg_source_clear(&s->sources[i]);
		free(s->sources[i].path);
		changed = true;
	}
	s->n_sources = kept;
	return changed;
}

/* ---------------------------------------------------------------------------
 * Building the objects
 */

static bool
push(pg_tstore *s, int kind, pg_entry *e, unsigned purpose, unsigned list)
{
	if (!pg_array_grow(&s->objects, &s->cap_objects, s->n_objects, sizeof(*s->objects), 256))
		return false;
	s->objects[s->n_objects++] = (pg_object){ (uint8_t)kind, (uint8_t)list, (uint16_t)purpose,
	                                          e != NULL && e->n_attrs > 0, e };
	return true;
}

static pg_entry *
add_revoked(pg_tstore *s, const pg_span *issuer, const pg_span *serial, const char *origin)
{
	pg_entry *grown, *e;

	if (s->n_revoked % 16 == 0) {
		grown = realloc(s->revoked, (s->n_revoked + 16) * sizeof(*grown));
		if (grown == NULL)
			return NULL;
		s->revoked = grown;
	}
	e = &s->revoked[s->n_revoked++];
	memset(e, 0, sizeof(*e));
	e->kind = PG_ENTRY_REVOKED;
	e->origin = origin;
	e->issuer = *issuer;
	e->serial = *serial;
	e->distrusted = true;
	e->src_trust = PG_SRC_DISTRUST;
	e->label.p = (const unsigned char *)"Revoked certificate";
	e->label.len = 19;
	return e;
}

static bool
add_crl_entry(pg_tstore *s, const pg_span *der, const pg_span *issuer, const char *origin)
{
	pg_entry *e = add_revoked(s, issuer, issuer, origin);

	if (e == NULL)
		return false;
	e->kind = PG_ENTRY_CRL;
	e->distrusted = false;
	e->serial.p = NULL;
	e->serial.len = 0;
	e->ext_value = *der;
	e->label.p = (const unsigned char *)"Certificate Revocation List";
	e->label.len = 27;
	return true;
}

/* Verified CRLs become revocations (issuer + serial) and CRL objects. */
static bool
apply_crls(pg_tstore *s, pg_entry **certs, size_t n_certs)
{
	const pg_cert **list = malloc((n_certs ? n_certs : 1) * sizeof(*list));
	long long now = (long long)time(NULL);
	bool ok = true;

	if (list == NULL)
		return false;
	for (size_t i = 0; i < n_certs; i++)
		list[i] = &certs[i]->cert;
	for (size_t i = 0; i < s->n_sources && ok; i++) {
		pg_source *src = &s->sources[i];
		for (size_t j = 0; j < src->n_crls && ok; j++) {
			pg_crl_info info;
			const char *why = NULL;
			if (!pg_crl_check(&src->crls[j], list, n_certs, now, &info, &why)) {
				pg_message("%s: CRL ignored: %s", src->path, why);
				continue;
			}
			ok = add_crl_entry(s, &src->crls[j], &info.issuer, src->path);
			for (size_t k = 0; k < info.n_serials && ok; k++)
				ok = add_revoked(s, &info.issuer, &info.serials[k], src->path) != NULL;
			pg_crl_info_clear(&info);
		}
	}
	free(list);
	return ok;
}

/* Arrays of entry pointers for pg_trust_compute. */
typedef struct {
	pg_entry **p;
	size_t n, cap;
	bool failed;
} entry_list;

static void
list_add(entry_list *l, pg_entry *e)
{
	if (l->failed)
		return;
	if (!pg_array_grow(&l->p, &l->cap, l->n, sizeof(*l->p), 64)) {
		l->failed = true;
		return;
	}
	l->p[l->n++] = e;
}

/* A stored certificate object without a value that distrusts a key. */
static bool
distrusted_key(const pg_entry *e, pg_span *key)
{
	const pg_attr *d = pg_entry_attr(e, CKA_X_DISTRUSTED), *k = pg_entry_attr(e, CKA_PUBLIC_KEY_INFO);

	if (e->klass != CKO_CERTIFICATE || d == NULL || d->len != 1 || !d->value[0] ||
	    k == NULL || k->len == 0)
		return false;
	key->p = k->value;
	key->len = k->len;
	return true;
}

static bool
decide(pg_tstore *s)
{
	entry_list certs = { 0 }, exts = { 0 }, revoked = { 0 };
	pg_span *keys = NULL;
	size_t n_keys = 0;
	pg_trust_input in;
	bool ok;

	for (size_t i = 0; i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++) {
			pg_entry *e = &s->sources[i].entries[j];
			if (e->kind == PG_ENTRY_CERT)
				list_add(&certs, e);
			else if (e->kind == PG_ENTRY_EXT)
				list_add(&exts, e);
		}
	ok = !certs.failed && apply_crls(s, certs.p, certs.n);
	/* Keys distrusted: of blocklisted certificates (as p11-kit's extract
	 * does) and of stored distrusted keys. */
	keys = malloc((certs.n + 1) * sizeof(*keys));
	for (size_t i = 0; ok && keys && i < certs.n; i++)
		if (certs.p[i]->src_trust == PG_SRC_DISTRUST)
			keys[n_keys++] = certs.p[i]->cert.spki;
	for (size_t i = 0; ok && keys && i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++) {
			pg_entry *e = &s->sources[i].entries[j];
			pg_span key, *grown;
			if (e->kind == PG_ENTRY_REVOKED)
				list_add(&revoked, e);
			if (e->kind != PG_ENTRY_STORED || !distrusted_key(e, &key))
				continue;
			if ((grown = realloc(keys, (n_keys + certs.n + 1) * sizeof(*keys))) == NULL) {
				ok = false;
				break;
			}
			keys = grown;
			keys[n_keys++] = key;
		}
	for (size_t i = 0; i < s->n_revoked; i++)
		if (s->revoked[i].kind == PG_ENTRY_REVOKED)
			list_add(&revoked, &s->revoked[i]);
	ok = ok && keys && !exts.failed && !revoked.failed;
	if (ok) {
		in = (pg_trust_input){ certs.p, certs.n, exts.p, exts.n, revoked.p, revoked.n,
		                       keys, n_keys };
		ok = pg_trust_compute(&in);
	}
	free(certs.p);
	free(exts.p);
	free(revoked.p);
	free(keys);
	return ok;
}

static bool
span_eq(const pg_span *a, const pg_attr *b)
{
	return b && a->len == b->len && memcmp(a->p, b->value, a->len) == 0;
}

/* A stored NSS trust object for this certificate replaces ours (as with
 * p11-kit, one matching issuer, serial and any SHA-1 given). */
static void
mark_stored_nss(pg_tstore *s)
{
	for (size_t i = 0; i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++) {
			pg_entry *t = &s->sources[i].entries[j];
			const pg_attr *sha1;
			if (t->kind != PG_ENTRY_STORED || t->klass != CKO_NSS_TRUST)
				continue;
			sha1 = pg_entry_attr(t, CKA_CERT_SHA1_HASH);
			for (size_t k = 0; k < s->n_sources; k++)
				for (size_t l = 0; l < s->sources[k].n_entries; l++) {
					pg_entry *e = &s->sources[k].entries[l];
					if (e->kind != PG_ENTRY_CERT || !e->primary ||
					    !span_eq(&e->issuer, pg_entry_attr(t, CKA_ISSUER)) ||
					    !span_eq(&e->serial, pg_entry_attr(t, CKA_SERIAL_NUMBER)))
						continue;
					if (sha1 == NULL ||
					    (sha1->len == PG_SHA1_LEN && memcmp(sha1->value, pg_entry_sha1(e), PG_SHA1_LEN) == 0))
						e->own_nss = true;
				}
		}
}

/* A certificate, and for its first copy its NSS trust and assertions
 * (p11-kit's rules: rejected purposes, then all if distrusted, then the
 * anchored purposes of a trusted authority). */
static bool
push_cert_objects(pg_tstore *s, pg_entry *e)
{
	bool ok = push(s, PG_OBJ_CERT, e, 0, 0);

	if (!e->primary)
		return ok;
	if (!e->own_nss)
		ok = ok && push(s, PG_OBJ_NSS_TRUST, e, 0, 0);
	for (size_t p = 0; e->rejects && p < e->rejects->n && p < 65536; p++)
		ok = ok && push(s, PG_OBJ_DISTRUSTED, e, (unsigned)p, PG_LIST_REJECTS);
	if (e->distrusted)
		for (unsigned p = 0; p < PG_N_PURPOSES; p++)
			ok = ok && push(s, PG_OBJ_DISTRUSTED, e, p, PG_LIST_STD);
	if (e->anchored && e->authority) {
		if (e->purposes)
			for (size_t p = 0; p < e->purposes->n && p < 65536; p++)
				ok = ok && push(s, PG_OBJ_ANCHORED, e, (unsigned)p, PG_LIST_PURPOSES);
		else
			for (unsigned p = 0; p < PG_N_PURPOSES; p++)
				ok = ok && push(s, PG_OBJ_ANCHORED, e, p, PG_LIST_STD);
	}
	return ok;
}

static bool
push_revoked_objects(pg_tstore *s, pg_entry *e)
{
	bool ok = push(s, PG_OBJ_REV_CERT, e, 0, 0) && push(s, PG_OBJ_REV_NSS, e, 0, 0);

	for (unsigned p = 0; p < PG_N_PURPOSES && ok; p++)
		ok = push(s, PG_OBJ_REV_ASSERT, e, p, PG_LIST_STD);
	return ok;
}

/* The objects of an entry, read from a file or made from a CRL. */
static bool
push_entry_objects(pg_tstore *s, pg_entry *e)
{
	switch (e->kind) {
	case PG_ENTRY_CERT:
		return push_cert_objects(s, e);
	case PG_ENTRY_EXT:
		return push(s, PG_OBJ_EXT, e, 0, 0);
	case PG_ENTRY_REVOKED:
		return push_revoked_objects(s, e);
	case PG_ENTRY_CRL:
		return push(s, PG_OBJ_CRL, e, 0, 0);
	case PG_ENTRY_STORED:
		return push(s, PG_OBJ_STORED, e, 0, 0);
	default:
		return true;
	}
}

static bool
build(pg_tstore *s)
{
	bool ok;

	clear_objects(s);
	if (!decide(s))
		return false;
	mark_stored_nss(s);
	ok = true;
	for (size_t i = 0; i < s->n_sources && ok; i++)
		for (size_t j = 0; j < s->sources[i].n_entries && ok; j++)
			ok = push_entry_objects(s, &s->sources[i].entries[j]);
	for (size_t i = 0; i < s->n_revoked && ok; i++)
		ok = push_entry_objects(s, &s->revoked[i]);
	return ok && push(s, PG_OBJ_ROOT_LIST, NULL, 0, 0);
}

bool
pg_tstore_refresh(pg_tstore *s)
{
	bool oom = false, changed = scan(s, &oom);

	if (!changed && s->built)
		return false;
	s->built = build(s) && !oom;
	if (!s->built) {
		pg_message("%s: out of memory while loading", s->path);
		clear_objects(s);
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Indexes: per key, (hash of value, object) sorted by hash.
 */

static uint64_t
hash_bytes(uint64_t h, const void *v, size_t len)
{
	const unsigned char *p = v;

	/* FNV-1a (64-bit). */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static bool
key_hash(pg_object *o, CK_ATTRIBUTE_TYPE key, uint64_t *h)
{
	const void *v, *v2;
	CK_ULONG l, l2;

	*h = 1469598103934665603ULL ^ key;
	if (key == KEY_ISSUER_SERIAL) {
		if (!pg_object_attr(o, CKA_ISSUER, &v, &l) ||
		    !pg_object_attr(o, CKA_SERIAL_NUMBER, &v2, &l2))
			return false;
		*h = hash_bytes(hash_bytes(*h, v, l), v2, l2);
		return true;
	}
	if (!pg_object_attr(o, key, &v, &l))
		return false;
	*h = hash_bytes(*h, v, l);
	return true;
}

static int
cmp_slot(const void *a, const void *b)
{
	const pg_index_slot *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->obj > y->obj) - (x->obj < y->obj);
}

static bool
build_index(pg_tstore *s, size_t k)
{
	pg_index_slot *idx = malloc((s->n_objects ? s->n_objects : 1) * sizeof(*idx));
	size_t n = 0;

	if (idx == NULL)
		return false;
	for (size_t i = 0; i < s->n_objects; i++) {
		uint64_t h;
		if (key_hash(&s->objects[i], index_keys[k], &h))
			idx[n++] = (pg_index_slot){ h, (uint32_t)i };
	}
	qsort(idx, n, sizeof(*idx), cmp_slot);
	s->index[k] = idx;
	s->n_index[k] = n;
	return true;
}

static bool
matches(pg_object *o, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++) {
		const void *v;
		CK_ULONG l;
		if (!pg_object_attr(o, t[i].type, &v, &l) || l != t[i].ulValueLen ||
		    (l && (t[i].pValue == NULL || memcmp(v, t[i].pValue, l) != 0)))
			return false;
	}
	return true;
}

static const CK_ATTRIBUTE *
tmpl_get(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (t[i].type == type && (t[i].pValue != NULL || t[i].ulValueLen == 0))
			return &t[i];
	return NULL;
}

/* The index to search by and the hash of the template's key; false when
 * the template names no indexed attribute. */
static bool
pick_key(const CK_ATTRIBUTE *t, CK_ULONG n, size_t *k, uint64_t *h)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		const CK_ATTRIBUTE *a, *b;
		*h = 1469598103934665603ULL ^ index_keys[i];
		if (index_keys[i] == KEY_ISSUER_SERIAL) {
			if ((a = tmpl_get(t, n, CKA_ISSUER)) == NULL ||
			    (b = tmpl_get(t, n, CKA_SERIAL_NUMBER)) == NULL)
				continue;
			*h = hash_bytes(hash_bytes(*h, a->pValue, a->ulValueLen), b->pValue, b->ulValueLen);
		} else if ((a = tmpl_get(t, n, index_keys[i])) != NULL) {
			*h = hash_bytes(*h, a->pValue, a->ulValueLen);
		} else {
			continue;
		}
		*k = i;
		return true;
	}
	return false;
}

bool
pg_tstore_find(pg_tstore *s, const CK_ATTRIBUTE *t, CK_ULONG n, size_t **out, size_t *n_out)
{
	size_t lo = 0, hi = s->n_objects, k = 0, *grown;
	uint64_t h = 0;
	bool use_index = pick_key(t, n, &k, &h);

	if (use_index) {
		const pg_index_slot *idx;
		size_t l = 0, r;
		if (s->index[k] == NULL && !build_index(s, k))
			return false;
		idx = s->index[k];
		r = s->n_index[k];
		while (l < r) {
			size_t m = (l + r) / 2;
			if (idx[m].hash < h)
				l = m + 1;
			else
				r = m;
		}
		lo = hi = l;
		while (hi < s->n_index[k] && idx[hi].hash == h)
			hi++;
	}
	if ((grown = realloc(*out, (*n_out + (hi - lo) + 1) * sizeof(size_t))) == NULL)
		return false;
	*out = grown;
	for (size_t i = lo; i < hi; i++) {
		size_t obj = use_index ? s->index[k][i].obj : i;
		if (n == 0 || matches(&s->objects[obj], t, n))
			(*out)[(*n_out)++] = obj;
	}
	return true;
}
