// Matching at scale: the exact-match hash and the wild lists, merged by
// position, must choose exactly what walking a portal's whole list in order
// chooses (spec 8.1: the first entry whose MD accepts). A randomized
// differential test drives the core with millions of operations (attach,
// insert before/after, ME and MD unlink, MD attach with thresholds, offsets,
// truncation and max_size, incoming puts and gets with random sources and
// bits) and checks every receive against a plain list walk written here,
// plus the index's invariants. PTL_MATCH_DIFF_OPS multiplies the operation
// counts (default 1).
extern "C" {
#include "ptlc_internal.h"
}

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core_harness.h"

namespace ptltest {
namespace {

// ---- the reference: the plain ordered-list walk ----

struct Choice {
  const ptlc_md* md;
  uint64_t offset;
  uint64_t mlength;
};

bool RefMatches(const ptlc_me& me, ptl_process_id_t src, ptl_match_bits_t bits) {
  if (me.match_id.nid != PTL_NID_ANY && me.match_id.nid != src.nid) return false;
  if (me.match_id.pid != PTL_PID_ANY && me.match_id.pid != src.pid) return false;
  return ((me.match_bits ^ bits) & ~me.ignore_bits) == 0;
}

std::optional<Choice> RefAccepts(const ptlc_md& md, uint32_t op_bits, const ptl_hdr& h) {
  if ((md.desc.options & op_bits) != op_bits) return std::nullopt;
  if (md.desc.threshold == 0 || md.maxed) return std::nullopt;
  const uint64_t len = md.length;
  const uint64_t o = (md.desc.options & PTL_MD_MANAGE_REMOTE) ? h.offset : md.local_offset;
  if (o > len) return std::nullopt;
  if (h.rlength <= len - o) return Choice{&md, o, h.rlength};
  if (md.desc.options & PTL_MD_TRUNCATE) return Choice{&md, o, len - o};
  return std::nullopt;
}

std::optional<Choice> RefWalk(ptlc_ni* ni, const ptl_hdr& h, uint32_t op_bits) {
  ptlc_list* head = &ni->pt[h.pt_index].mes;
  for (ptlc_list* l = head->next; l != head; l = l->next) {
    const ptlc_me& me = *PTLC_CONTAINER_OF(l, ptlc_me, link);
    if (!me.md || !RefMatches(me, h.src, h.match_bits)) continue;
    if (auto c = RefAccepts(*me.md, op_bits, h)) return c;
  }
  return std::nullopt;
}

// ---- a glue whose charges can fail at random (bucket arrays included) ----

struct FlakyGlue {
  std::mt19937_64* rng = nullptr;
  unsigned refuse_percent = 0;  // of allocations of 1 KiB and more
  long charged = 0;
};

bool FlakyCharge(void* glue, long bytes) {
  auto* g = static_cast<FlakyGlue*>(glue);
  if (bytes >= 1024 && g->refuse_percent && (*g->rng)() % 100 < g->refuse_percent) return false;
  g->charged += bytes;
  return true;
}

void NoRelease(void*, void*) {}
void NoNotify(void*, void*) {}

const ptlc_ops kFlakyOps{NoRelease, NoNotify, FlakyCharge, nullptr};

// ---- the driver ----

struct Config {
  uint64_t seed;
  uint64_t ops;
  size_t max_mes;           // the driver unlinks more when above it
  uint32_t portals;         // portals used (1..4)
  uint32_t gap_shift;       // position spacing; small values force relabels
  unsigned refuse_percent;  // failed big allocations: no or a stale hash
  uint32_t bit_values;      // match bits drawn from [0, bit_values)
  uint64_t renew = 0;       // a new NI every this many operations (0: never)
};

void PrintTo(const Config& c, std::ostream* os) {
  *os << "seed " << c.seed << ", " << c.ops << " ops, up to " << c.max_mes << " MEs on "
      << c.portals << " portals, gap 2^" << c.gap_shift << ", " << c.refuse_percent << "% refused, "
      << c.bit_values << " bit values, new NI every " << c.renew;
}

constexpr ptl_nid_t kNid = 10;
constexpr ptl_pid_t kPid = 20;

class Driver {
 public:
  explicit Driver(const Config& cfg) : cfg_(cfg), rng_(cfg.seed) {
    glue_.rng = &rng_;
    Create();
  }
  ~Driver() { Destroy(); }

