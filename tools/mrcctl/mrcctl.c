// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrcctl - configure and watch AF_MRC (multipath reliable connections)
 * through its generic netlink family "mrc" (linux/mrc_netlink.h, generated
 * from Documentation/netlink/specs/mrc.yaml).
 *
 *   mrcctl [-j] [-p] [-n NETNS] OBJECT COMMAND [ARGS]
 *
 * See mrcctl.8.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libgen.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/mrc.h>
#include <linux/mrc_netlink.h>

#include "../preload/mrc_filter.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define RCVBUF_SIZE	131072		/* the kernel's largest reply: ev-trace-get's */
#define EXIT_USAGE	1
#define EXIT_KERNEL	2

static const char *prog = "mrcctl";
static bool json, pretty, prom;
static const char *netns;

/* ---- output helpers ----------------------------------------------------- */

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

#define usage_error(...) die(EXIT_USAGE, __VA_ARGS__)

/*
 * A small JSON writer: containers on a stack, commas handled here.  With
 * -p it indents like iproute2's pretty mode.
 */
static int jdepth;
static bool jfirst[64] = { true };

static void jindent(void)
{
	int i;

	if (!pretty)
		return;
	putchar('\n');
	for (i = 0; i < jdepth; i++)
		fputs("    ", stdout);
}

static void jsep(void)
{
	if (!jdepth)		/* top level: one value per line */
		return;
	if (!jfirst[jdepth])
		putchar(',');
	jfirst[jdepth] = false;
	jindent();
}

static void jstr_raw(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void jkey(const char *key)
{
	jsep();
	if (key) {
		jstr_raw(key);
		putchar(':');
		if (pretty)
			putchar(' ');
	}
}

static void jopen(const char *key, char c)
{
	jkey(key);
	putchar(c);
	jfirst[++jdepth] = true;
}

static void jclose(char c)
{
	bool empty = jfirst[jdepth];

	jdepth--;
	if (!empty)
		jindent();
	putchar(c);
	if (!jdepth)
		putchar('\n');
}

static void jobj(const char *key) { jopen(key, '{'); }
static void jobj_end(void) { jclose('}'); }
static void jarr(const char *key) { jopen(key, '['); }
static void jarr_end(void) { jclose(']'); }

static void ju64(const char *key, uint64_t v)
{
	jkey(key);
	printf("%" PRIu64, v);
}

static void jdbl(const char *key, double v)
{
	jkey(key);
	printf("%.3f", v);
}

static void jstr(const char *key, const char *v)
{
	jkey(key);
	jstr_raw(v);
}

static void jbool(const char *key, bool v)
{
	jkey(key);
	fputs(v ? "true" : "false", stdout);
}

/* "ev-port-min" -> "ev_port_min" for JSON keys */
static const char *jname(const char *name)
{
	static char buf[64];
	size_t i;

	for (i = 0; name[i] && i < sizeof(buf) - 1; i++)
		buf[i] = name[i] == '-' ? '_' : name[i];
	buf[i] = 0;
	return buf;
}

/* ---- netlink plumbing --------------------------------------------------- */

static struct mnl_socket *nl;
static uint16_t family_id;
static uint32_t events_group;
static unsigned int seq;
static char rbuf[RCVBUF_SIZE];

/* What was sent last, to name the attribute an error points at. */
static char sbuf[16384];
static const char *const *sent_names;
static unsigned int sent_names_n;

static void enter_netns(const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(EXIT_USAGE, "cannot open network namespace \"%s\": %s", name, strerror(errno));
	if (setns(fd, CLONE_NEWNET) < 0)
		die(EXIT_USAGE, "setting the network namespace \"%s\" failed: %s", name,
		    strerror(errno));
	close(fd);
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
	g->version = type == GENL_ID_CTRL ? 1 : MRC_FAMILY_VERSION;
	return nlh;
}

static const char *attr_name(uint16_t type)
{
	if (sent_names && type < sent_names_n && sent_names[type])
		return sent_names[type];
	return NULL;
}

/* What an EPERM from the mrc family means, for the user */
static const char need_admin[] =
	"this needs CAP_NET_ADMIN over the network namespace (connection IDs, "
	"which conn show and monitor reveal, authenticate a connection's packets)";

/*
 * Prints the kernel's refusal, with the extended ACK's message, the name of
 * the attribute it points at and the policy's valid range, and exits.
 */
static void report_error(int error, const void *tlvs, size_t tlv_len)
{
	const char *msg = NULL, *bad = NULL;
	uint64_t lo = 0, hi = 0;
	bool have_range = false, is_signed = false;
	int64_t slo = 0, shi = 0;
	const struct nlattr *attr;

	if (tlvs) {
		mnl_attr_for_each_payload(tlvs, tlv_len) {
			switch (mnl_attr_get_type(attr)) {
			case NLMSGERR_ATTR_MSG:
				msg = mnl_attr_get_str(attr);
				break;
			case NLMSGERR_ATTR_OFFS: {
				uint32_t o = mnl_attr_get_u32(attr);
				const struct nlattr *sa = (const void *)(sbuf + o);

				if (o + sizeof(*sa) <= sizeof(sbuf))
					bad = attr_name(mnl_attr_get_type(sa));
				break;
			}
			case NLMSGERR_ATTR_MISS_TYPE:
				bad = attr_name(mnl_attr_get_u32(attr));
				if (!msg)
					msg = "missing attribute";
				break;
			case NLMSGERR_ATTR_POLICY: {
				const struct nlattr *p;

				mnl_attr_for_each_nested(p, attr) {
					switch (mnl_attr_get_type(p)) {
					case NL_POLICY_TYPE_ATTR_MIN_VALUE_U:
						lo = mnl_attr_get_u64(p);
						have_range = true;
						break;
					case NL_POLICY_TYPE_ATTR_MAX_VALUE_U:
						hi = mnl_attr_get_u64(p);
						have_range = true;
						break;
					case NL_POLICY_TYPE_ATTR_MIN_VALUE_S:
						slo = (int64_t)mnl_attr_get_u64(p);
						is_signed = have_range = true;
						break;
					case NL_POLICY_TYPE_ATTR_MAX_VALUE_S:
						shi = (int64_t)mnl_attr_get_u64(p);
						is_signed = have_range = true;
						break;
					}
				}
				break;
			}
			}
		}
	}
	fflush(stdout);
	fprintf(stderr, "%s: Error: ", prog);
	if (bad)
		fprintf(stderr, "%s: ", bad);
	fprintf(stderr, "%s", msg ? msg : strerror(-error));
	if (have_range && !is_signed)
		fprintf(stderr, " (valid range %" PRIu64 "..%" PRIu64 ")", lo, hi);
	else if (have_range)
		fprintf(stderr, " (valid range %" PRId64 "..%" PRId64 ")", slo, shi);
	if (msg)
		fprintf(stderr, " (%s)", strerror(-error));
	if (error == -EPERM)
		fprintf(stderr, "; %s", need_admin);
	fputc('\n', stderr);
	exit(EXIT_KERNEL);
}

typedef int (*msg_cb)(const struct nlmsghdr *nlh, void *data);

/* Sends @nlh and runs @cb on every reply until the ACK or the dump's end. */
static void talk(struct nlmsghdr *nlh, msg_cb cb, void *data)
{
	unsigned int portid = mnl_socket_get_portid(nl);
	bool dump = nlh->nlmsg_flags & NLM_F_DUMP;
	uint32_t want = nlh->nlmsg_seq;
	ssize_t n;

	if (nlh->nlmsg_len <= sizeof(sbuf) && (char *)nlh != sbuf)
		memcpy(sbuf, nlh, nlh->nlmsg_len);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		die(EXIT_KERNEL, "netlink send: %s", strerror(errno));
	for (;;) {
		const struct nlmsghdr *m;
		int len;

		n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));
		if (n < 0)
			die(EXIT_KERNEL, "netlink receive: %s", strerror(errno));
		len = n;
		for (m = (void *)rbuf; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (!mnl_nlmsg_portid_ok(m, portid) || m->nlmsg_seq != want)
				continue;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);
				size_t off = sizeof(*e);

				if (!(m->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
				if (e->error)
					report_error(e->error, m->nlmsg_flags & NLM_F_ACK_TLVS ?
						     (const char *)e + off : NULL,
						     mnl_nlmsg_get_payload_len(m) - off);
				if (!dump)
					return;
				continue;
			}
			if (m->nlmsg_type == NLMSG_DONE) {
				const int *e = mnl_nlmsg_get_payload(m);

				if (m->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) && *e < 0)
					report_error(*e, m->nlmsg_flags & NLM_F_ACK_TLVS ?
						     e + 1 : NULL,
						     mnl_nlmsg_get_payload_len(m) - sizeof(int));
				return;
			}
			if (cb && cb(m, data) < 0)
				return;
		}
	}
}

static int ctrl_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a, *g, *ga;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			family_id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(g, a) {
				const char *name = NULL;
				uint32_t id = 0;

				mnl_attr_for_each_nested(ga, g) {
					if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_NAME)
						name = mnl_attr_get_str(ga);
					else if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_ID)
						id = mnl_attr_get_u32(ga);
				}
				if (name && !strcmp(name, MRC_MCGRP_EVENTS))
					events_group = id;
			}
			break;
		}
	}
	return 0;
}

/*
 * Opens the netlink socket and resolves the family, once: after the command
 * line is parsed, so that a typo is a usage error, not "module not loaded".
 */
static void nl_open(void)
{
	char buf[256];
	struct nlmsghdr *nlh;
	int one = 1;

	if (nl)
		return;
	if (netns)
		enter_netns(netns);
	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl)
		die(EXIT_KERNEL, "cannot open a generic netlink socket: %s", strerror(errno));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die(EXIT_KERNEL, "netlink bind: %s", strerror(errno));
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_GET_STRICT_CHK, &one, sizeof(one));

	nlh = msg_start(buf, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, MRC_FAMILY_NAME);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		die(EXIT_KERNEL, "netlink send: %s", strerror(errno));
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));
		const struct nlmsghdr *m;
		int len = n;

		if (n < 0)
			die(EXIT_KERNEL, "netlink receive: %s", strerror(errno));
		for (m = (void *)rbuf; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);

				if (e->error == -ENOENT)
					die(EXIT_KERNEL, "the mrc module is not loaded "
					    "(no generic netlink family \"%s\")", MRC_FAMILY_NAME);
				if (e->error)
					die(EXIT_KERNEL, "resolving family \"%s\": %s",
					    MRC_FAMILY_NAME, strerror(-e->error));
				if (!family_id)
					die(EXIT_KERNEL, "no family id for \"%s\"",
					    MRC_FAMILY_NAME);
				return;
			}
			ctrl_cb(m, NULL);
		}
	}
}

static struct nlmsghdr *req(uint8_t cmd, uint16_t flags, const char *const *names,
			    unsigned int n_names)
{
	nl_open();
	sent_names = names;
	sent_names_n = n_names;
	return msg_start(sbuf, family_id, flags, cmd);
}

/* Attribute table of one message or nest: tb[type] = attribute. */
#define TB_MAX 64

static void parse_attrs(const struct nlattr *start, size_t len, const struct nlattr **tb)
{
	const struct nlattr *attr;

	memset(tb, 0, TB_MAX * sizeof(*tb));
	mnl_attr_for_each_payload(start, len) {
		uint16_t t = mnl_attr_get_type(attr);

		if (t < TB_MAX)
			tb[t] = attr;
	}
}

static void parse_msg(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	const char *p = mnl_nlmsg_get_payload_offset(nlh, sizeof(struct genlmsghdr));

	parse_attrs((const void *)p, (const char *)nlh + nlh->nlmsg_len - p, tb);
}

static void parse_nest(const struct nlattr *nest, const struct nlattr **tb)
{
	parse_attrs(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), tb);
}

static uint64_t get_uint(const struct nlattr *a)
{
	if (!a)
		return 0;
	switch (mnl_attr_get_payload_len(a)) {
	case 1:
		return mnl_attr_get_u8(a);
	case 2:
		return mnl_attr_get_u16(a);
	case 4:
		return mnl_attr_get_u32(a);
	case 8:
		return mnl_attr_get_u64(a);
	}
	return 0;
}

static const char *get_addr(const struct nlattr *a, char *buf, size_t len)
{
	if (!a)
		return "*";
	if (mnl_attr_get_payload_len(a) == 4)
		return inet_ntop(AF_INET, mnl_attr_get_payload(a), buf, len);
	if (mnl_attr_get_payload_len(a) == 16)
		return inet_ntop(AF_INET6, mnl_attr_get_payload(a), buf, len);
	return "?";
}

