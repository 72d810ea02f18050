/*
 * The RPC wire format (see wire.h).
 */
#include "config.h"

#include "wire.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Longest run of reads that block without polling after polls missed. */
#define SPIN_SKIP_MAX 64u
/* A yield that took this long ran something else on the processor. */
#define SPIN_YIELD_SHARED_NS 3000u

/* ---------------------------------------------------------------------------
 * Encoding
 */

void
pg_rpc_out_init(pg_rpc_out *out)
{
	out->data = out->local;
	out->cap = sizeof(out->local);
	out->len = PG_RPC_HEADER;
	out->failed = false;
}

void
pg_rpc_out_clear(pg_rpc_out *out)
{
	pg_memzero(out->data, out->len);
	if (out->data != out->local)
		free(out->data);
	out->data = out->local;
	out->len = 0;
	out->cap = sizeof(out->local);
}

static unsigned char *
reserve(pg_rpc_out *out, size_t n)
{
	unsigned char *grown;
	size_t cap;

	if (out->failed)
		return NULL;
	if (n > PG_RPC_HEADER + PG_RPC_MAX_BODY || out->len > PG_RPC_HEADER + PG_RPC_MAX_BODY - n) {
		out->failed = true;
		return NULL;
	}
	if (out->cap - out->len < n) {
		cap = out->cap * 2;
		while (cap - out->len < n)
			cap *= 2;
		if (out->data == out->local) {
			grown = malloc(cap);
			if (grown != NULL)
				memcpy(grown, out->local, out->len);
		} else {
			grown = realloc(out->data, cap);
		}
		if (grown == NULL) {
			out->failed = true;
			return NULL;
		}
		out->data = grown;
		out->cap = cap;
	}
	out->len += n;
	return out->data + out->len - n;
}

static void
put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void
pg_rpc_add_u8(pg_rpc_out *out, uint8_t v)
{
	unsigned char *p = reserve(out, 1);

	if (p)
		*p = v;
}

void
pg_rpc_add_u32(pg_rpc_out *out, uint32_t v)
{
	unsigned char *p = reserve(out, 4);

	if (p)
		put_le(p, v, 4);
}

void
pg_rpc_add_u64(pg_rpc_out *out, uint64_t v)
{
	unsigned char *p = reserve(out, 8);

	if (p)
		put_le(p, v, 8);
}

void
pg_rpc_add_raw(pg_rpc_out *out, const void *data, size_t len)
{
	unsigned char *p = reserve(out, len);

	if (p && len)
		memcpy(p, data, len);
}

void
pg_rpc_add_bytes(pg_rpc_out *out, const void *data, size_t len)
{
	if (len > PG_RPC_MAX_BODY) {
		out->failed = true;
		return;
	}
	pg_rpc_add_u32(out, (uint32_t)len);
	pg_rpc_add_raw(out, data, len);
}

void
pg_rpc_add_in_bytes(pg_rpc_out *out, const void *data, CK_ULONG len)
{
	if (data == NULL) {
		pg_rpc_add_u8(out, 0);
		pg_rpc_add_u64(out, len);
		return;
	}
	pg_rpc_add_u8(out, 1);
	pg_rpc_add_bytes(out, data, len);
}

unsigned char *
pg_rpc_add_space(pg_rpc_out *out, size_t len)
{
	return reserve(out, len);
}

bool
pg_rpc_out_finish(pg_rpc_out *out, uint32_t id, uint32_t code)
{
	if (out->failed)
		return false;
	put_le(out->data, out->len - PG_RPC_HEADER, 4);
	put_le(out->data + 4, id, 4);
	put_le(out->data + 8, code, 4);
	return true;
}

/* ---------------------------------------------------------------------------
 * Decoding
 */

void
pg_rpc_in_init(pg_rpc_in *in, const void *data, size_t len)
{
	in->data = data;
	in->len = len;
	in->off = 0;
	in->failed = false;
}

static const unsigned char *
take(pg_rpc_in *in, size_t n)
{
	const unsigned char *p;

	if (in->failed || in->len < n || in->off > in->len - n) {
		in->failed = true;
		return NULL;
	}
	p = in->data + in->off;
	in->off += n;
	return p;
}

static uint64_t
get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint8_t
pg_rpc_get_u8(pg_rpc_in *in)
{
	const unsigned char *p = take(in, 1);

	return p ? *p : 0;
}

uint32_t
pg_rpc_get_u32(pg_rpc_in *in)
{
	const unsigned char *p = take(in, 4);

	return p ? (uint32_t)get_le(p, 4) : 0;
}

uint64_t
pg_rpc_get_u64(pg_rpc_in *in)
{
	const unsigned char *p = take(in, 8);

	return p ? get_le(p, 8) : 0;
}

