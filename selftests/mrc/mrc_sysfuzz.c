// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_sysfuzz: random syscall sequences over AF_MRC sockets, for the
 * hardening selftest.
 *
 *   mrc_sysfuzz [-d SECONDS] [-s SEED] [-j THREADS] [-b BASEPORT] [-v]
 *
 * THREADS (default 4) threads share a table of 32 socket slots and for
 * SECONDS (default 30) pick random operations on random slots: socket
 * (stream, seqpacket, bad types and protocols), bind, connect (blocking and
 * not, good and garbage addresses, IPv4 and IPv6 loopback), listen, accept,
 * send/sendmsg (random sizes and flags, SOL_MRC priority cmsgs), recv
 * (peek, trunc, waitall...), setsockopt and getsockopt with random values
 * and lengths at SOL_MRC and SOL_SOCKET, ioctl, shutdown, close, poll,
 * getsockname/getpeername, and coherent listen/connect/accept sequences
 * (ports BASEPORT+8..+15) so that data moves.  Threads race on the same sockets (a slot can be
 * closed and reused under another thread).  Ports come from BASEPORT..+7
 * (default 6000) so that connects find listeners.  Every socket gets 50 ms
 * send/receive timeouts; a blocked call is interrupted at the end, when the
 * process exits and the kernel closes what is left.
 *
 * Each thread's sequence derives from SEED and its index (timing makes a
 * multithreaded run reproducible only in its operation mix).  Prints one
 * line of per-operation counts and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "mrc_lib.h"

#define SLOTS		32
#define MAX_THREADS	16
#define BUF		(256 * 1024)

static atomic_int slots[SLOTS];
static int fam, baseport = 6000, verbose;

enum op {
	OP_SOCKET, OP_BIND, OP_CONNECT, OP_LISTEN, OP_ACCEPT, OP_SEND, OP_SENDMSG, OP_RECV,
	OP_SETSOCKOPT, OP_GETSOCKOPT, OP_SOL_SOCKET, OP_SHUTDOWN, OP_CLOSE, OP_POLL,
	OP_GETNAME, OP_IOCTL, OP_FCNTL, OP_PAIR, OP_MAX,
};

static const char *const op_names[OP_MAX] = {
	"socket", "bind", "connect", "listen", "accept", "send", "sendmsg", "recv",
	"setsockopt", "getsockopt", "sol_socket", "shutdown", "close", "poll",
	"getname", "ioctl", "fcntl", "pair",
};

/* Relative frequencies: more of what creates state and moves data. */
static const int op_weight[OP_MAX] = {
	8, 6, 8, 5, 6, 10, 5, 10, 6, 4, 4, 3, 5, 3, 2, 2, 2, 4,
};

static atomic_ullong op_count[OP_MAX], op_ok[OP_MAX];

struct thr {
	uint64_t rng;
	unsigned char *buf;
};

