// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit datapath test: real AF_MRC kernel sockets over loopback, so that
 * KASAN and lockdep watch the handshake, send/receive, ACK, close and
 * teardown paths, not only the pure helpers.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
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

/* Loopback's MTU; the previous one is returned. */
static int mrc_dp_lo_mtu(int mtu)
{
	struct net_device *lo = init_net.loopback_dev;
	int old;

	rtnl_lock();
	old = lo->mtu;
	if (dev_set_mtu(lo, mtu))
		old = -1;
	rtnl_unlock();
	return old;
}

/*
 * Sends @bytes from one kernel socket to another on @port, writes cycling
 * through @wsize[] (0-terminated), in this one thread with non-blocking
 * sends and receives interleaved; checks every byte, then an orderly close.
 */
static void mrc_dp_transfer(struct kunit *test, u16 port, size_t bytes,
			    const unsigned int *wsize)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(port),
	};
	struct socket *lsock, *csock, *asock;
	size_t sent = 0, got = 0, bad = 0;
	unsigned int w = 0;
	unsigned long deadline;
	u8 *buf, *rbuf;
	int err;

	KUNIT_ASSERT_EQ(test, mrc_dp_lo_up(), 0);
	buf = kunit_kzalloc(test, 65536, GFP_KERNEL);
	rbuf = kunit_kzalloc(test, 65536, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, rbuf);

	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, mrc_family_nr, SOCK_STREAM, 0,
					       &lsock), 0);
	KUNIT_ASSERT_EQ(test, kernel_bind(lsock, (struct sockaddr *)&addr, sizeof(addr)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(lsock, 4), 0);
	KUNIT_ASSERT_EQ(test, sock_create_kern(&init_net, mrc_family_nr, SOCK_STREAM, 0,
					       &csock), 0);
	err = kernel_connect(csock, (struct sockaddr *)&addr, sizeof(addr), 0);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, kernel_accept(lsock, &asock, 0), 0);

	deadline = jiffies + 120 * HZ;
	while (got < bytes && time_before(jiffies, deadline)) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
		struct kvec iov;
		int n, i;

		if (sent < bytes) {
			n = min_t(size_t, wsize[w], bytes - sent);
			for (i = 0; i < n; i++)
				buf[i] = mrc_dp_pattern(sent + i);
			iov = (struct kvec){ buf, n };
			n = kernel_sendmsg(csock, &msg, &iov, 1, n);
			if (n > 0) {
				sent += n;
				if (!wsize[++w])
					w = 0;
			}
		}
		iov = (struct kvec){ rbuf, 65536 };
		msg = (struct msghdr){ .msg_flags = MSG_DONTWAIT };
		n = kernel_recvmsg(asock, &msg, &iov, 1, 65536, MSG_DONTWAIT);
		if (n > 0) {
			for (i = 0; i < n; i++)
				bad += rbuf[i] != mrc_dp_pattern(got + i);
			got += n;
		} else {
			usleep_range(200, 400);
		}
	}
	KUNIT_EXPECT_EQ(test, sent, bytes);
	KUNIT_EXPECT_EQ(test, got, bytes);
	KUNIT_EXPECT_EQ(test, bad, (size_t)0);

	/* orderly close from the client: the server reads EOF */
	KUNIT_EXPECT_EQ(test, kernel_sock_shutdown(csock, SHUT_WR), 0);
	deadline = jiffies + 10 * HZ;
	for (;;) {
		struct msghdr msg = {};
		struct kvec iov = { rbuf, 16 };
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

static void mrc_dp_transfer_test(struct kunit *test)
{
	static const unsigned int wsize[] = { 4096, 0 };

	mrc_dp_transfer(test, 4000, XFER_BYTES, wsize);
}

/*
 * At loopback's 64 KiB MTU a segment is one skb of its own; at 1500 bytes
 * the send side's page-fragment segments, the short tail extended in place
 * by later writes, bursts sent by reference and the receiver's trains and
 * mrc_cut() all run, under whatever checks this kernel has (KASAN, KFENCE,
 * lockdep).  Writes of odd sizes leave tails to extend; 64 KiB ones fill
 * whole bursts.
 */
static void mrc_dp_lo_mtu_restore(void *old)
{
	mrc_dp_lo_mtu((int)(long)old);
}

static void mrc_dp_transfer_mtu1500_test(struct kunit *test)
{
	static const unsigned int wsize[] = { 1, 100, 1423, 1425, 3000, 65536, 7, 0 };
	int old = mrc_dp_lo_mtu(1500);

	KUNIT_ASSERT_GT(test, old, 0);
	/* restored however the test ends, for the cases after it */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mrc_dp_lo_mtu_restore,
							(void *)(long)old), 0);
	KUNIT_ASSERT_EQ(test, (int)init_net.loopback_dev->mtu, 1500);
	mrc_dp_transfer(test, 4001, 4 * 1024 * 1024, wsize);
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

