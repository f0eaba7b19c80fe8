// SPDX-License-Identifier: GPL-2.0-only
/*
 * libnccl-net-mrc.so - an NCCL network plugin over AF_MRC.
 *
 *   NCCL_NET_PLUGIN=mrc (NCCL dlopen()s libnccl-net-mrc.so)
 *
 * Each comm NCCL opens is one AF_MRC SOCK_STREAM connection: MRC sprays it
 * over every path and plane of the fabric itself, so the plugin keeps no
 * pool of sockets.  One device, host memory only (NCCL_PTR_HOST): NCCL
 * stages GPU buffers through host memory.  Environment:
 *
 *   NCCL_MRC_IFADDR=ADDR	listen on this IPv4 or IPv6 address (default:
 *				the first non-loopback IPv4 address)
 *   NCCL_MRC_PRIORITY=0..7	MRC_PRIORITY of every connection; 4 and up is
 *				urgent.  A v11+ comm's trafficClass overrides
 *				at both ends, a v10 one at the connector only
 *				(v10's listen() takes no config).
 *   NCCL_MRC_SPEED=MBPS	the device speed reported (default: the sum
 *				over the planes' devices: every device up,
 *				not loopback, with an address of the family,
 *				a management port too; set it, and the
 *				address, on a cluster)
 *   NCCL_MRC_FAMILY=tcp	plain TCP instead of AF_MRC, to compare against
 *				and to run where the module is not loaded
 *   NCCL_MRC_KEEPALIVE=S	seconds a connection may be idle before it is
 *				probed (default 10; 0: never): a probe every
 *				2 s, 3 unanswered end it, so that a peer that
 *				died silently fails the comm, not hangs it
 *
 * A message on the wire is a header (magic, tag, size) then the payload, so
 * that the receiver learns the size and checks the tag before it writes
 * into the buffer.  All socket work is non-blocking and happens inside the
 * calls NCCL makes (isend, irecv, test): NCCL's proxy thread polls test().
 *
 * What NCCL gets back (comms, requests, registrations, contexts) is an id
 * in a table, not a pointer: one that is stale, closed, freed or foreign
 * when it is used is looked up, found missing and answered with an error,
 * never dereferenced.  The table is locked; the objects are not, and hold
 * no reference: a close that runs while another thread is inside a call on
 * the same comm (or its requests) frees what that call uses.  NCCL makes
 * the calls of one comm from one thread (the proxy thread that drives it),
 * and the plugin relies on that, as NCCL's own plugins do.
 * Documentation/networking/mrc.rst, "NCCL network plugin", has the rest.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/mrc.h>

#include "net_mrc.h"

#define EXPORT		__attribute__((visibility("default")))

/* test() reports a message's size as an int */
_Static_assert(NCCL_NET_MAX_MSG_BYTES <= INT_MAX, "message size");

#define MAX_REQS	NCCL_NET_MAX_REQUESTS
#define MAX_COMMS	65536
#define MAX_PENDING	4	/* accepted connections still owing their hello */
#define HELLO_WAIT_MS	2000	/* how long one may keep a slot from the next */
#define DEFAULT_SPEED	10000	/* Mb/s of a device that does not say */
#define KEEPALIVE_IDLE	10	/* s: NCCL_MRC_KEEPALIVE's default */
#define KEEPALIVE_INTVL	2	/* s between probes */
#define KEEPALIVE_CNT	3	/* probes unanswered: the peer is gone */
#define LISTEN_BACKLOG	64

static ncclDebugLogger_t logger;

#define WARN(fmt, ...)								\
	do {									\
		if (logger)							\
			logger(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__,	\
			       "NET/MRC : " fmt, ##__VA_ARGS__);		\
	} while (0)
#define INFO(flags, fmt, ...)							\
	do {									\
		if (logger)							\
			logger(NCCL_LOG_INFO, flags, __func__, __LINE__,	\
			       "NET/MRC : " fmt, ##__VA_ARGS__);		\
	} while (0)

/* ---- ids: what NCCL holds instead of our pointers ---------------------- */

enum obj_type {
	OBJ_NONE,
	OBJ_CTX,
	OBJ_LISTEN,
	OBJ_CONNECTING,
	OBJ_SEND,
	OBJ_RECV,
	OBJ_MR,
	OBJ_REQ,
};

/*
 * An id is type (8 bits) | generation (24) | slot + 1 (32): NULL and any
 * real pointer decode to a type that does not match, a freed slot to a
 * generation that does not.
 */
struct obj_slot {
	void *ptr;		/* NULL: free */
	uint32_t gen;
	uint32_t next_free;	/* slot + 1 of the next free one, 0: none */
	uint8_t type;
};

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj_slot *tab;
static uint32_t tab_len, tab_cap, tab_free;

static void *id_ptr(uint64_t id)
{
	return (void *)(uintptr_t)id;
}

/* A new id for @ptr, 0 when out of memory. */
static uint64_t obj_add(enum obj_type type, void *ptr)
{
	struct obj_slot *s;
	uint64_t id = 0;
	uint32_t i;

	pthread_mutex_lock(&tab_lock);
	if (tab_free) {
		i = tab_free - 1;
		tab_free = tab[i].next_free;
	} else {
		if (tab_len == tab_cap) {
			uint32_t cap = tab_cap ? 2 * tab_cap : 256;
			struct obj_slot *t;

			if (cap > (1U << 24))
				goto out;
			t = realloc(tab, cap * sizeof(*t));
			if (!t)
				goto out;
			tab = t;
			tab_cap = cap;
		}
		i = tab_len++;
		tab[i].gen = 0;
	}
	s = &tab[i];
	s->gen = (s->gen + 1) & 0xffffff;
	if (!s->gen)
		s->gen = 1;
	s->type = type;
	s->ptr = ptr;
	s->next_free = 0;
	id = (uint64_t)type << 56 | (uint64_t)s->gen << 32 | (i + 1);
out:
	pthread_mutex_unlock(&tab_lock);
	return id;
}

/* The slot of @h if it is a live id of @type; table locked. */
static struct obj_slot *obj_slot(const void *h, enum obj_type type)
{
	uint64_t id = (uintptr_t)h;
	uint32_t i = (uint32_t)id;

	if (!i || i > tab_len || id >> 56 != type)
		return NULL;
	if (tab[i - 1].type != type || tab[i - 1].gen != ((id >> 32) & 0xffffff) ||
	    !tab[i - 1].ptr)
		return NULL;
	return &tab[i - 1];
}

/*
 * The object of @h if it is a live id of @type.  Not held: it stays valid
 * until the call that retires it, which must not run meanwhile on another
 * thread (see the top of this file).
 */
static void *obj_get(const void *h, enum obj_type type)
{
	struct obj_slot *s;
	void *p = NULL;

	pthread_mutex_lock(&tab_lock);
	s = obj_slot(h, type);
	if (s)
		p = s->ptr;
	pthread_mutex_unlock(&tab_lock);
	return p;
}

/* Puts slot @s back on the free list; table locked. */
static void slot_free(struct obj_slot *s)
{
	s->ptr = NULL;
	s->type = OBJ_NONE;
	s->next_free = tab_free;
	tab_free = s - tab + 1;
}

/* Retires the id @h of @type; returns its object, NULL if it was not live. */
static void *obj_del(const void *h, enum obj_type type)
{
	struct obj_slot *s;
	void *p = NULL;

	pthread_mutex_lock(&tab_lock);
	s = obj_slot(h, type);
	if (s) {
		p = s->ptr;
		slot_free(s);
	}
	pthread_mutex_unlock(&tab_lock);
	return p;
}

/*
 * Unloaded (dlclose(), or the process exits): the table goes when nothing
 * in it is live.  Live objects stay, and the table with them: a process may
 * exit with NCCL's proxy threads still inside a call, and exit reclaims
 * them anyway.
 */
__attribute__((destructor)) static void tab_unload(void)
{
	uint32_t i;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < tab_len && !tab[i].ptr; i++)
		;
	if (i == tab_len) {
		free(tab);
		tab = NULL;
		tab_len = 0;
		tab_cap = 0;
		tab_free = 0;
	}
	pthread_mutex_unlock(&tab_lock);
}

/* ---- global state -------------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	bool ready;
	enum mrc_net_kind kind;
	int sock_family;		/* socket()'s: AF_MRC's number, or the address's */
	struct sockaddr_storage addr;	/* where listeners bind (port 0) */
	socklen_t addrlen;
	char addr_str[INET6_ADDRSTRLEN];
	int planes;
	int speed;
	int priority;			/* NCCL_MRC_PRIORITY, -1: unset */
	int keepalive;			/* NCCL_MRC_KEEPALIVE, s; 0: off */
	char name[16];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .priority = -1 };

