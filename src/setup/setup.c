/*
 * The file work of `p11glue setup` targets (setup.h).
 *
 * A target's lines in a file that is otherwise the user's sit between
 * two comment lines that name the target:
 *
 *     # >>> p11glue setup --gnupg: p11glue's lines, removed by --undo
 *     scdaemon-program /usr/bin/gnupg-pkcs11-scd
 *     # <<< p11glue setup --gnupg
 *
 * Everything between them is p11glue's (the begin line says so); every
 * other line is the user's and is never changed.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CONF (1024 * 1024)

void
pg_setup_plan_init(pg_setup_plan *plan, const char *target)
{
	memset(plan, 0, sizeof(*plan));
	plan->target = target;
	pg_buf_init(&plan->problems);
	pg_buf_init(&plan->notes);
}

void
pg_setup_plan_clear(pg_setup_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->edits[i].path);
		free(plan->edits[i].new_text);
		pg_buf_clear(&plan->edits[i].added);
		pg_buf_clear(&plan->edits[i].removed);
	}
	pg_buf_clear(&plan->problems);
	pg_buf_clear(&plan->notes);
	memset(plan, 0, sizeof(*plan));
}

static void
add_line(pg_buf *buf, const char *fmt, va_list ap)
{
	pg_buf_vprintf(buf, fmt, ap);
	pg_buf_add_byte(buf, '\n');
}

void
pg_setup_problem(pg_setup_plan *plan, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&plan->problems, fmt, ap);
	va_end(ap);
}

void
pg_setup_note(pg_setup_plan *plan, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&plan->notes, fmt, ap);
	va_end(ap);
}

bool
pg_setup_status_read(pg_setup_status *status, const char *target, const char *path,
                     char **text, bool *exists)
{
	pg_setup_plan scratch;
	mode_t mode;
	bool ok;

	*text = NULL;
	*exists = false;
	if (path == NULL) {
		pg_setup_fact(status, "problem", "no home");
		return false;
	}
	pg_setup_plan_init(&scratch, target);
	ok = pg_setup_read(&scratch, path, text, exists, &mode);
	pg_setup_fact(status, ok ? "file" : "problem",
	              ok ? path : (const char *)scratch.problems.data);
	pg_setup_plan_clear(&scratch);
	return ok;
}

bool
pg_setup_plan_start(const pg_setup_env *env, bool undo, pg_setup_plan *plan, const char *path,
                    char **text, bool *exists, mode_t *mode)
{
	if (path == NULL) {
		pg_setup_problem(plan, "no home directory: set HOME");
		return false;
	}
	if (!pg_setup_read(plan, path, text, exists, mode))
		return false;
	if (!*exists && env->system)
		*mode = 0644;
	if (!undo)
		return true;
	if (!pg_setup_plan_unblock(plan, path, *text, *mode))
		pg_setup_problem(plan, "out of memory");
	return false;
}

bool
pg_setup_split_line(char *line, bool equals, char **name, char **value)
{
	char *end;

	line += strspn(line, " \t");
	if (*line == 0 || *line == '#')
		return false;
	*name = line;
	end = line + strcspn(line, equals ? " \t=" : " \t");
	*value = end + strspn(end, " \t");
	if (equals && **value == '=')
		*value += 1 + strspn(*value + 1, " \t");
	*end = 0;
	end = *value + strlen(*value);
	while (end > *value && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = 0;
	return true;
}

bool
pg_setup_read(pg_setup_plan *plan, const char *path, char **text, bool *exists, mode_t *mode)
{
	struct stat st;
	pg_buf buf;
	char chunk[4096];
	ssize_t n;
	int fd;

	*text = NULL;
	*exists = false;
	*mode = 0600;
	/* Non-blocking: a FIFO there must not hang the command. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return true;
	if (fd < 0 && errno == ELOOP) {
		/* Renaming over a link would replace it: a dotfile manager's
		 * link is the user's to follow. */
		pg_setup_problem(plan, "%s is a symbolic link, which p11glue does not replace: make "
		                 "it a regular file, or put the lines in the file it points to "
		                 "yourself", path);
		return false;
	}
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_CONF) {
		pg_setup_problem(plan, "%s: %s", path,
		                 fd < 0 ? strerror(errno) : "not a regular file of at most 1 MiB");
		if (fd >= 0)
			close(fd);
		return false;
	}
	pg_buf_init(&buf);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0)
			pg_buf_add(&buf, chunk, (size_t)n);
	}
	close(fd);
	if (n < 0 || memchr(buf.data ? (char *)buf.data : "", 0, buf.len) != NULL) {
		pg_setup_problem(plan, "%s: %s", path, n < 0 ? strerror(errno) : "not a text file");
		pg_buf_clear(&buf);
		return false;
	}
	pg_buf_add_str(&buf, "");
	*text = pg_buf_steal(&buf, NULL);
	*exists = true;
	*mode = st.st_mode & 07777;
	if (*text == NULL)
		pg_setup_problem(plan, "out of memory");
	return *text != NULL;
}

