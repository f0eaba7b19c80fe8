// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_coll: one rank of a collective (ring all-reduce, all-to-all or a
 * broadcast tree) over AF_MRC, TCP or MPTCP, verified, timed per iteration.
 *
 *   mrc_coll -r RANK -H HOSTFILE [-t mrc|tcp|mptcp] [-o allreduce|alltoall|bcast]
 *            [-s BYTES] [-n ITERS] [-w WARMUP] [-d DURATION_S] [-p BASEPORT]
 *            [-P PRIO] [-U USER_TIMEOUT_MS] [-D DEADLINE_MS] [-T STALL_S]
 *            [-B SOCKBUF] [-q]
 *
 * Every rank is one process (usually "ip netns exec hN mrc_coll -r N ...").
 * HOSTFILE has one IPv4 or IPv6 literal a line; the i-th address line is
 * rank i (blank lines and lines starting with '#' are skipped); the number
 * of address lines is the number of ranks.  Rank i listens on its address
 * at BASEPORT+i (default 9000+i) and the ranks connect in the collective's
 * pattern, retrying a failed connect every 50 ms for 20 s (peers start at
 * slightly different times); a rank waits 40 s at most for its peers':
 *   allreduce  ring: i connects to i+1 (mod N), accepts from i-1; data goes
 *              i -> i+1 only
 *   alltoall   full mesh: the lower rank connects to the higher
 *   bcast      binary tree from rank 0: a parent (i) connects to its
 *              children 2i+1 and 2i+2
 * Sockets get TCP_NODELAY / MRC_NODELAY; -P sets MRC_PRIORITY (0 bulk .. 7
 * urgent; AF_MRC only), -U TCP_USER_TIMEOUT / MRC_USER_TIMEOUT, -B both
 * SO_SNDBUF and SO_RCVBUF (to test small buffers).  Sizes take a K, M or G
 * suffix (binary).
 *
 * Operations, S = -s BYTES (default 1 MiB):
 *   allreduce  S/4 float32 per rank (S a multiple of 4), ring reduce-scatter
 *              (N-1 steps) then all-gather (N-1 steps); each step sends and
 *              receives at once (non-blocking sockets and poll()).  Inputs
 *              are small integers from (rank, iteration, index), so the
 *              float sums are exact; every rank checks every element.
 *   alltoall   each rank sends S/N bytes to every other rank, a pattern of
 *              (source, destination, iteration); receivers check them.
 *   bcast      rank 0's S bytes (a pattern of the iteration) go down the
 *              tree, forwarded as they arrive; every rank checks them.
 *
 * Iterations: -w WARMUP (default 3) unreported, then -n ITERS (default 20)
 * or, with -d, as many as start within DURATION_S seconds (-n then caps
 * them).  Each iteration begins with a barrier: a gather to rank 0 (around
 * the ring, to rank 0 in the mesh, up the tree) and a release from rank 0,
 * which starts rank 0's clock; the collective follows, then a "done" gather
 * whose arrival at rank 0 stops it.  An iteration's time is therefore the
 * slowest rank's completion time (plus one small message's latency per hop
 * of the gather).  Data generation and checking fall outside the timed part;
 * a rank's check result travels in the next barrier so that all ranks stop.
 *
 * Output (rank 0 only; other ranks print only errors, -q: nothing), one line
 * per measured iteration (printed once the next barrier has brought every
 * rank's check of it: ok=0 if one failed), then a summary:
 *   start realtime_ms=<CLOCK_REALTIME of the first measured start>
 *   iter=K t_ms=<start, ms after the first measured start> ms=<time> ok=1
 *   summary op=allreduce transport=mrc ranks=N bytes=S iters=K p50_ms=..
 *           p99_ms=.. max_ms=.. mean_ms=.. interruptions=I deadline_ms=D
 *           failed=0 ok=1
 * An interruption is an iteration longer than the deadline: -D DEADLINE_MS,
 * else 10x the median of the warmup iterations (with -w 0: of the first 5
 * measured ones).  A connection failure (send/receive error, EOF, or no
 * progress for STALL_S seconds, default 30: this includes a rank waiting in
 * a barrier for the others, so an iteration longer than STALL_S fails the
 * job: raise -T for scenarios that allow that) is a failed job step: the rank
 * prints "error=<ERRNO name, or EOF> iter=K rank=R [at=WHERE]" (K counts the
 * measured iterations from 0; warmup ones are -WARMUP..-1 and connection
 * set-up is -WARMUP-1), resets its connections so that
 * every peer fails within moments too, and exits 2; rank 0 still prints a
 * summary (failed=1 ok=0).  A verification failure prints "error=verify ..."
 * and exits 1 on every rank.
 *
 * Exit codes: 0 ok, 1 verification failure, 2 connection failure, 3 usage
 * (or ranks that disagree on the operation, size or number of ranks).
 *
 * Debugging: MRC_COLL_CORRUPT=RANK:ITER makes RANK corrupt what it sends in
 * iteration ITER (counted from 0, warmup included), which the receivers must
 * catch (all-reduce: one input element; all-to-all: a byte of the block for
 * RANK+1; broadcast: only rank 0, a byte of its buffer).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/mrc.h>
#include "mrc_lib.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define EXIT_VERIFY	1
#define EXIT_CONN	2
#define EXIT_USAGE	3

#define SETUP_S		20	/* connect retries for this long */
#define ACCEPT_S	40	/* all expected peers connected within this */
#define HELLO_MAGIC	0x4d52434bu	/* "MRCK" */
#define TOKEN_MAGIC	0x4d524354u	/* "MRCT" */

enum { T_MRC, T_TCP, T_MPTCP };
enum { OP_ALLREDUCE, OP_ALLTOALL, OP_BCAST };
static const char *const tnames[] = { "mrc", "tcp", "mptcp" };
static const char *const onames[] = { "allreduce", "alltoall", "bcast" };

/* release flags */
#define REL_STOP	1u
#define REL_ABORT	2u

struct token {
	uint32_t magic;
	uint32_t iter;
	uint32_t val;	/* gather: verify failures so far; release: REL_* */
	uint32_t pad;
};

struct hello {
	uint32_t magic, rank, nranks, op, size_lo, size_hi;
};

/* one pending transfer on a connection */
struct xop {
	int fd;
	int send;		/* 1: send, 0: receive */
	char *buf;
	size_t len, off;
	const struct xop *src;	/* send only what src has received so far */
};

static struct {
	int rank, n, transport, op, quiet, prio, utimeo, sockbuf, stall_ms;
	int port;
	size_t size;
	char **addr;
	int corrupt_rank, corrupt_iter;
	long iter;		/* iteration in progress, warmup included */
	long warmup;
} g = { .prio = -1, .utimeo = -1, .stall_ms = 30000, .port = 9000,
	.corrupt_rank = -1, .size = 1 << 20 };

/* connections: every fd this rank holds */
static int conn_fd[4096];
static int nconn;

/* pattern roles */
static int ring_out = -1, ring_in = -1;	/* allreduce */
static int *mesh;				/* alltoall: fd per peer rank */
static int tree_parent = -1, tree_child[2] = { -1, -1 };

static double now_ms(void)
{
	return mrc_now_s() * 1e3;
}

static const char *errname(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "EUNKNOWN";
}

static void summary_failed(void);
/* When the measured iterations begin, in wall-clock time: a test or bench
 * places failures against it (t_ms of the iteration lines counts from it). */
static void print_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (!g.quiet)
		printf("start realtime_ms=%lld\n", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	fflush(stdout);
}

static void print_pending(int ok);
static int setup_done;

/*
 * Rank 0 prints an iteration's line once the next gather told whether every
 * rank's check passed: the measured iteration waiting for that, and this
 * rank's own check of it.
 */
static struct {
	int have, own_bad;
	long k;
	double t, ms;
} pend;

/*
 * Prints "error=<errno name> iter=K" (unless @e is -1: already said), resets
 * every connection (peers fail at once rather than wait) and exits 2.
 */
static void die_conn(const char *what, int e)
{
	struct linger lg = { 1, 0 };
	int i;

	if (g.rank == 0 && setup_done)
		print_pending(!pend.own_bad);
	if (!g.quiet && e != -1)
		printf("error=%s iter=%ld rank=%d%s%s\n", e ? errname(e) : "EOF", g.iter - g.warmup,
		       g.rank, what ? " at=" : "", what ? what : "");
	summary_failed();
	fflush(stdout);
	for (i = 0; i < nconn; i++) {
		setsockopt(conn_fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(conn_fd[i]);
	}
	exit(EXIT_CONN);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mrc_coll -r RANK -H HOSTFILE [-t mrc|tcp|mptcp] [-o allreduce|alltoall|bcast]\n"
		"                [-s BYTES] [-n ITERS] [-w WARMUP] [-d DURATION_S] [-p BASEPORT]\n"
		"                [-P PRIO] [-U USER_TIMEOUT_MS] [-D DEADLINE_MS] [-T STALL_S]\n"
		"                [-B SOCKBUF] [-q]\n");
	exit(EXIT_USAGE);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(EXIT_USAGE);
	}
	return p;
}

