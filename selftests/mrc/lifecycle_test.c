// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connection lifecycle on loopback: 10 000 concurrent connections, a peer
 * killed while the other side sends (ECONNRESET), a listener closed with
 * connections it never accepted (ECONNRESET), and every socket freed after
 * close (the module's reference count returns to where it was).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "mrc_lib.h"

#define NCONN 10000

static socklen_t loopback(int family, int port, struct sockaddr_storage *ss)
{
	return mrc_loopback(family, port, ss);
}

static int listener(int family, int port, int backlog)
{
	return mrc_listen_loopback(family, SOCK_STREAM, port, backlog);
}

static int connect_to(int family, int port)
{
	return mrc_connect_loopback(family, SOCK_STREAM, port);
}

static void set_timeouts(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void set_blocking(int fd, int blocking)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
}

FIXTURE(lc) {
	int refcnt0;
};

FIXTURE_VARIANT(lc) {
	int family;
	int port;
};

FIXTURE_VARIANT_ADD(lc, ipv4) { .family = AF_INET, .port = 5600 };
FIXTURE_VARIANT_ADD(lc, ipv6) { .family = AF_INET6, .port = 5700 };

FIXTURE_SETUP(lc)
{
	/* connections of an earlier test may still be finishing */
	self->refcnt0 = mrc_wait_refcnt(0, 10);
	ASSERT_LE(0, self->refcnt0) TH_LOG("/sys/module/mrc/refcnt unreadable");
}

FIXTURE_TEARDOWN(lc)
{
}

/*
 * 10 000 connections opened at once (non-blocking connect), all accepted,
 * a few bytes each way on every one, all verified, then all closed: every
 * server side reads EOF and every socket is freed.
 */
/* what the handshakes and the orderly close may do, printed so a failure tells which */
static const char *const conn_stats[] = {
	"ConnTimeout", "OrphanFinTimeout", "OrphanOverflow", "RtoExpired", "Retransmits",
	"RxDropBacklog", "RxDropNoConnection", "RxDropMemory", "TxErrors",
	"SynIdTaken", "RxDropBadId", "RxDropBadCookie", "RxDropAcceptQueue",
};

#define NCONN_STATS (int)(sizeof(conn_stats) / sizeof(conn_stats[0]))

static void log_stats(struct __test_metadata *_metadata, const char *phase,
		      const long long *stat0)
{
	char line[512];
	int i, n = 0;

	for (i = 0; i < NCONN_STATS && n < (int)sizeof(line); i++) {
		long long d = mrc_stat(conn_stats[i]) - stat0[i];

		if (d)
			n += snprintf(line + n, sizeof(line) - n, " %s +%lld", conn_stats[i], d);
	}
	TH_LOG("%s:%s", phase, n ? line : " no counter moved");
}

TEST_F_TIMEOUT(lc, conns_10000, 400)
{
	long long stat0[NCONN_STATS];
	static int cfd[NCONN], afd[NCONN], seen[NCONN];
	struct rlimit rl = { .rlim_cur = 4 * NCONN, .rlim_max = 4 * NCONN };
	int lfd, i, refs, accepted = 0, connected = 0, bad = 0, first_bad = -1;
	double start = mrc_now_s(), end = start + 240, t;
	long long rst0, reset0;
	struct sockaddr_storage ss;
	socklen_t len = loopback(variant->family, variant->port + 1, &ss);
	char msg[9], want[9];
	long sockets, pages;
	int pressure;
	FILE *f;

	for (i = 0; i < NCONN_STATS; i++)
		stat0[i] = mrc_stat(conn_stats[i]);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)) TH_LOG("setrlimit: %s", strerror(errno));
	/* listen() caps the backlog at somaxconn (4096 by default) */
	f = fopen("/proc/sys/net/core/somaxconn", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "%d\n", 2 * NCONN);
	ASSERT_EQ(0, fclose(f));
	lfd = listener(variant->family, variant->port + 1, NCONN + 24);
	ASSERT_LE(0, lfd) TH_LOG("listener: %s", strerror(errno));
	set_blocking(lfd, 0);

	/* every connect in flight at once */
	for (i = 0; i < NCONN; i++) {
		cfd[i] = socket(mrc_family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
		ASSERT_LE(0, cfd[i]) TH_LOG("socket %d: %s", i, strerror(errno));
		if (connect(cfd[i], (void *)&ss, len) && errno != EINPROGRESS) {
			bad++;
			if (first_bad < 0)
				TH_LOG("connect %d: %s", i, strerror(errno));
			first_bad = i;
		}
	}
	ASSERT_EQ(0, bad);

	/* accept them all */
	while (accepted < NCONN && mrc_now_s() < end) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		int fd = 0;

		poll(&p, 1, 200);
		while (accepted < NCONN && (fd = accept4(lfd, NULL, NULL, 0)) >= 0)
			afd[accepted++] = fd;
		if (fd < 0 && errno != EAGAIN) {
			TH_LOG("accept after %d: %s", accepted, strerror(errno));
			break;
		}
	}
	log_stats(_metadata, "handshakes", stat0);
	ASSERT_EQ(NCONN, accepted) TH_LOG("accepted only %d of %d", accepted, NCONN);

	/* every client's connect completed without error */
	for (i = 0; i < NCONN; i++) {
		struct pollfd p = { .fd = cfd[i], .events = POLLOUT };
		int err = -1;
		socklen_t el = sizeof(err);

		if (poll(&p, 1, 10000) == 1 && (p.revents & POLLOUT) &&
		    !getsockopt(cfd[i], SOL_SOCKET, SO_ERROR, &err, &el) && !err)
			connected++;
		else if (!bad++)
			TH_LOG("client %d: revents %#x SO_ERROR %d", i, p.revents, err);
		set_blocking(cfd[i], 1);
		set_timeouts(cfd[i], 20);
	}
	ASSERT_EQ(NCONN, connected);
	TH_LOG("%d connections established in %.1f s", NCONN, mrc_now_s() - start);

	/* a few bytes each way on every connection */
	for (i = 0; i < NCONN; i++) {
		snprintf(msg, sizeof(msg), "C%07d", i);
		if (send(cfd[i], msg, 8, MSG_NOSIGNAL) != 8 && !bad++)
			TH_LOG("client %d send: %s", i, strerror(errno));
	}
	ASSERT_EQ(0, bad);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < NCONN; i++) {
		int id;

		set_timeouts(afd[i], 20);
		memset(msg, 0, sizeof(msg));
		if (recv(afd[i], msg, 8, MSG_WAITALL) != 8 || sscanf(msg, "C%07d", &id) != 1 ||
		    id < 0 || id >= NCONN || seen[id]++) {
			if (!bad++)
				TH_LOG("server %d received '%.8s' (%s)", i, msg, strerror(errno));
			continue;
		}
		snprintf(msg, sizeof(msg), "S%07d", id);
		if (send(afd[i], msg, 8, MSG_NOSIGNAL) != 8 && !bad++)
			TH_LOG("server %d send: %s", i, strerror(errno));
	}
	ASSERT_EQ(0, bad);
	for (i = 0; i < NCONN; i++) {
		memset(msg, 0, sizeof(msg));
		snprintf(want, sizeof(want), "S%07d", i);
		if (recv(cfd[i], msg, 8, MSG_WAITALL) != 8 || memcmp(msg, want, 8)) {
			if (!bad++)
				TH_LOG("client %d received '%.8s' (%s)", i, msg, strerror(errno));
		}
	}
	ASSERT_EQ(0, bad);

	/*
	 * Orderly close: every server side sees EOF, then closes too.  Like
	 * TCP, that resets nothing: each closed client stays until it has
	 * acknowledged its peer's FIN.
	 */
	for (i = 0; i < NCONN_STATS; i++)
		stat0[i] = mrc_stat(conn_stats[i]);
	rst0 = mrc_stat("TxRst");
	reset0 = mrc_stat("ConnReset");
	t = mrc_now_s();
	for (i = 0; i < NCONN; i++)
		close(cfd[i]);
	TH_LOG("clients closed in %.1f s", mrc_now_s() - t);
	t = mrc_now_s();
	for (i = 0; i < NCONN; i++) {
		ssize_t n = recv(afd[i], msg, 1, 0);

		if (n != 0 && !bad++)
			TH_LOG("server %d: recv after peer close returned %zd (%s)", i, n,
			       n < 0 ? strerror(errno) : "data");
		close(afd[i]);
	}
	close(lfd);
	TH_LOG("servers read EOF and closed in %.1f s", mrc_now_s() - t);
	ASSERT_EQ(0, bad);
	/* every socket, and every connection finishing its FINs, is freed */
	t = mrc_now_s();
	refs = mrc_wait_refcnt(self->refcnt0, 60);
	TH_LOG("closed: module refcnt %d (was %d) after %.1f s; RSTs sent %lld, "
	       "connections reset %lld, timed out so far %lld", refs, self->refcnt0,
	       mrc_now_s() - t, mrc_stat("TxRst") - rst0, mrc_stat("ConnReset") - reset0,
	       mrc_stat("ConnTimeout"));
	log_stats(_metadata, "close", stat0);
	EXPECT_LE(refs, self->refcnt0) TH_LOG("connections still alive 60 s after an orderly close");
	EXPECT_EQ(0, mrc_stat("ConnReset") - reset0) TH_LOG("an orderly close reset connections");
	/* the protocol's accounting agrees: no socket and no memory left */
	ASSERT_EQ(0, mrc_proto_usage(&sockets, &pages, &pressure));
	TH_LOG("/proc/net/protocols: %ld MRC sockets, %ld pages", sockets, pages);
	EXPECT_EQ(0, sockets);
	EXPECT_LE(pages, mrc_proto_pages_slack());
	TH_LOG("whole test %.1f s", mrc_now_s() - start);
}

