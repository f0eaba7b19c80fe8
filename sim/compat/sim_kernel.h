/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The little of the kernel that net/mrc's decision files (ev.c, cc.c, rtt.c,
 * sack.c) and the declarations they include (protocol.h) need, for building
 * them unmodified into the simulator.  Kernel objects that protocol.h only
 * embeds or points to (sockets, skbs, timers, locks) are opaque stand-ins:
 * the decision code never touches them, and the build fails if it starts to.
 */
#ifndef _SIM_KERNEL_H
#define _SIM_KERNEL_H

#include <asm/types.h>		/* __u32, ... from the uapi headers */
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>		/* struct sockaddr_in{,6} for union mrc_addr */
#include <sys/socket.h>

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
typedef unsigned int gfp_t;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;

#define __user
#define __rcu
#define __percpu
#define __must_check
#define __packed __attribute__((__packed__))
#ifndef __cplusplus
#define static_assert(expr, ...) _Static_assert(expr, #expr)
#endif

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))

#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b)	({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b)	({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define clamp(v, lo, hi)	min(max(v, lo), hi)
#define swap(a, b)	do { __typeof__(a) _t = (a); (a) = (b); (b) = _t; } while (0)

#define READ_ONCE(x)		(x)
#define WRITE_ONCE(x, v)	((x) = (v))

#define EXPORT_SYMBOL(s)
#define EXPORT_SYMBOL_GPL(s)
#define EXPORT_SYMBOL_IF_KUNIT(s)

#define USEC_PER_SEC	1000000L
#define NSEC_PER_USEC	1000L
#define NSEC_PER_SEC	1000000000L

static inline u64 div_u64(u64 a, u32 b) { return a / b; }

/* The simulator's clock, as the kernel's: jiffies at HZ 1000, ns since start */
#define HZ 1000
unsigned long sim_jiffies(void);
u64 ktime_get_ns(void);
#define jiffies sim_jiffies()
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)
#define time_before_eq(a, b)	time_after_eq(b, a)
static inline unsigned long msecs_to_jiffies(unsigned int ms) { return ms; }
static inline unsigned long usecs_to_jiffies(unsigned int us) { return (us + 999) / 1000; }

/* Seeded by the simulator: runs are reproducible */
u32 get_random_u32_below(u32 ceil);

/* Opaque stand-ins for what struct mrc_sock / mrc_net embed */
struct sock { int sim_opaque; };
struct socket;
struct net;
struct proto;
struct proto_ops;
struct sk_buff;
struct hlist_node { struct hlist_node *next, **pprev; };
struct hlist_head { struct hlist_node *first; };
struct list_head { struct list_head *next, *prev; };
struct rb_root { void *rb_node; };
struct rcu_head { void *next; void (*func)(struct rcu_head *); };
struct timer_list { unsigned long expires; };
struct hrtimer { long long expires; };
struct percpu_counter { s64 count; };
typedef struct { int sim_opaque; } spinlock_t;
struct mutex { int sim_opaque; };
typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { u64 key[2]; } siphash_key_t;
typedef struct { void *ptr; bool is_kernel; } sockptr_t;
#define DECLARE_HASHTABLE(name, bits)	struct hlist_head name[1 << (bits)]
#define DECLARE_PER_CPU(type, name)	extern type name

#ifdef __cplusplus
}
#endif

#endif /* _SIM_KERNEL_H */
