// SPDX-License-Identifier: BSD-3-Clause
// Recorded frames, kept in the classic pcap file format (what tcpdump -r
// and wireshark read): `ptl_inject record` writes the frames a node sends,
// `ptl_inject replay` sends them again as they were, as an eavesdropper on
// the segment could (Documentation/security.md, replay).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "packet_socket.h"

namespace ptl_inject {

// Link type of the file: Ethernet (LINKTYPE_ETHERNET).
inline constexpr uint32_t kPcapEthernet = 1;
// The longest frame a file may hold: an Ethernet header and 65,535 bytes.
inline constexpr uint32_t kPcapSnapLen = 65535 + kEthHeader;

class PcapWriter {
 public:
  // Creates (truncates) the file and writes its header; throws
  // std::system_error naming the file.
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // One frame, Ethernet header included, stamped with the time now.
  void Write(std::span<const uint8_t> frame);
  // Flushes and closes; throws if anything written did not reach the file.
  void Close();

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

// Every frame of a pcap file of Ethernet frames written on a host of this
// byte order (as PcapWriter writes them). Throws std::runtime_error naming
// what is wrong: not pcap, another link type, a record cut short or over
// kPcapSnapLen.
std::vector<Bytes> ReadPcap(const std::string& path);

}  // namespace ptl_inject
