// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// CRC32C (see crc32c.h). The portable path is slicing-by-8: eight 256-entry
// tables built at compile time, each step folding eight input bytes read
// one at a time, so it is the same on any byte order and never makes an
// unaligned access. On x86-64 with SSE4.2 the crc32 instruction does it.
#include "ptl_tool/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace ptl::tool {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // 0x1EDC6F41 reflected

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][i] = c;
  }
  for (int s = 1; s < 8; s++)
    for (uint32_t i = 0; i < 256; i++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  return t;
}

constexpr Tables kT = MakeTables();

uint32_t Le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t UpdateSse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c64 = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // x86 is little-endian and allows unaligned loads
    c64 = _mm_crc32_u64(c64, v);
  }
  crc = static_cast<uint32_t>(c64);
  for (; n; n--, p++) crc = _mm_crc32_u8(crc, *p);
  return crc;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#else
const bool kHaveSse42 = false;
#endif

}  // namespace

uint32_t Crc32cUpdatePortable(uint32_t crc, const uint8_t* p, size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = crc ^ Le32(p);
    uint32_t hi = Le32(p + 4);
    crc = kT[7][lo & 0xff] ^ kT[6][(lo >> 8) & 0xff] ^ kT[5][(lo >> 16) & 0xff] ^ kT[4][lo >> 24] ^
          kT[3][hi & 0xff] ^ kT[2][(hi >> 8) & 0xff] ^ kT[1][(hi >> 16) & 0xff] ^ kT[0][hi >> 24];
  }
  for (; n; n--, p++) crc = kT[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return crc;
}

uint32_t Crc32cUpdate(uint32_t crc, const uint8_t* p, size_t n) {
#if defined(__x86_64__)
  if (kHaveSse42) return UpdateSse42(crc, p, n);
#endif
  return Crc32cUpdatePortable(crc, p, n);
}

uint32_t Crc32c(const void* data, size_t len, uint32_t crc) {
  return ~Crc32cUpdate(~crc, static_cast<const uint8_t*>(data), len);
}

uint32_t Crc32cPortable(const void* data, size_t len, uint32_t crc) {
  return ~Crc32cUpdatePortable(~crc, static_cast<const uint8_t*>(data), len);
}

bool Crc32cAccelerated() { return kHaveSse42; }

}  // namespace ptl::tool
