// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opens one AF_MRC socket: used to show that socket() autoloads mrc.ko.
 * af_probe [FAMILY] opens socket(FAMILY, SOCK_STREAM, 0) instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include "mrc_lib.h"

int main(int argc, char **argv)
{
	int fam = argc > 1 ? atoi(argv[1]) : mrc_family();
	int fd = socket(fam, SOCK_STREAM, 0);

	if (fd < 0) {
		fprintf(stderr, "socket(%d): ", fam);
		perror(NULL);
		return 1;
	}
	close(fd);
	return 0;
}