static long parse_num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s)
		usage();
	/* K, M, G suffixes (binary) for sizes */
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	if (*end || v < min || v > max)
		usage();
	return v;
}

static void read_hostfile(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int cap = 16;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(EXIT_USAGE);
	}
	g.addr = xmalloc(cap * sizeof(*g.addr));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *e;
		unsigned char tmp[16];

		while (*p == ' ' || *p == '\t')
			p++;
		for (e = p; *e && *e != '\n' && *e != '\r' && *e != ' ' && *e != '\t'; e++)
			;
		*e = 0;
		if (!*p || *p == '#')
			continue;
		if (inet_pton(AF_INET, p, tmp) != 1 && inet_pton(AF_INET6, p, tmp) != 1) {
			fprintf(stderr, "%s: bad address %s\n", path, p);
			exit(EXIT_USAGE);
		}
		if (g.n == cap) {
			cap *= 2;
			g.addr = realloc(g.addr, cap * sizeof(*g.addr));
			if (!g.addr)
				exit(EXIT_USAGE);
		}
		g.addr[g.n++] = strdup(p);
	}
	fclose(f);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void sockopt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)) && !g.quiet)
		fprintf(stderr, "rank %d: setsockopt %s: %s\n", g.rank, what, strerror(errno));
}

/* The options every connection (and the listener, for inheritance) gets. */
static void set_opts(int fd)
{
	if (g.sockbuf > 0) {
		sockopt(fd, SOL_SOCKET, SO_SNDBUF, g.sockbuf, "SO_SNDBUF");
		sockopt(fd, SOL_SOCKET, SO_RCVBUF, g.sockbuf, "SO_RCVBUF");
	}
	if (g.transport == T_MRC) {
		sockopt(fd, SOL_MRC, MRC_NODELAY, 1, "MRC_NODELAY");
		if (g.prio >= 0)
			sockopt(fd, SOL_MRC, MRC_PRIORITY, g.prio, "MRC_PRIORITY");
		if (g.utimeo >= 0)
			sockopt(fd, SOL_MRC, MRC_USER_TIMEOUT, g.utimeo, "MRC_USER_TIMEOUT");
	} else {
		sockopt(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
		if (g.utimeo >= 0)
			sockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, g.utimeo, "TCP_USER_TIMEOUT");
	}
}

