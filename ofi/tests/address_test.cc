// SPDX-License-Identifier: BSD-3-Clause
// Endpoint addresses and their FI_AV_MAP packing (address.h).
#include "address.h"

#include <gtest/gtest.h>

namespace ptl::ofi {
namespace {

TEST(Address, PacksAndUnpacksWithoutLoss) {
  const Address a{0x0a000102, 65534, 50, kAddressVersion};
  EXPECT_EQ(Unpack(Pack(a)), a);
}

TEST(Address, PackedIsNeverTheUnspecifiedAddress) {
  const Address a{0xffffffff, 65534, 255, kAddressVersion};
  EXPECT_NE(Pack(a), FI_ADDR_UNSPEC);
  EXPECT_NE(Pack(a), FI_ADDR_NOTAVAIL);
}

TEST(Address, ReadRefusesForeignBytes) {
  Address out;
  const Address ours{1, 2, 3, kAddressVersion};
  EXPECT_TRUE(ReadAddress(&ours, &out));
  EXPECT_EQ(out, ours);
  const Address other{1, 2, 3, 9};
  EXPECT_FALSE(ReadAddress(&other, &out));
}

TEST(Address, FormatsTheNidDotted) {
  char buf[64];
  FormatAddress(Address{0x0a000102, 1025, 1, kAddressVersion}, buf, sizeof(buf));
  EXPECT_STREQ(buf, "fi_ptl://10.0.1.2:1025/1");
}

}  // namespace
}  // namespace ptl::ofi
