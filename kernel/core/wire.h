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
#include "err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MROCE_VERSION		2
#define MROCE_UDP_PORT		4797	/* default destination port */

#define MROCE_MAX_PATHS		64	/* paths per connection */
#define MROCE_MIN_PAYLOAD	256	/* smallest max_payload a hello states */
#define MROCE_MAX_PAYLOAD	65535
#define MROCE_DEFAULT_PAYLOAD	4096	/* what max_payload 0 means */
/* payloads before the peer's parameters are known: fit any IPv6 link */
#define MROCE_IMPLICIT_PAYLOAD	1024
#define MROCE_PATH_WINDOW	256	/* packets in flight per path == SACK bits */
#define MROCE_SACK_WORDS	(MROCE_PATH_WINDOW / 64)
#define MROCE_DSN_WINDOW	16384	/* data sequence window per direction */
#define MROCE_STREAM_WINDOW	256	/* messages in flight per stream */
#define MROCE_MAX_RD_ATOMIC	16	/* READ/ATOMIC requests executing per stream */
#define MROCE_MAX_MSG		(1u << 31)
#define MROCE_STREAM_MASK	0x00ffffffu	/* stream ids are 24-bit QPNs */

enum mroce_opcode {
	MROCE_OP_CONNECT	= 0x01,
	MROCE_OP_ACCEPT		= 0x02,
	MROCE_OP_RESET		= 0x03,
	MROCE_OP_CLOSE		= 0x04,
	MROCE_OP_PROBE		= 0x05,
	MROCE_OP_PROBE_ACK	= 0x06,
	MROCE_OP_ACK		= 0x07,
	MROCE_OP_POLL		= 0x08,
	MROCE_OP_CHALLENGE	= 0x09,
	/* sequenced stream packets: carry psn and dsn */
	MROCE_OP_WRITE		= 0x10,
	MROCE_OP_WRITE_IMM	= 0x11,
	MROCE_OP_SEND		= 0x12,
	MROCE_OP_SEND_IMM	= 0x13,
	MROCE_OP_READ_REQ	= 0x14,
	MROCE_OP_READ_RESP	= 0x15,
	MROCE_OP_CMP_SWAP	= 0x16,
	MROCE_OP_FETCH_ADD	= 0x17,
	MROCE_OP_ATOMIC_RESP	= 0x18,
};

static inline bool mroce_op_sequenced(u8 op)
{
	return op >= MROCE_OP_WRITE && op <= MROCE_OP_ATOMIC_RESP;
}

/* Common header flags. */
#define MROCE_F_ACK_REQ		0x0001	/* acknowledge this packet at once */
#define MROCE_F_RETX		0x0002	/* retransmission (telemetry only) */
#define MROCE_F_ECE		0x0004	/* ACK: CE seen since the previous ACK */
#define MROCE_F_SOLICITED	0x0008	/* SEND*: solicited event */
#define MROCE_F_LAST		0x0010	/* last packet of a message */
#define MROCE_F_ACK_BODY	0x0020	/* data: an ACK body precedes the payload */
#define MROCE_F_ALL		0x003f

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

/*
 * RESET reasons on the wire.  The connection they end fails with the
 * matching MROCE_ERR_PEER_* (mroce_reset_err()).
 */
enum mroce_reset_reason {
	MROCE_RESET_UNKNOWN_CONN = 1,	/* dst_conn not known here */
	MROCE_RESET_CLOSED	 = 2,	/* connection was closed */
	MROCE_RESET_VERSION	 = 3,	/* hello parameters refused */
};

static inline int mroce_reset_err(u32 reason)
{
	return MROCE_ERR_PEER_UNKNOWN + (int)reason - MROCE_RESET_UNKNOWN_CONN;
}

#define MROCE_HDR_LEN		40
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
#define MROCE_MAX_HDR_LEN	(MROCE_HDR_LEN + MROCE_MAX_EXT_LEN)
/* The most mroce_wire_head_len() asks for: a full ACK body (~7.7 KB) */
#define MROCE_MAX_HEAD_LEN	(MROCE_MAX_HDR_LEN + MROCE_ACK_EXT_LEN + \
				 MROCE_MAX_PATHS * MROCE_ACK_PATH_LEN + \
				 255 * MROCE_ACK_STREAM_LEN)

#define MROCE_RATE_NONE		0xffffffffu	/* ACK rate hint: no limit */

