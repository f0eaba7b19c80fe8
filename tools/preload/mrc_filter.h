/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The filters of libmrc-preload.so (MRC_PRELOAD_PORTS, MRC_PRELOAD_PREFIXES):
 * parsed here for the library and for "mrcctl run", which checks them
 * before it starts the program.
 */
#ifndef MRC_FILTER_H
#define MRC_FILTER_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define MRC_FILTER_MAX	64

struct mrc_filter {
	int nports, nprefixes;
	struct { unsigned short lo, hi; } ports[MRC_FILTER_MAX];
	struct { int family, bits; unsigned char addr[16]; } prefixes[MRC_FILTER_MAX];
};

/* One entry of MRC_PRELOAD_PORTS: PORT or LO-HI, 1..65535. */
static inline bool mrc_filter_port(struct mrc_filter *f, const char *tok)
{
	unsigned int lo, hi;
	int n = 0;

	if (sscanf(tok, "%u-%u%n", &lo, &hi, &n) != 2 || tok[n]) {
		n = 0;
		if (sscanf(tok, "%u%n", &lo, &n) != 1 || tok[n])
			return false;
		hi = lo;
	}
	if (!lo || lo > hi || hi > 65535 || f->nports == MRC_FILTER_MAX)
		return false;
	f->ports[f->nports].lo = lo;
	f->ports[f->nports++].hi = hi;
	return true;
}

/* One entry of MRC_PRELOAD_PREFIXES: ADDR[/BITS], IPv4 or IPv6. */
static inline bool mrc_filter_prefix(struct mrc_filter *f, const char *tok)
{
	char addr[INET6_ADDRSTRLEN], *end;
	const char *slash = strchr(tok, '/');
	size_t alen = slash ? (size_t)(slash - tok) : strlen(tok);
	int family, max;
	long bits;

	if (alen >= sizeof(addr) || f->nprefixes == MRC_FILTER_MAX)
		return false;
	memcpy(addr, tok, alen);
	addr[alen] = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, addr, f->prefixes[f->nprefixes].addr) != 1)
		return false;
	max = family == AF_INET ? 32 : 128;
	bits = max;
	if (slash) {
		bits = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || bits < 0 || bits > max)
			return false;
	}
	f->prefixes[f->nprefixes].family = family;
	f->prefixes[f->nprefixes++].bits = bits;
	return true;
}

/*
 * Adds the comma list @s with @one (mrc_filter_port or mrc_filter_prefix).
 * A bad entry is skipped, so that the filter only narrows.
 * Return: NULL, or the first bad entry (free() it).
 */
static inline char *mrc_filter_parse(struct mrc_filter *f, const char *s,
				     bool (*one)(struct mrc_filter *, const char *))
{
	char *copy = strdup(s), *tok, *save = NULL, *bad = NULL;

	if (!copy)
		return strdup(s);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!one(f, tok) && !bad)
			bad = strdup(tok);
	free(copy);
	return bad;
}

static inline bool mrc_filter_port_matches(const struct mrc_filter *f, unsigned int port)
{
	int i;

	for (i = 0; i < f->nports; i++)
		if (port >= f->ports[i].lo && port <= f->ports[i].hi)
			return true;
	return false;
}

/* Is @a (4 or 16 bytes of @family) inside one of the prefixes? */
static inline bool mrc_filter_addr_matches(const struct mrc_filter *f, int family,
					   const unsigned char *a)
{
	int i, full, rest;

	for (i = 0; i < f->nprefixes; i++) {
		if (f->prefixes[i].family != family)
			continue;
		full = f->prefixes[i].bits / 8;
		rest = f->prefixes[i].bits % 8;
		if (memcmp(a, f->prefixes[i].addr, full))
			continue;
		if (rest && ((a[full] ^ f->prefixes[i].addr[full]) & (0xff00 >> rest)))
			continue;
		return true;
	}
	return false;
}

#endif /* MRC_FILTER_H */
