/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the C selftests. */
#ifndef MRC_SELFTEST_LIB_H
#define MRC_SELFTEST_LIB_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/mrc.h>

/*
 * The wire version the crafted-packet tools speak: net/mrc/wire.h's
 * MRC_VERSION (the wire format is not uapi; sockets never see it).
 */
#define MRC_WIRE_VERSION	4

/* The family number the loaded module registered (module parameter). */
static inline int mrc_family(void)
{
	FILE *f = fopen("/sys/module/mrc/parameters/family", "r");
	int fam = AF_MRC;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_MRC;
		fclose(f);
	}
	return fam;
}

/* Loopback socket address of @family (AF_INET or AF_INET6) and @port. */
static inline socklen_t mrc_loopback(int family, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (void *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (void *)ss;

	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s4->sin_port = htons(port);
	return sizeof(*s4);
}

/*
 * Socket address for @host (IPv4 or IPv6 literal) and @port; with no host,
 * the wildcard of IPv6 if @v6, else IPv4.  Exits on a bad literal.
 */
static inline socklen_t mrc_make_addr(const char *host, int port, int v6,
				      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (void *)ss;
	struct sockaddr_in *s4 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (host ? inet_pton(AF_INET6, host, &s6->sin6_addr) == 1 : v6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (host && inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", host);
		exit(2);
	}
	return sizeof(*s4);
}

/* An AF_MRC listener of @type on loopback @port, or -1. */
static inline int mrc_listen_loopback(int family, int type, int port, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_loopback(family, port, &ss);
	int fd = socket(mrc_family(), type, 0);

	if (fd < 0 || bind(fd, (void *)&ss, len) || listen(fd, backlog))
		return -1;
	return fd;
}

/* An AF_MRC socket of @type connected to loopback @port, or -1 (errno set). */
static inline int mrc_connect_loopback(int family, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_loopback(family, port, &ss);
	int fd = socket(mrc_family(), type, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (void *)&ss, len)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Monotonic time, seconds. */
static inline double mrc_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The module's reference count: one or two per live socket. */
static inline int mrc_module_refcnt(void)
{
	FILE *f = fopen("/sys/module/mrc/refcnt", "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Waits up to @secs for the module's refcount to drop to at most @want. */
static inline int mrc_wait_refcnt(int want, int secs)
{
	double end = mrc_now_s() + secs;
	int n;

	while ((n = mrc_module_refcnt()) > want && mrc_now_s() < end)
		usleep(100 * 1000);
	return n;
}

/* One counter of /proc/net/mrc_stats (this namespace), -1 if absent. */
static inline long long mrc_stat(const char *name)
{
	FILE *f = fopen("/proc/net/mrc_stats", "r");
	long long v = -1, x;
	char k[64];

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", k, &x) == 2) {
		if (!strcmp(k, name)) {
			v = x;
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * MRC's line of /proc/net/protocols: sockets allocated, pages charged to
 * the protocol pool (net.mrc.mem) and whether it is under pressure.
 * Return: 0, or -1 if the line is missing.
 */
static inline int mrc_proto_usage(long *sockets, long *pages, int *pressure)
{
	FILE *f = fopen("/proc/net/protocols", "r");
	char line[512], name[32], press[8];
	unsigned int size;
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %u %ld %ld %7s", name, &size, sockets, pages, press) == 5 &&
		    !strcmp(name, "MRC")) {
			*pressure = !strcmp(press, "yes");
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * Pages the pool's global count may be off by: each CPU batches up to
 * net.core.mem_pcpu_rsv pages before it updates the shared counter.
 */
static inline long mrc_proto_pages_slack(void)
{
	FILE *f = fopen("/proc/sys/net/core/mem_pcpu_rsv", "r");
	long rsv = 256;

	if (f) {
		if (fscanf(f, "%ld", &rsv) != 1)
			rsv = 256;
		fclose(f);
	}
	return rsv * sysconf(_SC_NPROCESSORS_ONLN);
}

#endif