/* ---------------------------------------------------------------------------
 * Marked blocks
 */

static void
markers(const char *target, char *begin, char *end, size_t size)
{
	snprintf(begin, size, "# >>> p11glue setup --%s: p11glue's lines, removed by --undo", target);
	snprintf(end, size, "# <<< p11glue setup --%s", target);
}

/* The line at text + off: its length without the newline. */
static size_t
line_len(const char *text, size_t off)
{
	const char *nl = strchr(text + off, '\n');

	return nl ? (size_t)(nl - text) - off : strlen(text + off);
}

static size_t
next_line(const char *text, size_t off)
{
	size_t len = line_len(text, off);

	return text[off + len] == '\n' ? off + len + 1 : off + len;
}

/* True when the line at off starts with prefix (the marker, maybe
 * followed by more words of another version's begin line). */
static bool
line_is(const char *text, size_t off, const char *marker, bool prefix)
{
	size_t len = line_len(text, off), mlen = strlen(marker);

	/* An editor may have left a CR (CRLF) or blanks at the end. */
	while (len > 0 && strchr(" \t\r", text[off + len - 1]) != NULL)
		len--;
	if (prefix && len >= mlen)
		return memcmp(text + off, marker, mlen) == 0;
	return len == mlen && memcmp(text + off, marker, mlen) == 0;
}

bool
pg_setup_block_find(const char *text, const char *target, size_t *begin, size_t *end)
{
	char bm[160], em[160];
	char head[160];
	size_t off = 0;
	bool in = false;

	markers(target, bm, em, sizeof(bm));
	/* The begin marker up to its colon identifies it. */
	snprintf(head, sizeof(head), "# >>> p11glue setup --%s:", target);
	for (; text[off]; off = next_line(text, off)) {
		if (!in && line_is(text, off, head, true)) {
			*begin = off;
			in = true;
		} else if (in && line_is(text, off, em, false)) {
			*end = next_line(text, off);
			return true;
		}
	}
	if (in)
		*end = off;
	return false;
}

int
pg_setup_each_user_line(const char *text, const char *target,
                        int (*func)(const char *line, size_t number, void *data), void *data)
{
	size_t begin = 0, end = 0, number = 0, len;
	bool block = text && target &&
	             (pg_setup_block_find(text, target, &begin, &end) || end > begin);
	char *line;
	int r = 0;

	for (size_t off = 0; text && text[off] && r == 0; off = next_line(text, off)) {
		number++;
		if (block && off >= begin && off < end)
			continue;
		len = line_len(text, off);
		line = (char *)pg_memdup0(text + off, len);
		if (line == NULL)
			return -1;
		r = func(line, number, data);
		free(line);
	}
	return r;
}

static pg_setup_edit *
new_edit(pg_setup_plan *plan, const char *path, bool exists, mode_t mode)
{
	pg_setup_edit *e;

	if (plan->n == PG_SETUP_MAX_EDITS || (path = strdup(path)) == NULL)
		return NULL;
	e = &plan->edits[plan->n++];
	memset(e, 0, sizeof(*e));
	e->path = (char *)path;
	e->existed = exists;
	e->mode = mode;
	pg_buf_init(&e->added);
	pg_buf_init(&e->removed);
	return e;
}

/* Appends the lines of text[from, to) to out. */
static void
copy_lines(pg_buf *out, const char *text, size_t from, size_t to)
{
	pg_buf_add(out, text + from, to - from);
}

