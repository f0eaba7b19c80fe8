// SPDX-License-Identifier: GPL-2.0-only
/*
 * MRC: module entry, parameters and the AF_MRC socket family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/timekeeping.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <kunit/visibility.h>
#include <uapi/linux/mrc_netlink.h>

#include "protocol.h"

int mrc_family_nr = AF_MRC;
EXPORT_SYMBOL_IF_KUNIT(mrc_family_nr);
module_param_named(family, mrc_family_nr, int, 0444);
MODULE_PARM_DESC(family, "address family number to register (default 18)");

unsigned int mrc_udp_port = MRC_DEFAULT_UDP_PORT;
module_param_named(udp_port, mrc_udp_port, uint, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of the tunnel sockets (default 4797)");

/*
 * Parameters writable at run time are checked as netlink's config-set checks
 * the same settings: a new namespace copies them, so a bad value (init_cwnd=0
 * stalls every connection) is refused with EINVAL at the write.
 */
#define MRC_PARAM_RANGE(name, lo, hi)						\
static int mrc_param_set_##name(const char *val, const struct kernel_param *kp)	\
{										\
	return param_set_uint_minmax(val, kp, lo, hi);				\
}										\
static const struct kernel_param_ops mrc_param_ops_##name = {			\
	.set	= mrc_param_set_##name,						\
	.get	= param_get_uint,						\
}

MRC_PARAM_RANGE(min_rto_us, 100, MRC_MAX_RTO_US);
MRC_PARAM_RANGE(init_cwnd, 1, 65536);
MRC_PARAM_RANGE(ev_count, 1, MRC_MAX_EVS);
MRC_PARAM_RANGE(redundancy, 1, 4);
MRC_PARAM_RANGE(burst_max, 1, MRC_BURST_MAX_SEGS);

unsigned int mrc_min_rto_us = 5000;
module_param_cb(min_rto_us, &mrc_param_ops_min_rto_us, &mrc_min_rto_us, 0644);
MODULE_PARM_DESC(min_rto_us, "minimum retransmission timeout, microseconds (100..2000000)");

unsigned int mrc_init_cwnd = 16;
module_param_cb(init_cwnd, &mrc_param_ops_init_cwnd, &mrc_init_cwnd, 0644);
MODULE_PARM_DESC(init_cwnd, "initial congestion window, packets (1..65536)");

unsigned int mrc_default_evs = 64;
module_param_cb(ev_count, &mrc_param_ops_ev_count, &mrc_default_evs, 0644);
MODULE_PARM_DESC(ev_count, "entropy values (UDP source ports) per connection (1..256)");

unsigned int mrc_redundancy = 1;
module_param_cb(redundancy, &mrc_param_ops_redundancy, &mrc_redundancy, 0644);
MODULE_PARM_DESC(redundancy, "copies of high-priority packets in new namespaces (1..4)");

unsigned int mrc_burst_max = MRC_BURST_MAX_SEGS;
module_param_cb(burst_max, &mrc_param_ops_burst_max, &mrc_burst_max, 0644);
MODULE_PARM_DESC(burst_max, "most packets sent back to back on one EV in new namespaces (1: spray every packet; ..44)");

/*
 * TEST KNOB, not for production: MRC's clock reads this many microseconds
 * when the module loads (0: boot time, the default).  The selftests start it
 * shortly before 2^31 and 2^32 us, so that both wraps of a 32-bit
 * microsecond clock happen while connections run; it also zeroes every
 * connection's timestamp offset (mrc_test_clock), so that the wire's tsval
 * wraps there too, and clock_us shows the clock.  Read-only: the clock
 * never jumps under a live connection.
 */
static unsigned long long mrc_test_clock_start_us;
module_param_named(test_clock_start_us, mrc_test_clock_start_us, ullong, 0444);
MODULE_PARM_DESC(test_clock_start_us,
		 "TEST KNOB: value of MRC's microsecond clock at load (0: boot time)");

/* Added to boot time in microseconds to make MRC's clock (set once at load) */
u64 mrc_clock_offset_us __read_mostly;

/*
 * Set with the knob: every connection's timestamp offset is 0, so the
 * 32-bit tsval on the wire is MRC's clock and wraps where the knob put it
 * (a random offset would move the wrap anywhere in 71 minutes).
 */
bool mrc_test_clock __read_mostly;

/* clock_us (read-only): MRC's clock now, for the selftests to see a wrap */
static int mrc_param_get_clock_us(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", mrc_clock_us());
}