/* A device name attribute, or "-" when the kernel sent none (no device) */
static const char *get_ifname(const struct nlattr *a)
{
	return a ? mnl_attr_get_str(a) : "-";
}

/* addr:port, with [] around IPv6 */
static const char *fmt_endpoint(const struct nlattr *a, uint16_t port, char *buf, size_t len)
{
	char ab[INET6_ADDRSTRLEN];

	get_addr(a, ab, sizeof(ab));
	if (a && mnl_attr_get_payload_len(a) == 16)
		snprintf(buf, len, "[%s]:%u", ab, port);
	else
		snprintf(buf, len, "%s:%u", ab, port);
	return buf;
}

/* ---- argument helpers --------------------------------------------------- */

static bool matches(const char *word, const char *full)
{
	size_t n = strlen(word);

	return n && n <= strlen(full) && !strncmp(word, full, n);
}

/*
 * Which of @names (@n, NULL entries skipped) @word is: the one it spells
 * out, else the only one it abbreviates; -1 if none.  A word that
 * abbreviates several is a usage error that lists them ("con": config,
 * conn).  Names with the same @alias_of entry (-1: none) are one command.
 */
static int lookup(const char *what, const char *word, const char *const *names,
		  const int *alias_of, unsigned int n)
{
	char list[256] = "";
	int found = -1, canon;
	bool ambiguous = false;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(word, names[i]))
			return i;
	for (i = 0; i < n; i++) {
		if (!names[i] || !matches(word, names[i]))
			continue;
		canon = alias_of && alias_of[i] >= 0 ? alias_of[i] : (int)i;
		if (found >= 0 && found != canon)
			ambiguous = true;
		if (found < 0)
			found = canon;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 *list ? ", " : "", names[i]);
	}
	if (ambiguous)
		usage_error("%s \"%s\" is ambiguous: %s", what, word, list);
	return found;
}

static uint64_t parse_u64(const char *what, const char *s, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		usage_error("invalid value \"%s\" for %s: not a number", s, what);
	v = strtoull(s, &end, 0);
	if (errno || *end)
		usage_error("invalid value \"%s\" for %s: not a number", s, what);
	if (v > max)
		usage_error("invalid value \"%s\" for %s: at most %" PRIu64, s, what, max);
	return v;
}

/*
 * Connection IDs as conn show and monitor print them and as "conn show id"
 * reads them: hex, always, 0x optional, so that a copied ID round-trips
 * (00001234 is 0x1234, neither octal nor decimal).
 */
#define CONN_ID_FMT "%08" PRIx64

static uint32_t parse_conn_id(const char *s)
{
	const char *h = s + (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0);
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*h || h[strspn(h, "0123456789abcdefABCDEF")])
		usage_error("invalid connection id \"%s\": hex digits, as conn show prints it", s);
	v = strtoull(h, &end, 16);
	if (errno || *end || v > UINT32_MAX)
		usage_error("invalid connection id \"%s\": at most ffffffff", s);
	return v;
}

static int parse_addr(const char *s, void *out)
{
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return 16;
	usage_error("invalid address \"%s\"", s);
	return 0;
}

static const char *const state_names[] = {
	[MRC_STATE_CLOSED] = "closed", [MRC_STATE_LISTEN] = "listen",
	[MRC_STATE_SYN_SENT] = "syn-sent", [MRC_STATE_ESTABLISHED] = "established",
	[MRC_STATE_FIN_WAIT] = "fin-wait", [MRC_STATE_CLOSE_WAIT] = "close-wait",
	[MRC_STATE_CLOSING] = "closing", [MRC_STATE_DONE] = "done",
};

static const char *const ev_state_names[] = {
	[MRC_EV_ACTIVE] = "active", [MRC_EV_RETIRED] = "retired", [MRC_EV_FREE] = "free",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NAME_OF(tbl, v) ((v) < ARRAY_SIZE(tbl) && tbl[v] ? tbl[v] : "unknown")

/* ---- prometheus -------------------------------------------------------- */

/*
 * The Prometheus text exposition format 0.0.4 (-o prometheus), for the node
 * exporter's textfile collector.  The samples of one family must be
 * contiguous, so a dump is collected into rows first and printed one family
 * at a time.
 *
 * A row is a connection (conn show) or a peer's source port (paths): labels
 * of ephemeral ports and EVs make series without bound, so by default the
 * rows of one peer are aggregated into one sample, under the family's name
 * with the first word in the plural (conn_cwnd_packets: conns_cwnd_packets);
 * --per-conn and --per-ev print a sample per row instead.
 */
enum prom_type { P_NONE, P_GAUGE, P_COUNTER };

static const char *const prom_type_names[] = {
	[P_GAUGE] = "gauge", [P_COUNTER] = "counter",
};

/* How a peer's rows make its one sample; A_NONE: only per row */
enum prom_agg { A_NONE, A_SUM, A_MEAN, A_MIN, A_MAX };

static const char *const prom_agg_names[] = {
	[A_SUM] = "sum", [A_MEAN] = "mean", [A_MIN] = "smallest", [A_MAX] = "largest",
};

/* A numeric attribute: its JSON key and its metric (P_NONE: not exported) */
struct field {
	uint16_t attr;
	const char *key;
	enum prom_type type;
	const char *metric;	/* after "mrc_" */
	const char *help;
	enum prom_agg agg;	/* A_MEAN, A_MIN: of the rows with a sample (not 0) */
};

struct prom_row {
	char labels[320];	/* name="value",... escaped */
	char group[320];	/* the labels of its peer's aggregate */
	uint64_t v[TB_MAX];	/* by attribute type */
};

static struct prom_row *prom_rows;
static size_t prom_n, prom_cap;
static bool prom_per_row;	/* --per-conn, --per-ev */

/* HELP text escapes backslash and newline; label values also the quote. */
static size_t prom_escape(char *buf, size_t len, const char *s, bool label)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '\\' || (*s == '"' && label))
			buf[n++] = '\\';
		if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *s;
		}
	}
	buf[n] = 0;
	return n;
}

/* Appends name="value" to the label list in @buf. */
static void prom_label(char *buf, size_t len, const char *name, const char *value)
{
	size_t n = strlen(buf);
	int w;

	w = snprintf(buf + n, len - n, "%s%s=\"", n ? "," : "", name);
	if (w < 0 || (size_t)w >= len - n - 1)
		return;
	n += w;
	n += prom_escape(buf + n, len - n - 1, value, true);
	buf[n++] = '"';
	buf[n] = 0;
}

/* The labels every sample carries: the namespace mrcctl was pointed at */
static void prom_base_labels(char *buf, size_t len)
{
	buf[0] = 0;
	if (netns)
		prom_label(buf, len, "netns", netns);
}

static void prom_family(const char *metric, enum prom_type type, const char *help)
{
	char h[512];

	prom_escape(h, sizeof(h), help, false);
	printf("# HELP mrc_%s %s\n# TYPE mrc_%s %s\n", metric, h, metric,
	       prom_type_names[type]);
}

/* Microsecond attributes ("srtt-us", "srtt_us") are exported in seconds. */
static bool is_usec(const char *key)
{
	size_t n = strlen(key);

	return n > 3 && !strcmp(key + n - 2, "us") && (key[n - 3] == '-' || key[n - 3] == '_');
}

static void prom_sample(const char *metric, const char *labels, uint64_t v, bool usec)
{
	printf("mrc_%s", metric);
	if (*labels)
		printf("{%s}", labels);
	if (usec)
		printf(" %" PRIu64 ".%06" PRIu64 "\n", v / 1000000, v % 1000000);
	else
		printf(" %" PRIu64 "\n", v);
}

/* Keeps the numbers of one reply; the caller fills in its labels. */
static struct prom_row *prom_row_add(const struct nlattr *const *tb)
{
	struct prom_row *r;
	unsigned int i;

	if (prom_n == prom_cap) {
		prom_cap = prom_cap ? 2 * prom_cap : 64;
		prom_rows = realloc(prom_rows, prom_cap * sizeof(*prom_rows));
		if (!prom_rows)
			die(EXIT_KERNEL, "out of memory");
	}
	r = &prom_rows[prom_n++];
	prom_base_labels(r->labels, sizeof(r->labels));
	for (i = 0; i < TB_MAX; i++)
		r->v[i] = get_uint(tb[i]);
	return r;
}

/*
 * A state as a state set: one sample per possible state, 1 for the current
 * one, so that a change of state keeps the series of the other metrics.
 */
static void prom_print_state(const char *metric, const char *help, uint16_t attr,
			     const char *const *names, unsigned int n_names)
{
	char labels[sizeof(prom_rows->labels) + 64];
	unsigned int s;
	size_t i;

	prom_family(metric, P_GAUGE, help);
	for (i = 0; i < prom_n; i++) {
		for (s = 0; s < n_names; s++) {
			if (!names[s])
				continue;
			snprintf(labels, sizeof(labels), "%s", prom_rows[i].labels);
			prom_label(labels, sizeof(labels), "state", names[s]);
			prom_sample(metric, labels, prom_rows[i].v[attr] == s, false);
		}
	}
}

static void prom_print_fields(const struct field *f, unsigned int n)
{
	unsigned int k;
	size_t i;

	for (k = 0; k < n; k++, f++) {
		if (f->type == P_NONE)
			continue;
		prom_family(f->metric, f->type, f->help);
		for (i = 0; i < prom_n; i++)
			prom_sample(f->metric, prom_rows[i].labels, prom_rows[i].v[f->attr],
				    is_usec(f->key));
	}
}

static int prom_row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct prom_row *)a)->group, ((const struct prom_row *)b)->group);
}

/* rows [i, end) are one peer's: the end of the group starting at @i */
static size_t prom_group_end(size_t i)
{
	size_t end = i + 1;

	while (end < prom_n && !strcmp(prom_rows[end].group, prom_rows[i].group))
		end++;
	return end;
}

/*
 * "conn_cwnd_packets" -> "conns_cwnd_packets", "path" -> "paths"; a
 * counter's "_total" goes: summed over the open rows it is a gauge
 * (a closed connection leaves the sum, which a counter must never do).
 */
static const char *prom_agg_metric(const char *metric)
{
	static char buf[96];
	size_t w = strcspn(metric, "_"), len = strlen(metric);

	if (len > w + 6 && !strcmp(metric + len - 6, "_total"))
		len -= 6;
	snprintf(buf, sizeof(buf), "%.*ss%.*s", (int)w, metric, (int)(len - w), metric + w);
	return buf;
}

static uint64_t prom_agg_value(enum prom_agg agg, uint16_t attr, size_t i, size_t end)
{
	uint64_t r = 0, v;
	size_t n = 0;

	for (; i < end; i++) {
		v = prom_rows[i].v[attr];
		if ((agg == A_MEAN || agg == A_MIN) && !v)
			continue;	/* no sample */
		if (agg == A_MIN)
			r = n ? (v < r ? v : r) : v;
		else if (agg == A_MAX)
			r = v > r ? v : r;
		else
			r += v;
		n++;
	}
	return agg == A_MEAN && n ? (r + n / 2) / n : r;
}

/*
 * The rows aggregated per peer (prom_row.group), @rows naming them in the
 * HELP text: a state as the number of rows in each state, then each field.
 */
static void prom_print_groups(const char *state_metric, const char *state_help, uint16_t attr,
			      const char *const *names, unsigned int n_names,
			      const struct field *f, unsigned int n, const char *rows)
{
	char labels[sizeof(prom_rows->group) + 64], help[512];
	const char *metric;
	unsigned int k, s;
	size_t i, end;

	qsort(prom_rows, prom_n, sizeof(*prom_rows), prom_row_cmp);
	prom_family(state_metric, P_GAUGE, state_help);
	for (i = 0; i < prom_n; i = end) {
		end = prom_group_end(i);
		for (s = 0; s < n_names; s++) {
			size_t j, c = 0;

			if (!names[s])
				continue;
			for (j = i; j < end; j++)
				c += prom_rows[j].v[attr] == s;
			snprintf(labels, sizeof(labels), "%s", prom_rows[i].group);
			prom_label(labels, sizeof(labels), "state", names[s]);
			prom_sample(state_metric, labels, c, false);
		}
	}
	for (k = 0; k < n; k++, f++) {
		if (f->type == P_NONE || f->agg == A_NONE)
			continue;
		metric = prom_agg_metric(f->metric);
		snprintf(help, sizeof(help), "%s (%s over the peer's %s%s%s)", f->help,
			 prom_agg_names[f->agg], rows,
			 f->agg == A_MEAN || f->agg == A_MIN ? " with a sample" : "",
			 f->type == P_COUNTER ? "; falls when one closes" : "");
		prom_family(metric, P_GAUGE, help);
		for (i = 0; i < prom_n; i = end) {
			end = prom_group_end(i);
			prom_sample(metric, prom_rows[i].group,
				    prom_agg_value(f->agg, f->attr, i, end), is_usec(f->key));
		}
	}
}