static const char *kind_name(enum mrc_net_kind kind)
{
	return kind == MRC_NET_KIND_MRC ? "AF_MRC" : "TCP";
}

/* An errno of a connection's failure: the peer's doing, or ours. */
static ncclResult_t errno_result(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return ncclRemoteError;
	default:
		return ncclSystemError;
	}
}

/* The AF_MRC number the loaded module registered (its "family" parameter). */
static int mrc_family_number(void)
{
	FILE *f = fopen("/sys/module/mrc/parameters/family", "r");
	int fam = AF_MRC;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_MRC;
		fclose(f);
	}
	return fam;
}

/* Mb/s of network device @ifname, DEFAULT_SPEED when it does not say. */
static int dev_speed(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	int speed = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &speed) != 1)
			speed = -1;
		fclose(f);
	}
	return speed > 0 ? speed : DEFAULT_SPEED;
}

static bool usable_ifa(const struct ifaddrs *ifa, int family)
{
	if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
	    !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
		return false;
	if (family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ifa->ifa_addr;

		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
			return false;
	}
	return true;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

/*
 * The listen address, and the planes: MRC makes each up, non-loopback
 * device with an address of the family a plane, and one connection uses
 * them all, so the device's speed is their sum.  TCP uses the one device.
 */
static ncclResult_t pick_address(void)
{
	const char *want = getenv("NCCL_MRC_IFADDR");
	char seen[8][IF_NAMESIZE];
	struct ifaddrs *ifas, *ifa;
	int family = AF_INET, nseen = 0, i, speed = 0;
	bool found = false;

	memset(&g.addr, 0, sizeof(g.addr));
	if (want && *want) {
		struct sockaddr_in6 *s6 = (void *)&g.addr;
		struct sockaddr_in *s4 = (void *)&g.addr;

		if (inet_pton(AF_INET, want, &s4->sin_addr) == 1) {
			s4->sin_family = AF_INET;
		} else if (inet_pton(AF_INET6, want, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			family = AF_INET6;
		} else {
			WARN("NCCL_MRC_IFADDR=%s is not an IPv4 or IPv6 address", want);
			return ncclInvalidUsage;
		}
	}
	if (getifaddrs(&ifas)) {
		WARN("getifaddrs: %s", strerror(errno));
		return ncclSystemError;
	}
	for (ifa = ifas; ifa; ifa = ifa->ifa_next) {
		/* an address asked for may be loopback's: a test on one host */
		if (!found && want && *want && ifa->ifa_addr && (ifa->ifa_flags & IFF_UP) &&
		    same_addr(ifa->ifa_addr, &g.addr)) {
			found = true;
			if (g.kind == MRC_NET_KIND_TCP || (ifa->ifa_flags & IFF_LOOPBACK))
				speed = dev_speed(ifa->ifa_name);
			if (ifa->ifa_flags & IFF_LOOPBACK)
				nseen = -1;	/* MRC over loopback: one plane */
		}
		if (!usable_ifa(ifa, family) || nseen < 0)
			continue;
		if (!found && !(want && *want)) {
			memcpy(&g.addr, ifa->ifa_addr, family == AF_INET ?
			       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
			found = true;
			if (g.kind == MRC_NET_KIND_TCP)
				speed = dev_speed(ifa->ifa_name);
		}
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen[i], ifa->ifa_name))
				break;
		if (i < nseen || nseen == 8)
			continue;
		snprintf(seen[nseen++], IF_NAMESIZE, "%s", ifa->ifa_name);
		if (g.kind == MRC_NET_KIND_MRC && speed < (1 << 30))
			speed += dev_speed(ifa->ifa_name);
	}
	freeifaddrs(ifas);
	if (!found) {
		if (want && *want) {
			WARN("NCCL_MRC_IFADDR=%s is on no device that is up", want);
			return ncclInvalidUsage;
		}
		WARN("no IPv4 address on a device other than loopback: set NCCL_MRC_IFADDR");
		return ncclSystemError;
	}
	g.addrlen = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	if (family == AF_INET6)
		((struct sockaddr_in6 *)&g.addr)->sin6_scope_id = 0;
	((struct sockaddr_in *)&g.addr)->sin_port = 0;
	inet_ntop(family, family == AF_INET ? (void *)&((struct sockaddr_in *)&g.addr)->sin_addr :
		  (void *)&((struct sockaddr_in6 *)&g.addr)->sin6_addr, g.addr_str,
		  sizeof(g.addr_str));
	g.planes = g.kind == MRC_NET_KIND_MRC && nseen > 0 ? nseen : 1;
	g.speed = speed > 0 ? speed : DEFAULT_SPEED;
	return ncclSuccess;
}

/* An integer environment knob in [lo, hi]; @def when unset or bad. */
static int env_int(const char *name, int lo, int hi, int def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		WARN("%s=%s ignored: not an integer in %d..%d", name, s, lo, hi);
		return def;
	}
	return v;
}

static ncclResult_t setup(void)
{
	const char *fam = getenv("NCCL_MRC_FAMILY");
	ncclResult_t ret;
	int fd;

	if (!fam || !*fam || !strcmp(fam, "mrc")) {
		g.kind = MRC_NET_KIND_MRC;
	} else if (!strcmp(fam, "tcp")) {
		g.kind = MRC_NET_KIND_TCP;
	} else {
		WARN("NCCL_MRC_FAMILY=%s: not mrc or tcp", fam);
		return ncclInvalidUsage;
	}
	ret = pick_address();
	if (ret)
		return ret;
	g.sock_family = g.kind == MRC_NET_KIND_MRC ? mrc_family_number() : g.addr.ss_family;
	/* without the module, fail init so that NCCL falls back to its own */
	fd = socket(g.sock_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		WARN("%s (family %d) unavailable: %s; load mrc.ko or set NCCL_MRC_FAMILY=tcp",
		     kind_name(g.kind), g.sock_family, strerror(errno));
		return ncclSystemError;
	}
	close(fd);
	g.priority = env_int("NCCL_MRC_PRIORITY", 0, 7, -1);
	g.keepalive = env_int("NCCL_MRC_KEEPALIVE", 0, 32767, KEEPALIVE_IDLE);
	g.speed = env_int("NCCL_MRC_SPEED", 1, 1 << 30, g.speed);
	snprintf(g.name, sizeof(g.name), "%s", g.kind == MRC_NET_KIND_MRC ? "mrc0" : "mrc0-tcp");
	INFO(NCCL_INIT | NCCL_NET,
	     "%s (family %d) on %s, %d plane(s), %d Mb/s, priority %d, keepalive %d s",
	     kind_name(g.kind), g.sock_family, g.addr_str, g.planes, g.speed, g.priority,
	     g.keepalive);
	return ncclSuccess;
}

