// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc_xfer: one verified bulk transfer, for selftests, the demo and benches.
 *   mrc_xfer -l [-6] [-p PORT] [-T] [-i MS] [-g MS] [-s MS] [-U MS] [-H]
 *                                                     receive one connection
 *   mrc_xfer -c ADDR [-p PORT] [-n BYTES] [-d SECONDS] [-T] [-U MS] [-e EVS] [-i MS]
 *            [-P BYTES] [-C]
 * -T uses TCP instead of AF_MRC (-M: MPTCP), for comparison.  -d SECONDS
 * makes the sender stop after that long instead (at most BYTES), so that a
 * test can place failures at fixed times inside one transfer; "sent=N"
 * then says how many bytes the receiver must have.  SIGUSR1 ends the
 * sending as the deadline would: a test ends a transfer a fixed time after
 * its last event, however long a slow guest took to get there.  The receiver
 * checks every byte against the sender's pattern and prints one summary
 * line: "bytes=N ok=1 secs=S mbps=R max_gap_ms=G busy_ticks=B" (B: the CPU
 * time, in USER_HZ ticks, the whole machine was busy from the first data to
 * the end: a cost per byte without the programs' start-up); -i MS also prints the
 * bytes received in each MS interval ("tick t_ms=... bytes=..."), after
 * "start realtime=SECONDS", the wall-clock time of tick 0.  -g MS (receiver)
 * also prints every delivery gap of at least MS, "gap at_ms=T ms=G" (T: the
 * last delivery before it, since tick 0), so that a test can tell the gap a
 * failure caused from the emulator's stalls elsewhere in the transfer.
 * -s MS (receiver) also reports when the guest stood still: a thread of
 * the highest real-time priority pinned to each CPU sleeps 2 ms at a time,
 * and every span of at least MS in which all of them woke late prints
 * "stall at_ms=T ms=S" (T: its start, as for gaps), at the end.  One CPU
 * late may be busy with the transport's own softirq work; all of them late
 * at once is, in the main, the emulator not running the guest (every CPU
 * in interrupt work for that long is possible too), so that a test can
 * take such spans out of a gap rather than guess them.  A span is seen up
 * to one sleep late, so less is taken out, not more.  Where a watcher
 * cannot be pinned or made real-time, "stall_watch=off" and no spans.
 * The sender prints "sent=N" or the errno of the failure.
 * -W MS (sender) idles that long after connecting, before it sends: a user
 * timeout shorter than the idle spell must not count it.
 * -K SECS (sender) turns keepalive on (TCP_KEEPIDLE and TCP_KEEPINTVL SECS,
 * TCP_KEEPCNT 2), sends its BYTES and then waits, idle, for the connection
 * to fail: it prints "idle error=..." (or "idle closed").
 * -P BYTES (sender) sends the first BYTES (0: none), prints "paused", and
 * waits for SIGUSR2 before it sends the rest, so that a test acts on a
 * connection with nothing in flight at a moment of its choosing.  The
 * user timeout (-U) is lifted then (MRC_USER_TIMEOUT 0): a short one is
 * for the pause, and must not end what follows when a loaded guest stalls.
 * -C (sender) closes at once after its BYTES, without waiting for the
 * peer's close: the socket lives on as an orphan that delivers them and
 * waits for the peer's FIN.
 * -U MS (receiver) is the listener's user timeout, which its connection
 * inherits.  -H (receiver) holds the connection open after the peer's
 * EOF, once its summary is printed, until the receiver is killed.
 *
 * -b (on both sides, each with -n BYTES) makes the transfer bidirectional:
 * each side sends its BYTES of the pattern (then shuts down its sending
 * half) while it receives and checks the peer's, and prints both lines,
 * "sent=N" and the receiver's summary (or "error=..." lines).  It exits 0
 * only when it sent all its bytes and received exactly BYTES, all intact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "mrc_lib.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static int gap_report_ms;
static int stall_report_ms;
static double stall_start;
static volatile int stall_stop;

#define STALL_SLEEP_NS	2000000
/*
 * A CPU's wake-ups at least this late are kept: the CPUs' spans of one
 * stall differ by their timers' phases, and each must cover it whole
 */
#define STALL_KEEP_S	0.001

/* A span [from, to] (mrc_now_s()) in which a watcher woke late */
struct stall_span {
	double from, to;
};

/*
 * One CPU's watcher: the spans it woke late, in time order and disjoint
 * (each begins after the previous sleep ended); @ok once pinned and
 * real-time.
 */
struct stall_cpu {
	pthread_t thread;
	int cpu, n, cap;
	volatile int ok;
	struct stall_span *span;
};

static void *stall_watch(void *arg)
{
	struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
	struct timespec ts = { 0, STALL_SLEEP_NS };
	struct stall_cpu *w = arg;
	double t0, t1, late;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	/* an ordinary thread is late whenever the transfer keeps a CPU busy */
	w->ok = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set) &&
		!pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!stall_stop && w->ok) {
		t0 = mrc_now_s();
		nanosleep(&ts, NULL);
		t1 = mrc_now_s();
		late = t1 - t0 - STALL_SLEEP_NS / 1e9;
		if (late < STALL_KEEP_S)
			continue;
		if (w->n == w->cap) {
			int cap = w->cap ? 2 * w->cap : 1024;
			struct stall_span *span = realloc(w->span, cap * sizeof(*span));

			if (!span)
				continue;
			w->span = span;
			w->cap = cap;
		}
		w->span[w->n++] = (struct stall_span){ t1 - late, t1 };
	}
	return NULL;
}