/* ---- info --------------------------------------------------------------- */

static const char *const feature_names[] = {
	"ipv6", "seqpacket", "multipath", "ecn", "ev-policy", "events",
};

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX];
	uint32_t feat;
	unsigned int i;
	bool first = true;

	parse_msg(nlh, tb);
	feat = get_uint(tb[MRC_A_INFO_FEATURES]);
	if (json) {
		jobj(NULL);
		ju64("version", get_uint(tb[MRC_A_INFO_VERSION]));
		ju64("family", get_uint(tb[MRC_A_INFO_FAMILY]));
		ju64("udp_port", get_uint(tb[MRC_A_INFO_UDP_PORT]));
		ju64("max_evs", get_uint(tb[MRC_A_INFO_MAX_EVS]));
		jarr("features");
		for (i = 0; i < 32; i++)
			if (feat & (1u << i))
				jstr(NULL, i < 6 ? feature_names[i] : "unknown");
		jarr_end();
		jobj_end();
		return 0;
	}
	printf("mrc version %" PRIu64 " family %" PRIu64 " udp-port %" PRIu64 " max-evs %" PRIu64
	       "\n", get_uint(tb[MRC_A_INFO_VERSION]), get_uint(tb[MRC_A_INFO_FAMILY]),
	       get_uint(tb[MRC_A_INFO_UDP_PORT]), get_uint(tb[MRC_A_INFO_MAX_EVS]));
	printf("features");
	for (i = 0; i < 32; i++) {
		if (feat & (1u << i)) {
			printf("%c%s", first ? ' ' : ',', i < 6 ? feature_names[i] : "unknown");
			first = false;
		}
	}
	printf("\n");
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	if (argc > 0)
		usage_error("info takes no arguments (got \"%s\")", argv[0]);
	talk(req(MRC_CMD_INFO_GET, NLM_F_ACK, NULL, 0), info_cb, NULL);
	return 0;
}

/* ---- config ------------------------------------------------------------- */

struct config_key {
	const char *name;
	uint16_t type;
	int bytes;		/* 1, 2, 4 */
	const char *unit;
};

static const struct config_key config_keys[] = {
	{ "udp-port",		MRC_A_CONFIG_UDP_PORT,		2, "" },
	{ "ev-count",		MRC_A_CONFIG_EV_COUNT,		2, "" },
	{ "ev-port-min",	MRC_A_CONFIG_EV_PORT_MIN,	2, "" },
	{ "ev-port-max",	MRC_A_CONFIG_EV_PORT_MAX,	2, "" },
	{ "retire-losses",	MRC_A_CONFIG_RETIRE_LOSSES,	1, "" },
	{ "ecn",		MRC_A_CONFIG_ECN,		1, "" },
	{ "redundancy",		MRC_A_CONFIG_REDUNDANCY,	1, "" },
	{ "probe-interval-ms",	MRC_A_CONFIG_PROBE_INTERVAL_MS,	4, "" },
	{ "min-rto-us",		MRC_A_CONFIG_MIN_RTO_US,	4, "" },
	{ "max-rto-us",		MRC_A_CONFIG_MAX_RTO_US,	4, "" },
	{ "init-cwnd",		MRC_A_CONFIG_INIT_CWND,		4, "" },
	{ "user-timeout-ms",	MRC_A_CONFIG_USER_TIMEOUT_MS,	4, "" },
	{ "dctcp-shift",	MRC_A_CONFIG_DCTCP_SHIFT,	4, "" },
	{ "delay-target-us",	MRC_A_CONFIG_DELAY_TARGET_US,	4, "" },
	{ "urgent-dscp",	MRC_A_CONFIG_URGENT_DSCP,	1, "" },
	{ "burst-max",		MRC_A_CONFIG_BURST_MAX,		1, "" },
};

#define N_CONFIG ARRAY_SIZE(config_keys)

static const char *config_attr_names[MRC_A_CONFIG_MAX + 1];

static void config_names_init(void)
{
	unsigned int i;

	for (i = 0; i < N_CONFIG; i++)
		config_attr_names[config_keys[i].type] = config_keys[i].name;
}

static const struct config_key *config_key(const char *word)
{
	char name[64];
	unsigned int i;
	size_t j;

	for (j = 0; word[j] && j < sizeof(name) - 1; j++)
		name[j] = word[j] == '_' ? '-' : word[j];
	name[j] = 0;
	for (i = 0; i < N_CONFIG; i++)
		if (!strcmp(name, config_keys[i].name))
			return &config_keys[i];
	return NULL;
}

static int config_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX];
	unsigned int i;

	parse_msg(nlh, tb);
	if (json)
		jobj(NULL);
	for (i = 0; i < N_CONFIG; i++) {
		const struct config_key *k = &config_keys[i];

		if (!tb[k->type])
			continue;
		if (json)
			ju64(jname(k->name), get_uint(tb[k->type]));
		else
			printf("%s %" PRIu64 "\n", k->name, get_uint(tb[k->type]));
	}
	if (json)
		jobj_end();
	return 0;
}

/* The value of @k that @s spells: a usage error if it is none */
static uint64_t config_value(const struct config_key *k, const char *s)
{
	uint64_t max = k->bytes == 4 ? UINT32_MAX : k->bytes == 2 ? UINT16_MAX : UINT8_MAX;

	if (k->type == MRC_A_CONFIG_ECN && !strcmp(s, "on"))
		return 1;
	if (k->type == MRC_A_CONFIG_ECN && !strcmp(s, "off"))
		return 0;
	return parse_u64(k->name, s, max);
}

static int cmd_config(int argc, char **argv)
{
	static const char *const subcmds[] = { "show", "set" };
	struct nlmsghdr *nlh;
	int i, sub = argc ? lookup("config command", argv[0], subcmds, NULL, 2) : 0;

	config_names_init();
	if (sub == 0) {
		if (argc > 1)
			usage_error("config show takes no arguments (got \"%s\")", argv[1]);
		talk(req(MRC_CMD_CONFIG_GET, NLM_F_ACK, NULL, 0), config_cb, NULL);
		return 0;
	}
	if (sub < 0)
		usage_error("unknown config command \"%s\"; try \"%s config help\"", argv[0],
			    prog);
	argc--, argv++;
	if (argc == 0)
		usage_error("config set needs KEY VALUE pairs");
	/* every pair checked before the request (and netlink) is opened */
	for (i = 0; i < argc; i += 2) {
		const struct config_key *k = config_key(argv[i]);

		if (!k)
			usage_error("unknown config key \"%s\"", argv[i]);
		if (i + 1 >= argc)
			usage_error("config key \"%s\" needs a value", k->name);
		config_value(k, argv[i + 1]);
	}
	nlh = req(MRC_CMD_CONFIG_SET, NLM_F_ACK, config_attr_names, MRC_A_CONFIG_MAX + 1);
	for (i = 0; i < argc; i += 2) {
		const struct config_key *k = config_key(argv[i]);
		uint64_t v = config_value(k, argv[i + 1]);

		if (k->bytes == 1)
			mnl_attr_put_u8(nlh, k->type, v);
		else if (k->bytes == 2)
			mnl_attr_put_u16(nlh, k->type, v);
		else
			mnl_attr_put_u32(nlh, k->type, v);
	}
	talk(nlh, NULL, NULL);
	return 0;
}

/* ---- connections -------------------------------------------------------- */

struct conn_opts {
	bool evs;
	bool any;
};

static void print_ev_json(const struct nlattr *nest)
{
	const struct nlattr *tb[TB_MAX];

	parse_nest(nest, tb);
	jobj(NULL);
	ju64("port", get_uint(tb[MRC_A_EV_PORT]));
	jstr("state", NAME_OF(ev_state_names, get_uint(tb[MRC_A_EV_STATE])));
	ju64("losses", get_uint(tb[MRC_A_EV_LOSSES]));
	ju64("weight", get_uint(tb[MRC_A_EV_WEIGHT]));
	ju64("srtt_us", get_uint(tb[MRC_A_EV_SRTT_US]));
	ju64("min_rtt_us", get_uint(tb[MRC_A_EV_MIN_RTT_US]));
	ju64("in_flight", get_uint(tb[MRC_A_EV_IN_FLIGHT]));
	ju64("sent", get_uint(tb[MRC_A_EV_SENT]));
	ju64("delivered", get_uint(tb[MRC_A_EV_DELIVERED]));
	ju64("lost", get_uint(tb[MRC_A_EV_LOST]));
	ju64("ce", get_uint(tb[MRC_A_EV_CE]));
	ju64("path", get_uint(tb[MRC_A_EV_PATH]));
	jobj_end();
}

static void print_ev_text(const struct nlattr *nest)
{
	const struct nlattr *tb[TB_MAX];

	parse_nest(nest, tb);
	printf("\t%-6" PRIu64 " %-8s %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
	       PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %4" PRIu64 "\n",
	       get_uint(tb[MRC_A_EV_PORT]),
	       NAME_OF(ev_state_names, get_uint(tb[MRC_A_EV_STATE])),
	       get_uint(tb[MRC_A_EV_LOSSES]), get_uint(tb[MRC_A_EV_WEIGHT]),
	       get_uint(tb[MRC_A_EV_SRTT_US]), get_uint(tb[MRC_A_EV_MIN_RTT_US]),
	       get_uint(tb[MRC_A_EV_IN_FLIGHT]), get_uint(tb[MRC_A_EV_SENT]),
	       get_uint(tb[MRC_A_EV_DELIVERED]), get_uint(tb[MRC_A_EV_LOST]),
	       get_uint(tb[MRC_A_EV_CE]), get_uint(tb[MRC_A_EV_PATH]));
}

/* One path of a connection: "path N LOCAL > REMOTE dev IF up|down" */
static void print_conn_path(const struct nlattr *nest)
{
	const struct nlattr *tb[TB_MAX];
	char lb[INET6_ADDRSTRLEN], rb[INET6_ADDRSTRLEN];

	parse_nest(nest, tb);
	get_addr(tb[MRC_A_CONN_PATH_LOCAL_ADDR], lb, sizeof(lb));
	get_addr(tb[MRC_A_CONN_PATH_REMOTE_ADDR], rb, sizeof(rb));
	if (json) {
		jobj(NULL);
		ju64("index", get_uint(tb[MRC_A_CONN_PATH_INDEX]));
		ju64("family", get_uint(tb[MRC_A_CONN_PATH_FAMILY]));
		jstr("local_addr", lb);
		jstr("remote_addr", rb);
		ju64("ifindex", get_uint(tb[MRC_A_CONN_PATH_IFINDEX]));
		jstr("dev", get_ifname(tb[MRC_A_CONN_PATH_IFNAME]));
		jbool("up", get_uint(tb[MRC_A_CONN_PATH_UP]));
		jobj_end();
		return;
	}
	printf("\tpath %" PRIu64 " %s > %s dev %s %s\n", get_uint(tb[MRC_A_CONN_PATH_INDEX]),
	       lb, rb, get_ifname(tb[MRC_A_CONN_PATH_IFNAME]),
	       get_uint(tb[MRC_A_CONN_PATH_UP]) ? "up" : "down");
}

