/*
 * The `setup --openssl` target: an OpenSSL configuration file that
 * p11glue owns whole, loading libp11's PKCS#11 engine (Debian package
 * libengine-pkcs11-openssl) with the store module (or with --proxy the
 * proxy) as its MODULE_PATH:
 *
 *   ~/.config/p11glue/openssl-pkcs11.cnf   (--system: /etc/ssl/p11glue-pkcs11.cnf)
 *
 * Programs use it through OPENSSL_CONF=FILE, or a configuration of the
 * user's includes it (.include FILE, before that file's first section;
 * the snippet sets openssl_conf). A file of that name without p11glue's
 * block, or with lines of the user's besides it, is a conflict. The
 * engine's file is found where this libcrypto looks for engines
 * (OPENSSL_ENGINES_DIR, what `openssl version -e` prints).
 */
#include "config.h"

#include "setup.h"
#include "targets.h"
#include "objects.h"

#include <p11glue/p11glue.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define TARGET "openssl"
#define ENGINE_FILE "pkcs11.so"

static char *
cnf_path(const pg_setup_env *env)
{
	return pg_setup_path(env, PG_SETUP_OPENSSL_SYSTEM_FILE, ".config/p11glue/openssl-pkcs11.cnf");
}

/* The engines directory of this libcrypto: OpenSSL_version gives
 * 'ENGINESDIR: "/usr/lib/x86_64-linux-gnu/engines-3"'; free(). */
static char *
engine_path(void)
{
	const char *v = OpenSSL_version(OPENSSL_ENGINES_DIR), *q = strchr(v, '"');
	char dir[PATH_MAX];
	size_t len;

	if (q == NULL || (len = strcspn(q + 1, "\"")) == 0 || len >= sizeof(dir))
		return pg_setup_join("/usr/lib/x86_64-linux-gnu/engines-3", ENGINE_FILE);
	memcpy(dir, q + 1, len);
	dir[len] = 0;
	return pg_setup_join(dir, ENGINE_FILE);
}

/* Counts the user's lines that are not blank. */
static int
count_line(const char *line, size_t number, void *data)
{
	(void)number;
	if (line[strspn(line, " \t\r")] != 0)
		(*(size_t *)data)++;
	return 0;
}

/* Plans path to hold the configuration naming module and engine. */
static void
plan_cnf(pg_setup_plan *p, const char *path, const char *text, bool exists, mode_t mode,
         const char *module, const char *engine)
{
	char engine_line[PATH_MAX + 32], module_line[PATH_MAX + 32];
	const char *lines[] = {
		"openssl_conf = p11glue_openssl_init",
		"",
		"[p11glue_openssl_init]",
		"engines = p11glue_engines",
		"",
		"[p11glue_engines]",
		"pkcs11 = p11glue_pkcs11",
		"",
		"[p11glue_pkcs11]",
		"engine_id = pkcs11",
		engine_line,
		module_line,
		/* The module is loaded when a program asks for the engine only. */
		"init = 0",
	};

	snprintf(engine_line, sizeof(engine_line), "dynamic_path = %s", engine);
	snprintf(module_line, sizeof(module_line), "MODULE_PATH = %s", module);
	if (!pg_setup_plan_block(p, path, text, exists, mode, lines, PG_N_ELEMENTS(lines)))
		pg_setup_problem(p, "out of memory");
	if (access(engine, R_OK) != 0)
		pg_setup_note(p, "warning: the engine %s is not installed (Debian: apt install "
		              "libengine-pkcs11-openssl)", engine);
	if (access(module, R_OK) != 0)
		pg_setup_note(p, "warning: the module %s is not there (yet)", module);
	if (p->n > 0 && p->problems.len == 0) {
		pg_setup_note(p, "use it with: OPENSSL_CONF=%s openssl ... -engine pkcs11 "
		              "-keyform engine -key 'pkcs11:token=...;object=...;type=private'", path);
		pg_setup_note(p, "or put '.include %s' at the top of an OpenSSL configuration of "
		              "yours that does not set openssl_conf itself", path);
	}
}

