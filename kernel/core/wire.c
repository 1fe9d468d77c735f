// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Encoding and validating decoding of MetaRoCE packets.  The decoder is the
 * first thing that touches bytes from the network: it reads nothing beyond
 * @len, accepts only what Documentation/protocol.md allows, and reports why
 * it refused a packet so the caller can count it.
 */
#include "wire.h"

/* mroce.h states these sizes without the layout. */
#define SIZE_IS(what, len)	_Static_assert((what) == (len), #what)
SIZE_IS(MROCE_MAX_HDR_LEN, MROCE_HDR_LEN + MROCE_MAX_EXT_LEN);
SIZE_IS(MROCE_RESET_LEN, MROCE_HDR_LEN + MROCE_RESET_EXT_LEN);
SIZE_IS(MROCE_CHALLENGE_LEN, MROCE_HDR_LEN + MROCE_CHALLENGE_EXT_LEN);
SIZE_IS(MROCE_ACK_LEN(2, 3), MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
	2 * MROCE_ACK_PATH_LEN + 3 * MROCE_ACK_STREAM_LEN);
SIZE_IS(MROCE_TX_BUF_MIN,
	MROCE_MAX_HDR_LEN + MROCE_ACK_PATH_LEN + MROCE_ACK_STREAM_LEN);

int mroce_wire_ext_len(u8 opcode)
{
	switch (opcode) {
	case MROCE_OP_CONNECT:
	case MROCE_OP_ACCEPT:
		return MROCE_HELLO_EXT_LEN;
	case MROCE_OP_RESET:
		return MROCE_RESET_EXT_LEN;
	case MROCE_OP_CHALLENGE:
		return MROCE_CHALLENGE_EXT_LEN;
	case MROCE_OP_CLOSE:
	case MROCE_OP_PROBE:
	case MROCE_OP_POLL:
		return 0;
	case MROCE_OP_PROBE_ACK:
		return MROCE_PROBE_ACK_EXT_LEN;
	case MROCE_OP_ACK:
		return MROCE_ACK_EXT_LEN;
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		return MROCE_WRITE_EXT_LEN;
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
		return MROCE_SEND_EXT_LEN;
	case MROCE_OP_READ_REQ:
		return MROCE_READ_REQ_EXT_LEN;
	case MROCE_OP_READ_RESP:
		return MROCE_READ_RESP_EXT_LEN;
	case MROCE_OP_CMP_SWAP:
	case MROCE_OP_FETCH_ADD:
		return MROCE_ATOMIC_EXT_LEN;
	case MROCE_OP_ATOMIC_RESP:
		return MROCE_ATOMIC_RESP_EXT_LEN;
	}
	return -1;
}

/* Flags each opcode may carry; anything else is a protocol error. */
static u16 allowed_flags(u8 op)
{
	switch (op) {
	case MROCE_OP_ACK:
		return MROCE_F_ECE;
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
	case MROCE_OP_WRITE_IMM:
		return MROCE_F_ACK_REQ | MROCE_F_RETX | MROCE_F_LAST |
		       MROCE_F_SOLICITED | MROCE_F_ACK_BODY;
	case MROCE_OP_PROBE:
	case MROCE_OP_POLL:
		return MROCE_F_ACK_REQ;
	default:
		if (mroce_op_sequenced(op))
			return MROCE_F_ACK_REQ | MROCE_F_RETX | MROCE_F_LAST |
			       MROCE_F_ACK_BODY;
		return 0;
	}
}

static bool is_pow2(u32 v)
{
	return v && !(v & (v - 1));
}

/* A payload [offset, offset + len) must lie inside a message of @total. */
static enum mroce_err check_segment(u32 offset, u32 len, u32 total)
{
	if (total > MROCE_MAX_MSG)
		return MROCE_ERR_FIELD;
	if (offset > total || len > total - offset)
		return MROCE_ERR_LENGTH;
	/* only an empty message may carry an empty segment */
	if (!len && total)
		return MROCE_ERR_LENGTH;
	return MROCE_OK;
}