/* Connection IDs authenticate packets: they are no metric (nor a label). */
static const struct field conn_num_fields[] = {
	{ MRC_A_CONN_REMOTE_ID, "remote-id", P_NONE, NULL, NULL, A_NONE },
	{ MRC_A_CONN_UDP_DPORT, "udp-dport", P_NONE, NULL, NULL, A_NONE },
	{ MRC_A_CONN_EV_COUNT, "ev-count", P_GAUGE, "conn_evs_wanted",
	  "Active entropy values (UDP source ports) the connection wants", A_SUM },
	{ MRC_A_CONN_CWND, "cwnd", P_GAUGE, "conn_cwnd_packets", "Congestion window", A_SUM },
	{ MRC_A_CONN_IN_FLIGHT, "in-flight", P_GAUGE, "conn_in_flight_packets",
	  "Packets sent, not acknowledged and not lost", A_SUM },
	{ MRC_A_CONN_SND_WND, "snd-wnd", P_GAUGE, "conn_send_window_bytes",
	  "The peer's advertised receive window", A_SUM },
	{ MRC_A_CONN_MSS, "mss", P_GAUGE, "conn_mss_bytes", "Largest payload of a packet", A_MIN },
	{ MRC_A_CONN_SRTT_US, "srtt-us", P_GAUGE, "conn_srtt_seconds", "Smoothed round-trip time",
	  A_MEAN },
	{ MRC_A_CONN_RTTVAR_US, "rttvar-us", P_GAUGE, "conn_rttvar_seconds",
	  "Round-trip time variation", A_MEAN },
	{ MRC_A_CONN_MIN_RTT_US, "min-rtt-us", P_GAUGE, "conn_min_rtt_seconds",
	  "Smallest round-trip time seen", A_MIN },
	{ MRC_A_CONN_RTO_US, "rto-us", P_GAUGE, "conn_rto_seconds", "Retransmission timeout", A_MAX },
	{ MRC_A_CONN_BYTES_SENT, "bytes-sent", P_COUNTER, "conn_sent_bytes_total",
	  "Bytes the application wrote to the connection", A_SUM },
	{ MRC_A_CONN_BYTES_ACKED, "bytes-acked", P_COUNTER, "conn_acked_bytes_total",
	  "Payload bytes acknowledged by the peer", A_SUM },
	{ MRC_A_CONN_BYTES_RECEIVED, "bytes-received", P_COUNTER, "conn_received_bytes_total",
	  "Payload bytes received", A_SUM },
	{ MRC_A_CONN_PACKETS_SENT, "packets-sent", P_COUNTER, "conn_sent_packets_total",
	  "Packets sent", A_SUM },
	{ MRC_A_CONN_PACKETS_RECEIVED, "packets-received", P_COUNTER,
	  "conn_received_packets_total", "Packets received", A_SUM },
	{ MRC_A_CONN_RETRANSMITS, "retransmits", P_COUNTER, "conn_retransmits_total",
	  "Packets retransmitted", A_SUM },
	{ MRC_A_CONN_PACKETS_LOST, "packets-lost", P_COUNTER, "conn_lost_packets_total",
	  "Packets inferred lost", A_SUM },
	{ MRC_A_CONN_RTO_EVENTS, "rto-events", P_COUNTER, "conn_rto_expired_total",
	  "Retransmission timeouts that expired", A_SUM },
};

static int conn_cb(const struct nlmsghdr *nlh, void *data)
{
	struct conn_opts *o = data;
	const struct nlattr *tb[TB_MAX], *a;
	char lb[INET6_ADDRSTRLEN + 16], rb[INET6_ADDRSTRLEN + 16];
	const char *state;
	unsigned int i;
	int n_evs = 0;

	parse_msg(nlh, tb);
	o->any = true;
	state = NAME_OF(state_names, get_uint(tb[MRC_A_CONN_STATE]));
	if (prom) {
		struct prom_row *r = prom_row_add(tb);
		char port[8];

		snprintf(r->group, sizeof(r->group), "%s", r->labels);
		prom_label(r->group, sizeof(r->group), "peer",
			   get_addr(tb[MRC_A_CONN_REMOTE_ADDR], rb, sizeof(rb)));
		prom_label(r->labels, sizeof(r->labels), "local_addr",
			   get_addr(tb[MRC_A_CONN_LOCAL_ADDR], lb, sizeof(lb)));
		snprintf(port, sizeof(port), "%u", (unsigned int)r->v[MRC_A_CONN_LOCAL_PORT]);
		prom_label(r->labels, sizeof(r->labels), "local_port", port);
		prom_label(r->labels, sizeof(r->labels), "remote_addr",
			   get_addr(tb[MRC_A_CONN_REMOTE_ADDR], rb, sizeof(rb)));
		snprintf(port, sizeof(port), "%u", (unsigned int)r->v[MRC_A_CONN_REMOTE_PORT]);
		prom_label(r->labels, sizeof(r->labels), "remote_port", port);
		return 0;
	}
	if (json) {
		jobj(NULL);
		ju64("local_id", get_uint(tb[MRC_A_CONN_LOCAL_ID]));
		ju64("family", get_uint(tb[MRC_A_CONN_FAMILY]));
		jstr("local_addr", get_addr(tb[MRC_A_CONN_LOCAL_ADDR], lb, sizeof(lb)));
		ju64("local_port", get_uint(tb[MRC_A_CONN_LOCAL_PORT]));
		jstr("remote_addr", get_addr(tb[MRC_A_CONN_REMOTE_ADDR], rb, sizeof(rb)));
		ju64("remote_port", get_uint(tb[MRC_A_CONN_REMOTE_PORT]));
		jstr("state", state);
		for (i = 0; i < ARRAY_SIZE(conn_num_fields); i++)
			ju64(jname(conn_num_fields[i].key),
			     get_uint(tb[conn_num_fields[i].attr]));
		if (o->evs) {
			jarr("paths");
			mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
				if (mnl_attr_get_type(a) == MRC_A_CONN_PATH)
					print_conn_path(a);
			jarr_end();
			jarr("evs");
			mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
				if (mnl_attr_get_type(a) == MRC_A_CONN_EV)
					print_ev_json(a);
			jarr_end();
		}
		jobj_end();
		return 0;
	}
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		n_evs += mnl_attr_get_type(a) == MRC_A_CONN_EV;
	printf("id " CONN_ID_FMT " %s -> %s %s\n", get_uint(tb[MRC_A_CONN_LOCAL_ID]),
	       fmt_endpoint(tb[MRC_A_CONN_LOCAL_ADDR], get_uint(tb[MRC_A_CONN_LOCAL_PORT]),
			    lb, sizeof(lb)),
	       fmt_endpoint(tb[MRC_A_CONN_REMOTE_ADDR], get_uint(tb[MRC_A_CONN_REMOTE_PORT]),
			    rb, sizeof(rb)), state);
	printf("\tremote-id " CONN_ID_FMT " udp-dport %" PRIu64 " evs %d/%" PRIu64 "\n",
	       get_uint(tb[MRC_A_CONN_REMOTE_ID]), get_uint(tb[MRC_A_CONN_UDP_DPORT]), n_evs,
	       get_uint(tb[MRC_A_CONN_EV_COUNT]));
	printf("\tcwnd %" PRIu64 " in-flight %" PRIu64 " snd-wnd %" PRIu64 " mss %" PRIu64
	       " srtt %" PRIu64 "us rttvar %" PRIu64 "us min-rtt %" PRIu64 "us rto %" PRIu64
	       "us\n", get_uint(tb[MRC_A_CONN_CWND]), get_uint(tb[MRC_A_CONN_IN_FLIGHT]),
	       get_uint(tb[MRC_A_CONN_SND_WND]), get_uint(tb[MRC_A_CONN_MSS]),
	       get_uint(tb[MRC_A_CONN_SRTT_US]), get_uint(tb[MRC_A_CONN_RTTVAR_US]),
	       get_uint(tb[MRC_A_CONN_MIN_RTT_US]), get_uint(tb[MRC_A_CONN_RTO_US]));
	printf("\tbytes-sent %" PRIu64 " bytes-acked %" PRIu64 " bytes-received %" PRIu64
	       " packets-sent %" PRIu64 " packets-received %" PRIu64 "\n",
	       get_uint(tb[MRC_A_CONN_BYTES_SENT]), get_uint(tb[MRC_A_CONN_BYTES_ACKED]),
	       get_uint(tb[MRC_A_CONN_BYTES_RECEIVED]), get_uint(tb[MRC_A_CONN_PACKETS_SENT]),
	       get_uint(tb[MRC_A_CONN_PACKETS_RECEIVED]));
	printf("\tretransmits %" PRIu64 " packets-lost %" PRIu64 " rto-events %" PRIu64 "\n",
	       get_uint(tb[MRC_A_CONN_RETRANSMITS]), get_uint(tb[MRC_A_CONN_PACKETS_LOST]),
	       get_uint(tb[MRC_A_CONN_RTO_EVENTS]));
	if (o->evs) {
		mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
			if (mnl_attr_get_type(a) == MRC_A_CONN_PATH)
				print_conn_path(a);
		printf("\t%-6s %-8s %6s %6s %8s %8s %8s %10s %10s %8s %8s %4s\n", "port", "state",
		       "losses", "weight", "srtt", "min-rtt", "inflight", "sent", "delivered",
		       "lost", "ce", "path");
		mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
			if (mnl_attr_get_type(a) == MRC_A_CONN_EV)
				print_ev_text(a);
	}
	return 0;
}

static const char *const conn_attr_names[MRC_A_CONN_MAX + 1] = {
	[MRC_A_CONN_LOCAL_ID] = "id",
};

/* conn show -o prometheus: per peer, or with --per-conn per connection */
static void prom_print_conns(void)
{
	if (prom_per_row) {
		prom_print_state("conn_state", "Connection state (1 for the current one)",
				 MRC_A_CONN_STATE, state_names, ARRAY_SIZE(state_names));
		prom_print_fields(conn_num_fields, ARRAY_SIZE(conn_num_fields));
		return;
	}
	prom_print_groups("conns", "Connections to the peer in each state", MRC_A_CONN_STATE,
			  state_names, ARRAY_SIZE(state_names), conn_num_fields,
			  ARRAY_SIZE(conn_num_fields), "connections");
}

static int cmd_conn(int argc, char **argv)
{
	struct conn_opts o = {};
	struct nlmsghdr *nlh;
	uint64_t id = 0;
	bool have_id = false;

	if (argc > 0 && matches(argv[0], "show"))
		argc--, argv++;
	else if (argc > 0 && !(argv[0][0] == '-' || !strcmp(argv[0], "id") ||
			       matches(argv[0], "evs")))
		usage_error("unknown conn command \"%s\"; try \"%s help\"", argv[0], prog);
	for (; argc > 0; argc--, argv++) {
		if (!strcmp(argv[0], "-e") || !strcmp(argv[0], "--evs") ||
		    matches(argv[0], "evs")) {
			o.evs = true;
		} else if (!strcmp(argv[0], "--per-conn")) {
			prom_per_row = true;
		} else if (!strcmp(argv[0], "id")) {
			if (argc < 2)
				usage_error("\"id\" needs a connection id");
			id = parse_conn_id(argv[1]);
			have_id = true;
			argc--, argv++;
		} else {
			usage_error("unknown conn show argument \"%s\"", argv[0]);
		}
	}
	if (prom && o.evs)
		usage_error("conn show -e has no prometheus output (paths has the EVs)");
	if (prom_per_row && !prom)
		usage_error("conn show --per-conn is for -o prometheus (text and JSON are per connection)");
	nl_open();
	if (json)
		jarr(NULL);
	if (have_id) {
		nlh = req(MRC_CMD_CONN_GET, NLM_F_ACK, conn_attr_names, MRC_A_CONN_MAX + 1);
		mnl_attr_put_u32(nlh, MRC_A_CONN_LOCAL_ID, id);
	} else {
		nlh = req(MRC_CMD_CONN_GET, NLM_F_DUMP, NULL, 0);
	}
	talk(nlh, conn_cb, &o);
	if (json)
		jarr_end();
	if (prom)
		prom_print_conns();
	return 0;
}

/* ---- paths (heatmap) ---------------------------------------------------- */

struct paths_state {
	char last_peer[INET6_ADDRSTRLEN];
	unsigned int rows;
};

static const struct field path_fields[] = {
	{ MRC_A_PATH_CONNS, "conns", P_GAUGE, "path_conns",
	  "Connections using this source port toward this peer", A_MAX },
	{ MRC_A_PATH_RETIRED, "retired", P_GAUGE, "path_retired_conns",
	  "Connections that have this source port retired", A_NONE },
	{ MRC_A_PATH_SRTT_US, "srtt_us", P_GAUGE, "path_srtt_seconds",
	  "Mean smoothed round-trip time over the connections with a sample", A_MEAN },
	{ MRC_A_PATH_MIN_RTT_US, "min_rtt_us", P_GAUGE, "path_min_rtt_seconds",
	  "Smallest round-trip time seen on this path", A_MIN },
	{ MRC_A_PATH_IN_FLIGHT, "in_flight", P_GAUGE, "path_in_flight_packets",
	  "Packets sent on this path, not acknowledged and not lost", A_SUM },
	/* sums over the open connections: a close is seen as a counter reset */
	{ MRC_A_PATH_SENT, "sent", P_COUNTER, "path_sent_packets_total",
	  "Packets sent on this path by the open connections", A_SUM },
	{ MRC_A_PATH_DELIVERED, "delivered", P_COUNTER, "path_delivered_packets_total",
	  "Packets sent on this path and acknowledged, of the open connections", A_SUM },
	{ MRC_A_PATH_LOST, "lost", P_COUNTER, "path_lost_packets_total",
	  "Packets sent on this path and inferred lost, of the open connections", A_SUM },
	{ MRC_A_PATH_CE, "ce", P_COUNTER, "path_ce_marked_packets_total",
	  "Packets sent on this path that arrived ECN CE-marked, of the open connections", A_SUM },
};

