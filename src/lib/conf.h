/*
 * The registry configuration: the pkcs11.conf file format ("name: value"
 * lines, '#' comments) and its locations, read as p11-kit reads them.
 *
 * Locations, in order of precedence (later wins):
 *   package modules   $datadir/p11-kit/modules/NAME.module
 *   system modules    $sysconfdir/pkcs11/modules/NAME.module
 *   system global     $sysconfdir/pkcs11/pkcs11.conf
 *   user global       ~/.config/pkcs11/pkcs11.conf
 *   user modules      ~/.config/pkcs11/modules/NAME.module
 * P11GLUE_CONFIG=DIR replaces all of them by DIR/pkcs11.conf and
 * DIR/modules/. A module file's settings are merged over those of an
 * earlier file of the same module name, one by one (a user file with
 * "priority: 5" changes only the priority). An empty "module:" disables
 * the module of that name; so does having no "module:" in any file.
 *
 * User files are read when the system file's user-config is "merge"
 * (the default) or "only" ("only" drops the system module files), never
 * in set-id programs, and as root only when the system file sets
 * user-config explicitly.
 */
#ifndef PG_CONF_H
#define PG_CONF_H

#include "common.h"

typedef struct {
	char *key;
	char *value;
} pg_conf_pair;

/* An ordered key/value list; a repeated key replaces the earlier value. */
typedef struct {
	pg_conf_pair *items;
	size_t n;
} pg_conf_map;

void pg_conf_map_clear(pg_conf_map *map);
/* The value of key, or NULL. */
const char *pg_conf_map_get(const pg_conf_map *map, const char *key);
bool pg_conf_map_set(pg_conf_map *map, const char *key, const char *value) PG_MUST_CHECK;

/*
 * Parses config text. Problems go to *errors as "<origin>:<line>: ..."
 * lines. Returns false when the text had an error (the map then holds what
 * parsed) or memory ran out.
 */
bool pg_conf_parse(const char *text, size_t len, const char *origin,
                   pg_conf_map *map, pg_buf *errors);

/*
 * Interprets a boolean setting: yes/no/true/false (case-insensitive).
 * Returns dflt when value is NULL or empty; when it is something else,
 * returns dflt and sets *bad (if not NULL).
 */
bool pg_conf_bool(const char *value, bool dflt, bool *bad);

/* One module, as the configuration describes it. */
typedef struct {
	char *name;           /* the file name without ".module" */
	char *file;           /* the file it came from */
	pg_conf_map values;
	char *error;          /* when the file was broken: why (module disabled) */
} pg_conf_module;

typedef struct {
	pg_conf_map global;
	pg_conf_module *modules;    /* sorted by name */
	size_t n_modules;
	char *user_config;          /* effective mode: none, merge or only */
	pg_buf messages;            /* problems met while reading, one per line */
} pg_conf;

/* Where to read; NULL members are skipped. */
typedef struct {
	const char *system_file;
	const char *module_dirs[2];   /* lower precedence first */
	const char *user_file;
	const char *user_module_dir;
	bool user_allowed_by_default; /* false for root */
} pg_conf_paths;

/*
 * Fills paths with the locations for this process: P11GLUE_CONFIG when
 * set, else the system and user locations. The strings are allocated;
 * pg_conf_paths_clear frees them.
 */
void pg_conf_paths_init(pg_conf_paths *paths);
void pg_conf_paths_clear(pg_conf_paths *paths);

/* Reads the configuration; NULL only when out of memory. */
pg_conf *pg_conf_load(const pg_conf_paths *paths);
void pg_conf_free(pg_conf *conf);

/* The module of that name, or NULL. */
const pg_conf_module *pg_conf_find(const pg_conf *conf, const char *name);

#endif /* PG_CONF_H */
