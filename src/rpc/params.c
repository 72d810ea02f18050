/*
 * Mechanisms and their parameters on the RPC wire (see marshal.h).
 *
 * Each parameter structure of PKCS#11 v3.0 that holds pointers (or
 * CK_ULONGs, whose size differs between peers) has a descriptor: its
 * fields in order, each a kind (CK_ULONG, byte, inline byte array,
 * pointer with its length in another field, pointer to a fixed number of
 * bytes, pointer to a nested structure). Which mechanism takes which
 * structure, at C_*Init and in the message functions, is generated from
 * the CKM_ names of include/p11glue/pkcs11.h (gen-rpc.py); the result
 * is included below as rpc-mechs.inc.
 *
 * A parameter travels as u8 form: 0 NULL pointer (u64 length), 1 flat
 * bytes, 2 a described structure (u16 structure id, then its fields).
 * Flat bytes are what every mechanism without a descriptor gets (IVs,
 * key wrap IVs, DH public values); a structure that has a descriptor is
 * never accepted as flat bytes, since the module would follow the
 * pointers inside.
 */
#include "config.h"

#include "params-table.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Structures
 */

static CK_ULONG
ulong_at(const void *base, size_t off)
{
	CK_ULONG v;

	memcpy(&v, (const unsigned char *)base + off, sizeof(v));
	return v;
}

static void *
ptr_at(const void *base, size_t off)
{
	void *p;

	memcpy(&p, (const unsigned char *)base + off, sizeof(p));
	return p;
}

/* The byte length of a pointer field's data, from the structure; false
 * when it cannot be represented. */
static bool
data_len(const field *f, const void *base, size_t *len)
{
	CK_ULONG n;

	switch (f->kind) {
	case F_PTR:
		n = ulong_at(base, f->len);
		break;
	case F_PTR_BITS:
		n = ulong_at(base, f->len);
		n = n / 8 + (n % 8 != 0);
		break;
	default:
		n = f->size;
	}
	if (n > PG_RPC_MAX_BODY)
		return false;
	*len = n;
	return true;
}

static void add_structure(pg_rpc_out *out, int id, const void *base, int depth);

static void
add_field(pg_rpc_out *out, const field *f, const void *base, int depth)
{
	const unsigned char *p = (const unsigned char *)base + f->off;
	size_t len;
	void *ptr;

	switch (f->kind) {
	case F_ULONG:
		pg_rpc_add_u64(out, ulong_at(base, f->off));
		break;
	case F_BYTE:
		pg_rpc_add_u8(out, *p);
		break;
	case F_FIXED:
		pg_rpc_add_raw(out, p, f->size);
		break;
	case F_NESTED:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr)
			add_structure(out, f->size, ptr, depth + 1);
		break;
	case F_ARRAY:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr == NULL)
			break;
		len = ulong_at(base, f->len);
		if (len > PG_RPC_MAX_COUNT) {
			out->failed = true;
			break;
		}
		pg_rpc_add_u32(out, (uint32_t)len);
		for (size_t i = 0; i < len && !out->failed; i++)
			add_structure(out, f->size, (unsigned char *)ptr + i * pg_rpc_structures[f->size].size,
			              depth + 1);
		break;
	case F_TEMPLATE:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr)
			pg_rpc_add_template(out, ptr, ulong_at(base, f->len));
		break;
	case F_OUT_HANDLE:
		pg_rpc_add_u8(out, ptr_at(base, f->off) != NULL);
		break;
	default:
		ptr = ptr_at(base, f->off);
		pg_rpc_add_u8(out, ptr != NULL);
		if (ptr == NULL)
			break;
		if (!data_len(f, base, &len))
			out->failed = true;
		else
			pg_rpc_add_bytes(out, ptr, len);
	}
}

static void
add_structure(pg_rpc_out *out, int id, const void *base, int depth)
{
	const structure *s = &pg_rpc_structures[id];

	if (depth > 3) {
		out->failed = true;
		return;
	}
	for (size_t i = 0; i < s->n_fields; i++)
		add_field(out, &s->fields[i], base, depth);
}

static void *get_structure(pg_rpc_in *in, pg_rpc_arena **arena, int id, int depth);

