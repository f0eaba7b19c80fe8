// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_rr: request/response latency over AF_MRC (SOCK_STREAM), TCP or MPTCP.
 *   mrc_rr -l [-6] [-p PORT] [-T|-M]          echo server (one connection
 *                                             after another, until killed)
 *   mrc_rr -c ADDR [-p PORT] [-T|-M] [-s SIZE] [-n N] [-w WARMUP]
 *          [-B SPORT] [-r RAWFILE]
 * The client sends N requests of SIZE bytes one after another (each with a
 * 4-byte length prefix); the server echoes SIZE bytes back.  The client
 * times each exchange and prints one line:
 *   "rr n=N size=S mean_us= p50_us= p90_us= p99_us= p999_us= max_us="
 * -B binds the client's source port (TCP: pins its ECMP path).  -r writes
 * every sample (microseconds, in order) to RAWFILE.  Both ends set
 * TCP_NODELAY / MRC_NODELAY.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/mrc.h>
#include "mrc_lib.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int open_socket(int af, int kind)
{
	int one = 1, fd;

	if (kind == 'T' || kind == 'M') {
		fd = socket(af, SOCK_STREAM, kind == 'M' ? IPPROTO_MPTCP : 0);
		if (fd >= 0)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return fd;
	}
	fd = socket(mrc_family(), SOCK_STREAM, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_MRC, MRC_NODELAY, &one, sizeof(one));
	return fd;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = recv(fd, (char *)buf + off, len - off, 0);

		if (n <= 0)
			return n < 0 ? -1 : (off ? -1 : 0);
		off += n;
	}
	return 1;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0)
			return -1;
		off += n;
	}
	return 0;
}

static void serve(int fd)
{
	static unsigned char buf[1 << 20];
	uint32_t len;

	for (;;) {
		if (read_full(fd, &len, sizeof(len)) <= 0)
			break;
		len = ntohl(len);
		if (len > sizeof(buf) || read_full(fd, buf, len) <= 0 ||
		    write_full(fd, buf, len))
			break;
	}
	close(fd);
}

static int server(int port, int v6, int kind)
{
	struct sockaddr_storage ss;
	socklen_t alen = mrc_make_addr(NULL, port, v6, &ss);
	int one = 1, lfd, fd;

	lfd = open_socket(ss.ss_family, kind);
	if (lfd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (void *)&ss, alen) || listen(lfd, 4)) {
		perror("bind/listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("accept");
			return 1;
		}
		serve(fd);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted v[n] */
static double pct(const double *v, int n, double p)
{
	int k = (int)(p / 100.0 * n + 0.999999) - 1;

	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static int client(const char *host, int port, int kind, int size, int n, int warmup,
		  int sport, const char *raw)
{
	struct sockaddr_storage ss, src;
	socklen_t alen = mrc_make_addr(host, port, 0, &ss);
	unsigned char *req, *resp;
	double *lat, sum = 0;
	int fd, one = 1, i;
	uint32_t hdr = htonl(size);

	fd = open_socket(ss.ss_family, kind);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (sport) {
		memset(&src, 0, sizeof(src));
		src.ss_family = ss.ss_family;
		if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&src)->sin6_port = htons(sport);
		else
			((struct sockaddr_in *)&src)->sin_port = htons(sport);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (void *)&src, alen)) {
			printf("error=bind:%s\n", strerror(errno));
			return 1;
		}
	}
	if (connect(fd, (void *)&ss, alen)) {
		printf("error=connect:%s\n", strerror(errno));
		return 1;
	}
	req = malloc(size + 4);
	resp = malloc(size);
	lat = calloc(n, sizeof(*lat));
	if (!req || !resp || !lat)
		return 1;
	memcpy(req, &hdr, 4);
	for (i = 0; i < size; i++)
		req[4 + i] = (unsigned char)(i * 13 + 7);
	for (i = -warmup; i < n; i++) {
		double t0 = now_us(), dt;

		if (write_full(fd, req, size + 4) || read_full(fd, resp, size) <= 0) {
			printf("error=%s done=%d\n", strerror(errno), i);
			return 1;
		}
		dt = now_us() - t0;
		if (memcmp(resp, req + 4, size)) {
			printf("error=corrupt response at %d\n", i);
			return 1;
		}
		if (i >= 0) {
			lat[i] = dt;
			sum += dt;
		}
	}
	if (kind != 'A') {
		/* no TIME_WAIT: -B reuses the same client port run after run */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(fd);
	if (raw) {
		FILE *f = fopen(raw, "w");

		if (f) {
			for (i = 0; i < n; i++)
				fprintf(f, "%.1f\n", lat[i]);
			fclose(f);
		}
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("rr n=%d size=%d mean_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f\n",
	       n, size, sum / n, pct(lat, n, 50), pct(lat, n, 90), pct(lat, n, 99),
	       pct(lat, n, 99.9), lat[n - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	int opt, listen_mode = 0, port = 7100, v6 = 0, kind = 'A';
	int size = 1024, n = 1000, warmup = 10, sport = 0;
	const char *host = NULL, *raw = NULL;

	while ((opt = getopt(argc, argv, "lc:p:6TMs:n:w:B:r:")) != -1) {
		switch (opt) {
		case 'l': listen_mode = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case '6': v6 = 1; break;
		case 'T': kind = 'T'; break;
		case 'M': kind = 'M'; break;
		case 's': size = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 'B': sport = atoi(optarg); break;
		case 'r': raw = optarg; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of mrc_rr.c\n");
			return 2;
		}
	}
	if (size < 1 || size > (1 << 20) || n < 1) {
		fprintf(stderr, "size must be 1..1048576, n >= 1\n");
		return 2;
	}
	if (listen_mode)
		return server(port, v6, kind);
	if (!host) {
		fprintf(stderr, "need -l or -c ADDR\n");
		return 2;
	}
	return client(host, port, kind, size, n, warmup, sport, raw);
}