static ncclResult_t net_init(ncclDebugLogger_t log)
{
	ncclResult_t ret = ncclSuccess;

	pthread_mutex_lock(&g.lock);
	if (log)
		logger = log;
	if (!g.ready) {
		ret = setup();
		g.ready = ret == ncclSuccess;
	}
	pthread_mutex_unlock(&g.lock);
	return ret;
}

static ncclResult_t check_dev(int dev)
{
	if (!g.ready) {
		WARN("called before init");
		return ncclInternalError;
	}
	if (dev != 0) {
		WARN("device %d: there is one, device 0", dev);
		return ncclInternalError;
	}
	return ncclSuccess;
}

static ncclResult_t net_devices(int *ndev)
{
	if (!ndev || !g.ready)
		return ncclInternalError;
	*ndev = 1;
	return ncclSuccess;
}

/* The properties in the newest layout; older versions copy from it. */
static ncclResult_t net_props(int dev, ncclNetProperties_v12_t *p)
{
	ncclResult_t ret = check_dev(dev);

	if (ret)
		return ret;
	if (!p)
		return ncclInternalError;
	memset(p, 0, sizeof(*p));
	p->name = g.name;
	p->pciPath = NULL;		/* a virtual device: NCCL places it at the CPU */
	p->guid = dev;
	p->ptrSupport = NCCL_PTR_HOST;
	p->regIsGlobal = 0;
	p->forceFlush = 0;
	p->speed = g.speed;
	p->port = 0;
	p->latency = 0;			/* as NCCL's own socket and IB devices */
	p->maxComms = MAX_COMMS;
	p->maxRecvs = 1;
	p->netDeviceType = NCCL_NET_DEVICE_HOST;
	p->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	p->vProps.ndevs = 1;
	p->vProps.devs[0] = dev;
	/* test() reports sizes as int: stay at NCCL's own 1 GiB chunk */
	p->maxP2pBytes = NCCL_NET_MAX_MSG_BYTES;
	p->maxCollBytes = NCCL_NET_MAX_MSG_BYTES;
	p->maxMultiRequestSize = 1;
	/* one device over all planes: on no single rail or plane */
	p->railId = NCCL_NET_ID_UNDEF;
	p->planeId = NCCL_NET_ID_UNDEF;
	return ncclSuccess;
}

/* ---- contexts (v11+: one per communicator) ------------------------------ */

struct mrc_ctx {
	int traffic_class;
};

/* The priority a new connection gets: the comm's class, else the env's. */
static int conn_priority(int traffic_class)
{
	if (traffic_class == NCCL_NET_TRAFFIC_CLASS_UNDEF)
		return g.priority;
	if (traffic_class < 0 || traffic_class > 7) {
		WARN("trafficClass %d is not an MRC priority (0..7): using %d", traffic_class,
		     g.priority);
		return g.priority;
	}
	return traffic_class;
}

static ncclResult_t ctx_class(void *ctx, int *traffic_class)
{
	struct mrc_ctx *c;

	*traffic_class = NCCL_NET_TRAFFIC_CLASS_UNDEF;
	if (!ctx)
		return ncclSuccess;
	c = obj_get(ctx, OBJ_CTX);
	if (!c) {
		WARN("not a context of this plugin");
		return ncclInternalError;
	}
	*traffic_class = c->traffic_class;
	return ncclSuccess;
}

static ncclResult_t net_init_ctx(void **ctx, ncclNetCommConfig_v11_t *config,
				 ncclDebugLogger_t log)
{
	ncclResult_t ret = net_init(log);
	struct mrc_ctx *c;
	uint64_t id;

	if (ret)
		return ret;
	if (!ctx)
		return ncclInternalError;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	c->traffic_class = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF;
	id = obj_add(OBJ_CTX, c);
	if (!id) {
		free(c);
		return ncclSystemError;
	}
	*ctx = id_ptr(id);
	return ncclSuccess;
}

static void connecting_drop_ctx(uint64_t ctx);

static ncclResult_t net_finalize(void *ctx)
{
	struct mrc_ctx *c = obj_del(ctx, OBJ_CTX);

	/* as NCCL's socket plugin: a teardown has nothing to fail for */
	if (!c) {
		WARN("finalize: not a live context of this plugin (finalized already?)");
		return ncclSuccess;
	}
	free(c);
	connecting_drop_ctx((uintptr_t)ctx);
	return ncclSuccess;
}

static ncclResult_t net_set_attr(void *ctx, ncclNetAttr_v11_t *attr)
{
	int tc;

	/* hints on the traffic to come: MRC has nothing to size by them */
	(void)attr;
	return ctx_class(ctx, &tc);
}

/* ---- sockets --------------------------------------------------------------- */

/*
 * Keepalive: a receive comm waits for data with nothing of its own in
 * flight, so only probes notice a peer that died without a word (power
 * lost, a hang, a partition).  AF_MRC takes TCP's SOL_TCP options for
 * them and ends a connection with unacknowledged data at its own user
 * timeout (30 s by default); TCP is given one to match the probes.
 */
static void keepalive(int fd)
{
	static bool warned;
	int one = 1, idle = g.keepalive, intvl = KEEPALIVE_INTVL, cnt = KEEPALIVE_CNT;
	unsigned int ms = (idle + intvl * cnt) * 1000U;

	if (!idle)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, SOL_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) ||
	    setsockopt(fd, SOL_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) ||
	    (g.kind == MRC_NET_KIND_TCP &&
	     setsockopt(fd, SOL_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)))) {
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			WARN("SO_KEEPALIVE, TCP_KEEP*: %s: a peer that dies silently may go unnoticed",
			     strerror(errno));
	}
}

/*
 * Options every data socket gets; a listener's pass to what it accepts
 * (on AF_MRC as on TCP), which get them again all the same.
 */
static void sock_opts(int fd, int prio)
{
	int one = 1;

	keepalive(fd);
	if (g.kind == MRC_NET_KIND_MRC) {
		/* small messages (NCCL's LL protocol) must not wait for more */
		setsockopt(fd, SOL_MRC, MRC_NODELAY, &one, sizeof(one));
		if (prio >= 0 && setsockopt(fd, SOL_MRC, MRC_PRIORITY, &prio, sizeof(prio)))
			WARN("MRC_PRIORITY %d: %s", prio, strerror(errno));
	} else {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
}

static void log_conn(int fd, const char *what, const struct sockaddr *peer)
{
	char a[INET6_ADDRSTRLEN] = "?";
	int prio = -1, port = 0;
	socklen_t len = sizeof(prio);

	if (peer->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr, a, sizeof(a));
		port = ntohs(((const struct sockaddr_in *)peer)->sin_port);
	} else if (peer->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)peer)->sin6_addr, a, sizeof(a));
		port = ntohs(((const struct sockaddr_in6 *)peer)->sin6_port);
	}
	if (g.kind == MRC_NET_KIND_MRC && getsockopt(fd, SOL_MRC, MRC_PRIORITY, &prio, &len))
		prio = -1;
	INFO(NCCL_NET, "%s %s port %d over %s (family %d), priority %d", what, a, port,
	     kind_name(g.kind), g.sock_family, prio);
}

