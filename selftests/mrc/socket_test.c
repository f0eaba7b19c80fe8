// SPDX-License-Identifier: GPL-2.0-only
/* Socket creation and its errnos for AF_MRC. */
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <fcntl.h>
#include "kselftest_harness.h"
#include "mrc_lib.h"

TEST(create_stream_and_seqpacket)
{
	int types[] = { SOCK_STREAM, SOCK_SEQPACKET };

	for (int i = 0; i < 2; i++) {
		int fd = socket(mrc_family(), types[i], 0);
		int val = -1;
		socklen_t len = sizeof(val);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &val, &len));
		EXPECT_EQ(mrc_family(), val);
		ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_TYPE, &val, &len));
		EXPECT_EQ(types[i], val);
		EXPECT_EQ(0, close(fd));
	}
}

TEST(create_nonblock_cloexec)
{
	int fd = socket(mrc_family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ASSERT_LE(0, fd);
	EXPECT_NE(0, fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_NE(0, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

TEST(unsupported_type)
{
	EXPECT_EQ(-1, socket(mrc_family(), SOCK_DGRAM, 0));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
	EXPECT_EQ(-1, socket(mrc_family(), SOCK_RAW, 0));
	EXPECT_EQ(ESOCKTNOSUPPORT, errno);
}

TEST(unsupported_protocol)
{
	EXPECT_EQ(-1, socket(mrc_family(), SOCK_STREAM, 6));
	EXPECT_EQ(EPROTONOSUPPORT, errno);
}

TEST(live_family_number)
{
	/* the module reports the number it registered; 18 unless overridden */
	int fam = mrc_family();

	EXPECT_LT(0, fam);
	EXPECT_GT(46, fam);
}

TEST_HARNESS_MAIN
