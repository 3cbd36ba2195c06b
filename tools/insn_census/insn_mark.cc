// insn_mark: executes insn_census's marker instruction once, so that a
// guest running under QEMU with the insn_census plugin snapshots its
// per-instruction counters (tools/testing/bench/insn-budget). Outside such
// a guest it is a no-op.
#include "insn_mark.h"

int main() {
  insn_census::Mark();
  return 0;
}
