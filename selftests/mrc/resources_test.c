// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resource limits and concurrency on loopback: a slow reader makes the
 * sender block with bounded queues and no drops; many connections whose
 * readers stall stay inside the protocol memory pool (net.mrc.mem), enter
 * memory pressure, lose nothing and give every page back; several threads
 * send and receive on one socket at once; shutdown() from another thread
 * wakes blocked callers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include "kselftest_harness.h"
#include "mrc_lib.h"

/* Byte @off of every test stream: position-dependent, so loss, duplication
 * and reordering all show. */
static unsigned char pattern(unsigned long long off)
{
	return (unsigned char)(off * 7 + (off >> 11) * 13);
}

static void fill(unsigned char *buf, size_t len, unsigned long long off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(off + i);
}

static long long first_bad(const unsigned char *buf, size_t len, unsigned long long off)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(off + i))
			return (long long)(off + i);
	return -1;
}

static void set_timeo(int fd, int opt, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* A connected pair on loopback: *c the client, *a the accepted side. */
static int pair(int type, int port, int *c, int *a)
{
	int l = mrc_listen_loopback(AF_INET, type, port, 16);

	*c = *a = -1;
	if (l < 0)
		return -1;
	*c = mrc_connect_loopback(AF_INET, type, port);
	if (*c >= 0)
		*a = accept(l, NULL, NULL);
	close(l);
	return *c >= 0 && *a >= 0 ? 0 : -1;
}

static int read_long(const char *path, long *v, int n)
{
	FILE *f = fopen(path, "r");
	int got = 0;

	if (!f)
		return -1;
	while (got < n && fscanf(f, "%ld", &v[got]) == 1)
		got++;
	fclose(f);
	return got == n ? 0 : -1;
}

static int write_mem(const long *v)
{
	FILE *f = fopen("/proc/sys/net/mrc/mem", "w");

	if (!f)
		return -1;
	fprintf(f, "%ld %ld %ld\n", v[0], v[1], v[2]);
	return fclose(f);
}

/* No state: a fixture only for TEST_F_TIMEOUT. */
FIXTURE(res) {
	int unused;
};

FIXTURE_SETUP(res)
{
}

FIXTURE_TEARDOWN(res)
{
}

struct writer {
	int fd;
	size_t total;
	ssize_t sent;
	int err;
};

static void *write_all(void *arg)
{
	struct writer *w = arg;
	unsigned char buf[16384];

	w->sent = 0;
	while ((size_t)w->sent < w->total) {
		size_t n = w->total - w->sent < sizeof(buf) ? w->total - w->sent : sizeof(buf);
		ssize_t r;

		fill(buf, n, w->sent);
		r = send(w->fd, buf, n, MSG_NOSIGNAL);
		if (r <= 0) {
			w->err = errno;
			break;
		}
		w->sent += r;
	}
	return NULL;
}

/*
 * A reader taking 8 KiB every 5 ms: the 4 MiB sender must block (its queue
 * never passes SO_SNDBUF), the receiver must never drop for want of buffer
 * (the advertised window holds the sender back), and every byte arrives.
 */
TEST_F_TIMEOUT(res, slow_reader_blocks_sender, 120)
{
	struct writer w = { .total = 4 << 20 };
	long long drops0 = mrc_stat("RxDropRcvbuf") + mrc_stat("RxDropMemory");
	int c, a, sndbuf, outq, max_outq = 0, blocked = 0;
	socklen_t sl = sizeof(sndbuf);
	unsigned char buf[8192];
	size_t got = 0;
	long long bad = -1;
	pthread_t th;

	ASSERT_EQ(0, pair(SOCK_STREAM, 7100, &c, &a));
	ASSERT_EQ(0, getsockopt(c, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl));
	set_timeo(c, SO_SNDTIMEO, 60);
	set_timeo(a, SO_RCVTIMEO, 20);
	w.fd = c;
	ASSERT_EQ(0, pthread_create(&th, NULL, write_all, &w));
	while (got < w.total) {
		struct pollfd p = { .fd = c, .events = POLLOUT };
		ssize_t n;

		if (poll(&p, 1, 0) == 0)
			blocked++;
		if (!ioctl(c, SIOCOUTQ, &outq) && outq > max_outq)
			max_outq = outq;
		n = recv(a, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		if (bad < 0)
			bad = first_bad(buf, n, got);
		got += n;
		usleep(5000);
	}
	pthread_join(th, NULL);
	/* autotuning may have grown it (never shrunk it): the queue's bound now */
	ASSERT_EQ(0, getsockopt(c, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl));
	TH_LOG("received %zu of %zu; sender unwritable in %d of the reads; largest send "
	       "queue %d bytes (SO_SNDBUF %d); receive drops %lld", got, w.total, blocked,
	       max_outq, sndbuf, mrc_stat("RxDropRcvbuf") + mrc_stat("RxDropMemory") - drops0);
	EXPECT_EQ(0, w.err) TH_LOG("send: %s", strerror(w.err));
	EXPECT_EQ(w.total, got);
	EXPECT_EQ(-1, bad) TH_LOG("stream corrupt at byte %lld", bad);
	EXPECT_LT(0, blocked) TH_LOG("the sender was never held back");
	EXPECT_GE(sndbuf, max_outq);
	EXPECT_EQ(0, mrc_stat("RxDropRcvbuf") + mrc_stat("RxDropMemory") - drops0);
	close(c);
	close(a);
}

/*
 * A reader that stops for twice the user timeout: the sender's window
 * probes are answered, so the connection lives on (as TCP, RFC 1122
 * 4.2.2.17) and everything arrives once the reader comes back.
 */
TEST_F_TIMEOUT(res, zero_window_outlives_user_timeout, 60)
{
	struct writer w = { .total = 2 << 20 };
	int c, a, ut = 1500, rcvbuf = 16384;
	long long timeouts0 = mrc_stat("ConnTimeout");
	unsigned char buf[16384];
	size_t got = 0;
	long long bad = -1;
	pthread_t th;

	ASSERT_EQ(0, pair(SOCK_STREAM, 7150, &c, &a));
	ASSERT_EQ(0, setsockopt(c, SOL_MRC, MRC_USER_TIMEOUT, &ut, sizeof(ut)));
	ASSERT_EQ(0, setsockopt(a, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)));
	set_timeo(c, SO_SNDTIMEO, 30);
	set_timeo(a, SO_RCVTIMEO, 20);
	w.fd = c;
	ASSERT_EQ(0, pthread_create(&th, NULL, write_all, &w));
	sleep(3 * ut / 1000 + 1);
	while (got < w.total) {
		ssize_t n = recv(a, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		if (bad < 0)
			bad = first_bad(buf, n, got);
		got += n;
	}
	pthread_join(th, NULL);
	TH_LOG("received %zu of %zu after a %d s stall (user timeout %d ms)", got, w.total,
	       3 * ut / 1000 + 1, ut);
	EXPECT_EQ(0, w.err) TH_LOG("send: %s", strerror(w.err));
	EXPECT_EQ(w.total, got);
	EXPECT_EQ(-1, bad);
	EXPECT_EQ(timeouts0, mrc_stat("ConnTimeout"));
	close(c);
	close(a);
}

#define NPAIRS 64

/*
 * 64 connections whose readers stall, each socket allowed 1 MiB each way
 * (SO_*BUFFORCE), against a pool of 4/8/16 MiB: without the pool they would
 * queue about 256 MiB.  The senders must be refused (EAGAIN) once the pool
 * is spent, MRC must enter and report pressure, the charged pages must stay
 * near the hard limit, and once the readers wake every byte must arrive
 * intact and every page come back.
 */
TEST_F_TIMEOUT(res, memory_pressure, 300)
{
	static int c[NPAIRS], a[NPAIRS];
	static unsigned long long sent[NPAIRS];
	long old[3], lim[3] = { 1024, 2048, 4096 }, sockets, pages, max_pages = 0, slack;
	long long press0 = mrc_stat("MemPressure");
	int i, big = 1 << 20, pressure, seen_pressure = 0, corrupt = 0, short_read = 0;
	unsigned char buf[16384];
	double quiet_since, end;

	ASSERT_EQ(0, read_long("/proc/sys/net/mrc/mem", old, 3)) TH_LOG("no net.mrc.mem");
	ASSERT_EQ(0, write_mem(lim));
	slack = mrc_proto_pages_slack();
	for (i = 0; i < NPAIRS; i++) {
		ASSERT_EQ(0, pair(SOCK_STREAM, 7200 + i, &c[i], &a[i]));
		ASSERT_EQ(0, setsockopt(c[i], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)));
		ASSERT_EQ(0, setsockopt(a[i], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)));
		fcntl(c[i], F_SETFL, O_NONBLOCK);
	}

	/* fill until no sender has made progress for a second */
	quiet_since = mrc_now_s();
	end = quiet_since + 60;
	while (mrc_now_s() - quiet_since < 1.0 && mrc_now_s() < end) {
		for (i = 0; i < NPAIRS; i++) {
			ssize_t n;

			fill(buf, sizeof(buf), sent[i]);
			n = send(c[i], buf, sizeof(buf), MSG_NOSIGNAL);
			if (n > 0) {
				sent[i] += n;
				quiet_since = mrc_now_s();
			} else {
				ASSERT_EQ(EAGAIN, errno) TH_LOG("send %d: %s", i, strerror(errno));
			}
		}
		if (!mrc_proto_usage(&sockets, &pages, &pressure)) {
			if (pages > max_pages)
				max_pages = pages;
			seen_pressure |= pressure;
		}
		usleep(2000);
	}
	{
		unsigned long long total = 0;

		for (i = 0; i < NPAIRS; i++)
			total += sent[i];
		TH_LOG("queued %llu KiB over %d connections; pool peak %ld pages (limit %ld, "
		       "per-CPU slack %ld); pressure seen %d, entered %lld times; "
		       "receive drops for memory %lld, forced %lld", total >> 10, NPAIRS,
		       max_pages, lim[2], slack, seen_pressure,
		       mrc_stat("MemPressure") - press0, mrc_stat("RxDropMemory"),
		       mrc_stat("MemForced"));
		EXPECT_GE(max_pages + slack, lim[1])
			TH_LOG("the connections never brought the pool to pressure");
	}
	EXPECT_LE(max_pages, lim[2] + slack + 2 * NPAIRS)
		TH_LOG("charged memory ran past the hard limit");
	EXPECT_TRUE(seen_pressure || mrc_stat("MemPressure") > press0);

	/* the readers wake: everything sent arrives, in order */
	for (i = 0; i < NPAIRS; i++) {
		fcntl(c[i], F_SETFL, 0);
		shutdown(c[i], SHUT_WR);
		set_timeo(a[i], SO_RCVTIMEO, 30);
	}
	for (i = 0; i < NPAIRS; i++) {
		unsigned long long got = 0;
		ssize_t n;

		while ((n = recv(a[i], buf, sizeof(buf), 0)) > 0) {
			if (!corrupt && first_bad(buf, n, got) >= 0) {
				TH_LOG("connection %d corrupt at %lld", i, first_bad(buf, n, got));
				corrupt++;
			}
			got += n;
		}
		if (got != sent[i] && !short_read++)
			TH_LOG("connection %d: %llu of %llu bytes (%s)", i, got, sent[i],
			       n < 0 ? strerror(errno) : "EOF");
	}
	EXPECT_EQ(0, corrupt);
	EXPECT_EQ(0, short_read);
	for (i = 0; i < NPAIRS; i++) {
		close(c[i]);
		close(a[i]);
	}
	ASSERT_EQ(0, write_mem(old));
	mrc_wait_refcnt(0, 30);
	ASSERT_EQ(0, mrc_proto_usage(&sockets, &pages, &pressure));
	TH_LOG("after close: %ld sockets, %ld pages, pressure %d", sockets, pages, pressure);
	EXPECT_EQ(0, sockets);
	EXPECT_LE(pages, slack);
}

