// The marker that insn_census's plugin watches for: an instruction no
// compiler emits, `nopl 0x50544c4d(%rax)` ("MLTP" as its displacement).
// A benchmark executes it (Mark(), --insn-marks) to tell the plugin "take
// a snapshot of every counter now"; it does nothing else.
#ifndef PTL_INSN_CENSUS_INSN_MARK_H
#define PTL_INSN_CENSUS_INSN_MARK_H

#include <array>
#include <cstdint>

namespace insn_census {

inline constexpr std::array<uint8_t, 7> kMarker = {0x0f, 0x1f, 0x80, 0x4d, 0x4c, 0x54, 0x50};

inline void Mark() { asm volatile(".byte 0x0f, 0x1f, 0x80, 0x4d, 0x4c, 0x54, 0x50" ::: "memory"); }

}  // namespace insn_census

#endif
