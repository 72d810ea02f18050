/*
 * One token's store: scanning its path, keeping sources whose mtime and
 * size did not change, merging trust ("distrust wins"), applying CRLs,
 * and the object list with its indexes.
 */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	uint64_t hash;
	uint32_t obj;
} index_slot;

struct pg_store {
	char *path;
	char label[33];
	bool is_dir;
	pg_source *sources;
	size_t n_sources;
	bool built;
	pg_entry *revoked;             /* from CRLs, rebuilt with the objects */
	size_t n_revoked;
	pg_object *objects;
	size_t n_objects, cap_objects;
	index_slot *index;
	size_t n_index;
};

/* Pseudo attribute type for the issuer+serial key of the hash index. */
#define KEY_ISSUER_SERIAL ((CK_ATTRIBUTE_TYPE)0x7fff0001UL)

pg_store *
pg_store_new(const char *path)
{
	pg_store *s = calloc(1, sizeof(*s));
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
clear_objects(pg_store *s)
{
	for (size_t i = 0; i < s->n_revoked; i++)
		free(s->revoked[i].label_owned);
	free(s->revoked);
	s->revoked = NULL;
	s->n_revoked = 0;
	free(s->objects);
	s->objects = NULL;
	s->n_objects = s->cap_objects = 0;
	free(s->index);
	s->index = NULL;
	s->n_index = 0;
}

void
pg_store_free(pg_store *s)
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
pg_store_path(const pg_store *s)
{
	return s->path;
}

const char *
pg_store_label(const pg_store *s)
{
	return s->label;
}

bool
pg_store_writable(const pg_store *s)
{
	struct stat st;

	/* Distribution-owned locations are never written. */
	if (strncmp(s->path, "/usr/", 5) == 0 && strncmp(s->path, "/usr/local/", 11) != 0)
		return false;
	return stat(s->path, &st) == 0 && S_ISDIR(st.st_mode) && access(s->path, W_OK) == 0;
}

size_t
pg_store_count(const pg_store *s)
{
	return s->n_objects;
}

const pg_object *
pg_store_object(const pg_store *s, size_t i)
{
	return i < s->n_objects ? &s->objects[i] : NULL;
}

/* ---------------------------------------------------------------------------
 * Scanning
 */

static pg_source *
find_source(pg_store *s, const char *path)
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

/* Looks at one file; returns true when something changed. */
static bool
scan_file(pg_store *s, const char *path, int trust, bool *oom)
{
	struct stat st;
	pg_source *src = find_source(s, path), *grown;
	unsigned char *data;
	size_t len;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
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
	src->data = data;
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
scan_dir(pg_store *s, const char *dir, int trust, bool *oom)
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
		changed |= scan_file(s, path, trust, oom);
	}
	closedir(d);
	return changed;
}

static bool
scan(pg_store *s, bool *oom)
{
	bool changed = false;
	char sub[4096];
	size_t kept = 0;

	for (size_t i = 0; i < s->n_sources; i++)
		s->sources[i].seen = false;
	if (!s->is_dir) {
		changed |= scan_file(s, s->path, PG_SRC_ANCHOR, oom);
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
push(pg_store *s, int kind, pg_entry *e, unsigned purpose, unsigned list)
{
	if (s->n_objects == s->cap_objects) {
		size_t cap = s->cap_objects ? s->cap_objects * 2 : 256;
		pg_object *grown = realloc(s->objects, cap * sizeof(*grown));
		if (grown == NULL)
			return false;
		s->objects = grown;
		s->cap_objects = cap;
	}
	s->objects[s->n_objects++] = (pg_object){ (uint8_t)kind, (uint8_t)purpose,
	                                          (uint8_t)list, e };
	return true;
}

static bool
span_eq(const pg_span *a, const pg_span *b)
{
	return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static bool
has_oid(char **list, size_t n, const char *oid)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], oid) == 0)
			return true;
	return false;
}

/* NSS trust values (CKT_NSS_*) for the 7 key usages and 8 purposes. */
static void
nss_values(pg_entry *e)
{
	for (int i = 0; i < 15; i++) {
		CK_ULONG v;
		if (e->distrusted)
			v = CKT_NSS_NOT_TRUSTED;
		else if (i < 7) {
			/* Key usages: an anchor delegates those its keyUsage allows. */
			v = !e->anchored ? CKT_NSS_TRUST_UNKNOWN :
			    !e->cert.has_ku || (e->cert.ku & (1u << i)) ? CKT_NSS_TRUSTED_DELEGATOR :
			    CKT_NSS_TRUST_UNKNOWN;
		} else {
			const char *oid = pg_std_purposes[i - 7];
			if (has_oid(e->reject_oids, e->n_reject, oid))
				v = CKT_NSS_NOT_TRUSTED;
			else if (!e->anchored)
				v = CKT_NSS_TRUST_UNKNOWN;
			else if (e->restricted && !has_oid(e->trust_oids, e->n_trust, oid))
				v = CKT_NSS_TRUST_UNKNOWN;
			else
				v = CKT_NSS_TRUSTED_DELEGATOR;
		}
		e->nss[i] = v;
	}
}

