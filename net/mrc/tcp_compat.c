// SPDX-License-Identifier: GPL-2.0-only
/*
 * TCP compatibility: the SOL_TCP options a TCP program sets and reads,
 * mapped onto MRC's own state, so that swapping the address family (by
 * hand or with the preload shim) is all a program needs.  Options that
 * make no sense for MRC fail as TCP's unknown ones do (ENOPROTOOPT).
 */
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "protocol.h"

/* What TCP_CONGESTION reads, and the only name it accepts */
static const char mrc_ca_name[TCP_CA_NAME_MAX] = "mrc";

static u8 mrc_tcp_state(u8 state)
{
	switch (state) {
	case MRC_STATE_LISTEN:
		return TCP_LISTEN;
	case MRC_STATE_SYN_SENT:
		return TCP_SYN_SENT;
	case MRC_STATE_ESTABLISHED:
		return TCP_ESTABLISHED;
	case MRC_STATE_FIN_WAIT:
		return TCP_FIN_WAIT1;
	case MRC_STATE_CLOSE_WAIT:
		return TCP_CLOSE_WAIT;
	case MRC_STATE_CLOSING:
		return TCP_CLOSING;
	default:
		return TCP_CLOSE;
	}
}

static u32 mrc_ms_since(unsigned long stamp)
{
	return stamp ? jiffies_to_msecs(jiffies - stamp) : 0;
}

/**
 * mrc_fill_tcp_info() - struct tcp_info from MRC's state (TCP_INFO)
 * @msk: connection (socket lock held)
 * @info: zeroed by the caller
 *
 * Packets are MSS-sized segments as TCP's are; what TCP keeps and MRC does
 * not (delivery rate, pacing, receive-space estimates) reads 0.
 */
static void mrc_fill_tcp_info(struct mrc_sock *msk, struct tcp_info *info)
{
	sock_owned_by_me(&msk->sk);
	info->tcpi_state = mrc_tcp_state(msk->state);
	info->tcpi_ca_state = msk->cc.in_recovery ? TCP_CA_Recovery : TCP_CA_Open;
	info->tcpi_retransmits = msk->rto_streak;
	info->tcpi_probes = msk->keepalive_probes;
	info->tcpi_backoff = msk->backoff;
	info->tcpi_options = TCPI_OPT_TIMESTAMPS | TCPI_OPT_SACK;
	if (msk->state == MRC_STATE_LISTEN || msk->state == MRC_STATE_CLOSED) {
		info->tcpi_unacked = msk->sk.sk_ack_backlog;
		info->tcpi_sacked = msk->sk.sk_max_ack_backlog;
		return;
	}
	info->tcpi_rto = mrc_rtt_rto(&msk->rtt, msk->backoff);
	info->tcpi_snd_mss = msk->mss;
	info->tcpi_rcv_mss = msk->mss;
	info->tcpi_advmss = msk->mss;
	info->tcpi_unacked = msk->snd_nxt - msk->snd_una;
	info->tcpi_last_data_recv = mrc_ms_since(msk->rcv_stamp);
	info->tcpi_last_ack_recv = mrc_ms_since(msk->progress_stamp);
	info->tcpi_rtt = msk->rtt.srtt_us;
	info->tcpi_rttvar = msk->rtt.rttvar_us;
	info->tcpi_snd_ssthresh = msk->cc.ssthresh;
	info->tcpi_snd_cwnd = msk->cc.cwnd;
	info->tcpi_reordering = 3;
	info->tcpi_total_retrans = msk->stats.retransmits;
	info->tcpi_bytes_acked = msk->stats.bytes_acked;
	info->tcpi_bytes_received = msk->stats.bytes_received;
	info->tcpi_segs_out = msk->stats.packets_sent;
	info->tcpi_segs_in = msk->stats.packets_received;
	info->tcpi_data_segs_out = msk->stats.packets_sent;
	info->tcpi_data_segs_in = msk->stats.packets_received;
	info->tcpi_notsent_bytes = READ_ONCE(msk->sk.sk_wmem_queued);
	info->tcpi_min_rtt = msk->rtt.min_rtt_us;
	info->tcpi_bytes_sent = msk->stats.bytes_sent;
	info->tcpi_snd_wnd = msk->snd_wnd;
	info->tcpi_rcv_wnd = msk->adv_wnd;
}

static int mrc_tcp_keep_set(struct mrc_sock *msk, int optname, int val)
{
	switch (optname) {
	case TCP_KEEPIDLE:
		if (val < 1 || val > MAX_TCP_KEEPIDLE)
			return -EINVAL;
		msk->keepidle = val * HZ;
		break;
	case TCP_KEEPINTVL:
		if (val < 1 || val > MAX_TCP_KEEPINTVL)
			return -EINVAL;
		msk->keepintvl = val * HZ;
		break;
	case TCP_KEEPCNT:
		if (val < 1 || val > MAX_TCP_KEEPCNT)
			return -EINVAL;
		msk->keepcnt = val;
		break;
	}
	/* as tcp_sock_set_keepidle_locked(): a running keepalive follows at once */
	if (optname == TCP_KEEPIDLE)
		mrc_keepalive_arm(msk);
	return 0;
}

