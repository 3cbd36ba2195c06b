// SPDX-License-Identifier: BSD-3-Clause
#include "workload.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

namespace ptl_sim {

const char* WorkloadName(Workload w) {
  switch (w) {
    case Workload::kIncast:
      return "incast";
    case Workload::kRing:
      return "ring";
    case Workload::kA2a:
      return "a2a";
  }
  return "?";
}

bool ParseWorkload(const std::string& s, Workload* w) {
  for (Workload x : {Workload::kIncast, Workload::kRing, Workload::kA2a})
    if (s == WorkloadName(x)) {
      *w = x;
      return true;
    }
  return false;
}

namespace {

// What a message is to the programs (AppInfo::kind).
enum Kind : uint8_t { kHello = 1, kWelcome, kData, kCredit, kFin, kReport };
constexpr uint64_t kCtrlBytes = 224;  // ptl_stress's CtrlMsg

class Program;

struct World {
  Sim& sim;
  Machine& m;
  const Costs& costs;
  const WorkloadConfig& wc;
  std::vector<std::unique_ptr<Program>> progs;
  int clients = 0, done = 0;
  Time t_end = 0;
  uint64_t delivered = 0;
  bool failed = false;

  void ClientDone() {
    if (++done == clients) {
      t_end = sim.now();
      sim.Stop();
    }
  }
};

class Program {
 public:
  Program(World& w, int id, int node)
      : w_(w), id_(id), node_(node), proc_(w.m.cpu(node), w.costs) {}
  virtual ~Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  int node() const { return node_; }
  virtual void Start() {}
  virtual void OnStart(const AppInfo&) {}
  virtual void OnRx(const AppInfo& app, uint64_t len, bool ok) = 0;
  virtual void OnSent(const AppInfo&, bool) {
    proc_.Event([] {});
  }

 protected:
  // A put to program `to`: the call's cost (and `extra`, the payload's
  // making) as a step before whatever the program has queued, then the
  // transport takes it; then `next`.
  void Put(int to, uint8_t kind, uint64_t len, uint64_t seq, uint64_t aux, Time extra = 0,
           Sim::Fn next = {}) {
    proc_.Step(
        w_.costs.put_call + extra,
        [this, to, kind, len, seq, aux, next = std::move(next)] {
          int dst = w_.progs[static_cast<std::size_t>(to)]->node();
          w_.m.tp(node_).Send(dst, len, AppInfo{kind, id_, to, seq, aux});
          if (next) next();
        },
        true);
  }
  Time Check(uint64_t len) const {
    return static_cast<Time>(w_.costs.check_per_byte * static_cast<double>(len));
  }
  Time Gen(uint64_t len) const {
    return static_cast<Time>(w_.costs.gen_per_byte * static_cast<double>(len));
  }

  World& w_;
  int id_, node_;
  Process proc_;
};

// ---- ptl_stress (tools/ptl_stress/server.cc, client.cc) ----

class StressServer : public Program {
 public:
  StressServer(World& w, int id, int node) : Program(w, id, node) {}

  void OnStart(const AppInfo& app) override {
    if (app.kind == kData) proc_.Event([] {});  // PUT_START: the order check
  }

  void OnRx(const AppInfo& app, uint64_t len, bool ok) override {
    int from = app.from;
    switch (app.kind) {
      case kHello:
        proc_.Event([this, from, app] {
          Client& c = clients_[from];
          c.count = app.aux;
          c.batch = std::max<uint64_t>(1, static_cast<uint64_t>(w_.wc.window) / 2);
          Put(from, kWelcome, kCtrlBytes, 0, 0);
        });
        break;
      case kData:
        if (!ok) w_.failed = true;
        if (ok) w_.delivered += len;
        proc_.Event(
            [this, from] {
              Client& c = clients_[from];
              c.accounted++;
              if (c.accounted >= c.credited + c.batch) Credit(from, c);
              MaybeReport(from, c);
              // The event queue ran empty: release everything verified.
              if (proc_.queued() == 0)
                for (auto& [id, other] : clients_)
                  if (!other.reported && other.accounted > other.credited) Credit(id, other);
            },
            Check(len));
        break;
      case kFin:
        proc_.Event([this, from] {
          Client& c = clients_[from];
          c.fin = true;
          MaybeReport(from, c);
        });
        break;
      default:
        break;
    }
  }

