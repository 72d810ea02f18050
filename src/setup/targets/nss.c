/*
 * The `setup --nss` target: NSS programs (Chromium, Firefox) see the
 * tokens of p11glue's proxy module, so the key store, the trust module
 * and smart cards, through the user's NSS databases:
 *
 *   ~/.pki/nssdb                     Chromium's (made, with an empty
 *                                    password, when missing)
 *   ~/.mozilla/firefox/<profile>     each Firefox profile (profiles.ini,
 *                                    and directories holding cert9.db)
 *
 * An sql: database lists its modules in pkcs11.txt, paragraphs of
 * "library=" and "name=" lines that NSS rewrites itself whenever a module
 * is added or removed (and, joining paragraphs, drops a module whose
 * paragraph a comment line or a missing blank line runs into). So
 * p11glue does not edit that file: it plans from it and applies the plan
 * with NSS's own modutil (-add, -delete), and the module's name,
 * "p11glue", is what marks it as p11glue's. The plan shows the lines
 * modutil adds to pkcs11.txt or removes from it. A module of the user's
 * named "p11glue" that is not a p11glue module is a conflict; a module
 * of the user's under another name with the same library leaves nothing
 * to do; --undo deletes "p11glue" when it names a p11glue module, so
 * --module takes p11glue's modules only. A database in the legacy format (cert8.db and secmod.db only)
 * is a problem to solve first. --undo leaves ~/.pki/nssdb in place, an
 * empty database as Chromium would make it.
 */
#include "config.h"

#include "setup.h"
#include "targets.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TARGET "nss"
#define MAX_DBS (PG_SETUP_MAX_EDITS)

static bool
is_file(const char *dir, const char *name)
{
	char *path = pg_setup_join(dir, name);
	struct stat st;
	bool yes = path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode);

	free(path);
	return yes;
}

/* ---------------------------------------------------------------------------
 * The databases
 */

typedef struct {
	char *dirs[MAX_DBS];
	bool create[MAX_DBS];        /* made when missing (Chromium's) */
	size_t n;
	char *home;
} nss_dbs;

static void
dbs_clear(nss_dbs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->dirs[i]);
	free(d->home);
	memset(d, 0, sizeof(*d));
}

/* Adds dir once (taking it); false when there are too many. */
static bool
add_db(nss_dbs *d, char *dir, bool create)
{
	char *real = realpath(dir, NULL);

	for (size_t i = 0; real != NULL && i < d->n; i++) {
		char *other = realpath(d->dirs[i], NULL);
		bool same = other != NULL && strcmp(other, real) == 0;

		free(other);
		if (same) {
			free(real);
			free(dir);
			return true;
		}
	}
	free(real);
	if (d->n == MAX_DBS) {
		free(dir);
		return false;
	}
	d->create[d->n] = create;
	d->dirs[d->n++] = dir;
	return true;
}

/* The profiles profiles.ini names: Path= lines, relative to the
 * Firefox directory unless their section says IsRelative=0. */
static bool
read_profiles(nss_dbs *d, const char *firefox, pg_setup_plan *plan)
{
	char *ini = pg_setup_join(firefox, "profiles.ini"), *text = NULL, *path = NULL;
	bool exists, relative = true, ok = true;
	mode_t mode;
	size_t len;

	if (ini == NULL || !pg_setup_read(plan, ini, &text, &exists, &mode)) {
		free(ini);
		return false;
	}
	for (const char *p = text ? text : ""; *p && ok; p += len + (p[len] == '\n')) {
		len = strcspn(p, "\n");
		if (p[0] == '[') {
			if (path != NULL)
				ok = add_db(d, relative ? pg_setup_join(firefox, path) : strdup(path), false);
			free(path);
			path = NULL;
			relative = true;
		} else if (strncmp(p, "Path=", 5) == 0) {
			free(path);
			path = (char *)pg_memdup0(p + 5, len - 5);
			if (path != NULL)
				path[strcspn(path, "\r")] = 0;
		} else if (strncmp(p, "IsRelative=0", 12) == 0) {
			relative = false;
		}
	}
	if (ok && path != NULL)
		ok = add_db(d, relative ? pg_setup_join(firefox, path) : strdup(path), false);
	if (!ok)
		pg_setup_problem(plan, "more than %d NSS databases: set them up with modutil", MAX_DBS);
	free(path);
	free(text);
	free(ini);
	return ok;
}

