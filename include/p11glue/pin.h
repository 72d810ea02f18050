/*
 * PINs and where they come from. A PKCS#11 URI names its PIN with
 * pin-value (the PIN itself) or pin-source (where to read it); without
 * either, an interactive program may prompt on the terminal.
 *
 * PIN sources understood:
 *   file:/path, file:///path or /path
 *       a file holding the PIN (at most 4096 bytes; one trailing newline
 *       is dropped). It must be a regular file that only its owner can
 *       read or write (no group or other permissions), owned by the user
 *       or root.
 *   env:NAME
 *       the value of the environment variable NAME, as it is (nothing is
 *       dropped; none in set-id programs). Only with P11GLUE_PIN_TRUSTED_URI.
 *   fd:N
 *       the open descriptor N, read up to a newline (not part of the PIN)
 *       or its end; what follows the newline stays unread, so one pipe can
 *       carry several PINs, a line each. A descriptor that gives nothing
 *       (read already) and a terminal are refused. Only with
 *       P11GLUE_PIN_TRUSTED_URI.
 *   SCHEME:...
 *       handed to a callback an application registered for SCHEME (a
 *       callback for "env" or "fd" takes precedence over the above).
 *
 * env: and fd: name things of the running process, not of the URI's
 * author: a URI from a configuration file or a peer could read another
 * secret of the environment into a C_Login, or swallow a descriptor the
 * program uses. They are honoured only when the caller says the URI is
 * its own user's (its command line).
 *
 * PINs live in p11glue_pin buffers, which are wiped when freed.
 * Thread safety: registering callbacks is serialized internally.
 */
#ifndef P11GLUE_PIN_H
#define P11GLUE_PIN_H

#include <stdbool.h>
#include <stddef.h>

#include <p11glue/defs.h>
#include <p11glue/uri.h>

#ifdef __cplusplus
extern "C" {
#endif


typedef struct p11glue_pin p11glue_pin;

/* A PIN holding a copy of len bytes of value; NULL when out of memory. */
P11GLUE_PUBLIC p11glue_pin *p11glue_pin_new(const void *value, size_t len);

/* Wipes and frees (NULL is fine). */
P11GLUE_PUBLIC void p11glue_pin_free(p11glue_pin *pin);

/* Lends the bytes (followed by a NUL not counted in *len). */
P11GLUE_PUBLIC const unsigned char *p11glue_pin_value(const p11glue_pin *pin, size_t *len);

/*
 * A callback for a PIN source scheme: source is the whole pin-source
 * value, prompt a human description of what the PIN unlocks. It stores a
 * new PIN in *pin and returns P11GLUE_OK, or returns an error code.
 */
typedef int (*p11glue_pin_callback)(const char *source, const char *prompt,
                                    void *user_data, p11glue_pin **pin);

/* Registers callback for pin-source values "SCHEME:..." (a later
 * registration for the same scheme takes precedence). */
P11GLUE_PUBLIC int p11glue_pin_register(const char *scheme, p11glue_pin_callback callback,
                                        void *user_data);
P11GLUE_PUBLIC void p11glue_pin_unregister(const char *scheme, p11glue_pin_callback callback,
                                           void *user_data);

/* Flags for p11glue_pin_resolve(). */
enum {
	/* Prompt on the terminal (with echo off) when the URI names no PIN. */
	P11GLUE_PIN_PROMPT = 1 << 0,
	/* The URI comes from this process's own user (its command line):
	 * its pin-source may also be env:NAME or fd:N. */
	P11GLUE_PIN_TRUSTED_URI = 1 << 1
};

/*
 * Finds the PIN for uri: its pin-value, else its pin-source, else (with
 * P11GLUE_PIN_PROMPT) a terminal prompt showing prompt. Returns
 * P11GLUE_OK with a new *pin, P11GLUE_ERR_NOT_FOUND when the URI names no
 * PIN and prompting is off, P11GLUE_ERR_PIN_SOURCE when the source cannot
 * be read (error, when not NULL, gets a newly allocated reason to free),
 * P11GLUE_ERR_PIN_CANCELLED when no terminal answered.
 */
P11GLUE_PUBLIC int p11glue_pin_resolve(const p11glue_uri *uri, const char *prompt,
                                       unsigned flags, p11glue_pin **pin, char **error)
	__attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif

#endif /* P11GLUE_PIN_H */
