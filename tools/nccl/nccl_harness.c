// SPDX-License-Identifier: GPL-2.0-only
/*
 * nccl_harness: loads an NCCL network plugin as NCCL does (dlopen, then the
 * newest ncclNetPlugin_vN symbol it finds) and drives it with host memory,
 * between two processes or against bad input.  No GPU, no NCCL.
 *
 *   nccl_harness -l -f FILE [-a ADDR] [-B BYTES] [-g MS] [-i MS]
 *						receive: listen, write the
 *						handle to FILE, accept, check
 *   nccl_harness -c -f FILE [-a ADDR] [-s SIZES] [-w N] [-t BYTES]
 *                [-B BYTES] [-d SECONDS [-z SIZE]]
 *						send: read FILE, connect, send
 *   nccl_harness -b [-a ADDR]			bad input, both ends in one process
 * and on each: [-P PLUGIN] [-V VERSION] [-T SECONDS]
 *
 * -a ADDR is this host's address (it sets NCCL_MRC_IFADDR for the plugin);
 * the sender learns the receiver's from the handle in FILE, which the
 * receiver writes once it listens (a shared file: the two sides may sit in
 * different network namespaces).  The sender tells the receiver the plan in
 * its first message.  -s SIZES: a comma list of message sizes (suffixes
 * k, m; default 1,4,16,...,64m: 1 B to 64 MiB by 4); -t BYTES moved per
 * size (64m; 2 to 4096 messages each); -w N requests in flight (default
 * and at most NCCL_NET_MAX_REQUESTS times the maxRecvs the plugin
 * reports), fewer when N buffers of a size pass -B BYTES (256m).  The
 * receiver posts buffers larger than the message, as NCCL does, from -B
 * BYTES (256m) it allocates before it listens (at least the sender's).  -d
 * SECONDS sends messages of -z SIZE (1m) for that long instead, then an
 * empty one that ends the run; SIGUSR1 ends it early.  -g MS (receiver)
 * prints each gap of at least MS between completions, -i MS (receiver, -d
 * runs) the bytes completed in each MS interval from the first message.
 *
 * Every byte received is checked against the sender's pattern (a function
 * of the message's number and the offset), every size reported by test()
 * against the size sent.  Output, one line each:
 *   plugin path=P symbol=S version=V name=N
 *   props name=N speed=MBPS ptrSupport=P maxComms=C maxRecvs=R latency=L ...
 *   listening addr=A port=P transport=mrc|tcp	(receiver; then the file)
 *   connecting addr=A port=P transport=mrc|tcp	(sender)
 *   step size=S msgs=N window=W secs=T mbps=R ok=1
 *   start realtime=SECONDS			(-d receiver: the first data)
 *   tick t_ms=T bytes=B			(-d -i receiver: T since then)
 *   gap at_ms=T ms=G				(-g receiver)
 *   summary role=send|recv version=V transport=T msgs=N bytes=B ok=1 secs=S mbps=R ...
 * -b runs the bad-input checks, "check name=X rc=R want=W ok=1" each, and
 *   summary role=bad version=V checks=N failed=F fds_leaked=K ok=1
 * Exit status 0 only with ok=1.  NCCL_DEBUG=INFO shows the plugin's log.
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/mrc.h>

#include "mrc_lib.h"
#include "net_mrc.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_STEPS	64
#define PLAN_MAGIC	0x4e485031U	/* "NHP1" */
#define PLAN_TAG	0x504c	/* the plan's tag, then DATA_TAG */
#define DATA_TAG	7
#define MAX_WINDOW	256
#define CONNECT_TIMEOUT	120	/* s: a slow guest may take long to start the peer */

/* ---- the plugin, behind one interface whatever its version --------------- */

static int ver;
static ncclNet_v8_t *n8;
static ncclNet_v9_t *n9;
static ncclNet_v10_t *n10;
static ncclNet_v11_t *n11;
static ncclNet_v12_t *n12;
static void *net_ctx;
static int debug_level = NCCL_LOG_WARN;

/* the members whose types are the same in every version */
static struct {
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*accept)(void *listen_comm, void **recv_comm,
			       ncclNetDeviceHandle_v8_t **dev_comm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *comm);
	ncclResult_t (*closeRecv)(void *comm);
	ncclResult_t (*closeListen)(void *comm);
	const char *name;
} op;

