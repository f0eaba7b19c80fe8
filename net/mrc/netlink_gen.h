/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/mrc.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_MRC_GEN_H
#define _LINUX_MRC_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/mrc_netlink.h>
#include <linux/mrc.h>
#include <linux/mrc.h>

int mrc_nl_path_get_start(struct netlink_callback *cb);
int mrc_nl_path_get_done(struct netlink_callback *cb);

int mrc_nl_info_get_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_conn_get_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mrc_nl_path_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mrc_nl_policy_add_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_policy_del_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_policy_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mrc_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_plane_add_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_plane_del_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_plane_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mrc_nl_ev_trace_doit(struct sk_buff *skb, struct genl_info *info);
int mrc_nl_ev_trace_get_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	MRC_NLGRP_EVENTS,
};

extern struct genl_family mrc_nl_family;

#endif /* _LINUX_MRC_GEN_H */