bool
pg_setup_openssl_plan(const pg_setup_env *env, bool undo, pg_setup_plan *p)
{
	char *path = cnf_path(env), *text = NULL, *module = NULL, *engine = NULL;
	size_t user_lines = 0;
	bool exists;
	mode_t mode;

	if (!pg_setup_plan_start(env, undo, p, path, &text, &exists, &mode))
		goto out;
	if (pg_setup_each_user_line(text, TARGET, count_line, &user_lines) != 0) {
		pg_setup_problem(p, "out of memory");
		goto out;
	}
	if (user_lines > 0) {
		pg_setup_problem(p, "%s is not p11glue's (it holds lines of yours): p11glue leaves "
		                 "it alone; move it away, then run this again", path);
		goto out;
	}
	module = pg_setup_chosen_module(env, p, false);
	engine = engine_path();
	if (module != NULL && engine != NULL)
		plan_cnf(p, path, text, exists, mode, module, engine);
out:
	free(engine);
	free(module);
	free(text);
	free(path);
	return true;
}

/* The value of "name = value" lines inside p11glue's block. */
static int
take_setting(const char *line, size_t number, void *data)
{
	char **values = data;
	const char *names[] = { "MODULE_PATH = ", "dynamic_path = " };

	(void)number;
	for (size_t i = 0; i < PG_N_ELEMENTS(names); i++) {
		if (strncmp(line, names[i], strlen(names[i])) == 0 && values[i] == NULL)
			values[i] = strdup(line + strlen(names[i]));
	}
	return 0;
}

/*
 * Tokens of the engine's module that hold an Edwards-curve key, whose
 * type Debian 12's engine (libp11 0.4.12) gives up on: it then lists
 * none of that token's private keys. Public key objects tell without a
 * login. One fact per such token.
 */
static void
edwards_facts(pg_setup_status *st, const char *module)
{
	CK_KEY_TYPE edwards = CKK_EC_EDWARDS;
	CK_OBJECT_CLASS pub = CKO_PUBLIC_KEY;
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &pub, sizeof(pub) },
		{ CKA_KEY_TYPE, &edwards, sizeof(edwards) },
	};
	p11glue_registry *reg = NULL;
	CK_FUNCTION_LIST *f;
	CK_SLOT_ID slots[64];
	CK_ULONG n = PG_N_ELEMENTS(slots);

	if (p11glue_registry_load_file(module, NULL, NULL, 0, &reg) != P11GLUE_OK ||
	    (f = p11glue_module_functions(p11glue_registry_module(reg, 0))) == NULL ||
	    f->C_GetSlotList(CK_TRUE, slots, &n) != CKR_OK)
		n = 0;
	for (CK_ULONG i = 0; i < n; i++) {
		CK_TOKEN_INFO token;
		CK_SESSION_HANDLE s;
		CK_OBJECT_HANDLE *found = NULL;
		size_t count = 0;
		char fact[160];
		if (f->C_GetTokenInfo(slots[i], &token) != CKR_OK ||
		    f->C_OpenSession(slots[i], CKF_SERIAL_SESSION, NULL, NULL, &s) != CKR_OK)
			continue;
		if (pg_objects_find(f, s, tmpl, PG_N_ELEMENTS(tmpl), &found, &count) == CKR_OK &&
		    count > 0) {
			int len = (int)sizeof(token.label);
			while (len > 0 && token.label[len - 1] == ' ')
				len--;
			snprintf(fact, sizeof(fact), "token '%.*s' holds an Ed25519 or Ed448 key: the "
			         "engine (libp11 0.4.12) lists none of that token's private keys",
			         len, (const char *)token.label);
			pg_setup_fact(st, "warning", fact);
		}
		free(found);
		f->C_CloseSession(s);
	}
	p11glue_registry_free(reg);
}

void
pg_setup_openssl_status(const pg_setup_env *env, pg_setup_status *st)
{
	char *path = cnf_path(env), *text = NULL, *engine = engine_path();
	char *values[2] = { NULL, NULL };
	bool exists;

	st->state = "not configured";
	if (!pg_setup_status_read(st, TARGET, path, &text, &exists))
		goto out;
	if (pg_setup_has_block(text, TARGET)) {
		pg_setup_each_user_line(text, NULL, take_setting, values);
		pg_setup_fact(st, "module", values[0]);
		st->state = "configured";
		if (values[0] != NULL)
			edwards_facts(st, values[0]);
	} else {
		pg_setup_fact(st, "module", exists ? "(a file of yours)" : "(no file)");
	}
	pg_setup_fact(st, "engine", engine && access(engine, R_OK) == 0 ? engine : "not installed");
out:
	free(values[0]);
	free(values[1]);
	free(engine);
	free(text);
	free(path);
}
