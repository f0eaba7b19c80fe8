// SPDX-License-Identifier: GPL-2.0-only
/*
 * MRC: module entry and the AF_MRC socket family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <net/sock.h>
#include <uapi/linux/mrc.h>

static int family = AF_MRC;
module_param(family, int, 0444);
MODULE_PARM_DESC(family, "address family number to register (default 18)");

static struct proto mrc_proto = {
	.name		= "MRC",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sock),
};

static int mrc_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;
	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/* .family is informational: the core dispatches on mrc_family_ops.family */
static const struct proto_ops mrc_ops = {
	.family		= PF_MRC,
	.owner		= THIS_MODULE,
	.release	= mrc_release,
	.bind		= sock_no_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= sock_no_getname,
	.poll		= datagram_poll,
	.ioctl		= sock_no_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.sendmsg	= sock_no_sendmsg,
	.recvmsg	= sock_no_recvmsg,
	.mmap		= sock_no_mmap,
};

static int mrc_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct sock *sk;

	if (protocol != 0)
		return -EPROTONOSUPPORT;
	if (sock->type != SOCK_STREAM && sock->type != SOCK_SEQPACKET)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, family, GFP_KERNEL, &mrc_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock->ops = &mrc_ops;
	sock->state = SS_UNCONNECTED;
	sock_init_data(sock, sk);
	return 0;
}

static struct net_proto_family mrc_family_ops = {
	.create	= mrc_create,
	.owner	= THIS_MODULE,
};

static int __init mrc_init(void)
{
	int err;

	if (family <= 0 || family >= NPROTO) {
		pr_err("family %d out of range 1..%d\n", family, NPROTO - 1);
		return -EINVAL;
	}
	mrc_family_ops.family = family;

	err = proto_register(&mrc_proto, 1);
	if (err)
		return err;
	err = sock_register(&mrc_family_ops);
	if (err) {
		pr_err("cannot register family %d: %d\n", family, err);
		goto err_proto;
	}
	pr_info("AF_MRC registered as family %d\n", family);
	return 0;

err_proto:
	proto_unregister(&mrc_proto);
	return err;
}

static void __exit mrc_exit(void)
{
	sock_unregister(family);
	proto_unregister(&mrc_proto);
}

module_init(mrc_init);
module_exit(mrc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MRC: multipath reliable connection sockets");
MODULE_ALIAS_NETPROTO(AF_MRC);
