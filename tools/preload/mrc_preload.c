// SPDX-License-Identifier: GPL-2.0-only
/*
 * libmrc-preload.so - run unmodified TCP programs over AF_MRC.
 *
 *   LD_PRELOAD=libmrc-preload.so PROGRAM...	(or: mrcctl run -- PROGRAM...)
 *
 * socket(AF_INET or AF_INET6, SOCK_STREAM, 0 or IPPROTO_TCP) makes an AF_MRC
 * socket instead.  With a filter (MRC_PRELOAD_PORTS, MRC_PRELOAD_PREFIXES)
 * the socket starts as TCP and is swapped for an AF_MRC one, on the same fd
 * number, at connect() when the destination matches, or at listen() when
 * the bound port does.  Environment:
 *
 *   MRC_PRELOAD_PORTS=P[,LO-HI]...	ports (destination, or listening)
 *   MRC_PRELOAD_PREFIXES=CIDR[,CIDR]...	destinations, IPv4 or IPv6
 *   MRC_PRELOAD_FAMILY=N		the AF_MRC number (default: the module's)
 *   MRC_PRELOAD_DEBUG=1		one line on stderr per conversion
 *   MRC_PRELOAD_CONNECT_WAIT_MS=N	a non-blocking connect over MRC waits up
 *					to N ms (default 250, 0: not at all) for
 *					the handshake, so that a refusal can
 *					still fall back to TCP
 *
 * See "Running unmodified programs" in Documentation/networking/mrc.rst
 * for what is converted, the fallback to TCP and the limits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "mrc_filter.h"
#include "mrc_lib.h"	/* mrc_family(): the live AF number, as the selftests read it */

#define MAX_FDS		65536	/* fds above this are converted but not tracked */
#define MAX_OPTS	16	/* options remembered per socket for a swap */
#define MAX_OPTLEN	32	/* an int, a linger, a timeval */

#define EXPORT __attribute__((visibility("default")))

static int (*real_socket)(int, int, int);
static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);

static struct {
	int family;			/* AF_MRC number */
	bool debug;
	bool filtered;			/* a filter is set: decide late */
	bool have_ports, have_prefixes;
	bool unavailable;		/* socket(AF_MRC) failed once: TCP from now on */
	int connect_wait_ms;		/* MRC_PRELOAD_CONNECT_WAIT_MS */
	struct mrc_filter filter;
} cfg;

/* One option the program set, replayed onto the replacement socket. */
struct opt {
	int level, name;
	socklen_t len;
	unsigned char val[MAX_OPTLEN];
};

/*
 * What the program asked for on a socket() we handled.  @ino tells a live
 * entry from one whose fd was closed and reused: only socket() writes here,
 * close() is not wrapped.
 */
struct fdent {
	ino_t ino;
	int domain, type, protocol;
	bool mrc;			/* the fd is AF_MRC now */
	bool decided;			/* filtered: connect()/listen() decided */
	socklen_t bind_len;		/* the program's bind(), 0 if none */
	struct sockaddr_storage bind_addr;
	int nopts;
	struct opt opts[MAX_OPTS];
};

