// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Packets the wire tests start from: a header of every field set, which a
// test then shapes into the case it needs.
#pragma once

#include <cstdint>

extern "C" {
#include "wire.h"
}

namespace mroce::test {

// A packet of opcode @op with every common-header field it may carry set.
inline mroce_pkt base(uint8_t op) {
  mroce_pkt p{};
  p.hdr.opcode = op;
  p.hdr.dst_conn = 0x01020304;
  p.hdr.src_conn = 0x0a0b0c0d;
  p.hdr.path = 3;
  p.hdr.ts = 0x11223344;
  if (mroce_op_sequenced(op)) {
    p.hdr.psn = 77;
    p.hdr.dsn = 99;
    p.hdr.msn = 5;
    p.hdr.dst_stream = 0x11;
    p.hdr.src_stream = 0x22;
  }
  return p;
}

}  // namespace mroce::test