bool
pg_setup_plan_block(pg_setup_plan *plan, const char *path, const char *text, bool exists,
                    mode_t mode, const char *const *lines, size_t n_lines)
{
	char bm[160], em[160];
	size_t begin = 0, end = 0, len = text ? strlen(text) : 0;
	bool found = text && pg_setup_block_find(text, plan->target, &begin, &end);
	pg_buf block, out;
	pg_setup_edit *e;

	if (text && !found && end > begin) {
		pg_setup_problem(plan, "%s: p11glue's block has no end line; remove its lines by hand",
		                 path);
		return true;
	}
	markers(plan->target, bm, em, sizeof(bm));
	pg_buf_init(&block);
	pg_buf_printf(&block, "%s\n", bm);
	for (size_t i = 0; i < n_lines; i++)
		pg_buf_printf(&block, "%s\n", lines[i]);
	pg_buf_printf(&block, "%s\n", em);
	if (found && end - begin == block.len && memcmp(text + begin, block.data, block.len) == 0) {
		pg_buf_clear(&block);
		return true;
	}
	e = new_edit(plan, path, exists, mode);
	if (e == NULL || block.failed) {
		pg_buf_clear(&block);
		return false;
	}
	pg_buf_init(&out);
	if (found) {
		copy_lines(&out, text, 0, begin);
		pg_buf_add(&out, block.data, block.len);
		copy_lines(&out, text, end, len);
		copy_lines(&e->removed, text, begin, end);
		if (end > begin && text[end - 1] != '\n')
			pg_buf_add_byte(&e->removed, '\n');
	} else {
		copy_lines(&out, text ? text : "", 0, len);
		if (len > 0 && text[len - 1] != '\n')
			pg_buf_add_byte(&out, '\n');
		pg_buf_add(&out, block.data, block.len);
	}
	pg_buf_add(&e->added, block.data, block.len);
	pg_buf_clear(&block);
	e->new_text = pg_buf_steal(&out, NULL);
	return e->new_text != NULL;
}

/* True when text holds nothing but blank lines. */
static bool
blank(const char *text)
{
	return text[strspn(text, " \t\r\n")] == 0;
}

bool
pg_setup_plan_unblock(pg_setup_plan *plan, const char *path, const char *text, mode_t mode)
{
	size_t begin = 0, end = 0;
	pg_setup_edit *e;
	pg_buf out;

	if (text == NULL)
		return true;
	if (!pg_setup_block_find(text, plan->target, &begin, &end)) {
		if (end > begin)
			pg_setup_problem(plan, "%s: p11glue's block has no end line; remove its lines "
			                 "by hand", path);
		return true;
	}
	e = new_edit(plan, path, true, mode);
	if (e == NULL)
		return false;
	copy_lines(&e->removed, text, begin, end);
	if (end > begin && text[end - 1] != '\n')
		pg_buf_add_byte(&e->removed, '\n');
	pg_buf_init(&out);
	copy_lines(&out, text, 0, begin);
	copy_lines(&out, text, end, strlen(text));
	pg_buf_add_str(&out, "");
	if (!out.failed && blank((const char *)out.data)) {
		pg_buf_clear(&out);
		return !e->removed.failed;
	}
	e->new_text = pg_buf_steal(&out, NULL);
	return e->new_text != NULL && !e->removed.failed;
}

/* ---------------------------------------------------------------------------
 * Writing
 */

/*
 * Run as root on a user's files (sudo -E, su without -), what p11glue
 * makes is given to the owner of the directory it is made in, so that
 * the user's programs can still read it; elsewhere it stays root's.
 */
static bool
owner_of_dir(const char *path, uid_t *uid, gid_t *gid)
{
	char *dir = strdup(path), *slash;
	struct stat st;
	bool ok;

	if (dir == NULL)
		return false;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash != NULL)
		*slash = 0;
	ok = stat(slash ? dir : ".", &st) == 0;
	free(dir);
	if (ok) {
		*uid = st.st_uid;
		*gid = st.st_gid;
	}
	return ok;
}

/* Creates the directories a file goes in when they are missing: 0755
 * for a file others may read (a system file), else 0700, whatever the
 * umask. */
