/*
 * The store's tokens: the directory holds one database per token,
 * "token-N.sqlite"; the token sits in slot N, in every process. One more
 * slot, the lowest free N, holds an uninitialised token: C_InitToken
 * there creates token-N.sqlite, the token stays in slot N and the next
 * free number becomes the free slot (as SoftHSM2 users expect). A file
 * that cannot be opened as a token is reported and its slot not offered,
 * and its number is never reused, so nothing overwrites it.
 *
 * This file keeps the list (scanning the directory, finding a slot,
 * freeing) and a token's flags; the slot and token calls (slot.c) and
 * C_Initialize (lifecycle.c) build on it.
 */
#include "config.h"

#include "core.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOT 99999

static char *
token_path(CK_SLOT_ID slot)
{
	size_t len = strlen(pg_store.dir) + 40;
	char *path = malloc(len);

	if (path != NULL)
		snprintf(path, len, "%s/token-%lu.sqlite", pg_store.dir, slot);
	return path;
}

/* The slot number of a token file name, or -1. */
static long
parse_name(const char *name)
{
	const char *p = name + 6;
	long n = 0;

	if (strncmp(name, "token-", 6) != 0 || !isdigit((unsigned char)*p))
		return -1;
	if (*p == '0' && isdigit((unsigned char)p[1]))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		n = n * 10 + (*p - '0');
		if (n > MAX_SLOT)
			return -1;
	}
	return strcmp(p, ".sqlite") == 0 ? n : -1;
}

pg_token *
pg_token_any_locked(CK_SLOT_ID slot)
{
	for (pg_token *t = pg_store.tokens; t != NULL; t = t->next) {
		if (t->slot == slot)
			return t;
	}
	return NULL;
}

pg_token *
pg_token_find_locked(CK_SLOT_ID slot)
{
	pg_token *t = pg_token_any_locked(slot);

	if (t == NULL || (!t->free_slot && t->db == NULL))
		return NULL;
	return t;
}

static void
insert_sorted(pg_token *tok)
{
	pg_token **p = &pg_store.tokens;

	while (*p != NULL && (*p)->slot < tok->slot)
		p = &(*p)->next;
	tok->next = *p;
	*p = tok;
}

void
pg_token_event_locked(CK_SLOT_ID slot)
{
	CK_SLOT_ID *events;

	for (size_t i = 0; i < pg_store.n_events; i++) {
		if (pg_store.events[i] == slot)
			return;
	}
	events = realloc(pg_store.events, (pg_store.n_events + 1) * sizeof(*events));
	if (events == NULL)
		return;
	pg_store.events = events;
	events[pg_store.n_events++] = slot;
	pthread_cond_broadcast(&pg_store.event);
}

/* Opens a token's database into tok (which may be the free slot). */
static void
token_open(pg_token *tok, bool quiet)
{
	tok->free_slot = false;
	if (pg_db_open(tok) != CKR_OK)
		return;
	if (pg_token_sync(tok) != CKR_OK) {
		pg_entries_free_token_locked(tok, false);
		pg_db_close(tok, false);
		return;
	}
	if (!quiet)
		pg_token_event_locked(tok->slot);
}

static pg_token *
token_new(CK_SLOT_ID slot)
{
	pg_token *tok = calloc(1, sizeof(*tok));

	if (tok == NULL)
		return NULL;
	tok->slot = slot;
	tok->path = token_path(slot);
	if (tok->path == NULL) {
		free(tok);
		return NULL;
	}
	insert_sorted(tok);
	return tok;
}

static void
scan_dir(bool quiet)
{
	DIR *dir = opendir(pg_store.dir);
	struct dirent *ent;

	if (dir == NULL)
		return;
	while ((ent = readdir(dir)) != NULL) {
		long n = parse_name(ent->d_name);
		pg_token *tok;
		if (n < 0)
			continue;
		tok = pg_token_any_locked((CK_SLOT_ID)n);
		if (tok != NULL && !tok->free_slot)
			continue;
		if (tok == NULL)
			tok = token_new((CK_SLOT_ID)n);
		if (tok != NULL)
			token_open(tok, quiet);
	}
	closedir(dir);
}

void
pg_tokens_scan_locked(bool quiet)
{
	CK_SLOT_ID free_slot = 0;
	bool have_free = false;

	if (pg_store.dir == NULL)
		return;
	scan_dir(quiet);
	for (pg_token *t = pg_store.tokens; t != NULL; t = t->next)
		have_free = have_free || t->free_slot;
	if (have_free)
		return;
	while (pg_token_any_locked(free_slot) != NULL)
		free_slot++;
	if (free_slot <= MAX_SLOT) {
		pg_token *tok = token_new(free_slot);
		if (tok != NULL)
			tok->free_slot = true;
	}
}

void
pg_tokens_free_locked(bool forked)
{
	pg_token *t, *next;

	for (t = pg_store.tokens; t != NULL; t = next) {
		next = t->next;
		pg_token_key_free(t->key);
		pg_entries_free_token_locked(t, forked);
		if (t->db != NULL)
			pg_db_close(t, forked);
		free(t->path);
		free(t);
	}
	pg_store.tokens = NULL;
	free(pg_store.events);
	pg_store.events = NULL;
	pg_store.n_events = 0;
}

static CK_FLAGS
pin_flags(const pg_token *tok, CK_USER_TYPE user, CK_FLAGS low, CK_FLAGS final, CK_FLAGS locked)
{
	unsigned fails = tok->pins[user].fails;

	if (!tok->pins[user].set)
		return 0;
	if (fails >= tok->max_fails)
		return locked;
	return (fails > 0 ? low : 0) | (tok->max_fails - fails == 1 ? final : 0);
}

CK_FLAGS
pg_token_flags_locked(const pg_token *tok)
{
	CK_FLAGS flags = CKF_RNG | CKF_LOGIN_REQUIRED;

	if (tok->free_slot)
		return flags;
	flags |= CKF_TOKEN_INITIALIZED;
	if (tok->pins[CKU_USER].set)
		flags |= CKF_USER_PIN_INITIALIZED;
	flags |= pin_flags(tok, CKU_USER, CKF_USER_PIN_COUNT_LOW, CKF_USER_PIN_FINAL_TRY,
	                   CKF_USER_PIN_LOCKED);
	flags |= pin_flags(tok, CKU_SO, CKF_SO_PIN_COUNT_LOW, CKF_SO_PIN_FINAL_TRY, CKF_SO_PIN_LOCKED);
	if (tok->broken)
		flags |= CKF_ERROR_STATE;
	if (tok->read_only)
		flags |= CKF_WRITE_PROTECTED;
	return flags;
}
