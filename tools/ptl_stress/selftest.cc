// SPDX-License-Identifier: BSD-3-Clause
// ptl_stress selftest: forks --servers servers and --clients clients per
// server on this node (each process its own PtlInit and NI), waits for all
// of them, and passes only if every one of them passed. Each child reports
// to the parent through a pipe (a Summary, then its JSON report).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ptl_stress.h"

namespace ptl_stress {
namespace {

struct Child {
  std::string what;
  bool server = false;
  pid_t pid = -1;
  int fd = -1;  // report pipe, read end
  std::string data;
  bool exited = false;
  int status = 0;
};

void CloseAll(std::vector<Child>& kids) {
  for (auto& k : kids)
    if (k.fd >= 0) close(k.fd);
}

// Forks a child running fn; its report pipe becomes the child's report_fd.
template <typename Fn>
Child Spawn(std::vector<Child>& kids, std::string what, bool server, Fn fn) {
  int rep[2];
  if (pipe(rep)) DieWith(kExitUsage, "pipe: %s", std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) DieWith(kExitUsage, "fork: %s", std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(rep[0]);
    CloseAll(kids);
    int rc = fn(rep[1]);
    std::fflush(nullptr);
    _exit(rc);
  }
  close(rep[1]);
  Child c;
  c.what = std::move(what);
  c.server = server;
  c.pid = pid;
  c.fd = rep[0];
  return c;
}

void KillAll(std::vector<Child>& kids) {
  for (auto& k : kids)
    if (!k.exited && k.pid > 0) kill(k.pid, SIGKILL);
}

// Reads "nid pid\n" from a server's ready pipe within timeout_ms.
bool ReadReady(int fd, int timeout_ms, ptl_process_id_t* id) {
  std::string line;
  int64_t deadline = NowNs() + int64_t{timeout_ms} * 1000000;
  while (line.find('\n') == std::string::npos) {
    int64_t left = (deadline - NowNs()) / 1000000;
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    char buf[64];
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r <= 0) return false;
    line.append(buf, r);
  }
  unsigned nid, pid;
  if (std::sscanf(line.c_str(), "%u %u", &nid, &pid) != 2) return false;
  *id = {nid, pid};
  return true;
}

}  // namespace