/*
 * The receiving process is killed (SIGKILL) with data unread while the
 * other side is sending: the sender's send() fails with ECONNRESET (and the
 * next one with EPIPE, as in TCP).
 */
TEST_F_TIMEOUT(lc, killed_peer_resets_sender, 60)
{
	static char buf[65536];
	int lfd, afd, sync[2], eagain = 0, status, n;
	unsigned long long sent = 0;
	double end;
	pid_t pid;
	char c;

	memset(buf, 'x', sizeof(buf));
	lfd = listener(variant->family, variant->port + 2, 4);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = connect_to(variant->family, variant->port + 2);

		if (fd < 0)
			_exit(1);
		if (write(sync[1], "c", 1) != 1)
			_exit(1);
		/* never reads: the data piles up in the receive queue */
		for (;;)
			pause();
	}
	close(sync[1]);
	ASSERT_EQ(1, read(sync[0], &c, 1)) TH_LOG("child did not connect");
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd);

	/* fill the peer's receive buffer and our send buffer */
	set_blocking(afd, 0);
	end = mrc_now_s() + 20;
	while (eagain < 3 && mrc_now_s() < end) {
		ssize_t w = send(afd, buf, sizeof(buf), MSG_NOSIGNAL);

		if (w > 0) {
			sent += w;
			continue;
		}
		ASSERT_EQ(EAGAIN, errno) TH_LOG("send before the kill: %s", strerror(errno));
		eagain++;
		usleep(200 * 1000);
	}
	ASSERT_LT(0, sent);
	TH_LOG("%llu bytes queued before the kill", sent);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	/* keep sending: the peer's RST must fail the send with ECONNRESET */
	set_blocking(afd, 1);
	set_timeouts(afd, 15);
	end = mrc_now_s() + 30;
	for (;;) {
		ssize_t w = send(afd, buf, sizeof(buf), MSG_NOSIGNAL);

		if (w < 0 || mrc_now_s() > end)
			break;
	}
	n = errno;
	EXPECT_EQ(ECONNRESET, n) TH_LOG("send after the peer was killed: %s", strerror(n));
	EXPECT_EQ(-1, send(afd, buf, 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno) TH_LOG("second send after the reset: %s", strerror(errno));
	close(afd);
	close(lfd);
	n = mrc_wait_refcnt(self->refcnt0, 20);
	EXPECT_LE(n, self->refcnt0) TH_LOG("module refcnt %d, was %d", n, self->refcnt0);
}