static int new_socket(int af)
{
	int fd;

	if (g.transport == T_MRC)
		fd = socket(mrc_family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
	else
		fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC,
			    g.transport == T_MPTCP ? IPPROTO_MPTCP : 0);
	if (fd < 0) {
		if (!g.quiet)
			printf("error=%s iter=%ld rank=%d at=socket\n", errname(errno),
			       g.iter - g.warmup, g.rank);
		exit(EXIT_CONN);
	}
	set_opts(fd);
	return fd;
}

static void add_conn(int fd)
{
	if (nconn == (int)ARRAY_SIZE(conn_fd)) {
		fprintf(stderr, "too many connections\n");
		exit(EXIT_USAGE);
	}
	conn_fd[nconn++] = fd;
}

/*
 * Moves data until every op is done.  Every connection is polled for a
 * hang-up if @watch_all (no peer may leave during an iteration), else only
 * the ones with ops.  Any error, EOF or STALL_S without progress dies.
 */
static void run_ops(struct xop *ops, int nops, int watch_all)
{
	struct pollfd pfd[4096];
	int i, j, left;
	double last = now_ms();

	for (;;) {
		left = 0;
		for (i = 0; i < nconn; i++) {
			pfd[i].fd = conn_fd[i];
			pfd[i].events = watch_all ? POLLRDHUP : 0;
			pfd[i].revents = 0;
		}
		for (j = 0; j < nops; j++) {
			struct xop *o = &ops[j];
			size_t lim = o->src ? o->src->off : o->len;

			if (o->off >= o->len)
				continue;
			left++;
			for (i = 0; i < nconn && conn_fd[i] != o->fd; i++)
				;
			if (o->send) {
				if (o->off < lim)
					pfd[i].events |= POLLOUT;
			} else {
				pfd[i].events |= POLLIN | POLLRDHUP;
			}
			pfd[i].events |= POLLRDHUP;
		}
		if (!left)
			return;
		for (i = 0; i < nconn; i++)
			if (!pfd[i].events)
				pfd[i].fd = -1;

		int n = poll(pfd, nconn, 200);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die_conn("poll", errno);
		}
		if (n == 0) {
			if (now_ms() - last > g.stall_ms)
				die_conn("stall", ETIMEDOUT);
			continue;
		}
		for (i = 0; i < nconn; i++) {
			short re = pfd[i].revents;
			int progress = 0, reading = 0;

			if (!re)
				continue;
			for (j = 0; j < nops; j++) {
				struct xop *o = &ops[j];
				size_t lim = o->src ? o->src->off : o->len;

				if (o->fd != conn_fd[i] || o->off >= o->len)
					continue;
				if (!o->send)
					reading = 1;
				while (o->off < (o->send ? lim : o->len)) {
					ssize_t r;

					if (o->send)
						r = send(o->fd, o->buf + o->off, lim - o->off,
							 MSG_NOSIGNAL | MSG_DONTWAIT);
					else
						r = recv(o->fd, o->buf + o->off, o->len - o->off,
							 MSG_DONTWAIT);
					if (r > 0) {
						o->off += r;
						progress = 1;
						continue;
					}
					if (r == 0 && !o->send)
						die_conn(NULL, 0);	/* EOF */
					if (errno == EINTR)
						continue;
					if (errno == EAGAIN || errno == EWOULDBLOCK)
						break;
					die_conn(o->send ? "send" : "recv", errno);
				}
			}
			if (progress)
				last = now_ms();
			/* a hang-up or error where no read will find it */
			if ((re & (POLLERR | POLLHUP | POLLRDHUP)) && !progress && !reading) {
				int e = 0;
				socklen_t el = sizeof(e);

				getsockopt(conn_fd[i], SOL_SOCKET, SO_ERROR, &e, &el);
				die_conn("hangup", e);
			}
		}
		if (now_ms() - last > g.stall_ms)
			die_conn("stall", ETIMEDOUT);
	}
}

