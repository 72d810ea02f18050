/*
 * The command line's side of the control calls (control.h): one
 * connection per call, the hello, one request, its reply.
 */
#include "config.h"

#include "control.h"
#include "address.h"
#include "marshal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A status or lock answer comes at once; a lock may wait for a PIN being
 * checked (a KDF: well under a second). */
#define ANSWER_TIMEOUT_MS 30000

char *
pg_service_default_socket(void)
{
	const char *why;
	char *path = pg_rpc_socket_path(PG_RPC_SERVICE_NAME, &why);

	if (path == NULL)
		pg_message("no socket directory for the session service: $XDG_RUNTIME_DIR/p11glue "
		           "(or /tmp/p11glue-UID) %s", why);
	return path;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool
read_frame(pg_rpc_stream *s, int fd, pg_rpc_frame *f)
{
	struct pollfd p = { fd, POLLIN, 0 };

	memset(f, 0, sizeof(*f));
	if (s->start == s->end && poll(&p, 1, ANSWER_TIMEOUT_MS) != 1)
		return false;
	return pg_rpc_stream_read(s, f) == 1;
}

/*
 * Sends request (code) and leaves the reply in *reply (clear it).
 * Returns PG_SERVICE_*.
 */
static int
call(const char *path, pg_rpc_out *request, uint32_t code, pg_rpc_frame *reply)
{
	pg_rpc_stream s;
	pg_rpc_frame f;
	uint32_t version;
	int fd = connect_to(path), rv = PG_SERVICE_BROKEN;

	memset(reply, 0, sizeof(*reply));
	if (fd < 0)
		return PG_SERVICE_NOT_RUNNING;
	pg_rpc_stream_init(&s, fd, fd);
	/* Another user's service (or server) hangs up on us at once. */
	if (!pg_rpc_send_hello(&s, PG_RPC_VERSION) || !read_frame(&s, fd, &f)) {
		rv = PG_SERVICE_REFUSED;
		goto out;
	}
	if (!pg_rpc_parse_hello(&f, &version)) {
		pg_rpc_frame_clear(&f);
		goto out;
	}
	pg_rpc_frame_clear(&f);
	if (!pg_rpc_out_finish(request, 1, code) || !pg_rpc_stream_write(&s, request) ||
	    !read_frame(&s, fd, &f))
		goto out;
	/* A fork-per-connection server knows no control call. */
	if (f.code != code) {
		pg_rpc_frame_clear(&f);
		rv = PG_SERVICE_REFUSED;
		goto out;
	}
	*reply = f;
	rv = PG_SERVICE_OK;
out:
	pg_rpc_stream_clear(&s);
	close(fd);
	return rv;
}

static bool
get_token(pg_rpc_in *in, pg_service_token *t)
{
	t->slot = pg_rpc_get_ulong(in);
	if (!pg_rpc_get_token_info(in, &t->info))
		return false;
	t->unlocked = pg_rpc_get_u8(in) != 0;
	t->since = (int64_t)pg_rpc_get_u64(in);
	t->idle_left = pg_rpc_get_u64(in);
	return !in->failed;
}

int
pg_service_status_get(const char *socket_path, pg_service_status *st)
{
	pg_rpc_frame f;
	pg_rpc_out out;
	pg_rpc_in in;
	const unsigned char *name;
	size_t len = 0;
	uint32_t n;
	int rv;

	memset(st, 0, sizeof(*st));
	pg_rpc_out_init(&out);
	rv = call(socket_path, &out, PG_SERVICE_STATUS, &f);
	pg_rpc_out_clear(&out);
	if (rv != PG_SERVICE_OK)
		return rv;
	pg_rpc_in_init(&in, f.body, f.len);
	rv = PG_SERVICE_BROKEN;
	if (pg_rpc_get_u64(&in) != CKR_OK)
		goto out;
	st->pid = (int64_t)pg_rpc_get_u64(&in);
	st->started = (int64_t)pg_rpc_get_u64(&in);
	st->idle_lock = pg_rpc_get_u64(&in);
	name = pg_rpc_get_bytes(&in, &len);
	if (name != NULL && len < sizeof(st->pinentry))
		memcpy(st->pinentry, name, len);
	n = pg_rpc_get_count(&in, PG_RPC_MAX_COUNT);
	if (in.failed || (st->tokens = calloc(n ? n : 1, sizeof(*st->tokens))) == NULL)
		goto out;
	for (st->n = 0; st->n < n; st->n++) {
		if (!get_token(&in, &st->tokens[st->n]))
			goto out;
	}
	if (pg_rpc_in_done(&in))
		rv = PG_SERVICE_OK;
out:
	pg_rpc_frame_clear(&f);
	if (rv != PG_SERVICE_OK)
		pg_service_status_clear(st);
	return rv;
}

void
pg_service_status_clear(pg_service_status *st)
{
	free(st->tokens);
	memset(st, 0, sizeof(*st));
}

int
pg_service_lock(const char *socket_path, bool all, CK_SLOT_ID slot, CK_RV *ckr, unsigned *locked)
{
	pg_rpc_frame f;
	pg_rpc_out out;
	pg_rpc_in in;
	int rv;

	pg_rpc_out_init(&out);
	pg_rpc_add_u8(&out, all);
	pg_rpc_add_u64(&out, slot);
	rv = call(socket_path, &out, PG_SERVICE_LOCK, &f);
	pg_rpc_out_clear(&out);
	if (rv != PG_SERVICE_OK)
		return rv;
	pg_rpc_in_init(&in, f.body, f.len);
	*ckr = pg_rpc_get_u64(&in);
	*locked = pg_rpc_get_u32(&in);
	rv = pg_rpc_in_done(&in) ? PG_SERVICE_OK : PG_SERVICE_BROKEN;
	pg_rpc_frame_clear(&f);
	return rv;
}