static enum mroce_err check_range(u64 va, u32 total)
{
	if (total > MROCE_MAX_MSG)
		return MROCE_ERR_FIELD;
	if (va + total < va)
		return MROCE_ERR_FIELD;
	return MROCE_OK;
}

static enum mroce_err decode_ack_blocks(const u8 *p,
					     struct mroce_pkt *pkt)
{
	unsigned int i;

	for (i = 0; i < pkt->ack.npaths; i++, p += MROCE_ACK_PATH_LEN) {
		if (mroce_get_be16(p) >= MROCE_MAX_PATHS)
			return MROCE_ERR_FIELD;
		if (mroce_get_be16(p + 2))
			return MROCE_ERR_RESERVED;
	}
	for (i = 0; i < pkt->ack.nstreams; i++, p += MROCE_ACK_STREAM_LEN) {
		if (mroce_get_be32(p) & ~MROCE_STREAM_MASK)
			return MROCE_ERR_RESERVED;
		if (p[12] > MROCE_NACK_MAX)
			return MROCE_ERR_FIELD;
		if (p[12])
			pkt->ack_nack = 1;
	}
	return MROCE_OK;
}

/*
 * The ack extension at @e and the blocks after it, which must fit in @room
 * bytes; an ACK's must fill them exactly (@exact).  Only @contig of those
 * bytes are there to read.
 */
static enum mroce_err decode_ack(const u8 *e, u32 room, u32 contig,
				      bool exact, struct mroce_pkt *pkt)
{
	u32 blocks;

	pkt->ack.rate_hint = mroce_get_be32(e);
	pkt->ack.npaths = e[4];
	pkt->ack.nstreams = e[5];
	pkt->ack.flags = mroce_get_be16(e + 6);
	if (pkt->ack.flags)
		return MROCE_ERR_RESERVED;
	if (pkt->ack.npaths > MROCE_MAX_PATHS)
		return MROCE_ERR_FIELD;
	blocks = (u32)pkt->ack.npaths * MROCE_ACK_PATH_LEN +
		 (u32)pkt->ack.nstreams * MROCE_ACK_STREAM_LEN;
	if (exact ? room != blocks : room < blocks)
		return MROCE_ERR_LENGTH;
	if (contig < blocks)	/* less than mroce_wire_head_len() asked */
		return MROCE_ERR_SHORT;
	return decode_ack_blocks(e + MROCE_ACK_EXT_LEN, pkt);
}

/* @contig: bytes readable after an ACK's extension */
static enum mroce_err decode_ext(const u8 *e, u32 contig,
				      struct mroce_pkt *pkt)
{
	struct mroce_data_ext *d = &pkt->data;
	u8 op = pkt->hdr.opcode;
	u32 plen = pkt->payload_len;
	enum mroce_err err;