static int path_cb(const struct nlmsghdr *nlh, void *data)
{
	struct paths_state *s = data;
	const struct nlattr *tb[TB_MAX];
	char pb[INET6_ADDRSTRLEN];
	uint64_t sent, lost;
	unsigned int i;
	double loss;

	parse_msg(nlh, tb);
	get_addr(tb[MRC_A_PATH_PEER_ADDR], pb, sizeof(pb));
	sent = get_uint(tb[MRC_A_PATH_SENT]);
	lost = get_uint(tb[MRC_A_PATH_LOST]);
	loss = sent ? 100.0 * lost / sent : 0;
	s->rows++;
	if (prom) {
		struct prom_row *r = prom_row_add(tb);
		char port[8];

		prom_label(r->labels, sizeof(r->labels), "peer", pb);
		snprintf(r->group, sizeof(r->group), "%s", r->labels);
		snprintf(port, sizeof(port), "%u", (unsigned int)r->v[MRC_A_PATH_PORT]);
		prom_label(r->labels, sizeof(r->labels), "port", port);
		return 0;
	}
	if (json) {
		jobj(NULL);
		jstr("peer", pb);
		ju64("port", get_uint(tb[MRC_A_PATH_PORT]));
		jstr("state", NAME_OF(ev_state_names, get_uint(tb[MRC_A_PATH_STATE])));
		for (i = 0; i < ARRAY_SIZE(path_fields); i++)
			ju64(path_fields[i].key, get_uint(tb[path_fields[i].attr]));
		jdbl("loss_pct", loss);
		jobj_end();
		return 0;
	}
	if (strcmp(pb, s->last_peer)) {
		snprintf(s->last_peer, sizeof(s->last_peer), "%s", pb);
		printf("peer %s\n", pb);
		printf("\t%-6s %-8s %5s %7s %8s %8s %8s %10s %10s %8s %7s %8s\n", "port",
		       "state", "conns", "retired", "srtt", "min-rtt", "inflight", "sent",
		       "delivered", "lost", "loss%", "ce");
	}
	printf("\t%-6" PRIu64 " %-8s %5" PRIu64 " %7" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
	       PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %7.2f %8" PRIu64 "\n",
	       get_uint(tb[MRC_A_PATH_PORT]),
	       NAME_OF(ev_state_names, get_uint(tb[MRC_A_PATH_STATE])),
	       get_uint(tb[MRC_A_PATH_CONNS]), get_uint(tb[MRC_A_PATH_RETIRED]),
	       get_uint(tb[MRC_A_PATH_SRTT_US]), get_uint(tb[MRC_A_PATH_MIN_RTT_US]),
	       get_uint(tb[MRC_A_PATH_IN_FLIGHT]), sent, get_uint(tb[MRC_A_PATH_DELIVERED]),
	       lost, loss, get_uint(tb[MRC_A_PATH_CE]));
	return 0;
}

/* paths -o prometheus: per peer address, or with --per-ev per source port */
static void prom_print_paths(void)
{
	if (prom_per_row) {
		prom_print_state("path_state",
				 "Source port state toward the peer, retired if any connection has it retired (1 for the current one)",
				 MRC_A_PATH_STATE, ev_state_names, ARRAY_SIZE(ev_state_names));
		prom_print_fields(path_fields, ARRAY_SIZE(path_fields));
		return;
	}
	prom_print_groups("paths",
			  "Source ports toward the peer address in each state, retired if any connection has it retired",
			  MRC_A_PATH_STATE, ev_state_names, ARRAY_SIZE(ev_state_names), path_fields,
			  ARRAY_SIZE(path_fields), "source ports");
}

static const char *const path_attr_names[MRC_A_PATH_MAX + 1] = {
	[MRC_A_PATH_PEER_ADDR] = "peer",
};

static int cmd_paths(int argc, char **argv)
{
	struct paths_state s = {};
	struct nlmsghdr *nlh;
	unsigned char addr[16];
	int alen, i, n;

	if (argc > 0 && (!strcmp(argv[0], "show") || !strcmp(argv[0], "peer")))
		argc--, argv++;
	for (i = 0, n = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--per-ev"))
			prom_per_row = true;
		else
			argv[n++] = argv[i];
	}
	argc = n;
	if (prom_per_row && !prom)
		usage_error("paths --per-ev is for -o prometheus (text and JSON are per EV)");
	if (argc > 1)
		usage_error("paths takes at most one PEER address (got \"%s\")", argv[1]);
	alen = argc == 1 ? parse_addr(argv[0], addr) : 0;
	nlh = req(MRC_CMD_PATH_GET, NLM_F_DUMP, path_attr_names, MRC_A_PATH_MAX + 1);
	if (alen)
		mnl_attr_put(nlh, MRC_A_PATH_PEER_ADDR, alen, addr);
	if (json)
		jarr(NULL);
	talk(nlh, path_cb, &s);
	if (json)
		jarr_end();
	if (prom)
		prom_print_paths();
	return 0;
}

/* ---- policies ----------------------------------------------------------- */

static const char *const action_names[] = {
	[MRC_POLICY_ACTION_EXCLUDE] = "exclude",
	[MRC_POLICY_ACTION_PIN] = "pin",
};

static const char *const policy_attr_names[MRC_A_POLICY_MAX + 1] = {
	[MRC_A_POLICY_ID] = "id", [MRC_A_POLICY_PEER_ADDR] = "peer",
	[MRC_A_POLICY_PORT_MIN] = "ports (first)", [MRC_A_POLICY_PORT_MAX] = "ports (last)",
	[MRC_A_POLICY_ACTION] = "action",
};

static int policy_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX];
	char pb[INET6_ADDRSTRLEN];
	const char *action;

	parse_msg(nlh, tb);
	action = NAME_OF(action_names, get_uint(tb[MRC_A_POLICY_ACTION]));
	get_addr(tb[MRC_A_POLICY_PEER_ADDR], pb, sizeof(pb));
	if (json) {
		jobj(NULL);
		ju64("id", get_uint(tb[MRC_A_POLICY_ID]));
		if (tb[MRC_A_POLICY_PEER_ADDR])
			jstr("peer", pb);
		else
			jstr("peer", "any");
		ju64("port_min", get_uint(tb[MRC_A_POLICY_PORT_MIN]));
		ju64("port_max", get_uint(tb[MRC_A_POLICY_PORT_MAX]));
		jstr("action", action);
		jobj_end();
		return 0;
	}
	printf("id %" PRIu64 " peer %s ports %" PRIu64 "-%" PRIu64 " %s\n",
	       get_uint(tb[MRC_A_POLICY_ID]), tb[MRC_A_POLICY_PEER_ADDR] ? pb : "any",
	       get_uint(tb[MRC_A_POLICY_PORT_MIN]), get_uint(tb[MRC_A_POLICY_PORT_MAX]), action);
	return 0;
}

static int policy_id_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX];

	parse_msg(nlh, tb);
	if (json) {
		jobj(NULL);
		ju64("id", get_uint(tb[MRC_A_POLICY_ID]));
		jobj_end();
	} else {
		printf("id %" PRIu64 "\n", get_uint(tb[MRC_A_POLICY_ID]));
	}
	return 0;
}

static int collect_ids_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX];
	uint32_t **ids = data;
	static size_t n, cap;

	parse_msg(nlh, tb);
	if (n + 2 > cap) {
		cap = cap ? 2 * cap : 64;
		*ids = realloc(*ids, cap * sizeof(**ids));
		if (!*ids)
			die(EXIT_KERNEL, "out of memory");
	}
	(*ids)[n++] = get_uint(tb[MRC_A_POLICY_ID]);
	(*ids)[n] = 0;
	return 0;
}

static void policy_del(uint32_t id)
{
	struct nlmsghdr *nlh;

	nlh = req(MRC_CMD_POLICY_DEL, NLM_F_ACK, policy_attr_names, MRC_A_POLICY_MAX + 1);
	mnl_attr_put_u32(nlh, MRC_A_POLICY_ID, id);
	talk(nlh, NULL, NULL);
}

static int cmd_policy(int argc, char **argv)
{
	struct nlmsghdr *nlh;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		if (argc > 1)
			usage_error("policy show takes no arguments (got \"%s\")", argv[1]);
		nl_open();
		if (json)
			jarr(NULL);
		talk(req(MRC_CMD_POLICY_GET, NLM_F_DUMP, NULL, 0), policy_cb, NULL);
		if (json)
			jarr_end();
		return 0;
	}
	if (matches(argv[0], "add")) {
		unsigned char addr[16];
		bool have_ports = false, have_action = false;
		uint64_t lo = 0, hi = 0;
		uint8_t action = 0;
		int alen = 0;
		char *dash;

		for (argc--, argv++; argc > 0; argc--, argv++) {
			if (!strcmp(argv[0], "peer") || !strcmp(argv[0], "to")) {
				if (argc < 2)
					usage_error("\"%s\" needs an address", argv[0]);
				alen = parse_addr(argv[1], addr);
				argc--, argv++;
			} else if (!strcmp(argv[0], "ports") || !strcmp(argv[0], "port")) {
				if (argc < 2)
					usage_error("\"%s\" needs PORT or MIN-MAX", argv[0]);
				dash = strchr(argv[1], '-');
				if (dash) {
					*dash = 0;
					hi = parse_u64("ports", dash + 1, UINT16_MAX);
				}
				lo = parse_u64("ports", argv[1], UINT16_MAX);
				if (!dash)
					hi = lo;
				have_ports = true;
				argc--, argv++;
			} else if (!strcmp(argv[0], "exclude") || !strcmp(argv[0], "pin")) {
				action = !strcmp(argv[0], "pin") ? MRC_POLICY_ACTION_PIN :
				       MRC_POLICY_ACTION_EXCLUDE;
				have_action = true;
			} else {
				usage_error("unknown policy add argument \"%s\"", argv[0]);
			}
		}
		if (!have_ports)
			usage_error("policy add needs \"ports MIN[-MAX]\"");
		if (!have_action)
			usage_error("policy add needs \"exclude\" or \"pin\"");
		nlh = req(MRC_CMD_POLICY_ADD, NLM_F_ACK, policy_attr_names, MRC_A_POLICY_MAX + 1);
		if (alen)
			mnl_attr_put(nlh, MRC_A_POLICY_PEER_ADDR, alen, addr);
		mnl_attr_put_u16(nlh, MRC_A_POLICY_PORT_MIN, lo);
		mnl_attr_put_u16(nlh, MRC_A_POLICY_PORT_MAX, hi);
		mnl_attr_put_u8(nlh, MRC_A_POLICY_ACTION, action);
		talk(nlh, policy_id_cb, NULL);
		return 0;
	}
	if (matches(argv[0], "delete") || !strcmp(argv[0], "del")) {
		argc--, argv++;
		if (argc > 0 && !strcmp(argv[0], "id"))
			argc--, argv++;
		if (argc != 1)
			usage_error("usage: %s policy del [id] ID", prog);
		policy_del(parse_u64("id", argv[0], UINT32_MAX));
		return 0;
	}
	if (matches(argv[0], "flush")) {
		uint32_t *ids = NULL, *p;

		if (argc > 1)
			usage_error("policy flush takes no arguments (got \"%s\")", argv[1]);
		talk(req(MRC_CMD_POLICY_GET, NLM_F_DUMP, NULL, 0), collect_ids_cb, &ids);
		for (p = ids; p && *p; p++)
			policy_del(*p);
		free(ids);
		return 0;
	}
	usage_error("unknown policy command \"%s\"; try \"%s help\"", argv[0], prog);
	return EXIT_USAGE;
}

/* ---- planes ------------------------------------------------------------- */

static const char *const plane_attr_names[MRC_A_PLANE_MAX + 1] = {
	[MRC_A_PLANE_ADDR] = "addr", [MRC_A_PLANE_FAMILY] = "family",
};

/*
 * One plane, of plane show or of a plane event (@event: its name):
 *   plane ID ADDR dev IFNAME up|down [default] down_events N up_events N
 *   plane-down id N addr A dev D
 * An event's id is 0 when the plane is no longer listed.
 */
