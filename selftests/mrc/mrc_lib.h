/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the C selftests. */
#ifndef MRC_SELFTEST_LIB_H
#define MRC_SELFTEST_LIB_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/mrc.h>

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

#endif