/*
 * A listener closed with a connection in its accept queue resets it: the
 * client's recv() fails with ECONNRESET (as in TCP).
 */
TEST_F_TIMEOUT(lc, listener_close_resets_unaccepted, 60)
{
	int lfd, cfd, n;
	char c;

	lfd = listener(variant->family, variant->port + 3, 4);
	ASSERT_LE(0, lfd);
	cfd = connect_to(variant->family, variant->port + 3);
	ASSERT_LE(0, cfd) TH_LOG("connect: %s", strerror(errno));
	usleep(100 * 1000);
	close(lfd);
	set_timeouts(cfd, 10);
	EXPECT_EQ(-1, recv(cfd, &c, 1, 0));
	n = errno;
	EXPECT_EQ(ECONNRESET, n) TH_LOG("recv after the listener closed: %s", strerror(n));
	close(cfd);
	n = mrc_wait_refcnt(self->refcnt0, 20);
	EXPECT_LE(n, self->refcnt0) TH_LOG("module refcnt %d, was %d", n, self->refcnt0);
}

/*
 * The peer closes a while after us (a server finishing its work): our
 * orphan waits for its FIN up to net.mrc.fin_timeout (60 s, as TCP's
 * tcp_fin_timeout), so the close is orderly on both sides, nothing reset.
 * A 3 s wait once reset every server that closed later on a slow machine.
 */
