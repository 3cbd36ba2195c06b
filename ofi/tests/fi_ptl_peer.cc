// SPDX-License-Identifier: BSD-3-Clause
// Two processes, one on each Portals node, for selftests/ofi_peer_test.sh:
// what a send does when its receiver's process dies or its link goes
// down while the send waits on it.
//
//   fi_ptl_peer serve FILE      opens an endpoint, writes its address to
//                               FILE, then sleeps (never receives)
//   fi_ptl_peer send FILE LEN   sends LEN bytes (tag 1) to that address
//                               and waits up to 120 s for the completion;
//                               prints "completion: OK|ERROR <name> after
//                               <ms> ms"; exits 0 on an error completion
//                               (what the test expects), 1 on success,
//                               2 on no completion at all, 3 on setup
//                               errors
//   fi_ptl_peer recv FILE N LEN posts N receives of LEN bytes (tag 1),
//                               writes its address to FILE, waits up to
//                               120 s for them and checks each message;
//                               prints "received R of N, B bad, E errors
//                               (A aborted)": R completions, B of them
//                               successes with wrong data, E error
//                               completions, A of those FI_ECONNABORTED,
//                               then "error <name>: K" for each error;
//                               exits 0 if all N came intact
//   fi_ptl_peer late FILE N LEN GO
//                               the same, but posts the receives only
//                               once the file GO exists
//   fi_ptl_peer burst FILE N LEN [close]
//                               sends N messages of LEN bytes (tag 1) to
//                               that address and waits up to 120 s for
//                               their completions, printing "completions:
//                               C, E of them errors"; then allocates and
//                               fills memory of the same size (0xee), so
//                               that what the provider freed is reused,
//                               prints "overwritten", and keeps making
//                               progress for 60 s; exits 0 once all N
//                               completed. With "close": closes the
//                               endpoint (not the domain) right after
//                               sending, fills memory so, prints "closed"
//                               and sleeps 60 s
//
// FI_PROVIDER_PATH must name the provider's directory.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Endpoint {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
};

[[noreturn]] void Die(const char* what, long rc) {
  std::fprintf(stderr, "fi_ptl_peer: %s: %s\n", what, fi_strerror(static_cast<int>(-rc)));
  std::exit(3);
}

void Check(const char* what, long rc) {
  if (rc) Die(what, rc);
}

Endpoint Open() {
  Endpoint e;
  fi_info* hints = fi_allocinfo();
  hints->caps = FI_TAGGED;
  hints->ep_attr->type = FI_EP_RDM;
  hints->fabric_attr->prov_name = strdup("ptl");
  Check("fi_getinfo", fi_getinfo(FI_VERSION(1, 5), nullptr, nullptr, 0, hints, &e.info));
  fi_freeinfo(hints);
  Check("fi_fabric", fi_fabric(e.info->fabric_attr, &e.fabric, nullptr));
  Check("fi_domain", fi_domain(e.fabric, e.info, &e.domain, nullptr));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_MAP;
  Check("fi_av_open", fi_av_open(e.domain, &av_attr, &e.av, nullptr));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  Check("fi_cq_open", fi_cq_open(e.domain, &cq_attr, &e.cq, nullptr));
  Check("fi_endpoint", fi_endpoint(e.domain, e.info, &e.ep, nullptr));
  Check("bind av", fi_ep_bind(e.ep, &e.av->fid, 0));
  Check("bind cq", fi_ep_bind(e.ep, &e.cq->fid, FI_TRANSMIT | FI_RECV));
  Check("fi_enable", fi_enable(e.ep));
  return e;
}

void WriteAddress(const Endpoint& e, const char* file) {
  unsigned char name[8];
  size_t len = sizeof(name);
  Check("fi_getname", fi_getname(&e.ep->fid, name, &len));
  std::string tmp = std::string(file) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(name), static_cast<std::streamsize>(len));
  }
  std::rename(tmp.c_str(), file);  // the sender never reads half an address
}

fi_addr_t ReadAddress(const Endpoint& e, const char* file) {
  std::ifstream in(file, std::ios::binary);
  char name[8];
  if (!in.read(name, sizeof(name))) Die("reading the peer's address", -FI_EINVAL);
  fi_addr_t peer;
  if (fi_av_insert(e.av, name, 1, &peer, 0, nullptr) != 1) Die("fi_av_insert", -FI_EINVAL);
  return peer;
}

long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Message i of a burst: its index, then bytes made from it.
std::vector<char> Message(uint32_t i, size_t len) {
  std::vector<char> m(len);
  for (size_t k = 0; k < len; ++k) m[k] = static_cast<char>((k * 7 + i * 13 + 1) & 0xff);
  std::memcpy(m.data(), &i, sizeof(i));
  return m;
}

// Completions of `cq` until `want` (errors counted apart, and by error in
// *by_err if given) or `ms` pass.
void Reap(const Endpoint& e, size_t want, long long ms, size_t* done, size_t* failed,
          std::map<int, size_t>* by_err = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  while (*done < want && MsSince(start) < ms) {
    fi_cq_tagged_entry entry{};
    const ssize_t n = fi_cq_sread(e.cq, &entry, 1, nullptr, 100);
    if (n == 1) {
      ++*done;
    } else if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(e.cq, &err, 0) != 1) Die("fi_cq_readerr", -FI_EOTHER);
      ++*done;
      ++*failed;
      if (by_err) ++(*by_err)[err.err];
    } else if (n != -FI_EAGAIN) {
      Die("fi_cq_sread", n);
    }
  }
}

int Serve(const char* file) {
  Endpoint e = Open();
  WriteAddress(e, file);
  for (;;) pause();
}