CK_ULONG
pg_rpc_get_ulong(pg_rpc_in *in)
{
	uint64_t v = pg_rpc_get_u64(in);

	/* A 32-bit peer maps ~0 of 64 bits (CK_UNAVAILABLE_INFORMATION) to its own. */
	if (v == UINT64_MAX)
		return (CK_ULONG)-1;
	if ((CK_ULONG)v != v) {
		in->failed = true;
		return 0;
	}
	return (CK_ULONG)v;
}

const unsigned char *
pg_rpc_get_raw(pg_rpc_in *in, size_t n)
{
	return take(in, n);
}

const unsigned char *
pg_rpc_get_bytes(pg_rpc_in *in, size_t *len)
{
	uint32_t n = pg_rpc_get_u32(in);
	const unsigned char *p = take(in, n);

	*len = p ? n : 0;
	return p;
}

bool
pg_rpc_get_in_bytes(pg_rpc_in *in, const unsigned char **data, CK_ULONG *len)
{
	size_t n;

	*data = NULL;
	*len = 0;
	switch (pg_rpc_get_u8(in)) {
	case 0:
		*len = pg_rpc_get_ulong(in);
		break;
	case 1:
		*data = pg_rpc_get_bytes(in, &n);
		*len = n;
		break;
	default:
		in->failed = true;
	}
	return !in->failed;
}

uint32_t
pg_rpc_get_count(pg_rpc_in *in, uint32_t max)
{
	uint32_t n = pg_rpc_get_u32(in);

	if (n > max)
		in->failed = true;
	return in->failed ? 0 : n;
}

bool
pg_rpc_in_done(const pg_rpc_in *in)
{
	return !in->failed && in->off == in->len;
}

/* ---------------------------------------------------------------------------
 * Streams
 */

void
pg_rpc_stream_init(pg_rpc_stream *s, int in_fd, int out_fd)
{
	memset(s, 0, sizeof(*s));
	s->in_fd = in_fd;
	s->out_fd = out_fd;
}

void
pg_rpc_stream_set_spin(pg_rpc_stream *s, unsigned us)
{
	const char *env = getenv("P11GLUE_RPC_SPIN_US");
	char *end;
	unsigned long v;

	if (env != NULL && env[0] != 0) {
		v = strtoul(env, &end, 10);
		if (*end == 0 && v <= 1000000)
			us = (unsigned)v;
	}
	if (us > 1000000)
		us = 1000000;   /* a second at most, and spin_ns cannot overflow */
	s->spin_ns = us * 1000u;
	s->spin_skip = 0;
	s->spin_backoff = 1;
}

void
pg_rpc_stream_clear(pg_rpc_stream *s)
{
	if (s->buf)
		pg_memzero(s->buf, s->cap);
	free(s->buf);
	s->buf = NULL;
	s->start = s->end = s->cap = 0;
}