/*
 * A user socket (kern=0), as socket(2) makes it: lockdep then sees the lock
 * classes real sockets use (slock-AF_MRC), not the k-slock ones of
 * sock_create_kern(); children made by a listener are user sockets too.
 */
static int mrc_dp_user_sock(int type, struct socket **res)
{
	return __sock_create(&init_net, mrc_family_nr, type, 0, res, 0);
}

/* Waits up to @ms for @sk to reach @state. */
static bool mrc_dp_wait_state(struct sock *sk, int state, unsigned int ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);

	while (READ_ONCE(mrc_sk(sk)->state) != state) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

/* MRC sockets of init_net as /proc/net/protocols counts them. */
static int mrc_dp_inuse(struct sock *sk)
{
	return sock_prot_inuse_get(&init_net, sk->sk_prot);
}

/* Waits (RCU frees sockets) until the protocol's socket count is @want. */
static int mrc_dp_wait_inuse_prot(struct proto *prot, int want, unsigned int ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);
	int n;

	while ((n = sock_prot_inuse_get(&init_net, prot)) != want &&
	       time_before(jiffies, deadline)) {
		rcu_barrier();
		msleep(20);
	}
	return n;
}

#define MRC_DP_NCHILD	4

/*
 * A user listener with queued children: the first handshake completes from
 * the listener's backlog (process context, BH on), the others from softirq
 * (listener's slock held, child nested below it); one child is accepted,
 * then shutdown(SHUT_RD) must reset the others and free them, and the
 * clients see ECONNRESET.  Lockdep must stay quiet throughout, and the
 * protocol's socket count must follow every socket and return to where it was.
 */
struct mrc_dp_connect {
	struct work_struct	work;
	struct socket		*sock;
	struct sockaddr_in	*addr;
	struct completion	done;
	int			err;
};

static void mrc_dp_connect_work(struct work_struct *work)
{
	struct mrc_dp_connect *cw = container_of(work, struct mrc_dp_connect, work);

	cw->err = kernel_connect(cw->sock, (struct sockaddr *)cw->addr, sizeof(*cw->addr),
				 O_NONBLOCK);
	complete(&cw->done);
}

