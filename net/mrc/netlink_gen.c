// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/mrc.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink_gen.h"

#include <uapi/linux/mrc_netlink.h>
#include <linux/mrc.h>
#include <linux/mrc.h>

/* Integer value ranges */
static const struct netlink_range_validation mrc_a_config_probe_interval_ms_range = {
	.min	= 1ULL,
	.max	= 60000ULL,
};

static const struct netlink_range_validation mrc_a_config_min_rto_us_range = {
	.min	= 100ULL,
	.max	= 10000000ULL,
};

static const struct netlink_range_validation mrc_a_config_max_rto_us_range = {
	.min	= 1000ULL,
	.max	= 120000000ULL,
};

static const struct netlink_range_validation mrc_a_config_init_cwnd_range = {
	.min	= 1ULL,
	.max	= 65536ULL,
};

static const struct netlink_range_validation mrc_a_config_user_timeout_ms_range = {
	.max	= 86400000ULL,
};

static const struct netlink_range_validation mrc_a_config_delay_target_us_range = {
	.max	= 10000000ULL,
};

/* MRC_CMD_CONFIG_SET - do */
static const struct nla_policy mrc_config_set_nl_policy[MRC_A_CONFIG_BURST_MAX + 1] = {
	[MRC_A_CONFIG_UDP_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[MRC_A_CONFIG_EV_COUNT] = NLA_POLICY_RANGE(NLA_U16, 1, 256),
	[MRC_A_CONFIG_EV_PORT_MIN] = NLA_POLICY_MIN(NLA_U16, 1024),
	[MRC_A_CONFIG_EV_PORT_MAX] = NLA_POLICY_MIN(NLA_U16, 1024),
	[MRC_A_CONFIG_RETIRE_LOSSES] = NLA_POLICY_MIN(NLA_U8, 1),
	[MRC_A_CONFIG_ECN] = NLA_POLICY_MAX(NLA_U8, 1),
	[MRC_A_CONFIG_REDUNDANCY] = NLA_POLICY_RANGE(NLA_U8, 1, 4),
	[MRC_A_CONFIG_PROBE_INTERVAL_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_probe_interval_ms_range),
	[MRC_A_CONFIG_MIN_RTO_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_min_rto_us_range),
	[MRC_A_CONFIG_MAX_RTO_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_max_rto_us_range),
	[MRC_A_CONFIG_INIT_CWND] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_init_cwnd_range),
	[MRC_A_CONFIG_USER_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_user_timeout_ms_range),
	[MRC_A_CONFIG_DCTCP_SHIFT] = NLA_POLICY_MAX(NLA_U32, 16),
	[MRC_A_CONFIG_DELAY_TARGET_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &mrc_a_config_delay_target_us_range),
	[MRC_A_CONFIG_URGENT_DSCP] = NLA_POLICY_MAX(NLA_U8, 63),
	[MRC_A_CONFIG_BURST_MAX] = NLA_POLICY_RANGE(NLA_U8, 1, 44),
};

/* MRC_CMD_CONN_GET - do */
static const struct nla_policy mrc_conn_get_nl_policy[MRC_A_CONN_LOCAL_ID + 1] = {
	[MRC_A_CONN_LOCAL_ID] = { .type = NLA_U32, },
};

/* MRC_CMD_PATH_GET - dump */
static const struct nla_policy mrc_path_get_nl_policy[MRC_A_PATH_PEER_ADDR + 1] = {
	[MRC_A_PATH_PEER_ADDR] = { .type = NLA_BINARY, },
};

/* MRC_CMD_POLICY_ADD - do */
static const struct nla_policy mrc_policy_add_nl_policy[MRC_A_POLICY_ACTION + 1] = {
	[MRC_A_POLICY_PEER_ADDR] = { .type = NLA_BINARY, },
	[MRC_A_POLICY_PORT_MIN] = NLA_POLICY_MIN(NLA_U16, 1),
	[MRC_A_POLICY_PORT_MAX] = NLA_POLICY_MIN(NLA_U16, 1),
	[MRC_A_POLICY_ACTION] = NLA_POLICY_MAX(NLA_U8, 1),
};

