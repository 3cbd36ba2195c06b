// insn_census: a QEMU TCG plugin that counts, for every guest instruction
// address, how many times the instruction ran, and writes the counts out
// each time the guest executes the marker of insn_mark.h. Under -icount one
// guest instruction is one nanosecond of virtual time, so the difference
// between two snapshots taken around a workload is an exact, per-address
// account of the virtual time the workload spent
// (tools/testing/bench/insn-budget turns it into functions and stages).
//
//   qemu-system-x86_64 ... -plugin PATH/libinsn_census.so,out=PREFIX
//
// writes PREFIX.0, PREFIX.1, ... (one per marker): lines "ADDRESS COUNT",
// both hexadecimal, every address that has run since boot. Counting is a
// 64-bit add per translated block executed (inline, no helper call); a
// block counts all its instructions, so an exception in the middle of a
// block over-counts the rest of that block once (page faults: rare in a
// warm loop).
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "insn_mark.h"
#include "qemu_plugin_api.h"

#define INSN_CENSUS_EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
}

namespace {

// One translation of a block: its instructions' addresses and how often it
// has run. Never freed: a retranslated block gets a new record and the old
// one keeps its count, so the totals stay right across TB flushes.
struct Block {
  std::vector<uint64_t> addrs;
  uint64_t runs = 0;
};

std::mutex g_lock;
std::deque<Block> g_blocks;  // deque: records never move once made
std::string g_prefix = "insn-census";
unsigned g_snapshots = 0;

bool IsMarker(const qemu_plugin_insn* insn) {
  return qemu_plugin_insn_size(insn) == insn_census::kMarker.size() &&
         std::memcmp(qemu_plugin_insn_data(insn), insn_census::kMarker.data(),
                     insn_census::kMarker.size()) == 0;
}

void WriteSnapshot(unsigned int /*vcpu*/, void* /*udata*/) {
  std::lock_guard<std::mutex> guard(g_lock);
  std::unordered_map<uint64_t, uint64_t> totals;
  totals.reserve(1 << 18);
  for (const Block& b : g_blocks) {
    if (b.runs == 0) continue;
    for (uint64_t a : b.addrs) totals[a] += b.runs;
  }
  const std::string path = g_prefix + "." + std::to_string(g_snapshots++);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    qemu_plugin_outs(("insn_census: cannot write " + path + "\n").c_str());
    return;
  }
  for (const auto& [addr, runs] : totals)
    std::fprintf(f, "%llx %llx\n", static_cast<unsigned long long>(addr),
                 static_cast<unsigned long long>(runs));
  std::fclose(f);
}

void OnTranslate(qemu_plugin_id_t /*id*/, qemu_plugin_tb* tb) {
  const size_t n = qemu_plugin_tb_n_insns(tb);
  Block* block;
  {
    std::lock_guard<std::mutex> guard(g_lock);
    block = &g_blocks.emplace_back();
  }
  block->addrs.reserve(n);
  for (size_t i = 0; i < n; i++) {
    qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    block->addrs.push_back(qemu_plugin_insn_vaddr(insn));
    if (IsMarker(insn))
      qemu_plugin_register_vcpu_insn_exec_cb(insn, WriteSnapshot, QEMU_PLUGIN_CB_NO_REGS, nullptr);
  }
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &block->runs, 1);
}

}  // namespace

INSN_CENSUS_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* /*info*/,
                                           int argc, char** argv) {
  for (int i = 0; i < argc; i++) {
    if (std::strncmp(argv[i], "out=", 4) == 0) {
      g_prefix = argv[i] + 4;
    } else {
      qemu_plugin_outs((std::string("insn_census: unknown option ") + argv[i] + "\n").c_str());
      return -1;
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
  return 0;
}
