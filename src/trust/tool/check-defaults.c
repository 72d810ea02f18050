/*
 * What `trust check` judges by default: the files and objects programs
 * read when nobody tells them otherwise, in this process's environment.
 *
 * OpenSSL: SSL_CERT_FILE and SSL_CERT_DIR, else libcrypto's built-in
 *   paths (/usr/lib/ssl/cert.pem and certs, the system's bundle and
 *   directory on Debian): openssl s_client, Python's ssl, most programs.
 * curl: cacert and capath from its configuration file (~/.curlrc),
 *   else, when it sets neither, CURL_CA_BUNDLE, else SSL_CERT_DIR, else
 *   SSL_CERT_FILE (curl 7.88's order); what is not set stays curl's
 *   built-in bundle and directory (Debian's: the system's).
 * GnuTLS: its built-in trust file (Debian's bundle); no switch changes it.
 * GnuTLS through PKCS#11, NSS and Chromium: the trust modules' objects.
 * Java: javax.net.ssl.trustStore in JAVA_TOOL_OPTIONS, else the system's
 *   cacerts (what Debian's JRE links its lib/security/cacerts to).
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include "trust-check.h"
#include "trust-dirs.h"

#include <openssl/x509.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* curl's built-in paths on Debian (curl-config --ca; its CApath). */
#define CURL_BUNDLE PG_CA_BUNDLE
#define CURL_DIR PG_CA_CERTS_DIR
#define GNUTLS_FILE PG_CA_BUNDLE

static char *
env_path(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != 0 ? strdup(v) : NULL;
}

/* The configuration file curl reads: $CURL_HOME/.curlrc, else
 * $XDG_CONFIG_HOME/.curlrc, else ~/.curlrc, the first that exists. */
