// SPDX-License-Identifier: GPL-2.0-only
/*
 * MRC: protocol memory accounting.
 *
 * As for TCP and UDP, every byte MRC queues (send queue, receive and
 * reorder queues) is charged to its socket's forward allocation and to one
 * protocol-wide pool, limited by net.mrc.mem (pages: below the first value
 * no limit applies, above the second MRC is under pressure, above the third
 * nothing new is charged).  So thousands of connections with slow readers
 * cannot take the machine's memory, and /proc/net/protocols shows what MRC
 * holds.  The pool is global, like tcp_mem; the knob lives in the initial
 * namespace.
 */
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/percpu_counter.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "protocol.h"
#include "autotune.h"

atomic_long_t mrc_memory_allocated ____cacheline_aligned_in_smp;
DEFINE_PER_CPU(int, mrc_memory_per_cpu_fw_alloc);
struct percpu_counter mrc_sockets_allocated;
unsigned long mrc_memory_pressure __read_mostly;
long mrc_mem[3] __read_mostly;
/*
 * net.mrc.wmem / rmem, as tcp_wmem / tcp_rmem: what a socket may always
 * queue below the pool's hard limit, its initial buffer (net.core's
 * defaults), and how far autotuning grows it (TCP's maxima).
 */
int mrc_wmem[3] __read_mostly = { 4096, 212992, 4194304 };
int mrc_rmem[3] __read_mostly = { 4096, 212992, 6291456 };

static struct ctl_table_header *mrc_sysctl_header;
/* an hour: an orphan past that is no peer closing late */
static int mrc_fin_timeout_max = 3600;

/* net.mrc.orphans: the orphans alive now (read only) */
static int mrc_proc_orphans(const struct ctl_table *table, int write, void *buffer,
			    size_t *lenp, loff_t *ppos)
{
	int n = atomic_read(&mrc_orphan_count);
	struct ctl_table tmp = { .data = &n, .maxlen = sizeof(n) };

	return proc_dointvec(&tmp, write, buffer, lenp, ppos);
}

static struct ctl_table mrc_sysctl_table[] = {
	{
		.procname	= "mem",
		.data		= &mrc_mem,
		.maxlen		= sizeof(mrc_mem),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
	},
	{
		.procname	= "wmem",
		.data		= &mrc_wmem,
		.maxlen		= sizeof(mrc_wmem),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
	},
	{
		.procname	= "rmem",
		.data		= &mrc_rmem,
		.maxlen		= sizeof(mrc_rmem),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
	},
	{
		.procname	= "max_orphans",
		.data		= &mrc_max_orphans,
		.maxlen		= sizeof(mrc_max_orphans),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
	},
	{
		.procname	= "fin_timeout",
		.data		= &mrc_fin_timeout,
		.maxlen		= sizeof(mrc_fin_timeout),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &mrc_fin_timeout_max,
	},
	{
		.procname	= "orphans",
		.maxlen		= sizeof(int),
		.mode		= 0444,
		.proc_handler	= mrc_proc_orphans,
	},
};

void mrc_enter_memory_pressure(struct sock *sk)
{
	if (!READ_ONCE(mrc_memory_pressure) && !xchg(&mrc_memory_pressure, 1))
		mrc_count(mrc_sk(sk)->mn, MRC_C_MEM_PRESSURE);
}

void mrc_leave_memory_pressure(struct sock *sk)
{
	if (READ_ONCE(mrc_memory_pressure))
		WRITE_ONCE(mrc_memory_pressure, 0);
}

/**
 * mrc_charge_forced() - charge @size bytes that must be queued anyway
 * @sk: socket (lock held)
 * @size: truesize of the skb about to be charged
 *
 * One segment per socket is always accepted, as TCP forces its first send
 * and its FIN, so that a socket with nothing queued never waits for memory
 * no event will free.  If the pool refuses, the charge runs the forward
 * allocation into debt (memcg charging is not exported to modules); the
 * uncharge repays it, so the error is at most one segment per socket.
 */
void mrc_charge_forced(struct sock *sk, int size)
{
	if (!sk_wmem_schedule(sk, size))
		mrc_count(mrc_sk(sk)->mn, MRC_C_MEM_FORCED);
	sk_mem_charge(sk, size);
}

/**
 * mrc_write_queue_purge() - drop every queued segment and its charge
 * @sk: socket (lock held, or no longer reachable)
 */
void mrc_write_queue_purge(struct sock *sk)
{
	__skb_queue_purge(&sk->sk_write_queue);
	sk_mem_uncharge(sk, sk->sk_wmem_queued);
	sk->sk_wmem_queued = 0;
}

/**
 * mrc_wmem_free_skb() - free an acknowledged segment and uncharge it
 * @sk: socket (lock held)
 * @skb: segment already unlinked from the write queue
 */
void mrc_wmem_free_skb(struct sock *sk, struct sk_buff *skb)
{
	sock_owned_by_me(sk);
	sk_wmem_queued_add(sk, -skb->truesize);
	sk_mem_uncharge(sk, skb->truesize);
	consume_skb(skb);
}

