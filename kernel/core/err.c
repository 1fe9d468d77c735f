// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What each error of the core's one space means (err.h). */
#include "platform.h"
#include "err.h"

struct err_text {
	const char *name;
	const char *text;
};

static const struct err_text call_errs[] = {
	[MROCE_ERR_AGAIN - MROCE_EG_CALL] = { "again", "no room now, retry after completions" },
	[MROCE_ERR_INVAL - MROCE_EG_CALL] = { "inval", "invalid argument or object state" },
};

static const struct err_text wire_errs[] = {
	[MROCE_ERR_SHORT - MROCE_EG_WIRE] = { "short", "datagram shorter than its headers" },
	[MROCE_ERR_VERSION - MROCE_EG_WIRE] = { "version", "unknown protocol version" },
	[MROCE_ERR_OPCODE - MROCE_EG_WIRE] = { "opcode", "unknown opcode" },
	[MROCE_ERR_RESERVED - MROCE_EG_WIRE] = { "reserved", "reserved bits or fields not zero" },
	[MROCE_ERR_FLAGS - MROCE_EG_WIRE] = { "flags", "flag not allowed for the opcode" },
	[MROCE_ERR_LENGTH - MROCE_EG_WIRE] = { "length", "payload length inconsistent with its fields" },
	[MROCE_ERR_FIELD - MROCE_EG_WIRE] = { "field", "field out of its range" },
};

static const struct err_text refused_errs[] = {
	[MROCE_ERR_RNR - MROCE_EG_REFUSED] = { "rnr", "receiver not ready: no receive posted" },
	[MROCE_ERR_ACCESS - MROCE_EG_REFUSED] = { "access", "memory key, range or permission refused" },
	[MROCE_ERR_INVALID - MROCE_EG_REFUSED] = { "invalid", "request malformed, too long or unsupported" },
	[MROCE_ERR_OPERR - MROCE_EG_REFUSED] = { "operr", "responder failed to execute the request" },
	[MROCE_ERR_WINDOW - MROCE_EG_REFUSED] = { "window", "message number outside the receive window" },
	[MROCE_ERR_NO_STREAM - MROCE_EG_REFUSED] = { "no_stream", "unknown or unconnected stream" },
};

static const struct err_text wc_errs[] = {
	[MROCE_ERR_RNR_RETRY - MROCE_EG_WC] = { "rnr_retry", "receiver not ready, retries exhausted" },
	[MROCE_ERR_REM_ACCESS - MROCE_EG_WC] = { "rem_access", "remote access error" },
	[MROCE_ERR_REM_INVALID - MROCE_EG_WC] = { "rem_invalid", "remote invalid request" },
	[MROCE_ERR_REM_OP - MROCE_EG_WC] = { "rem_op", "remote operation error" },
	[MROCE_ERR_RETRY_EXC - MROCE_EG_WC] = { "retry_exc", "transport retry counter exceeded: peer unreachable" },
	[MROCE_ERR_LOC_PROT - MROCE_EG_WC] = { "loc_prot", "local protection error" },
	[MROCE_ERR_LOC_LEN - MROCE_EG_WC] = { "loc_len", "local length error: receive buffer too small" },
	[MROCE_ERR_FLUSH - MROCE_EG_WC] = { "flush", "flushed: the queue pair is in error" },
	[MROCE_ERR_LOC_QP_OP - MROCE_EG_WC] = { "loc_qp_op", "local queue pair operation error" },
};

static const struct err_text conn_errs[] = {
	[MROCE_ERR_PEER_UNKNOWN - MROCE_EG_CONN] = {
		"peer_unknown",
		"reset by the peer (it does not know the connection)" },
	[MROCE_ERR_PEER_CLOSED - MROCE_EG_CONN] = {
		"peer_closed", "reset by the peer (closed)" },
	[MROCE_ERR_PEER_REFUSED - MROCE_EG_CONN] = {
		"peer_refused", "reset by the peer (parameters refused)" },
	[MROCE_ERR_NO_ANSWER - MROCE_EG_CONN] = {
		"no_answer", "CONNECT not answered" },
	[MROCE_ERR_DEAD - MROCE_EG_CONN] = {
		"dead", "no progress with data outstanding" },
	[MROCE_ERR_RESTARTED - MROCE_EG_CONN] = {
		"restarted",
		"the peer opened a new connection (it restarted, or its end failed)" },
	[MROCE_ERR_PAYLOAD - MROCE_EG_CONN] = {
		"payload",
		"the peer's payload limit is below packets already sent (its ACCEPT came late)" },
	[MROCE_ERR_LINK_MTU - MROCE_EG_CONN] = {
		"link_mtu",
		"the link's MTU fell below the connection's payload size" },
};

static const struct err_text *err_find(int err)
{
	const struct err_text *t;
	unsigned int i, n;

	switch (mroce_err_group(err)) {
	case MROCE_EG_CALL:
		t = call_errs;
		n = MROCE_ARRAY_SIZE(call_errs);
		break;
	case MROCE_EG_WIRE:
		t = wire_errs;
		n = MROCE_ARRAY_SIZE(wire_errs);
		break;
	case MROCE_EG_REFUSED:
		t = refused_errs;
		n = MROCE_ARRAY_SIZE(refused_errs);
		break;
	case MROCE_EG_WC:
		t = wc_errs;
		n = MROCE_ARRAY_SIZE(wc_errs);
		break;
	case MROCE_EG_CONN:
		t = conn_errs;
		n = MROCE_ARRAY_SIZE(conn_errs);
		break;
	default:
		return NULL;
	}
	i = (unsigned int)(err - mroce_err_group(err));
	return i < n && t[i].name ? &t[i] : NULL;
}

const char *mroce_strerror(int err)
{
	const struct err_text *t = err_find(err);

	if (err == MROCE_OK)
		return "success";
	return t ? t->text : "unknown error";
}

const char *mroce_err_name(int err)
{
	const struct err_text *t = err_find(err);

	if (err == MROCE_OK)
		return "ok";
	return t ? t->name : "unknown";
}
