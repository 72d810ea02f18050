/*
 * p11glue backup | restore: the command lines over src/backup (backup.h).
 */
#include "config.h"

#include "tool.h"
#include "backup.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const kind_keys[] = {
	[PG_BACKUP_TOKEN] = "tokens",
	[PG_BACKUP_TRUST] = "trust",
	[PG_BACKUP_REGISTRY] = "registry",
};

/* ---------------------------------------------------------------------------
 * What went in, or what became of it: lines or JSON
 */

static void
print_lines(const pg_backup_manifest *m, const char *file, bool restore)
{
	static const char *const kinds[] = {
		[PG_BACKUP_TOKEN] = "token", [PG_BACKUP_TRUST] = "trust",
		[PG_BACKUP_REGISTRY] = "registry", [PG_BACKUP_SETUP] = "setup",
	};

	for (size_t i = 0; i < m->n; i++) {
		const pg_backup_item *it = &m->items[i];
		if (it->kind == PG_BACKUP_SETUP && !restore) {
			printf("setup %s: %s%s\n", it->name, it->state, it->proxy ? " (proxy)" : "");
			continue;
		}
		if (it->kind == PG_BACKUP_SETUP && it->action == NULL)
			continue;
		printf("%s %s", kinds[it->kind], it->name);
		if (it->kind == PG_BACKUP_TOKEN)
			printf(": '%s', serial %s", it->label, it->serial);
		if (restore)
			printf(": %s%s%s", it->action ? it->action : "", it->detail ? " as " : "",
			       it->detail ? it->detail : "");
		printf("\n");
	}
	printf("%s %s (%llu bytes)\n", restore ? "restored from" : "written to", file,
	       (unsigned long long)m->bytes);
}

static void
json_item(pg_json *json, const pg_backup_item *it, bool restore)
{
	pg_json_begin_object(json);
	pg_json_key_text(json, "file", it->name);
	pg_json_key_ulong(json, "bytes", (unsigned long)it->size);
	if (it->kind == PG_BACKUP_TOKEN) {
		pg_json_key_string(json, "label", it->label);
		pg_json_key_text(json, "serial", it->serial);
	}
	if (restore) {
		pg_json_key_text(json, "action", it->action ? it->action : "");
		if (it->detail != NULL)
			pg_json_key_text(json, "as", it->detail);
	}
	pg_json_end_object(json);
}

static void
print_json(const pg_backup_manifest *m, const char *file, bool restore)
{
	pg_json json;
	const char *p, *line;
	size_t n;

	pg_json_init(&json, stdout);
	pg_json_begin_object(&json);
	pg_json_key_string(&json, "file", file);
	pg_json_key_ulong(&json, "bytes", (unsigned long)m->bytes);
	pg_json_key_ulong(&json, "format", PG_BACKUP_VERSION);
	pg_json_key_begin_object(&json, "kdf");
	pg_json_key_text(&json, "name", "scrypt");
	pg_json_key_ulong(&json, "log2n", m->log2n);
	pg_json_key_ulong(&json, "r", m->r);
	pg_json_key_ulong(&json, "p", m->p);
	pg_json_end_object(&json);
	pg_json_key_text(&json, "aead", "AES-256-GCM");
	for (int kind = PG_BACKUP_TOKEN; kind <= PG_BACKUP_REGISTRY; kind++) {
		pg_json_key_begin_array(&json, kind_keys[kind]);
		for (size_t i = 0; i < m->n; i++) {
			if ((int)m->items[i].kind == kind)
				json_item(&json, &m->items[i], restore);
		}
		pg_json_end_array(&json);
	}
	pg_json_key_begin_object(&json, "setup");
	for (size_t i = 0; i < m->n; i++) {
		const pg_backup_item *it = &m->items[i];
		if (it->kind != PG_BACKUP_SETUP)
			continue;
		pg_json_key_begin_object(&json, it->name);
		pg_json_key_text(&json, "state", it->state ? it->state : "");
		pg_json_key_bool(&json, "proxy", it->proxy);
		if (restore)
			pg_json_key_text(&json, "action", it->action ? it->action : "not set up");
		pg_json_end_object(&json);
	}
	pg_json_end_object(&json);
	pg_json_key_begin_array(&json, "notes");
	for (p = pg_buf_text(&m->notes); pg_next_line(&p, &line, &n);)
		pg_json_bytes(&json, line, n);
	pg_json_end_array(&json);
	pg_json_end_object(&json);
	pg_json_finish(&json);
}

/* ---------------------------------------------------------------------------
 * backup
 */

