// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stateless handshake cookies.  A server answers a SYN with IDs and a cookie
 * derived from a per-netns secret and the client's tuple, and allocates
 * nothing until the client echoes them (HSACK), proving its address.
 */
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "protocol.h"

#define MRC_COOKIE_SLOT_SECS	64

/* A cookie is valid in the slot it was made in and in the next one. */
u32 mrc_cookie_slot(void)
{
	return (u32)div_u64(get_jiffies_64(), MRC_COOKIE_SLOT_SECS * HZ) & MRC_COOKIE_SLOT_MASK;
}

/**
 * mrc_cookie_word() - the slot word a SYNACK carries and its HSACK echoes
 * @slot: time slot (mrc_cookie_slot())
 * @salt: which derivation, below MRC_COOKIE_SALTS
 *
 * The salt lets a server derive another connection ID for the same client
 * when the first is in use: the client only echoes the word, and the cookie
 * covers it whole.
 *
 * Return: @slot with @salt in its top bits.
 */
u32 mrc_cookie_word(u32 slot, u32 salt)
{
	return (slot & MRC_COOKIE_SLOT_MASK) |
	       (salt & (MRC_COOKIE_SALTS - 1)) << MRC_COOKIE_SALT_SHIFT;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cookie_word);

/**
 * mrc_cookie_make() - derive the server's ID, initial PSN and cookie
 * @key: per-netns secret
 * @in: the client's tuple and handshake values
 * @word: time slot and salt (mrc_cookie_word())
 * @out: server ID (never 0), server initial PSN and cookie
 */
void mrc_cookie_make(const siphash_key_t *key, const struct mrc_cookie_in *in, u32 word,
		     struct mrc_cookie *out)
{
	u32 buf[14];
	u64 ids;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, in->addr, 16);
	memcpy(buf + 4, in->laddr, 16);
	buf[8] = in->sport;
	buf[9] = in->dport;
	buf[10] = in->client_id;
	buf[11] = in->client_isn;
	buf[12] = word;
	buf[13] = 0;
	ids = siphash(buf, sizeof(buf), key);
	buf[13] = 1;
	out->cookie = siphash(buf, sizeof(buf), key);
	out->server_id = (u32)ids ?: 1;
	out->server_isn = (u32)(ids >> 32);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cookie_make);

/**
 * mrc_cookie_check() - verify an echoed cookie
 * @key: per-netns secret
 * @in: the client's tuple and handshake values, as seen in the HSACK
 * @word: slot word the client echoes (mrc_cookie_word())
 * @now_slot: current slot
 * @server_id: echoed server ID
 * @server_isn: echoed server initial PSN
 * @cookie: echoed cookie
 *
 * Return: true when all three match what @key makes for @in and @word, and
 * the word's slot is current or the previous one.
 */
bool mrc_cookie_check(const siphash_key_t *key, const struct mrc_cookie_in *in, u32 word,
		      u32 now_slot, u32 server_id, u32 server_isn, u64 cookie)
{
	struct mrc_cookie c;

	if (((now_slot - word) & MRC_COOKIE_SLOT_MASK) > 1)
		return false;
	mrc_cookie_make(key, in, word, &c);
	return c.server_id == server_id && c.server_isn == server_isn &&
	       c.cookie == cookie;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cookie_check);