static struct fdent *fds[MAX_FDS];
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void dbg(const char *fmt, ...)
{
	va_list ap;

	if (!cfg.debug)
		return;
	va_start(ap, fmt);
	fputs("mrc-preload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Reads one filter variable; true if it is set (even if nothing in it parsed). */
static bool filter_env(const char *name, bool (*one)(struct mrc_filter *, const char *))
{
	const char *s = getenv(name);
	char *bad;

	if (!s || !*s)
		return false;
	bad = mrc_filter_parse(&cfg.filter, s, one);
	if (bad)
		fprintf(stderr, "mrc-preload: bad entry \"%s\" in %s, ignored\n", bad, name);
	free(bad);
	return true;
}

static void init(void)
{
	const char *s;

	real_socket = dlsym(RTLD_NEXT, "socket");
	real_connect = dlsym(RTLD_NEXT, "connect");
	real_bind = dlsym(RTLD_NEXT, "bind");
	real_listen = dlsym(RTLD_NEXT, "listen");
	real_setsockopt = dlsym(RTLD_NEXT, "setsockopt");

	s = getenv("MRC_PRELOAD_DEBUG");
	cfg.debug = s && *s && strcmp(s, "0");
	s = getenv("MRC_PRELOAD_CONNECT_WAIT_MS");
	cfg.connect_wait_ms = s && *s ? atoi(s) : 250;
	s = getenv("MRC_PRELOAD_FAMILY");
	cfg.family = s && *s ? atoi(s) : mrc_family();
	cfg.have_ports = filter_env("MRC_PRELOAD_PORTS", mrc_filter_port);
	cfg.have_prefixes = filter_env("MRC_PRELOAD_PREFIXES", mrc_filter_prefix);
	cfg.filtered = cfg.have_ports || cfg.have_prefixes;
}

static void lazy_init(void)
{
	pthread_once(&init_once, init);
}

/* ---- matching ---------------------------------------------------------- */

/* A v4-mapped IPv6 address as the IPv4 address it carries. */
static bool v4mapped(const struct sockaddr *sa, struct sockaddr_in *out)
{
	const struct sockaddr_in6 *s6 = (const void *)sa;

	if (sa->sa_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return false;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = s6->sin6_port;
	memcpy(&out->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	return true;
}

static unsigned int sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* Should a connect() to @sa go over MRC?  Every filter given must match. */
static bool dest_matches(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr_in v4;

	if (len < sizeof(struct sockaddr_in) ||
	    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    (sa->sa_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return false;
	if (v4mapped(sa, &v4))
		sa = (const struct sockaddr *)&v4;
	if (cfg.have_ports && !mrc_filter_port_matches(&cfg.filter, sa_port(sa)))
		return false;
	if (!cfg.have_prefixes)
		return true;
	if (sa->sa_family == AF_INET)
		return mrc_filter_addr_matches(&cfg.filter, AF_INET, (const void *)
					       &((const struct sockaddr_in *)sa)->sin_addr);
	return mrc_filter_addr_matches(&cfg.filter, AF_INET6,
				       ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
}

static const char *sa_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof(a));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof(a));
	snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, sa_port(sa));
	return buf;
}

/* ---- the fd table ------------------------------------------------------ */

static ino_t fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* The live entry of @fd, or NULL: none, or the socket it described is gone. */
static struct fdent *fd_get(int fd)
{
	struct fdent *e;

	if (fd < 0 || fd >= MAX_FDS)
		return NULL;
	pthread_mutex_lock(&fds_lock);
	e = fds[fd];
	pthread_mutex_unlock(&fds_lock);
	if (e && e->ino != fd_ino(fd))
		return NULL;
	return e;
}

static void fd_track(int fd, int domain, int type, int protocol, bool mrc)
{
	struct fdent *e;

	if (fd < 0 || fd >= MAX_FDS)
		return;
	pthread_mutex_lock(&fds_lock);
	e = fds[fd];
	if (!e)
		e = calloc(1, sizeof(*e));
	else
		memset(e, 0, sizeof(*e));
	if (e) {
		e->ino = fd_ino(fd);
		e->domain = domain;
		e->type = type;
		e->protocol = protocol;
		e->mrc = mrc;
		e->decided = mrc || !cfg.filtered;
	}
	fds[fd] = e;
	pthread_mutex_unlock(&fds_lock);
}

static void fd_remember_opt(struct fdent *e, int level, int name, const void *val, socklen_t len)
{
	int i;

	if (len > MAX_OPTLEN) {
		dbg("option %d/%d (%u bytes) not kept for a later swap", level, name, len);
		return;
	}
	for (i = 0; i < e->nopts; i++)
		if (e->opts[i].level == level && e->opts[i].name == name)
			break;
	if (i == MAX_OPTS) {
		dbg("more than %d options: %d/%d not kept for a later swap", MAX_OPTS, level, name);
		return;
	}
	e->opts[i].level = level;
	e->opts[i].name = name;
	e->opts[i].len = len;
	memcpy(e->opts[i].val, val, len);
	if (i == e->nopts)
		e->nopts++;
}

/* ---- swapping the socket under an fd ----------------------------------- */

/*
 * Replaces the socket of @fd by a new AF_MRC (@to_mrc) or TCP one with the
 * fd's flags, the options the program set and its bind() address; @port,
 * if not 0, replaces the port of that address.  The fd number stays.
 * Return: 0, or -1 with errno (the fd is unchanged).
 */
static int fd_swap(int fd, struct fdent *e, bool to_mrc, unsigned int port)
{
	int nfd, fl, fdfl, i, err, type = e->type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct sockaddr_storage ba = e->bind_addr;

	nfd = to_mrc ? real_socket(cfg.family, type, 0) : real_socket(e->domain, type, e->protocol);
	if (nfd < 0)
		return -1;
	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0 || fcntl(nfd, F_SETFL, fl) < 0)
		goto fail;
	for (i = 0; i < e->nopts; i++) {
		struct opt *o = &e->opts[i];

		if (real_setsockopt(nfd, o->level, o->name, o->val, o->len))
			dbg("fd %d: option %d/%d not carried over: %s", fd, o->level, o->name,
			    strerror(errno));
	}
	if (e->bind_len) {
		if (port && ba.ss_family == AF_INET)
			((struct sockaddr_in *)&ba)->sin_port = htons(port);
		else if (port)
			((struct sockaddr_in6 *)&ba)->sin6_port = htons(port);
		if (real_bind(nfd, (struct sockaddr *)&ba, e->bind_len))
			goto fail;
	}
	if (dup3(nfd, fd, fdfl & FD_CLOEXEC ? O_CLOEXEC : 0) < 0)
		goto fail;
	close(nfd);
	e->ino = fd_ino(fd);
	e->mrc = to_mrc;
	return 0;
fail:
	err = errno;
	close(nfd);
	errno = err;
	return -1;
}

/* socket(AF_MRC) failed with @err: is it that the family is not there? */
static bool mrc_missing(int err)
{
	if (err != EAFNOSUPPORT && err != EINVAL && err != EPROTONOSUPPORT &&
	    err != ESOCKTNOSUPPORT)
		return false;
	if (!__atomic_exchange_n(&cfg.unavailable, true, __ATOMIC_RELAXED))
		fprintf(stderr, "mrc-preload: AF_MRC unavailable (%s), using TCP\n",
			strerror(err));
	return true;
}

/* Filtered mode: turn the TCP socket @fd into an AF_MRC one now (errno kept). */
static void fd_to_mrc(int fd, struct fdent *e, unsigned int port, const char *why)
{
	int err = errno;

	if (cfg.unavailable)
		return;
	if (!fd_swap(fd, e, true, port))
		dbg("fd %d: %s -> AF_MRC (%s)", fd, e->domain == AF_INET6 ? "AF_INET6" : "AF_INET",
		    why);
	else if (!mrc_missing(errno))
		dbg("fd %d: stays TCP, no AF_MRC socket: %s", fd, strerror(errno));
	errno = err;
}

/* ---- the wrapped calls ------------------------------------------------- */

EXPORT int socket(int domain, int type, int protocol)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), fd;

	lazy_init();
	if ((domain != AF_INET && domain != AF_INET6) || base != SOCK_STREAM ||
	    (protocol != 0 && protocol != IPPROTO_TCP))
		return real_socket(domain, type, protocol);
	if (!cfg.filtered && !cfg.unavailable) {
		fd = real_socket(cfg.family, type, 0);
		if (fd >= 0) {
			fd_track(fd, domain, type, protocol, true);
			dbg("fd %d: %s SOCK_STREAM -> AF_MRC (%s)", fd,
			    domain == AF_INET6 ? "AF_INET6" : "AF_INET", __func__);
			return fd;
		}
		if (!mrc_missing(errno))
			return -1;
	}
	fd = real_socket(domain, type, protocol);
	if (fd >= 0 && !cfg.unavailable)
		fd_track(fd, domain, type, protocol, false);
	return fd;
}

