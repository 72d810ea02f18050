/*
 * PKCS#11 values on the RPC wire (see marshal.h): arenas, attributes,
 * information structures. Mechanisms live in params.c.
 */
#include "config.h"

#include "marshal.h"

#include <p11glue/pkcs11x.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Arenas
 */

struct pg_rpc_arena {
	struct pg_rpc_arena *next;
	size_t size;
	max_align_t data[];
};

void *
pg_rpc_arena_alloc(pg_rpc_arena **arena, size_t n)
{
	pg_rpc_arena *block;

	if (n > PG_RPC_MAX_BODY * 2u)
		return NULL;
	block = calloc(1, sizeof(*block) + (n ? n : 1));
	if (block == NULL)
		return NULL;
	block->size = n;
	block->next = *arena;
	*arena = block;
	return block->data;
}

void
pg_rpc_arena_free(pg_rpc_arena *arena)
{
	while (arena != NULL) {
		pg_rpc_arena *next = arena->next;
		pg_memzero(arena->data, arena->size);
		free(arena);
		arena = next;
	}
}

/* ---------------------------------------------------------------------------
 * Attribute kinds: values that are CK_ULONGs travel as u64 (PKCS#11 v3.0
 * §4: CK_ULONG-typed attributes), so that 32- and 64-bit peers agree.
 */

static const CK_ATTRIBUTE_TYPE ulong_attrs[] = {
	CKA_CLASS, CKA_CERTIFICATE_TYPE, CKA_CERTIFICATE_CATEGORY, CKA_JAVA_MIDP_SECURITY_DOMAIN,
	CKA_NAME_HASH_ALGORITHM, CKA_KEY_TYPE, CKA_MODULUS_BITS, CKA_PRIME_BITS, CKA_SUBPRIME_BITS,
	CKA_VALUE_BITS, CKA_VALUE_LEN, CKA_KEY_GEN_MECHANISM, CKA_AUTH_PIN_FLAGS,
	CKA_OTP_FORMAT, CKA_OTP_LENGTH, CKA_OTP_TIME_INTERVAL, CKA_OTP_CHALLENGE_REQUIREMENT,
	CKA_OTP_TIME_REQUIREMENT, CKA_OTP_COUNTER_REQUIREMENT, CKA_OTP_PIN_REQUIREMENT,
	CKA_HW_FEATURE_TYPE, CKA_PIXEL_X, CKA_PIXEL_Y, CKA_RESOLUTION, CKA_CHAR_ROWS,
	CKA_CHAR_COLUMNS, CKA_BITS_PER_PIXEL, CKA_MECHANISM_TYPE, CKA_PROFILE_ID,
	CKA_X2RATCHET_BAGSIZE, CKA_X2RATCHET_NR, CKA_X2RATCHET_NS, CKA_X2RATCHET_PNS,
	CKA_X_ASSERTION_TYPE,
	CKA_TRUST_DIGITAL_SIGNATURE, CKA_TRUST_NON_REPUDIATION, CKA_TRUST_KEY_ENCIPHERMENT,
	CKA_TRUST_DATA_ENCIPHERMENT, CKA_TRUST_KEY_AGREEMENT, CKA_TRUST_KEY_CERT_SIGN,
	CKA_TRUST_CRL_SIGN, CKA_TRUST_SERVER_AUTH, CKA_TRUST_CLIENT_AUTH, CKA_TRUST_CODE_SIGNING,
	CKA_TRUST_EMAIL_PROTECTION, CKA_TRUST_IPSEC_END_SYSTEM, CKA_TRUST_IPSEC_TUNNEL,
	CKA_TRUST_IPSEC_USER, CKA_TRUST_TIME_STAMPING,
};

int
pg_rpc_attr_kind(CK_ATTRIBUTE_TYPE type)
{
	if (type == CKA_ALLOWED_MECHANISMS)
		return PG_RPC_ATTR_ULONGS;
	if (type & CKF_ARRAY_ATTRIBUTE)
		return PG_RPC_ATTR_TEMPLATE;
	for (size_t i = 0; i < PG_N_ELEMENTS(ulong_attrs); i++) {
		if (ulong_attrs[i] == type)
			return PG_RPC_ATTR_ULONG;
	}
	return PG_RPC_ATTR_BYTES;
}

/* ---------------------------------------------------------------------------
 * Input templates: per attribute u64 type, u8 form, then
 *   0 NULL pointer: u64 length     1 bytes     2 u64 value
 *   3 u32 n, n x u64               4 a nested template
 */

