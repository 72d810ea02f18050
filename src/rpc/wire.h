/*
 * The p11glue RPC wire format: framing, a bounds-checked encoder and
 * decoder, the handshake.
 *
 * A frame is
 *     u32 body length | u32 request id | u32 code | body
 * with every integer little-endian. A request's code is the call's index
 * in src/common/pkcs11-calls.h (C_Initialize is 0); its reply carries the
 * same id and code, and a body starting with the u64 CK_RV. CK_ULONG
 * values always travel as u64, so 32- and 64-bit peers understand each
 * other. Bodies over PG_RPC_MAX_BODY are refused by both sides.
 *
 * Handshake: the client's first frame is PG_RPC_HELLO with the magic and
 * the highest protocol version it speaks; the server answers with the
 * magic and min(client's, its own).
 *
 * Version 2 adds one flag to a request's code, PG_RPC_LONE: the client had
 * no other call in flight on the connection when it sent this one, so the
 * server may execute it on the thread that read it instead of passing the
 * reading on first. Replies never carry it; under version 1 a code with
 * it is no call (a malformed request).
 *
 * Decoders never read past the input: every read checks
 * `len < n || off > len - n`, and a failure sticks to the reader, so a
 * run of reads is checked once at the end. Byte strings are returned as
 * views into the frame, valid while the frame is.
 */
#ifndef PG_RPC_WIRE_H
#define PG_RPC_WIRE_H

#include "common.h"

#include <p11glue/pkcs11.h>

#include <pthread.h>

#define PG_RPC_VERSION 2u
#define PG_RPC_MAGIC "p11glue\0"
#define PG_RPC_MAGIC_LEN 8
#define PG_RPC_HEADER 12u
/* Largest body either side accepts (and largest output buffer a server
 * allocates for a caller). */
#define PG_RPC_MAX_BODY (16u * 1024 * 1024)
/* Largest count of attributes, slots, mechanisms or handles in one call. */
#define PG_RPC_MAX_COUNT 65536u

/* Codes outside the call range. */
#define PG_RPC_HELLO 0xfffffff0u
#define PG_RPC_ERROR 0xffffffffu   /* malformed request: the server closes */
/* Version 2: a request's code | PG_RPC_LONE (see above). */
#define PG_RPC_LONE 0x00010000u

/* ---------------------------------------------------------------------------
 * Encoding
 */

typedef struct {
	unsigned char *data;
	size_t len;
	size_t cap;
	bool failed;        /* out of memory or over PG_RPC_MAX_BODY */
	unsigned char local[256];
} pg_rpc_out;

/* Starts a frame (room for the header is kept). */
void pg_rpc_out_init(pg_rpc_out *out);
/* Frees the frame (wiping it: it may hold PINs). */
void pg_rpc_out_clear(pg_rpc_out *out);
void pg_rpc_add_u8(pg_rpc_out *out, uint8_t v);
void pg_rpc_add_u32(pg_rpc_out *out, uint32_t v);
void pg_rpc_add_u64(pg_rpc_out *out, uint64_t v);
/* len raw bytes (no length prefix). */
void pg_rpc_add_raw(pg_rpc_out *out, const void *data, size_t len);
/* A byte string: u32 length, then the bytes. */
void pg_rpc_add_bytes(pg_rpc_out *out, const void *data, size_t len);
/*
 * An input buffer as a PKCS#11 call gets it (pointer + CK_ULONG length):
 * u8 1, u32 length, bytes; or for a NULL pointer u8 0 and the u64 length
 * the caller gave.
 */
void pg_rpc_add_in_bytes(pg_rpc_out *out, const void *data, CK_ULONG len);
/* Room for len bytes at the end, to be filled by the caller; NULL on failure. */
unsigned char *pg_rpc_add_space(pg_rpc_out *out, size_t len);
/* Writes the header; false when the frame failed. */
bool pg_rpc_out_finish(pg_rpc_out *out, uint32_t id, uint32_t code) PG_MUST_CHECK;

/* ---------------------------------------------------------------------------
 * Decoding
 */

typedef struct {
	const unsigned char *data;
	size_t len;
	size_t off;
	bool failed;
} pg_rpc_in;

