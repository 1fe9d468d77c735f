/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address validation without state (protocol.md 6.2), and the keyed hash
 * behind every secret the core hands out.
 *
 * A CONNECT is acted on only when it echoes a cookie: 64 bits of SipHash,
 * under a key of the receiving endpoint, of the opener's address, its
 * connection id and nonce, and a coarse clock.  An opener gets its cookie
 * in a CHALLENGE sent to the address it claims, so only a host that
 * receives at that address can echo it.  The receiver keeps nothing per
 * CONNECT: a flood from spoofed addresses allocates no state and can only
 * be rate-limited.  A cookie is good for the epoch it was made in and the
 * next (2^36 ns each, about 69 s).
 */
#ifndef MROCE_CORE_COOKIE_H
#define MROCE_CORE_COOKIE_H

#include "platform.h"
#include "wire.h"

#ifdef __cplusplus
extern "C" {
#endif


/* SipHash-2-4 of @len bytes at @data. */
u64 mroce_siphash(const struct mroce_key *key, const void *data, u32 len);

#define MROCE_COOKIE_EPOCH_SHIFT	36	/* ns: about 69 s */


#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_COOKIE_H */