	switch (op) {
	case MROCE_OP_CONNECT:
	case MROCE_OP_ACCEPT:
		pkt->hello.nonce = mroce_get_be64(e);
		pkt->hello.echo_nonce = mroce_get_be64(e + 8);
		pkt->hello.max_paths = mroce_get_be16(e + 16);
		pkt->hello.max_payload = mroce_get_be16(e + 18);
		pkt->hello.dsn_window = mroce_get_be32(e + 20);
		pkt->hello.rate_hint = mroce_get_be32(e + 24);
		if (!pkt->hello.nonce || plen)
			return plen ? MROCE_ERR_LENGTH : MROCE_ERR_FIELD;
		/* a CONNECT's echo is its cookie, 0 before it has one */
		if (op == MROCE_OP_ACCEPT && !pkt->hello.echo_nonce)
			return MROCE_ERR_FIELD;
		if (!pkt->hello.max_paths ||
		    pkt->hello.max_paths > MROCE_MAX_PATHS)
			return MROCE_ERR_FIELD;
		if (pkt->hello.max_payload &&
		    pkt->hello.max_payload < MROCE_MIN_PAYLOAD)
			return MROCE_ERR_FIELD;
		if (!is_pow2(pkt->hello.dsn_window) ||
		    pkt->hello.dsn_window < MROCE_PATH_WINDOW ||
		    pkt->hello.dsn_window > (1u << 20))
			return MROCE_ERR_FIELD;
		if (mroce_get_be32(e + 28))	/* reserved */
			return MROCE_ERR_FIELD;
		return MROCE_OK;
	case MROCE_OP_RESET:
		pkt->reset.reason = mroce_get_be32(e);
		pkt->reset.echo = mroce_get_be64(e + 8);
		if (mroce_get_be32(e + 4))
			return MROCE_ERR_RESERVED;
		if (plen)
			return MROCE_ERR_LENGTH;
		if (pkt->reset.reason < MROCE_RESET_UNKNOWN_CONN ||
		    pkt->reset.reason > MROCE_RESET_VERSION)
			return MROCE_ERR_FIELD;
		return MROCE_OK;
	case MROCE_OP_CHALLENGE:
		pkt->challenge.token = mroce_get_be64(e);
		if (plen)
			return MROCE_ERR_LENGTH;
		return pkt->challenge.token ? MROCE_OK : MROCE_ERR_FIELD;
	case MROCE_OP_CLOSE:
	case MROCE_OP_POLL:
		return plen ? MROCE_ERR_LENGTH : MROCE_OK;
	case MROCE_OP_PROBE:
		return MROCE_OK;	/* payload is padding */
	case MROCE_OP_PROBE_ACK:
		pkt->probe_ack.echo_ts = mroce_get_be32(e);
		pkt->probe_ack.delay = mroce_get_be32(e + 4);
		return plen ? MROCE_ERR_LENGTH : MROCE_OK;
	case MROCE_OP_ACK:
		return decode_ack(e, plen, contig, true, pkt);
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		d->va = mroce_get_be64(e);
		d->rkey = mroce_get_be32(e + 8);
		d->offset = mroce_get_be32(e + 12);
		d->total = mroce_get_be32(e + 16);
		d->rsn = mroce_get_be32(e + 20);
		d->imm = mroce_get_be32(e + 24);
		if (mroce_get_be32(e + 28))
			return MROCE_ERR_RESERVED;
		if (op == MROCE_OP_WRITE && (d->rsn || d->imm))
			return MROCE_ERR_RESERVED;
		err = check_range(d->va, d->total);
		return err ? err : check_segment(d->offset, plen, d->total);
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
		d->offset = mroce_get_be32(e);
		d->total = mroce_get_be32(e + 4);
		d->rsn = mroce_get_be32(e + 8);
		d->imm = mroce_get_be32(e + 12);
		if (op == MROCE_OP_SEND && d->imm)
			return MROCE_ERR_RESERVED;
		return check_segment(d->offset, plen, d->total);
	case MROCE_OP_READ_REQ:
		d->va = mroce_get_be64(e);
		d->rkey = mroce_get_be32(e + 8);
		d->total = mroce_get_be32(e + 12);
		if (plen)
			return MROCE_ERR_LENGTH;
		return check_range(d->va, d->total);
	case MROCE_OP_READ_RESP:
		d->offset = mroce_get_be32(e);
		d->total = mroce_get_be32(e + 4);
		return check_segment(d->offset, plen, d->total);
	case MROCE_OP_CMP_SWAP:
	case MROCE_OP_FETCH_ADD:
		d->va = mroce_get_be64(e);
		d->rkey = mroce_get_be32(e + 8);
		d->swap_add = mroce_get_be64(e + 16);
		d->compare = mroce_get_be64(e + 24);
		d->total = 8;
		if (mroce_get_be32(e + 12))
			return MROCE_ERR_RESERVED;
		if (op == MROCE_OP_FETCH_ADD && d->compare)
			return MROCE_ERR_RESERVED;
		if (plen)
			return MROCE_ERR_LENGTH;
		return check_range(d->va, 8);
	case MROCE_OP_ATOMIC_RESP:
		d->orig = mroce_get_be64(e);
		d->total = 8;
		return plen ? MROCE_ERR_LENGTH : MROCE_OK;
	}
	return MROCE_ERR_OPCODE;
}

