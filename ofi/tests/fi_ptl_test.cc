// SPDX-License-Identifier: BSD-3-Clause
// The ptl provider through libfabric's own API, against ptl.ko: two
// endpoints of one process (one Portals NI, two endpoints' portals), so
// every protocol runs through the kernel's matching and delivery. Needs
// /dev/portals (run in a guest: selftests/ofi_test.sh) and
// FI_PROVIDER_PATH pointing at libptl-fi.so's directory.
//
// Semantics checked are fi_tagged(3), fi_msg(3), fi_cq(3), fi_av(3),
// fi_endpoint(3) and fi_getinfo(3).
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

#define FI_OK(call)                                                            \
  do {                                                                         \
    const auto rc_ = (call);                                                   \
    ASSERT_EQ(rc_, 0) << #call << ": " << fi_strerror(static_cast<int>(-rc_)); \
  } while (0)

std::vector<char> Pattern(size_t len, unsigned seed) {
  std::vector<char> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<char>((i * 131 + seed * 7 + 1) & 0xff);
  return v;
}

class FiPtl : public ::testing::Test {
 protected:
  void SetUp() override {
    // Peers are probed after 100 ms of waiting and taken for gone after
    // 1 s without an answer (read once, when libfabric loads the provider).
    setenv("FI_PTL_PROBE_INTERVAL", std::to_string(kProbeIntervalMs).c_str(), 0);
    setenv("FI_PTL_PROBE_TIMEOUT", std::to_string(kProbeTimeoutMs).c_str(), 0);
    fi_info* hints = fi_allocinfo();
    hints->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_SOURCE;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->cq_data_size = 4;
    hints->fabric_attr->prov_name = strdup("ptl");
    const int rc = fi_getinfo(FI_VERSION(1, 5), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    ASSERT_EQ(rc, 0) << "fi_getinfo: " << fi_strerror(-rc);
    FI_OK(fi_fabric(info_->fabric_attr, &fabric_, nullptr));
    FI_OK(fi_domain(fabric_, info_, &domain_, nullptr));
    fi_av_attr av_attr{};
    av_attr.type = av_type_;
    FI_OK(fi_av_open(domain_, &av_attr, &av_, nullptr));
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = wait_obj_;
    for (int i = 0; i < 2; ++i) {
      FI_OK(fi_cq_open(domain_, &cq_attr, &cq_[i], nullptr));
      FI_OK(fi_endpoint(domain_, info_, &ep_[i], nullptr));
      FI_OK(fi_ep_bind(ep_[i], &av_->fid, 0));
      FI_OK(fi_ep_bind(ep_[i], &cq_[i]->fid, FI_TRANSMIT | FI_RECV));
      if (with_counters_) {
        fi_cntr_attr cntr_attr{};
        cntr_attr.events = FI_CNTR_EVENTS_COMP;
        FI_OK(fi_cntr_open(domain_, &cntr_attr, &cntr_[i], nullptr));
        FI_OK(fi_ep_bind(ep_[i], &cntr_[i]->fid, FI_SEND | FI_RECV));
      }
      FI_OK(fi_enable(ep_[i]));
      char name[64];
      size_t len = sizeof(name);
      FI_OK(fi_getname(&ep_[i]->fid, name, &len));
      ASSERT_EQ(fi_av_insert(av_, name, 1, &addr_[i], 0, nullptr), 1);
    }
  }

  void TearDown() override {
    auto close = [](fid_t f) {
      if (f) {
        EXPECT_EQ(fi_close(f), 0);
      }
    };
    for (int i = 0; i < 2; ++i) {
      close(ep_[i] ? &ep_[i]->fid : nullptr);
      close(cq_[i] ? &cq_[i]->fid : nullptr);
      close(cntr_[i] ? &cntr_[i]->fid : nullptr);
    }
    close(av_ ? &av_->fid : nullptr);
    close(domain_ ? &domain_->fid : nullptr);
    close(fabric_ ? &fabric_->fid : nullptr);
    fi_freeinfo(info_);
  }

  static constexpr int kProbeIntervalMs = 100;
  static constexpr int kProbeTimeoutMs = 1000;

  // The next completion of cq_[i] (success or error) within 10 s.
  ssize_t Wait(int i, fi_cq_tagged_entry* e, fi_addr_t* src = nullptr,
               fi_cq_err_entry* err = nullptr) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      ssize_t n = fi_cq_readfrom(cq_[i], e, 1, src);
      if (n == 1) return 1;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry tmp{};
        fi_cq_err_entry* out = err ? err : &tmp;
        EXPECT_EQ(fi_cq_readerr(cq_[i], out, 0), 1);
        return -out->err;
      }
      if (n != -FI_EAGAIN) return n;
    }
    return -FI_ETIMEDOUT;
  }

  // Progresses both endpoints (those still open) for `ms` without taking
  // completions.
  void Spin(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      for (int i = 0; i < 2; ++i)
        if (ep_[i]) fi_cq_read(cq_[i], nullptr, 0);
    }
  }

  // A send from 0 to 1 past the eager size (its receiver must pull it),
  // left waiting unexpected at endpoint 1; the data, kept alive until the
  // send completes, is returned.
  static constexpr size_t kLong = 64 * 1024;
  std::vector<char> LongSendWaiting(uint64_t tag, void* context = nullptr) {
    auto out = Pattern(kLong, static_cast<unsigned>(tag));
    EXPECT_EQ(fi_tsend(ep_[0], out.data(), kLong, nullptr, addr_[1], tag, context), 0);
    Spin(50);
    return out;
  }

  // Closes endpoint i as a process that exits does: what it had in flight
  // is gone with it.
  void CloseEndpoint(int i) {
    ASSERT_EQ(fi_close(&ep_[i]->fid), 0);
    ep_[i] = nullptr;
  }

  // A send from 0 to 1 and its receive, posted before the message arrives
  // or after (then it is unexpected: in the heap, or a header to pull).
  void Roundtrip(size_t len, bool post_first) {
    auto out = Pattern(len, static_cast<unsigned>(len));
    std::vector<char> in(len + 16, 0x5a);
    fi_context sctx{}, rctx{};
    if (post_first) FI_OK(fi_trecv(ep_[1], in.data(), len, nullptr, addr_[0], 77, 0, &rctx));
    FI_OK(fi_tsend(ep_[0], out.data(), len, nullptr, addr_[1], 77, &sctx));
    if (!post_first) {
      Spin(50);
      FI_OK(fi_trecv(ep_[1], in.data(), len, nullptr, addr_[0], 77, 0, &rctx));
    }
    fi_cq_tagged_entry e{};
    ASSERT_EQ(Wait(0, &e), 1) << "send of " << len;
    EXPECT_EQ(e.op_context, &sctx);
    ASSERT_EQ(Wait(1, &e), 1) << "receive of " << len;
    EXPECT_EQ(e.op_context, &rctx);
    EXPECT_EQ(e.len, len);
    EXPECT_EQ(e.tag, 77U);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), len), 0) << len << " bytes";
    EXPECT_EQ(in[len], 0x5a) << "wrote past the buffer";
  }

  fi_av_type av_type_ = FI_AV_MAP;
  fi_wait_obj wait_obj_ = FI_WAIT_UNSPEC;
  bool with_counters_ = false;
  fid_cntr* cntr_[2] = {};
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_[2] = {};
  fid_ep* ep_[2] = {};
  fi_addr_t addr_[2] = {};
};

