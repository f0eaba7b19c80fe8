// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_msg: request/response over AF_MRC SOCK_SEQPACKET with a per-message
 * priority (cmsg SOL_MRC/MRC_PRIORITY), for the priority selftest.
 *   mrc_msg -l [-p PORT] [-P PRIO]           echo server (one connection)
 *   mrc_msg -c ADDR [-p PORT] [-n COUNT] [-s SIZE] [-P PRIO]
 * The client prints "count=N p50_us= p99_us= max_us=".  The server echoes
 * with PRIO too, so that an exchange is urgent both ways.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "mrc_lib.h"

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static socklen_t addr_of(const char *host, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (void *)ss;
	struct sockaddr_in *s4 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (host && inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	if (host && inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		exit(2);
	return sizeof(*s4);
}

static ssize_t send_prio(int fd, void *buf, size_t len, int prio)
{
	char ctl[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_MRC;
	c->cmsg_type = MRC_PRIORITY;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &prio, sizeof(int));
	return sendmsg(fd, &m, MSG_NOSIGNAL);
}

int main(int argc, char **argv)
{
	int opt, port = 7100, count = 200, size = 1024, prio = 0, listen_mode = 0, fd;
	static char buf[1 << 16];
	const char *host = NULL;
	struct sockaddr_storage ss;
	socklen_t len;

	while ((opt = getopt(argc, argv, "lc:p:n:s:P:")) != -1) {
		switch (opt) {
		case 'l': listen_mode = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'P': prio = atoi(optarg); break;
		default: return 2;
		}
	}
	len = addr_of(host, port, &ss);
	fd = socket(mrc_family(), SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (listen_mode) {
		int c;
		ssize_t n;

		if (bind(fd, (void *)&ss, len) || listen(fd, 1)) {
			perror("bind");
			return 1;
		}
		printf("listening\n");
		fflush(stdout);
		c = accept(fd, NULL, NULL);
		while ((n = recv(c, buf, sizeof(buf), 0)) > 0)
			if ((prio ? send_prio(c, buf, n, prio) : send(c, buf, n, MSG_NOSIGNAL)) != n)
				return 1;
		return n < 0;
	}
	if (connect(fd, (void *)&ss, len)) {
		printf("error=%s\n", strerror(errno));
		return 1;
	}
	long long *lat = calloc(count, sizeof(*lat));

	for (int i = 0; i < count; i++) {
		long long t0 = now_us();

		memset(buf, i, size);
		if (send_prio(fd, buf, size, prio) != size ||
		    recv(fd, buf, sizeof(buf), 0) != size || buf[size - 1] != (char)i) {
			printf("error=%s at %d\n", strerror(errno), i);
			return 1;
		}
		lat[i] = now_us() - t0;
	}
	qsort(lat, count, sizeof(*lat), cmp);
	printf("count=%d p50_us=%lld p99_us=%lld max_us=%lld\n", count, lat[count / 2],
	       lat[count * 99 / 100], lat[count - 1]);
	return 0;
}
