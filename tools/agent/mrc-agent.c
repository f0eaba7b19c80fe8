// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc-agent: the control layer's agent on one host.  It keeps the path of
 * every EV of the host's MRC connections traced (ev-trace), attributes
 * each EV's packets, losses and retirements to the hops its last trace
 * crossed, and serves that as Prometheus metrics, so that a controller
 * sees which links the failing EVs share.  Labels are per peer and per
 * hop, never per connection or per port: the series stay bounded by the
 * fabric, not by the traffic.
 *
 * The hops are the addresses routers answer time exceeded from; with the
 * fabric's routers answering from the interface a probe came in on
 * (Linux: net.ipv4.icmp_errors_use_inbound_ifaddr), a hop names the link
 * into it.
 *
 *   mrc-agent [-l ADDR] [-p PORT] [-i SECS] [-t MAX_TTL] [-1]
 *
 * -1 prints the metrics once, after one round of traces, and exits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <microhttpd.h>

#include <linux/mrc.h>
#include <linux/mrc_netlink.h>

#define MAX_HOPS	8
#define ADDR_LEN	INET6_ADDRSTRLEN
#define MAX_EVS		16384	/* EVs of the host attributed, at most */
#define MAX_CONNS	4096	/* connections read a round, at most */
#define MAX_ROWS	4096	/* (peer, hop) series, at most */
#define ROW_EXPIRY	360	/* rounds a series stays after its last EV */

struct ev_path {		/* one EV of one connection, from the last round */
	uint32_t id;
	uint16_t port;
	uint8_t state;		/* enum mrc_ev_state */
	uint8_t nhops;
	uint64_t sent, lost;
	char peer[ADDR_LEN];
	char hop[MAX_HOPS][ADDR_LEN];	/* "" : unnamed */
};

struct row {			/* one (peer, hop) series */
	char peer[ADDR_LEN];
	char hop[ADDR_LEN];
	unsigned int active, retired;
	uint64_t sent, lost;
	uint64_t retirements;	/* a counter: kept across rounds */
	bool seen;		/* on some EV's path this round */
	unsigned int unseen;	/* rounds since it last was */
};

/*
 * The main thread builds a round in @next, without the lock, and swaps it
 * into @evs under it: a scrape (the HTTP thread) never waits on netlink.
 */
static struct ev_path ev_bufs[2][MAX_EVS];
static struct ev_path *evs = ev_bufs[0], *next = ev_bufs[1];
static unsigned int nevs, nnext;
static struct row rows[MAX_ROWS];
static unsigned int nrows;
static unsigned int ntraced, evs_dropped, next_dropped;
static uint64_t retired_total, retired_unattributed, rounds, round_errors;
static uint64_t event_overflows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	/* all the above */

static struct mnl_socket *nl, *ev_nl;
static uint16_t family_id;
static uint32_t events_group;
static unsigned int seq;
static char rbuf[131072], ebuf[131072];
static int max_ttl;
static volatile sig_atomic_t stop;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "mrc-agent: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static struct nlmsghdr *msg_start(char *buf, uint16_t type, uint16_t flags, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MRC_FAMILY_VERSION;
	return nlh;
}

typedef void (*msg_cb)(const struct nlmsghdr *nlh, void *data);

/* Sends @nlh; runs @cb on each reply.  Return: 0 or the kernel's -errno. */
static int talk(struct nlmsghdr *nlh, msg_cb cb, void *data)
{
	unsigned int portid = mnl_socket_get_portid(nl);
	uint32_t want = nlh->nlmsg_seq;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));
		const struct nlmsghdr *m;
		int len = n;

		if (n < 0)
			return -errno;
		for (m = (void *)rbuf; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (!mnl_nlmsg_portid_ok(m, portid) || m->nlmsg_seq != want)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR)
				return ((const struct nlmsgerr *)mnl_nlmsg_get_payload(m))->error;
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb)
				cb(m, data);
		}
	}
}

static int attr_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t t = mnl_attr_get_type(a);

	if (t < 64)
		tb[t] = a;
	return MNL_CB_OK;
}

static void parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	memset(tb, 0, 64 * sizeof(*tb));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_cb, tb);
}

static void parse_nest(const struct nlattr *nest, const struct nlattr **tb)
{
	memset(tb, 0, 64 * sizeof(*tb));
	mnl_attr_parse_nested(nest, attr_cb, tb);
}

static uint64_t get_uint(const struct nlattr *a)
{
	if (!a)
		return 0;
	switch (mnl_attr_get_payload_len(a)) {
	case 1: return mnl_attr_get_u8(a);
	case 2: return mnl_attr_get_u16(a);
	case 4: return mnl_attr_get_u32(a);
	case 8: return mnl_attr_get_u64(a);
	}
	return 0;
}

