// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stateless cookies for CONNECT (cookie.h), on SipHash-2-4 (Aumasson and
 * Bernstein), written out here so that the module, the tests and the
 * simulator compute the same values.
 */
#include "cookie.h"

static inline u64 rotl64(u64 x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3)					\
	do {								\
		v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0;		\
		v0 = rotl64(v0, 32);					\
		v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;		\
		v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;		\
		v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2;		\
		v2 = rotl64(v2, 32);					\
	} while (0)

static inline u64 get_le64(const u8 *p)
{
	return (u64)p[0] | (u64)p[1] << 8 | (u64)p[2] << 16 |
	       (u64)p[3] << 24 | (u64)p[4] << 32 | (u64)p[5] << 40 |
	       (u64)p[6] << 48 | (u64)p[7] << 56;
}

u64 mroce_siphash(const struct mroce_key *key, const void *data, u32 len)
{
	const u8 *p = (const u8 *)data;
	u64 v0 = 0x736f6d6570736575ull ^ key->k0;
	u64 v1 = 0x646f72616e646f6dull ^ key->k1;
	u64 v2 = 0x6c7967656e657261ull ^ key->k0;
	u64 v3 = 0x7465646279746573ull ^ key->k1;
	u64 m, b = (u64)len << 56;
	u32 i;

	for (; len >= 8; len -= 8, p += 8) {
		m = get_le64(p);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < len; i++)
		b |= (u64)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The cookie of (address, connection id, nonce) in clock epoch @epoch. */
static u64 cookie(const struct mroce_key *key, const u8 *addr, u32 conn,
		  u64 nonce, u64 epoch)
{
	u8 in[36];
	u64 v;

	memcpy(in, addr, 16);
	mroce_put_be32(conn, in + 16);
	mroce_put_be64(nonce, in + 20);
	mroce_put_be64(epoch, in + 28);
	v = mroce_siphash(key, in, sizeof(in));
	return v ? v : 1;	/* 0 means "no cookie" on the wire */
}

bool mroce_cookie_valid(const struct mroce_key *key, const u8 *addr,
			const struct mroce_pkt *pkt, u64 now)
{
	u64 echo = pkt->hello.echo_nonce, epoch = now >> MROCE_COOKIE_EPOCH_SHIFT;

	if (pkt->hdr.opcode != MROCE_OP_CONNECT || !echo)
		return false;
	if (echo == cookie(key, addr, pkt->hdr.src_conn, pkt->hello.nonce,
			   epoch))
		return true;
	return epoch && echo == cookie(key, addr, pkt->hdr.src_conn,
				       pkt->hello.nonce, epoch - 1);
}

u32 mroce_cookie_challenge(const struct mroce_key *key, const u8 *addr,
			   const struct mroce_pkt *pkt, u64 now, void *buf)
{
	struct mroce_pkt out;

	memset(&out, 0, sizeof(out));
	out.hdr.opcode = MROCE_OP_CHALLENGE;
	out.hdr.dst_conn = pkt->hdr.src_conn;
	out.hdr.path = pkt->hdr.path;
	out.hdr.ts = pkt->hdr.ts;
	out.challenge.token = cookie(key, addr, pkt->hdr.src_conn,
				     pkt->hello.nonce,
				     now >> MROCE_COOKIE_EPOCH_SHIFT);
	return mroce_wire_encode(&out, buf);
}