static bool
revoked_by(const pg_store *s, const pg_entry *e)
{
	for (size_t i = 0; i < s->n_revoked; i++)
		if (span_eq(&s->revoked[i].issuer, &e->issuer) &&
		    span_eq(&s->revoked[i].serial, &e->serial))
			return true;
	return false;
}

static int
cmp_entry_ptr(const void *a, const void *b)
{
	const pg_entry *x = *(pg_entry *const *)a, *y = *(pg_entry *const *)b;
	int c = memcmp(x->sha1, y->sha1, 20);
	return c ? c : (x < y ? -1 : x > y);
}

/* Collects every certificate entry; sorted by SHA-1 for merging. */
static pg_entry **
all_certs(pg_store *s, size_t *n)
{
	pg_entry **list = NULL;
	size_t count = 0, k = 0;

	for (size_t i = 0; i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++)
			count += s->sources[i].entries[j].kind == PG_ENTRY_CERT;
	list = malloc((count ? count : 1) * sizeof(*list));
	if (list == NULL)
		return NULL;
	for (size_t i = 0; i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++)
			if (s->sources[i].entries[j].kind == PG_ENTRY_CERT)
				list[k++] = &s->sources[i].entries[j];
	*n = count;
	return list;
}

static bool
add_revoked(pg_store *s, const pg_span *issuer, const pg_span *serial, const char *origin)
{
	pg_entry *grown, *e;

	for (size_t i = 0; i < s->n_revoked; i++)
		if (s->revoked[i].kind == PG_ENTRY_REVOKED &&
		    span_eq(&s->revoked[i].issuer, issuer) && span_eq(&s->revoked[i].serial, serial))
			return true;
	grown = realloc(s->revoked, (s->n_revoked + 1) * sizeof(*grown));
	if (grown == NULL)
		return false;
	s->revoked = grown;
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
	return true;
}

static bool
add_crl_entry(pg_store *s, const pg_span *der, const pg_span *issuer, const char *origin)
{
	pg_entry *grown = realloc(s->revoked, (s->n_revoked + 1) * sizeof(*grown)), *e;

	if (grown == NULL)
		return false;
	s->revoked = grown;
	e = &s->revoked[s->n_revoked++];
	memset(e, 0, sizeof(*e));
	e->kind = PG_ENTRY_CRL;
	e->origin = origin;
	e->issuer = *issuer;
	e->ext_value = *der;
	e->label.p = (const unsigned char *)"Certificate Revocation List";
	e->label.len = 27;
	return true;
}

static bool
apply_crls(pg_store *s, pg_entry **certs, size_t n_certs)
{
	const pg_cert **list = malloc((n_certs ? n_certs : 1) * sizeof(*list));
	long long now = (long long)time(NULL);

	if (list == NULL)
		return false;
	for (size_t i = 0; i < n_certs; i++)
		list[i] = &certs[i]->cert;
	for (size_t i = 0; i < s->n_sources; i++) {
		pg_source *src = &s->sources[i];
		for (size_t j = 0; j < src->n_entries; j++)
			if (src->entries[j].kind == PG_ENTRY_REVOKED &&
			    !add_revoked(s, &src->entries[j].issuer, &src->entries[j].serial, src->path))
				goto oom;
		for (size_t j = 0; j < src->n_crls; j++) {
			pg_crl_info info;
			const char *why = NULL;
			if (!pg_crl_check(&src->crls[j], list, n_certs, now, &info, &why)) {
				pg_message("%s: CRL ignored: %s", src->path, why);
				continue;
			}
			if (!add_crl_entry(s, &src->crls[j], &info.issuer, src->path)) {
				pg_crl_info_clear(&info);
				goto oom;
			}
			for (size_t k = 0; k < info.n_serials; k++)
				if (!add_revoked(s, &info.issuer, &info.serials[k], src->path)) {
					pg_crl_info_clear(&info);
					goto oom;
				}
			pg_crl_info_clear(&info);
		}
	}
	free(list);
	return true;
oom:
	free(list);
	return false;
}

