// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_fuzz: hostile MRC packets from userspace, for the hardening selftest.
 *
 *   mrc_fuzz -t ADDR [-u UDPPORT] [-n COUNT] [-s SEED] [-m MODE] [-p MRCPORT]
 *            [-D DST_ID] [-I SRC_ID] [-P SRC_MRCPORT] [-S SPOOF] [-v]
 *
 * Sends COUNT packets to the MRC tunnel port UDPPORT (default 4797) of ADDR
 * (IPv4 or IPv6), over a plain UDP socket, or with -S over a raw IPv4 socket
 * (IP_HDRINCL) whose source addresses are SPOOF (ADDR or PREFIX/LEN: random
 * inside it, never the network or broadcast address) and whose UDP source
 * ports are random.  The same SEED gives the same packets.
 *
 * MODE:
 *   mix    (default) every category below, mixed:
 *          short    truncated headers (0..47 bytes)
 *          version  any version but MRC_WIRE_VERSION
 *          type     type 0 or >= 7, unknown flag bits, priority > 7
 *          length   len disagreeing with the datagram; SYNACK/HSACK without
 *                   their 16-byte payload; control packets with a payload
 *          badid    SYN naming a receiver, non-SYN naming none, no src_id
 *          noconn   DATA/ACK/SYNACK/FIN with random IDs, PSNs, absurd SACK
 *                   fields and windows
 *          rst      forged RSTs with random IDs
 *          fin      forged FINs with random IDs
 *          hsack    HSACKs with forged cookies (to MRCPORT with -p)
 *          random   random bytes of random length
 *          flip     a well-formed packet with 1..8 flipped bits
 *   rst | fin | hsack | noconn   only that category
 *   syn    SYNs (random IDs, ISNs, source MRC ports) to MRCPORT: a flood
 *   known  packets naming connection DST_ID (-D) from SRC_ID (-I, else
 *          random) and SRC_MRCPORT (-P): DATA, FIN and ACK with PSNs and ACKs
 *          far away, absurd SACK fields (an attacker who guessed the IDs)
 *   knownrst  RSTs naming DST_ID from SRC_ID: no PSN check can help here
 *
 * Prints "sent=N errors=E secs=S pps=R" and the count of each category.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "mrc_lib.h"

#define HDR_LEN		48
#define HS_LEN		16
#define MAX_PKT		1472

enum { T_SYN = 1, T_SYNACK, T_HSACK, T_DATA, T_ACK, T_RST };
enum { F_FIN = 1, F_EOR = 2, F_ACKNOW = 4, F_PROBE = 8, F_CE = 16 };

enum cat {
	C_SHORT, C_VERSION, C_TYPE, C_LENGTH, C_BADID, C_NOCONN, C_RST, C_FIN,
	C_HSACK, C_RANDOM, C_FLIP, C_MIX_MAX,
	C_SYN = C_MIX_MAX, C_KNOWN, C_KNOWNRST, C_MAX,
};

static const char *const cat_names[C_MAX] = {
	"short", "version", "type", "length", "badid", "noconn", "rst", "fin",
	"hsack", "random", "flip", "syn", "known", "knownrst",
};

static uint64_t rng_state;

/* splitmix64: deterministic for a seed, independent of libc */
static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd32(void) { return (uint32_t)rnd64(); }
static uint32_t rnd(uint32_t n) { return n ? rnd32() % n : 0; }
static uint32_t rnd_nz32(void) { uint32_t v; do v = rnd32(); while (!v); return v; }

/* Values that break arithmetic more often than uniform ones do. */
static uint32_t nasty32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff,
		0xffff, 0x10000, 64, 65, 8192, 8193, 0xffffe000,
	};

	return rnd(2) ? rnd32() : v[rnd(sizeof(v) / sizeof(v[0]))];
}

static uint64_t nasty64(void)
{
	static const uint64_t v[] = {
		0, 1, ~0ULL, 0x8000000000000000ULL, 0x7fffffffffffffffULL,
		0x5555555555555555ULL, 0xaaaaaaaaaaaaaaaaULL,
	};

	return rnd(2) ? rnd64() : v[rnd(sizeof(v) / sizeof(v[0]))];
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }

