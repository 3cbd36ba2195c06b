// Memory accounting: every byte the core allocates for an NI is offered to
// the glue's charge hook first, refused charges fail cleanly with
// PTL_NO_SPACE, and every charge comes back when the object goes.
#include "core_harness.h"

namespace ptltest {
namespace {

class ChargeTest : public CoreTest {};

ptl_md_iovec_t* NoBytes(std::vector<ptl_md_iovec_t>& iov) {
  for (auto& v : iov) v = {nullptr, 0};
  return iov.data();
}

ptlc_md_spec IovecSpec(std::vector<ptl_md_iovec_t>& iov, std::vector<ptlc_seg>& segs) {
  segs.assign(iov.size(), ptlc_seg{0, 0});
  ptlc_md_spec s = Spec(MakeMd(NoBytes(iov), iov.size(), PTL_MD_OP_PUT | PTL_MD_IOVEC));
  s.segs = segs.data();
  s.nsegs = static_cast<unsigned>(segs.size());
  return s;
}

TEST_F(ChargeTest, AnNiIsChargedBeforeItExists) {
  GlueLog log;
  ptlc_ni_config cfg{};
  cfg.nid = 1;
  cfg.pid = 2;
  cfg.ops = &kOps;
  cfg.glue = &log;
  log.budget = 64;  // less than the NI itself
  ptlc_ni* ni = nullptr;
  EXPECT_EQ(ptlc_ni_create(&cfg, &ni), PTL_NO_SPACE);
  EXPECT_EQ(ni, nullptr);
  EXPECT_EQ(log.charged, 0);
  EXPECT_EQ(ptlc_live_objects(), baseline_);

  log.budget = std::numeric_limits<long>::max();
  ASSERT_EQ(ptlc_ni_create(&cfg, &ni), PTL_OK);
  EXPECT_GT(log.charged, static_cast<long>(sizeof(ptl_process_id_t)) * PTLC_CAP_AC_INDEX);
  ptlc_ni_destroy(ni);
  EXPECT_EQ(log.charged, 0);
}

TEST_F(ChargeTest, ObjectsChargeOnCreateAndReturnItOnRelease) {
  GlueLog& log = A().log();
  static char buf[16];
  auto cycle = [&] {
    const long before = log.charged;
    Eq eq(A(), 8);
    ptl_handle_me_t me = A().Me(3);
    ptl_handle_md_t md = A().Attach(me, MakeMd(buf, sizeof(buf), PTL_MD_OP_PUT));
    EXPECT_GT(log.charged, before);
    EXPECT_EQ(ptlc_md_unlink(A(), md), PTL_OK);  // takes the ME along (PTL_UNLINK)
    EXPECT_EQ(eq.Free(), PTL_OK);
  };
  cycle();  // also grows the object tables, which keep their chunks
  const long tables = log.charged;
  cycle();
  EXPECT_EQ(log.charged, tables);
}

// An iovec MD of 1,024 empty segments pins nothing but costs 16 KiB of
// segment table: it is charged, and refused past the budget.
TEST_F(ChargeTest, EmptyIovecMdsAreChargedAndStoppedByTheBudget) {
  GlueLog& log = A().log();
  std::vector<ptl_md_iovec_t> iov(PTLC_CAP_MD_IOVECS);
  std::vector<ptlc_seg> segs;
  ptlc_md_spec s = IovecSpec(iov, segs);
  ptl_handle_md_t md;

  ASSERT_EQ(ptlc_md_bind(A(), &s, PTL_RETAIN, &md), PTL_OK);  // table chunk now exists
  const long per_md = static_cast<long>(sizeof(ptlc_seg)) * PTLC_CAP_MD_IOVECS;
  log.budget = log.charged + 3 * per_md + per_md / 2;
  int made = 0;
  int rc;
  while ((rc = ptlc_md_bind(A(), &s, PTL_RETAIN, &md)) == PTL_OK) made++;
  EXPECT_EQ(rc, PTL_NO_SPACE);
  EXPECT_EQ(made, 3);
  EXPECT_GT(log.refused, 0);
  EXPECT_LE(log.charged, log.budget);
}

TEST_F(ChargeTest, RefusedMeAndEqLeaveNothingBehind) {
  GlueLog& log = A().log();
  const long before = log.charged;
  const long objects = ptlc_live_objects();
  log.budget = before;  // nothing more
  ptl_handle_me_t me;
  EXPECT_EQ(ptlc_me_attach(A(), 0, kAnyId, 0, 0, PTL_UNLINK, PTL_INS_AFTER, &me), PTL_NO_SPACE);
  std::vector<ptl_event_t> ring(8);
  ptl_handle_eq_t eq;
  EXPECT_EQ(ptlc_eq_alloc(A(), ring.data(), 8, nullptr, nullptr, &eq), PTL_NO_SPACE);
  EXPECT_EQ(log.charged, before);
  EXPECT_EQ(ptlc_live_objects(), objects);
}

// PtlMDUpdate swaps segment tables: the new one is charged, the old one
// returned, and a refused update keeps the old MD as it was.
TEST_F(ChargeTest, UpdateChargesTheNewTableAndReturnsTheOld) {
  GlueLog& log = A().log();
  std::vector<ptl_md_iovec_t> small_iov(4), big_iov(512);
  std::vector<ptlc_seg> small_segs, big_segs;
  ptlc_md_spec small = IovecSpec(small_iov, small_segs);
  ptlc_md_spec big = IovecSpec(big_iov, big_segs);
  ptl_handle_md_t md;
  ASSERT_EQ(ptlc_md_bind(A(), &small, PTL_RETAIN, &md), PTL_OK);
  const long with_small = log.charged;

  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &big, PTL_EQ_NONE, 0), PTL_OK);
  const long with_big = log.charged;
  EXPECT_EQ(with_big - with_small, static_cast<long>(sizeof(ptlc_seg)) * (512 - 4));

  log.budget = with_big;  // a second big table cannot be charged
  EXPECT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &big, PTL_EQ_NONE, 0),
            PTL_NO_SPACE);
  EXPECT_EQ(log.charged, with_big);

  log.budget = std::numeric_limits<long>::max();
  ASSERT_EQ(ptlc_md_update(A(), md, nullptr, nullptr, 0, nullptr, &small, PTL_EQ_NONE, 0), PTL_OK);
  EXPECT_EQ(log.charged, with_small);
}

}  // namespace
}  // namespace ptltest