#define MAX_DEPTH 2

static void
add_template(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count, int depth)
{
	if (count > PG_RPC_MAX_COUNT || (count > 0 && tmpl == NULL) || depth > MAX_DEPTH) {
		out->failed = true;
		return;
	}
	pg_rpc_add_u32(out, (uint32_t)count);
	for (CK_ULONG i = 0; i < count && !out->failed; i++) {
		const CK_ATTRIBUTE *a = &tmpl[i];
		int kind = pg_rpc_attr_kind(a->type);
		pg_rpc_add_u64(out, a->type);
		if (a->pValue == NULL) {
			pg_rpc_add_u8(out, 0);
			pg_rpc_add_u64(out, a->ulValueLen);
		} else if (kind == PG_RPC_ATTR_ULONG && a->ulValueLen == sizeof(CK_ULONG)) {
			pg_rpc_add_u8(out, 2);
			pg_rpc_add_u64(out, *(const CK_ULONG *)a->pValue);
		} else if (kind == PG_RPC_ATTR_ULONGS && a->ulValueLen % sizeof(CK_ULONG) == 0) {
			const CK_ULONG *v = a->pValue;
			CK_ULONG n = a->ulValueLen / sizeof(CK_ULONG);
			pg_rpc_add_u8(out, 3);
			pg_rpc_add_u32(out, (uint32_t)(n <= PG_RPC_MAX_COUNT ? n : (out->failed = true, 0)));
			for (CK_ULONG j = 0; j < n && !out->failed; j++)
				pg_rpc_add_u64(out, v[j]);
		} else if (kind == PG_RPC_ATTR_TEMPLATE && a->ulValueLen % sizeof(CK_ATTRIBUTE) == 0) {
			pg_rpc_add_u8(out, 4);
			add_template(out, a->pValue, a->ulValueLen / sizeof(CK_ATTRIBUTE), depth + 1);
		} else if (kind == PG_RPC_ATTR_TEMPLATE) {
			/* Not an array of attributes: the module gets no pointer to
			 * misread, only the length (and refuses it). */
			pg_rpc_add_u8(out, 0);
			pg_rpc_add_u64(out, a->ulValueLen);
		} else {
			pg_rpc_add_u8(out, 1);
			pg_rpc_add_bytes(out, a->pValue, a->ulValueLen);
		}
	}
}

void
pg_rpc_add_template(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count)
{
	add_template(out, tmpl, count, 0);
}

static bool
get_template(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl, CK_ULONG *count,
             int depth)
{
	uint32_t n = pg_rpc_get_count(in, PG_RPC_MAX_COUNT);
	CK_ATTRIBUTE *t;

	*tmpl = NULL;
	*count = 0;
	if (in->failed || depth > MAX_DEPTH)
		return false;
	/* Each attribute takes at least 9 bytes: a count beyond the input is a lie. */
	if (n > (in->len - in->off) / 9)
		return in->failed = true, false;
	t = n ? pg_rpc_arena_alloc(arena, n * sizeof(*t)) : NULL;
	if (n && t == NULL)
		return in->failed = true, false;
	for (uint32_t i = 0; i < n && !in->failed; i++) {
		CK_ULONG *v;
		uint32_t m;
		size_t len;
		const unsigned char *bytes;
		uint8_t form;
		t[i].type = pg_rpc_get_ulong(in);
		form = pg_rpc_get_u8(in);
		/* An attribute array arrives as one (or NULL), never as bytes a
		 * module would read as attributes with pointers. */
		if ((pg_rpc_attr_kind(t[i].type) == PG_RPC_ATTR_TEMPLATE) != (form == 4) && form != 0)
			return in->failed = true, false;
		switch (form) {
		case 0:
			t[i].pValue = NULL;
			t[i].ulValueLen = pg_rpc_get_ulong(in);
			break;
		case 1:
			bytes = pg_rpc_get_bytes(in, &len);
			/* A copy: the module gets memory it may keep using for the call. */
			t[i].pValue = bytes ? pg_rpc_arena_alloc(arena, len) : NULL;
			if (bytes && t[i].pValue == NULL)
				return in->failed = true, false;
			if (bytes && len)
				memcpy(t[i].pValue, bytes, len);
			t[i].ulValueLen = len;
			break;
		case 2:
			v = pg_rpc_arena_alloc(arena, sizeof(CK_ULONG));
			if (v == NULL)
				return in->failed = true, false;
			*v = pg_rpc_get_ulong(in);
			t[i].pValue = v;
			t[i].ulValueLen = sizeof(CK_ULONG);
			break;
		case 3:
			m = pg_rpc_get_count(in, PG_RPC_MAX_COUNT);
			if (m > (in->len - in->off) / 8)
				return in->failed = true, false;
			v = pg_rpc_arena_alloc(arena, m * sizeof(CK_ULONG));
			if (v == NULL)
				return in->failed = true, false;
			for (uint32_t j = 0; j < m; j++)
				v[j] = pg_rpc_get_ulong(in);
			t[i].pValue = v;
			t[i].ulValueLen = m * sizeof(CK_ULONG);
			break;
		case 4: {
			CK_ATTRIBUTE *nested;
			CK_ULONG nn;
			if (!get_template(in, arena, &nested, &nn, depth + 1))
				return false;
			/* An empty array still needs a non-NULL pointer. */
			t[i].pValue = nested ? (void *)nested : pg_rpc_arena_alloc(arena, 1);
			t[i].ulValueLen = nn * sizeof(CK_ATTRIBUTE);
			break;
		}
		default:
			in->failed = true;
		}
	}
	*tmpl = t;
	*count = n;
	return !in->failed;
}