/* Header fields every opcode class must (not) set. */
static enum mroce_err check_hdr(const struct mroce_hdr *h)
{
	bool seq = mroce_op_sequenced(h->opcode);

	if (h->flags & ~allowed_flags(h->opcode))
		return MROCE_ERR_FLAGS;
	if ((h->dst_stream | h->src_stream) & ~MROCE_STREAM_MASK)
		return MROCE_ERR_RESERVED;
	if (h->path >= MROCE_MAX_PATHS)
		return MROCE_ERR_FIELD;
	/*
	 * A RESET answering a refused CONNECT, or the CHALLENGE carrying a
	 * cookie, comes from no connection of its sender.
	 */
	if (!h->src_conn && h->opcode != MROCE_OP_RESET &&
	    h->opcode != MROCE_OP_CHALLENGE)
		return MROCE_ERR_FIELD;
	if ((h->opcode == MROCE_OP_CONNECT) != !h->dst_conn)
		return MROCE_ERR_FIELD;
	if (seq)
		return MROCE_OK;
	/* unsequenced packets carry no sequence state (POLL names a msn) */
	if (h->psn || h->dsn || h->attempt ||
	    (h->msn && h->opcode != MROCE_OP_POLL))
		return MROCE_ERR_RESERVED;
	if (h->opcode != MROCE_OP_POLL && (h->dst_stream || h->src_stream))
		return MROCE_ERR_RESERVED;
	return MROCE_OK;
}

/*
 * A packet's fixed part: the header and the opcode's extension, then an
 * ACK's extension (ACK, or a data packet's ACK body).  Version and opcode
 * are checked first so that garbage asks for no more than the header.
 */
static u32 fixed_len(const u8 *b, u32 *ack_ext)
{
	int ext;

	*ack_ext = 0;
	if (b[0] >> 4 != MROCE_VERSION)
		return MROCE_HDR_LEN;
	ext = mroce_wire_ext_len(b[1]);
	if (ext < 0)
		return MROCE_HDR_LEN;
	if (b[1] == MROCE_OP_ACK) {
		*ack_ext = MROCE_HDR_LEN;
		return MROCE_HDR_LEN + MROCE_ACK_EXT_LEN;
	}
	if (mroce_op_sequenced(b[1]) &&
	    (mroce_get_be16(b + 2) & MROCE_F_ACK_BODY)) {
		*ack_ext = MROCE_HDR_LEN + (u32)ext;
		return *ack_ext + MROCE_ACK_EXT_LEN;
	}
	return MROCE_HDR_LEN + (u32)ext;
}

u32 mroce_wire_head_len(const void *buf, u32 avail, u32 len)
{
	const u8 *b = (const u8 *)buf;
	const u8 *e;
	u32 need, at, blocks;

	if (avail < MROCE_HDR_LEN || len < MROCE_HDR_LEN)
		return MROCE_MIN(len, (u32)MROCE_HDR_LEN);
	need = fixed_len(b, &at);
	if (need > len)
		return len;	/* short: the decoder refuses it */
	if (!at || avail < need)
		return need;
	/*
	 * The blocks only when the decoder would read them: the extension
	 * is canonical and states a length that fits (an ACK's fills the
	 * datagram exactly), so a refused packet is never pulled further.
	 */
	e = b + at;
	if (mroce_get_be16(e + 6) || e[4] > MROCE_MAX_PATHS)
		return need;
	blocks = (u32)e[4] * MROCE_ACK_PATH_LEN +
		 (u32)e[5] * MROCE_ACK_STREAM_LEN;
	if (b[1] == MROCE_OP_ACK ? len - need != blocks : len - need < blocks)
		return need;
	return need + blocks;
}