static bool
make_parent(const char *path, mode_t file_mode)
{
	char *dir = strdup(path), *slash, *p;
	mode_t mode = (file_mode & 0044) ? 0755 : 0700;
	bool ok = true, last = false;
	uid_t uid;
	gid_t gid;

	if (dir == NULL)
		return false;
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir) {
		free(dir);
		return true;
	}
	*slash = 0;
	/* Each prefix ending at a slash, then the whole directory. */
	for (p = dir + 1; ok && !last; p++) {
		if (*p != '/' && *p != 0)
			continue;
		last = *p == 0;
		*p = 0;
		if (mkdir(dir, mode) == 0) {
			ok = chmod(dir, mode) == 0;
			if (ok && geteuid() == 0 && owner_of_dir(dir, &uid, &gid) && uid != 0)
				ok = chown(dir, uid, gid) == 0;
		} else if (errno != EEXIST) {
			ok = false;
		}
		if (!ok)
			pg_message("%s: %s", dir, strerror(errno));
		if (!last)
			*p = '/';
	}
	free(dir);
	return ok;
}

/* A name beside path for a file of ours: path.p11glue-WHAT-XXXXXX. */
static char *
beside(const char *path, const char *what)
{
	size_t len = strlen(path) + strlen(what) + sizeof(".p11glue--XXXXXX");
	char *name = malloc(len);

	if (name != NULL)
		snprintf(name, len, "%s.p11glue-%s-XXXXXX", path, what);
	return name;
}

/* A file's new text, written to a temporary file beside it with its mode
 * and owner (an existing file's; a new one gets its directory's owner
 * when root makes it). NULL after a message. */
static char *
write_temporary(const char *path, const char *text, mode_t mode)
{
	char *tmp = beside(path, "new");
	struct stat st;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd = -1;
	bool ok;

	if (tmp == NULL || !make_parent(path, mode) || (fd = mkstemp(tmp)) < 0) {
		pg_message("%s: %s", path, strerror(errno));
		free(tmp);
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		uid = st.st_uid;
		gid = st.st_gid;
	} else if (geteuid() == 0) {
		owner_of_dir(path, &uid, &gid);
	}
	ok = fchmod(fd, mode) == 0 &&
	     ((uid == geteuid() && gid == getegid()) || fchown(fd, uid, gid) == 0) &&
	     pg_write_all(fd, text, strlen(text)) && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok) {
		pg_message("%s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return NULL;
	}
	return tmp;
}

/*
 * Writes every edit or none: first each new text to a temporary file
 * beside its file (and a hard link keeping each existing file), then the
 * renames and removals; when one of those fails, the ones made are
 * undone from the kept files.
 */
bool
pg_setup_apply_edits(const pg_setup_env *env, const pg_setup_plan *plan)
{
	char *tmp[PG_SETUP_MAX_EDITS] = { NULL }, *old[PG_SETUP_MAX_EDITS] = { NULL };
	size_t i, done = 0;
	bool ok = true;
	int fd;

	(void)env;
	for (i = 0; ok && i < plan->n; i++) {
		const pg_setup_edit *e = &plan->edits[i];
		if (e->new_text != NULL)
			ok = (tmp[i] = write_temporary(e->path, e->new_text, e->mode)) != NULL;
		if (ok && e->existed) {
			/* A second name for the file as it is, for undoing. */
			old[i] = beside(e->path, "old");
			fd = old[i] != NULL ? mkstemp(old[i]) : -1;
			ok = fd >= 0 && close(fd) == 0 && unlink(old[i]) == 0 &&
			     link(e->path, old[i]) == 0;
			if (!ok) {
				pg_message("%s: %s", e->path, strerror(errno));
				free(old[i]);
				old[i] = NULL;
			}
		}
	}
	for (i = 0; ok && i < plan->n; i++) {
		const pg_setup_edit *e = &plan->edits[i];
		ok = tmp[i] != NULL ? rename(tmp[i], e->path) == 0
		                    : unlink(e->path) == 0 || errno == ENOENT;
		if (ok)
			done++;
		else
			pg_message("%s: %s; nothing of this target is changed", e->path,
			              strerror(errno));
	}
	/* Undoing what was done, newest first. */
	while (!ok && done-- > 0) {
		const pg_setup_edit *e = &plan->edits[done];
		if (old[done] != NULL ? rename(old[done], e->path) != 0 : unlink(e->path) != 0)
			pg_message("%s: could not be restored: %s", e->path, strerror(errno));
	}
	for (i = 0; i < plan->n; i++) {
		if (tmp[i] != NULL)
			unlink(tmp[i]);
		if (old[i] != NULL)
			unlink(old[i]);
		free(tmp[i]);
		free(old[i]);
	}
	return ok;
}