 private:
  struct Client {
    uint64_t count = 0, accounted = 0, credited = 0, batch = 1;
    bool fin = false, reported = false;
  };
  void Credit(int id, Client& c) {
    c.credited = c.accounted;
    Put(id, kCredit, 0, 0, c.credited);
  }
  void MaybeReport(int id, Client& c) {
    if (!c.fin || c.reported || c.accounted < c.count) return;
    c.reported = true;
    Put(id, kReport, kCtrlBytes, 0, 0);
  }

  std::map<int, Client> clients_;
};

class StressClient : public Program {
 public:
  StressClient(World& w, int id, int node, int server)
      : Program(w, id, node),
        server_(server),
        count_(static_cast<uint64_t>(w.wc.count)),
        sent_(count_, false) {
    uint64_t ring = w.wc.ring ? w.wc.ring : std::max<uint64_t>(2 * w.wc.size, 256 << 10);
    slots_ = std::max<uint64_t>(1, ring / std::max<uint64_t>(1, w.wc.size));
  }

  void Start() override {
    proc_.Step(w_.costs.proc_start, [this] { Put(server_, kHello, kCtrlBytes, 0, count_); });
  }

  void OnRx(const AppInfo& app, uint64_t, bool) override {
    switch (app.kind) {
      case kWelcome:
        proc_.Event([this] {
          connected_ = true;
          Issue();
          MaybeFin();
        });
        break;
      case kCredit:
        proc_.Event([this, upto = app.aux] {
          credited_ = std::max(credited_, upto);
          Release();
          Issue();
        });
        break;
      case kReport:
        proc_.Event([this] { w_.ClientDone(); });
        break;
      default:
        break;
    }
  }

  void OnSent(const AppInfo& app, bool delivered) override {
    if (app.kind != kData) return Program::OnSent(app, delivered);
    if (!delivered) w_.failed = true;
    proc_.Event([this, seq = app.seq] {
      inflight_--;
      sent_[seq] = true;
      Release();
      Issue();
      MaybeFin();
    });
  }

 private:
  // One put at a time, each a step ahead of the events waiting.
  void Issue() {
    if (issuing_ || !connected_ || issued_ >= count_ ||
        inflight_ >= static_cast<uint64_t>(w_.wc.window) || used_ >= slots_)
      return;
    issuing_ = true;
    uint64_t seq = issued_++;
    inflight_++;
    used_++;
    Put(server_, kData, w_.wc.size, seq, 0, Gen(w_.wc.size), [this] {
      issuing_ = false;
      Issue();
    });
  }
  // Ring space comes back once a put is sent and credited.
  void Release() {
    while (released_ < credited_ && released_ < issued_ && sent_[released_]) {
      released_++;
      used_--;
    }
  }
  void MaybeFin() {
    if (fin_ || issued_ < count_ || inflight_) return;
    fin_ = true;
    Put(server_, kFin, kCtrlBytes, 0, 0);
  }

  int server_;
  uint64_t count_, slots_ = 1;
  uint64_t issued_ = 0, inflight_ = 0, used_ = 0, released_ = 0, credited_ = 0;
  std::vector<bool> sent_;
  bool connected_ = false, fin_ = false, issuing_ = false;
};

// ---- a cluster's benchmark ----

class BulkReceiver : public Program {
 public:
  BulkReceiver(World& w, int id, int node) : Program(w, id, node) {}
  void OnRx(const AppInfo& app, uint64_t len, bool ok) override {
    if (app.kind != kData) return;
    if (ok)
      w_.delivered += len;
    else
      w_.failed = true;
    proc_.Event([] {}, Check(len));
  }
};

class BulkSender : public Program {
 public:
  BulkSender(World& w, int id, int node, std::vector<int> dests)
      : Program(w, id, node),
        dests_(std::move(dests)),
        left_(dests_.size() * static_cast<std::size_t>(w.wc.count)) {
    uint64_t ring = w.wc.ring ? w.wc.ring : std::max<uint64_t>(2 * w.wc.size, 256 << 10);
    ring_ = std::max(ring, w.wc.size);
  }

