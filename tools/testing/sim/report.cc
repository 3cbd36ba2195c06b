// SPDX-License-Identifier: BSD-3-Clause
#include "report.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace ptl_sim {

namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string Opt(const std::optional<double>& v, int digits = 0) {
  return v ? Fixed(*v, digits) : "-";
}

std::string Ratio(double pred, double meas) { return meas > 0 ? Fixed(pred / meas, 2) : "-"; }

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, '\t')) out.push_back(f);
  return out;
}

std::optional<double> Number(const std::string& s) {
  std::string t;
  for (char c : s)
    if (c != ',') t += c;
  if (t.empty() || t == "-") return std::nullopt;
  try {
    std::size_t used = 0;
    double v = std::stod(t, &used);
    if (used != t.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

void PrintHeader(std::ostream& os) {
  os << "nodes\tworkload\tseconds\tMBps\tpeers_max\tretransmits\ttimeouts\tmsgs_failed\trefused"
        "\tbacklog_drops\ttimers_max\tstatus\tswitch_drops\topen_dropped\tprobes\tooo_kb_max"
        "\topen_max\tbacklog_max\tcpu_busy\tdests\tseconds_all\tevents\twall_s\tkeepalives"
        "\tcts_waited\tcts_queue_max\tgranted_kb_max\tcts_wait_ms_max\tcts_reclaimed"
        "\tlate_timers\n";
}

void PrintRow(std::ostream& os, const RunResult& r) {
  const TransportStats& t = r.totals;
  uint64_t refused = t.no_buffer + t.credit_refused + t.ooo_dropped;
  os << r.nodes << '\t' << WorkloadName(r.workload) << '\t' << Fixed(r.seconds, 3) << '\t'
     << Fixed(r.mbps, 1) << '\t' << t.peers_max << '\t' << t.retransmits << '\t' << t.timeouts
     << '\t' << t.msgs_failed << '\t' << refused << '\t' << r.backlog_drops << '\t' << t.timers_max
     << '\t' << (r.ok ? "ok" : "FAILED") << '\t' << r.switch_drops << '\t' << t.rx_open_dropped
     << '\t' << t.probes << '\t' << t.ooo_bytes_max / 1024 << '\t' << t.rx_open_max << '\t'
     << r.backlog_max << '\t' << Fixed(r.cpu_busy, 2) << '\t' << r.dests << '\t'
     << Fixed(r.seconds_all, 3) << '\t' << r.events << '\t' << Fixed(r.wall_seconds, 1) << '\t'
     << t.keepalives << '\t' << t.cts_waited << '\t' << t.cts_queue_max << '\t'
     << t.granted_max / 1024 << '\t' << Fixed(static_cast<double>(t.cts_wait_max) / kMs, 1) << '\t'
     << t.cts_reclaimed << '\t' << t.late_timers << '\n';
}

bool ReadMeasured(const std::string& path, std::vector<Measured>* rows, std::string* why) {
  std::ifstream in(path);
  if (!in) {
    *why = "cannot open " + path;
    return false;
  }
  std::string line;
  std::map<std::string, std::size_t> col;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = Split(line);
    if (col.empty()) {
      for (std::size_t i = 0; i < f.size(); i++) col[f[i]] = i;
      for (const char* need : {"nodes", "workload", "seconds", "MBps"})
        if (!col.count(need)) {
          *why = path + ": no column " + need;
          return false;
        }
      continue;
    }
    auto get = [&](const char* name) -> std::optional<double> {
      auto it = col.find(name);
      if (it == col.end() || it->second >= f.size()) return std::nullopt;
      return Number(f[it->second]);
    };
    Measured m;
    m.source = path;
    auto nodes = get("nodes");
    if (!nodes || !ParseWorkload(f[col["workload"]], &m.workload)) {
      *why = path + ": bad row: " + line;
      return false;
    }
    m.nodes = static_cast<int>(*nodes);
    m.seconds = get("seconds").value_or(0);
    m.mbps = get("MBps").value_or(0);
    m.peers = get("peers_max");
    m.retransmits = get("retransmits");
    m.timeouts = get("timeouts");
    m.failed = get("msgs_failed");
    m.refused = get("refused");
    m.backlog_drops = get("backlog_drops");
    rows->push_back(m);
  }
  return true;
}

void PrintValidation(std::ostream& os, const std::vector<Comparison>& rows, bool markdown) {
  const char* cols[] = {"N",          "workload",      "s meas",        "s pred",
                        "ratio",      "MB/s meas",     "MB/s pred",     "retx meas",
                        "retx pred",  "timeouts meas", "timeouts pred", "drops meas",
                        "drops pred", "peers meas",    "peers pred"};
  std::string sep = markdown ? " | " : "\t";
  if (markdown) os << "| ";
  for (std::size_t i = 0; i < std::size(cols); i++) os << (i ? sep : "") << cols[i];
  os << (markdown ? " |\n" : "\n");
  if (markdown) {
    os << "|";
    for (std::size_t i = 0; i < std::size(cols); i++) os << (i < 2 ? "---|" : "---:|");
    os << "\n";
  }
  for (const auto& c : rows) {
    const TransportStats& t = c.p.totals;
    std::vector<std::string> v = {std::to_string(c.m.nodes),
                                  WorkloadName(c.m.workload),
                                  Fixed(c.m.seconds, 3),
                                  Fixed(c.p.seconds, 3),
                                  Ratio(c.p.seconds, c.m.seconds),
                                  Fixed(c.m.mbps, 1),
                                  Fixed(c.p.mbps, 1),
                                  Opt(c.m.retransmits),
                                  std::to_string(t.retransmits),
                                  Opt(c.m.timeouts),
                                  std::to_string(t.timeouts),
                                  Opt(c.m.backlog_drops),
                                  std::to_string(c.p.backlog_drops),
                                  Opt(c.m.peers),
                                  std::to_string(t.peers_max)};
    if (!c.p.ok) v[3] += " (FAILED)";
    if (markdown) os << "| ";
    for (std::size_t i = 0; i < v.size(); i++) os << (i ? sep : "") << v[i];
    os << (markdown ? " |\n" : "\n");
  }
}

}  // namespace ptl_sim