static void print_plane(const struct nlmsghdr *nlh, const char *event)
{
	const struct nlattr *tb[TB_MAX];
	char ab[INET6_ADDRSTRLEN];
	bool up, is_default;

	parse_msg(nlh, tb);
	get_addr(tb[MRC_A_PLANE_ADDR], ab, sizeof(ab));
	up = get_uint(tb[MRC_A_PLANE_UP]);
	is_default = tb[MRC_A_PLANE_IS_DEFAULT];
	if (json) {
		jobj(NULL);
		if (event)
			jstr("event", event);
		ju64("id", get_uint(tb[MRC_A_PLANE_ID]));
		ju64("family", get_uint(tb[MRC_A_PLANE_FAMILY]));
		jstr("addr", ab);
		ju64("ifindex", get_uint(tb[MRC_A_PLANE_IFINDEX]));
		jstr("dev", get_ifname(tb[MRC_A_PLANE_IFNAME]));
		jbool("up", up);
		jbool("default", is_default);
		ju64("down_events", get_uint(tb[MRC_A_PLANE_DOWN_EVENTS]));
		ju64("up_events", get_uint(tb[MRC_A_PLANE_UP_EVENTS]));
		jobj_end();
	} else if (event) {
		printf("%s id %" PRIu64 " addr %s dev %s\n", event, get_uint(tb[MRC_A_PLANE_ID]),
		       ab, get_ifname(tb[MRC_A_PLANE_IFNAME]));
	} else {
		printf("plane %" PRIu64 " %s dev %s %s%s down_events %" PRIu64 " up_events %"
		       PRIu64 "\n", get_uint(tb[MRC_A_PLANE_ID]), ab,
		       get_ifname(tb[MRC_A_PLANE_IFNAME]), up ? "up" : "down",
		       is_default ? " default" : "", get_uint(tb[MRC_A_PLANE_DOWN_EVENTS]),
		       get_uint(tb[MRC_A_PLANE_UP_EVENTS]));
	}
}

static int plane_cb(const struct nlmsghdr *nlh, void *data)
{
	print_plane(nlh, NULL);
	return 0;
}

static int cmd_plane(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	unsigned char addr[16];
	bool add;
	int alen;

	if (argc == 0 || matches(argv[0], "show") || matches(argv[0], "list")) {
		if (argc > 1)
			usage_error("plane show takes no arguments (got \"%s\")", argv[1]);
		nl_open();
		if (json)
			jarr(NULL);
		talk(req(MRC_CMD_PLANE_GET, NLM_F_DUMP, NULL, 0), plane_cb, NULL);
		if (json)
			jarr_end();
		return 0;
	}
	if (matches(argv[0], "add"))
		add = true;
	else if (matches(argv[0], "delete") || !strcmp(argv[0], "del"))
		add = false;
	else
		usage_error("unknown plane command \"%s\"; try \"%s help\"", argv[0], prog);
	if (argc != 2)
		usage_error("usage: %s plane %s ADDR", prog, add ? "add" : "del");
	alen = parse_addr(argv[1], addr);
	nlh = req(add ? MRC_CMD_PLANE_ADD : MRC_CMD_PLANE_DEL, NLM_F_ACK, plane_attr_names,
		  MRC_A_PLANE_MAX + 1);
	mnl_attr_put_u16(nlh, MRC_A_PLANE_FAMILY, alen == 4 ? AF_INET : AF_INET6);
	mnl_attr_put(nlh, MRC_A_PLANE_ADDR, alen, addr);
	talk(nlh, NULL, NULL);
	return 0;
}

/* ---- stats (nstat-like) -------------------------------------------------- */

#define MAX_COUNTERS 256

struct counter {
	char name[48];
	uint64_t value;
};

struct counters {
	unsigned int n;
	struct counter c[MAX_COUNTERS];
};

/*
 * What the kernel's counters (net/mrc/protocol.h enum mrc_counter, named in
 * pernet.c) count, in their order; mrcctl-host.sh fails when one is missing.
 */
static const struct {
	const char *name, *help;
} counter_help[] = {
	{ "RxPackets", "UDP packets received on the tunnel sockets, dropped ones included" },
	{ "TxPackets", "Packets handed to the UDP tunnel" },
	{ "RxDropShort", "Received packets dropped: shorter than the header" },
	{ "RxDropVersion", "Received packets dropped: unknown protocol version" },
	{ "RxDropType", "Received packets dropped: unknown packet type" },
	{ "RxDropLength", "Received packets dropped: header length disagrees with the packet" },
	{ "RxDropNoConnection", "Received packets dropped: no connection or listener" },
	{ "RxDropBadId", "Received packets dropped: IDs or addresses do not match the connection" },
	{ "RxDropBadCookie", "Received packets dropped: forged or stale handshake cookie" },
	{ "RxDropOutOfWindow", "Received packets dropped: PSN or ACK outside the window" },
	{ "RxDropRcvbuf", "Received packets dropped: receive buffer full" },
	{ "RxDropBacklog", "Received packets dropped: socket backlog full" },
	{ "RxDropAcceptQueue", "Received packets dropped: listen backlog full" },
	{ "RxDuplicate", "Duplicate data packets received" },
	{ "TxRst", "RSTs sent" },
	{ "RstRateLimited", "RSTs not sent because of the rate limit" },
	{ "Retransmits", "Packets retransmitted" },
	{ "FastRetransmits", "Fast retransmissions (losses inferred from SACKs, reordering or a silent path)" },
	{ "RtoExpired", "Retransmission timeouts that expired" },
	{ "ConnOpened", "Connections opened actively (connect)" },
	{ "ConnAccepted", "Connections accepted by listeners" },
	{ "ConnReset", "Connections reset by the peer" },
	{ "ConnTimeout", "Connections that timed out" },
	{ "TxErrors", "Packets the UDP tunnel could not send" },
	{ "EvRetired", "Entropy values (UDP source ports) retired after losses" },
	{ "EvReadmitted", "Retired entropy values re-admitted after a probe got through" },
	{ "EvProbes", "Probes sent on retired entropy values" },
	{ "SpuriousRetransmits", "Retransmitted packets that turned out duplicates" },
	{ "RxCeMarked", "Packets received with an ECN CE mark" },
	{ "TxRedundant", "Extra copies of urgent packets sent (redundancy)" },
	{ "RxDropMemory", "Received packets dropped: protocol memory pool exhausted" },
	{ "MemPressure", "Times MRC entered memory pressure" },
	{ "MemForced", "Segments queued beyond the memory pool's limit" },
	{ "OrphanOverflow", "Closes aborted because net.mrc.max_orphans was reached" },
	{ "OrphanFinTimeout", "Closed sockets that ended waiting for the peer's FIN" },
	{ "SpuriousRto", "Retransmission timeouts whose packets had arrived (window restored)" },
	{ "KeepaliveProbes", "Keepalive probes sent (SO_KEEPALIVE)" },
	{ "RxIcmpUnreachable", "ICMP unreachable errors quoting a connection's packet" },
	{ "RxIcmpFragNeeded", "ICMP fragmentation-needed / packet-too-big errors (MSS lowered)" },
	{ "LossSameEv", "Losses inferred: a later packet sent on the same EV arrived first" },
	{ "LossRack", "Losses inferred (RACK): overdue past a later packet's delivery" },
	{ "PlaneDown", "Times a plane's device went down or lost its address" },
	{ "PlaneUp", "Times a plane came back" },
	{ "AddrLearned", "Peer plane addresses accepted from handshakes" },
	{ "AddrRejected", "Peer plane addresses refused: malformed, duplicate or unusable" },
	{ "TxBursts", "GSO bursts sent: several data packets on one EV as one skb" },
	{ "RxBatches", "GSO/GRO aggregates received whole and handled as one batch" },
	{ "RxDropChecksum", "Packets dropped: bad UDP checksum" },
	{ "LossPathSilent", "Losses inferred: still out on a path that went silent (resent at once)" },
	{ "SynIdTaken", "SYNs whose first derived connection ID was another connection's (another salt was used, or none was free)" },
	{ "RxTrains", "Aggregates that were the connection's next data, in order: queued whole, not cut into packets" },
	{ "LossProbes", "Tail loss probes: a flight's newest packet resent on another EV after two RTTs without an ACK" },
	{ "LossProbeRecovered", "Tail loss probes that repaired a loss (the probe arrived, not the original)" },
	{ "RxIcmpDropped", "ICMP errors dropped: the packet they quote is no connection's (forged or stale)" },
	{ "TxDsack", "Duplicates echoed to their sender in a pure ACK (DSACK): the original came late" },
	{ "TxTraceProbes", "Path trace probes sent: EV probes with a low TTL (ev trace)" },
	{ "RxTraceHops", "Path trace probes a router answered (ICMP time exceeded): a hop named" },
	{ "DsackRttSamples", "Duplicate echoes (DSACK) taken as an RTT sample of the slow path the original took" },
};

/* "TxPackets" -> "tx_packets", "RTOCount" -> "rto_count", "NoConnection" -> "no_connection" */
static size_t snake_case(char *buf, size_t len, const char *name)
{
	size_t i, n = 0;

	for (i = 0; name[i] && n + 2 < len; i++) {
		unsigned char c = name[i];

		if (isupper(c) && i &&
		    (!isupper((unsigned char)name[i - 1]) ||
		     islower((unsigned char)name[i + 1])))
			buf[n++] = '_';
		buf[n++] = isalnum(c) ? tolower(c) : '_';
	}
	buf[n] = 0;
	return n;
}

/* "TxPackets" -> "tx_packets_total" */
static const char *counter_metric(const char *name)
{
	static char buf[96];
	size_t n = snake_case(buf, sizeof(buf) - 6, name);

	snprintf(buf + n, sizeof(buf) - n, "_total");
	return buf;
}

/*
 * The counters of received packets that MRC dropped make one family with a
 * reason label, so that one query sums or splits every drop: RxDropX, the
 * reason x ("RxDropNoConnection": "no_connection"), and RxXDropped
 * ("RxIcmpDropped": "icmp").  NULL: not a drop counter.
 */
#define DROP_METRIC "rx_dropped_packets_total"
#define DROP_HELP "Received packets dropped, by reason: the RxDrop counters' UDP packets " \
	"(also in mrc_rx_packets_total), and icmp: ICMP errors that quote no connection's packet"

static const char *counter_drop_reason(const char *name)
{
	static char buf[64];
	size_t n = strlen(name);
	char mid[48];

	if (!strncmp(name, "RxDrop", 6) && name[6])
		snprintf(mid, sizeof(mid), "%s", name + 6);
	else if (n > 9 && !strncmp(name, "Rx", 2) && !strcmp(name + n - 7, "Dropped"))
		snprintf(mid, sizeof(mid), "%.*s", (int)(n - 9), name + 2);
	else
		return NULL;
	snake_case(buf, sizeof(buf), mid);
	return buf;
}

static void prom_counter(const char *name, uint64_t v)
{
	const char *help = NULL, *metric = counter_metric(name);
	char labels[128], h[96];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(counter_help); i++)
		if (!strcmp(counter_help[i].name, name))
			help = counter_help[i].help;
	if (!help) {		/* a counter newer than this mrcctl */
		snprintf(h, sizeof(h), "MRC counter %s", name);
		help = h;
	}
	prom_family(metric, P_COUNTER, help);
	prom_base_labels(labels, sizeof(labels));
	prom_sample(metric, labels, v, false);
}

/*
 * stats -o prometheus: a family a counter, the drop counters' one family
 * where the first of them falls (a family's samples must be contiguous).
 */
static void prom_print_counters(const struct counters *cs)
{
	bool drops = false;
	unsigned int i, j;
	char labels[192];

	for (i = 0; i < cs->n; i++) {
		if (!counter_drop_reason(cs->c[i].name)) {
			prom_counter(cs->c[i].name, cs->c[i].value);
			continue;
		}
		if (drops)
			continue;
		drops = true;
		prom_family(DROP_METRIC, P_COUNTER, DROP_HELP);
		for (j = i; j < cs->n; j++) {
			const char *reason = counter_drop_reason(cs->c[j].name);

			if (!reason)
				continue;
			prom_base_labels(labels, sizeof(labels));
			prom_label(labels, sizeof(labels), "reason", reason);
			prom_sample(DROP_METRIC, labels, cs->c[j].value, false);
		}
	}
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct counters *cs = data;
	const struct nlattr *a, *tb[TB_MAX];

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != MRC_A_STATS_COUNTER || cs->n >= MAX_COUNTERS)
			continue;
		parse_nest(a, tb);
		if (!tb[MRC_A_COUNTER_NAME])
			continue;
		snprintf(cs->c[cs->n].name, sizeof(cs->c[0].name), "%s",
			 mnl_attr_get_str(tb[MRC_A_COUNTER_NAME]));
		cs->c[cs->n].value = get_uint(tb[MRC_A_COUNTER_VALUE]);
		cs->n++;
	}
	return 0;
}