bool
pg_rpc_get_template(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl, CK_ULONG *count)
{
	return get_template(in, arena, tmpl, count, 0);
}

/* ---------------------------------------------------------------------------
 * C_GetAttributeValue (PKCS#11 v3.0 §5.7.5)
 *
 * Request, per attribute: u64 type, u8 has buffer, u8 unit (0 bytes,
 * 1 CK_ULONGs, 2 attributes), u64 capacity in units; for unit 2 with a
 * buffer, the nested request follows (u32 n, entries).
 * Result, per attribute: u64 type, u8 unit, u64 length in units
 * (UINT64_MAX: CK_UNAVAILABLE_INFORMATION); then, when the request had a
 * buffer and a length came back, the value: bytes, u64s, or the nested
 * results.
 *
 * The server's decoded template has a shadow after its count entries:
 * tmpl[count + i] keeps the buffer and capacity it gave the module,
 * which writes over tmpl[i], and tmpl[2 * count + i].ulValueLen the unit
 * of that buffer (a nested array only where one was asked for).
 */

static size_t
unit_size(int unit)
{
	return unit == 1 ? sizeof(CK_ULONG) : unit == 2 ? sizeof(CK_ATTRIBUTE) : 1;
}

static int
unit_of(CK_ATTRIBUTE_TYPE type, CK_ULONG len)
{
	int kind = pg_rpc_attr_kind(type);

	if ((kind == PG_RPC_ATTR_ULONG || kind == PG_RPC_ATTR_ULONGS) && len % sizeof(CK_ULONG) == 0)
		return 1;
	if (kind == PG_RPC_ATTR_TEMPLATE && len % sizeof(CK_ATTRIBUTE) == 0)
		return 2;
	return 0;
}

static void
add_attr_request(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count, int depth)
{
	if (count > PG_RPC_MAX_COUNT || (count && tmpl == NULL)) {
		out->failed = true;
		return;
	}
	pg_rpc_add_u32(out, (uint32_t)count);
	for (CK_ULONG i = 0; i < count && !out->failed; i++) {
		const CK_ATTRIBUTE *a = &tmpl[i];
		int unit = a->pValue ? unit_of(a->type, a->ulValueLen) : 0;
		if (unit == 2 && depth >= 1)
			unit = 0;
		pg_rpc_add_u64(out, a->type);
		pg_rpc_add_u8(out, a->pValue != NULL);
		pg_rpc_add_u8(out, (uint8_t)unit);
		pg_rpc_add_u64(out, a->ulValueLen / unit_size(unit));
		if (unit == 2)
			add_attr_request(out, a->pValue, a->ulValueLen / sizeof(CK_ATTRIBUTE), depth + 1);
	}
}

void
pg_rpc_add_attr_request(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count)
{
	add_attr_request(out, tmpl, count, 0);
}