  // A new NI every cfg.renew operations: teardown with many MEs, and a
  // new first hash allocation (which refusals make fail: stranded entries).
  void Create() {
    ptlc_ni_config nc{};
    nc.nid = kNid;
    nc.pid = kPid;
    nc.uid = kUid;
    nc.ops = &kFlakyOps;
    nc.glue = &glue_;
    glue_.refuse_percent = 0;  // the NI itself is not refused
    ASSERT_EQ(ptlc_ni_create(&nc, &ni_), PTL_OK);
    ni_->mh.gap_shift = cfg_.gap_shift;
    glue_.refuse_percent = cfg_.refuse_percent;
    order_.assign(cfg_.portals, {});
  }
  void Destroy() {
    relabels_ += ni_->mh.relabels;
    ptlc_ni_destroy(ni_);
    ni_ = nullptr;
    EXPECT_EQ(glue_.charged, 0);
  }

  void Run() {
    for (uint64_t i = 0; i < cfg_.ops && !::testing::Test::HasFailure(); i++) {
      Step();
      max_live = std::max<uint64_t>(max_live, Live());
      if (ni_->mh.buckets) max_buckets = std::max<uint64_t>(max_buckets, ni_->mh.mask + 1);
      if (ni_->mh.stranded) stranded_seen++;
      if (i % 4096 == 0) CheckInvariants();
      if (cfg_.renew && i % cfg_.renew == cfg_.renew - 1) {
        Destroy();
        Create();
      }
    }
    CheckInvariants();
  }

  uint64_t relabels() const { return relabels_ + ni_->mh.relabels; }
  uint64_t receives = 0;
  uint64_t matched = 0;
  uint64_t max_live = 0;
  uint64_t max_buckets = 0;
  uint64_t stranded_seen = 0;

 private:
  uint64_t Pick(uint64_t n) { return rng_() % n; }

  size_t Live() const {
    size_t n = 0;
    for (const auto& o : order_) n += o.size();
    return n;
  }

  ptl_process_id_t RandomId(bool for_me) {
    static constexpr ptl_nid_t nids[] = {kNid, 11, 12};
    static constexpr ptl_pid_t pids[] = {kPid, 21};
    ptl_process_id_t id{nids[Pick(3)], pids[Pick(2)]};
    if (for_me) {
      // Mostly fully given (hashed), sometimes ANY in either or both.
      const uint64_t r = Pick(8);
      if (r == 0) id.nid = PTL_NID_ANY;
      if (r == 1) id.pid = PTL_PID_ANY;
      if (r == 2) id = {PTL_NID_ANY, PTL_PID_ANY};
    } else if (Pick(64) == 0) {
      // A sender that claims the ANY values itself must not match twice.
      if (Pick(2))
        id.nid = PTL_NID_ANY;
      else
        id.pid = PTL_PID_ANY;
    }
    return id;
  }

  ptl_match_bits_t RandomBits() { return Pick(cfg_.bit_values); }

  ptl_match_bits_t RandomIgnore() {
    switch (Pick(10)) {
      case 0:
        return 1;
      case 1:
        return 3;
      case 2:
        return ~0ULL;
      default:
        return 0;  // exact: hashed
    }
  }

  std::string Dump(uint32_t pt) {
    std::string out;
    ptlc_list* head = &ni_->pt[pt].mes;
    for (ptlc_list* l = head->next; l != head; l = l->next) {
      const ptlc_me* me = PTLC_CONTAINER_OF(l, ptlc_me, link);
      out += std::to_string(me->pos) + " id " + std::to_string(me->match_id.nid) + "/" +
             std::to_string(me->match_id.pid) + " bits " + std::to_string(me->match_bits) +
             " ign " + std::to_string(me->ignore_bits) + " hashed " + std::to_string(me->hashed) +
             " md " + (me->md ? "yes" : "no") + "\n";
    }
    return out;
  }

  // Drops handles the core unlinked on its own (auto-unlink).
  void Sync() {
    for (auto& o : order_)
      std::erase_if(o, [&](ptl_handle_me_t h) { return !ptlc_htab_lookup(&ni_->mes, h); });
  }

  void Attach() {
    const uint32_t pt = static_cast<uint32_t>(Pick(cfg_.portals));
    const ptl_ins_pos_t pos = Pick(2) ? PTL_INS_AFTER : PTL_INS_BEFORE;
    ptl_handle_me_t h;
    const int rc = ptlc_me_attach(ni_, pt, RandomId(true), RandomBits(), RandomIgnore(),
                                  Pick(2) ? PTL_UNLINK : PTL_RETAIN, pos, &h);
    if (rc == PTL_NO_SPACE) return;
    ASSERT_EQ(rc, PTL_OK);
    auto& o = order_[pt];
    if (pos == PTL_INS_AFTER)
      o.push_back(h);
    else
      o.insert(o.begin(), h);
  }

