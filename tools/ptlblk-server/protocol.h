// SPDX-License-Identifier: BSD-3-Clause
// The ptlblk wire protocol (uapi/linux/ptlblk.h) as the server reads it:
// a request decoded from the match bits and header data of its zero-length
// put, the checks a request must pass against the export, and the HELLO
// answer. Pure functions, unit-tested without Portals.
#pragma once

#include <linux/ptlblk.h>

#include <array>
#include <cstdint>
#include <string>

namespace ptlblk {

// What the server exports, host order.
struct Export {
  uint64_t size = 0;  // bytes, a multiple of block_size
  uint32_t block_size = 512;
  uint32_t max_xfer = 1 << 20;  // largest READ/WRITE in bytes
  uint32_t max_inflight = 16;   // requests of one client worked on at once
  bool read_only = false;
  bool discard = false;
  bool rotational = false;
};

struct Request {
  uint32_t op = 0;  // enum ptlblk_op
  uint32_t flags = 0;
  uint32_t sectors = 0;
  uint32_t cookie = 0;
  uint64_t offset = 0;  // bytes; HELLO: the client's protocol version

  uint64_t bytes() const { return uint64_t{sectors} << PTLBLK_SECTOR_SHIFT; }
  bool fua() const { return flags & PTLBLK_RQ_FUA; }
  // READ and WRITE move data through the client's bulk entry.
  bool has_bulk() const { return op == PTLBLK_OP_READ || op == PTLBLK_OP_WRITE; }
};

Request Decode(uint64_t match_bits, uint64_t hdr_data);

// The match bits a client puts for `r` (the inverse of Decode, for tests
// and tools).
uint64_t Encode(const Request& r);

// PTLBLK_S_OK if the server may carry `r` out on `e`, else the status to
// answer with.
uint32_t Check(const Request& r, const Export& e);

// The 64 bytes of the HELLO answer, little-endian.
std::array<uint8_t, sizeof(ptlblk_hello)> EncodeHello(const Export& e);

// PTLBLK_F_* of `e`.
uint32_t Features(const Export& e);

// A status for an errno from the backing store.
uint32_t StatusFromErrno(int err);

// "READ", "WRITE", ...; "op N" for an unknown one.
std::string OpName(uint32_t op);
// "ok", "io", ...
std::string StatusName(uint32_t status);

}  // namespace ptlblk
