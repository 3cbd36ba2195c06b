// Handles: typed, generation-checked, never valid by accident (contract 1).
#include "core_harness.h"

namespace ptltest {
namespace {

class Handles : public CoreTest {};

TEST_F(Handles, ReservedValuesNameNoSlotAndNoObject) {
  EXPECT_EQ(ptlc_handle_slot(PTL_INVALID_HANDLE), -1);
  EXPECT_EQ(ptlc_handle_slot(PTL_HANDLE_NONE), -1);
  EXPECT_EQ(ptlc_handle_slot(PTL_EQ_NONE), -1);
  ptl_handle_ni_t out;
  EXPECT_EQ(ptlc_ni_handle_of(A(), PTL_INVALID_HANDLE, &out), PTL_HANDLE_INVALID);
  EXPECT_EQ(ptlc_md_unlink(A(), PTL_INVALID_HANDLE), PTL_MD_INVALID);
  EXPECT_EQ(ptlc_me_unlink(A(), PTL_HANDLE_NONE), PTL_ME_INVALID);
  EXPECT_EQ(ptlc_eq_free(A(), PTL_EQ_NONE, nullptr), PTL_EQ_INVALID);
}

TEST_F(Handles, SlotOfEveryHandleIsTheNiSlot) {
  Ni ni(5, 1, 2);
  Eq eq(ni, 4);
  ptl_handle_me_t me = ni.Me(0);
  ptl_handle_md_t md = ni.Bind(MakeMd(nullptr, 0, 0));
  EXPECT_EQ(ptlc_handle_slot(ptlc_ni_handle(ni)), 5);
  EXPECT_EQ(ptlc_handle_slot(me), 5);
  EXPECT_EQ(ptlc_handle_slot(md), 5);
  EXPECT_EQ(ptlc_handle_slot(eq.handle()), 5);
}

TEST_F(Handles, WrongTypeIsRejectedWithTheTypeSpecificCode) {
  Eq eq(A(), 4);
  ptl_handle_me_t me = A().Me(0);
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0));
  EXPECT_EQ(ptlc_md_unlink(A(), me), PTL_MD_INVALID);
  EXPECT_EQ(ptlc_md_unlink(A(), eq.handle()), PTL_MD_INVALID);
  EXPECT_EQ(ptlc_me_unlink(A(), md), PTL_ME_INVALID);
  EXPECT_EQ(ptlc_eq_free(A(), md, nullptr), PTL_EQ_INVALID);
  ptlc_md_spec s = Spec(MakeMd(nullptr, 0, 0));
  ptl_handle_md_t out;
  EXPECT_EQ(ptlc_md_attach(A(), md, &s, PTL_RETAIN, &out), PTL_ME_INVALID);
}

TEST_F(Handles, StaleHandleOfARecycledSlotIsInvalid) {
  ptl_handle_md_t first = A().Bind(MakeMd(nullptr, 0, 0));
  ASSERT_EQ(ptlc_md_unlink(A(), first), PTL_OK);
  ptl_handle_md_t second = A().Bind(MakeMd(nullptr, 0, 0));
  EXPECT_NE(first, second);
  EXPECT_EQ(ptlc_md_unlink(A(), first), PTL_MD_INVALID);
  EXPECT_TRUE(A().MdLive(second));
}

TEST_F(Handles, SlotsAreReusedOldestFirstSoGenerationsRarelyRepeat) {
  std::vector<ptl_handle_md_t> seen;
  for (int i = 0; i < 300; i++) {
    ptl_handle_md_t h = A().Bind(MakeMd(nullptr, 0, 0));
    for (auto old : seen) ASSERT_NE(h, old);
    seen.push_back(h);
    ASSERT_EQ(ptlc_md_unlink(A(), h), PTL_OK);
  }
}

TEST_F(Handles, NiHandleOfAnyLiveObjectIsTheOwningNi) {
  Eq eq(A(), 2);
  ptl_handle_me_t me = A().Me(1);
  ptl_handle_md_t md = A().Attach(me, MakeMd(nullptr, 0, PTL_MD_OP_PUT));
  ptl_handle_ni_t nih = 0;
  for (ptl_handle_any_t h : {me, md, eq.handle(), ptlc_ni_handle(A())}) {
    ASSERT_EQ(ptlc_ni_handle_of(A(), h, &nih), PTL_OK);
    EXPECT_EQ(nih, ptlc_ni_handle(A()));
  }
  ASSERT_EQ(ptlc_md_unlink(A(), md), PTL_OK);
  EXPECT_EQ(ptlc_ni_handle_of(A(), md, &nih), PTL_HANDLE_INVALID);
  EXPECT_EQ(ptlc_ni_handle_of(A(), me, &nih), PTL_HANDLE_INVALID)
      << "PTL_UNLINK ME went with its MD";
}

TEST_F(Handles, HandleOfAnotherNiSlotIsNotOurs) {
  ptl_handle_md_t md = B().Bind(MakeMd(nullptr, 0, 0));
  ptl_handle_ni_t nih;
  EXPECT_EQ(ptlc_ni_handle_of(A(), md, &nih), PTL_HANDLE_INVALID);
  EXPECT_EQ(ptlc_md_unlink(A(), md), PTL_MD_INVALID);
}

TEST_F(Handles, NewNiIncarnationInTheSameSlotRejectsOldHandles) {
  auto first = std::make_unique<Ni>(3, 1, 2);
  ptl_handle_ni_t old_ni = ptlc_ni_handle(*first);
  ptl_handle_md_t old_md = first->Bind(MakeMd(nullptr, 0, 0));
  first.reset();
  Ni second(3, 1, 2);
  EXPECT_FALSE(ptlc_ni_handle_valid(second, old_ni));
  EXPECT_TRUE(ptlc_ni_handle_valid(second, ptlc_ni_handle(second)));
  ptl_handle_md_t new_md = second.Bind(MakeMd(nullptr, 0, 0));
  EXPECT_NE(new_md, old_md);
  EXPECT_EQ(ptlc_md_unlink(second, old_md), PTL_MD_INVALID);
}

TEST_F(Handles, NoLiveHandleIsZero) {
  ptl_handle_md_t md = A().Bind(MakeMd(nullptr, 0, 0));
  EXPECT_NE(md, 0u);
  EXPECT_NE(ptlc_ni_handle(A()), 0u);
}

}  // namespace
}  // namespace ptltest