enum mroce_err mroce_wire_decode_head(const void *buf, u32 head,
					   u32 len, struct mroce_pkt *pkt)
{
	const u8 *b = (const u8 *)buf;
	struct mroce_hdr *h = &pkt->hdr;
	enum mroce_err err;
	u32 contig;
	int ext;

	if (head > len)
		head = len;
	/* a @head short of mroce_wire_head_len() is refused as SHORT too */
	if (len < MROCE_HDR_LEN || head < MROCE_HDR_LEN)
		return MROCE_ERR_SHORT;
	if (b[0] >> 4 != MROCE_VERSION)
		return MROCE_ERR_VERSION;
	if ((b[0] & 0x0f) || b[15])
		return MROCE_ERR_RESERVED;
	h->version = MROCE_VERSION;
	h->opcode = b[1];
	ext = mroce_wire_ext_len(h->opcode);
	if (ext < 0)
		return MROCE_ERR_OPCODE;
	if (len < MROCE_HDR_LEN + (u32)ext || head < MROCE_HDR_LEN + (u32)ext)
		return MROCE_ERR_SHORT;

	h->flags = mroce_get_be16(b + 2);
	h->dst_conn = mroce_get_be32(b + 4);
	h->src_conn = mroce_get_be32(b + 8);
	h->path = mroce_get_be16(b + 12);
	h->attempt = b[14];
	h->psn = mroce_get_be32(b + 16);
	h->ts = mroce_get_be32(b + 20);
	h->dst_stream = mroce_get_be32(b + 24);
	h->src_stream = mroce_get_be32(b + 28);
	h->msn = mroce_get_be32(b + 32);
	h->dsn = mroce_get_be32(b + 36);
	err = check_hdr(h);
	if (err)
		return err;

	pkt->payload_off = MROCE_HDR_LEN + (u32)ext;
	pkt->payload_len = len - pkt->payload_off;
	pkt->ack_off = pkt->payload_off;
	memset(&pkt->data, 0, sizeof(pkt->data));
	memset(&pkt->ack, 0, sizeof(pkt->ack));
	pkt->ack_nack = 0;
	/* a data packet's ACK body sits between its extension and payload */
	if (h->flags & MROCE_F_ACK_BODY) {
		if (pkt->payload_len < MROCE_ACK_EXT_LEN)
			return MROCE_ERR_SHORT;
		pkt->ack_off = pkt->payload_off + MROCE_ACK_EXT_LEN;
		if (head < pkt->ack_off)
			return MROCE_ERR_SHORT;
		err = decode_ack(b + pkt->payload_off,
				 pkt->payload_len - MROCE_ACK_EXT_LEN,
				 head - pkt->ack_off, false, pkt);
		if (err)
			return err;
		pkt->payload_off = pkt->ack_off +
				   (u32)pkt->ack.npaths * MROCE_ACK_PATH_LEN +
				   (u32)pkt->ack.nstreams * MROCE_ACK_STREAM_LEN;
		pkt->payload_len = len - pkt->payload_off;
	}
	contig = head - MROCE_HDR_LEN - (u32)ext;
	return decode_ext(b + MROCE_HDR_LEN, contig, pkt);
}

enum mroce_err mroce_wire_decode(const void *buf, u32 len,
				      struct mroce_pkt *pkt)
{
	return mroce_wire_decode_head(buf, len, len, pkt);
}

void mroce_wire_ack_path(const void *buf, const struct mroce_pkt *pkt,
			 unsigned int i, struct mroce_ack_path *out)
{
	const u8 *p = (const u8 *)buf + pkt->ack_off + i * MROCE_ACK_PATH_LEN;
	unsigned int k;

	out->path = mroce_get_be16(p);
	out->cum_psn = mroce_get_be32(p + 4);
	out->echo_ts = mroce_get_be32(p + 8);
	out->ack_delay = mroce_get_be32(p + 12);
	out->ce_count = mroce_get_be32(p + 16);
	out->rcv_count = mroce_get_be32(p + 20);
	/* bitmap byte k holds bits 8k..8k+7, least significant bit first */
	for (k = 0; k < MROCE_SACK_WORDS; k++) {
		const u8 *w = p + 24 + 8 * k;

		out->sack[k] = (u64)w[0] | (u64)w[1] << 8 | (u64)w[2] << 16 |
			       (u64)w[3] << 24 | (u64)w[4] << 32 |
			       (u64)w[5] << 40 | (u64)w[6] << 48 |
			       (u64)w[7] << 56;
	}
}