static void xfer1(int fd, int send, void *buf, size_t len, int watch_all)
{
	struct xop o = { .fd = fd, .send = send, .buf = buf, .len = len };

	run_ops(&o, 1, watch_all);
}

static void tok_send(int fd, uint32_t val, int watch_all)
{
	struct token t = { TOKEN_MAGIC, (uint32_t)g.iter, val, 0 };

	xfer1(fd, 1, &t, sizeof(t), watch_all);
}

static uint32_t tok_recv(int fd, int watch_all)
{
	struct token t;

	xfer1(fd, 0, &t, sizeof(t), watch_all);
	if (t.magic != TOKEN_MAGIC || t.iter != (uint32_t)g.iter) {
		printf("error=verify iter=%ld rank=%d what=token magic=%#x iter=%u\n",
		       g.iter - g.warmup, g.rank, t.magic, t.iter);
		fflush(stdout);
		exit(EXIT_VERIFY);
	}
	return t.val;
}

/* ---- connection setup ---- */

static int connect_to(int peer)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(g.addr[peer], g.port + peer, 0, &ss);
	double end = mrc_now_s() + SETUP_S;
	struct hello h = { HELLO_MAGIC, g.rank, g.n, g.op, (uint32_t)g.size,
			   (uint32_t)((uint64_t)g.size >> 32) };
	int e = 0;

	for (;;) {
		int fd = new_socket(ss.ss_family);
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		double left = end - mrc_now_s();
		socklen_t el = sizeof(e);

		set_nonblock(fd);
		if (!connect(fd, (void *)&ss, len)) {
			e = 0;
		} else if (errno == EINPROGRESS) {
			int r;

			do {
				r = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 1);
			} while (r < 0 && errno == EINTR);
			if (r == 0)
				e = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el))
				e = errno;
		} else {
			e = errno;
		}
		if (!e) {
			add_conn(fd);
			xfer1(fd, 1, &h, sizeof(h), 0);
			return fd;
		}
		close(fd);
		if (mrc_now_s() + 0.05 >= end)
			break;
		usleep(50 * 1000);
	}
	if (!g.quiet)
		printf("error=%s iter=%ld rank=%d at=connect peer=%d\n", errname(e),
		       g.iter - g.warmup, g.rank, peer);
	fflush(stdout);
	die_conn(NULL, -1);
	return -1;
}

/* Accepts connections until every rank in want[] (want[r] = 1) came. */
static void accept_peers(int lfd, const int *want, int *fd_of, int count)
{
	double end = mrc_now_s() + ACCEPT_S;

	while (count > 0) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		double left = end - mrc_now_s();
		struct hello h;
		int r, fd;

		if (left <= 0) {
			if (!g.quiet)
				printf("error=ETIMEDOUT iter=%ld rank=%d at=accept missing=%d\n",
				       g.iter - g.warmup, g.rank, count);
			fflush(stdout);
			die_conn(NULL, -1);
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
				continue;
			die_conn("accept", errno);
		}
		set_opts(fd);
		add_conn(fd);
		xfer1(fd, 0, &h, sizeof(h), 0);
		if (h.magic != HELLO_MAGIC || h.rank >= (uint32_t)g.n || !want[h.rank] ||
		    fd_of[h.rank] >= 0) {
			fprintf(stderr, "rank %d: unexpected connection (rank %u)\n", g.rank, h.rank);
			exit(EXIT_USAGE);
		}
		if (h.nranks != (uint32_t)g.n || h.op != (uint32_t)g.op ||
		    (h.size_lo | (uint64_t)h.size_hi << 32) != g.size) {
			fprintf(stderr, "rank %d: rank %u runs another job (n=%u op=%u size=%u)\n",
				g.rank, h.rank, h.nranks, h.op, h.size_lo);
			exit(EXIT_USAGE);
		}
		fd_of[h.rank] = fd;
		count--;
	}
}