static void get_addr(const struct nlattr *a, char *buf)
{
	int len = a ? mnl_attr_get_payload_len(a) : 0;

	buf[0] = 0;
	if (len == 4 || len == 16)
		inet_ntop(len == 4 ? AF_INET : AF_INET6, mnl_attr_get_payload(a), buf, ADDR_LEN);
}

static void ctrl_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[64], *grp;

	parse(nlh, tb);
	if (tb[CTRL_ATTR_FAMILY_ID])
		family_id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return;
	mnl_attr_for_each_nested(grp, tb[CTRL_ATTR_MCAST_GROUPS]) {
		const struct nlattr *g[64];

		parse_nest(grp, g);
		if (g[CTRL_ATTR_MCAST_GRP_NAME] && g[CTRL_ATTR_MCAST_GRP_ID] &&
		    !strcmp(mnl_attr_get_str(g[CTRL_ATTR_MCAST_GRP_NAME]),
			    MRC_MCGRP_EVENTS))
			events_group = mnl_attr_get_u32(g[CTRL_ATTR_MCAST_GRP_ID]);
	}
}

static struct mnl_socket *nl_socket(void)
{
	struct mnl_socket *s = mnl_socket_open(NETLINK_GENERIC);

	if (!s || mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0)
		die("cannot open a generic netlink socket: %s", strerror(errno));
	return s;
}

static void nl_open(void)
{
	int rcvbuf = 8 << 20;
	char buf[256];
	struct nlmsghdr *nlh;
	int err;

	nl = nl_socket();
	nlh = msg_start(buf, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY);
	nlh->nlmsg_type = GENL_ID_CTRL;
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, MRC_FAMILY_NAME);
	err = talk(nlh, ctrl_cb, NULL);
	if (err || !family_id || !events_group)
		die("the mrc module is not loaded (family \"%s\": %s)", MRC_FAMILY_NAME,
		    strerror(err ? -err : ENOENT));
	/* the events (EV retirements) carry connection IDs: CAP_NET_ADMIN */
	ev_nl = nl_socket();
	if (mnl_socket_setsockopt(ev_nl, NETLINK_ADD_MEMBERSHIP, &events_group,
				  sizeof(events_group)) < 0)
		die("cannot join the events group: %s", strerror(errno));
	/* a spine's death retires EVs by the thousand at once */
	setsockopt(mnl_socket_get_fd(ev_nl), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
}

/* ---- one round: connections, traces, rows -------------------------------- */

struct conn_list {
	uint32_t id[MAX_CONNS];
	char peer[MAX_CONNS][ADDR_LEN];
	unsigned int n;
};

static void conn_cb(const struct nlmsghdr *nlh, void *data)
{
	struct conn_list *c = data;
	const struct nlattr *tb[64], *a;

	parse(nlh, tb);
	if (get_uint(tb[MRC_A_CONN_STATE]) != MRC_STATE_ESTABLISHED || c->n >= MAX_CONNS)
		return;
	c->id[c->n] = get_uint(tb[MRC_A_CONN_LOCAL_ID]);
	get_addr(tb[MRC_A_CONN_REMOTE_ADDR], c->peer[c->n]);
	/* the EVs' states and counters; their hops come from the trace */
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		const struct nlattr *e[64];
		struct ev_path *p;

		if (mnl_attr_get_type(a) != MRC_A_CONN_EV)
			continue;
		if (nnext >= MAX_EVS) {
			next_dropped++;
			continue;
		}
		parse_nest(a, e);
		p = &next[nnext++];
		memset(p, 0, sizeof(*p));
		p->id = c->id[c->n];
		p->port = get_uint(e[MRC_A_EV_PORT]);
		p->state = get_uint(e[MRC_A_EV_STATE]);
		p->sent = get_uint(e[MRC_A_EV_SENT]);
		p->lost = get_uint(e[MRC_A_EV_LOST]);
		snprintf(p->peer, sizeof(p->peer), "%s", c->peer[c->n]);
	}
	c->n++;
}

static struct ev_path *ev_find(struct ev_path *tab, unsigned int n, uint32_t id, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (tab[i].id == id && tab[i].port == port)
			return &tab[i];
	return NULL;
}

/*
 * The hops of each EV's finished trace.  One running (a new EV, or the
 * minute's re-trace, which starts from nothing) leaves the EV with the
 * hops of its last finished one, from the previous round.
 */
