// SPDX-License-Identifier: GPL-2.0-only
/*
 * Data transfer over AF_MRC on loopback: handshake, stream integrity,
 * message boundaries, orderly close, refused connections.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "kselftest_harness.h"
#include "mrc_lib.h"

static socklen_t loopback(int family, int port, struct sockaddr_storage *ss)
{
	return mrc_loopback(family, port, ss);
}

static int listener(int family, int type, int port)
{
	return mrc_listen_loopback(family, type, port, 16);
}

static int connect_to(int family, int type, int port)
{
	return mrc_connect_loopback(family, type, port);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + (i >> 11));
}

struct sender_arg {
	int fd;
	size_t len;
};

static void *send_pattern(void *p)
{
	struct sender_arg *a = p;
	static unsigned char buf[65536];
	size_t off = 0;

	while (off < a->len) {
		size_t n = a->len - off < sizeof(buf) ? a->len - off : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(off + i);
		w = send(a->fd, buf, n, MSG_NOSIGNAL);
		if (w <= 0)
			return (void *)1;
		off += w;
	}
	shutdown(a->fd, SHUT_WR);
	return NULL;
}

FIXTURE(pair) {
	int lfd, cfd, afd;
};

FIXTURE_VARIANT(pair) {
	int family;
	int type;
};

FIXTURE_VARIANT_ADD(pair, stream4) { .family = AF_INET, .type = SOCK_STREAM };
FIXTURE_VARIANT_ADD(pair, stream6) { .family = AF_INET6, .type = SOCK_STREAM };
FIXTURE_VARIANT_ADD(pair, seqpacket4) { .family = AF_INET, .type = SOCK_SEQPACKET };

FIXTURE_SETUP(pair)
{
	self->lfd = listener(variant->family, variant->type, 5000);
	ASSERT_LE(0, self->lfd);
	self->cfd = connect_to(variant->family, variant->type, 5000);
	ASSERT_LE(0, self->cfd) TH_LOG("connect: %s", strerror(errno));
	self->afd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->afd);
}

FIXTURE_TEARDOWN(pair)
{
	close(self->cfd);
	close(self->afd);
	close(self->lfd);
}

TEST_F(pair, addresses)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);

	ASSERT_EQ(0, getsockname(self->cfd, (void *)&a, &la));
	ASSERT_EQ(0, getpeername(self->afd, (void *)&b, &lb));
	ASSERT_EQ(la, lb);
	EXPECT_EQ(0, memcmp(&a, &b, la));
	EXPECT_EQ(variant->family, a.ss_family);
}

TEST_F(pair, small_message)
{
	char buf[64] = {};

	ASSERT_EQ(5, send(self->cfd, "hello", 5, 0));
	ASSERT_EQ(5, recv(self->afd, buf, sizeof(buf), 0));
	EXPECT_STREQ("hello", buf);
	ASSERT_EQ(3, send(self->afd, "bye", 3, 0));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(3, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_STREQ("bye", buf);
}

TEST_F(pair, bulk_integrity_and_eof)
{
	struct sender_arg a = { .fd = self->cfd, .len = 8 << 20 };
	static unsigned char buf[100000];
	size_t got = 0, bad = 0;
	pthread_t th;
	void *ret;

	if (variant->type != SOCK_STREAM)
		SKIP(return, "n/a: stream only");
	ASSERT_EQ(0, pthread_create(&th, NULL, send_pattern, &a));
	for (;;) {
		ssize_t n = recv(self->afd, buf, sizeof(buf), 0);

		ASSERT_LE(0, n) TH_LOG("recv: %s after %zu", strerror(errno), got);
		if (!n)
			break;
		for (ssize_t i = 0; i < n; i++)
			bad += buf[i] != pattern(got + i);
		got += n;
	}
	pthread_join(th, &ret);
	EXPECT_EQ(NULL, ret);
	EXPECT_EQ(a.len, got);
	EXPECT_EQ(0, bad);
}

TEST_F(pair, message_boundaries)
{
	char buf[4096];
	int i;

	if (variant->type != SOCK_SEQPACKET)
		SKIP(return, "n/a: seqpacket only");
	for (i = 1; i <= 5; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		ASSERT_EQ(i * 700, send(self->cfd, buf, i * 700, MSG_EOR));
	}
	for (i = 1; i <= 5; i++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

		ASSERT_EQ(i * 700, recvmsg(self->afd, &m, 0));
		EXPECT_TRUE(m.msg_flags & MSG_EOR);
		EXPECT_EQ('a' + i, buf[i * 700 - 1]);
	}
	/* a short buffer truncates and drops the rest of the message */
	ASSERT_EQ(3000, send(self->cfd, buf, 3000, 0));
	ASSERT_EQ(10, send(self->cfd, buf, 10, 0));
	struct iovec iov = { buf, 100 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	ASSERT_EQ(100, recvmsg(self->afd, &m, 0));
	EXPECT_TRUE(m.msg_flags & MSG_TRUNC);
	ASSERT_EQ(10, recv(self->afd, buf, sizeof(buf), 0));
}

TEST_F(pair, half_close)
{
	char buf[16];

	ASSERT_EQ(0, shutdown(self->cfd, SHUT_WR));
	ASSERT_EQ(0, recv(self->afd, buf, sizeof(buf), 0));
	/* the other direction still works */
	ASSERT_EQ(4, send(self->afd, "more", 4, 0));
	ASSERT_EQ(4, recv(self->cfd, buf, sizeof(buf), 0));
	EXPECT_EQ(-1, send(self->cfd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
}

TEST_F(pair, info)
{
	struct mrc_info info = {};
	socklen_t len = sizeof(info);

	ASSERT_EQ(5, send(self->cfd, "hello", 5, 0));
	ASSERT_EQ(0, getsockopt(self->cfd, SOL_MRC, MRC_INFO, &info, &len));
	EXPECT_EQ(sizeof(info), len);
	EXPECT_EQ(MRC_INFO_VERSION, info.version);
	EXPECT_EQ(MRC_STATE_ESTABLISHED, info.state);
	EXPECT_NE(0, info.local_id);
	EXPECT_LT(0, info.ev_count);
	EXPECT_LT(0, info.mss);
}

TEST(refused)
{
	EXPECT_EQ(-1, connect_to(AF_INET, SOCK_STREAM, 5999));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_EQ(-1, connect_to(AF_INET6, SOCK_STREAM, 5999));
	EXPECT_EQ(ECONNREFUSED, errno);
}

TEST(nonblocking_connect)
{
	int lfd = listener(AF_INET, SOCK_STREAM, 5001);
	struct sockaddr_storage ss;
	socklen_t len = loopback(AF_INET, 5001, &ss);
	int fd = socket(mrc_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int err = -1;
	socklen_t el = sizeof(err);

	ASSERT_LE(0, lfd);
	ASSERT_EQ(-1, connect(fd, (void *)&ss, len));
	ASSERT_EQ(EINPROGRESS, errno);
	ASSERT_EQ(1, poll(&p, 1, 5000));
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el));
	EXPECT_EQ(0, err);
	close(fd);
	close(lfd);
}

TEST_HARNESS_MAIN