static void setup(void)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(g.addr[g.rank], g.port + g.rank, 0, &ss);
	int *want = calloc(g.n, sizeof(int)), *fd_of = xmalloc(g.n * sizeof(int));
	int lfd, one = 1, i, count = 0;

	if (!want)
		exit(EXIT_USAGE);
	for (i = 0; i < g.n; i++)
		fd_of[i] = -1;
	lfd = new_socket(ss.ss_family);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (void *)&ss, len) || listen(lfd, g.n + 16)) {
		if (!g.quiet)
			printf("error=%s iter=%ld rank=%d at=listen addr=%s port=%d\n",
			       errname(errno), g.iter - g.warmup, g.rank, g.addr[g.rank],
			       g.port + g.rank);
		exit(EXIT_CONN);
	}
	set_nonblock(lfd);

	/* connect first (peers' backlogs take us), accept after */
	if (g.op == OP_ALLREDUCE) {
		ring_out = connect_to((g.rank + 1) % g.n);
		want[(g.rank + g.n - 1) % g.n] = 1;
		count = 1;
	} else if (g.op == OP_ALLTOALL) {
		mesh = xmalloc(g.n * sizeof(int));
		for (i = 0; i < g.n; i++)
			mesh[i] = -1;
		for (i = g.rank + 1; i < g.n; i++)
			mesh[i] = connect_to(i);
		for (i = 0; i < g.rank; i++)
			want[i] = 1;
		count = g.rank;
	} else {
		for (i = 0; i < 2; i++)
			if (2 * g.rank + 1 + i < g.n)
				tree_child[i] = connect_to(2 * g.rank + 1 + i);
		if (g.rank) {
			want[(g.rank - 1) / 2] = 1;
			count = 1;
		}
	}
	accept_peers(lfd, want, fd_of, count);
	close(lfd);
	if (g.op == OP_ALLREDUCE)
		ring_in = fd_of[(g.rank + g.n - 1) % g.n];
	else if (g.op == OP_ALLTOALL)
		for (i = 0; i < g.rank; i++)
			mesh[i] = fd_of[i];
	else if (g.rank)
		tree_parent = fd_of[(g.rank - 1) / 2];
	free(want);
	free(fd_of);
}

/* ---- barriers ---- */

/*
 * Gather to rank 0: returns (on rank 0) the sum of @val over all ranks.
 * Every connection is watched: no peer leaves before the release.
 */
static uint32_t gather(uint32_t val)
{
	int i;

	if (g.n == 1)
		return val;
	if (g.op == OP_ALLREDUCE) {
		if (g.rank == 0) {
			tok_send(ring_out, val, 1);
			return tok_recv(ring_in, 1);
		}
		val += tok_recv(ring_in, 1);
		tok_send(ring_out, val, 1);
		return val;
	}
	if (g.op == OP_ALLTOALL) {
		if (g.rank) {
			tok_send(mesh[0], val, 1);
			return val;
		}
		for (i = 1; i < g.n; i++)
			val += tok_recv(mesh[i], 1);
		return val;
	}
	for (i = 0; i < 2; i++)
		if (tree_child[i] >= 0)
			val += tok_recv(tree_child[i], 1);
	if (g.rank)
		tok_send(tree_parent, val, 1);
	return val;
}

/*
 * Release from rank 0 with REL_* @flags; returns them on every rank.  Only
 * the connection read from is watched: peers that got a stop leave.
 */
static uint32_t release(uint32_t flags)
{
	int i;

	if (g.n == 1)
		return flags;
	if (g.op == OP_ALLREDUCE) {
		if (g.rank)
			flags = tok_recv(ring_in, 0);
		if (g.rank != g.n - 1)
			tok_send(ring_out, flags, 0);
		return flags;
	}
	if (g.op == OP_ALLTOALL) {
		if (g.rank)
			return tok_recv(mesh[0], 0);
		for (i = 1; i < g.n; i++)
			tok_send(mesh[i], flags, 0);
		return flags;
	}
	if (g.rank)
		flags = tok_recv(tree_parent, 0);
	for (i = 0; i < 2; i++)
		if (tree_child[i] >= 0)
			tok_send(tree_child[i], flags, 0);
	return flags;
}

/* ---- data ---- */

/* all-reduce input: small integers, so that any order of sums is exact */
static inline int ar_in(int rank, long k, size_t i)
{
	return (int)((7u * rank + 13u * (unsigned long)k + 3u * (i % 17)) % 17) - 8;
}

static float *ar_data, *ar_tmp;
static unsigned char *a2a_tx, *a2a_rx, *bc_buf;

static size_t chunk_lo(size_t count, int c)
{
	return (size_t)((uint64_t)count * c / g.n);
}

static void ar_prepare(void)
{
	size_t count = g.size / 4, i;

	for (i = 0; i < count; i++)
		ar_data[i] = (float)ar_in(g.rank, g.iter, i);
	if (g.corrupt_rank == g.rank && g.corrupt_iter == g.iter && count)
		ar_data[count / 2 + 1 < count ? count / 2 + 1 : 0] += 1.0f;
}