static bool
get_attr_request(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl, CK_ULONG *count,
                 int depth, size_t *budget)
{
	uint32_t n = pg_rpc_get_count(in, PG_RPC_MAX_COUNT);
	CK_ATTRIBUTE *t;

	*tmpl = NULL;
	*count = 0;
	if (in->failed || n > (in->len - in->off) / 18)
		return in->failed = true, false;
	t = pg_rpc_arena_alloc(arena, 3 * (size_t)(n ? n : 1) * sizeof(*t));
	if (t == NULL)
		return in->failed = true, false;
	for (uint32_t i = 0; i < n && !in->failed; i++) {
		bool buffer;
		int unit;
		uint64_t cap;
		t[i].type = pg_rpc_get_ulong(in);
		buffer = pg_rpc_get_u8(in) != 0;
		unit = pg_rpc_get_u8(in);
		cap = pg_rpc_get_u64(in);
		if (in->failed || unit > 2 || (unit == 2 && depth >= 1))
			return in->failed = true, false;
		/* Buffers are as large as asked, within what a reply can carry. */
		if (cap > PG_RPC_MAX_BODY || cap * unit_size(unit) > *budget)
			return in->failed = true, false;
		t[i].ulValueLen = (CK_ULONG)(cap * unit_size(unit));
		if (buffer && unit == 2) {
			CK_ATTRIBUTE *nested;
			CK_ULONG nn;
			if (!get_attr_request(in, arena, &nested, &nn, depth + 1, budget))
				return false;
			if (nn != cap)
				return in->failed = true, false;
			t[i].pValue = nested ? (void *)nested : pg_rpc_arena_alloc(arena, 1);
		} else if (buffer) {
			*budget -= t[i].ulValueLen;
			t[i].pValue = pg_rpc_arena_alloc(arena, t[i].ulValueLen);
		}
		if (buffer && t[i].pValue == NULL)
			return in->failed = true, false;
		t[n + i] = t[i];
		t[2 * n + i].ulValueLen = buffer ? (CK_ULONG)unit : 0;
	}
	*tmpl = t;
	*count = n;
	return !in->failed;
}

bool
pg_rpc_get_attr_request(pg_rpc_in *in, pg_rpc_arena **arena, CK_ATTRIBUTE **tmpl,
                        CK_ULONG *count)
{
	size_t budget = PG_RPC_MAX_BODY;

	return get_attr_request(in, arena, tmpl, count, 0, &budget);
}

static void
add_attr_result(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count,
                const CK_ATTRIBUTE *shadow, const CK_ATTRIBUTE *units, int depth)
{
	pg_rpc_add_u32(out, (uint32_t)count);
	for (CK_ULONG i = 0; i < count && !out->failed; i++) {
		const CK_ATTRIBUTE *a = &tmpl[i], *given = &shadow[i];
		CK_ULONG len = a->ulValueLen;
		int unit = len == CK_UNAVAILABLE_INFORMATION ? 0 : unit_of(a->type, len);
		bool value = given->pValue != NULL && len != CK_UNAVAILABLE_INFORMATION;
		/* A nested array only where the request gave one; a byte buffer
		 * stays bytes whatever the attribute's type. */
		if (unit == 2 && (depth >= 1 || (value && units[i].ulValueLen != 2)))
			unit = 0;
		if (value && units[i].ulValueLen == 2 && unit != 2) {
			len = CK_UNAVAILABLE_INFORMATION;
			value = false;
		}
		/* A module that claims more than the buffer it was given is
		 * answered as if the value were unavailable. */
		if (value && len > given->ulValueLen) {
			len = CK_UNAVAILABLE_INFORMATION;
			value = false;
			unit = 0;
		}
		pg_rpc_add_u64(out, a->type);
		pg_rpc_add_u8(out, (uint8_t)unit);
		pg_rpc_add_u64(out, len == CK_UNAVAILABLE_INFORMATION ? UINT64_MAX : len / unit_size(unit));
		if (!value)
			continue;
		if (unit == 1) {
			for (CK_ULONG j = 0; j < len / sizeof(CK_ULONG); j++)
				pg_rpc_add_u64(out, ((const CK_ULONG *)given->pValue)[j]);
		} else if (unit == 2) {
			/* The nested array's shadow follows all the entries the
			 * request gave, of which the module may fill fewer. */
			const CK_ATTRIBUTE *nested = given->pValue;
			CK_ULONG given_n = given->ulValueLen / sizeof(CK_ATTRIBUTE);
			add_attr_result(out, nested, len / sizeof(CK_ATTRIBUTE), nested + given_n,
			                nested + 2 * given_n, depth + 1);
		} else {
			pg_rpc_add_raw(out, given->pValue, len);
		}
	}
}

