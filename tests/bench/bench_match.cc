// Matching cost as a portal's match list grows (reported, not asserted).
//
// BM_Match*: the translation step alone (ptlc_match_request) over lists of
// 1..100,000 entries, the wanted entry last (worst case). Lists longer than
// an NI may hold (65,535 MEs) are built directly from core objects, linked
// with the core's own ptlc_pt_insert (so they are indexed as usual).
// BM_Receive*: the whole receive path (ACL, match, events, finalize) through
// the public API, up to the per-NI limit; BM_ReceiveDirect the same over
// BM_Match's lists, for 100,000 entries.
//
// Kinds: exact (source and bits given, no ignore bits: hashed), anysrc (no
// ignore bits, PTL_NID_ANY/PTL_PID_ANY: hashed too), wildcard (ignore
// bits: the wild list), mixed (exact and wildcard entries alternating;
// the request names the last exact entry, so every wildcard entry before
// it is still tried).
extern "C" {
#include "ptlc_internal.h"
}

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

namespace {

enum class Kind { kExact, kAnySource, kWildcard, kMixed };

ptlc_ni* MakeNi() {
  ptlc_ni_config cfg{};
  cfg.nid = 1;
  cfg.pid = 1;
  cfg.uid = 1;
  ptlc_ni* ni = nullptr;
  ptlc_ni_create(&cfg, &ni);
  return ni;
}

constexpr uint64_t kWildTag = 1ULL << 63;  // exact requests never match

bool IsExact(Kind kind, uint64_t i) {
  return kind == Kind::kExact || kind == Kind::kAnySource || (kind == Kind::kMixed && i % 2 == 0);
}

// Entry i matches bits i exactly (from 7/7, or any source), or (wildcard)
// any source and any low 16 bits of (i << 16) (with the tag in mixed lists).
void Describe(Kind kind, uint64_t i, ptlc_me* me) {
  me->match_id = {PTL_NID_ANY, PTL_PID_ANY};
  if (IsExact(kind, i)) {
    if (kind != Kind::kAnySource) me->match_id = {7, 7};
    me->match_bits = i;
    me->ignore_bits = 0;
  } else {
    me->match_bits = (i << 16) | (kind == Kind::kMixed ? kWildTag : 0);
    me->ignore_bits = 0xffff;
  }
}

// A request for the last entry of n (the last exact one in mixed lists).
ptl_hdr Request(Kind kind, uint64_t n) {
  ptl_hdr h{};
  h.type = PTL_MSG_PUT;
  h.dst = {1, 1};
  h.src = {7, 7};
  h.src_uid = 1;
  uint64_t last = n - 1;
  if (kind == Kind::kMixed && !IsExact(kind, last)) last--;
  h.match_bits = IsExact(kind, last) ? last : (last << 16) | 0x1234;
  return h;
}

// The list of n entries built from core objects, one bound MD for all.
struct DirectList {
  DirectList(Kind kind, uint64_t n) : ni(MakeNi()), mes(n) {
    ptlc_md_spec spec{};
    spec.desc.options = PTL_MD_OP_PUT;
    spec.desc.threshold = PTL_MD_THRESH_INF;
    spec.desc.eq_handle = PTL_EQ_NONE;
    ptl_handle_md_t mdh;
    ptlc_md_bind(ni, &spec, PTL_RETAIN, &mdh);
    ptlc_md* md = ptlc_md_lookup(ni, mdh);
    ptlc_list* head = &ni->pt[0].mes;
    ni->limits.max_me_list = static_cast<int>(n);
    for (uint64_t i = 0; i < n; i++) {
      Describe(kind, i, &mes[i]);
      mes[i].md = md;
      mes[i].pt_index = 0;
      ptlc_list_init(&mes[i].link);
      ptlc_list_init(&mes[i].ilink);
      ptlc_pt_insert(ni, &mes[i], head->prev, head);
      if ((i & (i + 1)) == 0) ptlc_mh_grow(ni);  // as ptlc_me_attach does
    }
    ptlc_mh_grow(ni);
  }
  ~DirectList() {
    for (auto& me : mes) ptlc_pt_remove(ni, &me);  // not the NI's to free
    ptlc_ni_destroy(ni);
  }
  ptlc_ni* ni;
  std::vector<ptlc_me> mes;
};

void BM_Match(benchmark::State& state, Kind kind) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  DirectList list(kind, n);
  ptl_hdr h = Request(kind, n);
  ptlc_match m{};
  for (auto _ : state) {
    bool found = ptlc_match_request(list.ni, &h, PTL_MD_OP_PUT, &m);
    benchmark::DoNotOptimize(found);
    benchmark::DoNotOptimize(m);
  }
  state.counters["entries"] = static_cast<double>(n);
  state.counters["ns_per_entry"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The whole receive (as BM_Receive) over lists longer than an NI may hold.
void BM_ReceiveDirect(benchmark::State& state, Kind kind) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  DirectList list(kind, n);
  ptl_hdr h = Request(kind, n);
  ptlc_msg msg;
  for (auto _ : state) {
    if (ptlc_receive(list.ni, &h, 0, &msg) != PTLC_MSG_DEPOSIT) {
      state.SkipWithError("no match");
      break;
    }
    ptlc_msg_finalize(&msg, PTL_NI_OK);
  }
  state.counters["entries"] = static_cast<double>(n);
}

void BM_Receive(benchmark::State& state, Kind kind) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  ptlc_ni* ni = MakeNi();
  for (uint64_t i = 0; i < n; i++) {
    ptlc_me tmpl{};
    Describe(kind, i, &tmpl);
    ptl_handle_me_t me;
    ptlc_me_attach(ni, 0, tmpl.match_id, tmpl.match_bits, tmpl.ignore_bits, PTL_RETAIN,
                   PTL_INS_AFTER, &me);
    ptlc_md_spec spec{};
    spec.desc.options = PTL_MD_OP_PUT;
    spec.desc.threshold = PTL_MD_THRESH_INF;
    spec.desc.eq_handle = PTL_EQ_NONE;
    ptl_handle_md_t md;
    ptlc_md_attach(ni, me, &spec, PTL_RETAIN, &md);
  }
  ptl_hdr h = Request(kind, n);
  ptlc_msg msg;
  for (auto _ : state) {
    if (ptlc_receive(ni, &h, 0, &msg) != PTLC_MSG_DEPOSIT) {
      state.SkipWithError("no match");
      break;
    }
    ptlc_msg_finalize(&msg, PTL_NI_OK);
  }
  ptlc_ni_destroy(ni);
  state.counters["entries"] = static_cast<double>(n);
}