TEST_F_TIMEOUT(lc, peer_closing_late_is_not_reset, 60)
{
	long long reset0 = mrc_stat("ConnReset"), rst0 = mrc_stat("TxRst");
	long long finto0 = mrc_stat("OrphanFinTimeout");
	int lfd, cfd, afd, n, fin_timeout = 0;
	FILE *f = fopen("/proc/sys/net/mrc/fin_timeout", "r");
	char c;

	ASSERT_NE(NULL, f) TH_LOG("net.mrc.fin_timeout is missing");
	ASSERT_EQ(1, fscanf(f, "%d", &fin_timeout));
	fclose(f);
	if (fin_timeout <= 5)
		SKIP(return, "net.mrc.fin_timeout is %d s, not longer than the peer's wait", fin_timeout);
	lfd = listener(variant->family, variant->port + 4, 4);
	ASSERT_LE(0, lfd);
	cfd = connect_to(variant->family, variant->port + 4);
	ASSERT_LE(0, cfd) TH_LOG("connect: %s", strerror(errno));
	afd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, afd) TH_LOG("accept: %s", strerror(errno));
	close(lfd);
	close(cfd);
	sleep(4);
	set_timeouts(afd, 10);
	n = recv(afd, &c, 1, 0);
	EXPECT_EQ(0, n) TH_LOG("recv after the peer closed: %d (%s)", n, strerror(errno));
	close(afd);
	n = mrc_wait_refcnt(self->refcnt0, 20);
	EXPECT_LE(n, self->refcnt0) TH_LOG("module refcnt %d, was %d", n, self->refcnt0);
	EXPECT_EQ(0, mrc_stat("OrphanFinTimeout") - finto0);
	EXPECT_EQ(0, mrc_stat("TxRst") - rst0);
	EXPECT_EQ(0, mrc_stat("ConnReset") - reset0);
}

TEST_HARNESS_MAIN