static const struct kernel_param_ops mrc_param_ops_clock_us = {
	.get	= mrc_param_get_clock_us,
};
module_param_cb(clock_us, &mrc_param_ops_clock_us, NULL, 0444);
MODULE_PARM_DESC(clock_us, "MRC's microsecond clock now (read-only)");

struct proto mrc_proto = {
	.name		= "MRC",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct mrc_sock),
	.backlog_rcv	= mrc_backlog_rcv,
	.release_cb	= mrc_release_cb,
	.keepalive	= mrc_keepalive,
	.enter_memory_pressure	= mrc_enter_memory_pressure,
	.leave_memory_pressure	= mrc_leave_memory_pressure,
	.memory_allocated	= &mrc_memory_allocated,
	.per_cpu_fw_alloc	= &mrc_memory_per_cpu_fw_alloc,
	.sockets_allocated	= &mrc_sockets_allocated,
	.memory_pressure	= &mrc_memory_pressure,
	.sysctl_mem	= mrc_mem,
	.sysctl_wmem	= &mrc_wmem[0],
	.sysctl_rmem	= &mrc_rmem[0],
};

static int mrc_create(struct net *net, struct socket *sock, int protocol, int kern)
{
	struct mrc_sock *msk;
	struct sock *sk;

	if (protocol != 0)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_STREAM && sock->type != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, mrc_family_nr, GFP_KERNEL, &mrc_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock->ops = &mrc_stream_ops;
	sock->state = SS_UNCONNECTED;
	/* SOL_SOCKET reaches mrc_setsockopt() first: SO_REUSEPORT is ours */
	set_bit(SOCK_CUSTOM_SOCKOPT, &sock->flags);
	sock_init_data(sock, sk);
	msk = mrc_sk(sk);
	msk->mn = mrc_pernet(net);
	mrc_sock_init(msk);
	return 0;
}

static struct net_proto_family mrc_family_ops = {
	.create	= mrc_create,
	.owner	= THIS_MODULE,
};

static int __init mrc_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct mrc_skb_cb) > sizeof_field(struct sk_buff, cb));
	if (mrc_family_nr <= 0 || mrc_family_nr >= NPROTO) {
		pr_err("family %d out of range 1..%d\n", mrc_family_nr, NPROTO - 1);
		return -EINVAL;
	}
	if (!mrc_udp_port || mrc_udp_port > 65535 || !mrc_default_evs ||
	    mrc_default_evs > MRC_MAX_EVS || !mrc_init_cwnd || !mrc_redundancy ||
	    mrc_redundancy > 4 || !mrc_burst_max || mrc_burst_max > MRC_BURST_MAX_SEGS)
		return -EINVAL;
	mrc_family_ops.family = mrc_family_nr;
	if (mrc_test_clock_start_us) {
		mrc_clock_offset_us = mrc_test_clock_start_us -
				      div_u64(ktime_get_ns(), NSEC_PER_USEC);
		mrc_test_clock = true;
		pr_info("test knob: clock starts at %llu us\n", mrc_test_clock_start_us);
	}

	err = mrc_mem_init();
	if (err)
		return err;
	err = proto_register(&mrc_proto, 1);
	if (err)
		goto err_mem;
	err = mrc_pernet_init();
	if (err)
		goto err_proto;
	err = mrc_nl_init();
	if (err)
		goto err_pernet;
	err = mrc_plane_init();
	if (err)
		goto err_nl;
	err = sock_register(&mrc_family_ops);
	if (err) {
		pr_err("cannot register family %d: %d\n", mrc_family_nr, err);
		goto err_plane;
	}
	pr_info("AF_MRC registered as family %d, UDP port %u\n", mrc_family_nr, mrc_udp_port);
	return 0;

err_plane:
	mrc_plane_exit();
err_nl:
	mrc_nl_exit();
err_pernet:
	mrc_pernet_exit();
err_proto:
	proto_unregister(&mrc_proto);
err_mem:
	mrc_mem_exit();
	return err;
}

static void __exit mrc_exit(void)
{
	sock_unregister(mrc_family_nr);
	mrc_plane_exit();
	mrc_nl_exit();
	mrc_pernet_exit();
	proto_unregister(&mrc_proto);
	mrc_mem_exit();
}

module_init(mrc_init);
module_exit(mrc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MRC: multipath reliable connection sockets");
MODULE_ALIAS_NETPROTO(AF_MRC);
/* mrcctl (or any genetlink user) resolving the "mrc" family loads the module */
MODULE_ALIAS_GENL_FAMILY(MRC_FAMILY_NAME);
