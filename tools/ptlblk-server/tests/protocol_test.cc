// SPDX-License-Identifier: BSD-3-Clause
// ptlblk-server's protocol layer against uapi/linux/ptlblk.h.
#include "protocol.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <cstring>

namespace ptlblk {
namespace {

Export Disk() {
  Export e;
  e.size = 64 << 20;
  e.block_size = 512;
  e.max_xfer = 1 << 20;
  e.discard = true;
  return e;
}

Request Rq(uint32_t op, uint64_t offset, uint32_t sectors, uint32_t flags = 0) {
  Request r;
  r.op = op;
  r.offset = offset;
  r.sectors = sectors;
  r.flags = flags;
  r.cookie = PTLBLK_COOKIE(7, 3);
  return r;
}

TEST(Decode, EveryFieldFromItsBits) {
  uint64_t mb = PTLBLK_MB(PTLBLK_OP_WRITE, PTLBLK_RQ_FUA, 2048, PTLBLK_COOKIE(0x1234, 0xbeef));
  EXPECT_EQ(mb, 0x31000800beef1234ULL);
  Request r = Decode(mb, 1 << 20);
  EXPECT_EQ(r.op, uint32_t{PTLBLK_OP_WRITE});
  EXPECT_TRUE(r.fua());
  EXPECT_EQ(r.sectors, 2048u);
  EXPECT_EQ(r.bytes(), 1u << 20);
  EXPECT_EQ(PTLBLK_COOKIE_TAG(r.cookie), 0x1234u);
  EXPECT_EQ(PTLBLK_COOKIE_GEN(r.cookie), 0xbeefu);
  EXPECT_EQ(r.offset, 1u << 20);
  EXPECT_TRUE(r.has_bulk());
}

TEST(Decode, EncodeIsItsInverse) {
  for (uint32_t op : {1u, 2u, 3u, 4u, 5u, 15u}) {
    Request r = Rq(op, 4096, PTLBLK_MAX_SECTORS, 0xf);
    Request back = Decode(Encode(r), r.offset);
    EXPECT_EQ(back.op, r.op);
    EXPECT_EQ(back.flags, r.flags);
    EXPECT_EQ(back.sectors, r.sectors);
    EXPECT_EQ(back.cookie, r.cookie);
  }
}

TEST(Decode, LengthIs24BitsOfSectors) {
  Request r = Decode(PTLBLK_MB(PTLBLK_OP_DISCARD, 0, 0xffffff, 0), 0);
  EXPECT_EQ(r.sectors, 0xffffffu);
  EXPECT_EQ(r.bytes(), uint64_t{0xffffff} * 512);
}

TEST(Check, ReadAndWriteInsideTheExport) {
  Export e = Disk();
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, 0, 8), e), uint32_t{PTLBLK_S_OK});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_WRITE, e.size - 4096, 8), e), uint32_t{PTLBLK_S_OK});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_WRITE, e.size - 4096, 8, PTLBLK_RQ_FUA), e), uint32_t{PTLBLK_S_OK});
}

TEST(Check, RangesPastTheEndOrOverflowingAreInvalid) {
  Export e = Disk();
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, e.size - 512, 2), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, e.size, 1), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, ~0ULL - 511, 8), e), uint32_t{PTLBLK_S_INVAL});
}

TEST(Check, EmptyMisalignedAndOversizedAreInvalid) {
  Export e = Disk();
  e.block_size = 4096;
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, 0, 0), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, 512, 8), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, 0, 1), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_WRITE, 0, (2 << 20) / 512), e), uint32_t{PTLBLK_S_INVAL});
  // a discard may be larger than a transfer
  EXPECT_EQ(Check(Rq(PTLBLK_OP_DISCARD, 0, (8 << 20) / 512), e), uint32_t{PTLBLK_S_OK});
}

TEST(Check, ReadOnlyRefusesWritesAndDiscards) {
  Export e = Disk();
  e.read_only = true;
  EXPECT_EQ(Check(Rq(PTLBLK_OP_READ, 0, 8), e), uint32_t{PTLBLK_S_OK});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_WRITE, 0, 8), e), uint32_t{PTLBLK_S_ROFS});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_DISCARD, 0, 8), e), uint32_t{PTLBLK_S_ROFS});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_FLUSH, 0, 0), e), uint32_t{PTLBLK_S_OK});
}

TEST(Check, DiscardOnlyWhereSupported) {
  Export e = Disk();
  e.discard = false;
  EXPECT_EQ(Check(Rq(PTLBLK_OP_DISCARD, 0, 8), e), uint32_t{PTLBLK_S_NOTSUPP});
}

TEST(Check, UnknownOpsAndVersions) {
  Export e = Disk();
  EXPECT_EQ(Check(Rq(0, 0, 8), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(9, 0, 8), e), uint32_t{PTLBLK_S_INVAL});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_HELLO, PTLBLK_PROTO_VERSION, 0), e), uint32_t{PTLBLK_S_OK});
  EXPECT_EQ(Check(Rq(PTLBLK_OP_HELLO, PTLBLK_PROTO_VERSION + 1, 0), e), uint32_t{PTLBLK_S_VERSION});
}

TEST(Hello, LittleEndianBytes) {
  Export e = Disk();
  e.block_size = 4096;
  e.max_inflight = 64;
  auto b = EncodeHello(e);
  ASSERT_EQ(b.size(), 64u);
  EXPECT_EQ(std::memcmp(b.data(), "PBLK", 4), 0);
  EXPECT_EQ(b[4], PTLBLK_PROTO_VERSION);
  EXPECT_EQ(b[5], 0);
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= uint64_t{b[8 + i]} << (8 * i);
  EXPECT_EQ(size, e.size);
  EXPECT_EQ(b[16] | b[17] << 8, 4096);
  EXPECT_EQ(b[24], 64);
  uint32_t flags = b[28] | b[29] << 8;
  EXPECT_EQ(flags, uint32_t{PTLBLK_F_FLUSH | PTLBLK_F_FUA | PTLBLK_F_DISCARD});
  for (std::size_t i = 36; i < b.size(); ++i) EXPECT_EQ(b[i], 0) << i;
}

TEST(Hello, ReadOnlyExportAdvertisesNoDiscard) {
  Export e = Disk();
  e.read_only = true;
  EXPECT_EQ(Features(e), uint32_t{PTLBLK_F_FLUSH | PTLBLK_F_FUA | PTLBLK_F_READ_ONLY});
}

TEST(Status, FromErrno) {
  EXPECT_EQ(StatusFromErrno(0), uint32_t{PTLBLK_S_OK});
  EXPECT_EQ(StatusFromErrno(ENOSPC), uint32_t{PTLBLK_S_NOSPC});
  EXPECT_EQ(StatusFromErrno(EOPNOTSUPP), uint32_t{PTLBLK_S_NOTSUPP});
  EXPECT_EQ(StatusFromErrno(EIO), uint32_t{PTLBLK_S_IO});
  EXPECT_EQ(StatusName(PTLBLK_S_VERSION), "version");
  EXPECT_EQ(OpName(PTLBLK_OP_FLUSH), "FLUSH");
}

}  // namespace
}  // namespace ptlblk