/*
 * The overlaps of the @n spans @in with @w's (both in time order,
 * disjoint) into @out, which holds n + w->n: when every CPU so far was
 * late.  One span may overlap several of the other list.  Returns the
 * count.
 */
static int stall_intersect(const struct stall_span *in, int n, const struct stall_cpu *w,
			   struct stall_span *out)
{
	int i = 0, j = 0, k = 0;

	while (i < n && j < w->n) {
		const struct stall_span *a = &in[i], *b = &w->span[j];
		double lo = a->from > b->from ? a->from : b->from;
		double hi = a->to < b->to ? a->to : b->to;

		if (hi > lo)
			out[k++] = (struct stall_span){ lo, hi };
		if (a->to < b->to)
			i++;
		else
			j++;
	}
	return k;
}

static struct stall_cpu *stall_cpus;
static int stall_ncpus, stall_ncpus_wanted;

/* Starts a watcher on each CPU this process may run on; 0 when none started. */
static int stall_start_watching(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	stall_cpus = calloc(CPU_COUNT(&set), sizeof(*stall_cpus));
	if (!stall_cpus)
		return 0;
	/* a CPU not watched would make every other CPU's lateness count */
	stall_ncpus_wanted = CPU_COUNT(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct stall_cpu *w = &stall_cpus[stall_ncpus];

		if (!CPU_ISSET(cpu, &set))
			continue;
		w->cpu = cpu;
		if (!pthread_create(&w->thread, NULL, stall_watch, w))
			stall_ncpus++;
	}
	return stall_ncpus;
}