static struct {
	int mode;
	uint16_t mrcport;		/* 0: random */
	uint32_t dst_id, src_id;
	int has_dst, has_src;
	uint16_t src_mrcport;		/* 0: random */
} o;

static uint16_t dport_pick(void)
{
	return o.mrcport && rnd(4) ? o.mrcport : rnd32();
}

/*
 * A well-formed header of @type with random fields; the payload (plen bytes,
 * random) follows.  Return: datagram length.
 */
static int well_formed(uint8_t *b, int type, int flags, int plen)
{
	uint32_t dst = rnd_nz32();

	if (type == T_SYN)
		dst = 0;
	memset(b, 0, HDR_LEN);
	b[0] = MRC_WIRE_VERSION;
	b[1] = type;
	b[2] = flags;
	b[3] = rnd(8);
	put16(b + 4, o.src_mrcport ? o.src_mrcport : rnd32());
	put16(b + 6, dport_pick());
	put32(b + 8, rnd_nz32());
	put32(b + 12, dst);
	put32(b + 16, nasty32());
	put32(b + 20, nasty32());
	put64(b + 24, nasty64());
	put32(b + 32, nasty32());
	put32(b + 36, nasty32());
	put32(b + 40, nasty32());
	put16(b + 44, rnd32());
	put16(b + 46, plen);
	for (int i = 0; i < plen; i++)
		b[HDR_LEN + i] = rnd32();
	return HDR_LEN + plen;
}

static int type_plen(int type)
{
	if (type == T_SYNACK || type == T_HSACK)
		return HS_LEN;
	if (type == T_DATA)
		return rnd(3) ? rnd(1400) : 0;
	return 0;
}

static int valid_flags(void)
{
	return rnd(4) ? 0 : rnd(32);
}

