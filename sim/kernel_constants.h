// SPDX-License-Identifier: GPL-2.0-only
/*
 * Constants that net/mrc defines inside .c files (not headers), so the
 * model cannot include them.  `make -C sim smoke` checks each against the
 * kernel source (check_constants.sh): a change there fails the smoke until
 * it is made here too.
 */
#ifndef MRC_SIM_KERNEL_CONSTANTS_H
#define MRC_SIM_KERNEL_CONSTANTS_H

#define MRC_SAME_EV_TOLERANCE_US	200	/* input.c */
#define MRC_DELACK_US			1000	/* timer.c */
#define MRC_RTO_SLACK_US		10000	/* timer.c */
#define MRC_ACK_MAX_CWND		4096	/* input.c: mrc_ack_rcv()'s ccp.max_cwnd */

#endif