/* ---- listen and accept ----------------------------------------------------- */

struct mrc_pending {
	int fd;
	size_t got;
	uint64_t since_ms;		/* when it was accepted */
	struct mrc_net_hello hello;
};

struct mrc_listen {
	int fd;
	uint64_t cookie;
	struct mrc_pending pend[MAX_PENDING];
};

struct mrc_comm;
static ncclResult_t comm_new(int fd, enum obj_type type, void **comm);

static uint64_t new_cookie(void)
{
	static uint64_t seq;
	uint64_t c;

	if (getrandom(&c, sizeof(c), GRND_NONBLOCK) != sizeof(c))
		c = (uint64_t)time(NULL) << 32 ^ (uint64_t)getpid() << 16 ^
		    __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	return c ? c : 1;
}

static ncclResult_t net_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	struct mrc_net_handle *h = handle;
	struct sockaddr_storage ss = g.addr;
	socklen_t len = sizeof(ss);
	struct mrc_listen *l;
	ncclResult_t ret;
	int fd, i, tc;
	uint64_t id;

	ret = check_dev(dev);
	if (ret)
		return ret;
	if (!handle || !listen_comm)
		return ncclInternalError;
	ret = ctx_class(ctx, &tc);
	if (ret)
		return ret;
	*listen_comm = NULL;
	fd = socket(g.sock_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		WARN("socket: %s", strerror(errno));
		return ncclSystemError;
	}
	sock_opts(fd, conn_priority(tc));
	if (bind(fd, (struct sockaddr *)&g.addr, g.addrlen) || listen(fd, LISTEN_BACKLOG) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		WARN("listen on %s: %s", g.addr_str, strerror(errno));
		close(fd);
		return ncclSystemError;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return ncclSystemError;
	}
	l->fd = fd;
	l->cookie = new_cookie();
	for (i = 0; i < MAX_PENDING; i++)
		l->pend[i].fd = -1;
	id = obj_add(OBJ_LISTEN, l);
	if (!id) {
		close(fd);
		free(l);
		return ncclSystemError;
	}
	memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
	h->magic = MRC_NET_HANDLE_MAGIC;
	h->version = MRC_NET_HANDLE_VERSION;
	h->kind = g.kind;
	h->cookie = l->cookie;
	memcpy(&h->addr, &ss, g.addrlen);
	INFO(NCCL_NET, "listening on %s port %d (%s)", g.addr_str,
	     ntohs(((struct sockaddr_in *)&ss)->sin_port), kind_name(g.kind));
	*listen_comm = id_ptr(id);
	return ncclSuccess;
}