static void
backup_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue backup [--output FILE] [--overwrite] [--passphrase-source SRC]\n"
	        "                      [--store DIR] [--scrypt-log2n N] [--json]\n"
	        "\n"
	        "Writes your p11glue state to one file sealed with a passphrase: every\n"
	        "token of the key store (a consistent copy taken while programs keep\n"
	        "using it, with what is still in its write-ahead log; keys stay\n"
	        "encrypted under the token's PINs as they are at rest), your trust\n"
	        "decisions, the files of your module registry and which 'p11glue setup'\n"
	        "targets are configured. 'p11glue restore' puts it back, on this machine\n"
	        "or another.\n"
	        "\n"
	        "The file is encrypted and authenticated with AES-256-GCM under a key\n"
	        "derived from the passphrase with scrypt, in chunks, so a changed, cut\n"
	        "or reordered file is refused. It appears at its name only once it is\n"
	        "complete.\n"
	        "\n"
	        "Options:\n"
	        "  --output FILE, -o FILE    where to write (\"-\": standard output); default\n"
	        "                            p11glue-backup-YYYYMMDD-HHMMSS.p11b here\n"
	        "  --overwrite               replace FILE when it exists (never a link)\n"
	        "  --passphrase-source SRC   read the passphrase from SRC (a file name,\n"
	        "                            file:PATH, env:NAME or fd:N); default: asked\n"
	        "                            twice on the terminal\n"
	        "  --store DIR               the store directory (default $P11GLUE_STORE_DIR,\n"
	        "                            else $XDG_DATA_HOME/p11glue/store)\n"
	        "  --scrypt-log2n N          scrypt cost N = 2^n, r = 8, p = 1 (10 to 20,\n"
	        "                            default 17: 128 MiB and about a second)\n"
	        "  --json                    print what went in as one JSON object\n"
	        "  -h, --help                show this help\n"
	        "\n"
	        "A progress line is shown on a terminal for large stores.\n"
	        "\n"
	        "Exit status: 0 the backup is complete; 1 it failed (no file is left at\n"
	        "its name); 2 a usage error.\n"
	        "\n"
	        "Examples:\n"
	        "  p11glue backup --output /media/usb/p11glue.p11b\n"
	        "  p11glue backup --passphrase-source env:BACKUP_PASS --output - | ssh host 'cat >b.p11b'\n");
}

/* The passphrase from its source or the terminal; NULL after a message. */
static p11glue_pin *
passphrase(const char *source, bool confirm)
{
	p11glue_pin *pin = NULL;
	size_t len = 0;

	if (pg_store_read_secret(source, "Passphrase for the backup",
	                         confirm ? PG_SECRET_CONFIRM : 0, &pin) != PG_EXIT_OK)
		return NULL;
	p11glue_pin_value(pin, &len);
	if (len == 0) {
		pg_message("an empty passphrase is refused");
		p11glue_pin_free(pin);
		return NULL;
	}
	return pin;
}

int
pg_cmd_backup(int argc, char **argv)
{
	const char *output = NULL, *source = NULL, *cost = NULL, *store = NULL;
	bool overwrite = false, json = false;
	const pg_opt table[] = {
		{ "output", 'o', PG_OPT_TEXT, &output, 0 },
		{ "overwrite", 0, PG_OPT_FLAG, &overwrite, 0 },
		{ "passphrase-source", 0, PG_OPT_TEXT, &source, 0 },
		{ "store", 0, PG_OPT_TEXT, &store, 0 },
		{ "scrypt-log2n", 0, PG_OPT_TEXT, &cost, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
	};
	pg_setup_env env = { .trust_compat = pg_tool_trust_compat };
	pg_backup_opts opts = { .store_dir = NULL, .setup = &env };
	pg_backup_manifest m;
	pg_outfile out;
	p11glue_pin *pass;
	char name[64], *end;
	int next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), backup_usage, 0,
	                                   0, &next);

	if (status >= 0)
		return status;
	if (cost != NULL) {
		unsigned long n = strtoul(cost, &end, 10);
		if (*cost == 0 || *end != 0 || n < PG_BACKUP_LOG2N_MIN || n > 20)
			return pg_tool_usage_error(argv[0], "--scrypt-log2n: a number from %d to 20",
			                           PG_BACKUP_LOG2N_MIN);
		opts.log2n = (unsigned)n;
	}
	if (output == NULL) {
		time_t now = time(NULL);
		strftime(name, sizeof(name), "p11glue-backup-%Y%m%d-%H%M%S.p11b", localtime(&now));
		output = name;
	}
	if (json && strcmp(output, "-") == 0)
		return pg_tool_usage_error(argv[0], "--json and --output - both want standard output");
	opts.store_dir = store;
	/* A file size limit gives an error, not a signal. */
	signal(SIGXFSZ, SIG_IGN);
	if (!pg_outfile_open_whole(&out, output, overwrite, 0600))
		return PG_EXIT_FAIL;
	if ((pass = passphrase(source, true)) == NULL) {
		pg_outfile_abort(&out);
		return PG_EXIT_FAIL;
	}
	opts.pass = p11glue_pin_value(pass, &opts.pass_len);
	opts.progress = isatty(STDERR_FILENO) && out.path != NULL;
	status = pg_backup_write(&opts, out.fp, &m);
	p11glue_pin_free(pass);
	if (status == PG_EXIT_OK && !pg_outfile_commit(&out))
		status = PG_EXIT_FAIL;
	if (status != PG_EXIT_OK) {
		pg_outfile_abort(&out);
		pg_message("no backup was written");
	} else if (json) {
		print_json(&m, output, false);
	} else if (strcmp(output, "-") != 0) {
		print_lines(&m, output, false);
	}
	pg_backup_manifest_clear(&m);
	return status;
}