static void trace_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[64], *a, *h;
	uint32_t id;

	parse(nlh, tb);
	id = get_uint(tb[MRC_A_TRACE_LOCAL_ID]);
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		const struct nlattr *t[64];
		struct ev_path *p;

		if (mnl_attr_get_type(a) != MRC_A_TRACE_EV)
			continue;
		parse_nest(a, t);
		p = ev_find(next, nnext, id, get_uint(t[MRC_A_TRACE_EV_PORT]));
		if (!p || get_uint(t[MRC_A_TRACE_EV_STATE]) == MRC_TRACE_STATE_RUNNING)
			continue;
		p->nhops = 0;
		memset(p->hop, 0, sizeof(p->hop));
		mnl_attr_for_each_nested(h, a) {
			const struct nlattr *hop[64];
			unsigned int ttl;

			if (mnl_attr_get_type(h) != MRC_A_TRACE_EV_HOP)
				continue;
			parse_nest(h, hop);
			ttl = get_uint(hop[MRC_A_TRACE_HOP_TTL]);
			if (ttl < 1 || ttl > MAX_HOPS)
				continue;
			get_addr(hop[MRC_A_TRACE_HOP_ADDR], p->hop[ttl - 1]);
			if (ttl > p->nhops)
				p->nhops = ttl;
		}
	}
}

static struct row *row_get(const char *peer, const char *hop)
{
	struct row *r;
	unsigned int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].peer, peer) && !strcmp(rows[i].hop, hop))
			return &rows[i];
	if (nrows >= MAX_ROWS)
		return NULL;
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	snprintf(r->hop, sizeof(r->hop), "%s", hop);
	return r;
}

static void events_drain(void);

/*
 * Reads the connections and their traces (starting the trace of those
 * never traced), then sums them per hop.
 * Return: 0, or the kernel's -errno for the connection dump.
 */
static int round_once(void)
{
	static struct conn_list conns;
	unsigned int i, j, traced = 0;
	struct ev_path *swap;
	char buf[512];
	int err;

	nnext = 0;
	next_dropped = 0;
	conns.n = 0;
	err = talk(msg_start(buf, family_id, NLM_F_DUMP, MRC_CMD_CONN_GET), conn_cb, &conns);
	for (i = 0; !err && i < conns.n; i++) {
		struct nlmsghdr *nlh;

		/* last round's hops, until a finished trace replaces them */
		for (j = 0; j < nnext; j++) {
			struct ev_path *p = &next[j], *old;

			if (p->id != conns.id[i])
				continue;
			old = ev_find(evs, nevs, p->id, p->port);
			if (old) {
				p->nhops = old->nhops;
				memcpy(p->hop, old->hop, sizeof(p->hop));
			}
		}
		nlh = msg_start(buf, family_id, NLM_F_ACK, MRC_CMD_EV_TRACE_GET);
		mnl_attr_put_u32(nlh, MRC_A_TRACE_LOCAL_ID, conns.id[i]);
		if (!talk(nlh, trace_cb, NULL)) {
			traced++;
		} else {
			/* never traced (an ev-trace would restart a running one) */
			nlh = msg_start(buf, family_id, NLM_F_ACK, MRC_CMD_EV_TRACE);
			mnl_attr_put_u32(nlh, MRC_A_TRACE_LOCAL_ID, conns.id[i]);
			if (max_ttl)
				mnl_attr_put_u8(nlh, MRC_A_TRACE_MAX_TTL, max_ttl);
			/* a connection that closed meanwhile: ENOENT, ENOTCONN */
			traced += !talk(nlh, NULL, NULL);
		}
		events_drain();
	}
	pthread_mutex_lock(&lock);
	rounds++;
	if (err) {
		/* the last round's state stands */
		round_errors++;
		pthread_mutex_unlock(&lock);
		return err;
	}
	swap = evs;
	evs = next;
	next = swap;
	nevs = nnext;
	ntraced = traced;
	evs_dropped = next_dropped;
	for (i = 0; i < nrows; i++) {
		rows[i].active = rows[i].retired = 0;
		rows[i].sent = rows[i].lost = 0;
		rows[i].seen = false;
	}
	for (i = 0; i < nevs; i++) {
		for (j = 0; j < evs[i].nhops; j++) {
			struct row *r;

			if (!evs[i].hop[j][0] || !(r = row_get(evs[i].peer, evs[i].hop[j])))
				continue;
			r->seen = true;
			r->active += evs[i].state == MRC_EV_ACTIVE;
			r->retired += evs[i].state == MRC_EV_RETIRED;
			r->sent += evs[i].sent;
			r->lost += evs[i].lost;
		}
	}
	/* a series no EV has crossed for ROW_EXPIRY rounds goes */
	for (i = 0, j = 0; i < nrows; i++) {
		rows[i].unseen = rows[i].seen ? 0 : rows[i].unseen + 1;
		if (rows[i].unseen <= ROW_EXPIRY)
			rows[j++] = rows[i];
	}
	nrows = j;
	pthread_mutex_unlock(&lock);
	return 0;
}