/* Chromium's database, then Firefox's profiles. */
static bool
find_dbs(nss_dbs *d, pg_setup_plan *plan)
{
	char *firefox, *sub;
	struct dirent *de;
	DIR *dir;
	bool ok = true;

	memset(d, 0, sizeof(*d));
	d->home = pg_setup_home();
	if (d->home == NULL) {
		pg_setup_problem(plan, "no home directory: set HOME");
		return false;
	}
	if (!add_db(d, pg_setup_join(d->home, ".pki/nssdb"), true))
		return false;
	firefox = pg_setup_join(d->home, ".mozilla/firefox");
	if (firefox == NULL || !read_profiles(d, firefox, plan)) {
		free(firefox);
		return false;
	}
	dir = opendir(firefox);
	while (dir != NULL && ok && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		sub = pg_setup_join(firefox, de->d_name);
		if (sub != NULL && (is_file(sub, "cert9.db") || is_file(sub, "cert8.db")))
			ok = add_db(d, sub, false);
		else
			free(sub);
	}
	if (dir != NULL)
		closedir(dir);
	if (!ok)
		pg_setup_problem(plan, "more than %d NSS databases: set them up with modutil", MAX_DBS);
	free(firefox);
	return ok;
}

/* ---------------------------------------------------------------------------
 * pkcs11.txt
 */

/* A module entry of pkcs11.txt: its name and library, and its lines. */
typedef struct {
	char *name, *library;
	pg_buf lines;
} nss_entry;

static void
entry_clear(nss_entry *e)
{
	free(e->name);
	free(e->library);
	pg_buf_clear(&e->lines);
	memset(e, 0, sizeof(*e));
}

/* True when library is a module of p11glue's (p11glue-*.so). */
static bool
is_p11glue(const char *library)
{
	const char *base = strrchr(library, '/');

	base = base ? base + 1 : library;
	return strncmp(base, "p11glue-", 8) == 0;
}

/*
 * Finds, in text, the entry named PG_SETUP_NSS_NAME (into *ours) and whether another
 * entry names module (*theirs, its name). Paragraphs are separated by
 * blank lines; '#' lines are comments.
 */
static void
scan(const char *text, const char *module, nss_entry *ours, char **theirs)
{
	nss_entry cur = { 0 };
	size_t len;
	const char *p = text ? text : "";

	memset(ours, 0, sizeof(*ours));
	*theirs = NULL;
	pg_buf_init(&cur.lines);
	for (;; p += len + (p[len] == '\n')) {
		len = strcspn(p, "\n");
		if (len == 0 || strspn(p, " \t\r") == len) {
			if (cur.name && strcmp(cur.name, PG_SETUP_NSS_NAME) == 0 && ours->name == NULL) {
				*ours = cur;
				memset(&cur, 0, sizeof(cur));
			} else if (cur.name && cur.library && module && strcmp(cur.library, module) == 0 &&
			           *theirs == NULL) {
				*theirs = cur.name;
				cur.name = NULL;
			}
			entry_clear(&cur);
			pg_buf_init(&cur.lines);
			if (*p == 0)
				break;
			continue;
		}
		pg_buf_add(&cur.lines, p, len);
		pg_buf_add_byte(&cur.lines, '\n');
		if (strncmp(p, "name=", 5) == 0 && cur.name == NULL)
			cur.name = (char *)pg_memdup0(p + 5, len - 5);
		else if (strncmp(p, "library=", 8) == 0 && cur.library == NULL)
			cur.library = (char *)pg_memdup0(p + 8, len - 8);
	}
	entry_clear(&cur);
}

/* ---------------------------------------------------------------------------
 * Planning
 */

/* Adds the edit of *path (taken): ours' lines go, module's are added. */
static bool
add_edit(pg_setup_plan *plan, char **path, bool existed, const nss_entry *ours,
         const char *module)
{
	pg_setup_edit *e;

	if (plan->n == PG_SETUP_MAX_EDITS) {
		pg_setup_problem(plan, "too many NSS databases");
		return true;
	}
	e = &plan->edits[plan->n++];
	memset(e, 0, sizeof(*e));
	e->path = *path;
	*path = NULL;
	e->existed = existed;
	e->mode = 0600;
	pg_buf_init(&e->added);
	pg_buf_init(&e->removed);
	if (ours->name != NULL)
		pg_buf_add(&e->removed, ours->lines.data, ours->lines.len);
	if (module != NULL)
		pg_buf_printf(&e->added, "library=%s\nname=" PG_SETUP_NSS_NAME "\n", module);
	/* What apply does is modutil's; new_text only says the file stays. */
	e->new_text = strdup("");
	return e->new_text != NULL && !e->added.failed && !e->removed.failed;
}

/* True when Firefox runs with the profile in dir: its "lock" link reads
 * "ADDRESS:+PID" and that process is alive. */