void mroce_wire_ack_stream(const void *buf, const struct mroce_pkt *pkt,
			   unsigned int i, struct mroce_ack_stream *out)
{
	const u8 *p = (const u8 *)buf + pkt->ack_off +
		      pkt->ack.npaths * MROCE_ACK_PATH_LEN +
		      i * MROCE_ACK_STREAM_LEN;

	out->stream = mroce_get_be32(p);
	out->msn = mroce_get_be32(p + 4);
	out->nack_msn = mroce_get_be32(p + 8);
	out->status = (u8)mroce_nack_err(p[12]);
	out->attempt = p[13];
	out->rnr_delay_us = mroce_get_be16(p + 14);
}

void mroce_wire_put_ack_stream(const struct mroce_ack_stream *as, void *buf)
{
	u8 *p = (u8 *)buf;

	mroce_put_be32(as->stream, p);
	mroce_put_be32(as->msn, p + 4);
	mroce_put_be32(as->nack_msn, p + 8);
	p[12] = mroce_err_nack(as->status);
	p[13] = as->attempt;
	mroce_put_be16(as->rnr_delay_us, p + 14);
}

void mroce_wire_put_ack_ext(const struct mroce_ack_ext *ack, void *buf)
{
	u8 *e = (u8 *)buf;

	mroce_put_be32(ack->rate_hint, e);
	e[4] = ack->npaths;
	e[5] = ack->nstreams;
	mroce_put_be16(0, e + 6);
}

u32 mroce_wire_encode(const struct mroce_pkt *pkt, void *buf)
{
	const struct mroce_hdr *h = &pkt->hdr;
	const struct mroce_data_ext *d = &pkt->data;
	u8 *b = (u8 *)buf;
	u8 *e = b + MROCE_HDR_LEN;
	int ext = mroce_wire_ext_len(h->opcode);

	if (MROCE_WARN_ON(ext < 0))
		return 0;
	memset(b, 0, MROCE_HDR_LEN + (u32)ext);
	b[0] = MROCE_VERSION << 4;
	b[1] = h->opcode;
	mroce_put_be16(h->flags, b + 2);
	mroce_put_be32(h->dst_conn, b + 4);
	mroce_put_be32(h->src_conn, b + 8);
	mroce_put_be16(h->path, b + 12);
	b[14] = h->attempt;
	mroce_put_be32(h->psn, b + 16);
	mroce_put_be32(h->ts, b + 20);
	mroce_put_be32(h->dst_stream, b + 24);
	mroce_put_be32(h->src_stream, b + 28);
	mroce_put_be32(h->msn, b + 32);
	mroce_put_be32(h->dsn, b + 36);

	switch (h->opcode) {
	case MROCE_OP_CONNECT:
	case MROCE_OP_ACCEPT:
		mroce_put_be64(pkt->hello.nonce, e);
		mroce_put_be64(pkt->hello.echo_nonce, e + 8);
		mroce_put_be16(pkt->hello.max_paths, e + 16);
		mroce_put_be16(pkt->hello.max_payload, e + 18);
		mroce_put_be32(pkt->hello.dsn_window, e + 20);
		mroce_put_be32(pkt->hello.rate_hint, e + 24);
		mroce_put_be32(0, e + 28);	/* reserved */
		break;
	case MROCE_OP_RESET:
		mroce_put_be32(pkt->reset.reason, e);
		mroce_put_be64(pkt->reset.echo, e + 8);
		break;
	case MROCE_OP_CHALLENGE:
		mroce_put_be64(pkt->challenge.token, e);
		break;
	case MROCE_OP_PROBE_ACK:
		mroce_put_be32(pkt->probe_ack.echo_ts, e);
		mroce_put_be32(pkt->probe_ack.delay, e + 4);
		break;
	case MROCE_OP_ACK:
		mroce_wire_put_ack_ext(&pkt->ack, e);
		break;
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		mroce_put_be64(d->va, e);
		mroce_put_be32(d->rkey, e + 8);
		mroce_put_be32(d->offset, e + 12);
		mroce_put_be32(d->total, e + 16);
		mroce_put_be32(d->rsn, e + 20);
		mroce_put_be32(d->imm, e + 24);
		break;
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
		mroce_put_be32(d->offset, e);
		mroce_put_be32(d->total, e + 4);
		mroce_put_be32(d->rsn, e + 8);
		mroce_put_be32(d->imm, e + 12);
		break;
	case MROCE_OP_READ_REQ:
		mroce_put_be64(d->va, e);
		mroce_put_be32(d->rkey, e + 8);
		mroce_put_be32(d->total, e + 12);
		break;
	case MROCE_OP_READ_RESP:
		mroce_put_be32(d->offset, e);
		mroce_put_be32(d->total, e + 4);
		break;
	case MROCE_OP_CMP_SWAP:
	case MROCE_OP_FETCH_ADD:
		mroce_put_be64(d->va, e);
		mroce_put_be32(d->rkey, e + 8);
		mroce_put_be64(d->swap_add, e + 16);
		mroce_put_be64(d->compare, e + 24);
		break;
	case MROCE_OP_ATOMIC_RESP:
		mroce_put_be64(d->orig, e);
		break;
	default:
		break;
	}
	return MROCE_HDR_LEN + (u32)ext;
}