#define NTHREADS 4
#define NMSGS 500

struct msg_hdr {
	unsigned int thread, seq, len, sum;
};

struct msg_sender {
	int fd, id, err;
};

static unsigned int msg_sum(const unsigned char *p, unsigned int len)
{
	unsigned int s = 0;

	for (unsigned int i = 0; i < len; i++)
		s = s * 31 + p[i];
	return s;
}

static void *send_msgs(void *arg)
{
	struct msg_sender *s = arg;
	unsigned char buf[sizeof(struct msg_hdr) + 6000];
	struct msg_hdr *h = (void *)buf;

	for (int i = 0; i < NMSGS; i++) {
		unsigned int len = 1 + (i * 977 + s->id * 131) % 6000;

		for (unsigned int j = 0; j < len; j++)
			buf[sizeof(*h) + j] = (unsigned char)(j ^ i ^ s->id);
		*h = (struct msg_hdr){ s->id, i, len, msg_sum(buf + sizeof(*h), len) };
		if (send(s->fd, buf, sizeof(*h) + len, MSG_NOSIGNAL) != (ssize_t)(sizeof(*h) + len)) {
			s->err = errno ?: EIO;
			break;
		}
	}
	return NULL;
}

struct msg_receiver {
	int fd, bad, count;
	unsigned char (*seen)[NMSGS];
	pthread_mutex_t *lock;
};