/* *counted gets the number of elements an array or template field carried. */
static bool
get_field(pg_rpc_in *in, pg_rpc_arena **arena, const field *f, unsigned char *base, int depth,
          size_t *counted)
{
	const unsigned char *bytes;
	CK_ULONG v;
	void *ptr = NULL;
	size_t len;

	switch (f->kind) {
	case F_ULONG:
		v = pg_rpc_get_ulong(in);
		memcpy(base + f->off, &v, sizeof(v));
		return !in->failed;
	case F_BYTE:
		base[f->off] = pg_rpc_get_u8(in);
		return !in->failed;
	case F_FIXED:
		bytes = pg_rpc_get_raw(in, f->size);
		if (bytes)
			memcpy(base + f->off, bytes, f->size);
		return !in->failed;
	case F_NESTED:
		if (pg_rpc_get_u8(in) && (ptr = get_structure(in, arena, f->size, depth + 1)) == NULL)
			return false;
		break;
	case F_ARRAY: {
		uint32_t n;
		size_t size = pg_rpc_structures[f->size].size;
		if (!pg_rpc_get_u8(in))
			break;
		n = pg_rpc_get_count(in, PG_RPC_MAX_COUNT);
		/* Each element takes at least a byte: a count beyond the input is a lie. */
		if (in->failed || n > in->len - in->off)
			return in->failed = true, false;
		ptr = pg_rpc_arena_alloc(arena, (n ? n : 1) * size);
		if (ptr == NULL)
			return in->failed = true, false;
		for (uint32_t i = 0; i < n; i++) {
			void *one = get_structure(in, arena, f->size, depth + 1);
			if (one == NULL)
				return false;
			memcpy((unsigned char *)ptr + i * size, one, size);
		}
		*counted = n;
		break;
	}
	case F_TEMPLATE: {
		CK_ATTRIBUTE *t;
		CK_ULONG n;
		if (!pg_rpc_get_u8(in))
			break;
		if (!pg_rpc_get_template(in, arena, &t, &n))
			return false;
		ptr = t ? (void *)t : pg_rpc_arena_alloc(arena, 1);
		*counted = n;
		break;
	}
	case F_OUT_HANDLE:
		if (pg_rpc_get_u8(in) &&
		    (ptr = pg_rpc_arena_alloc(arena, sizeof(CK_OBJECT_HANDLE))) == NULL)
			return in->failed = true, false;
		break;
	default:
		if (!pg_rpc_get_u8(in))
			break;
		bytes = pg_rpc_get_bytes(in, &len);
		ptr = bytes ? pg_rpc_arena_alloc(arena, len) : NULL;
		if (ptr == NULL)
			return in->failed = true, false;
		memcpy(ptr, bytes, len);
		break;
	}
	memcpy(base + f->off, &ptr, sizeof(ptr));
	return !in->failed;
}

static void *
get_structure(pg_rpc_in *in, pg_rpc_arena **arena, int id, int depth)
{
	const structure *s;
	unsigned char *base;
	size_t given[16] = { 0 }, want;

	if (depth > 3 || id <= S_NONE || id >= S_COUNT)
		return in->failed = true, NULL;
	s = &pg_rpc_structures[id];
	base = pg_rpc_arena_alloc(arena, s->size);
	if (base == NULL)
		return in->failed = true, NULL;
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		size_t before = in->off, counted = 0;
		if (!get_field(in, arena, f, base, depth, &counted))
			return NULL;
		/* The bytes a pointer field carried: total minus flag and prefix;
		 * the elements of an array or template. */
		if (f->kind == F_ARRAY || f->kind == F_TEMPLATE)
			given[i] = counted;
		else
			given[i] = in->off - before > 5 ? in->off - before - 5 : 0;
	}
	/* Every pointer's data must be exactly as long as its length field
	 * says: the module reads that many bytes. */
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		if (ptr_at(base, f->off) == NULL)
			continue;
		if (f->kind == F_ARRAY || f->kind == F_TEMPLATE) {
			/* As many elements as the count field says. */
			if (ulong_at(base, f->len) != given[i])
				return in->failed = true, NULL;
			continue;
		}
		if (f->kind != F_PTR && f->kind != F_PTR_BITS && f->kind != F_PTR_FIXED)
			continue;
		if (!data_len(f, base, &want) || want != given[i])
			return in->failed = true, NULL;
	}
	return base;
}

/* ---------------------------------------------------------------------------
 * Parameters
 */

