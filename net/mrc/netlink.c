// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink family "mrc": configuration, connection and path dumps,
 * statistics and events.  (Filled in by the control-plane work.)
 */
#include "protocol.h"

int mrc_nl_init(void)
{
	return 0;
}

void mrc_nl_exit(void)
{
}

/* Context: softirq or process, socket lock held; must not sleep. */
void mrc_nl_notify_ev(struct mrc_sock *msk, const struct mrc_ev *ev, bool retired)
{
}

/* Context: softirq or process, socket lock held; must not sleep. */
void mrc_nl_notify_conn(struct mrc_sock *msk, bool established)
{
}