struct props {
	const char *name;
	int speed, ptr_support, max_comms, max_recvs, reg_global;
	float latency;
	long long max_p2p;		/* -1: not in this version */
	int rail, plane;		/* -2: not in this version */
};

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	if ((int)level > debug_level || level == NCCL_LOG_NONE)
		return;
	fprintf(stderr, "NCCL %s %s:%d ", level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *const symbols[] = {
	[8] = NCCL_NET_PLUGIN_SYMBOL_V8,
	[9] = NCCL_NET_PLUGIN_SYMBOL_V9,
	[10] = NCCL_NET_PLUGIN_SYMBOL_V10,
	[11] = NCCL_NET_PLUGIN_SYMBOL_V11,
	[12] = NCCL_NET_PLUGIN_SYMBOL_V12,
};

/*
 * NCCL's search: libnccl-net-$NCCL_NET_PLUGIN.so on the loader's path;
 * then, for a harness run from its build directory, the one beside it.
 */
static void *open_plugin(const char *path, char *used, size_t len)
{
	const char *name = getenv("NCCL_NET_PLUGIN");
	char self[PATH_MAX], lib[64];
	void *h;
	ssize_t n;
	char *slash;

	if (path) {
		snprintf(used, len, "%s", path);
		return dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	snprintf(lib, sizeof(lib), "libnccl-net-%s.so", name && *name ? name : "mrc");
	snprintf(used, len, "%s", lib);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h)
		return h;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	snprintf(slash + 1, sizeof(self) - (slash + 1 - self), "%s", lib);
	snprintf(used, len, "%s", self);
	return dlopen(self, RTLD_NOW | RTLD_LOCAL);
}

/* the members every version has with the same type, from version table @n */
#define OPS_FROM(n)					\
	do {						\
		typeof(n) n_ = (n);			\
							\
		op.devices = n_->devices;		\
		op.accept = n_->accept;			\
		op.regMr = n_->regMr;			\
		op.deregMr = n_->deregMr;		\
		op.test = n_->test;			\
		op.closeSend = n_->closeSend;		\
		op.closeRecv = n_->closeRecv;		\
		op.closeListen = n_->closeListen;	\
		op.name = n_->name;			\
	} while (0)

static int load_plugin(const char *path, int want)
{
	char used[PATH_MAX];
	void *lib = open_plugin(path, used, sizeof(used));
	void *sym = NULL;
	int v;

	if (!lib) {
		printf("error=dlopen %s: %s\n", used, dlerror());
		return -1;
	}
	for (v = want ? want : 12; v >= 8; v--) {
		sym = dlsym(lib, symbols[v]);
		if (sym || want)
			break;
	}
	if (!sym) {
		printf("error=no %s in %s\n", want ? symbols[want] : "ncclNetPlugin_v8..v12", used);
		return -1;
	}
	ver = v;
	switch (v) {
	case 8:
		n8 = sym;
		OPS_FROM(n8);
		break;
	case 9:
		n9 = sym;
		OPS_FROM(n9);
		break;
	case 10:
		n10 = sym;
		OPS_FROM(n10);
		break;
	case 11:
		n11 = sym;
		OPS_FROM(n11);
		break;
	default:
		n12 = sym;
		OPS_FROM(n12);
		break;
	}
	printf("plugin path=%s symbol=%s version=%d name=%s\n", used, symbols[v], v, op.name);
	return 0;
}

static ncclResult_t p_init(void)
{
	ncclNetCommConfig_v11_t config = { .trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF };

	switch (ver) {
	case 8:
		return n8->init(logger);
	case 9:
		return n9->init(logger);
	case 10:
		return n10->init(logger, NULL);
	case 11:
		return n11->init(&net_ctx, 1, &config, logger, NULL);
	default:
		return n12->init(&net_ctx, 1, &config, logger, NULL);
	}
}

static ncclResult_t p_finalize(void *ctx)
{
	if (ver == 11)
		return n11->finalize(ctx);
	if (ver == 12)
		return n12->finalize(ctx);
	return ncclSuccess;
}

/* the fields every version has, from properties @p */
#define PROPS_FROM(pr, p)				\
	do {						\
		typeof(p) *p_ = &(p);			\
		struct props *pr_ = (pr);		\
							\
		pr_->name = p_->name;			\
		pr_->speed = p_->speed;			\
		pr_->ptr_support = p_->ptrSupport;	\
		pr_->max_comms = p_->maxComms;		\
		pr_->max_recvs = p_->maxRecvs;		\
		pr_->reg_global = p_->regIsGlobal;	\
		pr_->latency = p_->latency;		\
	} while (0)

static ncclResult_t p_props(int dev, struct props *pr)
{
	ncclNetProperties_v8_t p8;
	ncclNetProperties_v9_t p9;
	ncclNetProperties_v11_t p11;
	ncclNetProperties_v12_t p12;
	ncclResult_t ret;

	pr->max_p2p = -1;
	pr->rail = -2;
	pr->plane = -2;
	switch (ver) {
	case 8:
		ret = n8->getProperties(dev, &p8);
		if (!ret)
			PROPS_FROM(pr, p8);
		return ret;
	case 9:
	case 10:
		ret = ver == 9 ? n9->getProperties(dev, &p9) : n10->getProperties(dev, &p9);
		if (!ret) {
			PROPS_FROM(pr, p9);
			pr->max_p2p = p9.maxP2pBytes;
		}
		return ret;
	case 11:
		ret = n11->getProperties(dev, &p11);
		if (!ret) {
			PROPS_FROM(pr, p11);
			pr->max_p2p = p11.maxP2pBytes;
		}
		return ret;
	default:
		ret = n12->getProperties(dev, &p12);
		if (!ret) {
			PROPS_FROM(pr, p12);
			pr->max_p2p = p12.maxP2pBytes;
			pr->rail = p12.railId;
			pr->plane = p12.planeId;
		}
		return ret;
	}
}

static ncclResult_t p_listen(int dev, void *handle, void **listen_comm)
{
	switch (ver) {
	case 8:
		return n8->listen(dev, handle, listen_comm);
	case 9:
		return n9->listen(dev, handle, listen_comm);
	case 10:
		return n10->listen(dev, handle, listen_comm);
	case 11:
		return n11->listen(net_ctx, dev, handle, listen_comm);
	default:
		return n12->listen(net_ctx, dev, handle, listen_comm);
	}
}

static ncclResult_t p_connect(int dev, void *handle, void **send_comm)
{
	ncclNetCommConfig_v10_t config = { .trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF };
	ncclNetDeviceHandle_v8_t *dev_comm = NULL;

	switch (ver) {
	case 8:
		return n8->connect(dev, handle, send_comm, &dev_comm);
	case 9:
		return n9->connect(dev, handle, send_comm, &dev_comm);
	case 10:
		return n10->connect(dev, &config, handle, send_comm, &dev_comm);
	case 11:
		return n11->connect(net_ctx, dev, handle, send_comm, &dev_comm);
	default:
		return n12->connect(net_ctx, dev, handle, send_comm, &dev_comm);
	}
}

static ncclResult_t p_accept(void *listen_comm, void **recv_comm)
{
	ncclNetDeviceHandle_v8_t *dev_comm = NULL;

	return op.accept(listen_comm, recv_comm, &dev_comm);
}

static ncclResult_t p_isend(void *comm, void *data, size_t size, int tag, void *mh, void **req)
{
	switch (ver) {
	case 8:
		return n8->isend(comm, data, size > INT_MAX ? INT_MAX : (int)size, tag, mh, req);
	case 9:
		return n9->isend(comm, data, size, tag, mh, req);
	case 10:
		return n10->isend(comm, data, size, tag, mh, NULL, req);
	case 11:
		return n11->isend(comm, data, size, tag, mh, NULL, req);
	default:
		return n12->isend(comm, data, size, tag, mh, NULL, req);
	}
}

/* irecv() of @n buffers (1 but in the bad-input checks), all alike */
static ncclResult_t p_irecv_n(void *comm, int n, void *data, size_t size, int tag, void *mh,
			      void **req)
{
	void *datas[2] = { data, data }, *mhs[2] = { mh, mh };
	size_t sizes[2] = { size, size };
	int isizes[2] = { (int)size, (int)size }, tags[2] = { tag, tag };

	switch (ver) {
	case 8:
		return n8->irecv(comm, n, datas, isizes, tags, mhs, req);
	case 9:
		return n9->irecv(comm, n, datas, sizes, tags, mhs, req);
	case 10:
		return n10->irecv(comm, n, datas, sizes, tags, mhs, NULL, req);
	case 11:
		return n11->irecv(comm, n, datas, sizes, tags, mhs, NULL, req);
	default:
		return n12->irecv(comm, n, datas, sizes, tags, mhs, NULL, req);
	}
}

static ncclResult_t p_irecv(void *comm, void *data, size_t size, int tag, void *mh, void **req)
{
	return p_irecv_n(comm, 1, data, size, tag, mh, req);
}

/* ---- helpers ---------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Polling a plugin spins a CPU, as NCCL's proxy thread does; after a run
 * of empty polls, nap a little so that the harness does not starve its
 * peer on a small machine.
 */
static void idle(unsigned int *empty)
{
	struct timespec ts = { 0, 20000 };

	if (++*empty >= 256) {
		nanosleep(&ts, NULL);
		*empty = 0;
	}
}

/*
 * The pattern: 8-byte words, word k of message m is key(m) ^ (k+1) * C,
 * so that a message delivered whole but in the wrong place fails too.
 */
#define PAT_C	0x9e3779b97f4a7c15ULL

static uint64_t pat_key(uint64_t msg)
{
	return (msg + 1) * 0xbf58476d1ce4e5b9ULL ^ 0x5a5a5a5a5a5a5a5aULL;
}

static void pat_fill(char *buf, size_t size, uint64_t msg)
{
	uint64_t key = pat_key(msg), kc = PAT_C, v;
	size_t i, words = size / 8;

	for (i = 0; i < words; i++, kc += PAT_C) {
		v = key ^ kc;
		memcpy(buf + 8 * i, &v, 8);
	}
	v = key ^ kc;
	memcpy(buf + 8 * words, &v, size % 8);
}

/* The first byte of @buf off the pattern of message @msg, or -1. */
static long long pat_check(const char *buf, size_t size, uint64_t msg)
{
	uint64_t key = pat_key(msg), kc = PAT_C, v, w;
	size_t i, j, words = size / 8;

	for (i = 0; i < words; i++, kc += PAT_C) {
		v = key ^ kc;
		memcpy(&w, buf + 8 * i, 8);
		if (w != v)
			break;
	}
	v = key ^ kc;
	for (j = 0; j < (i < words ? 8 : size % 8); j++)
		if (buf[8 * i + j] != ((char *)&v)[j])
			return 8 * i + j;
	return -1;
}

/* Sizes like 64, 4k, 16m, 1g (powers of 1024). */
static long long parse_size(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 0);
	const char *units = "kmg", *u = *end ? strchr(units, *end | 0x20) : NULL;

	if (u) {
		v <<= 10 * (u - units + 1);
		end++;
	}
	return *end || v < 0 ? -1 : v;
}