TEST_F(FiPtl, EagerExpectedAndUnexpected) {
  for (size_t len : {0UL, 1UL, 64UL, 4096UL, 8192UL}) {
    Roundtrip(len, true);
    Roundtrip(len, false);
  }
}

TEST_F(FiPtl, LongExpectedAndUnexpectedArePulled) {
  for (size_t len : {8193UL, 65536UL, 1UL << 20, 16UL << 20}) {
    Roundtrip(len, true);
    Roundtrip(len, false);
  }
}

TEST_F(FiPtl, TruncationIsAnErrorCompletionWithOlen) {
  for (size_t len : {100UL, 100000UL}) {
    for (bool post_first : {true, false}) {
      auto out = Pattern(len, 3);
      std::vector<char> in(len / 2);
      fi_context rctx{};
      if (post_first)
        FI_OK(fi_trecv(ep_[1], in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &rctx));
      FI_OK(fi_tsend(ep_[0], out.data(), len, nullptr, addr_[1], 5, nullptr));
      if (!post_first) {
        Spin(50);
        FI_OK(fi_trecv(ep_[1], in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &rctx));
      }
      fi_cq_tagged_entry e{};
      ASSERT_EQ(Wait(0, &e), 1);
      fi_cq_err_entry err{};
      ASSERT_EQ(Wait(1, &e, nullptr, &err), -FI_ETRUNC) << len << (post_first ? " posted" : "");
      EXPECT_EQ(err.op_context, &rctx);
      EXPECT_EQ(err.len, in.size());
      EXPECT_EQ(err.olen, len - in.size());
      EXPECT_EQ(std::memcmp(in.data(), out.data(), in.size()), 0);
    }
  }
}