static void ar_run(void)
{
	size_t count = g.size / 4;
	int s, r = g.rank, n = g.n;

	for (s = 0; s < n - 1; s++) {
		int sc = ((r - s) % n + n) % n, rc = ((r - s - 1) % n + n) % n;
		size_t slo = chunk_lo(count, sc), shi = chunk_lo(count, sc + 1);
		size_t rlo = chunk_lo(count, rc), rhi = chunk_lo(count, rc + 1), i;
		struct xop o[2] = {
			{ .fd = ring_out, .send = 1, .buf = (char *)(ar_data + slo),
			  .len = (shi - slo) * 4 },
			{ .fd = ring_in, .send = 0, .buf = (char *)ar_tmp,
			  .len = (rhi - rlo) * 4 },
		};

		run_ops(o, 2, 1);
		for (i = rlo; i < rhi; i++)
			ar_data[i] += ar_tmp[i - rlo];
	}
	for (s = 0; s < n - 1; s++) {
		int sc = ((r + 1 - s) % n + n) % n, rc = ((r - s) % n + n) % n;
		size_t slo = chunk_lo(count, sc), shi = chunk_lo(count, sc + 1);
		size_t rlo = chunk_lo(count, rc), rhi = chunk_lo(count, rc + 1);
		struct xop o[2] = {
			{ .fd = ring_out, .send = 1, .buf = (char *)(ar_data + slo),
			  .len = (shi - slo) * 4 },
			{ .fd = ring_in, .send = 0, .buf = (char *)(ar_data + rlo),
			  .len = (rhi - rlo) * 4 },
		};

		run_ops(o, 2, 1);
	}
}

static int ar_verify(void)
{
	size_t count = g.size / 4, i;
	float want[17];
	int c, r;

	for (c = 0; c < 17; c++) {
		int sum = 0;

		for (r = 0; r < g.n; r++)
			sum += ar_in(r, g.iter, c);
		want[c] = (float)sum;
	}
	for (i = 0; i < count; i++) {
		if (ar_data[i] != want[i % 17]) {
			if (!g.quiet)
				printf("error=verify iter=%ld rank=%d index=%zu got=%g want=%g\n",
				       g.iter - g.warmup, g.rank, i, ar_data[i], want[i % 17]);
			return 1;
		}
	}
	return 0;
}

static inline unsigned char pat(uint32_t seed, size_t j)
{
	return (unsigned char)((seed + (uint32_t)j * 0x9e3779b1u) >> 24) ^ (unsigned char)j;
}

static uint32_t a2a_seed(int src, int dst, long k)
{
	return (uint32_t)src * 0x85ebca77u ^ (uint32_t)dst * 0xc2b2ae3du ^
	       (uint32_t)k * 0x27d4eb2fu ^ 0x165667b1u;
}

static size_t a2a_blk(void)
{
	return g.size / g.n;
}

static void a2a_prepare(void)
{
	size_t b = a2a_blk(), j;
	int d;

	for (d = 0; d < g.n; d++) {
		uint32_t seed = a2a_seed(g.rank, d, g.iter);

		for (j = 0; j < b; j++)
			a2a_tx[d * b + j] = pat(seed, j);
	}
	if (g.corrupt_rank == g.rank && g.corrupt_iter == g.iter && b)
		a2a_tx[((g.rank + 1) % g.n) * b + b / 2] ^= 0x40;
	memset(a2a_rx, 0, b * g.n);
}

static void a2a_run(void)
{
	size_t b = a2a_blk();
	struct xop *o = xmalloc(2 * g.n * sizeof(*o));
	int p, k = 0;

	memcpy(a2a_rx + g.rank * b, a2a_tx + g.rank * b, b);
	for (p = 0; p < g.n; p++) {
		if (p == g.rank)
			continue;
		o[k++] = (struct xop){ .fd = mesh[p], .send = 1, .buf = (char *)a2a_tx + p * b,
				       .len = b };
		o[k++] = (struct xop){ .fd = mesh[p], .send = 0, .buf = (char *)a2a_rx + p * b,
				       .len = b };
	}
	run_ops(o, k, 1);
	free(o);
}

static int a2a_verify(void)
{
	size_t b = a2a_blk(), j;
	int s;

	for (s = 0; s < g.n; s++) {
		uint32_t seed = a2a_seed(s, g.rank, g.iter);

		for (j = 0; j < b; j++) {
			if (a2a_rx[s * b + j] != pat(seed, j)) {
				if (!g.quiet)
					printf("error=verify iter=%ld rank=%d from=%d offset=%zu\n",
					       g.iter - g.warmup, g.rank, s, j);
				return 1;
			}
		}
	}
	return 0;
}

