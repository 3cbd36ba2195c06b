// insn_budget: turns insn_census snapshots into instructions per function.
//
//   insn_budget --kallsyms FILE [--maps FILE] [--root DIR] [--calls] --per N
//               BEFORE AFTER [BEFORE2 AFTER2]
//
// With one pair, each address's count is AFTER - BEFORE. With two pairs
// (the same workload run twice, N more iterations the second time), it is
// (AFTER2 - BEFORE2) - (AFTER - BEFORE): start-up and tear-down cancel and
// what is left is N iterations exactly. Counts are divided by --per.
// Kernel addresses are named from the guest's /proc/kallsyms (taken in the
// same boot); user addresses from a process's /proc/PID/maps (the guest
// booted with norandmaps, so every process of the same binary has the same
// layout) and the ELF symbol tables of the mapped files (read under --root,
// default /). Output, most first: instructions per iteration, function,
// where (module or file), tab-separated, and with --calls the calls per
// iteration (the count of the function's first instruction; a function
// that loops back to its entry counts too), then a total line.
#include <elf.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Symbol {
  uint64_t addr;
  std::string name;
  std::string where;
};

using Counts = std::unordered_map<uint64_t, uint64_t>;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "insn_budget: %s\n", why.c_str());
  std::exit(1);
}

Counts ReadSnapshot(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  Counts counts;
  std::string a, c;
  while (in >> a >> c) counts[std::stoull(a, nullptr, 16)] = std::stoull(c, nullptr, 16);
  return counts;
}

// after - before, per address (counters only grow).
std::unordered_map<uint64_t, int64_t> Delta(const Counts& before, const Counts& after) {
  std::unordered_map<uint64_t, int64_t> d;
  for (const auto& [addr, n] : after) {
    auto it = before.find(addr);
    const uint64_t was = it == before.end() ? 0 : it->second;
    if (n != was) d[addr] = static_cast<int64_t>(n - was);
  }
  return d;
}

std::vector<Symbol> ReadKallsyms(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::vector<Symbol> syms;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string addr, type, name, module;
    if (!(l >> addr >> type >> name)) continue;
    if (type != "t" && type != "T" && type != "w" && type != "W") continue;
    l >> module;
    syms.push_back({std::stoull(addr, nullptr, 16), name, module.empty() ? "vmlinux" : module});
  }
  std::sort(syms.begin(), syms.end(), [](auto& x, auto& y) { return x.addr < y.addr; });
  return syms;
}

// An ELF file's functions by virtual address, and its loadable segments.
struct ElfFile {
  struct Segment {
    uint64_t offset, vaddr, size;
  };
  std::vector<Segment> segments;
  std::vector<Symbol> syms;  // sorted by addr (ELF virtual address)
};

std::unique_ptr<ElfFile> LoadElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  std::string data((std::istreambuf_iterator<char>(in)), {});
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0)
    return nullptr;
  auto at = [&](uint64_t off, uint64_t len) {
    if (off > data.size() || len > data.size() - off) Die("truncated ELF " + path);
    return data.data() + off;
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof(eh));
  auto elf = std::make_unique<ElfFile>();
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    std::memcpy(&ph, at(eh.e_phoff + i * sizeof(ph), sizeof(ph)), sizeof(ph));
    if (ph.p_type == PT_LOAD) elf->segments.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (unsigned i = 0; i < eh.e_shnum; i++)
    std::memcpy(&sh[i], at(eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr)),
                sizeof(Elf64_Shdr));
  for (uint32_t want : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (const Elf64_Shdr& s : sh) {
      if (s.sh_type != want || s.sh_link >= sh.size()) continue;
      const Elf64_Shdr& strtab = sh[s.sh_link];
      for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, at(s.sh_offset + off, sizeof(sym)), sizeof(sym));
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0) continue;
        if (sym.st_name >= strtab.sh_size) continue;
        elf->syms.push_back({sym.st_value, at(strtab.sh_offset + sym.st_name, 1), path});
      }
    }
    if (!elf->syms.empty()) break;  // .symtab if there is one, else .dynsym
  }
  std::sort(elf->syms.begin(), elf->syms.end(), [](auto& x, auto& y) { return x.addr < y.addr; });
  return elf;
}

struct Mapping {
  uint64_t start, end, offset;
  std::string path;
};

std::vector<Mapping> ReadMaps(const std::string& path) {
  std::vector<Mapping> maps;
  if (path.empty()) return maps;
  std::ifstream in(path);
  if (!in) Die("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    char perms[8], file[4096] = "";
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s",
                    &m.start, &m.end, perms, &m.offset, file) < 4)
      continue;
    if (perms[2] != 'x') continue;
    if (file[0] != '/') {
      if (std::strcmp(file, "[vdso]") == 0) maps.push_back({m.start, m.end, 0, file});
      continue;
    }
    m.path = file;
    maps.push_back(m);
  }
  return maps;
}