static char *
curlrc(void)
{
	const char *dirs[] = { getenv("CURL_HOME"), getenv("XDG_CONFIG_HOME"), getenv("HOME") };
	char *path;

	for (size_t i = 0; i < PG_N_ELEMENTS(dirs); i++) {
		if (dirs[i] == NULL || dirs[i][0] != '/' || asprintf(&path, "%s/.curlrc", dirs[i]) < 0)
			continue;
		if (access(path, R_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/* The value of curl's option name (cacert, capath) in its configuration
 * file: "name = value", "name value", "--name value", quoted or not; the
 * last one counts. */
static char *
curlrc_value(const char *file, const char *name)
{
	size_t len = 0, nlen = strlen(name);
	char *text = file ? pg_trust_read_file(file, &len) : NULL, *found = NULL;

	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char *p = line, *v, *end;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = 0;
		p += strspn(p, " \t");
		if (p[0] == '-' && p[1] == '-')
			p += 2;
		if (strncmp(p, name, nlen) != 0 || strchr(" \t=:", p[nlen]) == NULL || p[nlen] == 0)
			continue;
		v = p + nlen + strspn(p + nlen, " \t");
		if (*v == '=' || *v == ':')
			v += 1 + strspn(v + 1, " \t");
		end = v + strlen(v);
		while (end > v && strchr(" \t\r", end[-1]))
			*--end = 0;
		if (*v == '"' && end > v + 1 && end[-1] == '"') {
			*--end = 0;
			v++;
		}
		free(found);
		found = strdup(v);
	}
	free(text);
	return found;
}

/* JAVA_TOOL_OPTIONS' -Djavax.net.ssl.trustStore=VALUE (the last one). */
static char *
java_trust_store(void)
{
	const char *opts = getenv("JAVA_TOOL_OPTIONS"), *key = "-Djavax.net.ssl.trustStore=";
	const char *p = opts, *at = NULL;

	while (p && (p = strstr(p, key)) != NULL) {
		at = p + strlen(key);
		p = at;
	}
	return at ? strndup(at, strcspn(at, " \t")) : NULL;
}

/* A note on a consumer (replacing none). */
static void
note(pg_consumer *c, char *text)
{
	char *joined;

	if (c == NULL || text == NULL) {
		free(text);
		return;
	}
	if (c->note == NULL) {
		c->note = text;
		return;
	}
	if (asprintf(&joined, "%s; %s", c->note, text) >= 0) {
		free(c->note);
		c->note = joined;
	}
	free(text);
}

static char *
text(const char *fmt, ...)
{
	va_list ap;
	char *out = NULL;

	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		out = NULL;
	va_end(ap);
	return out;
}

/* The user's files ('p11glue setup --trust') exist, but this
 * environment does not name them: said, since what is checked then is
 * what this process would read. */
static char *
session_note(const char *file)
{
	char *dir = pg_trust_user_path(PG_TRUST_EXTRACTED), *bundle = NULL, *why = NULL;

	if (dir && asprintf(&bundle, "%s/%s", dir, PG_TRUST_EXTRACTED_BUNDLE) >= 0 &&
	    access(bundle, F_OK) == 0 && (file == NULL || strcmp(file, bundle) != 0))
		why = text("this environment does not name %s ('p11glue setup --trust' does "
		           "for new sessions: log in again, or . ~/.profile)", bundle);
	free(bundle);
	free(dir);
	return why;
}

void
pg_check_default_consumers(pg_check *ck)
{
	char *ssl_file = env_path("SSL_CERT_FILE"), *ssl_dir = env_path("SSL_CERT_DIR");
	char *rc = curlrc(), *rc_file = curlrc_value(rc, "cacert"), *rc_dir = curlrc_value(rc, "capath");
	char *curl_file, *curl_dir, *java = java_trust_store(), *label;
	const char *curl_from;
	size_t n = 0;

	/* OpenSSL's default paths. */
	ck->paths[0] = ssl_file ? ssl_file : strdup(X509_get_default_cert_file());
	ck->paths[1] = ssl_dir ? ssl_dir : strdup(X509_get_default_cert_dir());
	label = ck->paths[6] = text("%s and %s", ck->paths[0] ? ck->paths[0] : "?",
	                            ck->paths[1] ? ck->paths[1] : "?");
	ck->consumers[n] = pg_consumer_openssl("OpenSSL", ck->paths[0], ck->paths[1],
	                                       label ? label : "its default paths", false);
	note(ck->consumers[n], session_note(ssl_file));
	note(ck->consumers[n++], text("reads %s (%s): openssl, Python's ssl", label ? label : "?",
	                              ssl_file || ssl_dir ? "from SSL_CERT_FILE and SSL_CERT_DIR"
	                                                  : "built in"));

	/* curl: its configuration, else the environment, else built in. */
	curl_file = rc_file;
	curl_dir = rc_dir;
	curl_from = rc_file || rc_dir ? rc : NULL;
	if (curl_from == NULL) {
		if ((curl_file = env_path("CURL_CA_BUNDLE")) != NULL)
			curl_from = "CURL_CA_BUNDLE";
		else if ((curl_dir = env_path("SSL_CERT_DIR")) != NULL)
			curl_from = "SSL_CERT_DIR";
		else if ((curl_file = env_path("SSL_CERT_FILE")) != NULL)
			curl_from = "SSL_CERT_FILE";
	}
	ck->paths[2] = curl_file ? curl_file : strdup(CURL_BUNDLE);
	ck->paths[3] = curl_dir ? curl_dir : strdup(CURL_DIR);
	label = ck->paths[7] = text("%s and %s", ck->paths[2] ? ck->paths[2] : "?",
	                            ck->paths[3] ? ck->paths[3] : "?");
	ck->consumers[n] = pg_consumer_openssl("curl", ck->paths[2], ck->paths[3],
	                                       label ? label : "its paths", false);
	note(ck->consumers[n++], text("reads %s (%s%s)", label ? label : "?",
	                              curl_from ? "set by " : "built in", curl_from ? curl_from : ""));
	free(rc);

	ck->consumers[n] = pg_consumer_bundle("GnuTLS", GNUTLS_FILE);
	note(ck->consumers[n++], text("reads " GNUTLS_FILE " (built in: no per-user switch)"));
	ck->consumers[n++] = pg_consumer_gnutls(ck->k.set, "GnuTLS-p11");
	ck->consumers[n++] = pg_consumer_nss(ck->k.set);
	ck->consumers[n++] = pg_consumer_chromium(ck->k.set);

	if (java == NULL)
		java = strdup(PG_CA_JAVA);
	ck->paths[4] = java;
	if (java != NULL && access(java, F_OK) != 0) {
		ck->paths[5] = text("no keystore at %s (Java is not installed, or the keystore "
		                    "was not made)", java);
		ck->consumers[n] = pg_consumer_absent("Java", ck->paths[5] ? ck->paths[5] : "no keystore");
	} else if (java != NULL) {
		ck->consumers[n] = pg_consumer_java(java, java);
		note(ck->consumers[n], text("reads %s", java));
	}
	n++;
	ck->n_consumers = n;
}
