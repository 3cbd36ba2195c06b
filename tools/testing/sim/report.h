// SPDX-License-Identifier: BSD-3-Clause
// What ptl-sim prints: one TSV row per run, with the columns of
// build/bench/scalebench.tsv where they apply, then the model's own; and
// the measured rows of a scalebench TSV next to the model's prediction.
#ifndef PTL_SIM_REPORT_H
#define PTL_SIM_REPORT_H

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "workload.h"

namespace ptl_sim {

void PrintHeader(std::ostream& os);
void PrintRow(std::ostream& os, const RunResult& r);

// A row of a scalebench TSV (columns found by the header's names; a
// missing column or "-" is absent).
struct Measured {
  std::string source;
  int nodes = 0;
  Workload workload = Workload::kIncast;
  double seconds = 0, mbps = 0;
  std::optional<double> peers, retransmits, timeouts, failed, refused, backlog_drops;
};

// The rows of `path`; false (and why) if it cannot be read.
bool ReadMeasured(const std::string& path, std::vector<Measured>* rows, std::string* why);

struct Comparison {
  Measured m;
  RunResult p;
};

void PrintValidation(std::ostream& os, const std::vector<Comparison>& rows, bool markdown);

}  // namespace ptl_sim

#endif  // PTL_SIM_REPORT_H