  void Insert() {
    const uint32_t pt = static_cast<uint32_t>(Pick(cfg_.portals));
    auto& o = order_[pt];
    if (o.empty()) return Attach();
    const size_t at = Pick(o.size());
    const ptl_ins_pos_t pos = Pick(2) ? PTL_INS_AFTER : PTL_INS_BEFORE;
    ptl_handle_me_t h;
    const int rc = ptlc_me_insert(ni_, o[at], RandomId(true), RandomBits(), RandomIgnore(),
                                  Pick(2) ? PTL_UNLINK : PTL_RETAIN, pos, &h);
    if (rc == PTL_NO_SPACE) return;
    ASSERT_EQ(rc, PTL_OK);
    o.insert(o.begin() + static_cast<long>(at + (pos == PTL_INS_AFTER)), h);
  }

  // A random live ME (any portal), or nothing.
  std::optional<ptl_handle_me_t> AnyMe() {
    const size_t n = Live();
    if (!n) return std::nullopt;
    size_t k = Pick(n);
    for (const auto& o : order_) {
      if (k < o.size()) return o[k];
      k -= o.size();
    }
    return std::nullopt;
  }

  void UnlinkMe() {
    auto h = AnyMe();
    if (!h) return;
    ASSERT_EQ(ptlc_me_unlink(ni_, *h), PTL_OK);
    Sync();
  }

  void AttachMd() {
    auto h = AnyMe();
    if (!h) return;
    static constexpr uint64_t lengths[] = {0, 8, 16, 64};
    static constexpr int thresholds[] = {PTL_MD_THRESH_INF, 0, 1, 2, 3};
    ptlc_seg seg{0x1000, lengths[Pick(4)]};
    unsigned opt = 0;
    if (Pick(8)) opt |= PTL_MD_OP_PUT;
    if (Pick(2)) opt |= PTL_MD_OP_GET;
    if (Pick(4) == 0) opt |= PTL_MD_MANAGE_REMOTE;
    if (Pick(3) == 0) opt |= PTL_MD_TRUNCATE;
    if (Pick(4) == 0) opt |= PTL_MD_MAX_SIZE;
    ptlc_md_spec s = Spec(MakeMd(nullptr, seg.len, opt, thresholds[Pick(5)]));
    s.desc.max_size = Pick(20);
    s.segs = &seg;
    s.nsegs = 1;
    ptl_handle_md_t md;
    const int rc = ptlc_md_attach(ni_, *h, &s, Pick(2) ? PTL_UNLINK : PTL_RETAIN, &md);
    ASSERT_TRUE(rc == PTL_OK || rc == PTL_ME_IN_USE || rc == PTL_NO_SPACE) << rc;
  }

  void UnlinkMd() {
    auto h = AnyMe();
    if (!h) return;
    const ptlc_me* me = static_cast<const ptlc_me*>(ptlc_htab_lookup(&ni_->mes, *h));
    ASSERT_NE(me, nullptr);
    if (!me->md) return;
    ASSERT_EQ(ptlc_md_unlink(ni_, ptlc_md_handle(ni_, me->md)), PTL_OK);
    Sync();
  }

  void Receive() {
    static constexpr uint64_t rlengths[] = {0, 4, 8, 16, 40, 100};
    static constexpr uint64_t offsets[] = {0, 4, 16, 70};
    ptl_hdr h{};
    const bool get = Pick(4) == 0;
    h.type = get ? PTL_MSG_GET : PTL_MSG_PUT;
    h.dst = {kNid, kPid};
    h.src = RandomId(false);
    h.src_uid = kUid;
    h.pt_index = static_cast<uint32_t>(Pick(cfg_.portals));
    h.match_bits = RandomBits();
    h.rlength = rlengths[Pick(6)];
    h.offset = offsets[Pick(4)];
    h.md_handle = PTL_HANDLE_NONE;
    const uint32_t op = get ? PTL_MD_OP_GET : PTL_MD_OP_PUT;

    const std::optional<Choice> want = RefWalk(ni_, h, op);
    ptlc_msg msg;
    const ptlc_action a = ptlc_receive(ni_, &h, 0, &msg);
    receives++;
    if (!want) {
      ASSERT_EQ(a, PTLC_MSG_DROP);
      ASSERT_EQ(msg.drop, PTLC_DROP_NO_MATCH);
      return;
    }
    matched++;
    ASSERT_NE(a, PTLC_MSG_DROP) << "drop " << msg.drop << " src " << h.src.nid << "/" << h.src.pid
                                << " bits " << h.match_bits << " pt " << h.pt_index << "\n"
                                << Dump(h.pt_index);
    ASSERT_EQ(msg.md, want->md) << "a different entry than the list walk's first";
    ASSERT_EQ(msg.offset, want->offset);
    ASSERT_EQ(msg.mlength, want->mlength);
    const bool may_unlink = msg.md->unlink_op == PTL_UNLINK;
    ptlc_msg_finalize(&msg, PTL_NI_OK);
    if (may_unlink) Sync();
  }