static const char *rc_name(ncclResult_t rc)
{
	static const char *const names[] = {
		"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
		"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
	};

	return (unsigned int)rc < ARRAY_SIZE(names) ? names[rc] : "?";
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static const char *transport(const void *handle)
{
	const struct mrc_net_handle *h = handle;

	if (h->magic != MRC_NET_HANDLE_MAGIC)
		return "other";
	return h->kind == MRC_NET_KIND_MRC ? "mrc" : "tcp";
}

static bool handle_str(const void *handle, char *buf, size_t len, int *port)
{
	const struct mrc_net_handle *h = handle;

	if (h->magic != MRC_NET_HANDLE_MAGIC)
		return false;
	if (h->addr.v4.sin_family == AF_INET)
		inet_ntop(AF_INET, &h->addr.v4.sin_addr, buf, len);
	else
		inet_ntop(AF_INET6, &h->addr.v6.sin6_addr, buf, len);
	*port = ntohs(h->addr.v4.sin_port);
	return true;
}

static ncclResult_t start_plugin(struct props *pr)
{
	ncclResult_t rc;
	int ndev = 0;

	rc = p_init();
	if (rc) {
		printf("error=init %s\n", rc_name(rc));
		return rc;
	}
	rc = op.devices(&ndev);
	if (rc || ndev < 1) {
		printf("error=devices %s ndev=%d\n", rc_name(rc), ndev);
		return rc ? rc : ncclInternalError;
	}
	rc = p_props(0, pr);
	if (rc) {
		printf("error=getProperties %s\n", rc_name(rc));
		return rc;
	}
	printf("props name=%s speed=%d ptrSupport=%d maxComms=%d maxRecvs=%d",
	       pr->name ? pr->name : "(null)", pr->speed, pr->ptr_support, pr->max_comms,
	       pr->max_recvs);
	printf(" latency=%.1f regIsGlobal=%d", pr->latency, pr->reg_global);
	if (pr->max_p2p >= 0)
		printf(" maxP2pBytes=%lld", pr->max_p2p);
	if (pr->plane > -2)
		printf(" railId=%d planeId=%d", pr->rail, pr->plane);
	printf(" ndev=%d\n", ndev);
	fflush(stdout);
	if (!(pr->ptr_support & NCCL_PTR_HOST)) {
		printf("error=the device takes no host memory\n");
		return ncclInternalError;
	}
	return ncclSuccess;
}

/* ---- the two-process run ------------------------------------------------------ */

struct plan {
	uint32_t magic;
	uint32_t nsteps;
	uint32_t window;
	uint32_t duration;		/* 1: one size until the sender stops */
	uint64_t bufmem;
	uint64_t dur_size;
	struct {
		uint64_t size;
		uint64_t count;
	} step[MAX_STEPS];
};

struct tally {
	uint64_t msgs, bytes, seq, bad;
	double secs, max_gap;
};

static int stop_sending;		/* SIGUSR1 came: atomic accesses only */

static void on_sigusr1(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_sending, 1, __ATOMIC_RELAXED);
}

static bool stopped(void)
{
	return __atomic_load_n(&stop_sending, __ATOMIC_RELAXED);
}

static int gap_report_ms, tick_ms;

/* Requests in flight for messages of @size: within the window and -B. */
static int step_window(const struct plan *p, uint64_t size)
{
	uint64_t w = size ? p->bufmem / size : p->window;

	if (w > p->window)
		w = p->window;
	return w ? w : 1;
}

/* Each receive buffer: the arena shared out, at most what NCCL would post. */
static size_t slot_size(const struct plan *p, int w, uint64_t size)
{
	size_t s = p->bufmem / w;

	if (s > NCCL_NET_MAX_MSG_BYTES)
		s = NCCL_NET_MAX_MSG_BYTES;
	return s < size ? size : s;
}

/* Waits for request @req; false on an error or a timeout (printed). */
static bool wait_req(void *req, int *size, const char *what, double timeout)
{
	double end = now_s() + timeout;
	unsigned int empty = 0;
	ncclResult_t rc;
	int done = 0;

	for (;;) {
		rc = op.test(req, &done, size);
		if (rc) {
			printf("error=test %s %s\n", what, rc_name(rc));
			return false;
		}
		if (done)
			return true;
		if (now_s() > end) {
			printf("error=timeout %s\n", what);
			return false;
		}
		idle(&empty);
	}
}

/*
 * Receives @count messages of @size (or, @count 0, until an empty one) into
 * @w buffers of the arena, each checked.  Returns 0, or 1 on an error.
 */
static int recv_step(void *rc, void *mh, char *arena, const struct plan *p, uint64_t size,
		     uint64_t count, struct tally *t)
{
	int w = step_window(p, size), slot, sz = -1, done, err = 1;
	size_t cap = slot_size(p, w, size);
	uint64_t posted = 0, completed = 0, bytes = 0;
	void *reqs[MAX_WINDOW];
	double t0 = now_s(), last = 0, first = 0, next_tick = 0, now;
	uint64_t tick_bytes = 0;
	ncclResult_t ret, post_err = ncclSuccess;
	unsigned int empty = 0;
	long long off;

	while (!count || completed < count) {
		/*
		 * Receives run ahead of the data: in a timed run the ones past
		 * the last message fail once the sender closes, and only an
		 * error before that last message counts.
		 */
		while (!post_err && posted - completed < (uint64_t)w &&
		       (!count || posted < count)) {
			slot = posted % w;
			ret = p_irecv(rc, arena + slot * cap, cap, DATA_TAG, mh, &reqs[slot]);
			if (ret && count) {
				printf("error=irecv %s size=%llu\n", rc_name(ret),
				       (unsigned long long)size);
				goto out;
			}
			post_err = ret;
			if (ret || !reqs[slot])
				break;
			posted++;
		}
		if (completed == posted) {
			printf("error=irecv %s size=%llu before the end\n", rc_name(post_err),
			       (unsigned long long)size);
			goto out;
		}
		slot = completed % w;
		done = 0;
		ret = op.test(reqs[slot], &done, &sz);
		if (ret) {
			printf("error=test recv %s size=%llu msg=%llu\n", rc_name(ret),
			       (unsigned long long)size, (unsigned long long)(t->seq + completed));
			goto out;
		}
		if (!done) {
			idle(&empty);
			continue;
		}
		empty = 0;
		now = now_s();
		if (!count && !sz)
			break;		/* the sender's last, empty message */
		if (!first) {
			first = now;
			next_tick = now + tick_ms / 1000.0;
			if (!count) {
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				printf("start realtime=%lld.%09ld\n", (long long)ts.tv_sec,
				       ts.tv_nsec);
				fflush(stdout);
			}
		} else if (now - last > t->max_gap) {
			t->max_gap = now - last;
		}
		if (last && gap_report_ms && (now - last) * 1000 >= gap_report_ms)
			printf("gap at_ms=%.1f ms=%.1f\n", (last - first) * 1000,
			       (now - last) * 1000);
		last = now;
		if ((uint64_t)sz != size) {
			printf("error=size msg=%llu got=%d want=%llu\n",
			       (unsigned long long)(t->seq + completed), sz,
			       (unsigned long long)size);
			t->bad++;
			goto out;
		}
		off = pat_check(arena + slot * cap, size, t->seq + completed);
		if (off >= 0) {
			printf("error=data msg=%llu offset=%lld size=%llu\n",
			       (unsigned long long)(t->seq + completed), off,
			       (unsigned long long)size);
			t->bad++;
			goto out;
		}
		completed++;
		bytes += size;
		/* a timed run: the bytes of each interval since the first */
		while (tick_ms && !count && now >= next_tick) {
			printf("tick t_ms=%.0f bytes=%llu\n", (next_tick - first) * 1000,
			       (unsigned long long)tick_bytes);
			tick_bytes = 0;
			next_tick += tick_ms / 1000.0;
		}
		tick_bytes += size;
	}
	err = 0;
out:
	now = now_s() - t0;
	/* receives still posted past the end go with the comm */
	t->seq += completed;
	t->msgs += completed;
	t->bytes += bytes;
	t->secs += now;
	printf("step size=%llu msgs=%llu window=%d secs=%.3f mbps=%.2f ok=%d\n",
	       (unsigned long long)size, (unsigned long long)completed, w, now,
	       now > 0 ? bytes * 8 / now / 1e6 : 0, !err);
	fflush(stdout);
	return err;
}