void
pg_rpc_add_attr_result(pg_rpc_out *out, const CK_ATTRIBUTE *tmpl, CK_ULONG count)
{
	add_attr_result(out, tmpl, count, tmpl + count, tmpl + 2 * count, 0);
}

static bool
get_attr_result(pg_rpc_in *in, CK_ATTRIBUTE *tmpl, CK_ULONG count, int depth)
{
	uint32_t n = pg_rpc_get_u32(in);

	if (in->failed || n != count || depth > 1)
		return in->failed = true, false;
	for (CK_ULONG i = 0; i < count && !in->failed; i++) {
		CK_ATTRIBUTE *a = &tmpl[i];
		CK_ULONG cap = a->ulValueLen;
		CK_ATTRIBUTE_TYPE type = pg_rpc_get_ulong(in);
		int unit = pg_rpc_get_u8(in);
		uint64_t len = pg_rpc_get_u64(in);
		bool value, asked;
		if (in->failed || unit > 2)
			return in->failed = true, false;
		if (depth > 0)
			a->type = type;       /* the module names nested attributes */
		if (len == UINT64_MAX) {
			a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
			continue;
		}
		if (len > PG_RPC_MAX_BODY)
			return in->failed = true, false;
		a->ulValueLen = (CK_ULONG)(len * unit_size(unit));
		value = a->pValue != NULL;
		if (!value)
			continue;
		/* A nested array comes back only where one was given. */
		asked = unit_of(type, cap) == 2 && depth == 0;
		if (a->ulValueLen > cap || (unit == 2) != asked || (depth == 0 && type != a->type))
			return in->failed = true, false;
		if (unit == 1) {
			for (uint64_t j = 0; j < len; j++)
				((CK_ULONG *)a->pValue)[j] = pg_rpc_get_ulong(in);
		} else if (unit == 2) {
			if (!get_attr_result(in, a->pValue, (CK_ULONG)len, depth + 1))
				return false;
		} else {
			const unsigned char *p = pg_rpc_get_raw(in, (size_t)len);
			if (p && len)
				memcpy(a->pValue, p, (size_t)len);
		}
	}
	return !in->failed;
}

bool
pg_rpc_get_attr_result(pg_rpc_in *in, CK_ATTRIBUTE *tmpl, CK_ULONG count)
{
	return get_attr_result(in, tmpl, count, 0);
}

/* ---------------------------------------------------------------------------
 * Information structures (fixed layouts; CK_ULONGs as u64)
 */

static void
add_version(pg_rpc_out *out, CK_VERSION v)
{
	pg_rpc_add_u8(out, v.major);
	pg_rpc_add_u8(out, v.minor);
}

static CK_VERSION
get_version(pg_rpc_in *in)
{
	CK_VERSION v;

	v.major = pg_rpc_get_u8(in);
	v.minor = pg_rpc_get_u8(in);
	return v;
}

static void
get_fixed(pg_rpc_in *in, void *to, size_t n)
{
	const unsigned char *p = pg_rpc_get_raw(in, n);

	if (p)
		memcpy(to, p, n);
	else
		memset(to, ' ', n);
}

void
pg_rpc_add_info(pg_rpc_out *out, const CK_INFO *info)
{
	add_version(out, info->cryptokiVersion);
	pg_rpc_add_raw(out, info->manufacturerID, 32);
	pg_rpc_add_u64(out, info->flags);
	pg_rpc_add_raw(out, info->libraryDescription, 32);
	add_version(out, info->libraryVersion);
}

bool
pg_rpc_get_info(pg_rpc_in *in, CK_INFO *info)
{
	info->cryptokiVersion = get_version(in);
	get_fixed(in, info->manufacturerID, 32);
	info->flags = pg_rpc_get_ulong(in);
	get_fixed(in, info->libraryDescription, 32);
	info->libraryVersion = get_version(in);
	return !in->failed;
}

void
pg_rpc_add_slot_info(pg_rpc_out *out, const CK_SLOT_INFO *info)
{
	pg_rpc_add_raw(out, info->slotDescription, 64);
	pg_rpc_add_raw(out, info->manufacturerID, 32);
	pg_rpc_add_u64(out, info->flags);
	add_version(out, info->hardwareVersion);
	add_version(out, info->firmwareVersion);
}

