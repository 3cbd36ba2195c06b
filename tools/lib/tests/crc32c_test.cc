// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// CRC32C: known vectors, the raw-update contract (no init, no final xor),
// the table-driven and SSE4.2 code against a bit-at-a-time reference and
// each other, and chaining of finished values.
#include "ptl_tool/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string_view>
#include <vector>

namespace ptl::tool {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Of(std::string_view s) { return Bytes(s.begin(), s.end()); }

// The definition: one bit at a time, reflected polynomial.
uint32_t BitwiseUpdate(uint32_t crc, const uint8_t* p, size_t n) {
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
  }
  return crc;
}

TEST(Crc32c, CheckValueOf123456789) { EXPECT_EQ(Crc32c(Of("123456789")), 0xE3069283u); }

TEST(Crc32c, EmptyInputIsZero) {
  EXPECT_EQ(Crc32c({}), 0u);
  EXPECT_EQ(Crc32cUpdate(0x12345678u, nullptr, 0), 0x12345678u) << "an empty update keeps the seed";
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, Rfc3720Vectors) {
  Bytes zeros(32, 0x00), ones(32, 0xff), up(32), down(32);
  std::iota(up.begin(), up.end(), 0);
  for (int i = 0; i < 32; i++) down[i] = uint8_t(31 - i);
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(down), 0x113FDB5Cu);
  const Bytes read_pdu = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                          0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(Crc32c(read_pdu), 0xD9963A56u);
}

// The raw update applies neither the initial ~0 nor the final xor, like
// the kernel's __crc32c_le(): rtscts_frame_crc() does both.
TEST(Crc32c, IsTheRawUpdate) {
  Bytes b = Of("123456789");
  EXPECT_EQ(Crc32cUpdate(~0u, b.data(), b.size()), ~0xE3069283u);
  EXPECT_EQ(Crc32cUpdate(0, b.data(), b.size()), BitwiseUpdate(0, b.data(), b.size()));
}

TEST(Crc32c, PiecesChainLikeOneBuffer) {
  Bytes b(100);
  std::iota(b.begin(), b.end(), 7);
  uint32_t whole = Crc32cUpdate(~0u, b.data(), b.size());
  for (size_t cut = 0; cut <= b.size(); cut++) {
    uint32_t c = Crc32cUpdate(~0u, b.data(), cut);
    EXPECT_EQ(Crc32cUpdate(c, b.data() + cut, b.size() - cut), whole) << "split at " << cut;
  }
}

// Every length around the 8-byte stride, from every alignment, with
// arbitrary seeds: the update in use (SSE4.2 or tables) and the tables
// alone both agree with the definition.
TEST(Crc32c, UpdatesAgreeWithBitwiseAtEveryLengthAndAlignment) {
  std::mt19937 rng(1);
  Bytes b(300);
  for (auto& x : b) x = uint8_t(rng());
  for (auto update : {Crc32cUpdate, Crc32cUpdatePortable}) {
    for (size_t start = 0; start < 8; start++)
      for (size_t n = 0; n + start <= 80; n++) {
        uint32_t seed = rng();
        ASSERT_EQ(update(seed, b.data() + start, n), BitwiseUpdate(seed, b.data() + start, n))
            << "start " << start << " length " << n;
      }
    uint32_t seed = rng();
    EXPECT_EQ(update(seed, b.data(), b.size()), BitwiseUpdate(seed, b.data(), b.size()));
  }
}

TEST(Crc32c, AcceleratedMatchesPortableAtEveryAlignmentAndLength) {
  std::mt19937 rng(42);
  Bytes buf(4096 + 64);
  for (auto& x : buf) x = uint8_t(rng());
  for (size_t start = 0; start < 16; start++) {
    for (size_t len : {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 1000, 4096}) {
      ASSERT_EQ(Crc32c(buf.data() + start, len), Crc32cPortable(buf.data() + start, len))
          << "start " << start << " len " << len;
    }
  }
  if (!Crc32cAccelerated()) GTEST_SKIP() << "no SSE4.2: only the portable path ran";
}

TEST(Crc32c, FinishedValuesChainOverPieces) {
  Bytes buf(10000);
  std::iota(buf.begin(), buf.end(), 3);
  uint32_t whole = Crc32c(buf.data(), buf.size());
  for (size_t cut : {0, 1, 13, 4096, 9999, 10000}) {
    uint32_t c = Crc32c(buf.data(), cut);
    EXPECT_EQ(Crc32c(buf.data() + cut, buf.size() - cut, c), whole) << "cut " << cut;
    EXPECT_EQ(Crc32cPortable(buf.data() + cut, buf.size() - cut, c), whole) << "cut " << cut;
  }
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
  EXPECT_EQ(Crc32c("a", 1), 0xC1D04330u);
}

TEST(Crc32c, EverySingleBitFlipChangesIt) {
  Bytes buf(257);
  std::iota(buf.begin(), buf.end(), 99);
  uint32_t good = Crc32c(buf);
  for (size_t i = 0; i < buf.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      buf[i] ^= static_cast<uint8_t>(1 << bit);
      ASSERT_NE(Crc32c(buf), good) << "byte " << i << " bit " << bit;
      buf[i] ^= static_cast<uint8_t>(1 << bit);
    }
  }
}

}  // namespace
}  // namespace ptl::tool
