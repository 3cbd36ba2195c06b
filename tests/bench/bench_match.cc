// Matching cost as a portal's match list grows (reported, not asserted).
//
// BM_Match*: the translation step alone (ptlc_match_request) over lists of
// 1..100,000 entries, the wanted entry last (worst case). Lists longer than
// an NI may hold (65,535 MEs) are built directly from core objects.
// BM_Receive*: the whole receive path (ACL, match, events, finalize) through
// the public API, up to the per-NI limit.
extern "C" {
#include "ptlc_internal.h"
}

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

namespace {

enum class Kind { kExact, kWildcard };

ptlc_ni* MakeNi() {
  ptlc_ni_config cfg{};
  cfg.nid = 1;
  cfg.pid = 1;
  cfg.uid = 1;
  ptlc_ni* ni = nullptr;
  ptlc_ni_create(&cfg, &ni);
  return ni;
}

// Entry i matches bits i exactly, or (wildcard) any source and any low
// 16 bits of (i << 16).
void Describe(Kind kind, uint64_t i, ptlc_me* me) {
  me->match_id = {PTL_NID_ANY, PTL_PID_ANY};
  if (kind == Kind::kExact) {
    me->match_id = {7, 7};
    me->match_bits = i;
    me->ignore_bits = 0;
  } else {
    me->match_bits = i << 16;
    me->ignore_bits = 0xffff;
  }
}

ptl_hdr Request(Kind kind, uint64_t n) {
  ptl_hdr h{};
  h.type = PTL_MSG_PUT;
  h.dst = {1, 1};
  h.src = {7, 7};
  h.src_uid = 1;
  h.match_bits = kind == Kind::kExact ? n - 1 : ((n - 1) << 16) | 0x1234;
  return h;
}

void BM_Match(benchmark::State& state, Kind kind) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  ptlc_ni* ni = MakeNi();
  ptlc_md_spec spec{};
  spec.desc.options = PTL_MD_OP_PUT;
  spec.desc.threshold = PTL_MD_THRESH_INF;
  spec.desc.eq_handle = PTL_EQ_NONE;
  ptl_handle_md_t mdh;
  ptlc_md_bind(ni, &spec, PTL_RETAIN, &mdh);
  ptlc_md* md = ptlc_md_lookup(ni, mdh);
  std::vector<ptlc_me> mes(n);
  ptlc_list* head = &ni->pt[0].mes;
  for (uint64_t i = 0; i < n; i++) {
    Describe(kind, i, &mes[i]);
    mes[i].md = md;
    ptlc_list_add_between(&mes[i].link, head->prev, head);
  }
  ptl_hdr h = Request(kind, n);
  ptlc_match m{};
  for (auto _ : state) {
    bool found = ptlc_match_request(ni, &h, PTL_MD_OP_PUT, &m);
    benchmark::DoNotOptimize(found);
    benchmark::DoNotOptimize(m);
  }
  ptlc_list_init(head);  // the entries are not the NI's to free
  ptlc_ni_destroy(ni);
  state.counters["entries"] = static_cast<double>(n);
  state.counters["ns_per_entry"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
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
BENCHMARK_CAPTURE(BM_Match, wildcard, Kind::kWildcard)->Apply([](auto* b) { Sizes(b, 100000); });
BENCHMARK_CAPTURE(BM_Receive, exact, Kind::kExact)->Apply([](auto* b) { Sizes(b, 65535); });
BENCHMARK_CAPTURE(BM_Receive, wildcard, Kind::kWildcard)->Apply([](auto* b) { Sizes(b, 65535); });

}  // namespace

BENCHMARK_MAIN();
