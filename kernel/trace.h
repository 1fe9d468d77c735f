/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tracepoints of the module (tracefs: events/metaroce/).  Arguments are
 * computed only while an event is enabled: the callers test
 * trace_<event>_enabled() first.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM metaroce

#if !defined(_MROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MROCE_TRACE_H

#include <linux/tracepoint.h>

/* for user-space decoders, which see the names, not the values */
TRACE_DEFINE_ENUM(MROCE_TW_OTHER);
TRACE_DEFINE_ENUM(MROCE_TW_HELLO);
TRACE_DEFINE_ENUM(MROCE_TW_ACK);
TRACE_DEFINE_ENUM(MROCE_TW_PACE);
TRACE_DEFINE_ENUM(MROCE_TW_REORDER);
TRACE_DEFINE_ENUM(MROCE_TW_EPOCH);
TRACE_DEFINE_ENUM(MROCE_TW_PROBE);
TRACE_DEFINE_ENUM(MROCE_TW_RTO);
TRACE_DEFINE_ENUM(MROCE_TW_TLP);
TRACE_DEFINE_ENUM(MROCE_TW_STREAM);
TRACE_DEFINE_ENUM(MROCE_TW_DEAD);
TRACE_DEFINE_ENUM(MROCE_TW_STALL);

/*
 * A connection's timer is started or moved (peer.c, peer_arm()): for which
 * deadline, how far away, with how much slack, when the timer it replaces
 * would have fired at the latest (0: none pending), and which timer: the
 * hrtimer or the wheel's (@wheel).  An hrtimer start whose deadline plus
 * slack comes before the CPU's next timer event reprograms the clock event
 * device, which a ping-pong pays for (design.md 8).
 */
TRACE_EVENT(mroce_timer_arm,
	TP_PROTO(u32 conn, unsigned int what, u32 path, s64 in_ns,
		 u64 slack_ns, s64 was_late_ns, bool wheel),
	TP_ARGS(conn, what, path, in_ns, slack_ns, was_late_ns, wheel),
	TP_STRUCT__entry(
		__field(u32, conn)
		__field(unsigned int, what)
		__field(u32, path)
		__field(s64, in_ns)
		__field(u64, slack_ns)
		__field(s64, was_late_ns)
		__field(bool, wheel)
	),
	TP_fast_assign(
		__entry->conn = conn;
		__entry->what = what;
		__entry->path = path;
		__entry->in_ns = in_ns;
		__entry->slack_ns = slack_ns;
		__entry->was_late_ns = was_late_ns;
		__entry->wheel = wheel;
	),
	TP_printk("conn=%u what=%s path=%d in=%lld slack=%llu was_late=%lld wheel=%d",
		  __entry->conn,
		  __print_symbolic(__entry->what,
				   { MROCE_TW_OTHER, "other" },
				   { MROCE_TW_HELLO, "hello" },
				   { MROCE_TW_ACK, "ack" },
				   { MROCE_TW_PACE, "pace" },
				   { MROCE_TW_REORDER, "reorder" },
				   { MROCE_TW_EPOCH, "epoch" },
				   { MROCE_TW_PROBE, "probe" },
				   { MROCE_TW_RTO, "rto" },
				   { MROCE_TW_TLP, "tlp" },
				   { MROCE_TW_STREAM, "stream" },
				   { MROCE_TW_DEAD, "dead" },
				   { MROCE_TW_STALL, "stall" }),
		  (int)__entry->path, __entry->in_ns, __entry->slack_ns,
		  __entry->was_late_ns, __entry->wheel)
);

#endif /* _MROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