/* Merges the copies of each certificate: distrust wins over anchoring. */
static void
merge_trust(pg_store *s, pg_entry **certs, size_t n)
{
	qsort(certs, n, sizeof(*certs), cmp_entry_ptr);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool anchor = false, distrust = false;
		while (j < n && memcmp(certs[j]->sha1, certs[i]->sha1, 20) == 0) {
			anchor |= certs[j]->src_trust == PG_SRC_ANCHOR;
			distrust |= certs[j]->src_trust == PG_SRC_DISTRUST || revoked_by(s, certs[j]);
			j++;
		}
		for (size_t k = i; k < j; k++) {
			/* Each copy keeps its own anchoring; distrust reaches all. */
			certs[k]->distrusted = distrust;
			certs[k]->trusted = certs[k]->src_trust == PG_SRC_ANCHOR && !distrust;
			certs[k]->anchored = anchor && !distrust;
			certs[k]->primary = false;
			nss_values(certs[k]);
		}
		i = j;
	}
}

/* The first copy in load order carries the NSS trust object and assertions. */
static void
mark_primaries(pg_store *s, pg_entry **sorted, size_t n)
{
	for (size_t i = 0; i < s->n_sources; i++)
		for (size_t j = 0; j < s->sources[i].n_entries; j++) {
			pg_entry *e = &s->sources[i].entries[j], key, *kp = &key, **hit;
			if (e->kind != PG_ENTRY_CERT)
				continue;
			memcpy(key.sha1, e->sha1, 20);
			/* Find the run of equal certificates; mark e if none is yet. */
			hit = bsearch(&kp, sorted, n, sizeof(*sorted), cmp_entry_ptr);
			(void)hit;
			{
				bool taken = false;
				size_t lo = 0, hi = n;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;
					if (memcmp(sorted[mid]->sha1, e->sha1, 20) < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				for (size_t k = lo; k < n && memcmp(sorted[k]->sha1, e->sha1, 20) == 0; k++)
					taken |= sorted[k]->primary;
				if (!taken)
					e->primary = true;
			}
		}
}

static bool
push_entry_objects(pg_store *s, pg_entry *e)
{
	bool ok = push(s, PG_OBJ_CERT, e, 0, 0);

	if (e->eku_ext)
		ok = ok && push(s, PG_OBJ_EXT, e, 0, 1);
	if (e->rej_ext)
		ok = ok && push(s, PG_OBJ_EXT, e, 0, 2);
	if (!e->primary)
		return ok;
	ok = ok && push(s, PG_OBJ_NSS_TRUST, e, 0, 0);
	if (e->distrusted) {
		for (unsigned p = 0; p < PG_N_PURPOSES; p++)
			ok = ok && push(s, PG_OBJ_DISTRUSTED, e, p, 0);
		return ok;
	}
	if (e->anchored) {
		if (e->restricted)
			for (size_t p = 0; p < e->n_trust && p < 256; p++)
				ok = ok && push(s, PG_OBJ_ANCHORED, e, (unsigned)p, 1);
		else
			for (unsigned p = 0; p < PG_N_PURPOSES; p++)
				ok = ok && push(s, PG_OBJ_ANCHORED, e, p, 0);
	}
	for (size_t p = 0; p < e->n_reject && p < 256; p++)
		ok = ok && push(s, PG_OBJ_DISTRUSTED, e, (unsigned)p, 2);
	return ok;
}

static bool
build(pg_store *s)
{
	size_t n_certs = 0;
	pg_entry **certs;
	bool ok = true;

	clear_objects(s);
	certs = all_certs(s, &n_certs);
	if (certs == NULL || !apply_crls(s, certs, n_certs)) {
		free(certs);
		return false;
	}
	merge_trust(s, certs, n_certs);
	mark_primaries(s, certs, n_certs);
	free(certs);
	for (size_t i = 0; i < s->n_sources && ok; i++)
		for (size_t j = 0; j < s->sources[i].n_entries && ok; j++) {
			pg_entry *e = &s->sources[i].entries[j];
			if (e->kind == PG_ENTRY_CERT)
				ok = push_entry_objects(s, e);
			else if (e->kind == PG_ENTRY_EXT)
				ok = push(s, PG_OBJ_EXT, e, 0, 0);
		}
	for (size_t i = 0; i < s->n_revoked && ok; i++) {
		if (s->revoked[i].kind == PG_ENTRY_CRL) {
			ok = push(s, PG_OBJ_CRL, &s->revoked[i], 0, 0);
			continue;
		}
		ok = push(s, PG_OBJ_REV_CERT, &s->revoked[i], 0, 0) &&
		     push(s, PG_OBJ_REV_NSS, &s->revoked[i], 0, 0);
		for (unsigned p = 0; p < PG_N_PURPOSES && ok; p++)
			ok = push(s, PG_OBJ_REV_ASSERT, &s->revoked[i], p, 0);
	}
	ok = ok && push(s, PG_OBJ_ROOT_LIST, NULL, 0, 0);
	return ok;
}

/* ---------------------------------------------------------------------------
 * The hash index
 */

static uint64_t
hash_key(CK_ATTRIBUTE_TYPE type, const void *v1, size_t l1, const void *v2, size_t l2)
{
	uint64_t h = 1469598103934665603ULL ^ type;
	const unsigned char *p = v1;

	for (size_t i = 0; i < l1; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	p = v2;
	for (size_t i = 0; i < l2; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static const CK_ATTRIBUTE_TYPE indexed[] = {
	CKA_CLASS, CKA_ID, CKA_SUBJECT, CKA_VALUE, CKA_CERT_SHA1_HASH, CKA_LABEL,
};

static int
cmp_slot(const void *a, const void *b)
{
	const index_slot *x = a, *y = b;
	return x->hash < y->hash ? -1 : x->hash > y->hash ? 1 : (x->obj > y->obj) - (x->obj < y->obj);
}

static bool
build_index(pg_store *s)
{
	size_t cap = s->n_objects * (PG_N_ELEMENTS(indexed) + 1), n = 0;

	s->index = malloc((cap ? cap : 1) * sizeof(*s->index));
	if (s->index == NULL)
		return false;
	for (size_t i = 0; i < s->n_objects; i++) {
		const void *v, *v2;
		CK_ULONG l, l2;
		for (size_t k = 0; k < PG_N_ELEMENTS(indexed); k++)
			if (pg_object_attr(s, &s->objects[i], indexed[k], &v, &l))
				s->index[n++] = (index_slot){ hash_key(indexed[k], v, l, NULL, 0), (uint32_t)i };
		if (pg_object_attr(s, &s->objects[i], CKA_ISSUER, &v, &l) &&
		    pg_object_attr(s, &s->objects[i], CKA_SERIAL_NUMBER, &v2, &l2))
			s->index[n++] = (index_slot){ hash_key(KEY_ISSUER_SERIAL, v, l, v2, l2), (uint32_t)i };
	}
	qsort(s->index, n, sizeof(*s->index), cmp_slot);
	s->n_index = n;
	return true;
}

bool
pg_store_refresh(pg_store *s)
{
	bool oom = false, changed = scan(s, &oom);

	if (!changed && s->built)
		return false;
	s->built = build(s) && build_index(s) && !oom;
	if (!s->built) {
		pg_message("%s: out of memory while loading", s->path);
		clear_objects(s);
	}
	return true;
}

static bool
matches(const pg_store *s, const pg_object *o, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++) {
		const void *v;
		CK_ULONG l;
		if (!pg_object_attr(s, o, t[i].type, &v, &l) || l != t[i].ulValueLen ||
		    (l && memcmp(v, t[i].pValue, l) != 0))
			return false;
	}
	return true;
}

static const CK_ATTRIBUTE *
tmpl_get(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (t[i].type == type && t[i].pValue != NULL)
			return &t[i];
	return NULL;
}

bool
pg_store_find(const pg_store *s, const CK_ATTRIBUTE *t, CK_ULONG n, size_t **out, size_t *n_out)
{
	const CK_ATTRIBUTE *a = tmpl_get(t, n, CKA_ISSUER), *b = tmpl_get(t, n, CKA_SERIAL_NUMBER);
	uint64_t h = 0;
	bool use_index = false;
	size_t lo = 0, hi = s->n_objects;

	if (a && b) {
		h = hash_key(KEY_ISSUER_SERIAL, a->pValue, a->ulValueLen, b->pValue, b->ulValueLen);
		use_index = true;
	} else {
		static const CK_ATTRIBUTE_TYPE order[] = {
			CKA_VALUE, CKA_CERT_SHA1_HASH, CKA_ID, CKA_SUBJECT, CKA_LABEL, CKA_CLASS,
		};
		for (size_t k = 0; k < PG_N_ELEMENTS(order) && !use_index; k++)
			if ((a = tmpl_get(t, n, order[k])) != NULL) {
				h = hash_key(order[k], a->pValue, a->ulValueLen, NULL, 0);
				use_index = true;
			}
	}
	if (use_index) {
		/* Binary search for the first slot with this hash. */
		size_t l = 0, r = s->n_index;
		while (l < r) {
			size_t m = (l + r) / 2;
			if (s->index[m].hash < h)
				l = m + 1;
			else
				r = m;
		}
		lo = l;
		hi = l;
		while (hi < s->n_index && s->index[hi].hash == h)
			hi++;
	}
	for (size_t i = lo; i < hi; i++) {
		size_t idx = use_index ? s->index[i].obj : i;
		if (matches(s, &s->objects[idx], t, n)) {
			size_t *grown = realloc(*out, (*n_out + 1) * sizeof(size_t));
			if (grown == NULL)
				return false;
			*out = grown;
			(*out)[(*n_out)++] = idx;
		}
	}
	return true;
}