/* ---------------------------------------------------------------------------
 * restore
 */

static void
restore_usage(FILE *out)
{
	fprintf(out,
	        "Usage: p11glue restore [--passphrase-source SRC] [--replace | --beside]\n"
	        "                       [--no-setup] [--store DIR] [--json] FILE\n"
	        "\n"
	        "Puts back what 'p11glue backup' wrote to FILE (\"-\": standard input):\n"
	        "the key store's tokens, your trust decisions and registry files, then\n"
	        "runs 'p11glue setup' for each target the backup found configured. The\n"
	        "same URIs name the same keys afterwards: each token keeps its label and\n"
	        "serial (and its file's number when that is free), and its PINs.\n"
	        "\n"
	        "The whole file is read and its seal checked first, into a private\n"
	        "directory beside the store; a wrong passphrase, a changed or cut file\n"
	        "changes nothing. A token that is here already (the same serial) is not\n"
	        "overwritten: by default the restore stops before changing anything and\n"
	        "says which tokens and files are in the way. Each token is put in place\n"
	        "whole, a token in use in one transaction.\n"
	        "\n"
	        "Options:\n"
	        "  --passphrase-source SRC   read the passphrase from SRC (a file name,\n"
	        "                            file:PATH, env:NAME or fd:N); default: asked\n"
	        "                            on the terminal\n"
	        "  --replace                 put the backup's tokens over those here with\n"
	        "                            the same serial, and its files over yours\n"
	        "  --beside                  restore such tokens beside them, under a new\n"
	        "                            label (\"LABEL (restored)\") and serial; keep\n"
	        "                            your files where they differ\n"
	        "  --no-setup                do not run setup afterwards\n"
	        "  --store DIR               the store directory (default $P11GLUE_STORE_DIR,\n"
	        "                            else $XDG_DATA_HOME/p11glue/store)\n"
	        "  --json                    print what became of each item as JSON\n"
	        "  -h, --help                show this help\n"
	        "\n"
	        "Exit status: 0 restored (and set up); 1 nothing was restored (a bad\n"
	        "file, a wrong passphrase, something in the way, a full disk), or a\n"
	        "setup target failed after the restore; 2 a usage error.\n"
	        "\n"
	        "Examples:\n"
	        "  p11glue restore /media/usb/p11glue.p11b\n"
	        "  p11glue restore --beside --passphrase-source ~/pass.txt old.p11b\n");
}

int
pg_cmd_restore(int argc, char **argv)
{
	const char *source = NULL, *store = NULL;
	bool replace = false, beside = false, no_setup = false, json = false;
	const pg_opt table[] = {
		{ "passphrase-source", 0, PG_OPT_TEXT, &source, 0 },
		{ "replace", 0, PG_OPT_FLAG, &replace, 0 },
		{ "beside", 0, PG_OPT_FLAG, &beside, 0 },
		{ "no-setup", 0, PG_OPT_FLAG, &no_setup, 0 },
		{ "store", 0, PG_OPT_TEXT, &store, 0 },
		{ "json", 0, PG_OPT_FLAG, &json, 0 },
	};
	pg_setup_env env = { .trust_compat = pg_tool_trust_compat };
	pg_restore_opts opts = { .setup = &env };
	pg_backup_manifest m;
	p11glue_pin *pass;
	const char *file;
	int fd, next, status = pg_tool_options(argc, argv, table, PG_N_ELEMENTS(table), restore_usage,
	                                       0, 1, &next);

	if (status >= 0)
		return status;
	if (next >= argc)
		return pg_tool_usage_error(argv[0], "expected a backup FILE");
	if (replace && beside)
		return pg_tool_usage_error(argv[0], "--replace and --beside exclude each other");
	file = argv[next];
	fd = strcmp(file, "-") == 0 ? STDIN_FILENO : pg_open_regular(file, false, NULL);
	if (fd < 0) {
		pg_message("%s: %s", file, errno == EINVAL ? "not a regular file" : strerror(errno));
		return PG_EXIT_FAIL;
	}
	if ((pass = passphrase(source, false)) == NULL) {
		if (fd != STDIN_FILENO)
			close(fd);
		return PG_EXIT_FAIL;
	}
	signal(SIGXFSZ, SIG_IGN);
	opts.store_dir = store;
	opts.pass = p11glue_pin_value(pass, &opts.pass_len);
	opts.existing = replace ? PG_RESTORE_REPLACE : beside ? PG_RESTORE_BESIDE : PG_RESTORE_REFUSE;
	opts.no_setup = no_setup;
	opts.progress = isatty(STDERR_FILENO);
	status = pg_restore_read(&opts, fd, file, &m);
	p11glue_pin_free(pass);
	if (fd != STDIN_FILENO)
		close(fd);
	if (json && m.n > 0)
		print_json(&m, file, true);
	else if (status == PG_EXIT_OK)
		print_lines(&m, file, true);
	pg_backup_manifest_clear(&m);
	return status;
}