static void pending_drop(struct mrc_pending *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->got = 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Reads what has come of @p's hello.  Returns its fd once the hello is
 * whole and names this listener (@p is then free), -1 otherwise: not yet,
 * or the connection was dropped (gone, or for another listener).
 */
static int pending_read(struct mrc_listen *l, struct mrc_pending *p)
{
	ssize_t n;
	int fd;

	n = recv(p->fd, (char *)&p->hello + p->got, sizeof(p->hello) - p->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return -1;
	if (n <= 0) {
		/* a connector that went away: not the peer we wait for */
		pending_drop(p);
		return -1;
	}
	p->got += n;
	if (p->got < sizeof(p->hello))
		return -1;
	if (ntohl(p->hello.magic) != MRC_NET_HANDLE_MAGIC ||
	    ntohl(p->hello.version) != MRC_NET_HANDLE_VERSION ||
	    be64toh(p->hello.cookie) != l->cookie) {
		WARN("accept: a connection for another listener (stale handle?) dropped");
		pending_drop(p);
		return -1;
	}
	fd = p->fd;
	p->fd = -1;
	p->got = 0;
	return fd;
}

/*
 * The hellos of the connections already taken are read before the next is
 * taken from the backlog, so that connections which say nothing (a port
 * scan, a health check) cannot push out one that said its hello.  When
 * every slot waits on a hello and another connection waits in the backlog,
 * the oldest goes, once it has kept its slot for HELLO_WAIT_MS.
 */
static ncclResult_t net_accept(void *listen_comm, void **recv_comm)
{
	struct mrc_listen *l = obj_get(listen_comm, OBJ_LISTEN);
	struct sockaddr_storage peer;
	struct mrc_pending *p, *old;
	struct pollfd pfd;
	socklen_t len;
	uint64_t now;
	int i, fd;

	if (!l || !recv_comm) {
		WARN("accept: not a listen comm of this plugin");
		return ncclInternalError;
	}
	*recv_comm = NULL;
	for (;;) {
		p = NULL;
		old = NULL;
		for (i = 0; i < MAX_PENDING; i++) {
			if (l->pend[i].fd >= 0) {
				fd = pending_read(l, &l->pend[i]);
				if (fd >= 0)
					goto accepted;
			}
			if (l->pend[i].fd < 0)
				p = &l->pend[i];
			else if (!old || l->pend[i].since_ms < old->since_ms)
				old = &l->pend[i];
		}
		now = now_ms();
		if (!p) {
			pfd.fd = l->fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			if (now - old->since_ms < HELLO_WAIT_MS || poll(&pfd, 1, 0) <= 0)
				return ncclSuccess;
			INFO(NCCL_NET, "accept: a connection silent for %llu ms makes room",
			     (unsigned long long)(now - old->since_ms));
			pending_drop(old);
			p = old;
		}
		len = sizeof(peer);
		fd = accept4(l->fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return ncclSuccess;
			WARN("accept: %s", strerror(errno));
			return ncclSystemError;
		}
		sock_opts(fd, -1);
		p->fd = fd;
		p->got = 0;
		p->since_ms = now;
	}
accepted:
	len = sizeof(peer);
	if (!getpeername(fd, (struct sockaddr *)&peer, &len))
		log_conn(fd, "accepted from", (struct sockaddr *)&peer);
	return comm_new(fd, OBJ_RECV, recv_comm);
}

static ncclResult_t net_close_listen(void *listen_comm)
{
	struct mrc_listen *l = obj_del(listen_comm, OBJ_LISTEN);
	int i;

	if (!l) {
		WARN("closeListen: not a listen comm of this plugin");
		return ncclInternalError;
	}
	for (i = 0; i < MAX_PENDING; i++)
		pending_drop(&l->pend[i]);
	close(l->fd);
	free(l);
	return ncclSuccess;
}

/* ---- connect --------------------------------------------------------------- */

struct mrc_connecting {
	int fd;
	uint64_t ctx;			/* the v11+ context it was started in, 0: none */
	bool connected;
	size_t sent;			/* hello bytes sent */
	struct mrc_net_hello hello;
	struct mrc_net_handle key;	/* the handle it serves (stage 0) */
};

static bool same_handle(const struct mrc_net_handle *a, const struct mrc_net_handle *b)
{
	return a->cookie == b->cookie && !memcmp(&a->addr, &b->addr, sizeof(a->addr));
}

static void connecting_free(struct mrc_net_handle *h, struct mrc_connecting *c)
{
	obj_del(id_ptr(h->stage), OBJ_CONNECTING);
	h->stage = 0;
	close(c->fd);
	free(c);
}

/*
 * The connects of context @ctx still in progress: NCCL gave up on them (it
 * calls connect() until it gets a comm, and never after its communicator
 * is finalized), and nothing else would close their sockets.  Plugin v8 to
 * v10 have no finalize: an abandoned connect of theirs lasts as long as the
 * process.
 */
static void connecting_drop_ctx(uint64_t ctx)
{
	struct mrc_connecting *c;
	uint32_t i;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < tab_len; i++) {
		if (tab[i].type != OBJ_CONNECTING || !tab[i].ptr)
			continue;
		c = tab[i].ptr;
		if (c->ctx != ctx)
			continue;
		close(c->fd);
		free(c);
		slot_free(&tab[i]);
	}
	pthread_mutex_unlock(&tab_lock);
}

static ncclResult_t connect_start(struct mrc_net_handle *h, int prio, uint64_t ctx)
{
	socklen_t len = h->addr.v4.sin_family == AF_INET ? sizeof(struct sockaddr_in) :
			sizeof(struct sockaddr_in6);
	struct mrc_connecting *c;
	uint64_t id;
	int fd, err;

	fd = socket(g.sock_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		WARN("socket: %s", strerror(errno));
		return ncclSystemError;
	}
	sock_opts(fd, prio);
	if (connect(fd, (struct sockaddr *)&h->addr, len) && errno != EINPROGRESS) {
		err = errno;
		WARN("connect: %s", strerror(err));
		close(fd);
		return errno_result(err);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return ncclSystemError;
	}
	c->fd = fd;
	c->ctx = ctx;
	c->hello.magic = htonl(MRC_NET_HANDLE_MAGIC);
	c->hello.version = htonl(MRC_NET_HANDLE_VERSION);
	c->hello.cookie = htobe64(h->cookie);
	c->key = *h;
	c->key.stage = 0;
	id = obj_add(OBJ_CONNECTING, c);
	if (!id) {
		close(fd);
		free(c);
		return ncclSystemError;
	}
	h->stage = id;
	return ncclSuccess;
}

static ncclResult_t net_connect(void *ctx, int traffic_class, int dev, void *handle,
				void **send_comm)
{
	struct mrc_net_handle *h = handle;
	struct mrc_connecting *c = NULL;
	struct pollfd pfd;
	ncclResult_t ret;
	int err = 0, fd;
	socklen_t len;
	ssize_t n;

	ret = check_dev(dev);
	if (ret)
		return ret;
	if (!handle || !send_comm) {
		WARN("connect: no handle");
		return ncclInternalError;
	}
	if (ctx) {
		ret = ctx_class(ctx, &traffic_class);
		if (ret)
			return ret;
	}
	*send_comm = NULL;
	if (h->magic != MRC_NET_HANDLE_MAGIC || h->version != MRC_NET_HANDLE_VERSION ||
	    (h->addr.v4.sin_family != AF_INET && h->addr.v4.sin_family != AF_INET6) ||
	    !h->addr.v4.sin_port) {
		WARN("connect: not a handle of this plugin");
		return ncclInternalError;
	}
	if (h->kind != g.kind) {
		WARN("connect: the peer listens over %s, this process uses %s: set NCCL_MRC_FAMILY alike on every rank",
		     kind_name(h->kind), kind_name(g.kind));
		return ncclInvalidUsage;
	}
	if (h->stage) {
		c = obj_get(id_ptr(h->stage), OBJ_CONNECTING);
		/* a stage this handle did not start: start afresh */
		if (c && !same_handle(&c->key, h))
			c = NULL;
		if (!c)
			h->stage = 0;
	}
	if (!c) {
		ret = connect_start(h, conn_priority(traffic_class), (uintptr_t)ctx);
		if (ret)
			return ret;
		c = obj_get(id_ptr(h->stage), OBJ_CONNECTING);
		if (!c)
			return ncclInternalError;
	}
	if (!c->connected) {
		pfd.fd = c->fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) <= 0)
			return ncclSuccess;
		len = sizeof(err);
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (!err && !(pfd.revents & POLLOUT))
			err = ECONNREFUSED;	/* hung up with no error left to read */
		if (err) {
			WARN("connect to port %d: %s", ntohs(h->addr.v4.sin_port), strerror(err));
			connecting_free(h, c);
			return errno_result(err);
		}
		c->connected = true;
	}
	while (c->sent < sizeof(c->hello)) {
		n = send(c->fd, (char *)&c->hello + c->sent, sizeof(c->hello) - c->sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return ncclSuccess;
		if (n < 0) {
			err = errno;
			WARN("connect: hello: %s", strerror(err));
			connecting_free(h, c);
			return errno_result(err);
		}
		c->sent += n;
	}
	fd = c->fd;
	c->fd = -1;
	obj_del(id_ptr(h->stage), OBJ_CONNECTING);
	h->stage = 0;
	free(c);
	log_conn(fd, "connected to", (struct sockaddr *)&h->addr);
	return comm_new(fd, OBJ_SEND, send_comm);
}

/* ---- comms, registrations, requests ---------------------------------------- */

struct mrc_req {
	uint64_t id;			/* 0: the slot is free */
	struct mrc_comm *comm;
	bool done;
	ncclResult_t err;
	char *data;
	size_t size;			/* send: the message; receive: the buffer */
	size_t len;			/* receive: the message, from its header */
	size_t moved;			/* payload bytes sent or received */
	int tag;
	bool hdr_in;			/* receive: header read and checked */
	size_t hdr_out;			/* send: header bytes sent */
	struct mrc_net_msg_hdr hdr;	/* send: this message's header */
};

struct mrc_comm {
	int fd;
	enum obj_type type;		/* OBJ_SEND or OBJ_RECV */
	uint64_t id;
	ncclResult_t err;		/* set once the stream broke: every call fails */
	struct mrc_req req[MAX_REQS];
	int fifo[MAX_REQS];		/* posted and not complete, oldest first */
	int head, count;
	struct mrc_net_msg_hdr rhdr;	/* receive: the next header, as read so far */
	size_t rhdr_got;
};

struct mrc_mr {
	uint64_t comm;
	char *data;
	size_t size;
};

static ncclResult_t comm_new(int fd, enum obj_type type, void **comm)
{
	struct mrc_comm *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return ncclSystemError;
	}
	c->fd = fd;
	c->type = type;
	c->id = obj_add(type, c);
	if (!c->id) {
		close(fd);
		free(c);
		return ncclSystemError;
	}
	*comm = id_ptr(c->id);
	return ncclSuccess;
}

static struct mrc_comm *comm_get(const void *h, enum obj_type type)
{
	struct mrc_comm *c = obj_get(h, type);

	if (!c)
		WARN("not a live %s comm of this plugin", type == OBJ_SEND ? "send" : "receive");
	return c;
}

static struct mrc_req *fifo_head(struct mrc_comm *c)
{
	return &c->req[c->fifo[c->head]];
}