/*
 * Sends @count messages of @size (or, @count 0, until @deadline or
 * SIGUSR1) from @w buffers of the arena.  Returns 0, or 1 on an error.
 */
static int send_step(void *sc, void *mh, char *arena, const struct plan *p, uint64_t size,
		     uint64_t count, double deadline, struct tally *t)
{
	int w = step_window(p, size), slot, sz = -1, done;
	uint64_t posted = 0, completed = 0, bytes = 0;
	void *reqs[MAX_WINDOW];
	double t0 = now_s(), secs;
	unsigned int empty = 0;
	ncclResult_t ret;
	bool more;

	for (;;) {
		more = count ? posted < count : !stopped() && now_s() < deadline;
		while (more && posted - completed < (uint64_t)w) {
			slot = posted % w;
			pat_fill(arena + slot * size, size, t->seq + posted);
			ret = p_isend(sc, arena + slot * size, size, DATA_TAG, mh, &reqs[slot]);
			if (ret) {
				printf("error=isend %s size=%llu sent=%llu\n", rc_name(ret),
				       (unsigned long long)size, (unsigned long long)t->bytes);
				return 1;
			}
			if (!reqs[slot])
				break;
			posted++;
			more = count ? posted < count : !stopped() && now_s() < deadline;
		}
		if (completed == posted && !more)
			break;
		if (completed == posted)
			continue;
		slot = completed % w;
		done = 0;
		ret = op.test(reqs[slot], &done, &sz);
		if (ret) {
			printf("error=test send %s size=%llu sent=%llu\n", rc_name(ret),
			       (unsigned long long)size, (unsigned long long)(t->bytes + bytes));
			return 1;
		}
		if (!done) {
			idle(&empty);
			continue;
		}
		empty = 0;
		if ((uint64_t)sz != size) {
			printf("error=test send size %d want %llu\n", sz, (unsigned long long)size);
			return 1;
		}
		completed++;
		bytes += size;
	}
	secs = now_s() - t0;
	t->seq += completed;
	t->msgs += completed;
	t->bytes += bytes;
	t->secs += secs;
	printf("step size=%llu msgs=%llu window=%d secs=%.3f mbps=%.2f ok=1\n",
	       (unsigned long long)size, (unsigned long long)completed, w, secs,
	       secs > 0 ? bytes * 8 / secs / 1e6 : 0);
	fflush(stdout);
	return 0;
}

static void print_summary(const char *role, const char *tr, const struct tally *t, int ok)
{
	printf("summary role=%s version=%d transport=%s msgs=%llu bytes=%llu ok=%d errors=%llu",
	       role, ver, tr, (unsigned long long)t->msgs, (unsigned long long)t->bytes, ok,
	       (unsigned long long)t->bad);
	printf(" secs=%.3f mbps=%.2f max_gap_ms=%.1f\n", t->secs,
	       t->secs > 0 ? t->bytes * 8 / t->secs / 1e6 : 0, t->max_gap * 1000);
	fflush(stdout);
}

/* The buffers, their pages in before a clock runs (faults are slow in a VM). */
static char *arena_alloc(size_t len)
{
	void *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return a == MAP_FAILED ? NULL : a;
}

static void arena_free(char *a, size_t len)
{
	if (a)
		munmap(a, len);
}

static int receiver(const char *file, size_t arena_len, double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE], tmp[PATH_MAX], addr[INET6_ADDRSTRLEN];
	void *lc = NULL, *rc = NULL, *mh = NULL, *pmh = NULL;
	struct tally t = { 0 };
	struct plan plan;
	struct props pr;
	unsigned int empty = 0;
	int i, port, sz, ok = 0;
	char *arena = NULL;
	ncclResult_t ret;
	void *req = NULL;
	double end;
	FILE *f;

	unlink(file);
	if (start_plugin(&pr))
		return 1;
	/*
	 * The buffers exist before the sender can connect, as NCCL registers
	 * its own before any data: populating 128 MiB once the plan came took
	 * the receiver 2 s under TCG, while the sender filled its window.
	 */
	arena = arena_alloc(arena_len);
	if (!arena) {
		printf("error=no memory for %zu bytes\n", arena_len);
		return 1;
	}
	ret = p_listen(0, handle, &lc);
	if (ret || !lc) {
		printf("error=listen %s\n", rc_name(ret));
		return 1;
	}
	if (handle_str(handle, addr, sizeof(addr), &port))
		printf("listening addr=%s port=%d transport=%s\n", addr, port, transport(handle));
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fwrite(handle, sizeof(handle), 1, f) != 1 || fclose(f) || rename(tmp, file)) {
		printf("error=cannot write %s: %s\n", file, strerror(errno));
		return 1;
	}
	fflush(stdout);
	for (end = now_s() + timeout; !rc; idle(&empty)) {
		ret = p_accept(lc, &rc);
		if (ret) {
			printf("error=accept %s\n", rc_name(ret));
			return 1;
		}
		if (!rc && now_s() > end) {
			printf("error=timeout accept\n");
			return 1;
		}
	}
	ret = op.regMr(rc, &plan, sizeof(plan), NCCL_PTR_HOST, &pmh);
	if (!ret)
		ret = p_irecv(rc, &plan, sizeof(plan), PLAN_TAG, pmh, &req);
	if (ret || !req) {
		printf("error=irecv plan %s\n", rc_name(ret));
		return 1;
	}
	if (!wait_req(req, &sz, "plan", timeout))
		return 1;
	if (sz != sizeof(plan) || plan.magic != PLAN_MAGIC || plan.nsteps > MAX_STEPS ||
	    !plan.window || plan.window > MAX_WINDOW) {
		printf("error=bad plan\n");
		goto out;
	}
	if (plan.bufmem > arena_len) {
		printf("error=the plan wants %llu bytes of buffers, -B gave %zu\n",
		       (unsigned long long)plan.bufmem, arena_len);
		goto out;
	}
	ret = op.regMr(rc, arena, plan.bufmem, NCCL_PTR_HOST, &mh);
	if (ret) {
		printf("error=regMr %s\n", rc_name(ret));
		goto out;
	}
	if (plan.duration) {
		if (recv_step(rc, mh, arena, &plan, plan.dur_size, 0, &t))
			goto out;
	} else {
		for (i = 0; i < (int)plan.nsteps; i++)
			if (recv_step(rc, mh, arena, &plan, plan.step[i].size, plan.step[i].count,
				      &t))
				goto out;
	}
	ok = !t.bad;