static int build(uint8_t *b, int cat)
{
	int len, type, plen;

	switch (cat) {
	case C_SHORT:
		len = rnd(HDR_LEN);
		for (int i = 0; i < len; i++)
			b[i] = rnd32();
		if (len && rnd(2))
			b[0] = MRC_WIRE_VERSION;
		return len;
	case C_VERSION:
		type = 1 + rnd(6);
		len = well_formed(b, type, valid_flags(), type_plen(type));
		do b[0] = rnd32(); while (b[0] == MRC_WIRE_VERSION);
		return len;
	case C_TYPE:
		type = 1 + rnd(6);
		len = well_formed(b, type, 0, type_plen(type));
		switch (rnd(3)) {
		case 0: b[1] = rnd(2) ? 0 : 7 + rnd(249); break;
		case 1: b[2] = 0x80 | rnd(128); break;
		default: b[3] = 8 + rnd(248); break;
		}
		return len;
	case C_LENGTH:
		type = 1 + rnd(6);
		switch (rnd(3)) {
		case 0:		/* len field disagrees with the datagram */
			plen = type_plen(type);
			len = well_formed(b, type, valid_flags(), plen);
			{
				uint16_t bad;

				do bad = rnd(3) ? rnd(2 * plen + 32) : rnd32();
				while (bad == plen);
				put16(b + 46, bad);
			}
			return len;
		case 1:		/* handshake packet without its payload */
			type = rnd(2) ? T_SYNACK : T_HSACK;
			do plen = rnd(64); while (plen == HS_LEN);
			return well_formed(b, type, 0, plen);
		default:	/* control packet with a payload */
			static const int ctl[] = { T_SYN, T_ACK, T_RST };

			type = ctl[rnd(3)];
			return well_formed(b, type, 0, 1 + rnd(200));
		}
	case C_BADID:
		switch (rnd(3)) {
		case 0:		/* SYN naming a receiver */
			len = well_formed(b, T_SYN, 0, 0);
			put32(b + 12, rnd_nz32());
			return len;
		case 1:		/* not a SYN, naming no receiver */
			type = 2 + rnd(5);
			len = well_formed(b, type, valid_flags(), type_plen(type));
			put32(b + 12, 0);
			return len;
		default:	/* no sender ID (only a RST may) */
			type = 1 + rnd(5);
			len = well_formed(b, type, valid_flags(), type_plen(type));
			put32(b + 8, 0);
			return len;
		}
	case C_NOCONN: {
		static const int t[] = { T_DATA, T_DATA, T_ACK, T_ACK, T_SYNACK };

		type = t[rnd(5)];
		return well_formed(b, type, rnd(32), type_plen(type));
	}
	case C_RST:
		len = well_formed(b, T_RST, rnd(4) ? 0 : rnd(32), 0);
		if (!rnd(8))
			put32(b + 8, 0);	/* a RST refusing a SYN */
		return len;
	case C_FIN:
		return well_formed(b, T_DATA, F_FIN | (rnd(2) ? F_EOR : 0),
				   rnd(2) ? 0 : rnd(200));
	case C_HSACK:
		return well_formed(b, T_HSACK, 0, HS_LEN);
	case C_RANDOM:
		len = rnd(MAX_PKT + 1);
		for (int i = 0; i < len; i++)
			b[i] = rnd32();
		if (len && rnd(2))
			b[0] = MRC_WIRE_VERSION;
		return len;
	case C_FLIP:
		type = 1 + rnd(6);
		len = well_formed(b, type, valid_flags(), type_plen(type));
		for (int n = 1 + rnd(8); n; n--) {
			int bit = rnd(8 * (rnd(2) ? HDR_LEN : len));

			b[bit / 8] ^= 1 << (bit % 8);
		}
		return len;
	case C_SYN:
		len = well_formed(b, T_SYN, 0, 0);
		put16(b + 6, o.mrcport ? o.mrcport : rnd32());
		put32(b + 20, 0);
		put64(b + 24, 0);
		return len;
	case C_KNOWN: {
		static const int t[] = { T_DATA, T_DATA, T_ACK, T_ACK };

		type = t[rnd(4)];
		len = well_formed(b, type, rnd(32), type_plen(type));
		if (!rnd(4))
			b[2] |= F_FIN;
		put32(b + 12, o.dst_id);
		if (o.has_src)
			put32(b + 8, o.src_id);
		return len;
	}
	case C_KNOWNRST:
		len = well_formed(b, T_RST, 0, 0);
		put32(b + 12, o.dst_id);
		if (o.has_src)
			put32(b + 8, o.src_id);
		return len;
	}
	return 0;
}

static uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

