// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78, as in iSCSI and
// ext4): the checksum of RTS/CTS frames and of ptl_stress's payloads.
// Crc32c("123456789") == 0xE3069283. The SSE4.2 instruction is used where
// the CPU has it, slicing-by-8 tables otherwise; both give the same result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ptl::tool {

// The raw update, like the kernel's __crc32c_le(): state in, state out, no
// initial value and no final xor, so that rtscts_frame_crc() (which starts
// from ~0 and inverts at the end) can feed it a frame in pieces. Its type
// is the callback rtscts_frame_crc() takes.
uint32_t Crc32cUpdate(uint32_t state, const uint8_t* p, size_t n);
// The table-driven update alone (the tests hold the fast one against it).
uint32_t Crc32cUpdatePortable(uint32_t state, const uint8_t* p, size_t n);

// The finished CRC32C of data; pass an earlier result as `crc` to go on
// where it stopped: Crc32c(b, nb, Crc32c(a, na)) is the CRC of a then b.
uint32_t Crc32c(const void* data, size_t len, uint32_t crc = 0);
uint32_t Crc32cPortable(const void* data, size_t len, uint32_t crc = 0);
inline uint32_t Crc32c(std::span<const uint8_t> bytes) {
  return Crc32c(bytes.data(), bytes.size());
}

bool Crc32cAccelerated();  // the SSE4.2 path is in use

}  // namespace ptl::tool