out:
	if (mh && op.deregMr(rc, mh))
		ok = 0;
	if (op.deregMr(rc, pmh) || op.closeRecv(rc) || op.closeListen(lc) || p_finalize(net_ctx))
		ok = 0;
	print_summary("recv", transport(handle), &t, ok);
	arena_free(arena, arena_len);
	return !ok;
}

static int read_handle(const char *file, char *handle, double timeout)
{
	double end = now_s() + timeout;
	struct stat st;
	FILE *f;
	int n;

	while (stat(file, &st) || st.st_size < NCCL_NET_HANDLE_MAXSIZE) {
		if (now_s() > end) {
			printf("error=no handle in %s\n", file);
			return -1;
		}
		usleep(20000);
	}
	f = fopen(file, "r");
	if (!f)
		return -1;
	n = fread(handle, NCCL_NET_HANDLE_MAXSIZE, 1, f);
	fclose(f);
	return n == 1 ? 0 : -1;
}

static int sender(const char *file, struct plan *plan, double secs, double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE], addr[INET6_ADDRSTRLEN];
	void *sc = NULL, *mh = NULL, *pmh = NULL, *req = NULL;
	struct tally t = { 0 };
	unsigned int empty = 0;
	int i, port, sz, ok = 0;
	char *arena = NULL;
	ncclResult_t ret;
	struct props pr;
	double end;

	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_sigusr1 }, NULL);
	if (start_plugin(&pr))
		return 1;
	if (plan->window > (uint32_t)(NCCL_NET_MAX_REQUESTS * pr.max_recvs))
		plan->window = NCCL_NET_MAX_REQUESTS * pr.max_recvs;
	if (read_handle(file, handle, timeout))
		return 1;
	if (handle_str(handle, addr, sizeof(addr), &port))
		printf("connecting addr=%s port=%d transport=%s\n", addr, port, transport(handle));
	fflush(stdout);
	for (end = now_s() + timeout; !sc; idle(&empty)) {
		ret = p_connect(0, handle, &sc);
		if (ret) {
			printf("error=connect %s\n", rc_name(ret));
			return 1;
		}
		if (!sc && now_s() > end) {
			printf("error=timeout connect\n");
			return 1;
		}
	}
	/* the buffers first: the receiver's clock runs from the plan on */
	arena = arena_alloc(plan->bufmem);
	if (!arena)
		return 1;
	ret = op.regMr(sc, arena, plan->bufmem, NCCL_PTR_HOST, &mh);
	if (ret) {
		printf("error=regMr %s\n", rc_name(ret));
		return 1;
	}
	ret = op.regMr(sc, plan, sizeof(*plan), NCCL_PTR_HOST, &pmh);
	if (!ret)
		ret = p_isend(sc, plan, sizeof(*plan), PLAN_TAG, pmh, &req);
	if (ret || !req) {
		printf("error=isend plan %s\n", rc_name(ret));
		return 1;
	}
	if (!wait_req(req, &sz, "plan", timeout))
		return 1;
	if (plan->duration) {
		if (send_step(sc, mh, arena, plan, plan->dur_size, 0, now_s() + secs, &t))
			goto out;
		/* the empty message that ends the run */
		ret = p_isend(sc, arena, 0, DATA_TAG, mh, &req);
		if (ret || !req || !wait_req(req, &sz, "end", timeout)) {
			printf("error=isend end %s\n", rc_name(ret));
			goto out;
		}
	} else {
		for (i = 0; i < (int)plan->nsteps; i++)
			if (send_step(sc, mh, arena, plan, plan->step[i].size, plan->step[i].count,
				      0, &t))
				goto out;
	}
	ok = 1;
out:
	if (mh && op.deregMr(sc, mh))
		ok = 0;
	if (op.deregMr(sc, pmh) || op.closeSend(sc) || p_finalize(net_ctx))
		ok = 0;
	print_summary("send", transport(handle), &t, ok);
	arena_free(arena, plan->bufmem);
	return !ok;
}

/* ---- bad input -------------------------------------------------------------------- */

static int checks, failed;

static void expect(const char *name, ncclResult_t rc, ncclResult_t want)
{
	checks++;
	failed += rc != want;
	printf("check name=%s rc=%d want=%d ok=%d (%s)\n", name, rc, want, rc == want,
	       rc_name(rc));
	fflush(stdout);
}

static void expect_true(const char *name, bool ok, const char *what)
{
	checks++;
	failed += !ok;
	printf("check name=%s ok=%d (%s)\n", name, ok, what);
	fflush(stdout);
}

/* Connects a fresh pair through a new listener; false on failure. */
static bool make_pair(void **lc, void **sc, void **rc, double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	double end = now_s() + timeout;
	unsigned int empty = 0;
	ncclResult_t ret;

	*lc = NULL;
	*sc = NULL;
	*rc = NULL;
	ret = p_listen(0, handle, lc);
	if (ret)
		return false;
	while (!*sc || !*rc) {
		if (!*sc && p_connect(0, handle, sc))
			return false;
		if (!*rc && p_accept(*lc, rc))
			return false;
		if (now_s() > end)
			return false;
		idle(&empty);
	}
	return true;
}

/* Tests @req until done or an error (the error returned), @timeout at most. */
static ncclResult_t test_until(void *req, int *size, double timeout)
{
	double end = now_s() + timeout;
	unsigned int empty = 0;
	ncclResult_t rc;
	int done = 0;

	while (!(rc = op.test(req, &done, size)) && !done) {
		if (now_s() > end)
			return ncclInProgress;
		idle(&empty);
	}
	return rc;
}

/* One message of @len bytes from @sc to @rc, intact; false otherwise. */
static bool pair_ok(void *sc, void *rc, char *buf, char *rbuf, size_t len, double timeout)
{
	void *req = NULL, *rreq = NULL;
	int sz = -1, ssz;

	pat_fill(buf, len, 1);
	memset(rbuf, 0, len);
	if (p_irecv(rc, rbuf, len, DATA_TAG, NULL, &rreq) || !rreq ||
	    p_isend(sc, buf, len, DATA_TAG, NULL, &req) || !req)
		return false;
	return !test_until(req, &ssz, timeout) && !test_until(rreq, &sz, timeout) &&
	       sz == (int)len && pat_check(rbuf, len, 1) < 0;
}

/*
 * A connection to the listener of @handle that the plugin did not make:
 * -1 when it cannot be made.  It says nothing unless the caller writes.
 */
static int raw_connect(const void *handle)
{
	const struct mrc_net_handle *h = handle;
	int fam = h->addr.v4.sin_family, fd;
	socklen_t len = fam == AF_INET ? sizeof(h->addr.v4) : sizeof(h->addr.v6);

	fd = socket(h->kind == MRC_NET_KIND_MRC ? mrc_family() : fam, SOCK_STREAM | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)&h->addr, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The connected stream sockets of this process in @handle's family (the
 * plugin's: the harness keeps none open of its own), counted in *@n, and
 * those with SO_KEEPALIVE on in *@on.
 */
static void keepalive_count(const void *handle, int *n, int *on)
{
	const struct mrc_net_handle *h = handle;
	int fam = h->kind == MRC_NET_KIND_MRC ? mrc_family() : h->addr.v4.sin_family;
	DIR *d = opendir("/proc/self/fd");
	int fd, type, dom, lis, ka;
	struct dirent *e;
	socklen_t len;

	*n = 0;
	*on = 0;
	while (d && (e = readdir(d))) {
		fd = atoi(e->d_name);
		len = sizeof(int);
		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) || dom != fam ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &lis, &len) || lis ||
		    getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, &len))
			continue;
		(*n)++;
		*on += !!ka;
	}
	if (d)
		closedir(d);
}