static void fifo_pop(struct mrc_comm *c)
{
	c->head = (c->head + 1) % MAX_REQS;
	c->count--;
}

/* The stream broke: every request posted fails with @err, and later calls too. */
static void comm_fail(struct mrc_comm *c, ncclResult_t err, const char *why)
{
	WARN("%s comm: %s", c->type == OBJ_SEND ? "send" : "receive", why);
	c->err = err;
	while (c->count) {
		fifo_head(c)->err = err;
		fifo_pop(c);
	}
}

static void send_progress(struct mrc_comm *c)
{
	struct iovec iov[2 * MAX_REQS];
	struct msghdr msg = { .msg_iov = iov };
	size_t want, k;
	ssize_t w;
	int i, n;

	while (c->count && !c->err) {
		n = 0;
		want = 0;
		for (i = 0; i < c->count; i++) {
			struct mrc_req *r = &c->req[c->fifo[(c->head + i) % MAX_REQS]];

			if (r->hdr_out < sizeof(r->hdr)) {
				iov[n].iov_base = (char *)&r->hdr + r->hdr_out;
				iov[n].iov_len = sizeof(r->hdr) - r->hdr_out;
				want += iov[n++].iov_len;
			}
			if (r->moved < r->size) {
				iov[n].iov_base = r->data + r->moved;
				iov[n].iov_len = r->size - r->moved;
				want += iov[n++].iov_len;
			}
		}
		msg.msg_iovlen = n;
		w = sendmsg(c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				comm_fail(c, errno_result(errno), strerror(errno));
			return;
		}
		/* what went out completes the oldest requests first */
		for (k = w; c->count; ) {
			struct mrc_req *r = fifo_head(c);
			size_t m = sizeof(r->hdr) - r->hdr_out;

			m = k < m ? k : m;
			r->hdr_out += m;
			k -= m;
			m = r->size - r->moved;
			m = k < m ? k : m;
			r->moved += m;
			k -= m;
			if (r->hdr_out < sizeof(r->hdr) || r->moved < r->size)
				break;
			r->done = true;
			fifo_pop(c);
		}
		if ((size_t)w < want)
			return;		/* the socket is full */
	}
}

/* Reads and checks the header of the oldest receive; false: not yet, or failed. */
static bool recv_header(struct mrc_comm *c, struct mrc_req *r)
{
	char what[96];
	uint64_t size;
	ssize_t n;
	int tag;

	while (c->rhdr_got < sizeof(c->rhdr)) {
		n = recv(c->fd, (char *)&c->rhdr + c->rhdr_got, sizeof(c->rhdr) - c->rhdr_got,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		if (n < 0) {
			comm_fail(c, errno_result(errno), strerror(errno));
			return false;
		}
		if (!n) {
			comm_fail(c, ncclRemoteError, "the peer closed the connection");
			return false;
		}
		c->rhdr_got += n;
	}
	c->rhdr_got = 0;
	if (ntohl(c->rhdr.magic) != MRC_NET_MSG_MAGIC) {
		comm_fail(c, ncclInternalError, "the stream lost its framing");
		return false;
	}
	tag = (int32_t)ntohl((uint32_t)c->rhdr.tag);
	size = be64toh(c->rhdr.size);
	/* no sender of this plugin sends more, whatever the buffer holds */
	if (size > NCCL_NET_MAX_MSG_BYTES) {
		snprintf(what, sizeof(what), "a header of %llu bytes, over the %ld of any message",
			 (unsigned long long)size, NCCL_NET_MAX_MSG_BYTES);
		comm_fail(c, ncclInternalError, what);
		return false;
	}
	if (tag != r->tag) {
		snprintf(what, sizeof(what), "a message with tag %d, the receive is for tag %d",
			 tag, r->tag);
		comm_fail(c, ncclInvalidUsage, what);
		return false;
	}
	if (size > r->size) {
		snprintf(what, sizeof(what), "a message of %llu bytes, the buffer holds %zu",
			 (unsigned long long)size, r->size);
		comm_fail(c, ncclInvalidUsage, what);
		return false;
	}
	r->len = size;
	r->hdr_in = true;
	return true;
}

static void recv_progress(struct mrc_comm *c)
{
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	struct mrc_req *r;
	size_t k;
	ssize_t n;

	while (c->count && !c->err) {
		r = fifo_head(c);
		if (!r->hdr_in && !recv_header(c, r))
			return;
		while (r->moved < r->len) {
			/* the next message's header comes in the same call */
			iov[0].iov_base = r->data + r->moved;
			iov[0].iov_len = r->len - r->moved;
			iov[1].iov_base = &c->rhdr;
			iov[1].iov_len = sizeof(c->rhdr);
			n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			if (n < 0) {
				comm_fail(c, errno_result(errno), strerror(errno));
				return;
			}
			if (!n) {
				comm_fail(c, ncclRemoteError, "the peer closed the connection");
				return;
			}
			k = r->len - r->moved;
			k = (size_t)n < k ? (size_t)n : k;
			r->moved += k;
			c->rhdr_got = n - k;
			if (r->moved < r->len)
				return;		/* took all there was */
		}
		r->done = true;
		fifo_pop(c);
	}
}

static void progress(struct mrc_comm *c)
{
	if (c->type == OBJ_SEND)
		send_progress(c);
	else
		recv_progress(c);
}

/* A request slot for a new post; NULL when all are in use (NCCL retries). */
static struct mrc_req *req_new(struct mrc_comm *c)
{
	struct mrc_req *r;
	int i;

	if (c->count == MAX_REQS)
		return NULL;
	for (i = 0; i < MAX_REQS; i++)
		if (!c->req[i].id)
			break;
	if (i == MAX_REQS)
		return NULL;	/* done, waiting for test() */
	r = &c->req[i];
	memset(r, 0, sizeof(*r));
	r->comm = c;
	r->id = obj_add(OBJ_REQ, r);
	if (!r->id)
		return NULL;
	c->fifo[(c->head + c->count) % MAX_REQS] = i;
	c->count++;
	return r;
}

static void req_free(struct mrc_req *r)
{
	obj_del(id_ptr(r->id), OBJ_REQ);
	r->id = 0;
}

/* A registration's check of the buffer it is used with: NULL is allowed. */
static ncclResult_t mr_check(void *mhandle, const void *data, size_t size)
{
	struct mrc_mr *mr;

	if (!mhandle)
		return ncclSuccess;
	mr = obj_get(mhandle, OBJ_MR);
	if (!mr) {
		WARN("not a live memory registration of this plugin");
		return ncclInternalError;
	}
	if (size && ((const char *)data < mr->data || size > mr->size ||
		     (size_t)((const char *)data - mr->data) > mr->size - size)) {
		WARN("a buffer outside its registration");
		return ncclInternalError;
	}
	return ncclSuccess;
}

static ncclResult_t net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			      void **request)
{
	struct mrc_comm *c = comm_get(send_comm, OBJ_SEND);
	struct mrc_req *r;
	ncclResult_t ret;

	if (!c || !request)
		return ncclInternalError;
	*request = NULL;
	if (c->err)
		return c->err;
	if (!data && size) {
		WARN("isend: no buffer");
		return ncclInternalError;
	}
	if (size > NCCL_NET_MAX_MSG_BYTES) {
		WARN("isend: %zu bytes, more than the %ld this device takes", size,
		     NCCL_NET_MAX_MSG_BYTES);
		return ncclInvalidUsage;
	}
	ret = mr_check(mhandle, data, size);
	if (ret)
		return ret;
	r = req_new(c);
	if (!r)
		return ncclSuccess;
	r->data = data;
	r->size = size;
	r->tag = tag;
	r->hdr.magic = htonl(MRC_NET_MSG_MAGIC);
	r->hdr.tag = (int32_t)htonl((uint32_t)tag);
	r->hdr.size = htobe64(size);
	send_progress(c);
	*request = id_ptr(r->id);
	return ncclSuccess;
}

