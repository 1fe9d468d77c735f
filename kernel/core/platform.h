/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The only place where the protocol core meets its host.  Everything in
 * kernel/core/ includes this header and nothing else from outside the
 * directory, so the same files build in metaroce.ko (gnu11, -mno-sse, no
 * libc) and in userspace (C17 tests, C++ simulator, libFuzzer).
 *
 * The core never allocates, locks, sleeps, reads a clock or uses floating
 * point: callers own memory, serialise calls per connection and pass now_ns.
 */
#ifndef MROCE_CORE_PLATFORM_H
#define MROCE_CORE_PLATFORM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/compiler.h>
#include <linux/prefetch.h>
#include <asm/unaligned.h>

#define MROCE_WARN_ON(cond)	WARN_ON_ONCE(cond)
#define mroce_popcount64(x)	hweight64(x)
#define mroce_div64(a, b)	div64_u64((a), (b))
#define mroce_get_be16(p)	get_unaligned_be16(p)
#define mroce_get_be32(p)	get_unaligned_be32(p)
#define mroce_get_be64(p)	get_unaligned_be64(p)
#define mroce_put_be16(v, p)	put_unaligned_be16((v), (p))
#define mroce_put_be32(v, p)	put_unaligned_be32((v), (p))
#define mroce_put_be64(v, p)	put_unaligned_be64((v), (p))

#else /* userspace: tests, fuzzers, simulator */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <assert.h>

typedef int8_t s8;
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/*
 * Userspace builds abort on a broken invariant (tests and fuzzers must see
 * it); MROCE_NO_ASSERT turns it into a counter-free no-op for benchmarks.
 */
#ifdef MROCE_NO_ASSERT
#define MROCE_WARN_ON(cond)	(!!(cond))
#else
#define MROCE_WARN_ON(cond)	({ int __c = !!(cond); assert(!__c); __c; })
#endif
#define mroce_popcount64(x)	((unsigned int)__builtin_popcountll(x))
#define mroce_div64(a, b)	((u64)(a) / (u64)(b))

static inline u16 mroce_get_be16(const void *p)
{
	const u8 *b = (const u8 *)p;

	return (u16)((u16)b[0] << 8 | b[1]);
}

static inline u32 mroce_get_be32(const void *p)
{
	const u8 *b = (const u8 *)p;

	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

static inline u64 mroce_get_be64(const void *p)
{
	return (u64)mroce_get_be32(p) << 32 | mroce_get_be32((const u8 *)p + 4);
}

/*
 * Big-endian stores: on little-endian hosts a byte swap and one store
 * (what the kernel's put_unaligned_be*() compile to).  Spelled byte by
 * byte, GCC merges them only sometimes once inlined.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline void mroce_put_be16(u16 v, void *p)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void mroce_put_be32(u32 v, void *p)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void mroce_put_be64(u64 v, void *p)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, sizeof(v));
}
#else
static inline void mroce_put_be16(u16 v, void *p)
{
	u8 *b = (u8 *)p;

	b[0] = (u8)(v >> 8);
	b[1] = (u8)v;
}

static inline void mroce_put_be32(u32 v, void *p)
{
	u8 *b = (u8 *)p;

	b[0] = (u8)(v >> 24);
	b[1] = (u8)(v >> 16);
	b[2] = (u8)(v >> 8);
	b[3] = (u8)v;
}

static inline void mroce_put_be64(u64 v, void *p)
{
	mroce_put_be32((u32)(v >> 32), p);
	mroce_put_be32((u32)v, (u8 *)p + 4);
}
#endif
#endif /* __KERNEL__ */

/*
 * A field an accessor may be asked for outside the caller's serialisation
 * (a verbs query does not wait for traffic): read once, whole, without
 * letting the compiler re-read or tear it.
 */
#ifdef __KERNEL__
#define MROCE_READ_ONCE(x)	READ_ONCE(x)
#else
#define MROCE_READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#endif

/* A hint that @p will be read soon (mroce_conn_prefetch_rx()). */
#ifdef __KERNEL__
#define mroce_prefetch(p)	prefetch(p)
#else
#define mroce_prefetch(p)	__builtin_prefetch(p)
#endif

#define mroce_ctz64(x)		((unsigned int)__builtin_ctzll(x))
#define mroce_clz64(x)		((unsigned int)__builtin_clzll(x))
#define MROCE_MIN(a, b)		((a) < (b) ? (a) : (b))
#define MROCE_MAX(a, b)		((a) > (b) ? (a) : (b))
#define MROCE_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MROCE_CONTAINER_OF(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Serial-number arithmetic on 32-bit sequence spaces (RFC 1982 style). */
static inline bool mroce_seq_lt(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool mroce_seq_le(u32 a, u32 b)
{
	return (s32)(a - b) <= 0;
}

static inline u32 mroce_seq_max(u32 a, u32 b)
{
	return mroce_seq_lt(a, b) ? b : a;
}

#endif /* MROCE_CORE_PLATFORM_H */