/*
 * A peer that is not this plugin sends a header for a message larger than
 * any (1 GiB + 1) into a receive posted with a larger buffer, 2 GiB (v8:
 * INT_MAX): refused at once, not waited on.  Checks @name.
 */
static void header_over_max(const char *name, double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	const struct mrc_net_handle *h = (const void *)handle;
	size_t big = ver == 8 ? INT_MAX : 2UL << 30;
	struct mrc_net_hello hello;
	struct mrc_net_msg_hdr hdr;
	void *lc = NULL, *rc = NULL, *rreq = NULL;
	unsigned int empty = 0;
	ncclResult_t r = ncclInProgress;	/* not tested: the setup failed */
	char *none = MAP_FAILED;
	int fd = -1, sz;
	double end;

	if (p_listen(0, handle, &lc))
		goto out;
	fd = raw_connect(handle);
	hello.magic = htonl(MRC_NET_HANDLE_MAGIC);
	hello.version = htonl(MRC_NET_HANDLE_VERSION);
	hello.cookie = htobe64(h->cookie);
	if (fd < 0 || write(fd, &hello, sizeof(hello)) != sizeof(hello))
		goto out;
	for (end = now_s() + timeout; !rc && now_s() < end; idle(&empty))
		if (p_accept(lc, &rc))
			break;
	/* a buffer nothing may be written into */
	none = mmap(NULL, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!rc || none == MAP_FAILED || p_irecv(rc, none, big, DATA_TAG, NULL, &rreq) || !rreq)
		goto out;
	hdr.magic = htonl(MRC_NET_MSG_MAGIC);
	hdr.tag = (int32_t)htonl(DATA_TAG);
	hdr.size = htobe64(NCCL_NET_MAX_MSG_BYTES + 1);
	if (write(fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		goto out;
	/* the header is there at once; a plugin that takes it waits for the rest */
	r = test_until(rreq, &sz, timeout < 5 ? timeout : 5);
out:
	expect(name, r, ncclInternalError);
	if (rc)
		op.closeRecv(rc);
	if (lc)
		op.closeListen(lc);
	if (fd >= 0)
		close(fd);
	if (none != MAP_FAILED)
		munmap(none, big);
}

/*
 * Leaves a connect in progress, as NCCL does when it gives up on a
 * communicator: to a listener of the harness's own (@fds[0]) whose accept
 * queue a connection (@fds[1]) fills, so that it cannot finish.  True when
 * the plugin's connect() was left waiting.
 */
static bool connect_held(int *fds)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	struct mrc_net_handle *h = (void *)handle;
	struct sockaddr_storage ss;
	void *lc = NULL, *sc = NULL;
	socklen_t len;
	bool held;
	int fam;

	fds[0] = -1;
	fds[1] = -1;
	if (p_listen(0, handle, &lc))
		return false;
	op.closeListen(lc);
	fam = h->addr.v4.sin_family;
	len = fam == AF_INET ? sizeof(h->addr.v4) : sizeof(h->addr.v6);
	h->addr.v4.sin_port = 0;
	fds[0] = socket(h->kind == MRC_NET_KIND_MRC ? mrc_family() : fam,
			SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0 || bind(fds[0], (struct sockaddr *)&h->addr, len) || listen(fds[0], 0) ||
	    getsockname(fds[0], (struct sockaddr *)&ss, &len))
		return false;
	h->addr.v4.sin_port = ((struct sockaddr_in *)&ss)->sin_port;
	fds[1] = raw_connect(handle);
	if (fds[1] < 0)
		return false;
	usleep(100000);		/* the connection reaches the accept queue */
	held = !p_connect(0, handle, &sc) && !sc;
	if (sc)
		op.closeSend(sc);
	return held;
}

#define SILENT		6	/* more connections than the plugin has hello slots */

/*
 * Connections that never send a hello (a port scan, a health check) reach
 * the listener after a connector's (@first) or before it: accept() must
 * still return the connector's.  Checks @name.
 */
static void silent_peers(const char *name, bool first, char *buf, char *rbuf, double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE], what[96];
	void *lc = NULL, *sc = NULL, *rc = NULL;
	int fds[SILENT], i, n = 0;
	unsigned int empty = 0;
	double end, t;

	if (p_listen(0, handle, &lc)) {
		expect_true(name, false, "listen");
		return;
	}
	for (i = 0; i < SILENT && !first; i++)
		n += (fds[i] = raw_connect(handle)) >= 0;
	for (end = now_s() + timeout; !sc && now_s() < end; idle(&empty))
		if (p_connect(0, handle, &sc))
			break;
	for (i = 0; i < SILENT && first; i++)
		n += (fds[i] = raw_connect(handle)) >= 0;
	/* on loopback the hello and the silent ones are in before accept() looks */
	usleep(100000);
	t = now_s();
	for (end = t + timeout; sc && !rc && now_s() < end; idle(&empty))
		if (p_accept(lc, &rc))
			break;
	t = now_s() - t;
	snprintf(what, sizeof(what), "%s: accepted (after %.1f s), a message passes",
		 first ? "a connector, then 6 silent ones" : "6 silent ones, then a connector", t);
	expect_true(name, n == SILENT && sc && rc && pair_ok(sc, rc, buf, rbuf, 4096, timeout),
		    what);
	for (i = 0; i < SILENT; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (sc)
		op.closeSend(sc);
	if (rc)
		op.closeRecv(rc);
	op.closeListen(lc);
}

/* Sends 1 MiB messages until the plugin reports an error (or @timeout). */
static ncclResult_t send_until_error(void *sc, char *buf, size_t len, double timeout)
{
	double end = now_s() + timeout;
	ncclResult_t rc;
	void *req;
	int sz;

	while (now_s() < end) {
		rc = p_isend(sc, buf, len, DATA_TAG, NULL, &req);
		if (rc)
			return rc;
		if (!req)
			continue;
		rc = test_until(req, &sz, end - now_s());
		if (rc && rc != ncclInProgress)
			return rc;
	}
	return ncclInProgress;
}

static int bad_input(double timeout)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE], stale[NCCL_NET_HANDLE_MAXSIZE], what[96];
	void *lc, *sc, *rc, *lc2, *sc2 = NULL, *rc2 = NULL, *req, *rreq, *smh, *rmh, *mh;
	void *reqs[NCCL_NET_MAX_REQUESTS + 1];
	struct mrc_net_handle *h;
	unsigned int empty = 0;
	static char buf[1 << 20], rbuf[1 << 20];
	int fds0, fds1, i, sz, done, stack_var = 0, held_fds[2];
	struct props pr;
	ncclResult_t r1, r2;
	double end, t_sc;
	bool ok, ka_off, held;

	if (start_plugin(&pr))
		return 1;
	fds0 = count_fds();

	expect("props_bad_dev", p_props(1, &pr), ncclInternalError);
	expect("listen_bad_dev", p_listen(5, handle, &lc), ncclInternalError);
	expect("connect_null_handle", p_connect(0, NULL, &sc), ncclInternalError);
	memset(stale, 0xa5, sizeof(stale));
	expect("connect_garbage_handle", p_connect(0, stale, &sc), ncclInternalError);

	/* a stale handle: its listener is gone; refused, not a hang */
	expect("listen", p_listen(0, handle, &lc), ncclSuccess);
	memcpy(stale, handle, sizeof(stale));
	h = (struct mrc_net_handle *)stale;
	h->kind = h->kind == MRC_NET_KIND_MRC ? MRC_NET_KIND_TCP : MRC_NET_KIND_MRC;
	expect("connect_other_transport", p_connect(0, stale, &sc), ncclInvalidUsage);
	memcpy(stale, handle, sizeof(stale));
	expect("close_listen", op.closeListen(lc), ncclSuccess);
	expect("close_listen_twice", op.closeListen(lc), ncclInternalError);
	sc = NULL;
	end = now_s() + timeout;
	do {
		r1 = p_connect(0, stale, &sc);
		idle(&empty);
	} while (!r1 && !sc && now_s() < end);
	expect("connect_stale_handle", r1, ncclRemoteError);
	if (sc)
		op.closeSend(sc);

	/* a handle with another listener's cookie, on a live port: never accepted */
	expect("listen", p_listen(0, handle, &lc), ncclSuccess);
	memcpy(stale, handle, sizeof(stale));
	((struct mrc_net_handle *)stale)->cookie ^= 1;
	sc = NULL;
	rc = NULL;
	end = now_s() + timeout;
	for (t_sc = 0; now_s() < end && !rc; idle(&empty)) {
		if (!sc && p_connect(0, stale, &sc))
			break;
		if (sc && !t_sc)
			t_sc = now_s();
		/* a second for the hello to reach the listener */
		if (p_accept(lc, &rc) || (t_sc && now_s() > t_sc + 1))
			break;
	}
	expect_true("accept_wrong_cookie", sc && !rc,
		    "the connector got through, the listener took nobody");
	if (sc)
		expect("send_wrong_cookie", send_until_error(sc, buf, sizeof(buf), timeout),
		       ncclRemoteError);
	if (sc)
		op.closeSend(sc);
	if (rc)
		op.closeRecv(rc);
	op.closeListen(lc);

	silent_peers("accept_after_silent", true, buf, rbuf, timeout);
	silent_peers("accept_behind_silent", false, buf, rbuf, timeout);

	if (!make_pair(&lc, &sc, &rc, timeout)) {
		expect_true("pair", false, "listen, connect and accept");
		goto done;
	}
	expect_true("pair", true, "listen, connect and accept");
	/* a peer that dies silently must fail its comms, not hang them */
	keepalive_count(handle, &i, &sz);
	ka_off = getenv("NCCL_MRC_KEEPALIVE") && !strcmp(getenv("NCCL_MRC_KEEPALIVE"), "0");
	snprintf(what, sizeof(what), "SO_KEEPALIVE on %d of the pair's %d sockets, %s", sz, i,
		 ka_off ? "none wanted (NCCL_MRC_KEEPALIVE=0)" : "both wanted");
	expect_true("keepalive", i == 2 && sz == (ka_off ? 0 : 2), what);
	expect("regmr_cuda", op.regMr(sc, buf, sizeof(buf), NCCL_PTR_CUDA, &mh), ncclInternalError);
	expect("regmr_bad_comm", op.regMr((void *)0xdeadbeef, buf, sizeof(buf), NCCL_PTR_HOST, &mh),
	       ncclInternalError);
	expect("regmr_listen_comm", op.regMr(lc, buf, sizeof(buf), NCCL_PTR_HOST, &mh),
	       ncclInternalError);
	expect("regmr_send", op.regMr(sc, buf, sizeof(buf), NCCL_PTR_HOST, &smh), ncclSuccess);
	expect("regmr_recv", op.regMr(rc, rbuf, sizeof(rbuf), NCCL_PTR_HOST, &rmh), ncclSuccess);
	expect("regmr_small", op.regMr(sc, buf, 4096, NCCL_PTR_HOST, &mh), ncclSuccess);
	expect("isend_outside_mr", p_isend(sc, buf, 8192, DATA_TAG, mh, &req), ncclInternalError);
	expect("deregmr_small", op.deregMr(sc, mh), ncclSuccess);
	expect("deregmr_twice", op.deregMr(sc, mh), ncclInternalError);
	expect("isend_stale_mr", p_isend(sc, buf, 64, DATA_TAG, mh, &req), ncclInternalError);
	expect("irecv_n2", p_irecv_n(rc, 2, rbuf, 64, DATA_TAG, rmh, &req), ncclInternalError);
	expect("isend_on_recv_comm", p_isend(rc, buf, 64, DATA_TAG, NULL, &req), ncclInternalError);
	expect("irecv_on_send_comm", p_irecv(sc, rbuf, 64, DATA_TAG, NULL, &req),
	       ncclInternalError);
	expect("isend_null_buffer", p_isend(sc, NULL, 64, DATA_TAG, NULL, &req), ncclInternalError);
	expect("isend_too_big", p_isend(sc, buf, INT_MAX, DATA_TAG, NULL, &req), ncclInvalidUsage);
	expect("test_null", op.test(NULL, &done, &sz), ncclInternalError);
	expect("test_garbage", op.test((void *)0x1234, &done, &sz), ncclInternalError);
	expect("test_foreign_pointer", op.test(&stack_var, &done, &sz), ncclInternalError);
	expect("test_a_comm", op.test(sc, &done, &sz), ncclInternalError);

	/* a good message, then its request tested again */
	pat_fill(buf, 1000, 0);
	r1 = p_irecv(rc, rbuf, sizeof(rbuf), DATA_TAG, rmh, &rreq);
	r2 = p_isend(sc, buf, 1000, DATA_TAG, smh, &req);
	expect("isend", r2, ncclSuccess);
	expect("irecv", r1, ncclSuccess);
	expect("test_send", test_until(req, &sz, timeout), ncclSuccess);
	expect("test_recv", test_until(rreq, &sz, timeout), ncclSuccess);
	expect_true("recv_size_and_data", sz == 1000 && pat_check(rbuf, 1000, 0) < 0,
		    "1000 bytes, intact, into a 1 MiB buffer");
	expect("test_after_done", op.test(req, &done, &sz), ncclInternalError);
	expect("test_recv_after_done", op.test(rreq, &done, &sz), ncclInternalError);

	/* as many in flight as NCCL may post; one more waits (NULL request) */
	for (i = 0; i < NCCL_NET_MAX_REQUESTS; i++)
		if (p_isend(sc, buf, 1, DATA_TAG, smh, &reqs[i]) || !reqs[i])
			break;
	expect_true("max_requests", i == NCCL_NET_MAX_REQUESTS, "32 sends posted at once");
	r1 = p_isend(sc, buf, 1, DATA_TAG, smh, &reqs[NCCL_NET_MAX_REQUESTS]);
	expect_true("request_33_waits", !r1 && !reqs[NCCL_NET_MAX_REQUESTS],
		    "the 33rd gets a NULL request, no error");
	for (ok = true; i > 0; i--) {
		if (test_until(reqs[NCCL_NET_MAX_REQUESTS - i], &sz, timeout))
			ok = false;
		if (p_irecv(rc, rbuf, sizeof(rbuf), DATA_TAG, rmh, &rreq) ||
		    test_until(rreq, &sz, timeout) || sz != 1)
			ok = false;
	}
	expect_true("max_requests_complete", ok, "all 32 sent and received");

	/* a message larger than the buffer posted for it */
	r1 = p_irecv(rc, rbuf, 100, DATA_TAG, rmh, &rreq);
	r2 = p_isend(sc, buf, 1000, DATA_TAG, smh, &req);
	expect("oversize_post", r1 | r2, ncclSuccess);
	expect("oversize_recv", test_until(rreq, &sz, timeout), ncclInvalidUsage);
	expect("oversize_then_irecv", p_irecv(rc, rbuf, 100, DATA_TAG, rmh, &rreq),
	       ncclInvalidUsage);
	test_until(req, &sz, timeout);
	header_over_max("header_over_max", timeout);
	expect("deregmr_send", op.deregMr(sc, smh), ncclSuccess);
	/* a request still in flight when its comm closes goes with it */
	expect("isend_before_close", p_isend(sc, buf, 10, DATA_TAG, NULL, &req), ncclSuccess);
	expect("close_send", op.closeSend(sc), ncclSuccess);
	expect("close_recv", op.closeRecv(rc), ncclSuccess);

	/* a closed comm */
	expect("isend_closed_comm", p_isend(sc, buf, 64, DATA_TAG, NULL, &req), ncclInternalError);
	expect("irecv_closed_comm", p_irecv(rc, rbuf, 64, DATA_TAG, NULL, &req), ncclInternalError);
	expect("regmr_closed_comm", op.regMr(sc, buf, 64, NCCL_PTR_HOST, &mh), ncclInternalError);
	expect("close_send_twice", op.closeSend(sc), ncclInternalError);
	expect("close_recv_twice", op.closeRecv(rc), ncclInternalError);
	expect("deregmr_after_close", op.deregMr(rc, rmh), ncclInternalError);
	expect("test_closed_comm_request", op.test(req, &done, &sz), ncclInternalError);
	expect("close_listen_pair", op.closeListen(lc), ncclSuccess);

	/* tags that do not match */
	if (!make_pair(&lc2, &sc2, &rc2, timeout)) {
		expect_true("pair2", false, "listen, connect and accept");
		goto done;
	}
	r1 = p_irecv(rc2, rbuf, sizeof(rbuf), 5, NULL, &rreq);
	r2 = p_isend(sc2, buf, 64, 6, NULL, &req);
	expect("tag_mismatch_post", r1 | r2, ncclSuccess);
	expect("tag_mismatch_recv", test_until(rreq, &sz, timeout), ncclInvalidUsage);
	test_until(req, &sz, timeout);

	/* the peer closes: the sender learns it, it does not hang */
	expect("close_recv_peer", op.closeRecv(rc2), ncclSuccess);
	expect("send_to_closed_peer", send_until_error(sc2, buf, sizeof(buf), timeout),
	       ncclRemoteError);
	expect("close_send_after_error", op.closeSend(sc2), ncclSuccess);
	expect("close_listen2", op.closeListen(lc2), ncclSuccess);