/* Stops the watchers and prints the spans in which all of them were late. */
static void stall_report(void)
{
	struct stall_span *cur = NULL, *out = NULL, *swap;
	int i, n, all, ok = stall_ncpus == stall_ncpus_wanted;

	stall_stop = 1;
	for (i = 0, all = 0; i < stall_ncpus; i++) {
		pthread_join(stall_cpus[i].thread, NULL);
		ok &= stall_cpus[i].ok;
		all += stall_cpus[i].n;
	}
	n = stall_cpus[0].n;
	if (ok && n) {
		cur = malloc(all * sizeof(*cur));
		out = malloc(all * sizeof(*out));
		ok = cur && out;
	}
	if (!ok) {
		printf("stall_watch=off\n");
	} else if (n) {
		memcpy(cur, stall_cpus[0].span, n * sizeof(*cur));
		for (i = 1; i < stall_ncpus; i++) {
			n = stall_intersect(cur, n, &stall_cpus[i], out);
			swap = cur, cur = out, out = swap;
		}
		for (i = 0; i < n; i++)
			if ((cur[i].to - cur[i].from) * 1000 >= stall_report_ms)
				printf("stall at_ms=%.1f ms=%.1f\n", (cur[i].from - stall_start) * 1000,
				       (cur[i].to - cur[i].from) * 1000);
	}
	free(cur);
	free(out);
	for (i = 0; i < stall_ncpus; i++)
		free(stall_cpus[i].span);
	free(stall_cpus);
}

static unsigned char pattern(unsigned long long i)
{
	return (unsigned char)(i * 7 + (i >> 11));
}

static int open_socket(int af, int proto_kind)
{
	if (proto_kind == 'T')
		return socket(af, SOCK_STREAM, 0);
	if (proto_kind == 'M')
		return socket(af, SOCK_STREAM, IPPROTO_MPTCP);
	return socket(mrc_family(), SOCK_STREAM, 0);
}

/* Wall-clock time of tick 0, for a test that places events in the ticks. */
static void print_tick_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("start realtime=%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	/* a test may wait for it: the first data has arrived */
	fflush(stdout);
}

/*
 * The machine's busy CPU time so far, in USER_HZ ticks, as the bench's
 * cpu_busy() counts it (user, nice, system, irq, softirq); -1 unreadable.
 */
static long long busy_ticks(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
		   &iowait, &irq, &softirq);
	fclose(f);
	return n == 7 ? (long long)(user + nice + sys + irq + softirq) : -1;
}

/*
 * Receives until EOF, checking the pattern; prints the summary line.
 * Returns 0 when everything received was intact, *got holds the count.
 */
static int receive_all(int fd, int tick_ms, unsigned long long *gotp)
{
	static unsigned char buf[1 << 16];
	unsigned long long got = 0, bad = 0, tick_bytes = 0;
	double start = 0, last = 0, max_gap = 0, next_tick = 0, t;
	long long busy0 = -1, busy1;
	int stall_watching = 0, err = 0;
	ssize_t n;

	*gotp = 0;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		err = errno;

		t = mrc_now_s();
		if (!start) {
			busy0 = busy_ticks();
			start = last = t;
			next_tick = t + tick_ms / 1000.0;
			if (tick_ms)
				print_tick_start();
			stall_start = t;
			if (stall_report_ms)
				stall_watching = stall_start_watching();
		}
		if (n < 0)
			break;
		if (!n)
			break;
		if (t - last > max_gap)
			max_gap = t - last;
		if (gap_report_ms && (t - last) * 1000 >= gap_report_ms)
			printf("gap at_ms=%.1f ms=%.1f\n", (last - start) * 1000, (t - last) * 1000);
		last = t;
		for (ssize_t i = 0; i < n; i++)
			bad += buf[i] != pattern(got + i);
		got += n;
		tick_bytes += n;
		while (tick_ms && t >= next_tick) {
			printf("tick t_ms=%.0f bytes=%llu\n", (next_tick - start) * 1000, tick_bytes);
			fflush(stdout);
			tick_bytes = 0;
			next_tick += tick_ms / 1000.0;
		}
	}
	if (stall_watching)
		stall_report();
	if (n < 0) {
		printf("error=%s bytes=%llu\n", strerror(err), got);
		return 1;
	}
	busy1 = busy_ticks();
	t = last > start ? last - start : 1e-9;
	printf("bytes=%llu ok=%d secs=%.3f mbps=%.2f max_gap_ms=%.1f busy_ticks=%lld\n", got,
	       !bad, t, got * 8 / t / 1e6, max_gap * 1000,
	       busy0 < 0 || busy1 < 0 ? -1 : busy1 - busy0);
	fflush(stdout);
	*gotp = got;
	return bad ? 1 : 0;
}