  void Step() {
    const bool full = Live() >= cfg_.max_mes;
    switch (Pick(16)) {
      case 0:
      case 1:
      case 2:
        if (full) return UnlinkMe();
        return Attach();
      case 3:
      case 4:
        if (full) return UnlinkMe();
        return Insert();
      case 5:
      case 6:
        return UnlinkMe();
      case 7:
      case 8:
      case 9:
        return AttachMd();
      case 10:
        return UnlinkMd();
      default:
        return Receive();
    }
  }

  // The index agrees with the lists: order, positions, membership, counts.
  void CheckInvariants() {
    const ptlc_mh& mh = ni_->mh;
    uint32_t hashed = 0, stranded = 0, nclass[PTLC_MH_CLASSES] = {};
    for (uint32_t pt = 0; pt <= static_cast<uint32_t>(ni_->limits.max_pt_index); pt++) {
      ptlc_list* head = &ni_->pt[pt].mes;
      std::vector<const ptlc_me*> wild_expected;
      size_t i = 0;
      uint64_t last = 0;
      for (ptlc_list* l = head->next; l != head; l = l->next, i++) {
        const ptlc_me* me = PTLC_CONTAINER_OF(l, ptlc_me, link);
        ASSERT_LT(pt, order_.size());
        ASSERT_LT(i, order_[pt].size());
        ASSERT_EQ(ptlc_htab_lookup(&ni_->mes, order_[pt][i]), me) << "list order differs";
        ASSERT_GT(me->pos, last) << "positions must increase along the list";
        last = me->pos;
        ASSERT_EQ(me->pt_index, pt);
        if (me->hashed) {
          ASSERT_EQ(me->ignore_bits, 0u);
          ASSERT_NE(mh.buckets, nullptr);
          hashed++;
          nclass[(me->match_id.nid == PTL_NID_ANY ? 1 : 0) |
                 (me->match_id.pid == PTL_PID_ANY ? 2 : 0)]++;
          // In its key's bucket.
          ptlc_list* b = &mh.buckets[ptlc_mh_bucket(&mh, pt, me->match_id, me->match_bits)];
          bool found = false;
          for (ptlc_list* c = b->next; c != b && !found; c = c->next)
            found = ptlc_me_of_ilink(c) == me;
          ASSERT_TRUE(found) << "hashed entry not in its bucket";
        } else {
          if (!me->ignore_bits) stranded++;
          wild_expected.push_back(me);
        }
      }
      if (pt < order_.size()) {
        ASSERT_EQ(i, order_[pt].size()) << "list shorter than model";
      }
      std::vector<const ptlc_me*> wild;
      for (ptlc_list* l = ni_->pt[pt].wild.next; l != &ni_->pt[pt].wild; l = l->next)
        wild.push_back(ptlc_me_of_ilink(l));
      ASSERT_EQ(wild, wild_expected) << "wild list is not the unhashed entries in order";
    }
    ASSERT_EQ(mh.count, hashed);
    ASSERT_EQ(mh.stranded, stranded);
    for (int c = 0; c < PTLC_MH_CLASSES; c++) {
      ASSERT_EQ(mh.nclass[c], nclass[c]);
      ASSERT_EQ((mh.classes >> c) & 1, nclass[c] ? 1u : 0u);
    }
    // Every chain is sorted by (portal, position).
    uint32_t chained = 0;
    for (uint32_t b = 0; mh.buckets && b <= mh.mask; b++) {
      const ptlc_me* prev = nullptr;
      for (ptlc_list* c = mh.buckets[b].next; c != &mh.buckets[b]; c = c->next, chained++) {
        const ptlc_me* me = ptlc_me_of_ilink(c);
        ASSERT_TRUE(me->hashed);
        if (prev) {
          ASSERT_TRUE(prev->pt_index < me->pt_index ||
                      (prev->pt_index == me->pt_index && prev->pos < me->pos))
              << "chain out of order";
        }
        prev = me;
      }
    }
    ASSERT_EQ(chained, hashed);
  }