static ncclResult_t net_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **request)
{
	struct mrc_comm *c = comm_get(recv_comm, OBJ_RECV);
	struct mrc_req *r;
	ncclResult_t ret;

	if (!c || !request)
		return ncclInternalError;
	*request = NULL;
	if (c->err)
		return c->err;
	if (n != 1) {
		WARN("irecv: %d buffers; this device groups none (maxRecvs 1)", n);
		return ncclInternalError;
	}
	if (!data || !sizes || !tags || (!data[0] && sizes[0])) {
		WARN("irecv: no buffer");
		return ncclInternalError;
	}
	ret = mr_check(mhandles ? mhandles[0] : NULL, data[0], sizes[0]);
	if (ret)
		return ret;
	r = req_new(c);
	if (!r)
		return ncclSuccess;
	r->data = data[0];
	r->size = sizes[0];
	r->tag = tags[0];
	recv_progress(c);
	*request = id_ptr(r->id);
	return ncclSuccess;
}

static ncclResult_t net_test(void *request, int *done, int *sizes)
{
	struct mrc_req *r = obj_get(request, OBJ_REQ);
	ncclResult_t ret;

	if (!r || !done) {
		WARN("test: not a live request of this plugin");
		return ncclInternalError;
	}
	*done = 0;
	if (!r->done && !r->err)
		progress(r->comm);
	if (r->err) {
		ret = r->err;
		req_free(r);
		return ret;
	}
	if (r->done) {
		*done = 1;
		/* isend() and recv_header() let no more than an int through */
		if (sizes)
			*sizes = (int)(r->comm->type == OBJ_SEND ? r->size : r->len);
		req_free(r);
	}
	return ncclSuccess;
}

static ncclResult_t net_regmr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct mrc_mr *mr;
	uint64_t cid;

	if (!obj_get(comm, OBJ_SEND) && !obj_get(comm, OBJ_RECV)) {
		WARN("regMr: not a live comm of this plugin");
		return ncclInternalError;
	}
	if (!mhandle || (!data && size))
		return ncclInternalError;
	*mhandle = NULL;
	if (type != NCCL_PTR_HOST) {
		WARN("regMr: memory type %d; this device takes host memory only", type);
		return ncclInternalError;
	}
	cid = (uintptr_t)comm;
	mr = malloc(sizeof(*mr));
	if (!mr)
		return ncclSystemError;
	mr->comm = cid;
	mr->data = data;
	mr->size = size;
	*mhandle = id_ptr(obj_add(OBJ_MR, mr));
	if (!*mhandle) {
		free(mr);
		return ncclSystemError;
	}
	return ncclSuccess;
}

static ncclResult_t net_regmr_dmabuf(void *comm, void *data, size_t size, int type,
				     uint64_t offset, int fd, void **mhandle)
{
	(void)comm;
	(void)data;
	(void)size;
	(void)type;
	(void)offset;
	(void)fd;
	(void)mhandle;
	WARN("regMrDmaBuf: this device takes host memory only");
	return ncclInternalError;
}

static ncclResult_t net_deregmr(void *comm, void *mhandle)
{
	struct mrc_mr *mr = obj_del(mhandle, OBJ_MR);

	(void)comm;
	if (!mr) {
		WARN("deregMr: not a live memory registration of this plugin");
		return ncclInternalError;
	}
	free(mr);
	return ncclSuccess;
}

static ncclResult_t net_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			       void **request)
{
	/* only GPU memory needs a flush, and this device takes none */
	(void)recv_comm;
	(void)n;
	(void)data;
	(void)sizes;
	(void)mhandles;
	(void)request;
	return ncclInternalError;
}

/* Registrations left on a closing comm go with it: NCCL dropped them first. */
static void mr_drop_comm(uint64_t cid)
{
	struct mrc_mr *mr;
	uint32_t i;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < tab_len; i++) {
		if (tab[i].type != OBJ_MR || !tab[i].ptr)
			continue;
		mr = tab[i].ptr;
		if (mr->comm != cid)
			continue;
		free(mr);
		slot_free(&tab[i]);
	}
	pthread_mutex_unlock(&tab_lock);
}

static ncclResult_t comm_close(void *comm, enum obj_type type)
{
	struct mrc_comm *c = obj_del(comm, type);
	struct mrc_info info;
	socklen_t len = sizeof(info);
	int i;

	if (!c) {
		WARN("close: not a live %s comm of this plugin",
		     type == OBJ_SEND ? "send" : "receive");
		return ncclInternalError;
	}
	if (g.kind == MRC_NET_KIND_MRC &&
	    !getsockopt(c->fd, SOL_MRC, MRC_INFO, &info, &len) && len >= sizeof(info))
		INFO(NCCL_NET, "closing %s comm: %llu B sent, %llu received, %llu resent, %llu RTO",
		     type == OBJ_SEND ? "send" : "receive",
		     (unsigned long long)info.bytes_sent, (unsigned long long)info.bytes_received,
		     (unsigned long long)info.retransmits, (unsigned long long)info.rto_events);
	for (i = 0; i < MAX_REQS; i++)
		if (c->req[i].id)
			req_free(&c->req[i]);
	mr_drop_comm(c->id);
	close(c->fd);
	free(c);
	return ncclSuccess;
}

static ncclResult_t net_close_send(void *send_comm)
{
	return comm_close(send_comm, OBJ_SEND);
}

static ncclResult_t net_close_recv(void *recv_comm)
{
	return comm_close(recv_comm, OBJ_RECV);
}

/* ---- the versions NCCL loads ----------------------------------------------- */

static ncclResult_t v8_init(ncclDebugLogger_t log)
{
	return net_init(log);
}

static ncclResult_t v10_init(ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
	(void)prof;
	return net_init(log);
}

static ncclResult_t v11_init(void **ctx, uint64_t comm_id, ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
	(void)comm_id;
	(void)prof;
	return net_init_ctx(ctx, config, log);
}

static ncclResult_t v8_props(int dev, ncclNetProperties_v8_t *p)
{
	ncclNetProperties_v12_t q;
	ncclResult_t ret = net_props(dev, &q);

	if (ret || !p)
		return ret ? ret : ncclInternalError;
	memset(p, 0, sizeof(*p));
	p->name = q.name;
	p->pciPath = q.pciPath;
	p->guid = q.guid;
	p->ptrSupport = q.ptrSupport;
	p->regIsGlobal = q.regIsGlobal;
	p->speed = q.speed;
	p->port = q.port;
	p->latency = q.latency;
	p->maxComms = q.maxComms;
	p->maxRecvs = q.maxRecvs;
	p->netDeviceType = q.netDeviceType;
	p->netDeviceVersion = q.netDeviceVersion;
	return ncclSuccess;
}