/* The NACK and RESET numbers map onto their errors by offset (wire.h). */
_Static_assert(MROCE_ERR_NO_STREAM - MROCE_ERR_RNR + 1 == MROCE_NACK_MAX &&
	       MROCE_ERR_WINDOW - MROCE_ERR_RNR + 1 == 5,
	       "NACK statuses out of step with enum mroce_err");
_Static_assert(MROCE_ERR_PEER_REFUSED - MROCE_ERR_PEER_UNKNOWN ==
	       MROCE_RESET_VERSION - MROCE_RESET_UNKNOWN_CONN,
	       "RESET reasons out of step with enum mroce_err");
u32 mroce_wire_dst_conn(const void *buf, u32 len)
{
	return len < MROCE_HDR_LEN ? 0 : mroce_get_be32((const u8 *)buf + 4);
}

bool mroce_wire_peek(const void *buf, u32 len, struct mroce_wire_peek *pk)
{
	const u8 *b = (const u8 *)buf;

	if (len < MROCE_HDR_LEN)
		return false;
	pk->opcode = b[1];
	pk->path = mroce_get_be16(b + 12);
	pk->dst_stream = mroce_get_be32(b + 24) & MROCE_STREAM_MASK;
	pk->msn = mroce_get_be32(b + 32);
	pk->dsn = mroce_get_be32(b + 36);
	pk->ack_paths = 0;
	if (pk->opcode == MROCE_OP_ACK &&
	    len >= MROCE_HDR_LEN + MROCE_ACK_EXT_LEN)
		pk->ack_paths = b[MROCE_HDR_LEN + 4];
	return true;
}

bool mroce_wire_peek_ack_path(const void *buf, u32 len, u32 i, u16 *path,
			      u32 *cum_psn)
{
	const u32 off = MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
			i * MROCE_ACK_PATH_LEN;
	const u8 *e = (const u8 *)buf + off;

	if (off + MROCE_ACK_PATH_LEN > len)
		return false;
	*path = mroce_get_be16(e);
	*cum_psn = mroce_get_be32(e + 4);
	return true;
}