TEST_F(FiPtl, TagsIgnoreBitsAndOrder) {
  // Sent 10, 11, 10, 12 (tags); a receive for 10 takes the first 10, one
  // ignoring the low bits takes the next in order.
  const uint64_t tags[] = {10, 11, 10, 12};
  int payload[4] = {100, 101, 102, 103};
  for (int i = 0; i < 4; ++i)
    FI_OK(fi_tsend(ep_[0], &payload[i], sizeof(int), nullptr, addr_[1], tags[i], nullptr));
  fi_cq_tagged_entry e{};
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Wait(0, &e), 1);
  int got = 0;
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 10, 0, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 100);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 8, 0x7, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 101);
  EXPECT_EQ(e.tag, 11U);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 102);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 12, 0, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 103);
}

// Small receives are held by the provider, larger ones posted to the
// kernel (FI_PTL_RECV_MATCH_SIZE); a message still goes to the receive
// posted first of those that take it.
TEST_F(FiPtl, HeldAndPostedReceivesMatchInPostingOrder) {
  fi_cq_tagged_entry e{};
  // Both take tag 5: the large one must not overtake the small one.
  std::vector<char> small(64, 0), large(kLong, 0);
  fi_context small_ctx{}, large_ctx{};
  FI_OK(fi_trecv(ep_[1], small.data(), small.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &small_ctx));
  FI_OK(fi_trecv(ep_[1], large.data(), large.size(), nullptr, FI_ADDR_UNSPEC, 4, 0x1, &large_ctx));
  const auto first = Pattern(32, 1), second = Pattern(kLong, 2);
  FI_OK(fi_tsend(ep_[0], first.data(), first.size(), nullptr, addr_[1], 5, nullptr));
  FI_OK(fi_tsend(ep_[0], second.data(), second.size(), nullptr, addr_[1], 5, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(e.op_context, &small_ctx);
  EXPECT_EQ(e.len, first.size());
  EXPECT_EQ(std::memcmp(small.data(), first.data(), first.size()), 0);
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(e.op_context, &large_ctx);
  EXPECT_EQ(e.len, second.size());
  EXPECT_EQ(large, second);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Wait(0, &e), 1);

  // Disjoint tags: the large receive (posted) and the small one (held)
  // each take their own message, in either order of arrival.
  FI_OK(fi_trecv(ep_[1], small.data(), small.size(), nullptr, FI_ADDR_UNSPEC, 6, 0, &small_ctx));
  FI_OK(fi_trecv(ep_[1], large.data(), large.size(), nullptr, FI_ADDR_UNSPEC, 7, 0, &large_ctx));
  const auto third = Pattern(kLong, 3), fourth = Pattern(48, 4);
  FI_OK(fi_tsend(ep_[0], third.data(), third.size(), nullptr, addr_[1], 7, nullptr));
  FI_OK(fi_tsend(ep_[0], fourth.data(), fourth.size(), nullptr, addr_[1], 6, nullptr));
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Wait(1, &e), 1);
    if (e.op_context == &large_ctx) {
      EXPECT_EQ(e.tag, 7U);
      EXPECT_EQ(large, third);
    } else {
      EXPECT_EQ(e.op_context, &small_ctx);
      EXPECT_EQ(e.tag, 6U);
      EXPECT_EQ(std::memcmp(small.data(), fourth.data(), fourth.size()), 0);
    }
  }
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Wait(0, &e), 1);
}

