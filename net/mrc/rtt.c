// SPDX-License-Identifier: GPL-2.0-only
/*
 * RTT estimation (RFC 6298) with a datacenter-sized minimum RTO.
 */
#include <linux/export.h>
#include <linux/minmax.h>
#include <kunit/visibility.h>

#include "rtt.h"

/**
 * mrc_rtt_init() - reset an estimator
 * @r: estimator
 * @min_rto_us: lower bound of the RTO
 * @max_rto_us: upper bound of the RTO, backoff included
 */
void mrc_rtt_init(struct mrc_rtt *r, u32 min_rto_us, u32 max_rto_us)
{
	*r = (struct mrc_rtt){
		.min_rto_us = min_rto_us,
		.max_rto_us = max(max_rto_us, min_rto_us),
	};
	r->rto_us = clamp_t(u32, MRC_INITIAL_RTO_US, r->min_rto_us, r->max_rto_us);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_rtt_init);

/**
 * mrc_rtt_sample() - feed one RTT measurement
 * @r: estimator
 * @sample_us: measured round trip, microseconds (0 is taken as 1)
 *
 * First sample: SRTT = R, RTTVAR = R/2.  Then RTTVAR = 3/4 RTTVAR +
 * 1/4 |SRTT - R| and SRTT = 7/8 SRTT + 1/8 R; RTO = SRTT + 4 RTTVAR,
 * clamped to [min_rto, max_rto].
 */
void mrc_rtt_sample(struct mrc_rtt *r, u32 sample_us)
{
	u32 delta;
	u64 rto;

	sample_us = max(sample_us, 1U);
	if (!r->srtt_us) {
		r->srtt_us = sample_us;
		r->rttvar_us = sample_us / 2;
	} else {
		delta = r->srtt_us > sample_us ? r->srtt_us - sample_us :
						 sample_us - r->srtt_us;
		r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + delta / 4;
		r->srtt_us = r->srtt_us - r->srtt_us / 8 + sample_us / 8;
	}
	if (!r->min_rtt_us || sample_us < r->min_rtt_us)
		r->min_rtt_us = sample_us;
	rto = (u64)r->srtt_us + 4ULL * r->rttvar_us;
	r->rto_us = clamp_t(u64, rto, r->min_rto_us, r->max_rto_us);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_rtt_sample);

/**
 * mrc_rtt_rto() - the timeout to arm after @backoff expiries in a row
 * @r: estimator
 * @backoff: number of consecutive timeouts
 *
 * Return: RTO doubled @backoff times, at most max_rto.
 */
u32 mrc_rtt_rto(const struct mrc_rtt *r, unsigned int backoff)
{
	u64 rto = r->rto_us;

	if (backoff > 20)
		backoff = 20;
	rto <<= backoff;
	return min_t(u64, rto, r->max_rto_us);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_rtt_rto);
