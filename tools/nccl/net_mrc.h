/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net_mrc.h - what libnccl-net-mrc.so puts in the listen handle and on the
 * wire.  NCCL treats the handle as opaque bytes; nccl_harness reads it to
 * print the listener's address and forges stale and corrupt ones.
 */
#ifndef MRC_NCCL_NET_MRC_H
#define MRC_NCCL_NET_MRC_H

#include <stdint.h>
#include <netinet/in.h>

#include "net_plugin_abi.h"

#define MRC_NET_HANDLE_MAGIC	0x4d52434eU	/* "MRCN" */
#define MRC_NET_HANDLE_VERSION	1

/* The transport a handle's listener speaks */
enum mrc_net_kind {
	MRC_NET_KIND_MRC = 1,	/* AF_MRC SOCK_STREAM */
	MRC_NET_KIND_TCP = 2,	/* AF_INET/AF_INET6 TCP: NCCL_MRC_FAMILY=tcp */
};

/*
 * The listen handle.  @cookie is drawn per listener and comes back in the
 * connector's hello, so that a connection made from a stale handle to a
 * port since reused is refused.  @stage is the connector's own: the id of
 * its connect in progress (0: none yet), since NCCL calls connect() again
 * with the same handle until it returns a comm.
 */
struct mrc_net_handle {
	uint32_t magic;
	uint16_t version;
	uint8_t kind;			/* enum mrc_net_kind */
	uint8_t reserved;
	uint64_t cookie;
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} addr;				/* the listener: family, address, port */
	uint32_t pad;
	uint64_t stage;
};

_Static_assert(sizeof(struct mrc_net_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle size");

/* The first bytes a connector sends: which listener it means */
struct mrc_net_hello {
	uint32_t magic;			/* MRC_NET_HANDLE_MAGIC */
	uint32_t version;
	uint64_t cookie;
};

/*
 * Every message is this header then @size bytes, so that the receiver
 * learns the size and checks the tag before it writes into the buffer.
 * Network byte order.
 */
#define MRC_NET_MSG_MAGIC	0x6d726331U	/* "mrc1" */

struct mrc_net_msg_hdr {
	uint32_t magic;
	int32_t tag;
	uint64_t size;
};

#endif /* MRC_NCCL_NET_MRC_H */