/* An empty skb's truesize: alloc_skb(0) takes a small head, not SKB_TRUESIZE(0) */
static unsigned int mrc_empty_skb_truesize __read_mostly = SKB_TRUESIZE(0);

/* What a segment queued in a page fragment costs: its skb, header room and bytes. */
size_t mrc_frag_seg_truesize(size_t len)
{
	return READ_ONCE(mrc_empty_skb_truesize) + sizeof(struct mrchdr) + len;
}

/**
 * mrc_rcv_space_adjust() - grow the receive buffer with the reader's rate
 * @msk: connection (socket lock held)
 * @copied: bytes the reader just took
 *
 * Dynamic right-sizing, as TCP's tcp_rcv_space_adjust(): once an RTT, a
 * reader that took more than ever before gets a buffer for two RTTs of it
 * (mrc_rcvbuf_grow()), up to net.mrc.rmem[2], so that the window is not
 * what limits a fast path.  Not after SO_RCVBUF, which fixes the buffer.
 * The RTT is the connection's own, or, for a receiver that sends no data,
 * that of its tsval echoed in the data it receives.
 */
void mrc_rcv_space_adjust(struct mrc_sock *msk, int copied)
{
	struct sock *sk = &msk->sk;
	u32 rtt = msk->rtt.srtt_us ?: msk->rcv_rtt_us;
	u64 now = mrc_clock_us();
	u32 buf;

	sock_owned_by_me(sk);
	msk->rcvq_copied += copied;
	if (!msk->rcvq_time_us)
		msk->rcvq_time_us = now;
	if (!rtt || now - msk->rcvq_time_us < rtt)
		return;
	if (!(sk->sk_userlocks & SOCK_RCVBUF_LOCK)) {
		buf = mrc_rcvbuf_grow(msk->rcvq_copied,
				      msk->rcvq_space ?: MRC_RCVQ_SPACE_SEGS * msk->mss, msk->mss,
				      msk->rcv_ratio, sk->sk_rcvbuf, READ_ONCE(mrc_rmem[2]));
		if (buf > sk->sk_rcvbuf)
			WRITE_ONCE(sk->sk_rcvbuf, buf);
	}
	/* as TCP's rcvq_space: never below the initial window, so growth is bounded */
	msk->rcvq_space = max3(msk->rcvq_space, msk->rcvq_copied, MRC_RCVQ_SPACE_SEGS * msk->mss);
	msk->rcvq_copied = 0;
	msk->rcvq_time_us = now;
}

/**
 * mrc_sndbuf_expand() - grow the send buffer with the congestion window
 * @msk: connection (socket lock held, or bh-locked and not owned)
 *
 * As TCP's tcp_sndbuf_expand(): room for two windows of full segments, up
 * to net.mrc.wmem[2], so that the writer keeps a growing window fed.  The
 * window is the one the sender can use: the congestion window, or the
 * peer's if smaller (a slow reader's sender queues no more than it can
 * send soon; the congestion window grows while the peer's limits it).  Not
 * after SO_SNDBUF, nor under memory pressure.
 */
void mrc_sndbuf_expand(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;
	u32 wnd, buf;

	/* called per ACK: no division unless the usable window may have grown */
	if (msk->cc.cwnd <= msk->sndbuf_wnd || (sk->sk_userlocks & SOCK_SNDBUF_LOCK))
		return;
	wnd = min(msk->cc.cwnd, msk->snd_wnd / max(msk->mss, 1U));
	if (wnd <= msk->sndbuf_wnd || sk_under_memory_pressure(sk))
		return;
	msk->sndbuf_wnd = wnd;
	buf = mrc_sndbuf_want(wnd, mrc_frag_seg_truesize(msk->mss), sk->sk_sndbuf,
			      READ_ONCE(mrc_wmem[2]));
	if (buf > sk->sk_sndbuf) {
		WRITE_ONCE(sk->sk_sndbuf, buf);
		msk->sndbuf_init = buf;
	}
}

int __init mrc_mem_init(void)
{
	unsigned long limit = max(nr_free_buffer_pages() / 8, 128UL);
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);
	int err;

	if (skb) {
		mrc_empty_skb_truesize = skb->truesize;
		consume_skb(skb);
	}

	/* udp_mem's defaults: an eighth of the buffer pages at pressure */
	mrc_mem[0] = limit / 4 * 3;
	mrc_mem[1] = limit;
	mrc_mem[2] = mrc_mem[0] * 2;
	err = percpu_counter_init(&mrc_sockets_allocated, 0, GFP_KERNEL);
	if (err)
		return err;
	mrc_sysctl_header = register_net_sysctl_sz(&init_net, "net/mrc", mrc_sysctl_table,
						   ARRAY_SIZE(mrc_sysctl_table));
	if (!mrc_sysctl_header) {
		percpu_counter_destroy(&mrc_sockets_allocated);
		return -ENOMEM;
	}
	return 0;
}

void mrc_mem_exit(void)
{
	unregister_net_sysctl_table(mrc_sysctl_header);
	percpu_counter_destroy(&mrc_sockets_allocated);
}