static void
add_param(pg_rpc_out *out, int id, const void *param, CK_ULONG len)
{
	if (param == NULL) {
		pg_rpc_add_u8(out, 0);
		pg_rpc_add_u64(out, len);
	} else if (id != S_NONE && len == pg_rpc_structures[id].size) {
		pg_rpc_add_u8(out, 2);
		pg_rpc_add_u32(out, (uint32_t)id);
		add_structure(out, id, param, 0);
	} else {
		pg_rpc_add_u8(out, 1);
		pg_rpc_add_bytes(out, param, len);
	}
}

/* *id gets the structure (S_NONE for flat bytes or NULL). */
static bool
get_param(pg_rpc_in *in, pg_rpc_arena **arena, const mech_entry *e, bool message,
          void **param, CK_ULONG *len, int *id)
{
	const unsigned char *bytes;
	size_t n;
	int expected = e ? (message ? e->message : e->init) : S_NONE;

	*param = NULL;
	*len = 0;
	*id = S_NONE;
	switch (pg_rpc_get_u8(in)) {
	case 0:
		*len = pg_rpc_get_ulong(in);
		return !in->failed;
	case 1:
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL)
			return false;
		/* A described structure as flat bytes would hand the module
		 * pointers from another process. */
		if (expected != S_NONE && n == pg_rpc_structures[expected].size)
			return in->failed = true, false;
		*param = pg_rpc_arena_alloc(arena, n);
		if (*param == NULL)
			return in->failed = true, false;
		memcpy(*param, bytes, n);
		*len = n;
		return true;
	case 2:
		*id = (int)pg_rpc_get_u32(in);
		if (in->failed || *id != expected || *id == S_NONE)
			return in->failed = true, false;
		*param = get_structure(in, arena, *id, 0);
		*len = pg_rpc_structures[*id].size;
		return *param != NULL;
	default:
		return in->failed = true, false;
	}
}

void
pg_rpc_add_mechanism(pg_rpc_out *out, const CK_MECHANISM *mech)
{
	const mech_entry *e;

	pg_rpc_add_u8(out, mech != NULL);
	if (mech == NULL)
		return;
	e = pg_rpc_find_mech(mech->mechanism);
	pg_rpc_add_u64(out, mech->mechanism);
	add_param(out, e ? e->init : S_NONE, mech->pParameter, mech->ulParameterLen);
}

bool
pg_rpc_get_mechanism(pg_rpc_in *in, pg_rpc_arena **arena, CK_MECHANISM **mech)
{
	CK_MECHANISM *m;
	int id;

	*mech = NULL;
	if (!pg_rpc_get_u8(in))
		return !in->failed;
	m = pg_rpc_arena_alloc(arena, sizeof(*m));
	if (m == NULL)
		return in->failed = true, false;
	m->mechanism = pg_rpc_get_ulong(in);
	if (!get_param(in, arena, pg_rpc_find_mech(m->mechanism), false, &m->pParameter,
	               &m->ulParameterLen, &id))
		return false;
	*mech = m;
	return true;
}

void
pg_rpc_add_msg_param(pg_rpc_out *out, CK_MECHANISM_TYPE mech, const void *param, CK_ULONG len)
{
	const mech_entry *e = pg_rpc_find_mech(mech);

	pg_rpc_add_u64(out, mech);
	add_param(out, e ? e->message : S_NONE, param, len);
}

bool
pg_rpc_get_msg_param(pg_rpc_in *in, pg_rpc_arena **arena, void **param, CK_ULONG *len,
                     int *kind)
{
	CK_MECHANISM_TYPE mech = pg_rpc_get_ulong(in);

	return get_param(in, arena, pg_rpc_find_mech(mech), true, param, len, kind);
}

/*
 * The next write-back field of s at or after field *i that param points
 * somewhere with (output handles go their own way): its data, with *f
 * the field and *i past it; NULL when there is none.
 */
static void *
next_writeback(const structure *s, const void *param, size_t *i, const field **f)
{
	for (; *i < s->n_fields; (*i)++) {
		void *p = ptr_at(param, s->fields[*i].off);
		*f = &s->fields[*i];
		if ((*f)->writeback && p != NULL && (*f)->kind != F_OUT_HANDLE) {
			(*i)++;
			return p;
		}
	}
	return NULL;
}

/*
 * After the call: flat parameters come back whole; described ones as the
 * bytes of their write-back fields, in order.
 */