static void history_path(char *buf, size_t len)
{
	const char *env = getenv("MRCCTL_HISTORY");
	struct stat st = {};

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	stat("/proc/self/ns/net", &st);
	snprintf(buf, len, "/tmp/.mrcctl.u%u.net%lu", (unsigned int)getuid(),
		 (unsigned long)st.st_ino);
}

static bool history_get(const struct counters *h, const char *name, uint64_t *v)
{
	unsigned int i;

	for (i = 0; i < h->n; i++) {
		if (!strcmp(h->c[i].name, name)) {
			*v = h->c[i].value;
			return true;
		}
	}
	return false;
}

static int cmd_stats(int argc, char **argv)
{
	static struct counters now, hist;
	bool absolute = false, zeros = false, update = true, reset = false;
	char path[PATH_MAX], line[128];
	unsigned int i;
	FILE *f;

	if (argc > 0 && matches(argv[0], "show"))
		argc--, argv++;
	for (; argc > 0; argc--, argv++) {
		if (!strcmp(argv[0], "-a") || !strcmp(argv[0], "--absolute"))
			absolute = true;
		else if (!strcmp(argv[0], "-z") || !strcmp(argv[0], "--zeros"))
			zeros = true;
		else if (!strcmp(argv[0], "-s") || !strcmp(argv[0], "--no-update"))
			update = false;
		else if (!strcmp(argv[0], "-r") || !strcmp(argv[0], "--reset") ||
			 !strcmp(argv[0], "reset"))
			reset = true;
		else
			usage_error("unknown stats argument \"%s\"", argv[0]);
	}
	if (prom) {		/* a scrape: every counter, as it is, history untouched */
		if (reset)
			usage_error("stats -r has no prometheus output");
		absolute = true;
		zeros = true;
		update = false;
	}
	talk(req(MRC_CMD_STATS_GET, NLM_F_ACK, NULL, 0), stats_cb, &now);

	history_path(path, sizeof(path));
	if (!absolute && !reset) {
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f) && hist.n < MAX_COUNTERS) {
			if (sscanf(line, "%47s %" SCNu64, hist.c[hist.n].name,
				   &hist.c[hist.n].value) == 2)
				hist.n++;
		}
		if (f)
			fclose(f);
	}
	if (update || reset) {
		char tmp[PATH_MAX + 8];

		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		f = fopen(tmp, "w");
		if (f) {
			for (i = 0; i < now.n; i++)
				fprintf(f, "%s %" PRIu64 "\n", now.c[i].name, now.c[i].value);
			if (fclose(f) || rename(tmp, path))
				unlink(tmp);
		}
	}
	if (reset)
		return 0;
	if (prom) {
		prom_print_counters(&now);
		return 0;
	}

	if (json)
		jobj(NULL);
	for (i = 0; i < now.n; i++) {
		uint64_t v = now.c[i].value, old;

		if (!absolute && history_get(&hist, now.c[i].name, &old))
			v = v >= old ? v - old : v;
		if (!v && !zeros)
			continue;
		if (json)
			ju64(now.c[i].name, v);
		else
			printf("%-28s %" PRIu64 "\n", now.c[i].name, v);
	}
	if (json)
		jobj_end();
	return 0;
}

/* ---- monitor ------------------------------------------------------------ */

static void timestamp(void)
{
	struct timespec ts;
	char buf[64];
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	printf("[%s.%06ld] ", buf, ts.tv_nsec / 1000);
}

static int monitor_cb(const struct nlmsghdr *nlh, bool ts)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[TB_MAX], *etb[TB_MAX];
	char lb[INET6_ADDRSTRLEN + 16], rb[INET6_ADDRSTRLEN + 16];
	const char *ev;

	switch (g->cmd) {
	case MRC_CMD_CONN_ESTABLISHED_NTF:
		ev = "conn-established";
		break;
	case MRC_CMD_CONN_CLOSED_NTF:
		ev = "conn-closed";
		break;
	case MRC_CMD_EV_RETIRED_NTF:
		ev = "ev-retired";
		break;
	case MRC_CMD_EV_READMITTED_NTF:
		ev = "ev-readmitted";
		break;
	case MRC_CMD_PLANE_DOWN_NTF:
	case MRC_CMD_PLANE_UP_NTF:
		if (ts && !json)
			timestamp();
		print_plane(nlh, g->cmd == MRC_CMD_PLANE_UP_NTF ? "plane-up" : "plane-down");
		fflush(stdout);
		return 1;
	default:
		return 0;
	}
	parse_msg(nlh, tb);
	if (tb[MRC_A_CONN_EV])
		parse_nest(tb[MRC_A_CONN_EV], etb);
	if (json) {
		jobj(NULL);
		jstr("event", ev);
		ju64("local_id", get_uint(tb[MRC_A_CONN_LOCAL_ID]));
		if (tb[MRC_A_CONN_LOCAL_ADDR]) {
			jstr("local_addr", get_addr(tb[MRC_A_CONN_LOCAL_ADDR], lb, sizeof(lb)));
			ju64("local_port", get_uint(tb[MRC_A_CONN_LOCAL_PORT]));
		}
		jstr("remote_addr", get_addr(tb[MRC_A_CONN_REMOTE_ADDR], rb, sizeof(rb)));
		if (tb[MRC_A_CONN_REMOTE_PORT])
			ju64("remote_port", get_uint(tb[MRC_A_CONN_REMOTE_PORT]));
		if (tb[MRC_A_CONN_STATE])
			jstr("state", NAME_OF(state_names, get_uint(tb[MRC_A_CONN_STATE])));
		if (tb[MRC_A_CONN_EV]) {
			ju64("port", get_uint(etb[MRC_A_EV_PORT]));
			jstr("ev_state", NAME_OF(ev_state_names, get_uint(etb[MRC_A_EV_STATE])));
			ju64("losses", get_uint(etb[MRC_A_EV_LOSSES]));
			ju64("srtt_us", get_uint(etb[MRC_A_EV_SRTT_US]));
			ju64("sent", get_uint(etb[MRC_A_EV_SENT]));
			ju64("lost", get_uint(etb[MRC_A_EV_LOST]));
			ju64("path", get_uint(etb[MRC_A_EV_PATH]));
		}
		jobj_end();
	} else {
		if (ts)
			timestamp();
		if (tb[MRC_A_CONN_EV]) {
			printf("%s id " CONN_ID_FMT " peer %s port %" PRIu64 " losses %" PRIu64
			       " srtt %" PRIu64 "us sent %" PRIu64 " lost %" PRIu64 "\n", ev,
			       get_uint(tb[MRC_A_CONN_LOCAL_ID]),
			       get_addr(tb[MRC_A_CONN_REMOTE_ADDR], rb, sizeof(rb)),
			       get_uint(etb[MRC_A_EV_PORT]), get_uint(etb[MRC_A_EV_LOSSES]),
			       get_uint(etb[MRC_A_EV_SRTT_US]), get_uint(etb[MRC_A_EV_SENT]),
			       get_uint(etb[MRC_A_EV_LOST]));
		} else {
			printf("%s id " CONN_ID_FMT " %s -> %s %s\n", ev,
			       get_uint(tb[MRC_A_CONN_LOCAL_ID]),
			       fmt_endpoint(tb[MRC_A_CONN_LOCAL_ADDR],
					    get_uint(tb[MRC_A_CONN_LOCAL_PORT]), lb, sizeof(lb)),
			       fmt_endpoint(tb[MRC_A_CONN_REMOTE_ADDR],
					    get_uint(tb[MRC_A_CONN_REMOTE_PORT]), rb, sizeof(rb)),
			       NAME_OF(state_names, get_uint(tb[MRC_A_CONN_STATE])));
		}
	}
	fflush(stdout);
	return 1;
}

static int cmd_monitor(int argc, char **argv)
{
	unsigned long count = 0, seen = 0;
	bool ts = false;
	int group;

	for (; argc > 0; argc--, argv++) {
		if (!strcmp(argv[0], "-t") || !strcmp(argv[0], "--timestamp"))
			ts = true;
		else if (!strcmp(argv[0], "count") && argc > 1)
			count = parse_u64("count", (argc--, *++argv), ULONG_MAX);
		else
			usage_error("unknown monitor argument \"%s\"", argv[0]);
	}
	nl_open();
	if (!events_group)
		die(EXIT_KERNEL, "the mrc family has no \"%s\" group", MRC_MCGRP_EVENTS);
	group = events_group;
	if (mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		die(EXIT_KERNEL, "joining the events group: %s%s%s", strerror(errno),
		    errno == EPERM ? "; " : "", errno == EPERM ? need_admin : "");
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));
		const struct nlmsghdr *m;
		int len = n;

		if (n < 0) {
			if (errno == ENOBUFS) {
				fprintf(stderr, "%s: events lost (receive buffer full)\n", prog);
				continue;
			}
			die(EXIT_KERNEL, "netlink receive: %s", strerror(errno));
		}
		for (m = (void *)rbuf; mnl_nlmsg_ok(m, len); m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_type != family_id)
				continue;
			seen += monitor_cb(m, ts);
			if (count && seen >= count)
				return 0;
		}
	}
}

/* ---- run: a program with libmrc-preload.so ------------------------------ */

#ifndef MRC_PRELOAD_DEFAULT
#define MRC_PRELOAD_DEFAULT "/usr/local/lib/mrc/libmrc-preload.so"
#endif

/* @path made absolute if it is readable, else NULL */
static const char *readable(const char *path)
{
	static char abs[PATH_MAX];

	return !access(path, R_OK) && realpath(path, abs) ? abs : NULL;
}

/*
 * The library: $MRC_PRELOAD_LIB, next to an installed mrcctl
 * (PREFIX/bin/../lib/mrc), in the build tree (tools/mrcctl/../preload),
 * then the default install path.
 */
static const char *preload_lib(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("MRC_PRELOAD_LIB"), *lib;
	char *dir;
	ssize_t n;

	if (env && *env) {
		lib = readable(env);
		if (!lib)
			die(EXIT_USAGE, "MRC_PRELOAD_LIB=%s: %s", env, strerror(errno));
		return lib;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		dir = dirname(exe);
		snprintf(path, sizeof(path), "%s/../lib/mrc/libmrc-preload.so", dir);
		lib = readable(path);
		if (lib)
			return lib;
		snprintf(path, sizeof(path), "%s/../preload/libmrc-preload.so", dir);
		lib = readable(path);
		if (lib)
			return lib;
	}
	lib = readable(MRC_PRELOAD_DEFAULT);
	if (!lib)
		die(EXIT_USAGE, "libmrc-preload.so not found (set MRC_PRELOAD_LIB)");
	return lib;
}

/* Appends the comma list @s to *@list, checking each entry with @one. */
static void run_filter(char **list, const char *what, const char *s,
		       bool (*one)(struct mrc_filter *, const char *))
{
	static struct mrc_filter f;	/* big: only the parse's verdict matters */
	char *bad = mrc_filter_parse(&f, s, one), *old = *list;

	if (bad)
		usage_error("invalid %s \"%s\"", what, bad);
	memset(&f, 0, sizeof(f));
	if (old) {
		if (asprintf(list, "%s,%s", old, s) < 0)
			die(EXIT_USAGE, "out of memory");
		free(old);
	} else {
		*list = strdup(s);
	}
}

static int cmd_run(int argc, char **argv)
{
	char *ports = NULL, *prefixes = NULL, *preload;
	const char *lib, *old;

	for (; argc > 0; argc--, argv++) {
		if (!strcmp(argv[0], "--")) {
			argc--, argv++;
			break;
		}
		if (argv[0][0] != '-')
			break;
		if (!strcmp(argv[0], "-v") || !strcmp(argv[0], "--verbose")) {
			setenv("MRC_PRELOAD_DEBUG", "1", 1);
			continue;
		}
		if (argc < 2)
			usage_error("option \"%s\" needs a value", argv[0]);
		if (!strcmp(argv[0], "-p") || !strcmp(argv[0], "--ports"))
			run_filter(&ports, "port or range", argv[1], mrc_filter_port);
		else if (!strcmp(argv[0], "-d") || !strcmp(argv[0], "--dest"))
			run_filter(&prefixes, "prefix", argv[1], mrc_filter_prefix);
		else
			usage_error("unknown run option \"%s\"", argv[0]);
		argc--, argv++;
	}
	if (argc == 0)
		usage_error("usage: %s run [ -p PORTS ] [ -d PREFIXES ] [ -v ] -- COMMAND [ ARGS ]",
			    prog);

	/* the flags are the whole filter: nothing inherited narrows it */
	if (ports)
		setenv("MRC_PRELOAD_PORTS", ports, 1);
	else
		unsetenv("MRC_PRELOAD_PORTS");
	if (prefixes)
		setenv("MRC_PRELOAD_PREFIXES", prefixes, 1);
	else
		unsetenv("MRC_PRELOAD_PREFIXES");
	lib = preload_lib();
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		if (asprintf(&preload, "%s:%s", lib, old) < 0)
			die(EXIT_USAGE, "out of memory");
		setenv("LD_PRELOAD", preload, 1);
	} else {
		setenv("LD_PRELOAD", lib, 1);
	}
	execvp(argv[0], argv);
	die(errno == ENOENT ? 127 : 126, "cannot run %s: %s", argv[0], strerror(errno));
	return 126;
}