static uint64_t rnd64(struct thr *t)
{
	uint64_t z = (t->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(struct thr *t, uint32_t n)
{
	return n ? (uint32_t)rnd64(t) % n : 0;
}

static int nasty_int(struct thr *t)
{
	static const int v[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 64, 255, 256, 257, 1000, 65535, 65536,
		-1, -2, 0x7fffffff, (int)0x80000000, 30000,
	};

	return rnd(t, 3) ? v[rnd(t, sizeof(v) / sizeof(v[0]))] : (int)rnd64(t);
}

static int slot_fd(struct thr *t)
{
	return atomic_load(&slots[rnd(t, SLOTS)]);
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_usec = 50000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Puts @fd in a random slot, closing what was there. */
static void slot_put(struct thr *t, int fd)
{
	int old;

	set_timeouts(fd);
	old = atomic_exchange(&slots[rnd(t, SLOTS)], fd);
	if (old >= 0)
		close(old);
}

static socklen_t rnd_addr(struct thr *t, struct sockaddr_storage *ss, int any_ok)
{
	struct sockaddr_in *s4 = (void *)ss;
	struct sockaddr_in6 *s6 = (void *)ss;
	uint16_t port = rnd(t, 10) ? baseport + rnd(t, 8) : (rnd(t, 2) ? 0 : rnd(t, 65536));

	memset(ss, 0, sizeof(*ss));
	switch (rnd(t, 8)) {
	case 0: case 1: case 2:
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr.s_addr = htonl(any_ok && rnd(t, 3) == 0 ? INADDR_ANY : INADDR_LOOPBACK);
		return sizeof(*s4);
	case 3: case 4:
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (!any_ok || rnd(t, 3))
			s6->sin6_addr = in6addr_loopback;
		if (!rnd(t, 8)) {	/* v4-mapped */
			s6->sin6_addr.s6_addr[10] = 0xff;
			s6->sin6_addr.s6_addr[11] = 0xff;
			s6->sin6_addr.s6_addr[12] = 127;
			s6->sin6_addr.s6_addr[15] = 1;
		}
		if (!rnd(t, 8))
			s6->sin6_scope_id = rnd(t, 4);
		return sizeof(*s6);
	case 5:		/* garbage: random bytes, random length */
		for (size_t i = 0; i < sizeof(*ss); i++)
			((unsigned char *)ss)[i] = rnd64(t);
		if (rnd(t, 2))
			ss->ss_family = rnd(t, 2) ? AF_INET : AF_INET6;
		return rnd(t, sizeof(*ss) + 1);
	case 6:		/* short */
		s4->sin_family = rnd(t, 2) ? AF_INET : AF_INET6;
		s4->sin_port = htons(port);
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return rnd(t, sizeof(*s6));
	default:	/* AF_UNSPEC (connect: disconnect) or another family */
		ss->ss_family = rnd(t, 2) ? AF_UNSPEC : rnd(t, 50);
		s4->sin_port = htons(port);
		return rnd(t, 2) ? sizeof(*s4) : sizeof(struct sockaddr);
	}
}

static int do_op(struct thr *t, int op)
{
	struct sockaddr_storage ss;
	unsigned char *buf = t->buf;
	socklen_t sl;
	int fd = slot_fd(t), r = -1, v, flags;

	switch (op) {
	case OP_SOCKET: {
		static const int types[] = { SOCK_STREAM, SOCK_STREAM, SOCK_SEQPACKET,
					     SOCK_SEQPACKET, SOCK_DGRAM, SOCK_RAW, 7 };
		int type = types[rnd(t, 7)], proto = rnd(t, 6) ? 0 : nasty_int(t);

		if (!rnd(t, 4))
			type |= SOCK_NONBLOCK;
		if (!rnd(t, 4))
			type |= SOCK_CLOEXEC;
		r = socket(rnd(t, 20) ? fam : AF_INET, type, proto);
		if (r >= 0)
			slot_put(t, r);
		break;
	}
	case OP_BIND:
		sl = rnd_addr(t, &ss, 1);
		if (!rnd(t, 3)) {
			v = 1;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof(v));
		}
		r = bind(fd, (void *)&ss, sl);
		break;
	case OP_CONNECT:
		sl = rnd_addr(t, &ss, 0);
		if (rnd(t, 3) && fd >= 0) {
			flags = fcntl(fd, F_GETFL);
			if (flags >= 0)
				fcntl(fd, F_SETFL, flags | O_NONBLOCK);
		}
		r = connect(fd, (void *)&ss, sl);
		break;
	case OP_LISTEN:
		r = listen(fd, rnd(t, 4) ? (int)rnd(t, 16) : nasty_int(t));
		break;
	case OP_ACCEPT:
		r = accept4(fd, rnd(t, 2) ? (void *)&ss : NULL, (sl = rnd(t, sizeof(ss) + 1), &sl),
			    rnd(t, 3) ? SOCK_NONBLOCK : 0);
		if (r >= 0)
			slot_put(t, r);
		break;
	case OP_SEND: {
		size_t n = rnd(t, 4) ? rnd(t, 4096) : rnd(t, BUF);

		flags = MSG_NOSIGNAL | (rnd(t, 2) ? MSG_DONTWAIT : 0) |
			(rnd(t, 6) ? 0 : MSG_MORE) | (rnd(t, 8) ? 0 : MSG_EOR) |
			(rnd(t, 10) ? 0 : MSG_OOB);
		r = send(fd, buf, n, flags);
		break;
	}
	case OP_SENDMSG: {
		char cbuf[CMSG_SPACE(sizeof(int)) * 2];
		struct iovec iov[3];
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 1 + rnd(t, 3) };
		struct cmsghdr *c;

		for (size_t i = 0; i < m.msg_iovlen; i++) {
			iov[i].iov_base = buf + rnd(t, 1024);
			iov[i].iov_len = rnd(t, 3) ? rnd(t, 2048) : rnd(t, BUF / 4);
		}
		if (rnd(t, 2)) {
			memset(cbuf, 0, sizeof(cbuf));
			m.msg_control = cbuf;
			m.msg_controllen = rnd(t, 4) ? CMSG_SPACE(sizeof(int)) : rnd(t, sizeof(cbuf) + 1);
			c = CMSG_FIRSTHDR(&m);
			if (c) {
				c->cmsg_level = rnd(t, 4) ? SOL_MRC : rnd(t, 2) ? SOL_SOCKET : nasty_int(t);
				c->cmsg_type = rnd(t, 3) ? MRC_PRIORITY : nasty_int(t);
				c->cmsg_len = rnd(t, 4) ? CMSG_LEN(sizeof(int)) : rnd(t, 64);
				v = rnd(t, 2) ? (int)rnd(t, 8) : nasty_int(t);
				memcpy(CMSG_DATA(c), &v, sizeof(v));
			}
		}
		if (rnd(t, 6) == 0) {
			sl = rnd_addr(t, &ss, 0);
			m.msg_name = &ss;
			m.msg_namelen = sl;
		}
		r = sendmsg(fd, &m, MSG_NOSIGNAL | (rnd(t, 2) ? MSG_DONTWAIT : 0) |
			    (rnd(t, 4) ? 0 : MSG_EOR));
		break;
	}
	case OP_RECV: {
		static const int fl[] = { 0, MSG_PEEK, MSG_TRUNC, MSG_WAITALL, MSG_OOB,
					  MSG_PEEK | MSG_TRUNC, MSG_ERRQUEUE };
		size_t n = rnd(t, 4) ? rnd(t, 65536) : rnd(t, BUF);

		flags = fl[rnd(t, 7)] | (rnd(t, 2) ? MSG_DONTWAIT : 0);
		if (rnd(t, 3)) {
			r = recv(fd, buf, n, flags);
		} else {
			char cbuf[64];
			struct iovec iov = { buf, n };
			struct msghdr m = { .msg_name = &ss, .msg_namelen = sizeof(ss),
					    .msg_iov = &iov, .msg_iovlen = 1,
					    .msg_control = cbuf,
					    .msg_controllen = rnd(t, sizeof(cbuf)) };
			r = recvmsg(fd, &m, flags);
		}
		break;
	}
	case OP_SETSOCKOPT: {
		int opt = rnd(t, 5) ? 1 + (int)rnd(t, 6) : nasty_int(t);

		v = nasty_int(t);
		if (opt == MRC_EV_COUNT && rnd(t, 2))
			v = 1 + rnd(t, 256);
		r = setsockopt(fd, rnd(t, 10) ? SOL_MRC : nasty_int(t), opt, &v,
			       rnd(t, 4) ? sizeof(v) : rnd(t, 9));
		break;
	}
	case OP_GETSOCKOPT: {
		int opt = rnd(t, 5) ? 1 + (int)rnd(t, 6) : nasty_int(t);

		sl = rnd(t, 3) ? rnd(t, 4096) : (socklen_t)nasty_int(t);
		if (sl > 4096 && (int)sl > 0)
			sl = 4096;
		r = getsockopt(fd, SOL_MRC, opt, buf, &sl);
		break;
	}
	case OP_SOL_SOCKET: {
		/*
		 * No SO_TIMESTAMP*: turning timestamps on and off flips a static
		 * key, and qemu TCG's multi-threaded emulation races with the
		 * kernel's live text patching (an "Oops: int3" in
		 * __netif_receive_skb_core, nothing to do with MRC).
		 */
		static const int so[] = {
			SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE, SO_PRIORITY,
			SO_LINGER, SO_KEEPALIVE, SO_REUSEADDR, SO_REUSEPORT, SO_RCVLOWAT,
			SO_SNDLOWAT, SO_MARK, SO_BINDTODEVICE, SO_OOBINLINE, SO_ZEROCOPY,
			SO_BUSY_POLL, SO_ERROR, SO_TYPE, SO_PROTOCOL,
			SO_INCOMING_CPU, SO_MAX_PACING_RATE, SO_TXTIME, SO_RCVMARK,
		};
		int opt = so[rnd(t, sizeof(so) / sizeof(so[0]))];
		struct linger lg = { rnd(t, 2), rnd(t, 3) };

		if (rnd(t, 4) == 0) {
			sl = sizeof(int) * 2;
			r = getsockopt(fd, SOL_SOCKET, opt, buf, &sl);
		} else if (opt == SO_LINGER) {
			r = setsockopt(fd, SOL_SOCKET, opt, &lg, sizeof(lg));
		} else if (opt == SO_BINDTODEVICE) {
			r = setsockopt(fd, SOL_SOCKET, opt, rnd(t, 2) ? "lo" : "", rnd(t, 2) ? 3 : 0);
		} else {
			v = nasty_int(t);
			if ((opt == SO_SNDBUF || opt == SO_RCVBUF || opt == SO_SNDBUFFORCE ||
			     opt == SO_RCVBUFFORCE) && rnd(t, 2))
				v = rnd(t, 2) ? 1 : 1 + rnd(t, 8192);
			r = setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
		}
		break;
	}
	case OP_SHUTDOWN:
		r = shutdown(fd, rnd(t, 8) ? (int)rnd(t, 3) : nasty_int(t));
		break;
	case OP_CLOSE: {
		int i = rnd(t, SLOTS);

		fd = atomic_exchange(&slots[i], -1);
		if (fd >= 0) {
			if (!rnd(t, 4)) {	/* abortive close */
				struct linger lg = { 1, 0 };

				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			}
			r = close(fd);
		}
		break;
	}
	case OP_POLL: {
		struct pollfd p[4];

		for (int i = 0; i < 4; i++) {
			p[i].fd = slot_fd(t);
			p[i].events = rnd(t, 2) ? POLLIN | POLLOUT | POLLPRI | POLLRDHUP : rnd(t, 0x10000);
		}
		r = poll(p, 1 + rnd(t, 4), rnd(t, 3) ? 0 : rnd(t, 30));
		break;
	}
	case OP_GETNAME:
		sl = rnd(t, 3) ? sizeof(ss) : rnd(t, sizeof(ss));
		r = rnd(t, 2) ? getsockname(fd, (void *)&ss, &sl) : getpeername(fd, (void *)&ss, &sl);
		break;
	case OP_IOCTL: {
		static const unsigned long req[] = { FIONREAD, TIOCOUTQ, SIOCATMARK, FIONBIO, 0x8915 };

		v = 0;
		r = ioctl(fd, req[rnd(t, 5)], &v);
		break;
	}
	case OP_PAIR: {	/* a coherent listen/connect/accept, so data flows */
		int type = rnd(t, 2) ? SOCK_STREAM : SOCK_SEQPACKET, v6 = rnd(t, 3) == 0;
		int l = socket(fam, type, 0), c = socket(fam, type | SOCK_NONBLOCK, 0), a;
		struct sockaddr_in6 *s6 = (void *)&ss;
		struct sockaddr_in *s4 = (void *)&ss;

		memset(&ss, 0, sizeof(ss));
		if (v6) {
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_loopback;
			s6->sin6_port = htons(baseport + 8 + rnd(t, 8));
			sl = sizeof(*s6);
		} else {
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			s4->sin_port = htons(baseport + 8 + rnd(t, 8));
			sl = sizeof(*s4);
		}
		if (l < 0 || c < 0 || bind(l, (void *)&ss, sl) || listen(l, 4)) {
			if (l >= 0)
				close(l);
			if (c >= 0)
				close(c);
			break;
		}
		connect(c, (void *)&ss, sl);
		set_timeouts(l);
		a = accept(l, NULL, NULL);
		if (rnd(t, 2)) {
			slot_put(t, l);
		} else {
			close(l);
		}
		slot_put(t, c);
		if (a >= 0) {
			slot_put(t, a);
			r = 0;
		}
		break;
	}
	case OP_FCNTL:
		flags = fcntl(fd, F_GETFL);
		r = flags < 0 ? -1 : fcntl(fd, F_SETFL, flags ^ O_NONBLOCK);
		break;
	}
	return r;
}

static volatile int stop;

static void *worker(void *p)
{
	struct thr *t = p;
	int total = 0;

	for (int i = 0; i < OP_MAX; i++)
		total += op_weight[i];
	while (!stop) {
		int w = rnd(t, total), op = 0;

		while (w >= op_weight[op])
			w -= op_weight[op++];
		atomic_fetch_add(&op_count[op], 1);
		if (do_op(t, op) >= 0)
			atomic_fetch_add(&op_ok[op], 1);
		else if (verbose && errno != EBADF && errno != EAGAIN)
			fprintf(stderr, "%s: %s\n", op_names[op], strerror(errno));
	}
	return NULL;
}

static void report(void)
{
	unsigned long long all = 0;

	printf("ops");
	for (int i = 0; i < OP_MAX; i++) {
		printf(" %s=%llu/%llu", op_names[i], (unsigned long long)op_ok[i],
		       (unsigned long long)op_count[i]);
		all += op_count[i];
	}
	printf("\ntotal_ops=%llu\n", all);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct thr thr[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	unsigned long long seed = 1;
	int opt, secs = 30, nthr = 4;

	while ((opt = getopt(argc, argv, "d:s:j:b:v")) != -1) {
		switch (opt) {
		case 'd': secs = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'j': nthr = atoi(optarg); break;
		case 'b': baseport = atoi(optarg); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of mrc_sysfuzz.c\n");
			return 2;
		}
	}
	if (nthr < 1 || nthr > MAX_THREADS)
		nthr = 4;
	signal(SIGPIPE, SIG_IGN);
	fam = mrc_family();
	for (int i = 0; i < SLOTS; i++)
		slots[i] = -1;
	for (int i = 0; i < nthr; i++) {
		thr[i].rng = seed * 1000003 + i;
		thr[i].buf = calloc(1, BUF);
		if (!thr[i].buf || pthread_create(&th[i], NULL, worker, &thr[i])) {
			perror("thread");
			return 1;
		}
	}
	sleep(secs);
	stop = 1;
	/* threads stuck in a blocking call past their timeouts: exit anyway */
	for (int i = 0; i < 20; i++) {
		usleep(100000);
	}
	report();
	/* exit closes whatever is left, from every thread at once */
	_exit(0);
}
