// CRC32C: known vectors, the raw-update contract (no init, no final xor)
// and the table-driven code against a bit-at-a-time reference.
#include "crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string_view>
#include <vector>

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

TEST(Crc32c, CheckValueOf123456789) { EXPECT_EQ(rtscts::Crc32c(Of("123456789")), 0xE3069283u); }

TEST(Crc32c, EmptyInputIsZero) {
  EXPECT_EQ(rtscts::Crc32c({}), 0u);
  EXPECT_EQ(crc32c(0x12345678u, nullptr, 0), 0x12345678u) << "an empty update keeps the seed";
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, Rfc3720Vectors) {
  Bytes zeros(32, 0x00), ones(32, 0xff), up(32), down(32);
  std::iota(up.begin(), up.end(), 0);
  for (int i = 0; i < 32; i++) down[i] = uint8_t(31 - i);
  EXPECT_EQ(rtscts::Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(rtscts::Crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(rtscts::Crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(rtscts::Crc32c(down), 0x113FDB5Cu);
  const Bytes read_pdu = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                          0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(rtscts::Crc32c(read_pdu), 0xD9963A56u);
}

// The raw update applies neither the initial ~0 nor the final xor, like
// the kernel's __crc32c_le(): rtscts_frame_crc() does both.
TEST(Crc32c, IsTheRawUpdate) {
  Bytes b = Of("123456789");
  EXPECT_EQ(crc32c(~0u, b.data(), b.size()), ~0xE3069283u);
  EXPECT_EQ(crc32c(0, b.data(), b.size()), BitwiseUpdate(0, b.data(), b.size()));
}

TEST(Crc32c, PiecesChainLikeOneBuffer) {
  Bytes b(100);
  std::iota(b.begin(), b.end(), 7);
  uint32_t whole = crc32c(~0u, b.data(), b.size());
  for (size_t cut = 0; cut <= b.size(); cut++) {
    uint32_t c = crc32c(~0u, b.data(), cut);
    EXPECT_EQ(crc32c(c, b.data() + cut, b.size() - cut), whole) << "split at " << cut;
  }
}

// Every length around the 8-byte stride, from every alignment, with
// arbitrary seeds: the sliced tables agree with the definition.
TEST(Crc32c, SlicedAgreesWithBitwiseAtEveryLengthAndAlignment) {
  std::mt19937 rng(1);
  Bytes b(300);
  for (auto& x : b) x = uint8_t(rng());
  for (size_t start = 0; start < 8; start++)
    for (size_t n = 0; n + start <= 80; n++) {
      uint32_t seed = rng();
      ASSERT_EQ(crc32c(seed, b.data() + start, n), BitwiseUpdate(seed, b.data() + start, n))
          << "start " << start << " length " << n;
    }
  uint32_t seed = rng();
  EXPECT_EQ(crc32c(seed, b.data(), b.size()), BitwiseUpdate(seed, b.data(), b.size()));
}

}  // namespace