done:
	if (ver >= 11) {
		/* a connect NCCL gave up on goes with its context */
		held = connect_held(held_fds);
		fds1 = count_fds();
		expect("finalize", p_finalize(net_ctx), ncclSuccess);
		i = count_fds();
		snprintf(what, sizeof(what), "%s: %d fds open before finalize, %d after",
			 held ? "a connect left in progress" : "no connect could be held", fds1, i);
		expect_true("finalize_abandoned_connect", held && i == fds1 - 1, what);
		for (i = 0; i < 2; i++)
			if (held_fds[i] >= 0)
				close(held_fds[i]);
		/* warned about, not failed: nothing is left to tear down */
		expect("finalize_twice", p_finalize(net_ctx), ncclSuccess);
	}
	fds1 = count_fds();
	printf("summary role=bad version=%d checks=%d failed=%d fds_leaked=%d ok=%d\n", ver, checks,
	       failed, fds1 - fds0, !failed && fds1 == fds0);
	return failed || fds1 != fds0;
}

/* ---- main ------------------------------------------------------------------------ */

static int parse_sizes(const char *list, struct plan *p, long long per_size)
{
	char *copy = strdup(list), *tok, *save = NULL;
	long long s, n;

	p->nsteps = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		s = parse_size(tok);
		if (s < 1 || s > NCCL_NET_MAX_MSG_BYTES || p->nsteps == MAX_STEPS) {
			free(copy);
			return -1;
		}
		n = per_size / s;
		n = n < 2 ? 2 : n > 4096 ? 4096 : n;
		p->step[p->nsteps].size = s;
		p->step[p->nsteps++].count = n;
	}
	free(copy);
	return p->nsteps ? 0 : -1;
}

