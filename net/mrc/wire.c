// SPDX-License-Identifier: GPL-2.0-only
/*
 * Wire format checks over plain bytes: what a received header must satisfy
 * before anything looks at it.  Free of skb types so KUnit (and a fuzzer)
 * can feed it directly.
 */
#include <linux/export.h>
#include <kunit/visibility.h>

#include "protocol.h"
#include "wire.h"

/**
 * mrc_hdr_check() - validate a received MRC header
 * @h: header (at least sizeof(*h) readable bytes)
 * @len: bytes from the header's start to the end of the UDP payload
 *
 * Return: MRC_C_RX_PACKETS when the header is acceptable, else the drop
 * counter naming the first problem found.
 */
enum mrc_counter mrc_hdr_check(const struct mrchdr *h, unsigned int len)
{
	const unsigned int hs_len = sizeof(struct mrc_hs_payload);
	unsigned int plen;
	bool syn;

	if (len < sizeof(*h))
		return MRC_C_RX_DROP_SHORT;
	if (h->version != MRC_VERSION)
		return MRC_C_RX_DROP_VERSION;
	if (!h->type || h->type >= __MRC_T_MAX || (h->flags & ~MRC_F_ALL) ||
	    h->priority > 7)
		return MRC_C_RX_DROP_TYPE;
	plen = ntohs(h->len);
	if (len != sizeof(*h) + plen)
		return MRC_C_RX_DROP_LEN;
	switch (h->type) {
	case MRC_T_SYNACK:
	case MRC_T_HSACK:
		/* then maybe an address list of 1..MRC_MAX_PLANES entries */
		if (plen != hs_len &&
		    (plen < hs_len + struct_size_t(struct mrc_addr_list, addrs, 1) ||
		     plen > hs_len + struct_size_t(struct mrc_addr_list, addrs, MRC_MAX_PLANES) ||
		     (plen - hs_len - sizeof(struct mrc_addr_list)) % sizeof(struct mrc_wire_addr)))
			return MRC_C_RX_DROP_LEN;
		break;
	case MRC_T_DATA:
		break;
	case MRC_T_ACK:
		/* SACKX's words, then struct mrc_dsack */
		if (h->flags & MRC_F_DSACK) {
			if (plen < sizeof(struct mrc_dsack))
				return MRC_C_RX_DROP_LEN;
			plen -= sizeof(struct mrc_dsack);
		}
		if (!(h->flags & MRC_F_SACKX) ? plen :
		    !plen || plen % sizeof(__be64) || plen > MRC_SACKX_WORDS * sizeof(__be64))
			return MRC_C_RX_DROP_LEN;
		break;
	default:
		if (plen)
			return MRC_C_RX_DROP_LEN;
	}
	if ((h->flags & (MRC_F_SACKX | MRC_F_DSACK)) && h->type != MRC_T_ACK)
		return MRC_C_RX_DROP_TYPE;
	/*
	 * Only a SYN goes to nobody; everything else names its receiver.  Only
	 * a RST refusing a SYN comes from nobody.
	 */
	syn = h->type == MRC_T_SYN;

	if (syn != !h->dst_id || (!h->src_id && h->type != MRC_T_RST))
		return MRC_C_RX_DROP_BADID;
	return MRC_C_RX_PACKETS;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_hdr_check);

/**
 * mrc_hdr_train_next() - does @h continue the data train that @first begins?
 * @first: the train's first header: a checked data packet without flags
 * @h: the header @i segments after it
 * @i: its place in the train
 * @seg_len: bytes from @h to the end of its segment (those of a header at
 *           least, or @h is not read)
 *
 * A train is what one burst (mrc_send_burst()) puts in one aggregate: data
 * packets of one connection with consecutive PSNs, no flags, one priority,
 * and the same acknowledgment (ACK PSN, SACK, echo, window, EV); only the
 * PSN, the length and the send time differ.  Such a train arriving in order
 * is queued whole (mrc_rcv_train()), with no per-packet skb.
 *
 * Return: true when @h is the train's next packet and its length is right.
 */
bool mrc_hdr_train_next(const struct mrchdr *first, const struct mrchdr *h, u32 i,
			unsigned int seg_len)
{
	return seg_len > sizeof(*h) && !memcmp(h, first, offsetof(struct mrchdr, psn)) &&
	       ntohl(h->psn) == ntohl(first->psn) + i &&
	       !memcmp(&h->ack_psn, &first->ack_psn,
		       offsetof(struct mrchdr, tsval) - offsetof(struct mrchdr, ack_psn)) &&
	       !memcmp(&h->tsecr, &first->tsecr,
		       offsetof(struct mrchdr, len) - offsetof(struct mrchdr, tsecr)) &&
	       h->len && seg_len == sizeof(*h) + ntohs(h->len);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_hdr_train_next);