/* Decoded common header, host byte order. */
struct mroce_hdr {
	u8 version;
	u8 opcode;
	u16 flags;
	u32 dst_conn;
	u32 src_conn;
	u16 path;
	u8 attempt;
	u32 psn;
	u32 ts;
	u32 dst_stream;
	u32 src_stream;
	u32 msn;
	u32 dsn;
};

/* Placement and operation fields of the stream opcodes. */
struct mroce_data_ext {
	u64 va;		/* WRITE*, READ_REQ, atomics: remote address of byte 0 */
	u32 rkey;	/* WRITE*, READ_REQ, atomics */
	u32 rsn;	/* SEND*, WRITE_IMM: receive sequence number */
	u32 offset;	/* byte offset of this payload within the message */
	u32 total;	/* message length */
	u32 imm;	/* *_IMM: immediate data, opaque */
	u64 swap_add;	/* CMP_SWAP: swap value; FETCH_ADD: addend */
	u64 compare;	/* CMP_SWAP */
	u64 orig;	/* ATOMIC_RESP: value before the operation */
};

struct mroce_hello {
	u64 nonce;	/* sender's instance nonce (non-zero) */
	/*
	 * ACCEPT: the CONNECT's nonce.  CONNECT: the cookie of the CHALLENGE
	 * it answers (protocol.md 6.2), 0 before it has one.
	 */
	u64 echo_nonce;
	u16 max_paths;
	u16 max_payload;	/* largest data payload it receives; 0: 4096 */
	u32 dsn_window;
	/*
	 * The sender's first fair share for the peer's data, 1000 B/s (its
	 * receiver grants a start rate); 0: none, send as the window allows
	 */
	u32 rate_hint;
};

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

struct mroce_ack_ext {
	u32 rate_hint;	/* receiver's fair share for this sender, 1000 B/s */
	u8 npaths;
	u8 nstreams;
	u16 flags;	/* reserved, zero */
};

/* A decoded packet: header + extension; payload located by offset/len. */
struct mroce_pkt {
	struct mroce_hdr hdr;
	union {
		struct mroce_data_ext data;
		struct mroce_hello hello;
		struct {
			u32 reason;
			/*
			 * The token of the CHALLENGE it answers, or the nonce
			 * of the CONNECT it refuses; else 0.
			 */
			u64 echo;
		} reset;
		struct {
			u64 token;	/* non-zero; echoed as above */
		} challenge;
		struct {
			u32 echo_ts;
			u32 delay;
		} probe_ack;
	};
	/* ACK, or a data packet's ACK body (MROCE_F_ACK_BODY); else zero */
	struct mroce_ack_ext ack;
	u8 ack_nack;		/* one of its stream entries is a NACK */
	u32 ack_off;		/* where the ACK's path blocks start */
	u32 payload_off;	/* where the payload starts (ACK: the blocks) */
	u32 payload_len;
};


/* Length of the opcode's extension, or -1 for an unknown opcode. */
int mroce_wire_ext_len(u8 opcode);

/*
 * Decode and validate @len bytes at @buf.  On success, @pkt describes the
 * packet; the payload (data, or an ACK's blocks) is buf[payload_off..+len),
 * and the ACK blocks of an ACK or of a data packet's ACK body start at
 * buf[ack_off].
 */
enum mroce_err mroce_wire_decode(const void *buf, u32 len,
				      struct mroce_pkt *pkt);

/*
 * A datagram of @len bytes of which only a prefix is contiguous (a
 * receiver's linear area).  mroce_wire_head_len() says how many leading
 * bytes must be contiguous to decode it and read its ACK blocks, from the
 * @avail <= @len it has at @buf: never more than @len or
 * MROCE_MAX_HEAD_LEN, and nothing a refused packet would not need (an
 * ACK's blocks only if they fill @len exactly).  If that is more than
 * @avail, make them contiguous and ask again: the header, then the
 * extensions, then the blocks; at most three rounds.
 *
 * mroce_wire_decode_head() decodes with @head contiguous bytes at @buf,
 * reading none past them; it gives what mroce_wire_decode() gives for the
 * whole datagram when @head is at least mroce_wire_head_len() (fewer:
 * MROCE_ERR_SHORT).  The payload, from payload_off, is not read: it
 * stays wherever the caller keeps it.  The ACK blocks are inside @head.
 */
u32 mroce_wire_head_len(const void *buf, u32 avail, u32 len);
enum mroce_err mroce_wire_decode_head(const void *buf, u32 head,
					   u32 len, struct mroce_pkt *pkt);

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