static void mrc_dp_listener_children_test(struct kunit *test)
{
	struct mrc_dp_connect cw;
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons(4100),
	};
	struct socket *lsock, *asock, *none, *csock[MRC_DP_NCHILD];
	struct mrc_sock *child[MRC_DP_NCHILD], *c;
	struct sock *lsk;
	unsigned long deadline;
	struct proto *prot;
	int i, n = 0, inuse0;

	KUNIT_ASSERT_EQ(test, mrc_dp_lo_up(), 0);
	KUNIT_ASSERT_EQ(test, mrc_dp_user_sock(SOCK_STREAM, &lsock), 0);
	lsk = lsock->sk;
	prot = lsk->sk_prot;
	KUNIT_ASSERT_FALSE(test, lsk->sk_kern_sock);
	/*
	 * The earlier cases' sockets may still be finishing their close (the
	 * guest runs nothing else of MRC's): counted here and gone by the end,
	 * they would make the count look one off.
	 */
	mrc_dp_wait_inuse_prot(prot, 1, 10000);
	inuse0 = mrc_dp_inuse(lsk) - 1;	/* before the listener itself */
	KUNIT_ASSERT_EQ(test, kernel_bind(lsock, (struct sockaddr *)&addr, sizeof(addr)), 0);
	KUNIT_ASSERT_EQ(test, kernel_listen(lsock, 8), 0);

	/* first client while the listener is owned: SYN and HSACK go to its backlog */
	KUNIT_ASSERT_EQ(test, mrc_dp_user_sock(SOCK_STREAM, &csock[0]), 0);
	/*
	 * connect() runs in a worker: a task that owns one socket and locks
	 * another of the same class is what lockdep rightly calls recursion.
	 */
	lock_sock(lsk);
	cw.sock = csock[0];
	cw.addr = &addr;
	init_completion(&cw.done);
	INIT_WORK_ONSTACK(&cw.work, mrc_dp_connect_work);
	schedule_work(&cw.work);
	/* not flush_work() under the socket lock: the worker takes one of its class */
	wait_for_completion(&cw.done);
	KUNIT_EXPECT_EQ(test, cw.err, -EINPROGRESS);
	deadline = jiffies + 2 * HZ;
	while (!READ_ONCE(lsk->sk_backlog.tail) && time_before(jiffies, deadline))
		usleep_range(500, 1000);
	KUNIT_EXPECT_NOT_NULL(test, READ_ONCE(lsk->sk_backlog.tail));
	release_sock(lsk);
	flush_work(&cw.work);
	destroy_work_on_stack(&cw.work);
	KUNIT_EXPECT_TRUE(test, mrc_dp_wait_state(csock[0]->sk, MRC_STATE_ESTABLISHED, 5000));

	/* the others from softirq */
	for (i = 1; i < MRC_DP_NCHILD; i++) {
		KUNIT_ASSERT_EQ(test, mrc_dp_user_sock(SOCK_STREAM, &csock[i]), 0);
		KUNIT_EXPECT_EQ(test, kernel_connect(csock[i], (struct sockaddr *)&addr,
						     sizeof(addr), 0), 0);
	}

	lock_sock(lsk);
	list_for_each_entry(c, &mrc_sk(lsk)->accept_queue, accept_node) {
		if (n == MRC_DP_NCHILD)
			break;
		sock_hold(&c->sk);
		child[n++] = c;
	}
	release_sock(lsk);
	KUNIT_ASSERT_EQ(test, n, MRC_DP_NCHILD);
	/* listener, clients and children are all counted */
	KUNIT_EXPECT_EQ(test, mrc_dp_inuse(lsk), inuse0 + 1 + 2 * MRC_DP_NCHILD);

	/* accept by a user socket: the first child */
	KUNIT_ASSERT_EQ(test, kernel_accept(lsock, &asock, 0), 0);
	KUNIT_EXPECT_PTR_EQ(test, mrc_sk(asock->sk), child[0]);

	/* shutdown(SHUT_RD) stops listening and resets the unaccepted ones */
	KUNIT_EXPECT_EQ(test, kernel_sock_shutdown(lsock, SHUT_RD), 0);
	KUNIT_EXPECT_EQ(test, kernel_accept(lsock, &none, O_NONBLOCK), -EINVAL);
	for (i = 1; i < MRC_DP_NCHILD; i++) {
		KUNIT_EXPECT_EQ(test, READ_ONCE(child[i]->state), MRC_STATE_DONE);
		KUNIT_EXPECT_FALSE(test, child[i]->hashed);
		KUNIT_EXPECT_TRUE(test, mrc_dp_wait_state(csock[i]->sk, MRC_STATE_DONE, 5000));
		KUNIT_EXPECT_EQ(test, READ_ONCE(csock[i]->sk->sk_err), ECONNRESET);
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(child[0]->state), MRC_STATE_ESTABLISHED);

	for (i = 0; i < MRC_DP_NCHILD; i++)
		sock_put(&child[i]->sk);
	sock_release(lsock);
	/* SO_LINGER 0: the accepted pair resets rather than finishing its FINs */
	sock_set_flag(asock->sk, SOCK_LINGER);
	asock->sk->sk_lingertime = 0;
	sock_release(asock);
	for (i = 0; i < MRC_DP_NCHILD; i++)
		sock_release(csock[i]);
	KUNIT_EXPECT_EQ(test, mrc_dp_wait_inuse_prot(prot, inuse0, 10000), inuse0);
}

/*
 * A 24-byte (RFC 2133) sockaddr_in6 has no sin6_scope_id: whatever follows
 * it in the caller's memory must not become the bound scope.
 */
static void mrc_dp_short_sin6_test(struct kunit *test)
{
	struct sockaddr_in6 a = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(4200),
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_scope_id = 0xdeadbeef,	/* past the 24 bytes passed */
	};
	struct sockaddr_storage got;
	struct socket *sock;
	int len;

	KUNIT_ASSERT_EQ(test, mrc_dp_lo_up(), 0);
	KUNIT_ASSERT_EQ(test, mrc_dp_user_sock(SOCK_STREAM, &sock), 0);
	KUNIT_ASSERT_EQ(test, kernel_bind(sock, (struct sockaddr *)&a, SIN6_LEN_RFC2133), 0);
	memset(&got, 0xa5, sizeof(got));
	len = kernel_getsockname(sock, (struct sockaddr *)&got);
	KUNIT_EXPECT_EQ(test, len, (int)sizeof(struct sockaddr_in6));
	KUNIT_EXPECT_EQ(test, ((struct sockaddr_in6 *)&got)->sin6_port, htons(4200));
	KUNIT_EXPECT_EQ(test, ((struct sockaddr_in6 *)&got)->sin6_scope_id, 0U);
	sock_release(sock);
}

static struct kunit_case mrc_dp_cases[] = {
	KUNIT_CASE(mrc_dp_transfer_test),
	KUNIT_CASE(mrc_dp_transfer_mtu1500_test),
	KUNIT_CASE(mrc_dp_refused_test),
	KUNIT_CASE(mrc_dp_listener_children_test),
	KUNIT_CASE(mrc_dp_short_sin6_test),
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