static bool
firefox_running(const char *dir)
{
	char *lock = pg_setup_join(dir, "lock"), target[256], *plus;
	ssize_t n = lock ? readlink(lock, target, sizeof(target) - 1) : -1;
	long pid;

	free(lock);
	if (n <= 0)
		return false;
	target[n] = 0;
	plus = strrchr(target, '+');
	pid = plus ? strtol(plus + 1, NULL, 10) : 0;
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The edit of one database: pkcs11.txt as modutil will leave it. */
static bool
plan_db(pg_setup_plan *plan, const char *dir, bool create, const char *module, bool undo)
{
	char *path = pg_setup_join(dir, "pkcs11.txt"), *text = NULL, *theirs = NULL;
	nss_entry ours = { 0 };
	bool exists, sql = is_file(dir, "cert9.db");
	mode_t mode;
	bool ok = true;

	if (path == NULL)
		return false;
	if (!sql && is_file(dir, "cert8.db")) {
		pg_setup_problem(plan, "%s holds a legacy NSS database (cert8.db, secmod.db): start "
		                 "Firefox once with that profile to upgrade it, then run this again",
		                 dir);
		goto out;
	}
	if (sql && !pg_setup_read(plan, path, &text, &exists, &mode))
		goto out;
	if (!sql && (!create || undo)) {
		if (!create && !undo)
			pg_setup_note(plan, "%s: no NSS database yet (start Firefox once with this "
			              "profile, then run this again)", dir);
		goto out;
	}
	scan(text, module, &ours, &theirs);
	if (undo ? ours.name == NULL || !ours.library || !is_p11glue(ours.library)
	         : theirs != NULL || (ours.library && strcmp(ours.library, module) == 0))
		goto out;
	if (!undo && ours.name != NULL && (!ours.library || !is_p11glue(ours.library))) {
		pg_setup_problem(plan, "%s: a module of yours is named '" PG_SETUP_NSS_NAME "' (library %s): "
		                 "p11glue leaves it alone; rename or delete it (modutil -dbdir sql:%s "
		                 "-delete " PG_SETUP_NSS_NAME "), then run this again", dir,
		                 ours.library ? ours.library : "(none)", dir);
		goto out;
	}
	ok = add_edit(plan, &path, sql, &ours, undo ? NULL : module);
	if (firefox_running(dir))
		pg_setup_note(plan, "warning: Firefox runs with %s: close it, or it may not see "
		              "the change", dir);
	if (!sql)
		pg_setup_note(plan, "%s is made first, an empty NSS database without a password "
		              "(certutil -N --empty-password)", dir);
out:
	entry_clear(&ours);
	free(theirs);
	free(text);
	free(path);
	return ok;
}

bool
pg_setup_nss_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	nss_dbs d;
	char *module = NULL;

	if (env->system) {
		pg_setup_problem(p, "NSS databases are each user's own: there is no --system form");
		return true;
	}
	if (!find_dbs(&d, p))
		goto out;
	if (!undo && (module = pg_setup_chosen_module(env, p, true)) == NULL)
		goto out;
	/* The entry's name marks it as p11glue's only with a library of ours:
	 * another would be taken for the user's by --undo. */
	if (module != NULL && !is_p11glue(module)) {
		pg_setup_problem(p, "--module %s: NSS gets p11glue's modules only (p11glue-*.so); "
		                 "add another with modutil -add", module);
		goto out;
	}
	for (size_t i = 0; i < d.n; i++) {
		if (!plan_db(p, d.dirs[i], d.create[i], module, undo))
			pg_setup_problem(p, "out of memory");
	}
	if (p->n > 0 && !undo && p->problems.len == 0)
		pg_setup_note(p, "close Firefox and Chromium first; check with: modutil -dbdir "
		              "sql:$HOME/.pki/nssdb -list");
	if (p->n > 0 && undo)
		pg_setup_note(p, "~/.pki/nssdb stays, as Chromium would have made it");
out:
	free(module);
	dbs_clear(&d);
	return true;
}

/* ---------------------------------------------------------------------------
 * Applying: certutil and modutil
 */

/* Runs argv; its output is printed only when it fails. */
static bool
run(char *const argv[])
{
	char out[4096];
	int st = pg_setup_exec(argv, out, sizeof(out));

	if (st != 0) {
		pg_message("%s failed%s%s", argv[0], out[0] ? ":\n" : "", out);
		return false;
	}
	return true;
}