/*
 * A non-blocking connect over MRC: wait up to connect_wait_ms for the
 * handshake, so that a refusal is known now and can fall back to TCP (a
 * program that polls learns it from SO_ERROR, where this library does not
 * look).  Return: 0 connected, or -1 with errno the connect's error, or
 * EINPROGRESS when it takes longer (the program goes on as usual).
 */
static int handshake_wait(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int soerr = 0;

	if (cfg.connect_wait_ms <= 0 || poll(&p, 1, cfg.connect_wait_ms) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len)) {
		errno = EINPROGRESS;
		return -1;
	}
	errno = soerr;
	return soerr ? -1 : 0;
}

EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct fdent *e;
	char buf[64];
	int ret, err;

	lazy_init();
	e = fd_get(fd);
	if (!e || !sa)
		return real_connect(fd, sa, len);
	if (!e->decided && sa->sa_family != AF_UNSPEC) {
		e->decided = true;
		if (dest_matches(sa, len))
			fd_to_mrc(fd, e, 0, sa_str(sa, buf, sizeof(buf)));
	}
	if (!e->mrc)
		return real_connect(fd, sa, len);
	ret = real_connect(fd, sa, len);
	if (ret && errno == EINPROGRESS)
		ret = handshake_wait(fd);
	/*
	 * No MRC peer there (a reset, or ICMP port unreachable) or no way to
	 * it: retry once over TCP, as MPTCP falls back.
	 */
	if (ret && (errno == ECONNREFUSED || errno == EHOSTUNREACH)) {
		dbg("fd %d: %s %s over MRC: %s, retrying over TCP", fd, __func__,
		    sa_str(sa, buf, sizeof(buf)), strerror(errno));
		err = errno;
		if (!fd_swap(fd, e, false, 0))
			ret = real_connect(fd, sa, len);
		else
			errno = err;
	}
	return ret;
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct fdent *e;
	int ret;

	lazy_init();
	ret = real_bind(fd, sa, len);
	if (ret || len > sizeof(struct sockaddr_storage))
		return ret;
	e = fd_get(fd);
	if (e) {
		memcpy(&e->bind_addr, sa, len);
		e->bind_len = len;
	}
	return 0;
}

EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct fdent *e;
	unsigned int port;
	char why[32];

	lazy_init();
	e = fd_get(fd);
	/* a listener has no peer address: only the port filter applies */
	if (e && !e->decided) {
		e->decided = true;
		if (cfg.have_ports && e->bind_len &&
		    !getsockname(fd, (struct sockaddr *)&ss, &sl) &&
		    mrc_filter_port_matches(&cfg.filter, sa_port((struct sockaddr *)&ss))) {
			port = sa_port((struct sockaddr *)&ss);
			snprintf(why, sizeof(why), "%s port %u", __func__, port);
			fd_to_mrc(fd, e, port, why);
		}
	}
	return real_listen(fd, backlog);
}

/* the options set so far are carried over when the socket is swapped */
EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct fdent *e;
	int ret;

	lazy_init();
	e = fd_get(fd);
	ret = real_setsockopt(fd, level, name, val, len);
	if (!ret && e)
		fd_remember_opt(e, level, name, val, len);
	return ret;
}
