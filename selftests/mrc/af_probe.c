// SPDX-License-Identifier: GPL-2.0-only
/* Opens one AF_MRC socket: used to show that socket() autoloads mrc.ko. */
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include "mrc_lib.h"

int main(void)
{
	int fd = socket(mrc_family(), SOCK_STREAM, 0);

	if (fd < 0) {
		perror("socket(AF_MRC)");
		return 1;
	}
	close(fd);
	return 0;
}
