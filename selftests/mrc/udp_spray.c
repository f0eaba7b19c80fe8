// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sends UDP datagrams from a range of source ports, for the fabric selftest:
 *   udp_spray DST_ADDR DST_PORT FIRST_SPORT NPORTS PACKETS_PER_PORT
 * DST_ADDR may be IPv4 or IPv6.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage dst = {}, src = {};
	struct sockaddr_in6 *d6 = (void *)&dst, *s6 = (void *)&src;
	struct sockaddr_in *d4 = (void *)&dst, *s4 = (void *)&src;
	int first, nports, npkts, fam, one = 1;
	char payload[64] = "mrc fabric probe";
	socklen_t len;

	if (argc != 6) {
		fprintf(stderr, "usage: %s DST DPORT FIRST_SPORT NPORTS PKTS\n", argv[0]);
		return 2;
	}
	first = atoi(argv[3]);
	nports = atoi(argv[4]);
	npkts = atoi(argv[5]);
	if (inet_pton(AF_INET6, argv[1], &d6->sin6_addr) == 1) {
		fam = AF_INET6;
		d6->sin6_family = s6->sin6_family = AF_INET6;
		d6->sin6_port = htons(atoi(argv[2]));
		len = sizeof(*d6);
	} else if (inet_pton(AF_INET, argv[1], &d4->sin_addr) == 1) {
		fam = AF_INET;
		d4->sin_family = s4->sin_family = AF_INET;
		d4->sin_port = htons(atoi(argv[2]));
		len = sizeof(*d4);
	} else {
		fprintf(stderr, "bad address %s\n", argv[1]);
		return 2;
	}
	for (int p = first; p < first + nports; p++) {
		int fd = socket(fam, SOCK_DGRAM, 0);

		if (fd < 0) {
			perror("socket");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fam == AF_INET6)
			s6->sin6_port = htons(p);
		else
			s4->sin_port = htons(p);
		if (bind(fd, (void *)&src, len)) {
			perror("bind");
			return 1;
		}
		for (int i = 0; i < npkts; i++) {
			if (sendto(fd, payload, sizeof(payload), 0, (void *)&dst, len) < 0) {
				perror("sendto");
				return 1;
			}
		}
		close(fd);
	}
	return 0;
}