/* mkdir -p, each directory made 0700. */
static bool
make_dirs(char *dir)
{
	bool ok = true;

	for (char *p = dir + 1; ok; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;

		*p = 0;
		ok = mkdir(dir, 0700) == 0 || errno == EEXIST;
		if (!ok)
			pg_message("%s: %s", dir, strerror(errno));
		*p = c;
		if (c == 0)
			break;
	}
	return ok;
}

static bool
apply_db(const pg_setup_edit *e)
{
	char *dir = strdup(e->path), *slash, *library = NULL, db[PATH_MAX + 8];
	const char *added = e->added.data ? (const char *)e->added.data : "";
	bool ok = false;

	if (dir == NULL || (slash = strrchr(dir, '/')) == NULL)
		goto out;
	*slash = 0;
	if ((size_t)snprintf(db, sizeof(db), "sql:%s", dir) >= sizeof(db)) {
		pg_message("%s: path too long", dir);
		goto out;
	}
	if (!e->existed) {
		char *const create[] = { "certutil", "-N", "-d", db, "--empty-password", NULL };

		if (!make_dirs(dir))
			goto out;
		if (!run(create))
			goto out;
	}
	if (e->removed.len > 0) {
		char *const del[] = { "modutil", "-dbdir", db, "-delete", PG_SETUP_NSS_NAME, "-force", NULL };

		if (!run(del))
			goto out;
	}
	if (strncmp(added, "library=", 8) == 0) {
		library = (char *)pg_memdup0(added + 8, strcspn(added + 8, "\n"));
		char *const add[] = { "modutil", "-dbdir", db, "-add", PG_SETUP_NSS_NAME, "-libfile", library,
		                      "-force", NULL };

		if (library == NULL || !run(add))
			goto out;
	}
	ok = true;
out:
	free(library);
	free(dir);
	return ok;
}

bool
pg_setup_nss_apply(const pg_setup_env *env, const pg_setup_plan *p)
{
	(void)env;
	for (size_t i = 0; i < p->n; i++) {
		if (!apply_db(&p->edits[i]))
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Status
 */

void
pg_setup_nss_status(const pg_setup_env *env, pg_setup_status *st)
{
	pg_setup_plan scratch;
	nss_dbs d;
	nss_entry ours;
	char *path, *text, *theirs, fact[PATH_MAX + 64];
	static const char *const keys[MAX_DBS] = {
		"database 1", "database 2", "database 3", "database 4", "database 5", "database 6",
		"database 7", "database 8", "database 9", "database 10", "database 11",
		"database 12", "database 13", "database 14", "database 15", "database 16",
	};
	size_t n_db = 0, n_ok = 0;
	bool exists;
	mode_t mode;

	(void)env;
	pg_setup_plan_init(&scratch, TARGET);
	st->state = "not configured";
	if (!find_dbs(&d, &scratch)) {
		pg_setup_fact(st, "problem", (const char *)scratch.problems.data);
		goto out;
	}
	for (size_t i = 0; i < d.n; i++) {
		if (!is_file(d.dirs[i], "cert9.db"))
			continue;
		path = pg_setup_join(d.dirs[i], "pkcs11.txt");
		text = NULL;
		if (path != NULL && pg_setup_read(&scratch, path, &text, &exists, &mode)) {
			n_db++;
			scan(text, NULL, &ours, &theirs);
			if (ours.library != NULL && is_p11glue(ours.library))
				snprintf(fact, sizeof(fact), "%s: %s", d.dirs[i], ours.library);
			else if (ours.library != NULL)
				snprintf(fact, sizeof(fact), "%s: %s (a module of yours named '" PG_SETUP_NSS_NAME "')",
				         d.dirs[i], ours.library);
			else
				snprintf(fact, sizeof(fact), "%s: (no module named '" PG_SETUP_NSS_NAME "')", d.dirs[i]);
			n_ok += ours.library != NULL && is_p11glue(ours.library);
			pg_setup_fact(st, keys[n_db - 1], fact);
			entry_clear(&ours);
			free(theirs);
		}
		free(text);
		free(path);
	}
	if (n_db == 0)
		pg_setup_fact(st, "database 1", "(none yet)");
	pg_setup_fact(st, "modutil", access("/usr/bin/modutil", X_OK) == 0 ? "/usr/bin/modutil"
	                                                                  : "not installed");
	st->state = n_db > 0 && n_ok == n_db ? "configured"
	            : n_ok > 0               ? "partly configured"
	                                     : "not configured";
out:
	dbs_clear(&d);
	pg_setup_plan_clear(&scratch);
}

const char *
pg_setup_nss_unavailable(void)
{
	return access("/usr/bin/modutil", X_OK) == 0 ? NULL
	       : "modutil is not installed (Debian: apt install libnss3-tools)";
}