static ncclResult_t v9_props(int dev, ncclNetProperties_v9_t *p)
{
	ncclNetProperties_v12_t q;
	ncclResult_t ret = net_props(dev, &q);

	if (ret || !p)
		return ret ? ret : ncclInternalError;
	memset(p, 0, sizeof(*p));
	p->name = q.name;
	p->pciPath = q.pciPath;
	p->guid = q.guid;
	p->ptrSupport = q.ptrSupport;
	p->regIsGlobal = q.regIsGlobal;
	p->forceFlush = q.forceFlush;
	p->speed = q.speed;
	p->port = q.port;
	p->latency = q.latency;
	p->maxComms = q.maxComms;
	p->maxRecvs = q.maxRecvs;
	p->netDeviceType = q.netDeviceType;
	p->netDeviceVersion = q.netDeviceVersion;
	p->vProps.ndevs = q.vProps.ndevs;
	p->vProps.devs[0] = q.vProps.devs[0];
	p->maxP2pBytes = q.maxP2pBytes;
	p->maxCollBytes = q.maxCollBytes;
	return ncclSuccess;
}

static ncclResult_t v11_props(int dev, ncclNetProperties_v11_t *p)
{
	ncclNetProperties_v9_t q;
	ncclResult_t ret = v9_props(dev, &q);

	if (ret || !p)
		return ret ? ret : ncclInternalError;
	memset(p, 0, sizeof(*p));
	memcpy(p, &q, sizeof(q));	/* v11 is v9's layout with one field more */
	p->maxMultiRequestSize = 1;
	return ncclSuccess;
}

static ncclResult_t v8_listen(int dev, void *handle, void **listen_comm)
{
	return net_listen(NULL, dev, handle, listen_comm);
}

static ncclResult_t v11_listen(void *ctx, int dev, void *handle, void **listen_comm)
{
	return net_listen(ctx, dev, handle, listen_comm);
}

static ncclResult_t v8_connect(int dev, void *handle, void **send_comm,
			       ncclNetDeviceHandle_v8_t **dev_comm)
{
	(void)dev_comm;
	return net_connect(NULL, NCCL_NET_TRAFFIC_CLASS_UNDEF, dev, handle, send_comm);
}

static ncclResult_t v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
				void **send_comm, ncclNetDeviceHandle_v10_t **dev_comm)
{
	(void)dev_comm;
	return net_connect(NULL, config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF,
			   dev, handle, send_comm);
}

static ncclResult_t v11_connect(void *ctx, int dev, void *handle, void **send_comm,
				ncclNetDeviceHandle_v11_t **dev_comm)
{
	(void)dev_comm;
	return net_connect(ctx, NCCL_NET_TRAFFIC_CLASS_UNDEF, dev, handle, send_comm);
}

static ncclResult_t v8_accept(void *listen_comm, void **recv_comm,
			      ncclNetDeviceHandle_v8_t **dev_comm)
{
	(void)dev_comm;
	return net_accept(listen_comm, recv_comm);
}

static ncclResult_t v8_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
			     void **request)
{
	if (size < 0) {
		WARN("isend: %d bytes", size);
		return ncclInternalError;
	}
	return net_isend(send_comm, data, size, tag, mhandle, request);
}

static ncclResult_t v10_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request)
{
	(void)phandle;
	return net_isend(send_comm, data, size, tag, mhandle, request);
}

static ncclResult_t v8_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
			     void **mhandles, void **request)
{
	size_t size;

	if (n != 1 || !sizes || sizes[0] < 0) {
		if (request)
			*request = NULL;
		WARN("irecv: %d buffers, or a negative size", n);
		return ncclInternalError;
	}
	size = sizes[0];
	return net_irecv(recv_comm, n, data, &size, tags, mhandles, request);
}

static ncclResult_t v10_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request)
{
	(void)phandles;
	return net_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

/* Not offered: device offload (getDeviceMr, irecvConsumed), virtual NICs. */
EXPORT ncclNet_v8_t ncclNetPlugin_v8 = {
	.name = "MRC",
	.init = v8_init,
	.devices = net_devices,
	.getProperties = v8_props,
	.listen = v8_listen,
	.connect = v8_connect,
	.accept = v8_accept,
	.regMr = net_regmr,
	.regMrDmaBuf = net_regmr_dmabuf,
	.deregMr = net_deregmr,
	.isend = v8_isend,
	.irecv = v8_irecv,
	.iflush = net_iflush,
	.test = net_test,
	.closeSend = net_close_send,
	.closeRecv = net_close_recv,
	.closeListen = net_close_listen,
};

EXPORT ncclNet_v9_t ncclNetPlugin_v9 = {
	.name = "MRC",
	.init = v8_init,
	.devices = net_devices,
	.getProperties = v9_props,
	.listen = v8_listen,
	.connect = v8_connect,
	.accept = v8_accept,
	.regMr = net_regmr,
	.regMrDmaBuf = net_regmr_dmabuf,
	.deregMr = net_deregmr,
	.isend = net_isend,
	.irecv = net_irecv,
	.iflush = net_iflush,
	.test = net_test,
	.closeSend = net_close_send,
	.closeRecv = net_close_recv,
	.closeListen = net_close_listen,
};

EXPORT ncclNet_v10_t ncclNetPlugin_v10 = {
	.name = "MRC",
	.init = v10_init,
	.devices = net_devices,
	.getProperties = v9_props,
	.listen = v8_listen,
	.connect = v10_connect,
	.accept = v8_accept,
	.regMr = net_regmr,
	.regMrDmaBuf = net_regmr_dmabuf,
	.deregMr = net_deregmr,
	.isend = v10_isend,
	.irecv = v10_irecv,
	.iflush = net_iflush,
	.test = net_test,
	.closeSend = net_close_send,
	.closeRecv = net_close_recv,
	.closeListen = net_close_listen,
};

EXPORT ncclNet_v11_t ncclNetPlugin_v11 = {
	.name = "MRC",
	.init = v11_init,
	.devices = net_devices,
	.getProperties = v11_props,
	.listen = v11_listen,
	.connect = v11_connect,
	.accept = v8_accept,
	.regMr = net_regmr,
	.regMrDmaBuf = net_regmr_dmabuf,
	.deregMr = net_deregmr,
	.isend = v10_isend,
	.irecv = v10_irecv,
	.iflush = net_iflush,
	.test = net_test,
	.closeSend = net_close_send,
	.closeRecv = net_close_recv,
	.closeListen = net_close_listen,
	.finalize = net_finalize,
	.setNetAttr = net_set_attr,
};

EXPORT ncclNet_v12_t ncclNetPlugin_v12 = {
	.name = "MRC",
	.init = v11_init,
	.devices = net_devices,
	.getProperties = net_props,
	.listen = v11_listen,
	.connect = v11_connect,
	.accept = v8_accept,
	.regMr = net_regmr,
	.regMrDmaBuf = net_regmr_dmabuf,
	.deregMr = net_deregmr,
	.isend = v10_isend,
	.irecv = v10_irecv,
	.iflush = net_iflush,
	.test = net_test,
	.closeSend = net_close_send,
	.closeRecv = net_close_recv,
	.closeListen = net_close_listen,
	.finalize = net_finalize,
	.setNetAttr = net_set_attr,
};