static void *recv_msgs(void *arg)
{
	struct msg_receiver *r = arg;
	unsigned char buf[sizeof(struct msg_hdr) + 6000];
	struct msg_hdr *h = (void *)buf;
	ssize_t n;

	while ((n = recv(r->fd, buf, sizeof(buf), 0)) > 0) {
		if (n < (ssize_t)sizeof(*h) || h->thread >= NTHREADS || h->seq >= NMSGS ||
		    n != (ssize_t)(sizeof(*h) + h->len) ||
		    h->sum != msg_sum(buf + sizeof(*h), h->len)) {
			r->bad++;
			continue;
		}
		pthread_mutex_lock(r->lock);
		if (r->seen[h->thread][h->seq]++)
			r->bad++;
		pthread_mutex_unlock(r->lock);
		r->count++;
	}
	return NULL;
}

/*
 * Four threads send messages on one SEQPACKET socket while two threads
 * receive on the other end: every message arrives once and whole (no
 * interleaving inside a message), whatever the scheduling.
 */
TEST_F_TIMEOUT(res, threads_share_a_socket, 120)
{
	static unsigned char seen[NTHREADS][NMSGS];
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct msg_sender s[NTHREADS];
	struct msg_receiver r[2];
	pthread_t st[NTHREADS], rt[2];
	int c, a, i, total = 0, bad = 0;

	ASSERT_EQ(0, pair(SOCK_SEQPACKET, 7400, &c, &a));
	set_timeo(a, SO_RCVTIMEO, 20);
	for (i = 0; i < 2; i++) {
		r[i] = (struct msg_receiver){ .fd = a, .seen = seen, .lock = &lock };
		ASSERT_EQ(0, pthread_create(&rt[i], NULL, recv_msgs, &r[i]));
	}
	for (i = 0; i < NTHREADS; i++) {
		s[i] = (struct msg_sender){ .fd = c, .id = i };
		ASSERT_EQ(0, pthread_create(&st[i], NULL, send_msgs, &s[i]));
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(st[i], NULL);
		EXPECT_EQ(0, s[i].err) TH_LOG("sender %d: %s", i, strerror(s[i].err));
	}
	/* the receivers end on EOF */
	shutdown(c, SHUT_WR);
	for (i = 0; i < 2; i++) {
		pthread_join(rt[i], NULL);
		total += r[i].count;
		bad += r[i].bad;
	}
	TH_LOG("%d messages received by 2 threads (%d and %d), %d bad", total, r[0].count,
	       r[1].count, bad);
	EXPECT_EQ(NTHREADS * NMSGS, total);
	EXPECT_EQ(0, bad);
	close(c);
	close(a);
}