// With `go`: the receives are posted only once that file exists; until
// then the messages arrive unexpected.
int Receive(const char* file, size_t count, size_t len, const char* go) {
  Endpoint e = Open();
  std::vector<std::vector<char>> bufs(count, std::vector<char>(len, 0));
  auto post = [&] {
    for (auto& b : bufs)
      Check("fi_trecv", fi_trecv(e.ep, b.data(), len, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr));
  };
  if (!go) post();
  WriteAddress(e, file);
  if (go) {
    while (access(go, F_OK) != 0) {
      fi_cq_read(e.cq, nullptr, 0);
      usleep(10000);
    }
    post();
  }
  size_t done = 0, failed = 0;
  std::map<int, size_t> by_err;
  Reap(e, count, 120000, &done, &failed, &by_err);
  size_t wrong = 0;
  std::vector<bool> seen(count);
  for (const auto& b : bufs) {
    uint32_t i;
    std::memcpy(&i, b.data(), sizeof(i));
    if (i >= count || seen[i] || b != Message(i, len))
      ++wrong;
    else
      seen[i] = true;
  }
  // Buffers without a message: the receives that ended with an error and
  // those that did not end. The rest of the wrong ones are bad.
  const size_t bad = wrong - std::min(wrong, failed + (count - done));
  std::printf("received %zu of %zu, %zu bad, %zu errors (%zu aborted)\n", done, count, bad, failed,
              by_err[FI_ECONNABORTED]);
  for (const auto& [err, n] : by_err)
    if (n) std::printf("error %s: %zu\n", fi_strerror(err), n);
  return done == count && bad == 0 && failed == 0 ? 0 : 1;
}

// Allocates and fills memory of the size of the messages, so that what the
// provider freed is handed out again and overwritten.
void Overwrite(size_t count, size_t len) {
  std::vector<std::unique_ptr<char[]>> junk;
  for (size_t k = 0; k < 4 * count; ++k) {
    junk.emplace_back(new char[len]);
    std::memset(junk.back().get(), 0xee, len);
  }
}

int Burst(const char* file, size_t count, size_t len, bool close) {
  Endpoint e = Open();
  const fi_addr_t peer = ReadAddress(e, file);
  std::vector<std::vector<char>> msgs;
  std::vector<fi_context> ctx(count);
  for (uint32_t i = 0; i < count; ++i) {
    msgs.push_back(Message(i, len));
    ssize_t rc;
    while ((rc = fi_tsend(e.ep, msgs.back().data(), len, nullptr, peer, 1, &ctx[i])) == -FI_EAGAIN)
      fi_cq_read(e.cq, nullptr, 0);
    Check("fi_tsend", rc);
  }
  std::printf("sent %zu messages\n", count);
  std::fflush(stdout);
  if (close) {
    // The endpoint goes while the sends are in flight; the domain (the
    // Portals NI, whose transport still holds them) stays.
    Check("fi_close(ep)", fi_close(&e.ep->fid));
    Overwrite(count, len);
    std::printf("closed\n");
    std::fflush(stdout);
    sleep(60);
    return 0;
  }
  size_t done = 0, failed = 0;
  Reap(e, count, 120000, &done, &failed);
  std::printf("completions: %zu, %zu of them errors\n", done, failed);
  Overwrite(count, len);
  std::printf("overwritten\n");
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  while (MsSince(start) < 60000) {
    fi_cq_read(e.cq, nullptr, 0);
    usleep(1000);
  }
  return done == count ? 0 : 1;
}

int Send(const char* file, size_t len) {
  Endpoint e = Open();
  const fi_addr_t peer = ReadAddress(e, file);
  std::vector<char> buf(len, 'x');
  fi_context ctx{};
  const auto start = std::chrono::steady_clock::now();
  Check("fi_tsend", fi_tsend(e.ep, buf.data(), len, nullptr, peer, 1, &ctx));
  std::printf("sent %zu bytes\n", len);
  std::fflush(stdout);
  for (;;) {
    fi_cq_tagged_entry entry{};
    const ssize_t n = fi_cq_sread(e.cq, &entry, 1, nullptr, 1000);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    if (n == 1) {
      std::printf("completion: OK after %lld ms\n", static_cast<long long>(ms));
      return 1;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(e.cq, &err, 0) != 1) Die("fi_cq_readerr", -FI_EOTHER);
      std::printf("completion: ERROR %s after %lld ms\n", fi_strerror(err.err),
                  static_cast<long long>(ms));
      return 0;
    }
    if (n != -FI_EAGAIN) Die("fi_cq_sread", n);
    if (ms > 120000) {
      std::printf("completion: none after %lld ms\n", static_cast<long long>(ms));
      return 2;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "serve") == 0) return Serve(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "send") == 0)
    return Send(argv[2], std::strtoull(argv[3], nullptr, 0));
  if (argc == 5 && std::strcmp(argv[1], "recv") == 0)
    return Receive(argv[2], std::strtoull(argv[3], nullptr, 0), std::strtoull(argv[4], nullptr, 0),
                   nullptr);
  if (argc == 6 && std::strcmp(argv[1], "late") == 0)
    return Receive(argv[2], std::strtoull(argv[3], nullptr, 0), std::strtoull(argv[4], nullptr, 0),
                   argv[5]);
  const bool close = argc == 6 && std::strcmp(argv[5], "close") == 0;
  if ((argc == 5 || close) && std::strcmp(argv[1], "burst") == 0)
    return Burst(argv[2], std::strtoull(argv[3], nullptr, 0), std::strtoull(argv[4], nullptr, 0),
                 close);
  std::fprintf(
      stderr,
      "usage: fi_ptl_peer serve FILE | send FILE LEN | recv FILE N LEN | late FILE N LEN GO | "
      "burst FILE N LEN [close]\n");
  return 3;
}