void pg_rpc_in_init(pg_rpc_in *in, const void *data, size_t len);
uint8_t pg_rpc_get_u8(pg_rpc_in *in);
uint32_t pg_rpc_get_u32(pg_rpc_in *in);
uint64_t pg_rpc_get_u64(pg_rpc_in *in);
/* A u64 that must fit a CK_ULONG (fails otherwise). */
CK_ULONG pg_rpc_get_ulong(pg_rpc_in *in);
/* A view of n raw bytes; NULL (and failed) when fewer remain. */
const unsigned char *pg_rpc_get_raw(pg_rpc_in *in, size_t n);
/* A byte string written by pg_rpc_add_bytes. */
const unsigned char *pg_rpc_get_bytes(pg_rpc_in *in, size_t *len);
/*
 * An input buffer written by pg_rpc_add_in_bytes: *data is a view (NULL
 * for a NULL pointer) and *len the length to pass on.
 */
bool pg_rpc_get_in_bytes(pg_rpc_in *in, const unsigned char **data, CK_ULONG *len);
/* A u32 count no larger than max. */
uint32_t pg_rpc_get_count(pg_rpc_in *in, uint32_t max);
/* True when every read succeeded and nothing is left over. */
bool pg_rpc_in_done(const pg_rpc_in *in);

/* ---------------------------------------------------------------------------
 * Streams: frames over a file descriptor (a socket, or a pipe pair)
 */

typedef struct {
	int in_fd;
	int out_fd;
	unsigned char *buf;   /* read-ahead */
	size_t start, end, cap;
	unsigned spin_ns;     /* polling before a read blocks (0: none) */
	unsigned spin_skip;   /* reads left that block without polling */
	unsigned spin_backoff;
} pg_rpc_stream;

void pg_rpc_stream_init(pg_rpc_stream *s, int in_fd, int out_fd);
void pg_rpc_stream_clear(pg_rpc_stream *s);

/* Default polling before a blocking read (see pg_rpc_stream_set_spin). */
#define PG_RPC_SPIN_US 50u

/*
 * Lets reads of a socket poll for up to us microseconds (non-blocking
 * reads, yielding the processor between them) before they block, so that
 * an answer due within that time is taken without the peer having to
 * wake this thread, and without this thread's processor going idle in
 * between (waking a thread whose processor sleeps costs tens of
 * microseconds on virtual machines). Polling helps only when the peer
 * runs on another processor: a yield that let something else run on this
 * one (the peer itself, or another program) ends it, as does a poll that
 * came to nothing, and the next reads then block at once, for longer
 * after each such poll (up to 64 reads), so that a peer on the same
 * processor, a busy processor and an idle peer cost little. 0 turns
 * polling off (the default). $P11GLUE_RPC_SPIN_US, when set, overrides
 * us (0 turns it off).
 */
void pg_rpc_stream_set_spin(pg_rpc_stream *s, unsigned us);

typedef struct {
	uint32_t id;
	uint32_t code;
	unsigned char *body;  /* malloc'd, NUL-terminated; free with pg_rpc_frame_clear */
	size_t len;
} pg_rpc_frame;

void pg_rpc_frame_clear(pg_rpc_frame *f);

/*
 * Reads one frame (blocking). Returns 1 on success, 0 at end of input,
 * -1 on an I/O error, -2 when the header announces a body over the limit.
 * One caller at a time.
 */
int pg_rpc_stream_read(pg_rpc_stream *s, pg_rpc_frame *f) PG_MUST_CHECK;


/* Writes a finished frame in full; false on error. One caller at a time. */
bool pg_rpc_stream_write(pg_rpc_stream *s, const pg_rpc_out *out) PG_MUST_CHECK;

/* Sends a hello (client: version = its maximum; server: the chosen one). */
bool pg_rpc_send_hello(pg_rpc_stream *s, uint32_t version) PG_MUST_CHECK;
/* Checks a hello frame: the magic, and a version >= 1; *version gets it. */
bool pg_rpc_parse_hello(const pg_rpc_frame *f, uint32_t *version) PG_MUST_CHECK;

#endif /* PG_RPC_WIRE_H */