static void bad_args(void)
{
	fprintf(stderr, "nccl_harness -l|-c|-b [options]: see the top of nccl_harness.c\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *sizes = "1,4,16,64,256,1k,4k,16k,64k,256k,1m,4m,16m,64m";
	const char *file = NULL, *plugin = NULL;
	long long per_size = 64 << 20, bufmem = 0, dur_size = 1 << 20, v;
	int opt, mode = 0, want = 0, window = NCCL_NET_MAX_REQUESTS;
	struct plan *plan = calloc(1, sizeof(*plan));
	double secs = 0, timeout = CONNECT_TIMEOUT;
	const char *dbg = getenv("NCCL_DEBUG");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dbg && !strcasecmp(dbg, "INFO"))
		debug_level = NCCL_LOG_INFO;
	else if (dbg && (!strcasecmp(dbg, "NONE") || !strcasecmp(dbg, "VERSION")))
		debug_level = NCCL_LOG_VERSION;
	while ((opt = getopt(argc, argv, "lcbf:a:P:V:T:s:w:t:B:d:z:g:i:")) != -1) {
		switch (opt) {
		case 'l':
		case 'c':
		case 'b':
			mode = opt;
			break;
		case 'f':
			file = optarg;
			break;
		case 'a':
			setenv("NCCL_MRC_IFADDR", optarg, 1);
			break;
		case 'P':
			plugin = optarg;
			break;
		case 'V':
			want = atoi(optarg);
			if (want < 8 || want > 12)
				bad_args();
			break;
		case 'T':
			timeout = atof(optarg);
			break;
		case 's':
			sizes = optarg;
			break;
		case 'w':
			window = atoi(optarg);
			if (window < 1 || window > MAX_WINDOW)
				bad_args();
			break;
		case 't':
		case 'B':
		case 'z':
			v = parse_size(optarg);
			if (v < 1)
				bad_args();
			if (opt == 't')
				per_size = v;
			else if (opt == 'B')
				bufmem = v;
			else
				dur_size = v;
			break;
		case 'd':
			secs = atof(optarg);
			break;
		case 'g':
			gap_report_ms = atoi(optarg);
			break;
		case 'i':
			tick_ms = atoi(optarg);
			break;
		default:
			bad_args();
		}
	}
	if (!mode || !plan || ((mode == 'l' || mode == 'c') && !file))
		bad_args();
	if (load_plugin(plugin, want))
		return 1;
	if (mode != 'c') {
		free(plan);
		if (mode == 'b')
			return bad_input(timeout < 30 ? timeout : 30);
		return receiver(file, bufmem ? bufmem : 256 << 20, timeout);
	}
	plan->magic = PLAN_MAGIC;
	plan->window = window;
	plan->duration = secs > 0;
	plan->dur_size = dur_size;
	if (!plan->duration && parse_sizes(sizes, plan, per_size))
		bad_args();
	if (dur_size > NCCL_NET_MAX_MSG_BYTES)
		bad_args();
	/* a timed run needs a window of its one size; a ladder, 256 MiB */
	if (!bufmem)
		bufmem = secs > 0 && window * dur_size < 256 << 20 ? window * dur_size : 256 << 20;
	for (v = 0; v < plan->nsteps; v++)
		if ((long long)plan->step[v].size > bufmem)
			bufmem = plan->step[v].size;
	plan->bufmem = bufmem < dur_size ? dur_size : bufmem;
	opt = sender(file, plan, secs, timeout);
	free(plan);
	return opt;
}