/* SIGUSR1: the sender stops as at its deadline */
static volatile sig_atomic_t stop_sending;

static void on_sigusr1(int sig)
{
	stop_sending = 1;
}

/*
 * Sends the pattern from byte *sent (0 at first) up to total, or what fits
 * before @deadline (mrc_now_s(), 0: none) or SIGUSR1; *sent holds the count.
 * Returns 0 or prints the error.
 */
static int send_all(int fd, unsigned long long total, double deadline,
		    unsigned long long *sent)
{
	static unsigned char buf[1 << 16];
	unsigned long long off = *sent;

	while (off < total && !stop_sending && (!deadline || mrc_now_s() < deadline)) {
		size_t n = total - off < sizeof(buf) ? total - off : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(off + i);
		w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			printf("error=%s sent=%llu\n", strerror(errno), off);
			fflush(stdout);
			return 1;
		}
		off += w;
		*sent = off;
	}
	return 0;
}

struct bidir {
	int fd;
	unsigned long long total;
	int rc;
};

static void *bidir_sender(void *p)
{
	struct bidir *b = p;
	unsigned long long sent = 0;

	b->rc = send_all(b->fd, b->total, 0, &sent);
	if (!b->rc)
		shutdown(b->fd, SHUT_WR);
	return NULL;
}

/* -b: send total bytes while receiving and checking the peer's total. */
static int bidirectional(int fd, unsigned long long total, int tick_ms)
{
	struct bidir b = { .fd = fd, .total = total };
	unsigned long long got;
	pthread_t th;
	int rc;

	if (pthread_create(&th, NULL, bidir_sender, &b)) {
		printf("error=pthread_create\n");
		return 1;
	}
	rc = receive_all(fd, tick_ms, &got);
	pthread_join(th, NULL);
	if (!b.rc) {
		printf("sent=%llu\n", total);
		fflush(stdout);
	}
	if (!rc && got != total) {
		printf("error=short receive got=%llu want=%llu\n", got, total);
		rc = 1;
	}
	close(fd);
	return rc || b.rc;
}

static int receiver(int port, int v6, int kind, int tick_ms, int bidir,
		    unsigned long long total, int user_timeout, int hold)
{
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(NULL, port, v6, &ss);
	unsigned long long got;
	int one = 1, lfd, fd;

	lfd = open_socket(ss.ss_family, kind);
	if (lfd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (kind == 'A' && user_timeout)
		setsockopt(lfd, SOL_MRC, MRC_USER_TIMEOUT, &user_timeout, sizeof(int));
	if (bind(lfd, (void *)&ss, len) || listen(lfd, 1)) {
		perror("bind/listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("accept");
		return 1;
	}
	if (bidir)
		return bidirectional(fd, total, tick_ms);
	if (receive_all(fd, tick_ms, &got))
		return 1;
	/* -H: the peer's orphan waits for our FIN until we are killed */
	while (hold)
		pause();
	return 0;
}

/* -K: keepalive on, the data sent, then idle until the connection fails */
static int idle_until_failure(int fd)
{
	char b[64];
	ssize_t n;

	while ((n = recv(fd, b, sizeof(b), 0)) > 0)
		;
	printf("idle %s%s\n", n ? "error=" : "closed", n ? strerror(errno) : "");
	return n ? 1 : 0;
}

static void keepalive_on(int fd, int secs)
{
	int on = 1, cnt = 2;

	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof(secs));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &secs, sizeof(secs));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
}