bool
pg_rpc_get_slot_info(pg_rpc_in *in, CK_SLOT_INFO *info)
{
	get_fixed(in, info->slotDescription, 64);
	get_fixed(in, info->manufacturerID, 32);
	info->flags = pg_rpc_get_ulong(in);
	info->hardwareVersion = get_version(in);
	info->firmwareVersion = get_version(in);
	return !in->failed;
}

void
pg_rpc_add_token_info(pg_rpc_out *out, const CK_TOKEN_INFO *info)
{
	pg_rpc_add_raw(out, info->label, 32);
	pg_rpc_add_raw(out, info->manufacturerID, 32);
	pg_rpc_add_raw(out, info->model, 16);
	pg_rpc_add_raw(out, info->serialNumber, 16);
	pg_rpc_add_u64(out, info->flags);
	pg_rpc_add_u64(out, info->ulMaxSessionCount);
	pg_rpc_add_u64(out, info->ulSessionCount);
	pg_rpc_add_u64(out, info->ulMaxRwSessionCount);
	pg_rpc_add_u64(out, info->ulRwSessionCount);
	pg_rpc_add_u64(out, info->ulMaxPinLen);
	pg_rpc_add_u64(out, info->ulMinPinLen);
	pg_rpc_add_u64(out, info->ulTotalPublicMemory);
	pg_rpc_add_u64(out, info->ulFreePublicMemory);
	pg_rpc_add_u64(out, info->ulTotalPrivateMemory);
	pg_rpc_add_u64(out, info->ulFreePrivateMemory);
	add_version(out, info->hardwareVersion);
	add_version(out, info->firmwareVersion);
	pg_rpc_add_raw(out, info->utcTime, 16);
}

bool
pg_rpc_get_token_info(pg_rpc_in *in, CK_TOKEN_INFO *info)
{
	get_fixed(in, info->label, 32);
	get_fixed(in, info->manufacturerID, 32);
	get_fixed(in, info->model, 16);
	get_fixed(in, info->serialNumber, 16);
	info->flags = pg_rpc_get_ulong(in);
	info->ulMaxSessionCount = pg_rpc_get_ulong(in);
	info->ulSessionCount = pg_rpc_get_ulong(in);
	info->ulMaxRwSessionCount = pg_rpc_get_ulong(in);
	info->ulRwSessionCount = pg_rpc_get_ulong(in);
	info->ulMaxPinLen = pg_rpc_get_ulong(in);
	info->ulMinPinLen = pg_rpc_get_ulong(in);
	info->ulTotalPublicMemory = pg_rpc_get_ulong(in);
	info->ulFreePublicMemory = pg_rpc_get_ulong(in);
	info->ulTotalPrivateMemory = pg_rpc_get_ulong(in);
	info->ulFreePrivateMemory = pg_rpc_get_ulong(in);
	info->hardwareVersion = get_version(in);
	info->firmwareVersion = get_version(in);
	get_fixed(in, info->utcTime, 16);
	return !in->failed;
}

void
pg_rpc_add_session_info(pg_rpc_out *out, const CK_SESSION_INFO *info)
{
	pg_rpc_add_u64(out, info->slotID);
	pg_rpc_add_u64(out, info->state);
	pg_rpc_add_u64(out, info->flags);
	pg_rpc_add_u64(out, info->ulDeviceError);
}

bool
pg_rpc_get_session_info(pg_rpc_in *in, CK_SESSION_INFO *info)
{
	info->slotID = pg_rpc_get_ulong(in);
	info->state = pg_rpc_get_ulong(in);
	info->flags = pg_rpc_get_ulong(in);
	info->ulDeviceError = pg_rpc_get_ulong(in);
	return !in->failed;
}

void
pg_rpc_add_mechanism_info(pg_rpc_out *out, const CK_MECHANISM_INFO *info)
{
	pg_rpc_add_u64(out, info->ulMinKeySize);
	pg_rpc_add_u64(out, info->ulMaxKeySize);
	pg_rpc_add_u64(out, info->flags);
}

bool
pg_rpc_get_mechanism_info(pg_rpc_in *in, CK_MECHANISM_INFO *info)
{
	info->ulMinKeySize = pg_rpc_get_ulong(in);
	info->ulMaxKeySize = pg_rpc_get_ulong(in);
	info->flags = pg_rpc_get_ulong(in);
	return !in->failed;
}