/* An EV was retired: a retirement for each hop of its last trace. */
static void event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[64], *e[64];
	char peer[ADDR_LEN];
	struct ev_path *p;
	unsigned int j;

	if (nlh->nlmsg_type != family_id || g->cmd != MRC_CMD_EV_RETIRED_NTF)
		return;
	parse(nlh, tb);
	if (!tb[MRC_A_CONN_EV])
		return;
	parse_nest(tb[MRC_A_CONN_EV], e);
	get_addr(tb[MRC_A_CONN_REMOTE_ADDR], peer);
	pthread_mutex_lock(&lock);
	retired_total++;
	p = ev_find(evs, nevs, get_uint(tb[MRC_A_CONN_LOCAL_ID]), get_uint(e[MRC_A_EV_PORT]));
	if (!p || !p->nhops)
		retired_unattributed++;
	for (j = 0; p && j < p->nhops; j++) {
		struct row *r = p->hop[j][0] ? row_get(p->peer, p->hop[j]) : NULL;

		if (r)
			r->retirements++;
	}
	pthread_mutex_unlock(&lock);
}

static void events_drain(void)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(ev_nl), ebuf, sizeof(ebuf), MSG_DONTWAIT);
		const struct nlmsghdr *m;
		int len = n;

		if (n < 0 && errno == ENOBUFS) {
			/* the kernel dropped events: their retirements are not counted */
			pthread_mutex_lock(&lock);
			event_overflows++;
			pthread_mutex_unlock(&lock);
			continue;
		}
		if (n <= 0)
			return;
		for (m = (void *)ebuf; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len))
			event_cb(m, NULL);
	}
}

/* ---- exposition ---------------------------------------------------------- */

struct text {
	char *buf;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < t->cap - t->len)
			break;
		t->cap = t->cap * 2 + n + 1;
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			die("out of memory");
	}
	t->len += n;
}

#define HOP_FAMILY(name, type, help) \
	put(t, "# HELP mrc_agent_hop_" name " " help "\n# TYPE mrc_agent_hop_" name " " type "\n")

