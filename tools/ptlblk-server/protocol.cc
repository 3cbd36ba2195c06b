// SPDX-License-Identifier: BSD-3-Clause
// The ptlblk wire protocol (see protocol.h).
#include "protocol.h"

#include <endian.h>
#include <errno.h>

#include <cstring>

namespace ptlblk {

static_assert(sizeof(ptlblk_hello) == 64, "struct ptlblk_hello is 64 bytes on the wire");

Request Decode(uint64_t match_bits, uint64_t hdr_data) {
  Request r;
  r.op = PTLBLK_MB_OP(match_bits);
  r.flags = PTLBLK_MB_FLAGS(match_bits);
  r.sectors = PTLBLK_MB_SECTORS(match_bits);
  r.cookie = PTLBLK_MB_COOKIE(match_bits);
  r.offset = hdr_data;
  return r;
}

uint64_t Encode(const Request& r) { return PTLBLK_MB(r.op, r.flags, r.sectors, r.cookie); }

uint32_t Check(const Request& r, const Export& e) {
  switch (r.op) {
    case PTLBLK_OP_HELLO:
      return r.offset == PTLBLK_PROTO_VERSION ? PTLBLK_S_OK : PTLBLK_S_VERSION;
    case PTLBLK_OP_FLUSH:
      return PTLBLK_S_OK;
    case PTLBLK_OP_READ:
    case PTLBLK_OP_WRITE:
    case PTLBLK_OP_DISCARD:
      break;
    default:
      return PTLBLK_S_INVAL;
  }
  if (r.op == PTLBLK_OP_WRITE && e.read_only) return PTLBLK_S_ROFS;
  if (r.op == PTLBLK_OP_DISCARD) {
    if (e.read_only) return PTLBLK_S_ROFS;
    if (!e.discard) return PTLBLK_S_NOTSUPP;
  }
  uint64_t bytes = r.bytes();
  if (bytes == 0 || r.offset % e.block_size != 0 || bytes % e.block_size != 0)
    return PTLBLK_S_INVAL;
  if (r.op != PTLBLK_OP_DISCARD && bytes > e.max_xfer) return PTLBLK_S_INVAL;
  // offset + bytes <= size, without overflowing
  if (r.offset > e.size || bytes > e.size - r.offset) return PTLBLK_S_INVAL;
  return PTLBLK_S_OK;
}

uint32_t Features(const Export& e) {
  uint32_t f = PTLBLK_F_FLUSH | PTLBLK_F_FUA;
  if (e.read_only) f |= PTLBLK_F_READ_ONLY;
  if (e.discard && !e.read_only) f |= PTLBLK_F_DISCARD;
  if (e.rotational) f |= PTLBLK_F_ROTATIONAL;
  return f;
}

std::array<uint8_t, sizeof(ptlblk_hello)> EncodeHello(const Export& e) {
  ptlblk_hello h{};
  h.magic = htole32(PTLBLK_HELLO_MAGIC);
  h.version = htole16(PTLBLK_PROTO_VERSION);
  h.size = htole64(e.size);
  h.block_size = htole32(e.block_size);
  h.max_xfer = htole32(e.max_xfer);
  h.max_inflight = htole32(e.max_inflight);
  h.flags = htole32(Features(e));
  h.discard_granularity = htole32(e.discard ? e.block_size : 0);
  std::array<uint8_t, sizeof(ptlblk_hello)> out{};
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

uint32_t StatusFromErrno(int err) {
  switch (err) {
    case 0:
      return PTLBLK_S_OK;
    case ENOSPC:
    case EDQUOT:
      return PTLBLK_S_NOSPC;
    case EROFS:
    case EBADF:
      return PTLBLK_S_ROFS;
    case EOPNOTSUPP:
    case ENOTTY:
      return PTLBLK_S_NOTSUPP;
    case EINVAL:
      return PTLBLK_S_INVAL;
    default:
      return PTLBLK_S_IO;
  }
}

std::string OpName(uint32_t op) {
  switch (op) {
    case PTLBLK_OP_HELLO:
      return "HELLO";
    case PTLBLK_OP_READ:
      return "READ";
    case PTLBLK_OP_WRITE:
      return "WRITE";
    case PTLBLK_OP_FLUSH:
      return "FLUSH";
    case PTLBLK_OP_DISCARD:
      return "DISCARD";
  }
  return "op " + std::to_string(op);
}

std::string StatusName(uint32_t status) {
  static const char* const names[] = {"ok",   "io",      "inval",   "nospc",
                                      "rofs", "notsupp", "version", "busy"};
  if (status < sizeof(names) / sizeof(names[0])) return names[status];
  return "status " + std::to_string(status);
}

}  // namespace ptlblk
