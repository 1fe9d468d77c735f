/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MetaRoCE wire format, version 2: every header that goes on the wire, and
 * nothing else.  Documentation/protocol.md is the normative text; the
 * offsets here are checked against it by the unit tests' golden packets.
 *
 * All fields are big-endian.  A packet is the UDP payload:
 *
 *   common header (40 bytes) | opcode extension | payload
 *
 * The decoder validates everything (version, opcode, reserved bits, every
 * length) and returns a reason on rejection; callers count the reasons.
 */
#ifndef MROCE_CORE_WIRE_H
#define MROCE_CORE_WIRE_H

#include "platform.h"
#include "mroce.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The layout: what mroce.h leaves out of the decoded packet.  Only the
 * core includes this; its encoders and decoders (wire.c, and the ACK
 * blocks of sack.c and ack.c) are the only code that knows an offset.
 */
#define MROCE_SACK_WORDS	(MROCE_PATH_WINDOW / 64)

/*
 * The status byte of an ACK stream entry: 0, or a NACK numbered 1 to
 * MROCE_NACK_MAX in the order of the refusals of enum mroce_err (RNR,
 * ACCESS, INVALID, OPERR, WINDOW, NO_STREAM).  The decoder hands it over
 * as an enum mroce_err and the encoder takes one.  WINDOW is not sent: a
 * packet beyond the window is dropped and counted (rx_drop_msn), as only
 * a forged or stale one can be; a receiver still takes it as a refusal.
 */
#define MROCE_NACK_MAX		6

static inline int mroce_nack_err(u8 status)
{
	return status ? MROCE_ERR_RNR + status - 1 : MROCE_OK;
}

static inline u8 mroce_err_nack(int err)
{
	return err ? (u8)(err - MROCE_ERR_RNR + 1) : 0;
}

/* The error a RESET's reason fails its connection with. */
static inline int mroce_reset_err(u32 reason)
{
	return MROCE_ERR_PEER_UNKNOWN + (int)reason - MROCE_RESET_UNKNOWN_CONN;
}

#define MROCE_WRITE_EXT_LEN	32
#define MROCE_SEND_EXT_LEN	16
#define MROCE_READ_REQ_EXT_LEN	16
#define MROCE_READ_RESP_EXT_LEN	8
#define MROCE_ATOMIC_EXT_LEN	32
#define MROCE_ATOMIC_RESP_EXT_LEN 8
#define MROCE_HELLO_EXT_LEN	32
#define MROCE_RESET_EXT_LEN	16
#define MROCE_CHALLENGE_EXT_LEN	8
#define MROCE_PROBE_ACK_EXT_LEN	8
#define MROCE_ACK_EXT_LEN	8
#define MROCE_ACK_PATH_LEN	56
#define MROCE_ACK_STREAM_LEN	16
#define MROCE_MAX_EXT_LEN	32
/* The most mroce_wire_head_len() asks for: a full ACK body (~7.7 KB) */
#define MROCE_MAX_HEAD_LEN	(MROCE_MAX_HDR_LEN + MROCE_ACK_EXT_LEN + \
				 MROCE_MAX_PATHS * MROCE_ACK_PATH_LEN + \
				 255 * MROCE_ACK_STREAM_LEN)

struct mroce_ack_path {
	u16 path;
	u32 cum_psn;	/* every psn < cum_psn received or abandoned */
	u32 echo_ts;	/* ts of the newest packet received on the path */
	u32 ack_delay;	/* ns between that arrival and this ACK */
	u32 ce_count;	/* CE-marked packets received on the path, mod 2^32 */
	u32 rcv_count;	/* packets received on the path, mod 2^32 */
	u64 sack[MROCE_SACK_WORDS];	/* bit i: psn cum_psn + 1 + i received */
};

struct mroce_ack_stream {
	u32 stream;	/* the data sender's stream id */
	u32 msn;	/* every msn < msn completed at the receiver */
	u32 nack_msn;	/* message the status is about (status != OK) */
	u8 status;	/* enum mroce_err: MROCE_OK, or a refusal (a NACK) */
	u8 attempt;		/* attempt of nack_msn the status refers to */
	u16 rnr_delay_us;	/* RNR: the receiver's suggested back-off */
};

/* Decode ACK block @i (path blocks first, then stream entries). */
void mroce_wire_ack_path(const void *buf, const struct mroce_pkt *pkt,
			 unsigned int i, struct mroce_ack_path *out);
void mroce_wire_ack_stream(const void *buf, const struct mroce_pkt *pkt,
			   unsigned int i, struct mroce_ack_stream *out);

/* Encode header + extension of @pkt into @buf; returns bytes written. */
u32 mroce_wire_encode(const struct mroce_pkt *pkt, void *buf);
/* The 8-byte ack extension: an ACK's, or a data packet's ACK body's. */
void mroce_wire_put_ack_ext(const struct mroce_ack_ext *ack, void *buf);
void mroce_wire_put_ack_stream(const struct mroce_ack_stream *as, void *buf);

/*
 * What a prefetch hint reads of a packet not yet decoded
 * (mroce_conn_prefetch_rx()): nothing validated.  An ACK's path block @i
 * is read only when it lies within @len.
 */
struct mroce_wire_peek {
	u32 dst_stream;
	u32 msn;
	u32 dsn;
	u16 path;
	u8 opcode;
	u8 ack_paths;		/* an ACK's path blocks */
};

bool mroce_wire_peek(const void *buf, u32 len, struct mroce_wire_peek *pk);
bool mroce_wire_peek_ack_path(const void *buf, u32 len, u32 i, u16 *path,
			      u32 *cum_psn);

/* Bitmap words go out least significant byte first. */
static inline void mroce_wire_put_le64(u64 v, u8 *p)
{
#if !defined(__KERNEL__) && defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, sizeof(v));
#elif defined(__KERNEL__)
	put_unaligned_le64(v, p);
#else
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (u8)(v >> 8 * i);
#endif
}

/* Inline: mroce_sack_put() builds a block straight into the packet. */
static inline void mroce_wire_put_ack_path(const struct mroce_ack_path *ap,
					   void *buf)
{
	u8 *p = (u8 *)buf;
	unsigned int k;

	mroce_put_be16(ap->path, p);
	mroce_put_be16(0, p + 2);
	mroce_put_be32(ap->cum_psn, p + 4);
	mroce_put_be32(ap->echo_ts, p + 8);
	mroce_put_be32(ap->ack_delay, p + 12);
	mroce_put_be32(ap->ce_count, p + 16);
	mroce_put_be32(ap->rcv_count, p + 20);
	for (k = 0; k < MROCE_SACK_WORDS; k++)
		mroce_wire_put_le64(ap->sack[k], p + 24 + 8 * k);
}

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_WIRE_H */