int RunSelftest(const Options& o) {
  SetWho("selftest");
  // Children print their own text reports unless the parent prints JSON.
  Options base = o;
  if (o.json) {
    base.json = false;
    base.quiet = true;
  }
  std::vector<Child> kids;
  std::vector<ptl_process_id_t> servers;
  int64_t t0 = NowNs();
  bool started = true;
  for (uint32_t s = 0; s < o.servers && started; s++) {
    int ready[2];
    if (pipe(ready)) DieWith(kExitUsage, "pipe: %s", std::strerror(errno));
    Options so = base;
    so.role = "server";
    so.pid = o.pid + s;
    so.ready_fd = ready[1];
    Child c = Spawn(kids, "server pid " + std::to_string(so.pid), true, [&](int fd) {
      close(ready[0]);
      so.report_fd = fd;
      return RunServer(so);
    });
    close(ready[1]);
    ptl_process_id_t id;
    if (!ReadReady(ready[0], o.timeout_ms, &id)) {
      Complain("%s did not start (see its messages above)", c.what.c_str());
      started = false;
    } else {
      servers.push_back(id);
    }
    close(ready[0]);
    kids.push_back(std::move(c));
  }
  int64_t t_clients = NowNs();
  for (uint32_t s = 0; s < servers.size() && started; s++) {
    for (uint32_t i = 0; i < o.clients; i++) {
      Options co = base;
      co.role = "client";
      co.server = servers[s];
      co.server_given = true;
      co.id = i;
      if (s != 0 || i != 0) co.inject = Inject{};
      std::string what = "client " + std::to_string(i) + " of server " + IdStr(servers[s]);
      kids.push_back(Spawn(kids, what, false, [&](int fd) {
        co.report_fd = fd;
        return RunClient(co);
      }));
    }
  }
  if (!started) KillAll(kids);

  // Collect reports and exit statuses. After a failure the others get
  // their own timeouts' worth of time to notice and report, then are killed.
  int64_t kill_at = 0;
  std::size_t open_fds = kids.size();
  std::size_t running = kids.size();
  while (open_fds || running) {
    std::vector<pollfd> fds;
    std::vector<Child*> who;
    for (auto& k : kids)
      if (k.fd >= 0) {
        fds.push_back({k.fd, POLLIN, 0});
        who.push_back(&k);
      }
    if (!fds.empty()) {
      int n = poll(fds.data(), fds.size(), 100);
      for (std::size_t i = 0; n > 0 && i < fds.size(); i++) {
        if (!fds[i].revents) continue;
        char buf[4096];
        ssize_t r = read(fds[i].fd, buf, sizeof(buf));
        if (r > 0) {
          who[i]->data.append(buf, r);
        } else if (r == 0 || errno != EINTR) {
          close(who[i]->fd);
          who[i]->fd = -1;
          open_fds--;
        }
      }
    } else {
      usleep(20000);
    }
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
      for (auto& k : kids) {
        if (k.pid != pid) continue;
        k.exited = true;
        k.status = st;
        running--;
        bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        if (!ok && !kill_at) kill_at = NowNs() + (int64_t{o.timeout_ms} * 2 + 5000) * 1000000;
      }
    }
    if (kill_at && NowNs() > kill_at && running) {
      Complain("children still running %d ms after the first failure: killing them",
               o.timeout_ms * 2 + 5000);
      KillAll(kids);
      kill_at = INT64_MAX;
    }
  }
  int64_t t1 = NowNs();

  // Sum up.
  bool pass = started;
  Traffic client_traffic, server_traffic;
  Errors client_errors, server_errors;
  std::string reports = "[";
  uint32_t failed = 0;
  for (auto& k : kids) {
    bool ok = k.exited && WIFEXITED(k.status) && WEXITSTATUS(k.status) == 0;
    Summary s{};
    bool have = k.data.size() >= sizeof(Summary);
    if (have) std::memcpy(&s, k.data.data(), sizeof(s));
    ok = ok && have && s.pass;
    if (!ok) {
      failed++;
      std::string how;
      if (!k.exited)
        how = "did not exit";
      else if (WIFSIGNALED(k.status))
        how = std::string("killed by signal ") + strsignal(WTERMSIG(k.status));
      else
        how = "exit status " + std::to_string(WEXITSTATUS(k.status));
      Complain("%s failed (%s%s)", k.what.c_str(), how.c_str(), have ? "" : ", no report");
    }
    pass = pass && ok;
    if (have) {
      if (k.server) {
        server_traffic.Add(s.traffic);
        server_errors.Add(s.errors);
      } else {
        client_traffic.Add(s.traffic);
        client_errors.Add(s.errors);
      }
      if (reports.size() > 1) reports += ",";
      reports += k.data.size() > sizeof(Summary) ? k.data.substr(sizeof(Summary)) : "null";
    }
  }
  reports += "]";
  double wall = std::max(1e-9, (t1 - t_clients) / 1e9);
  double mbps = client_traffic.Bytes() / wall / 1e6;
  if (o.json) {
    std::string json = JsonObject()
                           .Add("role", "selftest")
                           .Add("pass", pass)
                           .Add("servers", uint64_t{o.servers})
                           .Add("clients_per_server", uint64_t{o.clients})
                           .Add("seed", o.seed)
                           .Add("failed_processes", uint64_t{failed})
                           .Add("elapsed_s", (t1 - t0) / 1e9)
                           .Add("traffic_s", wall)
                           .Add("mb_per_s", mbps)
                           .Add("ops_per_s", client_traffic.Ops() / wall)
                           .AddRaw("sent", TrafficJson(client_traffic))
                           .AddRaw("received", TrafficJson(server_traffic))
                           .AddRaw("client_errors", ErrorsJson(client_errors))
                           .AddRaw("server_errors", ErrorsJson(server_errors))
                           .AddRaw("reports", reports)
                           .str();
    std::printf("%s\n", json.c_str());
  } else {
    std::printf(
        "ptl_stress selftest: %u server(s) x %u client(s), seed %" PRIu64
        ": %s\n"
        "  clients sent      %" PRIu64 " ops, %s (%" PRIu64 " puts, %" PRIu64 " gets, %" PRIu64
        " getputs) in %.3f s: %.1f MB/s, %.0f ops/s\n"
        "  servers received  %" PRIu64 " puts (%s), served %" PRIu64 " gets, %" PRIu64
        " getputs\n"
        "  server errors     %s\n"
        "  client errors     %s\n",
        o.servers, o.clients, o.seed, pass ? "PASS" : "FAIL", client_traffic.Ops(),
        Bytes(client_traffic.Bytes()).c_str(), client_traffic.puts, client_traffic.gets,
        client_traffic.getputs, wall, mbps, client_traffic.Ops() / wall, server_traffic.puts,
        Bytes(server_traffic.put_bytes).c_str(), server_traffic.gets, server_traffic.getputs,
        ErrorsText(server_errors).c_str(), ErrorsText(client_errors).c_str());
  }
  std::fflush(stdout);
  return pass ? kExitPass : (started ? kExitErrors : kExitUsage);
}

}  // namespace ptl_stress
