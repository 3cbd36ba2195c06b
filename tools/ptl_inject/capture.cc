// SPDX-License-Identifier: BSD-3-Clause
#include "capture.h"

#include <sys/time.h>

#include <cerrno>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace ptl_inject {

namespace {

constexpr uint32_t kPcapMagic = 0xa1b2c3d4;  // microsecond stamps, our byte order

struct PcapFileHeader {
  uint32_t magic;
  uint16_t version_major, version_minor;
  int32_t thiszone;
  uint32_t sigfigs, snaplen, linktype;
};

struct PcapRecordHeader {
  uint32_t ts_sec, ts_usec, incl_len, orig_len;
};

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) ThrowErrno(path);
  PcapFileHeader h{kPcapMagic, 2, 4, 0, 0, kPcapSnapLen, kPcapEthernet};
  if (std::fwrite(&h, sizeof(h), 1, f_) != 1) ThrowErrno(path);
}

PcapWriter::~PcapWriter() {
  if (f_) std::fclose(f_);
}

void PcapWriter::Write(std::span<const uint8_t> frame) {
  timeval now{};
  gettimeofday(&now, nullptr);
  PcapRecordHeader r{uint32_t(now.tv_sec), uint32_t(now.tv_usec), uint32_t(frame.size()),
                     uint32_t(frame.size())};
  if (std::fwrite(&r, sizeof(r), 1, f_) != 1 ||
      std::fwrite(frame.data(), 1, frame.size(), f_) != frame.size())
    ThrowErrno(path_);
}

void PcapWriter::Close() {
  std::FILE* f = f_;
  f_ = nullptr;
  if (std::fflush(f) != 0 || std::ferror(f)) {
    int err = errno;
    std::fclose(f);
    errno = err;
    ThrowErrno(path_);
  }
  if (std::fclose(f) != 0) ThrowErrno(path_);
}

std::vector<Bytes> ReadPcap(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) ThrowErrno(path);
  PcapFileHeader h{};
  if (std::fread(&h, sizeof(h), 1, f.get()) != 1 || h.magic != kPcapMagic)
    throw std::runtime_error(path + ": not a pcap file written on this host");
  if (h.linktype != kPcapEthernet)
    throw std::runtime_error(path + ": link type " + std::to_string(h.linktype) + ", not Ethernet");
  std::vector<Bytes> frames;
  PcapRecordHeader r{};
  for (;;) {
    size_t n = std::fread(&r, 1, sizeof(r), f.get());
    if (n == 0) break;
    if (n != sizeof(r))
      throw std::runtime_error(path + ": record " + std::to_string(frames.size() + 1) +
                               " cut short");
    if (r.incl_len > kPcapSnapLen || r.incl_len < kEthHeader)
      throw std::runtime_error(path + ": frame " + std::to_string(frames.size() + 1) + " of " +
                               std::to_string(r.incl_len) + " bytes");
    Bytes b(r.incl_len);
    if (std::fread(b.data(), 1, b.size(), f.get()) != b.size())
      throw std::runtime_error(path + ": frame " + std::to_string(frames.size() + 1) +
                               " cut short");
    frames.push_back(std::move(b));
  }
  if (std::ferror(f.get())) ThrowErrno(path);
  return frames;
}

}  // namespace ptl_inject