static uint32_t bc_seed(long k)
{
	return (uint32_t)k * 0x27d4eb2fu ^ 0xb5297a4du;
}

static void bc_prepare(void)
{
	size_t j;

	if (g.rank) {
		memset(bc_buf, 0, g.size);
		return;
	}
	for (j = 0; j < g.size; j++)
		bc_buf[j] = pat(bc_seed(g.iter), j);
	if (g.corrupt_rank == 0 && g.corrupt_iter == g.iter && g.size)
		bc_buf[g.size / 2] ^= 0x40;
}

static void bc_run(void)
{
	struct xop o[3];
	int k = 0, i;

	if (g.rank)
		o[k++] = (struct xop){ .fd = tree_parent, .send = 0, .buf = (char *)bc_buf,
				       .len = g.size };
	for (i = 0; i < 2; i++)
		if (tree_child[i] >= 0)
			o[k++] = (struct xop){ .fd = tree_child[i], .send = 1,
					       .buf = (char *)bc_buf, .len = g.size,
					       .src = g.rank ? &o[0] : NULL };
	run_ops(o, k, 1);
}

static int bc_verify(void)
{
	uint32_t seed = bc_seed(g.iter);
	size_t j;

	if (!g.rank)
		return 0;
	for (j = 0; j < g.size; j++) {
		if (bc_buf[j] != pat(seed, j)) {
			if (!g.quiet)
				printf("error=verify iter=%ld rank=%d offset=%zu\n", g.iter - g.warmup,
				       g.rank, j);
			return 1;
		}
	}
	return 0;
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted v[n] */
static double pct(const double *v, long n, double p)
{
	long k = (long)(p / 100.0 * n + 0.999999) - 1;

	if (n <= 0)
		return 0;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static double median(const double *v, long n)
{
	double *s;
	double m;

	if (n <= 0)
		return 0;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static void summary(const double *t, long n, const double *wt, long nw, double deadline,
		    int failed, int ok)
{
	double *s = xmalloc((n ? n : 1) * sizeof(*s)), sum = 0, dl = deadline;
	long i, intr = 0;

	if (dl <= 0) {
		if (nw)
			dl = 10 * median(wt, nw);
		else
			dl = 10 * median(t, n < 5 ? n : 5);
	}
	for (i = 0; i < n; i++) {
		s[i] = t[i];
		sum += t[i];
		if (dl > 0 && t[i] > dl)
			intr++;
	}
	qsort(s, n, sizeof(*s), cmp_double);
	printf("summary op=%s transport=%s ranks=%d bytes=%zu iters=%ld p50_ms=%.3f p99_ms=%.3f "
	       "max_ms=%.3f mean_ms=%.3f interruptions=%ld deadline_ms=%.3f failed=%d ok=%d\n",
	       onames[g.op], tnames[g.transport], g.n, g.size, n, pct(s, n, 50), pct(s, n, 99),
	       n ? s[n - 1] : 0.0, n ? sum / n : 0.0, intr, dl, failed, ok);
	fflush(stdout);
	free(s);
}

/* rank 0's per-iteration record, for a summary even after a failure */
static double *times, *wtimes;
static long ntimes, nwtimes;
static double g_deadline;

static void print_pending(int ok)
{
	if (pend.have && !g.quiet)
		printf("iter=%ld t_ms=%.3f ms=%.3f ok=%d\n", pend.k, pend.t, pend.ms, ok);
	pend.have = 0;
}

/* rank 0, after a connection failure: what ran until then */
static void summary_failed(void)
{
	if (g.rank == 0 && setup_done && !g.quiet)
		summary(times, ntimes, wtimes, nwtimes, g_deadline, 1, 0);
}

int main(int argc, char **argv)
{
	long iters = 20, duration_s = 0, capt = 64;
	int nset = 0, c, bad = 0;
	const char *hostfile = NULL, *env;
	double t_first = 0, t0 = 0;
	uint32_t flags = 0;

	g.rank = -1;
	g.warmup = 3;
	while ((c = getopt(argc, argv, "r:H:t:o:s:n:w:p:P:D:d:U:T:B:qh")) != -1) {
		switch (c) {
		case 'r':
			g.rank = parse_num(optarg, 0, 65535);
			break;
		case 'H':
			hostfile = optarg;
			break;
		case 't':
			for (g.transport = 0; g.transport < 3; g.transport++)
				if (!strcmp(optarg, tnames[g.transport]))
					break;
			if (g.transport == 3)
				usage();
			break;
		case 'o':
			for (g.op = 0; g.op < 3; g.op++)
				if (!strcmp(optarg, onames[g.op]))
					break;
			if (g.op == 3)
				usage();
			break;
		case 's':
			g.size = parse_num(optarg, 0, 1L << 32);
			break;
		case 'n':
			iters = parse_num(optarg, 1, 100000000);
			nset = 1;
			break;
		case 'w':
			g.warmup = parse_num(optarg, 0, 1000000);
			break;
		case 'p':
			g.port = parse_num(optarg, 1, 65535);
			break;
		case 'P':
			g.prio = parse_num(optarg, 0, 7);
			break;
		case 'D':
			g_deadline = parse_num(optarg, 1, 1L << 40);
			break;
		case 'd':
			duration_s = parse_num(optarg, 1, 1L << 30);
			break;
		case 'U':
			g.utimeo = parse_num(optarg, 0, INT32_MAX);
			break;
		case 'T':
			g.stall_ms = parse_num(optarg, 1, 1L << 20) * 1000;
			break;
		case 'B':
			g.sockbuf = parse_num(optarg, 1, 1L << 30);
			break;
		case 'q':
			g.quiet = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || g.rank < 0 || !hostfile)
		usage();
	read_hostfile(hostfile);
	if (g.n < 1 || g.rank >= g.n || g.port + g.n - 1 > 65535) {
		fprintf(stderr, "rank %d of %d ranks (base port %d)?\n", g.rank, g.n, g.port);
		exit(EXIT_USAGE);
	}
	if (g.op == OP_ALLREDUCE && g.size % 4) {
		fprintf(stderr, "allreduce: bytes must be a multiple of 4 (float32)\n");
		exit(EXIT_USAGE);
	}
	if (duration_s && !nset)
		iters = 100000000;
	env = getenv("MRC_COLL_CORRUPT");
	if (env && sscanf(env, "%d:%d", &g.corrupt_rank, &g.corrupt_iter) != 2)
		g.corrupt_rank = -1;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	switch (g.op) {
	case OP_ALLREDUCE:
		ar_data = xmalloc(g.size);
		ar_tmp = xmalloc((g.size / 4 / g.n + 1) * 4);
		break;
	case OP_ALLTOALL:
		a2a_tx = xmalloc(a2a_blk() * g.n);
		a2a_rx = xmalloc(a2a_blk() * g.n);
		break;
	default:
		bc_buf = xmalloc(g.size);
	}
	times = xmalloc(capt * sizeof(*times));
	wtimes = xmalloc((g.warmup + 1) * sizeof(*wtimes));

	g.iter = -1;	/* errors while connecting: iter=-WARMUP-1 */
	setup();
	setup_done = 1;

	for (g.iter = 0;; g.iter++) {
		int stop = 0, failed;

		switch (g.op) {
		case OP_ALLREDUCE:
			ar_prepare();
			break;
		case OP_ALLTOALL:
			a2a_prepare();
			break;
		default:
			bc_prepare();
		}
		failed = gather(bad);
		if (g.rank == 0)
			print_pending(!failed);
		if (g.rank == 0) {
			double t = now_ms();

			if (g.iter >= g.warmup + iters ||
			    (duration_s && g.iter > g.warmup && t - t_first >= duration_s * 1e3))
				stop = 1;
			flags = (stop || failed) ? REL_STOP : 0;
			if (failed)
				flags |= REL_ABORT;
		}
		flags = release(flags);
		if (flags & REL_ABORT) {
			if (g.rank == 0) {
				if (!g.quiet)
					printf("error=verify iter=%ld ranks_failed=%d\n",
					       g.iter - 1 - g.warmup, failed);
				summary(times, ntimes, wtimes, nwtimes, g_deadline, 0, 0);
			}
			return EXIT_VERIFY;
		}
		if (flags & REL_STOP)
			break;
		if (g.rank == 0) {
			t0 = now_ms();
			if (g.iter == g.warmup)
				print_start();
		}
		switch (g.op) {
		case OP_ALLREDUCE:
			ar_run();
			break;
		case OP_ALLTOALL:
			a2a_run();
			break;
		default:
			bc_run();
		}
		gather(0);
		if (g.rank == 0) {
			double t1 = now_ms();

			if (g.iter < g.warmup) {
				wtimes[nwtimes++] = t1 - t0;
			} else {
				if (g.iter == g.warmup)
					t_first = t0;
				if (ntimes == capt) {
					capt *= 2;
					times = realloc(times, capt * sizeof(*times));
					if (!times)
						exit(EXIT_USAGE);
				}
				times[ntimes++] = t1 - t0;
				pend.have = 1;
				pend.k = g.iter - g.warmup;
				pend.t = t0 - t_first;
				pend.ms = t1 - t0;
			}
		}
		switch (g.op) {
		case OP_ALLREDUCE:
			bad = ar_verify();
			break;
		case OP_ALLTOALL:
			bad = a2a_verify();
			break;
		default:
			bad = bc_verify();
		}
		pend.own_bad = bad;
	}
	if (g.rank == 0)
		summary(times, ntimes, wtimes, nwtimes, g_deadline, 0, 1);
	for (c = 0; c < nconn; c++)
		close(conn_fd[c]);
	return 0;
}