/**
 * mrc_tcp_setsockopt() - setsockopt(SOL_TCP) on an AF_MRC socket
 * @sk: the socket (not locked)
 * @optname: TCP_*
 * @optval: the value
 * @optlen: its length
 *
 * Return: 0, or TCP's errno for the same call.
 */
int mrc_tcp_setsockopt(struct sock *sk, int optname, sockptr_t optval, unsigned int optlen)
{
	struct mrc_sock *msk = mrc_sk(sk);
	char name[TCP_CA_NAME_MAX];
	int val, err = 0;

	if (optname == TCP_CONGESTION) {
		/* one congestion control: its own name is accepted, no other */
		if (optlen < 1)
			return -EINVAL;
		val = strncpy_from_sockptr(name, optval, min_t(long, TCP_CA_NAME_MAX - 1, optlen));
		if (val < 0)
			return -EFAULT;
		name[val] = 0;
		return strcmp(name, mrc_ca_name) ? -ENOENT : 0;
	}
	switch (optname) {
	case TCP_NODELAY:
	case TCP_CORK:
	case TCP_QUICKACK:
	case TCP_USER_TIMEOUT:
	case TCP_KEEPIDLE:
	case TCP_KEEPINTVL:
	case TCP_KEEPCNT:
		break;
	default:
		return -ENOPROTOOPT;
	}
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	lock_sock(sk);
	switch (optname) {
	case TCP_NODELAY:
		/* as TCP: setting it sends what waits, a corked tail too */
		msk->nodelay = !!val;
		if (val)
			__mrc_push(msk, true);
		break;
	case TCP_CORK:
		msk->cork = !!val;
		if (!val) {
			msk->more = 0;
			__mrc_push(msk, true);
		}
		break;
	case TCP_QUICKACK:
		/* a hint, as TCP's: what waits for the delayed ACK goes now */
		if (val && msk->ack_pending && msk->remote_id && msk->state != MRC_STATE_DONE)
			mrc_send_ack(msk);
		break;
	case TCP_USER_TIMEOUT:
		/* TCP's 0 is its default (tcp_retries2), not "never": ours */
		if (val < 0)
			err = -EINVAL;
		else
			msk->user_timeout_ms = val ?: READ_ONCE(msk->mn->cfg.user_timeout_ms);
		break;
	default:
		err = mrc_tcp_keep_set(msk, optname, val);
	}
	release_sock(sk);
	return err;
}

/**
 * mrc_tcp_getsockopt() - getsockopt(SOL_TCP) on an AF_MRC socket
 * @sk: the socket (not locked)
 * @optname: TCP_*
 * @optval: user buffer
 * @optlen: user length, in and out
 *
 * Return: 0, or TCP's errno for the same call.
 */
int mrc_tcp_getsockopt(struct sock *sk, int optname, char __user *optval, int __user *optlen)
{
	struct mrc_sock *msk = mrc_sk(sk);
	struct tcp_info info;
	int len, val;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	switch (optname) {
	case TCP_INFO:
		memset(&info, 0, sizeof(info));
		lock_sock(sk);
		mrc_fill_tcp_info(msk, &info);
		release_sock(sk);
		len = min_t(int, len, sizeof(info));
		if (put_user(len, optlen) || copy_to_user(optval, &info, len))
			return -EFAULT;
		return 0;
	case TCP_CONGESTION:
		len = min_t(int, len, TCP_CA_NAME_MAX);
		if (put_user(len, optlen) || copy_to_user(optval, mrc_ca_name, len))
			return -EFAULT;
		return 0;
	case TCP_QUICKACK:
	case TCP_NODELAY:
	case TCP_CORK:
	case TCP_MAXSEG:
	case TCP_USER_TIMEOUT:
	case TCP_KEEPIDLE:
	case TCP_KEEPINTVL:
	case TCP_KEEPCNT:
		break;
	default:
		return -ENOPROTOOPT;
	}
	lock_sock(sk);
	switch (optname) {
	case TCP_QUICKACK:
		val = 0;	/* no quick-ACK mode: ACKs are delayed as TCP's after it */
		break;
	case TCP_NODELAY:
		val = msk->nodelay;
		break;
	case TCP_CORK:
		val = msk->cork;
		break;
	case TCP_MAXSEG:
		val = msk->mss;
		break;
	case TCP_USER_TIMEOUT:
		val = msk->user_timeout_ms;
		break;
	case TCP_KEEPIDLE:
		val = mrc_keepidle(msk) / HZ;
		break;
	case TCP_KEEPINTVL:
		val = mrc_keepintvl(msk) / HZ;
		break;
	default:
		val = mrc_keepcnt(msk);
	}
	release_sock(sk);
	len = min_t(int, len, sizeof(int));
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}
