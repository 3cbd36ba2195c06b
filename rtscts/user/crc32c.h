// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78) for user space.
//
// crc32c() is the raw update, like the kernel's __crc32c_le(): no initial
// value and no final xor are applied, so that rtscts_frame_crc() (which
// starts from ~0 and inverts at the end) can feed it the frame in pieces.
// The checksum of a whole buffer is ~crc32c(~0u, p, n); Crc32c() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" uint32_t crc32c(uint32_t seed, const uint8_t* p, size_t n);

namespace rtscts {

// The finished CRC32C of `bytes` (init ~0, final xor ~0).
inline uint32_t Crc32c(std::span<const uint8_t> bytes) {
  return ~crc32c(~0u, bytes.data(), bytes.size());
}

}  // namespace rtscts
