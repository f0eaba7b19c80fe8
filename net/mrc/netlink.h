/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink family "mrc" (netlink.c): the EV policy hook the EV
 * picker consults.  The family itself is generated from
 * Documentation/netlink/specs/mrc.yaml into netlink_gen.[ch].
 */
#ifndef _NET_MRC_NETLINK_H
#define _NET_MRC_NETLINK_H

#include <linux/types.h>

struct mrc_net;
union mrc_addr;

bool mrc_policy_allows(struct mrc_net *mn, const union mrc_addr *peer, u16 port);
u32 mrc_policy_next_allowed(struct mrc_net *mn, const union mrc_addr *peer, u32 port);

#endif /* _NET_MRC_NETLINK_H */