/* ---- trace (per-EV path discovery) ------------------------------------ */

static const char *const trace_state_names[] = {
	[MRC_TRACE_STATE_NONE] = "none", [MRC_TRACE_STATE_RUNNING] = "running",
	[MRC_TRACE_STATE_REACHED] = "reached", [MRC_TRACE_STATE_UNREACHED] = "unreached",
};

static const char *const trace_attr_names[MRC_A_TRACE_MAX + 1] = {
	[MRC_A_TRACE_LOCAL_ID] = "id",
	[MRC_A_TRACE_MAX_TTL] = "max-ttl",
};

struct trace_state {
	bool running;
	bool quiet;	/* trace show -w: only note whether a trace runs */
};

static void trace_hop_print(const struct nlattr *nest)
{
	const struct nlattr *tb[TB_MAX];
	char ab[INET6_ADDRSTRLEN];

	parse_nest(nest, tb);
	if (json) {
		jobj(NULL);
		ju64("ttl", get_uint(tb[MRC_A_TRACE_HOP_TTL]));
		if (tb[MRC_A_TRACE_HOP_ADDR]) {
			jstr("addr", get_addr(tb[MRC_A_TRACE_HOP_ADDR], ab, sizeof(ab)));
			ju64("rtt_us", get_uint(tb[MRC_A_TRACE_HOP_RTT_US]));
		}
		jobj_end();
		return;
	}
	if (!tb[MRC_A_TRACE_HOP_ADDR]) {
		printf(" *");
		return;
	}
	printf(" %s (%.3f ms)", get_addr(tb[MRC_A_TRACE_HOP_ADDR], ab, sizeof(ab)),
	       get_uint(tb[MRC_A_TRACE_HOP_RTT_US]) / 1000.0);
}

static int trace_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[TB_MAX], *attr;
	struct trace_state *s = data;
	const struct nlattr *p = mnl_nlmsg_get_payload_offset(nlh, sizeof(struct genlmsghdr));
	size_t len = (const char *)nlh + nlh->nlmsg_len - (const char *)p;

	parse_msg(nlh, tb);
	s->running = tb[MRC_A_TRACE_RUNNING];
	if (s->quiet)
		return 0;
	if (json) {
		jobj(NULL);
		ju64("id", get_uint(tb[MRC_A_TRACE_LOCAL_ID]));
		jbool("running", s->running);
		jarr("evs");
	} else {
		printf("conn " CONN_ID_FMT "%s\n", get_uint(tb[MRC_A_TRACE_LOCAL_ID]),
		       s->running ? " (running)" : "");
	}
	mnl_attr_for_each_payload(p, len) {
		const struct nlattr *ev[TB_MAX], *h;
		uint64_t state, hops;

		if (mnl_attr_get_type(attr) != MRC_A_TRACE_EV)
			continue;
		parse_nest(attr, ev);
		state = get_uint(ev[MRC_A_TRACE_EV_STATE]);
		hops = get_uint(ev[MRC_A_TRACE_EV_HOPS]);
		if (json) {
			jobj(NULL);
			ju64("port", get_uint(ev[MRC_A_TRACE_EV_PORT]));
			jstr("state", NAME_OF(trace_state_names, state));
			jarr("hops");
		} else {
			printf("\tev %-5" PRIu64 " %-9s", get_uint(ev[MRC_A_TRACE_EV_PORT]),
			       NAME_OF(trace_state_names, state));
		}
		mnl_attr_for_each_nested(h, attr)
			if (mnl_attr_get_type(h) == MRC_A_TRACE_EV_HOP)
				trace_hop_print(h);
		if (json) {
			jarr_end();
			if (state == MRC_TRACE_STATE_REACHED)
				ju64("peer_hop", hops + 1);
			jobj_end();
		} else {
			if (state == MRC_TRACE_STATE_REACHED)
				printf(" -> peer (hop %" PRIu64 ")", hops + 1);
			printf("\n");
		}
	}
	if (json) {
		jarr_end();
		jobj_end();
	}
	return 0;
}

static int cmd_trace(int argc, char **argv)
{
	struct trace_state s = {};
	struct nlmsghdr *nlh;
	bool start = false, wait = false;
	unsigned long max_ttl = 0;
	int waited_ms;
	uint32_t id;

	if (argc > 0 && (matches(argv[0], "start") || matches(argv[0], "show"))) {
		start = matches(argv[0], "start");
		argc--, argv++;
	}
	if (argc < 1)
		usage_error("trace needs a connection id (conn show prints them)");
	id = parse_conn_id(argv[0]);
	for (argc--, argv++; argc > 0; argc--, argv++) {
		if (start && !strcmp(argv[0], "max-ttl") && argc > 1) {
			char *end;

			max_ttl = strtoul(argv[1], &end, 10);
			if (*end || max_ttl < 1 || max_ttl > 8)
				usage_error("max-ttl takes 1..8 (got \"%s\")", argv[1]);
			argc--, argv++;
		} else if (!start && (!strcmp(argv[0], "-w") || matches(argv[0], "wait"))) {
			wait = true;
		} else {
			usage_error("unknown trace %s argument \"%s\"", start ? "start" : "show",
				    argv[0]);
		}
	}
	nl_open();
	if (start) {
		nlh = req(MRC_CMD_EV_TRACE, NLM_F_ACK, trace_attr_names, MRC_A_TRACE_MAX + 1);
		mnl_attr_put_u32(nlh, MRC_A_TRACE_LOCAL_ID, id);
		if (max_ttl)
			mnl_attr_put_u8(nlh, MRC_A_TRACE_MAX_TTL, max_ttl);
		talk(nlh, NULL, NULL);
		return 0;
	}
	/* -w: until no trace runs, 60 s at most (a probe waits 1 s at most) */
	s.quiet = wait;
	for (waited_ms = 0;; waited_ms += 100) {
		nlh = req(MRC_CMD_EV_TRACE_GET, NLM_F_ACK, trace_attr_names, MRC_A_TRACE_MAX + 1);
		mnl_attr_put_u32(nlh, MRC_A_TRACE_LOCAL_ID, id);
		talk(nlh, trace_cb, &s);
		if (!s.quiet)
			break;
		if (!s.running || waited_ms >= 60000)
			s.quiet = false;
		else
			usleep(100000);
	}
	return s.running && wait ? EXIT_FAILURE : 0;
}

/* ---- main --------------------------------------------------------------- */

/* -o FORMAT: text (the default), json (as -j) or prometheus */
static void set_output(const char *fmt)
{
	json = false;
	prom = false;
	if (!strcmp(fmt, "json"))
		json = true;
	else if (strlen(fmt) >= 4 && matches(fmt, "prometheus"))
		prom = true;
	else if (strcmp(fmt, "text"))
		usage_error("unknown output format \"%s\"; use text, json or prometheus", fmt);
}

/*
 * "-o FORMAT" may follow the object too (mrcctl stats -o prometheus): taken
 * out of the command's arguments here, so that no command parses it.
 */
static int take_output_opt(int argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") && strcmp(argv[i], "--output")) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 >= argc)
			usage_error("option \"%s\" needs a format", argv[i]);
		set_output(argv[++i]);
	}
	return n;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [OPTIONS] OBJECT [COMMAND [ARGS]]\n"
		"OPTIONS := { -j[son] | -p[retty] | -o[utput] FORMAT | -n[etns] NETNS | -h[elp] |\n"
		"             -V[ersion] }\n"
		"OBJECT and COMMAND :=\n"
		"  info\n"
		"  config [ show ]\n"
		"  config set KEY VALUE [ KEY VALUE ]...\n"
		"  conn [ show ] [ -e | evs ] [ --per-conn ] [ id ID ]\n"
		"  paths [ --per-ev ] [ PEER ]\n"
		"  policy [ show ]\n"
		"  policy add [ peer ADDR ] ports MIN[-MAX] { exclude | pin }\n"
		"  policy del [ id ] ID\n"
		"  policy flush\n"
		"  plane [ show ]\n"
		"  plane { add | del } ADDR\n"
		"  stats [ -a ] [ -z ] [ -s ] [ -r ]\n"
		"  monitor [ -t ] [ count N ]\n"
		"  trace start ID [ max-ttl N ]\n"
		"  trace [ show ] ID [ -w | wait ]\n"
		"  run [ -p PORTS ] [ -d PREFIXES ] [ -v ] -- COMMAND [ ARGS ]\n"
		"FORMAT := { text | json | prometheus } (prometheus: conn show, paths, stats;\n"
		"           -o may follow OBJECT too)\n"
		"KEY := { udp-port | ev-count | ev-port-min | ev-port-max | retire-losses |\n"
		"         ecn | redundancy | probe-interval-ms | min-rto-us | max-rto-us |\n"
		"         init-cwnd | user-timeout-ms | dctcp-shift | delay-target-us |\n"
		"         urgent-dscp | burst-max }\n",
		prog);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool prom;		/* has -o prometheus */
} cmds[] = {
	{ "info", cmd_info, false },
	{ "config", cmd_config, false },
	{ "conn", cmd_conn, true },
	{ "connections", cmd_conn, true },
	{ "paths", cmd_paths, true },
	{ "policy", cmd_policy, false },
	{ "plane", cmd_plane, false },
	{ "stats", cmd_stats, true },
	{ "monitor", cmd_monitor, false },
	{ "trace", cmd_trace, false },
};

int main(int argc, char **argv)
{
	const char *cmd_names[ARRAY_SIZE(cmds)];
	int cmd_alias_of[ARRAY_SIZE(cmds)];
	unsigned int i, j;
	int c;

	for (argc--, argv++; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
		const char *o = argv[0] + (argv[0][1] == '-' ? 2 : 1);

		if (!strcmp(o, "j") || !strcmp(o, "json")) {
			json = true;
		} else if (!strcmp(o, "o") || !strcmp(o, "output")) {
			if (argc < 2)
				usage_error("option \"%s\" needs a format", argv[0]);
			set_output(argv[1]);
			argc--, argv++;
		} else if (!strcmp(o, "p") || !strcmp(o, "pretty")) {
			pretty = true;
		} else if (!strcmp(o, "n") || !strcmp(o, "netns")) {
			if (argc < 2)
				usage_error("option \"%s\" needs a namespace name", argv[0]);
			netns = argv[1];
			argc--, argv++;
		} else if (!strcmp(o, "h") || !strcmp(o, "help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(o, "V") || !strcmp(o, "version")) {
			printf("%s (mrc genetlink family version %d)\n", prog, MRC_FAMILY_VERSION);
			return 0;
		} else {
			usage_error("unknown option \"%s\"; try \"%s -h\"", argv[0], prog);
		}
	}
	if (argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	/* no netlink: it only sets up the environment and runs the command */
	if (!strcmp(argv[0], "run"))
		return cmd_run(argc - 1, argv + 1);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {	/* conn, connections: one object */
		cmd_names[i] = cmds[i].name;
		for (j = 0; cmds[j].fn != cmds[i].fn; j++)
			;
		cmd_alias_of[i] = j;
	}
	c = lookup("object", argv[0], cmd_names, cmd_alias_of, ARRAY_SIZE(cmds));
	if (c < 0)
		usage_error("unknown object \"%s\"; try \"%s help\"", argv[0], prog);
	if (argc > 1 && !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	argc = take_output_opt(argc - 1, argv + 1);
	if (prom && !cmds[c].prom)
		usage_error("%s has no prometheus output (stats, paths and conn show have)",
			    cmds[c].name);
	/* each command parses its arguments, then opens netlink (nl_open) */
	return cmds[c].fn(argc, argv + 1);
}
