/*
 * Entries: the fields derived from a certificate when it is read, and
 * the digests PKCS#11 and NSS identify it by, computed when first asked
 * for (an enumeration asks for them all; `trust list` needs none).
 */
#include "trust-format.h"

#include <stdlib.h>
#include <string.h>

static const unsigned char oid_cn[] = { 0x55, 0x04, 0x03 };
static const unsigned char oid_ou[] = { 0x55, 0x04, 0x0b };
static const unsigned char oid_o[] = { 0x55, 0x04, 0x0a };

typedef void digest_fn(const void *data, size_t len, unsigned char *out);

/* The digest of `of` kept in out, computed when the `have` bit is not set. */
static const unsigned char *
cached(pg_entry *e, unsigned have, digest_fn *digest, const pg_span *of, unsigned char *out)
{
	if (!(e->have & have)) {
		digest(of->p, of->len, out);
		e->have |= have;
	}
	return out;
}

const unsigned char *
pg_entry_sha1(pg_entry *e)
{
	return cached(e, PG_HAVE_SHA1, pg_sha1, &e->cert.der, e->sha1);
}

const unsigned char *
pg_entry_md5(pg_entry *e)
{
	return cached(e, PG_HAVE_MD5, pg_md5, &e->cert.der, e->md5);
}

const unsigned char *
pg_entry_spki_sha1(pg_entry *e)
{
	const pg_span *spki = e->kind == PG_ENTRY_CERT ? &e->cert.spki : &e->ext_spki;

	return cached(e, PG_HAVE_SPKI_SHA1, pg_sha1, spki, e->spki_sha1);
}

pg_value
pg_entry_cert_id(pg_entry *e)
{
	if (e->cert.ski.len)
		return (pg_value){ e->cert.ski.p, e->cert.ski.len };
	return (pg_value){ pg_entry_spki_sha1(e), PG_SHA1_LEN };
}

bool
pg_entry_cert_derive(pg_entry *e)
{
	pg_cert *c = &e->cert;

	e->has_dates = pg_der_time_date(&c->not_before, c->not_before_tag, e->start) &&
	               pg_der_time_date(&c->not_after, c->not_after_tag, e->end);
	e->issuer = c->issuer;
	e->serial = c->serial;
	/* The label: the alias given with the certificate, else the subject's
	 * commonName, organizationalUnitName or organizationName. */
	if (e->label.p == NULL &&
	    !pg_name_find(&c->subject, oid_cn, sizeof(oid_cn), &e->label) &&
	    !pg_name_find(&c->subject, oid_ou, sizeof(oid_ou), &e->label) &&
	    !pg_name_find(&c->subject, oid_o, sizeof(oid_o), &e->label)) {
		e->label.p = (const unsigned char *)"";
		e->label.len = 0;
	}
	/* An extKeyUsage that does not parse counts as absent, as with
	 * p11-kit (which reports it); only running out of memory fails. */
	if (c->eku.len) {
		int r = pg_oid_list_parse(&c->eku, &e->own_eku);
		if (r < 0)
			return false;
		e->oids_ok = r > 0;
		if (r == 0) {
			pg_message("%s: invalid extKeyUsage extension, ignored", e->origin);
			pg_oid_list_clear(&e->own_eku);
		}
	}
	return true;
}

void
pg_entry_clear(pg_entry *e)
{
	free(e->label_owned);
	pg_oid_list_clear(&e->own_eku);
	pg_oid_list_clear(&e->ext_oids);
	free(e->attrs);
	memset(e, 0, sizeof(*e));
}

const pg_attr *
pg_entry_attr(const pg_entry *e, CK_ATTRIBUTE_TYPE type)
{
	for (size_t i = 0; i < e->n_attrs; i++)
		if (e->attrs[i].type == type)
			return &e->attrs[i];
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Purpose lists
 */

int
pg_oid_list_parse_contents(const pg_span *contents, pg_oid_list *out)
{
	pg_der seq;
	pg_span oid;
	char text[128];

	pg_der_init(&seq, contents->p, contents->len);
	while (pg_der_peek(&seq) == 0x06) {
		char **grown;
		if (!pg_der_read(&seq, 0x06, NULL, &oid) || !pg_oid_format(&oid, text, sizeof(text)))
			return 0;
		if (out->n % 8 == 0) {
			grown = realloc(out->oids, (out->n + 8) * sizeof(char *));
			if (grown == NULL)
				return -1;
			out->oids = grown;
		}
		if ((out->oids[out->n] = strdup(text)) == NULL)
			return -1;
		out->n++;
	}
	return pg_der_at_end(&seq) ? 1 : 0;
}

int
pg_oid_list_parse(const pg_span *value, pg_oid_list *out)
{
	pg_der d;
	pg_span contents;

	pg_der_init(&d, value->p, value->len);
	if (!pg_der_read(&d, 0x30, NULL, &contents) || !pg_der_at_end(&d))
		return 0;
	return pg_oid_list_parse_contents(&contents, out);
}

void
pg_oid_list_clear(pg_oid_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->oids[i]);
	free(list->oids);
	list->oids = NULL;
	list->n = 0;
}

bool
pg_oid_list_has(const pg_oid_list *list, const char *oid)
{
	for (size_t i = 0; list && i < list->n; i++)
		if (strcmp(list->oids[i], oid) == 0)
			return true;
	return false;
}
