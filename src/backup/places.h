/*
 * Where a user's p11glue state lives, and its files listed and written
 * (places.c). Private to src/backup.
 */
#ifndef PG_BACKUP_PLACES_H
#define PG_BACKUP_PLACES_H

#include "backup.h"

/*
 * The store directory: given, else $P11GLUE_STORE_DIR, else
 * $XDG_DATA_HOME/p11glue/store (~/.local/share/p11glue/store), as the
 * store module finds it; free(). NULL after a message.
 */
char *pg_places_store(const char *given);

/* The user's trust directory ($XDG_DATA_HOME/p11glue/trust); free().
 * NULL after a message. */
char *pg_places_trust(void);

/*
 * The user's registry directory, where `p11glue setup --modules` writes
 * and the registry reads the user's files: $P11GLUE_CONFIG when set, else
 * ~/.config/pkcs11 (pkcs11.conf and modules/); free(). NULL after a
 * message.
 */
char *pg_places_registry(void);

/* Names of files, sorted; free each and the array. */
typedef struct {
	char **names;
	size_t n, cap;
} pg_places_list;

void pg_places_list_clear(pg_places_list *l);

/* The token files of the store directory (token-N.sqlite, regular
 * files), by N. A missing directory lists nothing. False after a message. */
bool pg_places_tokens(const char *dir, pg_places_list *l) PG_MUST_CHECK;

/*
 * The regular files below dir, as relative paths of at most four parts,
 * none of them starting with '.', sorted; links and other files are left
 * out. A missing directory lists nothing. False after a message.
 */
bool pg_places_files(const char *dir, pg_places_list *l) PG_MUST_CHECK;

/* Reads root/rel (at most 1 MiB, a regular file, no link followed at
 * the end) into buf, its mode into *mode. False after a message. */
bool pg_places_read(const char *root, const char *rel, pg_buf *buf, uint32_t *mode) PG_MUST_CHECK;

/* Compares root/rel with data: 1 the same, 0 different, -1 missing. */
int pg_places_compare(const char *root, const char *rel, const pg_buf *data);

/*
 * Writes root/rel whole (a temporary file renamed over it) with mode;
 * missing directories are made 0700, and a part of the path that is not
 * a directory (a link) stops it. False after a message.
 */
bool pg_places_write(const char *root, const char *rel, const pg_buf *data, uint32_t mode) PG_MUST_CHECK;

/* mkdir -p of dir, 0700; false after a message. */
bool pg_places_mkdirs(const char *dir) PG_MUST_CHECK;

#endif /* PG_BACKUP_PLACES_H */