TEST_F(FiPtl, SourceAndRemoteCqData) {
  uint32_t v = 0xfeedbeef, got = 0;
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  FI_OK(fi_tsenddata(ep_[0], &v, sizeof(v), nullptr, 0x12345678, addr_[1], 9, nullptr));
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 9, 0, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e, &src), 1);
  EXPECT_EQ(got, v);
  EXPECT_TRUE(e.flags & FI_REMOTE_CQ_DATA);
  EXPECT_EQ(e.data, 0x12345678U);
  EXPECT_EQ(src, addr_[0]);
}

TEST_F(FiPtl, DirectedReceiveIgnoresOtherSources) {
  // Endpoint 1 sends to itself and endpoint 0 sends to it; a receive
  // directed at endpoint 0 takes endpoint 0's message only.
  int mine = 1, theirs = 2, got = 0;
  FI_OK(fi_tsend(ep_[1], &mine, sizeof(int), nullptr, addr_[1], 4, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(1, &e), 1);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, addr_[0], 4, 0, nullptr));
  EXPECT_EQ(fi_cq_read(cq_[1], &e, 1), -FI_EAGAIN);
  FI_OK(fi_tsend(ep_[0], &theirs, sizeof(int), nullptr, addr_[1], 4, nullptr));
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 2);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 1);
}

TEST_F(FiPtl, InjectNeedsNoCompletionAndReusesTheBuffer) {
  char buf[64];
  std::memset(buf, 'a', sizeof(buf));
  FI_OK(fi_tinject(ep_[0], buf, sizeof(buf), addr_[1], 3));
  std::memset(buf, 'b', sizeof(buf));  // the provider copied it
  char in[64] = {};
  FI_OK(fi_trecv(ep_[1], in, sizeof(in), nullptr, FI_ADDR_UNSPEC, 3, 0, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(std::string(in, 64), std::string(64, 'a'));
  EXPECT_EQ(fi_cq_read(cq_[0], &e, 1), -FI_EAGAIN);
  std::vector<char> big(info_->tx_attr->inject_size + 1);
  EXPECT_EQ(fi_tinject(ep_[0], big.data(), big.size(), addr_[1], 3), -FI_EMSGSIZE);
}

TEST_F(FiPtl, PeekClaimAndDiscard) {
  int a = 1, b = 2, got = 0;
  FI_OK(fi_tsend(ep_[0], &a, sizeof(int), nullptr, addr_[1], 20, nullptr));
  FI_OK(fi_tsend(ep_[0], &b, sizeof(int), nullptr, addr_[1], 21, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(0, &e), 1);

  fi_msg_tagged msg{};
  fi_context ctx{};
  msg.addr = FI_ADDR_UNSPEC;
  msg.tag = 99;
  msg.context = &ctx;
  FI_OK(fi_trecvmsg(ep_[1], &msg, FI_PEEK));
  EXPECT_EQ(Wait(1, &e), -FI_ENOMSG);  // nothing with tag 99

  msg.tag = 20;
  FI_OK(fi_trecvmsg(ep_[1], &msg, FI_PEEK | FI_CLAIM));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(e.len, sizeof(int));
  EXPECT_EQ(e.tag, 20U);
  // Claimed: an ordinary receive for 20 does not take it.
  FI_OK(fi_tsend(ep_[0], &b, sizeof(int), nullptr, addr_[1], 20, nullptr));
  ASSERT_EQ(Wait(0, &e), 1);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 20, 0, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 2);
  iovec iov{&got, sizeof(got)};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  // FI_CLAIM takes the claimed message whatever source and tag it names
  // (Open MPI's MPI_Mrecv passes address 0).
  msg.addr = 0;
  msg.tag = 12345;
  FI_OK(fi_trecvmsg(ep_[1], &msg, FI_CLAIM));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 1);

  msg.addr = FI_ADDR_UNSPEC;
  msg.tag = 21;
  msg.msg_iov = nullptr;
  msg.iov_count = 0;
  FI_OK(fi_trecvmsg(ep_[1], &msg, FI_PEEK | FI_DISCARD));
  ASSERT_EQ(Wait(1, &e), 1);
  FI_OK(fi_trecvmsg(ep_[1], &msg, FI_PEEK));
  EXPECT_EQ(Wait(1, &e), -FI_ENOMSG);
}

TEST_F(FiPtl, CancelAPostedReceive) {
  int got = 0;
  fi_context ctx{};
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 55, 0, &ctx));
  FI_OK(fi_cancel(&ep_[1]->fid, &ctx));
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  ASSERT_EQ(Wait(1, &e, nullptr, &err), -FI_ECANCELED);
  EXPECT_EQ(err.op_context, &ctx);
  EXPECT_EQ(fi_cancel(&ep_[1]->fid, &ctx), -FI_ENOENT);
  // The cancelled receive no longer matches.
  int v = 5;
  FI_OK(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[1], 55, nullptr));
  ASSERT_EQ(Wait(0, &e), 1);
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 55, 0, nullptr));
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(got, 5);
}