const Symbol* Find(const std::vector<Symbol>& syms, uint64_t addr) {
  auto it = std::upper_bound(syms.begin(), syms.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.addr; });
  return it == syms.begin() ? nullptr : &*std::prev(it);
}

class Namer {
 public:
  static inline const std::string kGuestRoot = "/newroot";

  Namer(std::vector<Symbol> kernel, std::vector<Mapping> maps, std::string root)
      : kernel_(std::move(kernel)), maps_(std::move(maps)), root_(std::move(root)) {}

  // The function holding @addr and where it lives; *entry: @addr is the
  // function's first instruction (its count is the function's calls).
  std::pair<std::string, std::string> Name(uint64_t addr, bool* entry) {
    *entry = false;
    if (addr >= 0xffff800000000000ULL) {
      const Symbol* s = Find(kernel_, addr);
      if (!s) return {"?kernel", ""};
      *entry = s->addr == addr;
      return {s->name, s->where};
    }
    for (const Mapping& m : maps_) {
      if (addr < m.start || addr >= m.end) continue;
      if (m.path[0] == '[') return {m.path, "user"};
      const ElfFile* elf = Elf(m.path);
      if (!elf) return {"?", m.path};
      const uint64_t off = addr - m.start + m.offset;
      for (const auto& seg : elf->segments) {
        if (off < seg.offset || off >= seg.offset + seg.size) continue;
        const uint64_t vaddr = off - seg.offset + seg.vaddr;
        const Symbol* s = Find(elf->syms, vaddr);
        *entry = s && s->addr == vaddr;
        return {s ? s->name : "?", Base(m.path)};
      }
      return {"?", Base(m.path)};
    }
    return {"?user", ""};
  }

 private:
  static std::string Base(const std::string& p) { return p.substr(p.rfind('/') + 1); }
  const ElfFile* Elf(const std::string& path) {
    auto it = elves_.find(path);
    if (it == elves_.end()) {
      // The test harness's guests see the host's tree under /newroot.
      auto elf = LoadElf(root_ + path);
      if (!elf && path.rfind(kGuestRoot, 0) == 0)
        elf = LoadElf(root_ + path.substr(kGuestRoot.size()));
      it = elves_.emplace(path, std::move(elf)).first;
    }
    return it->second.get();
  }

  std::vector<Symbol> kernel_;
  std::vector<Mapping> maps_;
  std::string root_;
  std::map<std::string, std::unique_ptr<ElfFile>> elves_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string kallsyms, maps, root;
  double per = 1;
  bool calls = false;
  std::vector<std::string> snaps;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    auto value = [&] {
      if (++i >= argc) Die(a + " needs a value");
      return std::string(argv[i]);
    };
    if (a == "--kallsyms")
      kallsyms = value();
    else if (a == "--maps")
      maps = value();
    else if (a == "--root")
      root = value();
    else if (a == "--calls")
      calls = true;
    else if (a == "--per")
      per = std::stod(value());
    else
      snaps.push_back(a);
  }
  if (kallsyms.empty() || (snaps.size() != 2 && snaps.size() != 4) || per <= 0)
    Die("usage: insn_budget --kallsyms FILE [--maps FILE] [--root DIR] [--calls] --per N "
        "BEFORE AFTER [BEFORE2 AFTER2]");
  auto delta = Delta(ReadSnapshot(snaps[0]), ReadSnapshot(snaps[1]));
  if (snaps.size() == 4) {
    auto second = Delta(ReadSnapshot(snaps[2]), ReadSnapshot(snaps[3]));
    for (auto& [addr, n] : delta) second[addr] -= n;
    delta = std::move(second);
  }
  Namer namer(ReadKallsyms(kallsyms), ReadMaps(maps), root);
  struct Tally {
    int64_t insns = 0, calls = 0;
  };
  std::map<std::pair<std::string, std::string>, Tally> per_function;
  int64_t total = 0;
  for (const auto& [addr, n] : delta) {
    bool entry;
    Tally& t = per_function[namer.Name(addr, &entry)];
    t.insns += n;
    if (entry) t.calls += n;
    total += n;
  }
  std::vector<std::pair<Tally, std::pair<std::string, std::string>>> rows;
  for (const auto& [fn, t] : per_function)
    if (t.insns != 0 || t.calls != 0) rows.push_back({t, fn});
  std::sort(rows.begin(), rows.end(),
            [](auto& x, auto& y) { return x.first.insns > y.first.insns; });
  for (const auto& [t, fn] : rows) {
    std::printf("%.1f\t%s\t%s", t.insns / per, fn.first.c_str(), fn.second.c_str());
    if (calls) std::printf("\t%.2f", t.calls / per);
    std::printf("\n");
  }
  std::printf("%.1f\ttotal\t\n", total / per);
  return 0;
}
