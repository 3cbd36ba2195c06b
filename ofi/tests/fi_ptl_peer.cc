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
//
// FI_PROVIDER_PATH must name the provider's directory.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

int Serve(const char* file) {
  Endpoint e = Open();
  unsigned char name[8];
  size_t len = sizeof(name);
  Check("fi_getname", fi_getname(&e.ep->fid, name, &len));
  std::string tmp = std::string(file) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(name), static_cast<std::streamsize>(len));
  }
  std::rename(tmp.c_str(), file);  // the sender never reads half an address
  for (;;) pause();
}

int Send(const char* file, size_t len) {
  Endpoint e = Open();
  std::ifstream in(file, std::ios::binary);
  char name[8];
  if (!in.read(name, sizeof(name))) Die("reading the peer's address", -FI_EINVAL);
  fi_addr_t peer;
  if (fi_av_insert(e.av, name, 1, &peer, 0, nullptr) != 1) Die("fi_av_insert", -FI_EINVAL);
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
  std::fprintf(stderr, "usage: fi_ptl_peer serve FILE | send FILE LEN\n");
  return 3;
}