  void Start() override {
    if (left_ == 0)
      w_.ClientDone();
    else
      Issue();
  }
  void OnRx(const AppInfo&, uint64_t, bool) override {}
  void OnSent(const AppInfo& app, bool delivered) override {
    if (!delivered) w_.failed = true;
    proc_.Event([this, len = w_.wc.size, kind = app.kind] {
      if (kind != kData) return;
      inflight_--;
      bytes_ -= len;
      if (--left_ == 0)
        w_.ClientDone();
      else
        Issue();
    });
  }

 private:
  void Issue() {
    if (issuing_ || next_ >= dests_.size() * static_cast<std::size_t>(w_.wc.count) ||
        inflight_ >= w_.wc.window || bytes_ + w_.wc.size > ring_)
      return;
    issuing_ = true;
    // Destination by destination: count puts to each in turn.
    int to = dests_[next_ / static_cast<std::size_t>(w_.wc.count)];
    uint64_t seq = next_++;
    inflight_++;
    bytes_ += w_.wc.size;
    Put(to, kData, w_.wc.size, seq, 0, Gen(w_.wc.size), [this] {
      issuing_ = false;
      Issue();
    });
  }

  std::vector<int> dests_;
  std::size_t left_, next_ = 0;
  int inflight_ = 0;
  uint64_t bytes_ = 0, ring_ = 0;
  bool issuing_ = false;
};

}  // namespace

RunResult RunWorkload(const MachineConfig& mc, const WorkloadConfig& wc, uint64_t seed) {
  auto wall0 = std::chrono::steady_clock::now();
  Sim sim(seed);
  Machine m(sim, mc);
  World w{sim, m, m.config().costs, wc, {}, 0, 0, 0, 0, false};
  const int n = mc.nodes;
  const auto count = static_cast<uint64_t>(wc.count);
  std::vector<Program*> clients;
  auto add = [&w](std::unique_ptr<Program> p) {
    w.progs.push_back(std::move(p));
    return w.progs.back().get();
  };
  auto next_id = [&w] { return static_cast<int>(w.progs.size()); };
  // The one program of a kind on a node (a server, a receiver), made when
  // first needed; its id.
  auto once = [&](std::vector<int>& ids, int node, auto make) {
    int& id = ids[static_cast<std::size_t>(node)];
    if (id < 0) {
      id = next_id();
      add(make(id));
    }
    return id;
  };
  RunResult r;
  r.nodes = n;
  r.workload = wc.workload;
  int dests = wc.workload == Workload::kA2a ? n - 1 : 1;
  if (wc.app == App::kBulk && wc.workload == Workload::kA2a && wc.dests > 0)
    dests = std::min(dests, wc.dests);
  r.dests = dests;

  if (wc.app == App::kStress) {
    std::vector<int> server(static_cast<std::size_t>(n), -1);
    auto serve = [&](int node) {
      return once(server, node,
                  [&](int id) { return std::make_unique<StressServer>(w, id, node); });
    };
    auto client = [&](int node, int to) {
      int id = next_id();
      clients.push_back(add(std::make_unique<StressClient>(w, id, node, serve(to))));
    };
    switch (wc.workload) {
      case Workload::kIncast:
        serve(0);
        for (int k = 1; k < n; k++) client(k, 0);
        break;
      case Workload::kRing:
        for (int k = 0; k < n; k++) serve(k);
        for (int k = 0; k < n; k++) client(k, (k + 1) % n);
        break;
      case Workload::kA2a:
        for (int k = 0; k < n; k++) serve(k);
        for (int k = 0; k < n; k++)
          for (int j = 0; j < n; j++)
            if (j != k) client(k, j);
        break;
    }
  } else {
    std::vector<int> recv(static_cast<std::size_t>(n), -1);
    auto receiver = [&](int node) {
      return once(recv, node, [&](int id) { return std::make_unique<BulkReceiver>(w, id, node); });
    };
    auto sender = [&](int node, std::vector<int> to) {
      int id = next_id();
      clients.push_back(add(std::make_unique<BulkSender>(w, id, node, std::move(to))));
    };
    switch (wc.workload) {
      case Workload::kIncast:
        receiver(0);
        for (int k = 1; k < n; k++) sender(k, {recv[0]});
        break;
      case Workload::kRing:
        for (int k = 0; k < n; k++) receiver(k);
        for (int k = 0; k < n; k++) sender(k, {recv[static_cast<std::size_t>((k + 1) % n)]});
        break;
      case Workload::kA2a:
        for (int k = 0; k < n; k++) receiver(k);
        for (int k = 0; k < n; k++) {
          std::vector<int> others;
          for (int d = 1; d < n; d++) others.push_back((k + d) % n);
          if (wc.shuffle)  // a seeded Fisher-Yates, as far as the sample goes
            for (std::size_t i = 0; i < static_cast<std::size_t>(dests); i++)
              std::swap(others[i], others[i + sim.Random() % (others.size() - i)]);
          std::vector<int> to;
          for (int d = 0; d < dests; d++) to.push_back(recv[static_cast<std::size_t>(others[d])]);
          sender(k, std::move(to));
        }
        break;
    }
  }
  w.clients = static_cast<int>(clients.size());
  uint64_t streams = wc.workload == Workload::kA2a
                         ? static_cast<uint64_t>(n) * static_cast<uint64_t>(dests)
                         : static_cast<uint64_t>(wc.workload == Workload::kIncast ? n - 1 : n);
  r.bytes = streams * count * wc.size;

  Transport::Hooks hooks;
  hooks.rx_start = [&w](int, const AppInfo& app) {
    w.progs[static_cast<std::size_t>(app.to)]->OnStart(app);
  };
  hooks.rx_end = [&w](int, const AppInfo& app, uint64_t len, bool ok) {
    w.progs[static_cast<std::size_t>(app.to)]->OnRx(app, len, ok);
  };
  hooks.sent = [&w](int, const AppInfo& app, uint64_t, bool delivered) {
    w.progs[static_cast<std::size_t>(app.from)]->OnSent(app, delivered);
  };
  m.set_hooks(hooks);

  for (Program* c : clients) c->Start();
  if (w.clients == 0) sim.Stop();
  sim.Run(wc.limit);

  Time end = w.done == w.clients ? w.t_end : sim.now();
  r.seconds = static_cast<double>(end) / kSec;
  r.delivered = w.delivered;
  r.mbps = end > 0 ? static_cast<double>(w.delivered) * 1e3 / static_cast<double>(end) : 0;
  r.totals = m.Totals();
  r.backlog_drops = m.backlog_drops();
  r.backlog_max = m.backlog_max();
  r.switch_drops = mc.model == Model::kCluster ? m.fabric().drops() : 0;
  r.port_max_bytes = m.fabric().queue_max_bytes();
  Time busy = 0;
  for (int i = 0; i < static_cast<int>(m.cpus()); i++) busy = std::max(busy, m.cpu(i).busy_ns());
  r.cpu_busy = end > 0 ? static_cast<double>(busy) / static_cast<double>(end) : 0;
  r.seconds_all =
      wc.workload == Workload::kA2a ? r.seconds * (n - 1) / std::max(1, dests) : r.seconds;
  r.ok = w.done == w.clients && !w.failed && r.totals.msgs_failed == 0 && w.delivered == r.bytes;
  r.events = sim.events_run();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace ptl_sim
