// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit datapath test: real AF_MRC kernel sockets over loopback, so that
 * KASAN and lockdep watch the handshake, send/receive, ACK, close and
 * teardown paths, not only the pure helpers.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/uio.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "protocol.h"

#define XFER_BYTES	(256 * 1024)

static int mrc_dp_lo_up(void)
{
	int err;

	rtnl_lock();
	err = dev_change_flags(init_net.loopback_dev,
			       init_net.loopback_dev->flags | IFF_UP, NULL);
	rtnl_unlock();
	return err;
}

static u8 mrc_dp_pattern(size_t i)
{
	return (u8)(i * 7 + (i >> 11));
}

static void mrc_dp_transfer_test(struct kunit *test)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(4000),
	};
	struct socket *lsock, *csock, *asock;
	size_t sent = 0, got = 0, bad = 0;
	unsigned long deadline;
	u8 *buf;
	int err;

	KUNIT_ASSERT_EQ(test, mrc_dp_lo_up(), 0);
	buf = kunit_kzalloc(test, 8192, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, mrc_family_nr, SOCK_STREAM, 0,
					       &lsock), 0);
	KUNIT_ASSERT_EQ(test, kernel_bind(lsock, (struct sockaddr *)&addr, sizeof(addr)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(lsock, 4), 0);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, mrc_family_nr, SOCK_STREAM, 0,
					       &csock), 0);
	err = kernel_connect(csock, (struct sockaddr *)&addr, sizeof(addr), 0);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, kernel_accept(lsock, &asock, 0), 0);

	/* interleave non-blocking sends and receives in this one thread */
	deadline = jiffies + 60 * HZ;
	while (got < XFER_BYTES && time_before(jiffies, deadline)) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		struct kvec iov;
		int n, i;

		if (sent < XFER_BYTES) {
			n = min_t(size_t, 4096, XFER_BYTES - sent);
			for (i = 0; i < n; i++)
				buf[i] = mrc_dp_pattern(sent + i);
			iov = (struct kvec){ buf, n };
			n = kernel_sendmsg(csock, &msg, &iov, 1, n);
			if (n > 0)
				sent += n;
		}
		iov = (struct kvec){ buf + 4096, 4096 };
		msg = (struct msghdr){ .msg_flags = MSG_DONTWAIT };
		n = kernel_recvmsg(asock, &msg, &iov, 1, 4096, MSG_DONTWAIT);
		if (n > 0) {
			for (i = 0; i < n; i++)
				bad += buf[4096 + i] != mrc_dp_pattern(got + i);
			got += n;
		} else {
			usleep_range(200, 400);
		}
	}
	KUNIT_EXPECT_EQ(test, sent, (size_t)XFER_BYTES);
	KUNIT_EXPECT_EQ(test, got, (size_t)XFER_BYTES);
	KUNIT_EXPECT_EQ(test, bad, (size_t)0);

	/* orderly close from the client: the server reads EOF */
	KUNIT_EXPECT_EQ(test, kernel_sock_shutdown(csock, SHUT_WR), 0);
	deadline = jiffies + 10 * HZ;
	for (;;) {
		struct msghdr msg = {};
		struct kvec iov = { buf, 16 };
		int n = kernel_recvmsg(asock, &msg, &iov, 1, 16, MSG_DONTWAIT);

		if (n != -EAGAIN || time_after(jiffies, deadline)) {
			KUNIT_EXPECT_EQ(test, n, 0);
			break;
		}
		usleep_range(500, 1000);
	}
	sock_release(asock);
	sock_release(csock);
	sock_release(lsock);
}

static void mrc_dp_refused_test(struct kunit *test)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(4999),
	};
	struct socket *sock;

	KUNIT_ASSERT_EQ(test, mrc_dp_lo_up(), 0);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, mrc_family_nr, SOCK_STREAM, 0,
					       &sock), 0);
	KUNIT_EXPECT_EQ(test, kernel_connect(sock, (struct sockaddr *)&addr, sizeof(addr), 0),
			-ECONNREFUSED);
	sock_release(sock);
}

static struct kunit_case mrc_dp_cases[] = {
	KUNIT_CASE(mrc_dp_transfer_test),
	KUNIT_CASE(mrc_dp_refused_test),
	{}
};

static struct kunit_suite mrc_dp_suite = {
	.name = "mrc_datapath",
	.test_cases = mrc_dp_cases,
};

kunit_test_suites(&mrc_dp_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit datapath tests for MRC");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