void Sizes(benchmark::internal::Benchmark* b, int64_t max) {
  for (int64_t n : {1, 10, 100, 1000, 10000, 65535, 100000})
    if (n <= max) b->Arg(n);
}

BENCHMARK_CAPTURE(BM_Match, exact, Kind::kExact)->Apply([](auto* b) { Sizes(b, 100000); });
BENCHMARK_CAPTURE(BM_Match, anysrc, Kind::kAnySource)->Apply([](auto* b) { Sizes(b, 100000); });
BENCHMARK_CAPTURE(BM_Match, wildcard, Kind::kWildcard)->Apply([](auto* b) { Sizes(b, 100000); });
BENCHMARK_CAPTURE(BM_Match, mixed, Kind::kMixed)->Apply([](auto* b) { Sizes(b, 100000); });
BENCHMARK_CAPTURE(BM_ReceiveDirect, exact, Kind::kExact)->Arg(1)->Arg(100000);
BENCHMARK_CAPTURE(BM_ReceiveDirect, wildcard, Kind::kWildcard)->Arg(1)->Arg(100000);
BENCHMARK_CAPTURE(BM_Receive, exact, Kind::kExact)->Apply([](auto* b) { Sizes(b, 65535); });
BENCHMARK_CAPTURE(BM_Receive, anysrc, Kind::kAnySource)->Apply([](auto* b) { Sizes(b, 65535); });
BENCHMARK_CAPTURE(BM_Receive, wildcard, Kind::kWildcard)->Apply([](auto* b) { Sizes(b, 65535); });
BENCHMARK_CAPTURE(BM_Receive, mixed, Kind::kMixed)->Apply([](auto* b) { Sizes(b, 65535); });

}  // namespace

BENCHMARK_MAIN();
