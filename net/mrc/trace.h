/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of MRC (mrc:*), for perf, bpftrace and tracefs: what a
 * connection decides about its paths and its window, each with the
 * connection's local ID (mrcctl conn show) to tell connections apart.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mrc

#if !defined(_MRC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MRC_TRACE_H

#include <linux/tracepoint.h>

TRACE_DEFINE_ENUM(MRC_LOSS_SAME_EV);
TRACE_DEFINE_ENUM(MRC_LOSS_RACK);
TRACE_DEFINE_ENUM(MRC_LOSS_RTO);
TRACE_DEFINE_ENUM(MRC_LOSS_PATH);
TRACE_DEFINE_ENUM(MRC_CWND_LOSS);
TRACE_DEFINE_ENUM(MRC_CWND_RTO);
TRACE_DEFINE_ENUM(MRC_CWND_UNDO);

TRACE_EVENT(mrc_state,
	TP_PROTO(u32 local_id, u8 old_state, u8 new_state),
	TP_ARGS(local_id, old_state, new_state),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__field(u8, old_state)
		__field(u8, new_state)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__entry->old_state = old_state;
		__entry->new_state = new_state;
	),
	TP_printk("conn=%u %u->%u", __entry->local_id, __entry->old_state, __entry->new_state)
);

DECLARE_EVENT_CLASS(mrc_ev_class,
	TP_PROTO(u32 local_id, u16 port, u8 path),
	TP_ARGS(local_id, port, path),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__field(u16, port)
		__field(u8, path)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__entry->port = port;
		__entry->path = path;
	),
	TP_printk("conn=%u ev=%u path=%u", __entry->local_id, __entry->port, __entry->path)
);

DEFINE_EVENT(mrc_ev_class, mrc_ev_retire,
	TP_PROTO(u32 local_id, u16 port, u8 path),
	TP_ARGS(local_id, port, path));

DEFINE_EVENT(mrc_ev_class, mrc_ev_readmit,
	TP_PROTO(u32 local_id, u16 port, u8 path),
	TP_ARGS(local_id, port, path));

DEFINE_EVENT(mrc_ev_class, mrc_probe,
	TP_PROTO(u32 local_id, u16 port, u8 path),
	TP_ARGS(local_id, port, path));

TRACE_EVENT(mrc_loss,
	TP_PROTO(u32 local_id, u32 psn, u16 port, int rule),
	TP_ARGS(local_id, psn, port, rule),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__field(u32, psn)
		__field(u16, port)
		__field(int, rule)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__entry->psn = psn;
		__entry->port = port;
		__entry->rule = rule;
	),
	TP_printk("conn=%u psn=%u ev=%u rule=%s", __entry->local_id, __entry->psn,
		  __entry->port, __print_symbolic(__entry->rule, { MRC_LOSS_SAME_EV, "same_ev" },
				   { MRC_LOSS_RACK, "rack" }, { MRC_LOSS_RTO, "rto" },
				   { MRC_LOSS_PATH, "path" }))
);

TRACE_EVENT(mrc_retransmit,
	TP_PROTO(u32 local_id, u32 psn, u16 old_port, u16 new_port),
	TP_ARGS(local_id, psn, old_port, new_port),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__field(u32, psn)
		__field(u16, old_port)
		__field(u16, new_port)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__entry->psn = psn;
		__entry->old_port = old_port;
		__entry->new_port = new_port;
	),
	TP_printk("conn=%u psn=%u ev=%u->%u", __entry->local_id, __entry->psn,
		  __entry->old_port, __entry->new_port)
);

TRACE_EVENT(mrc_cwnd,
	TP_PROTO(u32 local_id, u32 cwnd, u32 ssthresh, int reason),
	TP_ARGS(local_id, cwnd, ssthresh, reason),
	TP_STRUCT__entry(
		__field(u32, local_id)
		__field(u32, cwnd)
		__field(u32, ssthresh)
		__field(int, reason)
	),
	TP_fast_assign(
		__entry->local_id = local_id;
		__entry->cwnd = cwnd;
		__entry->ssthresh = ssthresh;
		__entry->reason = reason;
	),
	TP_printk("conn=%u cwnd=%u ssthresh=%u reason=%s", __entry->local_id, __entry->cwnd,
		  __entry->ssthresh, __print_symbolic(__entry->reason, { MRC_CWND_LOSS, "loss" },
				   { MRC_CWND_RTO, "rto" }, { MRC_CWND_UNDO, "undo" }))
);

#endif /* _MRC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
