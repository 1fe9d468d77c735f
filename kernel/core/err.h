/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every error the core reports, in one space.  0 is success, every other
 * value an error; functions that can fail return one, and fields that keep
 * one (a completion's status, why a connection failed) hold it in a byte.
 * The values are grouped by where they come from, so that a caller can
 * tell the group by range (mroce_err_group()) and index a per-group table
 * by the offset from the group's first value.
 *
 * Wire codes are not errors of this space: a NACK's status and a RESET's
 * reason are protocol numbers (protocol.md) that wire.c converts at the
 * boundary.
 */
#ifndef MROCE_CORE_ERR_H
#define MROCE_CORE_ERR_H

#ifdef __cplusplus
extern "C" {
#endif

enum mroce_err {
	MROCE_OK = 0,

	/* a call refused: nothing changed */
	MROCE_ERR_AGAIN = 0x01,		/* no room now; retry after completions */
	MROCE_ERR_INVAL,		/* an argument, or the object's state */

	/* a datagram the decoder refused (mroce_wire_decode()) */
	MROCE_ERR_SHORT = 0x10,		/* shorter than its opcode's headers */
	MROCE_ERR_VERSION,		/* unknown protocol version */
	MROCE_ERR_OPCODE,		/* unknown opcode */
	MROCE_ERR_RESERVED,		/* reserved bits or fields not zero */
	MROCE_ERR_FLAGS,		/* a flag its opcode does not allow */
	MROCE_ERR_LENGTH,		/* payload length inconsistent */
	MROCE_ERR_FIELD,		/* a field out of its range */

	/*
	 * A request the responder refused: what the glue's callbacks return
	 * and what a NACK carries.
	 */
	MROCE_ERR_RNR = 0x20,		/* no receive posted; retry later */
	MROCE_ERR_ACCESS,		/* rkey, bounds or permission */
	MROCE_ERR_INVALID,		/* malformed, too long, unsupported */
	MROCE_ERR_OPERR,		/* the responder failed to execute it */
	MROCE_ERR_WINDOW,		/* msn outside the receive window */
	MROCE_ERR_NO_STREAM,		/* unknown or unconnected stream */

	/* how a message completed (maps onto ib_wc_status) */
	MROCE_ERR_RNR_RETRY = 0x30,	/* receiver not ready, retries used up */
	MROCE_ERR_REM_ACCESS,		/* the peer refused its rkey or range */
	MROCE_ERR_REM_INVALID,		/* the peer refused it as invalid */
	MROCE_ERR_REM_OP,		/* the peer failed to execute it */
	MROCE_ERR_RETRY_EXC,		/* peer unreachable: transport gave up */
	MROCE_ERR_LOC_PROT,		/* local memory refused the data */
	MROCE_ERR_LOC_LEN,		/* the receive buffer is too small */
	MROCE_ERR_FLUSH,		/* flushed: the stream is in error */
	MROCE_ERR_LOC_QP_OP,		/* the receive could not take it */

	/* why a connection failed (conn_event MROCE_EV_FAILED's argument) */
	MROCE_ERR_PEER_UNKNOWN = 0x40,	/* RESET: the peer has no such conn */
	MROCE_ERR_PEER_CLOSED,		/* RESET: the peer closed it */
	MROCE_ERR_PEER_REFUSED,		/* RESET: our hello was refused */
	MROCE_ERR_NO_ANSWER,		/* CONNECT never answered */
	MROCE_ERR_DEAD,			/* data outstanding, no progress */
	MROCE_ERR_RESTARTED,		/* CONNECT with another nonce */
	MROCE_ERR_PAYLOAD,		/* ACCEPT below payloads already sent */
	MROCE_ERR_LINK_MTU,		/* the link's MTU fell below them */
	MROCE_ERR_END
};

/* The first value of each group. */
enum mroce_err_group {
	MROCE_EG_CALL = MROCE_ERR_AGAIN,
	MROCE_EG_WIRE = MROCE_ERR_SHORT,
	MROCE_EG_REFUSED = MROCE_ERR_RNR,
	MROCE_EG_WC = MROCE_ERR_RNR_RETRY,
	MROCE_EG_CONN = MROCE_ERR_PEER_UNKNOWN,
};

#define MROCE_ERR_WIRE_NR	(MROCE_ERR_FIELD - MROCE_ERR_SHORT + 1)

/* The group of @err (enum mroce_err_group), or 0 for MROCE_OK. */
static inline int mroce_err_group(int err)
{
	return err <= 0 ? 0 : err & 0xf0 ? err & 0xf0 : MROCE_EG_CALL;
}

/* A sentence saying what @err means; "unknown error" for no value of it. */
const char *mroce_strerror(int err);

/*
 * A short lower-case token for @err ("short", "rnr", "retry_exc"; "ok"),
 * for counter names and logs; "unknown" for no value of it.
 */
const char *mroce_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif /* MROCE_CORE_ERR_H */
