// SPDX-License-Identifier: BSD-3-Clause
// ptl_md_t <-> struct ptl_ioc_md: every member survives, pointers as u64.
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "md.h"

// The ioctl MD has a member, wide enough, for every member of ptl_md_t.
static_assert(sizeof(ptl_ioc_md) == 48);
static_assert(sizeof(ptl_ioc_md) % 8 == 0);
static_assert(sizeof(ptl_ioc_md::start) >= sizeof(ptl_md_t::start));
static_assert(sizeof(ptl_ioc_md::length) == sizeof(ptl_md_t::length));
static_assert(sizeof(ptl_ioc_md::threshold) == sizeof(ptl_md_t::threshold));
static_assert(std::is_signed_v<decltype(ptl_ioc_md::threshold)>, "PTL_MD_THRESH_INF is -1");
static_assert(sizeof(ptl_ioc_md::options) == sizeof(ptl_md_t::options));
static_assert(sizeof(ptl_ioc_md::max_size) == sizeof(ptl_md_t::max_size));
static_assert(sizeof(ptl_ioc_md::user_ptr) >= sizeof(ptl_md_t::user_ptr));
static_assert(sizeof(ptl_ioc_md::eq_handle) == sizeof(ptl_md_t::eq_handle));
static_assert(offsetof(ptl_ioc_md_attach, md) % 8 == 0);
static_assert(offsetof(ptl_ioc_md_update, old_md) % 8 == 0);
static_assert(offsetof(ptl_ioc_md_update, new_md) % 8 == 0);
static_assert(sizeof(ptl_ioc_md_update) % 8 == 0);
static_assert(sizeof(ptl_ioc_eq_alloc) % 8 == 0);
static_assert(sizeof(ptl_ioc_eq_wait) % 8 == 0);
static_assert(sizeof(ptl_ioc_eq_watch) == 8);
static_assert(sizeof(ptl_ioc_data) % 8 == 0);
static_assert(sizeof(ptl_ioc_me_attach) % 8 == 0);
static_assert(sizeof(ptl_md_iovec_t) == 16);

TEST(MdConversion, RoundTripsEveryMember) {
  int buffer[4];
  int cookie;
  ptl_md_t md{};
  md.start = buffer;
  md.length = sizeof(buffer);
  md.threshold = PTL_MD_THRESH_INF;
  md.max_size = 12;
  md.options = PTL_MD_OP_PUT | PTL_MD_OP_GET | PTL_MD_MAX_SIZE;
  md.user_ptr = &cookie;
  md.eq_handle = 0x12345678;

  ptl_ioc_md ioc = ptl::ToIoc(md);
  EXPECT_EQ(ioc.start, reinterpret_cast<uintptr_t>(buffer));
  EXPECT_EQ(ioc.length, sizeof(buffer));
  EXPECT_EQ(ioc.threshold, -1);
  EXPECT_EQ(ioc.options, md.options);
  EXPECT_EQ(ioc.max_size, 12u);
  EXPECT_EQ(ioc.user_ptr, reinterpret_cast<uintptr_t>(&cookie));
  EXPECT_EQ(ioc.eq_handle, 0x12345678u);
  EXPECT_EQ(ioc.reserved, 0u);

  ptl_md_t back = ptl::FromIoc(ioc);
  EXPECT_EQ(back.start, md.start);
  EXPECT_EQ(back.length, md.length);
  EXPECT_EQ(back.threshold, md.threshold);
  EXPECT_EQ(back.max_size, md.max_size);
  EXPECT_EQ(back.options, md.options);
  EXPECT_EQ(back.user_ptr, md.user_ptr);
  EXPECT_EQ(back.eq_handle, md.eq_handle);
}