struct blocked_call {
	int fd, send;
	ssize_t ret;
	int err;
};

static void *blocked(void *arg)
{
	struct blocked_call *b = arg;
	static char big[1 << 16];

	if (b->send) {
		/* until the peer's window and our buffer are full, then blocked */
		do
			b->ret = send(b->fd, big, sizeof(big), MSG_NOSIGNAL);
		while (b->ret > 0);
	} else {
		b->ret = recv(b->fd, big, sizeof(big), 0);
	}
	b->err = b->ret < 0 ? errno : 0;
	return NULL;
}

/*
 * A thread blocked in recv() and one blocked in send() on sockets another
 * thread shuts down: both wake (recv with 0, send with EPIPE), nothing
 * hangs, and the sockets close cleanly afterwards.
 */
TEST_F_TIMEOUT(res, shutdown_wakes_blocked_threads, 60)
{
	struct blocked_call rb = { .send = 0 }, sb = { .send = 1 };
	pthread_t rt, sendt;
	int c, a, c2, a2, outq = 0, tries;

	ASSERT_EQ(0, pair(SOCK_STREAM, 7500, &c, &a));
	ASSERT_EQ(0, pair(SOCK_STREAM, 7501, &c2, &a2));
	rb.fd = a;
	sb.fd = c2;
	ASSERT_EQ(0, pthread_create(&rt, NULL, blocked, &rb));
	ASSERT_EQ(0, pthread_create(&sendt, NULL, blocked, &sb));
	/* the sender is blocked once its queue stops growing */
	for (tries = 0; tries < 50; tries++) {
		int q;

		usleep(100 * 1000);
		if (!ioctl(c2, SIOCOUTQ, &q) && q == outq && q > 0)
			break;
		outq = q;
	}
	usleep(200 * 1000);
	EXPECT_EQ(0, shutdown(a, SHUT_RDWR));
	EXPECT_EQ(0, shutdown(c2, SHUT_RDWR));
	pthread_join(rt, NULL);
	pthread_join(sendt, NULL);
	EXPECT_EQ(0, rb.ret) TH_LOG("recv returned %zd (%s)", rb.ret, strerror(rb.err));
	EXPECT_EQ(-1, sb.ret);
	EXPECT_EQ(EPIPE, sb.err) TH_LOG("send: %s", strerror(sb.err));
	close(c);
	close(a);
	close(c2);
	close(a2);
	EXPECT_EQ(0, mrc_wait_refcnt(0, 20)) TH_LOG("sockets left after close");
}

TEST_HARNESS_MAIN