void
pg_rpc_frame_clear(pg_rpc_frame *f)
{
	if (f->body)
		pg_free_secret(f->body, f->len + 1);
	f->body = NULL;
	f->len = 0;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A poll that found the processor shared, or came to nothing: the next
 * reads block at once, for longer each time. */
static void
spin_back_off(pg_rpc_stream *s)
{
	s->spin_skip = s->spin_backoff;
	if (s->spin_backoff < SPIN_SKIP_MAX)
		s->spin_backoff *= 2;
}

/*
 * Polls the socket for up to s->spin_ns (see pg_rpc_stream_set_spin):
 * what recv() gave (bytes, 0 at EOF, -1 on an error), or -2 when nothing
 * came in time or the processor is shared (the caller then blocks).
 *
 * Between attempts the thread yields. When nothing else waits for its
 * processor that returns at once, and polling on is what saves a wake-up
 * (the peer runs on another processor). When the yield let something
 * else run (the peer on this processor, or any other program), polling
 * gains nothing over blocking and can lose: a thread that yielded is not
 * woken by the peer's write, so another program may keep the processor
 * for its whole time slice. So a yield that took long ends the polling,
 * and the next reads block, like a miss.
 */
static ssize_t
spin_read(pg_rpc_stream *s)
{
	uint64_t start = 0, before, after;
	bool shared = false;
	ssize_t got;

	for (;;) {
		got = recv(s->in_fd, s->buf + s->end, s->cap - s->end, MSG_DONTWAIT);
		if (got >= 0) {
			if (shared)
				spin_back_off(s);
			else
				s->spin_backoff = 1;
			return got;
		}
		if (errno == ENOTSOCK) {
			s->spin_ns = 0;   /* a pipe: reads block */
			return -2;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (shared) {
			spin_back_off(s);
			return -2;
		}
		before = now_ns();
		if (start == 0) {
			start = before;
		} else if (before - start >= s->spin_ns) {
			spin_back_off(s);
			return -2;
		}
		sched_yield();
		after = now_ns();
		shared = after - before >= SPIN_YIELD_SHARED_NS;
	}
}

/* Makes at least n bytes available in s->buf; 1, 0 (EOF) or -1. */
static int
fill(pg_rpc_stream *s, size_t n)
{
	ssize_t got;

	if (s->end - s->start >= n)
		return 1;
	if (s->cap - s->start < n) {
		/* Move what is buffered to the front, grow when still short. */
		if (s->end > s->start)
			memmove(s->buf, s->buf + s->start, s->end - s->start);
		s->end -= s->start;
		s->start = 0;
		if (s->cap < n) {
			size_t cap = n < 16384 ? 16384 : n;
			unsigned char *grown = malloc(cap);
			if (grown == NULL)
				return -1;
			if (s->buf) {
				memcpy(grown, s->buf, s->end);
				pg_memzero(s->buf, s->cap);
				free(s->buf);
			}
			s->buf = grown;
			s->cap = cap;
		}
	}
	while (s->end - s->start < n) {
		got = -2;
		if (s->spin_ns != 0 && s->spin_skip == 0)
			got = spin_read(s);
		else if (s->spin_skip != 0)
			s->spin_skip--;
		if (got == -2)
			got = read(s->in_fd, s->buf + s->end, s->cap - s->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			return 0;
		s->end += (size_t)got;
	}
	return 1;
}

static int
read_frame(pg_rpc_stream *s, pg_rpc_frame *f)
{
	const unsigned char *h;
	uint32_t len;
	int rv;

	f->body = NULL;
	f->len = 0;
	rv = fill(s, PG_RPC_HEADER);
	if (rv <= 0)
		return rv;   /* EOF or error */
	h = s->buf + s->start;
	len = (uint32_t)get_le(h, 4);
	f->id = (uint32_t)get_le(h + 4, 4);
	f->code = (uint32_t)get_le(h + 8, 4);
	if (len > PG_RPC_MAX_BODY)
		return -2;
	rv = fill(s, PG_RPC_HEADER + (size_t)len);
	if (rv <= 0)
		return rv == 0 ? -1 : rv;   /* EOF inside a frame is an error */
	f->body = malloc((size_t)len + 1);
	if (f->body == NULL)
		return -1;
	memcpy(f->body, s->buf + s->start + PG_RPC_HEADER, len);
	f->body[len] = 0;
	f->len = len;
	pg_memzero(s->buf + s->start, PG_RPC_HEADER + (size_t)len);
	s->start += PG_RPC_HEADER + (size_t)len;
	if (s->start == s->end)
		s->start = s->end = 0;
	return 1;
}

int
pg_rpc_stream_read(pg_rpc_stream *s, pg_rpc_frame *f)
{
	return read_frame(s, f);
}

bool
pg_rpc_stream_write(pg_rpc_stream *s, const pg_rpc_out *out)
{
	size_t done = 0;
	ssize_t n;
	bool sock = true;

	while (done < out->len) {
		/* MSG_NOSIGNAL: a peer that went away is an error, not SIGPIPE. */
		if (sock) {
			n = send(s->out_fd, out->data + done, out->len - done, MSG_NOSIGNAL);
			if (n < 0 && errno == ENOTSOCK) {
				sock = false;
				continue;
			}
		} else {
			n = write(s->out_fd, out->data + done, out->len - done);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

bool
pg_rpc_send_hello(pg_rpc_stream *s, uint32_t version)
{
	pg_rpc_out out;
	bool ok;

	pg_rpc_out_init(&out);
	pg_rpc_add_raw(&out, PG_RPC_MAGIC, PG_RPC_MAGIC_LEN);
	pg_rpc_add_u32(&out, version);
	ok = pg_rpc_out_finish(&out, 0, PG_RPC_HELLO) && pg_rpc_stream_write(s, &out);
	pg_rpc_out_clear(&out);
	return ok;
}

bool
pg_rpc_parse_hello(const pg_rpc_frame *f, uint32_t *version)
{
	pg_rpc_in in;
	const unsigned char *magic;

	if (f->code != PG_RPC_HELLO)
		return false;
	pg_rpc_in_init(&in, f->body, f->len);
	magic = pg_rpc_get_raw(&in, PG_RPC_MAGIC_LEN);
	*version = pg_rpc_get_u32(&in);
	/* Later versions may append to the hello; version 1 reads its part. */
	return !in.failed && memcmp(magic, PG_RPC_MAGIC, PG_RPC_MAGIC_LEN) == 0 && *version >= 1;
}
