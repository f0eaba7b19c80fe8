// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_hold: keeps AF_MRC connections open for the control-plane selftests.
 *   mrc_hold -l [-6] -p PORT                 accept connections, discard data
 *   mrc_hold -c ADDR -p PORT [-t SECS] [-r KBPS] [-e EVS]
 * The client prints "connected port N" (its local port) once connect()
 * returns, then sends about
 * KBPS kilobytes a second (default 256) for SECS seconds (default 30) and
 * closes; it prints "done sent=N" at the end.  -e sets MRC_EV_COUNT to EVS
 * on the connected socket (a redraw of a live connection's EVs) and prints
 * "evs set" (or the error).  The listener prints
 * "listening", serves every connection in its own process and runs until
 * killed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "mrc_lib.h"

static int serve(int port, int v6)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(NULL, port, v6, &ss);
	static char buf[65536];
	int fd, c;

	signal(SIGCHLD, SIG_IGN);
	fd = socket(mrc_family(), SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (void *)&ss, len) || listen(fd, 64)) {
		perror("listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			perror("accept");
			return 1;
		}
		if (fork() == 0) {
			close(fd);
			while (read(c, buf, sizeof(buf)) > 0)
				;
			_exit(0);
		}
		close(c);
	}
}

static int client(const char *host, int port, double secs, int kbps, int evs)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(host, port, 0, &ss);
	static char buf[8192];
	unsigned long long sent = 0;
	double start, t;
	int fd;

	fd = socket(mrc_family(), SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (void *)&ss, len)) {
		printf("error %s\n", strerror(errno));
		return 1;
	}
	len = sizeof(ss);
	if (getsockname(fd, (void *)&ss, &len)) {
		printf("error getsockname %s\n", strerror(errno));
		return 1;
	}
	/* the same offset in sockaddr_in and sockaddr_in6 */
	printf("connected port %u\n", ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (evs) {
		if (setsockopt(fd, SOL_MRC, MRC_EV_COUNT, &evs, sizeof(evs))) {
			printf("error MRC_EV_COUNT %s\n", strerror(errno));
			return 1;
		}
		printf("evs set\n");
	}
	fflush(stdout);
	memset(buf, 0x5a, sizeof(buf));
	start = mrc_now_s();
	while ((t = mrc_now_s() - start) < secs) {
		if (sent < t * kbps * 1024) {
			ssize_t n = write(fd, buf, sizeof(buf));

			if (n < 0) {
				printf("error %s\n", strerror(errno));
				return 1;
			}
			sent += n;
		} else {
			usleep(5000);
		}
	}
	close(fd);
	printf("done sent=%llu\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	int opt, listen_mode = 0, v6 = 0, port = 7000, kbps = 256, evs = 0;
	const char *host = NULL;
	double secs = 30;

	while ((opt = getopt(argc, argv, "l6c:p:t:r:e:")) != -1) {
		switch (opt) {
		case 'l': listen_mode = 1; break;
		case '6': v6 = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'r': kbps = atoi(optarg); break;
		case 'e': evs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: mrc_hold -l [-6] -p PORT | -c ADDR -p PORT [-t SECS] [-r KBPS] [-e EVS]\n");
			return 2;
		}
	}
	if (listen_mode)
		return serve(port, v6);
	if (!host) {
		fprintf(stderr, "mrc_hold: -l or -c ADDR\n");
		return 2;
	}
	return client(host, port, secs, kbps, evs);
}