// More unexpected bytes than the overflow heap holds: the rest keep only
// their headers, their data is asked for again when received, and every
// message arrives, in order.
TEST_F(FiPtl, HeapExhaustionLosesNothingAndNeverBlocksTheSender) {
  const size_t len = 8000;
  // The tagged heap (4 x 128 KiB) holds 64 of them; the other 236 keep
  // their data at the sender until asked for: 128 in bounce slots, the
  // rest in spills. No send waits for the receiver.
  const int count = 300;
  std::vector<std::vector<char>> out;
  int sent = 0;
  fi_cq_tagged_entry e{};
  for (int i = 0; i < count; ++i) {
    out.push_back(Pattern(len, static_cast<unsigned>(i)));
    ssize_t rc;  // never -FI_EAGAIN: spills take what slots cannot
    rc = fi_tsend(ep_[0], out.back().data(), len, nullptr, addr_[1], 1, nullptr);
    ASSERT_EQ(rc, 0) << "send " << i;
    while (fi_cq_read(cq_[0], &e, 1) == 1) ++sent;
  }
  while (sent < count) {
    ASSERT_EQ(Wait(0, &e), 1);
    ++sent;
  }
  std::vector<char> in(len);
  for (int i = 0; i < count; ++i) {
    FI_OK(fi_trecv(ep_[1], in.data(), len, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr));
    // Serve endpoint 0's resend requests while waiting.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    ssize_t n;
    while ((n = fi_cq_read(cq_[1], &e, 1)) == -FI_EAGAIN && std::chrono::steady_clock::now() < end)
      fi_cq_read(cq_[0], nullptr, 0);
    ASSERT_EQ(n, 1) << "message " << i;
    ASSERT_EQ(std::memcmp(in.data(), out[static_cast<size_t>(i)].data(), len), 0) << i;
  }
}