static int sender(const char *host, int port, int kind, unsigned long long total,
		  int user_timeout, int evs, int bidir, int tick_ms, double secs, int keep_s,
		  int idle_ms, long long pause_at, int close_now)
{
	unsigned long long sent = 0;
	static unsigned char buf[1 << 16];
	struct sockaddr_storage ss;
	socklen_t len = mrc_make_addr(host, port, 0, &ss);
	sigset_t usr2;
	int fd, sig;

	/* first: a SIGUSR1 must never find the default action (termination) */
	/* no SA_RESTART: a send blocked on a full buffer returns at once */
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_sigusr1 }, NULL);
	/* -P: a SIGUSR2 that comes before the pause waits for sigwait() */
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	if (pause_at >= 0)
		sigprocmask(SIG_BLOCK, &usr2, NULL);
	fd = open_socket(ss.ss_family, kind);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	if (kind == 'A' && user_timeout)
		setsockopt(fd, SOL_MRC, MRC_USER_TIMEOUT, &user_timeout, sizeof(int));
	if (kind == 'A' && evs)
		setsockopt(fd, SOL_MRC, MRC_EV_COUNT, &evs, sizeof(int));
	if (connect(fd, (void *)&ss, len)) {
		printf("error=%s sent=0\n", strerror(errno));
		return 1;
	}
	if (bidir)
		return bidirectional(fd, total, tick_ms);
	if (idle_ms)
		usleep(idle_ms * 1000);
	if (keep_s)
		keepalive_on(fd, keep_s);
	if (pause_at >= 0) {
		int none = 0;

		if (send_all(fd, (unsigned long long)pause_at < total ? pause_at : total, 0,
			     &sent))
			return 1;
		printf("paused at=%llu\n", sent);
		fflush(stdout);
		sigwait(&usr2, &sig);
		if (kind == 'A')
			setsockopt(fd, SOL_MRC, MRC_USER_TIMEOUT, &none, sizeof(none));
	}
	if (send_all(fd, total, secs > 0 ? mrc_now_s() + secs : 0, &sent))
		return 1;
	if (keep_s)
		return idle_until_failure(fd);
	if (close_now) {
		close(fd);
		printf("sent=%llu closed\n", sent);
		return 0;
	}
	shutdown(fd, SHUT_WR);
	/* wait for the peer's close so that everything was delivered */
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	printf("sent=%llu\n", sent);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long total = 1 << 20;
	int opt, listen_mode = 0, port = 7000, v6 = 0, kind = 'A', tick = 0, ut = 0, evs = 0;
	int bidir = 0, keep_s = 0, idle_ms = 0, hold = 0, close_now = 0;
	long long pause_at = -1;
	double secs = 0;
	const char *host = NULL;

	while ((opt = getopt(argc, argv, "lc:p:n:6TMi:U:e:bd:K:W:g:s:P:CH")) != -1) {
		switch (opt) {
		case 'l': listen_mode = 1; break;
		case 'c': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': total = strtoull(optarg, NULL, 0); break;
		case '6': v6 = 1; break;
		case 'T': kind = 'T'; break;
		case 'M': kind = 'M'; break;
		case 'i': tick = atoi(optarg); break;
		case 'U': ut = atoi(optarg); break;
		case 'e': evs = atoi(optarg); break;
		case 'b': bidir = 1; break;
		case 'd': secs = atof(optarg); break;
		case 'K': keep_s = atoi(optarg); break;
		case 'W': idle_ms = atoi(optarg); break;
		case 'g': gap_report_ms = atoi(optarg); break;
		case 's': stall_report_ms = atoi(optarg); break;
		case 'P': pause_at = strtoll(optarg, NULL, 0); break;
		case 'C': close_now = 1; break;
		case 'H': hold = 1; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of mrc_xfer.c\n");
			return 2;
		}
	}
	if (listen_mode)
		return receiver(port, v6, kind, tick, bidir, total, ut, hold);
	if (!host) {
		fprintf(stderr, "need -l or -c ADDR\n");
		return 2;
	}
	return sender(host, port, kind, total, ut, evs, bidir, tick, secs, keep_s, idle_ms,
		      pause_at, close_now);
}