/* The metrics, as text (the caller frees it). */
static char *metrics(size_t *len)
{
	struct text tt = {}, *t = &tt;
	unsigned int i;

	put(t, "");
	pthread_mutex_lock(&lock);
	HOP_FAMILY("evs", "gauge",
		   "EVs of open connections whose last path trace crosses the link into this hop, by EV state");
	for (i = 0; i < nrows; i++) {
		if (!rows[i].seen)
			continue;
		put(t, "mrc_agent_hop_evs{peer=\"%s\",hop=\"%s\",state=\"active\"} %u\n",
		    rows[i].peer, rows[i].hop, rows[i].active);
		put(t, "mrc_agent_hop_evs{peer=\"%s\",hop=\"%s\",state=\"retired\"} %u\n",
		    rows[i].peer, rows[i].hop, rows[i].retired);
	}
	HOP_FAMILY("sent_packets", "gauge",
		   "Packets the open connections sent on EVs whose last trace crosses this hop");
	for (i = 0; i < nrows; i++)
		if (rows[i].seen)
			put(t, "mrc_agent_hop_sent_packets{peer=\"%s\",hop=\"%s\"} %" PRIu64 "\n",
			    rows[i].peer, rows[i].hop, rows[i].sent);
	HOP_FAMILY("lost_packets", "gauge",
		   "Packets inferred lost on EVs of open connections whose last trace crosses this hop");
	for (i = 0; i < nrows; i++)
		if (rows[i].seen)
			put(t, "mrc_agent_hop_lost_packets{peer=\"%s\",hop=\"%s\"} %" PRIu64 "\n",
			    rows[i].peer, rows[i].hop, rows[i].lost);
	HOP_FAMILY("ev_retirements_total", "counter",
		   "EVs retired whose last trace crossed this hop");
	for (i = 0; i < nrows; i++)
		put(t, "mrc_agent_hop_ev_retirements_total{peer=\"%s\",hop=\"%s\"} %" PRIu64 "\n",
		    rows[i].peer, rows[i].hop, rows[i].retirements);
	put(t, "# HELP mrc_agent_ev_retirements_total EVs retired, all (unattributed: no trace yet)\n"
	    "# TYPE mrc_agent_ev_retirements_total counter\n"
	    "mrc_agent_ev_retirements_total{attributed=\"yes\"} %" PRIu64 "\n"
	    "mrc_agent_ev_retirements_total{attributed=\"no\"} %" PRIu64 "\n",
	    retired_total - retired_unattributed, retired_unattributed);
	put(t, "# HELP mrc_agent_traced_connections Open connections whose EVs are traced\n"
	    "# TYPE mrc_agent_traced_connections gauge\nmrc_agent_traced_connections %u\n",
	    ntraced);
	put(t, "# HELP mrc_agent_event_overflows_total Times the kernel dropped events for the agent (retirements lost)\n"
	    "# TYPE mrc_agent_event_overflows_total counter\nmrc_agent_event_overflows_total %" PRIu64
	    "\n", event_overflows);
	put(t, "# HELP mrc_agent_evs_dropped EVs of the last round past the agent's table, not attributed\n"
	    "# TYPE mrc_agent_evs_dropped gauge\nmrc_agent_evs_dropped %u\n", evs_dropped);
	put(t, "# HELP mrc_agent_rounds_total Rounds of reading the connections and their traces\n"
	    "# TYPE mrc_agent_rounds_total counter\nmrc_agent_rounds_total %" PRIu64 "\n",
	    rounds);
	put(t, "# HELP mrc_agent_round_errors_total Rounds the kernel refused (module gone?)\n"
	    "# TYPE mrc_agent_round_errors_total counter\nmrc_agent_round_errors_total %" PRIu64
	    "\n", round_errors);
	pthread_mutex_unlock(&lock);
	*len = t->len;
	return t->buf;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *data,
			     size_t *data_len, void **state)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *body;
	size_t len;

	if (strcmp(method, "GET"))
		return MHD_NO;
	if (strcmp(url, "/metrics")) {
		static char nf[] = "mrc-agent: /metrics\n";

		r = MHD_create_response_from_buffer(sizeof(nf) - 1, nf, MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(c, MHD_HTTP_NOT_FOUND, r);
		MHD_destroy_response(r);
		return ret;
	}
	body = metrics(&len);
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *listen_addr = "127.0.0.1";
	struct sockaddr_storage ss = {};
	int port = 9464, interval = 10, opt;
	struct MHD_Daemon *d = NULL;
	bool once = false;

	while ((opt = getopt(argc, argv, "l:p:i:t:1h")) != -1) {
		switch (opt) {
		case 'l': listen_addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'i': interval = atoi(optarg); break;
		case 't': max_ttl = atoi(optarg); break;
		case '1': once = true; break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: mrc-agent [-l ADDR] [-p PORT] [-i SECS] [-t MAX_TTL] [-1]\n");
			return opt == 'h' ? 0 : 1;
		}
	}
	if (port < 1 || port > 65535 || interval < 1 || max_ttl < 0 || max_ttl > 8)
		die("bad value: -p 1..65535, -i >= 1, -t 1..8");
	nl_open();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (once) {
		char *text;
		size_t len;
		int err;

		err = round_once();
		/* the traces take a few RTTs a hop: a second round reads them */
		sleep(interval);
		events_drain();
		err = err ?: round_once();
		text = metrics(&len);
		fwrite(text, 1, len, stdout);
		free(text);
		if (err)
			fprintf(stderr, "mrc-agent: reading the connections: %s\n", strerror(-err));
		return err ? 1 : 0;
	}
	if (inet_pton(AF_INET, listen_addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, listen_addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	} else {
		die("-l takes an IPv4 or IPv6 address (got \"%s\")", listen_addr);
	}
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
			     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), port, NULL, NULL,
			     serve, NULL, MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_END);
	if (!d)
		die("cannot serve on %s port %d", listen_addr, port);
	printf("mrc-agent: serving http://%s%s%s:%d/metrics\n", ss.ss_family == AF_INET6 ? "[" : "",
	       listen_addr, ss.ss_family == AF_INET6 ? "]" : "", port);
	fflush(stdout);
	while (!stop) {
		struct pollfd p = { .fd = mnl_socket_get_fd(ev_nl), .events = POLLIN };
		double due;

		round_once();
		/* the monotonic clock: a wall clock set back would stall rounds */
		for (due = now_s() + interval; !stop && now_s() < due;)
			if (poll(&p, 1, 1000) > 0)
				events_drain();
	}
	MHD_stop_daemon(d);
	return 0;
}