// A peer that is gone: the state that waits on it fails within the probe
// interval and timeout, with an error completion (no hang), and what its
// peer does next works.
TEST_F(FiPtl, LongSendToAPeerThatIsGoneFails) {
  fi_context ctx{};
  const auto out = LongSendWaiting(9, &ctx);
  CloseEndpoint(1);
  const auto start = std::chrono::steady_clock::now();
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  ASSERT_EQ(Wait(0, &e, nullptr, &err), -FI_ETIMEDOUT);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  EXPECT_EQ(err.op_context, &ctx);
  EXPECT_GE(ms, kProbeTimeoutMs - 50);
  EXPECT_LE(ms, kProbeIntervalMs + kProbeTimeoutMs + 1000);
  // Endpoint 0 still works: a send to itself.
  int v = 4, got = 0;
  FI_OK(fi_trecv(ep_[0], &got, sizeof(got), nullptr, addr_[0], 10, 0, nullptr));
  FI_OK(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[0], 10, nullptr));
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(0, &e), 1);
  EXPECT_EQ(got, 4);
}

TEST_F(FiPtl, ReceiveFromASenderThatIsGoneFails) {
  const auto out = LongSendWaiting(9);
  CloseEndpoint(0);  // before endpoint 1 pulls the data
  std::vector<char> in(kLong);
  fi_context ctx{};
  FI_OK(fi_trecv(ep_[1], in.data(), kLong, nullptr, FI_ADDR_UNSPEC, 9, 0, &ctx));
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  ASSERT_EQ(Wait(1, &e, nullptr, &err), -FI_ETIMEDOUT);
  EXPECT_EQ(err.op_context, &ctx);
}

// A receiver that is there but slow is probed, answers, and nothing fails.
TEST_F(FiPtl, ASlowPeerIsProbedNotFailed) {
  const auto out = LongSendWaiting(9);
  Spin(2 * kProbeTimeoutMs);  // ~20 probes, each answered
  std::vector<char> in(kLong);
  FI_OK(fi_trecv(ep_[1], in.data(), kLong, nullptr, FI_ADDR_UNSPEC, 9, 0, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(in, out);
}

TEST_F(FiPtl, UntaggedMessages) {
  char out[] = "untagged", in[16] = {};
  FI_OK(fi_send(ep_[0], out, sizeof(out), nullptr, addr_[1], nullptr));
  FI_OK(fi_recv(ep_[1], in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_TRUE(e.flags & FI_MSG);
  EXPECT_STREQ(in, out);
}

TEST_F(FiPtl, BadArgumentsAreRefused) {
  int v = 0;
  EXPECT_EQ(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[1], 1ULL << 60, nullptr), -FI_EINVAL);
  fi_addr_t bogus = 0xffffffffffff00ffULL;
  EXPECT_EQ(fi_tsend(ep_[0], &v, sizeof(v), nullptr, bogus, 1, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_tsend(ep_[0], nullptr, 8, nullptr, addr_[1], 1, nullptr), -FI_EINVAL);
  char bad_addr[8] = {1, 2, 3, 4, 5, 6, 7, 99};
  fi_addr_t out;
  EXPECT_EQ(fi_av_insert(av_, bad_addr, 1, &out, 0, nullptr), 0);
  EXPECT_EQ(out, FI_ADDR_NOTAVAIL);
}

TEST_F(FiPtl, AvStraddrAndLookup) {
  char name[8];
  size_t len = sizeof(name);
  FI_OK(fi_av_lookup(av_, addr_[0], name, &len));
  EXPECT_EQ(len, 8U);
  char str[64];
  size_t slen = sizeof(str);
  fi_av_straddr(av_, name, str, &slen);
  EXPECT_EQ(std::string(str).rfind("fi_ptl://", 0), 0U) << str;
}

class FiPtlTable : public FiPtl {
 protected:
  FiPtlTable() { av_type_ = FI_AV_TABLE; }
};

TEST_F(FiPtlTable, TableAddressesAndSource) {
  EXPECT_EQ(addr_[0], 0U);
  EXPECT_EQ(addr_[1], 1U);
  int v = 7, got = 0;
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  FI_OK(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[1], 2, nullptr));
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e, &src), 1);
  EXPECT_EQ(got, 7);
  EXPECT_EQ(src, addr_[0]);
}

class FiPtlWaitFd : public FiPtl {
 protected:
  FiPtlWaitFd() { wait_obj_ = FI_WAIT_FD; }

  // Whether cq_[i]'s descriptor becomes readable within ms.
  bool Readable(int i, int ms) {
    int fd = -1;
    EXPECT_EQ(fi_control(&cq_[i]->fid, FI_GETWAIT, &fd), 0);
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
  }
  int TryWait(int i) {
    fid* f = &cq_[i]->fid;
    return fi_trywait(fabric_, &f, 1);
  }
};

// fi_cq(3), fi_trywait(3): the descriptor wakes a sleeper for a
// completion, and trywait says when sleeping on it is safe.
TEST_F(FiPtlWaitFd, TheDescriptorWakesForACompletion) {
  fi_wait_obj obj{};
  FI_OK(fi_control(&cq_[1]->fid, FI_GETWAITOBJ, &obj));
  EXPECT_EQ(obj, FI_WAIT_FD);
  EXPECT_EQ(TryWait(1), 0);
  EXPECT_EQ(TryWait(0), 0);
  EXPECT_FALSE(Readable(1, 0));
  int v = 6, got = 0;
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 3, 0, nullptr));
  FI_OK(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[1], 3, nullptr));
  EXPECT_TRUE(Readable(1, 5000));
  EXPECT_EQ(TryWait(1), -FI_EAGAIN);  // the completion is there
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(1, &e), 1);
  ASSERT_EQ(Wait(0, &e), 1);
  EXPECT_EQ(got, 6);
  EXPECT_EQ(TryWait(1), 0);
  EXPECT_EQ(TryWait(0), 0);
  EXPECT_FALSE(Readable(1, 0));
}