static uint32_t csum_add(uint32_t s, const uint8_t *p, int len)
{
	for (int i = 0; i + 1 < len; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (len & 1)
		s += p[len - 1] << 8;
	return s;
}

static int parse_mode(const char *s)
{
	if (!strcmp(s, "mix"))
		return -1;
	for (int i = 0; i < C_MAX; i++)
		if (!strcmp(s, cat_names[i]))
			return i;
	fprintf(stderr, "unknown mode %s\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	static uint8_t pkt[20 + 8 + MAX_PKT + 64];
	unsigned long long count = 100000, sent = 0, errors = 0, seed = 1;
	unsigned long long per_cat[C_MAX] = { 0 };
	const char *target = NULL, *spoof = NULL;
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (void *)&ss;
	struct sockaddr_in6 *s6 = (void *)&ss;
	uint32_t spoof_net = 0, spoof_mask = 0xffffffff;
	int opt, fd, udpport = 4797, verbose = 0;
	socklen_t sl;
	double t0, t;

	o.mode = -1;
	while ((opt = getopt(argc, argv, "t:u:n:s:m:p:D:I:P:S:v")) != -1) {
		switch (opt) {
		case 't': target = optarg; break;
		case 'u': udpport = atoi(optarg); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'm': o.mode = parse_mode(optarg); break;
		case 'p': o.mrcport = atoi(optarg); break;
		case 'D': o.dst_id = strtoul(optarg, NULL, 0); o.has_dst = 1; break;
		case 'I': o.src_id = strtoul(optarg, NULL, 0); o.has_src = 1; break;
		case 'P': o.src_mrcport = atoi(optarg); break;
		case 'S': spoof = optarg; break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of mrc_fuzz.c\n");
			return 2;
		}
	}
	if (!target) {
		fprintf(stderr, "need -t ADDR\n");
		return 2;
	}
	if ((o.mode == C_KNOWN || o.mode == C_KNOWNRST) && !o.has_dst) {
		fprintf(stderr, "mode known needs -D DST_ID\n");
		return 2;
	}
	rng_state = seed;
	if (inet_pton(AF_INET6, target, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(udpport);
		sl = sizeof(*s6);
	} else if (inet_pton(AF_INET, target, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(udpport);
		sl = sizeof(*s4);
	} else {
		fprintf(stderr, "bad address %s\n", target);
		return 2;
	}
	if (spoof) {
		char buf[64], *slash;
		struct in_addr a;
		int bits = 32;

		if (ss.ss_family != AF_INET) {
			fprintf(stderr, "-S needs an IPv4 target\n");
			return 2;
		}
		snprintf(buf, sizeof(buf), "%s", spoof);
		slash = strchr(buf, '/');
		if (slash) {
			*slash = 0;
			bits = atoi(slash + 1);
		}
		if (inet_pton(AF_INET, buf, &a) != 1 || bits < 1 || bits > 32) {
			fprintf(stderr, "bad spoof prefix %s\n", spoof);
			return 2;
		}
		spoof_mask = bits == 32 ? 0xffffffff : ~(0xffffffffU >> bits);
		spoof_net = ntohl(a.s_addr) & spoof_mask;
		fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);	/* implies IP_HDRINCL */
		s4->sin_port = 0;
	} else {
		fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	}
	if (fd < 0) {
		perror("socket");
		return 1;
	}

	t0 = mrc_now_s();
	for (unsigned long long i = 0; i < count; i++) {
		int cat = o.mode >= 0 ? o.mode : (int)rnd(C_MIX_MAX);
		uint8_t *mrc = spoof ? pkt + 28 : pkt;
		int len = build(mrc, cat);
		ssize_t w;

		per_cat[cat]++;
		if (spoof) {
			struct iphdr *ip = (void *)pkt;
			struct udphdr *uh = (void *)(pkt + 20);
			uint32_t host = spoof_mask == 0xffffffff ? 0 : rnd(~spoof_mask);
			uint32_t src, s;

			if (spoof_mask != 0xffffffff && spoof_mask != 0xfffffffe &&
			    (!host || host == ~spoof_mask))
				host = 1;
			src = spoof_net | host;
			memset(ip, 0, sizeof(*ip));
			ip->version = 4;
			ip->ihl = 5;
			ip->tot_len = htons(28 + len);
			ip->id = htons(rnd32());
			ip->frag_off = htons(IP_DF);
			ip->ttl = 64;
			ip->protocol = IPPROTO_UDP;
			ip->saddr = htonl(src);
			ip->daddr = s4->sin_addr.s_addr;
			/* the kernel fills in the IP checksum */
			uh->source = htons(49152 + rnd(16384));
			uh->dest = htons(udpport);
			uh->len = htons(8 + len);
			uh->check = 0;
			s = csum_add(0, (uint8_t *)&ip->saddr, 8);
			s += IPPROTO_UDP + 8 + len;
			s = csum_add(s, pkt + 20, 8 + len);
			uh->check = htons(csum_fold(s)) ?: 0xffff;
			w = sendto(fd, pkt, 28 + len, 0, (void *)&ss, sl);
		} else {
			w = sendto(fd, mrc, len, 0, (void *)&ss, sl);
		}
		if (w < 0) {
			errors++;
			if (verbose && errors < 10)
				perror("sendto");
			if (errno == ENOBUFS || errno == EAGAIN)
				usleep(100);
		} else {
			sent++;
		}
	}
	t = mrc_now_s() - t0;
	printf("sent=%llu errors=%llu secs=%.2f pps=%.0f seed=%llu\n", sent, errors, t,
	       t > 0 ? sent / t : 0, seed);
	printf("categories:");
	for (int i = 0; i < C_MAX; i++)
		if (per_cat[i])
			printf(" %s=%llu", cat_names[i], per_cat[i]);
	printf("\n");
	return 0;
}