/* ---------------------------------------------------------------------------
 * Status and defaults
 */

void
pg_setup_fact(pg_setup_status *status, const char *key, const char *value)
{
	if (value == NULL || status->n == PG_SETUP_MAX_FACTS)
		return;
	status->keys[status->n] = key;
	status->values[status->n] = strdup(value);
	if (status->values[status->n] != NULL)
		status->n++;
}

void
pg_setup_status_clear(pg_setup_status *status)
{
	for (size_t i = 0; i < status->n; i++)
		free(status->values[i]);
	memset(status, 0, sizeof(*status));
}

char *
pg_setup_default_module(const pg_setup_env *env, bool proxy)
{
	return proxy ? pg_setup_module_file("proxy", "p11glue-proxy.so")
	       : env->direct ? pg_setup_module_file("store", "p11glue-store.so")
	                     : pg_setup_module_file("client", "p11glue-client.so");
}

char *
pg_setup_module_file(const char *dir, const char *file)
{
	char rel[128], *path, *real;

	snprintf(rel, sizeof(rel), "%s/%s", dir, file);
	path = pg_build_tree_file(rel);
	if (path != NULL) {
		real = realpath(path, NULL);
		free(path);
		return real;
	}
	return pg_setup_join(P11GLUE_MODULE_DIR, file);
}

char *
pg_setup_chosen_module(const pg_setup_env *env, pg_setup_plan *plan, bool proxy_default)
{
	char *module;

	if (env->module == NULL) {
		module = pg_setup_default_module(env, env->proxy || proxy_default);
		if (module == NULL)
			pg_setup_problem(plan, "out of memory");
		return module;
	}
	module = realpath(env->module, NULL);
	if (module == NULL)
		pg_setup_problem(plan, "--module %s: no such file", env->module);
	return module;
}

char *
pg_setup_join(const char *dir, const char *name)
{
	char *path;

	return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : path;
}

char *
pg_setup_home(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if ((home == NULL || home[0] == 0) && (pw = getpwuid(getuid())) != NULL)
		home = pw->pw_dir;
	return home != NULL && home[0] != 0 ? strdup(home) : NULL;
}

char *
pg_setup_path(const pg_setup_env *env, const char *system_file, const char *home_relative)
{
	char *home, *path;

	if (env->system)
		return strdup(system_file);
	home = pg_setup_home();
	path = home ? pg_setup_join(home, home_relative) : NULL;
	free(home);
	return path;
}

bool
pg_setup_has_block(const char *text, const char *target)
{
	size_t begin = 0, end = 0;

	return text != NULL && pg_setup_block_find(text, target, &begin, &end);
}

pg_setup_result
pg_setup_run(const pg_setup_target *t, const pg_setup_env *env, bool undo, bool dry_run,
             pg_setup_plan *plan)
{
	pg_setup_plan_init(plan, t->name);
	if (!t->plan(env, undo, plan))
		pg_setup_problem(plan, "out of memory");
	if (plan->problems.len > 0)
		return PG_SETUP_FAILED;
	if (plan->n == 0 && !plan->act)
		return PG_SETUP_UNCHANGED;
	if (dry_run)
		return PG_SETUP_PLANNED;
	return (t->apply ? t->apply : pg_setup_apply_edits)(env, plan) ? PG_SETUP_CHANGED
	                                                               : PG_SETUP_FAILED;
}

const pg_setup_target *
pg_setup_target_named(const char *name)
{
	for (size_t i = 0; i < PG_SETUP_N_TARGETS; i++) {
		if (strcmp(pg_setup_targets[i]->name, name) == 0)
			return pg_setup_targets[i];
	}
	return NULL;
}

int
pg_setup_exec(char *const argv[], char *out, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fds[2], st = 0, null;
	pid_t pid;

	out[0] = 0;
	/* Close-on-exec: the program gets only the copies on 0, 1 and 2. */
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	/* Keeps what fits, drains the rest (a full pipe would stall it). */
	for (;;) {
		char spill[512];

		if (len + 1 < size)
			n = read(fds[0], out + len, size - 1 - len);
		else
			n = read(fds[0], spill, sizeof(spill));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + 1 < size)
			len += (size_t)n;
	}
	close(fds[0]);
	out[len] = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