// A send waiting on a peer gets no event for as long as the peer says
// nothing; the descriptor still wakes its sleeper for the liveness watch.
TEST_F(FiPtlWaitFd, TheDescriptorWakesWhileASendWaitsOnAPeer) {
  const auto out = LongSendWaiting(4);
  EXPECT_EQ(TryWait(0), 0);
  EXPECT_TRUE(Readable(0, 2000)) << "no wake-up while a send waits";
  std::vector<char> in(kLong);
  FI_OK(fi_trecv(ep_[1], in.data(), kLong, nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr));
  fi_cq_tagged_entry e{};
  ASSERT_EQ(Wait(0, &e), 1);
  ASSERT_EQ(Wait(1, &e), 1);
  EXPECT_EQ(in, out);
}

class FiPtlCounters : public FiPtl {
 protected:
  FiPtlCounters() { with_counters_ = true; }
};

TEST_F(FiPtlCounters, CountCompletionsAndErrors) {
  int v = 1, got = 0;
  FI_OK(fi_tsend(ep_[0], &v, sizeof(v), nullptr, addr_[1], 1, nullptr));
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr));
  FI_OK(fi_cntr_wait(cntr_[0], 1, 10000));
  FI_OK(fi_cntr_wait(cntr_[1], 1, 10000));
  EXPECT_EQ(got, 1);
  EXPECT_EQ(fi_cntr_read(cntr_[0]), 1U);
  EXPECT_EQ(fi_cntr_readerr(cntr_[1]), 0U);
  fi_context ctx{};
  FI_OK(fi_trecv(ep_[1], &got, sizeof(got), nullptr, FI_ADDR_UNSPEC, 2, 0, &ctx));
  FI_OK(fi_cancel(&ep_[1]->fid, &ctx));
  EXPECT_EQ(fi_cntr_readerr(cntr_[1]), 1U);
  // The error came before the wait: it times out (fi_cntr(3)).
  EXPECT_EQ(fi_cntr_wait(cntr_[1], 5, 100), -FI_ETIMEDOUT);
  FI_OK(fi_cntr_set(cntr_[1], 10));
  EXPECT_EQ(fi_cntr_read(cntr_[1]), 10U);
}

}  // namespace