/* MRC_CMD_POLICY_DEL - do */
static const struct nla_policy mrc_policy_del_nl_policy[MRC_A_POLICY_ID + 1] = {
	[MRC_A_POLICY_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* MRC_CMD_PLANE_ADD - do */
static const struct nla_policy mrc_plane_add_nl_policy[MRC_A_PLANE_ADDR + 1] = {
	[MRC_A_PLANE_FAMILY] = { .type = NLA_U16, },
	[MRC_A_PLANE_ADDR] = { .type = NLA_BINARY, },
};

/* MRC_CMD_PLANE_DEL - do */
static const struct nla_policy mrc_plane_del_nl_policy[MRC_A_PLANE_ADDR + 1] = {
	[MRC_A_PLANE_FAMILY] = { .type = NLA_U16, },
	[MRC_A_PLANE_ADDR] = { .type = NLA_BINARY, },
};

/* MRC_CMD_EV_TRACE - do */
static const struct nla_policy mrc_ev_trace_nl_policy[MRC_A_TRACE_MAX_TTL + 1] = {
	[MRC_A_TRACE_LOCAL_ID] = { .type = NLA_U32, },
	[MRC_A_TRACE_MAX_TTL] = NLA_POLICY_RANGE(NLA_U8, 1, 8),
};

/* MRC_CMD_EV_TRACE_GET - do */
static const struct nla_policy mrc_ev_trace_get_nl_policy[MRC_A_TRACE_LOCAL_ID + 1] = {
	[MRC_A_TRACE_LOCAL_ID] = { .type = NLA_U32, },
};

/* Ops table for mrc */
static const struct genl_split_ops mrc_nl_ops[] = {
	{
		.cmd	= MRC_CMD_INFO_GET,
		.doit	= mrc_nl_info_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MRC_CMD_CONFIG_GET,
		.doit	= mrc_nl_config_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_CONFIG_SET,
		.doit		= mrc_nl_config_set_doit,
		.policy		= mrc_config_set_nl_policy,
		.maxattr	= MRC_A_CONFIG_BURST_MAX,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_CONN_GET,
		.doit		= mrc_nl_conn_get_doit,
		.policy		= mrc_conn_get_nl_policy,
		.maxattr	= MRC_A_CONN_LOCAL_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MRC_CMD_CONN_GET,
		.dumpit	= mrc_nl_conn_get_dumpit,
		.flags	= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= MRC_CMD_PATH_GET,
		.start		= mrc_nl_path_get_start,
		.dumpit		= mrc_nl_path_get_dumpit,
		.done		= mrc_nl_path_get_done,
		.policy		= mrc_path_get_nl_policy,
		.maxattr	= MRC_A_PATH_PEER_ADDR,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= MRC_CMD_POLICY_ADD,
		.doit		= mrc_nl_policy_add_doit,
		.policy		= mrc_policy_add_nl_policy,
		.maxattr	= MRC_A_POLICY_ACTION,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_POLICY_DEL,
		.doit		= mrc_nl_policy_del_doit,
		.policy		= mrc_policy_del_nl_policy,
		.maxattr	= MRC_A_POLICY_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MRC_CMD_POLICY_GET,
		.dumpit	= mrc_nl_policy_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= MRC_CMD_STATS_GET,
		.doit	= mrc_nl_stats_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_PLANE_ADD,
		.doit		= mrc_nl_plane_add_doit,
		.policy		= mrc_plane_add_nl_policy,
		.maxattr	= MRC_A_PLANE_ADDR,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_PLANE_DEL,
		.doit		= mrc_nl_plane_del_doit,
		.policy		= mrc_plane_del_nl_policy,
		.maxattr	= MRC_A_PLANE_ADDR,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MRC_CMD_PLANE_GET,
		.dumpit	= mrc_nl_plane_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= MRC_CMD_EV_TRACE,
		.doit		= mrc_nl_ev_trace_doit,
		.policy		= mrc_ev_trace_nl_policy,
		.maxattr	= MRC_A_TRACE_MAX_TTL,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MRC_CMD_EV_TRACE_GET,
		.doit		= mrc_nl_ev_trace_get_doit,
		.policy		= mrc_ev_trace_get_nl_policy,
		.maxattr	= MRC_A_TRACE_LOCAL_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group mrc_nl_mcgrps[] = {
	[MRC_NLGRP_EVENTS] = { "events", .flags = GENL_MCAST_CAP_NET_ADMIN, },
};

struct genl_family mrc_nl_family __ro_after_init = {
	.name		= MRC_FAMILY_NAME,
	.version	= MRC_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= mrc_nl_ops,
	.n_split_ops	= ARRAY_SIZE(mrc_nl_ops),
	.mcgrps		= mrc_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(mrc_nl_mcgrps),
};