  Config cfg_;
  std::mt19937_64 rng_;
  FlakyGlue glue_;
  ptlc_ni* ni_ = nullptr;
  uint64_t relabels_ = 0;
  std::vector<std::vector<ptl_handle_me_t>> order_;  // the model list per portal
};

uint64_t Scale() {
  const char* s = std::getenv("PTL_MATCH_DIFF_OPS");
  const uint64_t k = s ? std::strtoull(s, nullptr, 10) : 1;
  return k ? k : 1;
}

class MatchOrderDiffTest : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override { baseline_ = ptlc_live_objects(); }
  void TearDown() override { EXPECT_EQ(ptlc_live_objects(), baseline_); }
  long baseline_ = 0;
};

TEST_P(MatchOrderDiffTest, HashAndWildListChooseWhatTheListWalkChooses) {
  Config cfg = GetParam();
  cfg.ops *= Scale();
  Driver d(cfg);
  d.Run();
  std::printf(
      "%llu operations: %llu receives, %llu matched, %llu entries renumbered, "
      "up to %llu MEs and %llu buckets, %llu times exact entries stranded\n",
      static_cast<unsigned long long>(cfg.ops), static_cast<unsigned long long>(d.receives),
      static_cast<unsigned long long>(d.matched), static_cast<unsigned long long>(d.relabels()),
      static_cast<unsigned long long>(d.max_live), static_cast<unsigned long long>(d.max_buckets),
      static_cast<unsigned long long>(d.stranded_seen));
  EXPECT_GT(d.matched, d.receives / 20) << "too few receives matched to prove much";
}

// seed, ops, max MEs, portals, gap shift, refused %, bit values, renew
INSTANTIATE_TEST_SUITE_P(Random, MatchOrderDiffTest,
                         ::testing::Values(
                             // Short lists, few keys: many equal keys, refusals, interleaving.
                             Config{1, 1000000, 24, 2, PTLC_POS_GAP_SHIFT, 0, 4},
                             // Tiny gaps: positions run out all the time and are renumbered.
                             Config{2, 1000000, 64, 3, 1, 0, 6},
                             Config{3, 600000, 200, 4, 2, 0, 16},
                             // Failed allocations: no hash, stranded entries, stale tables.
                             Config{4, 600000, 100, 4, 3, 80, 8, 5000},
                             // Longer lists: the hash grows (and relabels reach further).
                             Config{5, 100000, 3000, 2, 4, 5, 512}),
                         [](const ::testing::TestParamInfo<Config>& i) {
                           return "Seed" + std::to_string(i.param.seed);
                         });

// Prepending and appending forever, and inserting always at the same place,
// keep positions ordered and the relabel work bounded.
TEST(MatchOrderTest, RepeatedInsertionAtOnePlaceStaysOrderedAndCheap) {
  Ni ni;
  ptl_handle_me_t first, last, mid;
  ASSERT_EQ(ptlc_me_attach(ni, 0, kAnyId, 1, 0, PTL_RETAIN, PTL_INS_AFTER, &first), PTL_OK);
  ASSERT_EQ(ptlc_me_attach(ni, 0, kAnyId, 2, 0, PTL_RETAIN, PTL_INS_AFTER, &last), PTL_OK);
  const int n = 20000;
  for (int i = 0; i < n; i++) {
    // Always right after `first`: every new entry halves the same gap.
    ASSERT_EQ(ptlc_me_insert(ni, first, kAnyId, 3, 0, PTL_RETAIN, PTL_INS_AFTER, &mid), PTL_OK);
  }
  uint64_t last_pos = 0;
  ptlc_list* head = &ni.get()->pt[0].mes;
  for (ptlc_list* l = head->next; l != head; l = l->next) {
    const ptlc_me* me = PTLC_CONTAINER_OF(l, ptlc_me, link);
    ASSERT_GT(me->pos, last_pos);
    last_pos = me->pos;
  }
  // Amortized O(log^2 n) renumbering, far below n^2 / 2.
  EXPECT_LT(ni.get()->mh.relabels, static_cast<uint64_t>(n) * 400);
}

}  // namespace
}  // namespace ptltest