void
pg_rpc_add_msg_param_result(pg_rpc_out *out, int kind, const void *param, CK_ULONG len)
{
	const structure *s;
	const field *f;
	void *p;
	size_t n;

	if (param == NULL)
		return;
	if (kind == S_NONE) {
		pg_rpc_add_bytes(out, param, len);
		return;
	}
	s = &pg_rpc_structures[kind];
	for (size_t i = 0; (p = next_writeback(s, param, &i, &f)) != NULL;) {
		if (!data_len(f, param, &n))
			out->failed = true;
		else
			pg_rpc_add_bytes(out, p, n);
	}
}

bool
pg_rpc_get_msg_param_result(pg_rpc_in *in, CK_MECHANISM_TYPE mech, void *param, CK_ULONG len)
{
	const mech_entry *e = pg_rpc_find_mech(mech);
	int kind = e ? e->message : S_NONE;
	const unsigned char *bytes;
	const structure *s;
	const field *f;
	void *p;
	size_t n, want;

	if (param == NULL)
		return true;
	if (kind == S_NONE || len != pg_rpc_structures[kind].size) {
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL || n != len)
			return in->failed = true, false;
		memcpy(param, bytes, n);
		return true;
	}
	s = &pg_rpc_structures[kind];
	for (size_t i = 0; (p = next_writeback(s, param, &i, &f)) != NULL;) {
		bytes = pg_rpc_get_bytes(in, &n);
		if (bytes == NULL || !data_len(f, param, &want) || n != want)
			return in->failed = true, false;
		memcpy(p, bytes, n);
	}
	return !in->failed;
}

/* ---------------------------------------------------------------------------
 * Handles a module writes into a mechanism's parameter (C_DeriveKey with
 * SP 800-108's additional keys): each output handle of the structure, in
 * order, through arrays and nested structures, as u64.
 */

static void
add_handles(pg_rpc_out *out, int id, const void *base, int depth)
{
	const structure *s = &pg_rpc_structures[id];

	if (depth > 3)
		return;
	for (size_t i = 0; i < s->n_fields; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(base, f->off);
		if (p == NULL)
			continue;
		if (f->kind == F_OUT_HANDLE) {
			pg_rpc_add_u64(out, *(CK_OBJECT_HANDLE *)p);
		} else if (f->kind == F_NESTED) {
			add_handles(out, f->size, p, depth + 1);
		} else if (f->kind == F_ARRAY) {
			CK_ULONG n = ulong_at(base, f->len);
			for (CK_ULONG k = 0; k < n && k < PG_RPC_MAX_COUNT; k++)
				add_handles(out, f->size, (unsigned char *)p + k * pg_rpc_structures[f->size].size,
				            depth + 1);
		}
	}
}

static void
get_handles(pg_rpc_in *in, int id, const void *base, int depth)
{
	const structure *s = &pg_rpc_structures[id];

	if (depth > 3)
		return;
	for (size_t i = 0; i < s->n_fields && !in->failed; i++) {
		const field *f = &s->fields[i];
		void *p = ptr_at(base, f->off);
		if (p == NULL)
			continue;
		if (f->kind == F_OUT_HANDLE) {
			*(CK_OBJECT_HANDLE *)p = pg_rpc_get_ulong(in);
		} else if (f->kind == F_NESTED) {
			get_handles(in, f->size, p, depth + 1);
		} else if (f->kind == F_ARRAY) {
			CK_ULONG n = ulong_at(base, f->len);
			for (CK_ULONG k = 0; k < n && k < PG_RPC_MAX_COUNT && !in->failed; k++)
				get_handles(in, f->size, (unsigned char *)p + k * pg_rpc_structures[f->size].size,
				            depth + 1);
		}
	}
}

/* The structure a mechanism's parameter was sent as, or S_NONE. */
static int
sent_as(const CK_MECHANISM *mech)
{
	const mech_entry *e = mech ? pg_rpc_find_mech(mech->mechanism) : NULL;

	if (e == NULL || e->init == S_NONE || mech->pParameter == NULL ||
	    mech->ulParameterLen != pg_rpc_structures[e->init].size)
		return S_NONE;
	return e->init;
}

void
pg_rpc_add_mechanism_result(pg_rpc_out *out, const CK_MECHANISM *mech)
{
	int id = sent_as(mech);

	if (id != S_NONE)
		add_handles(out, id, mech->pParameter, 0);
}

bool
pg_rpc_get_mechanism_result(pg_rpc_in *in, const CK_MECHANISM *mech)
{
	int id = sent_as(mech);

	if (id != S_NONE)
		get_handles(in, id, mech->pParameter, 0);
	return !in->failed;
}
