// ptl_inject's recordings: pcap files written and read back.
#include "capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ptl_inject {
namespace {

class Capture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ptl_inject_capture_XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = tmpl;
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void WriteRaw(const Bytes& b) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
    std::fclose(f);
  }
  Bytes ReadRaw() {
    Bytes b;
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    for (int c; f && (c = std::fgetc(f)) != EOF;) b.push_back(uint8_t(c));
    if (f) std::fclose(f);
    return b;
  }
  std::string path_;
};

Bytes Frame(size_t len, uint8_t fill) { return Bytes(len, fill); }

TEST_F(Capture, FramesComeBackInOrderAndWhole) {
  std::vector<Bytes> frames = {Frame(kEthHeader, 1), Frame(60, 2), Frame(kPcapSnapLen, 3)};
  PcapWriter w(path_);
  for (const Bytes& f : frames) w.Write(f);
  w.Close();
  EXPECT_EQ(ReadPcap(path_), frames);
}

TEST_F(Capture, TheFileIsClassicPcapOfEthernet) {
  PcapWriter w(path_);
  w.Write(Frame(20, 7));
  w.Close();
  Bytes b = ReadRaw();
  ASSERT_EQ(b.size(), 24u + 16u + 20u);
  uint32_t magic, linktype, incl;
  std::memcpy(&magic, b.data(), 4);
  std::memcpy(&linktype, b.data() + 20, 4);
  std::memcpy(&incl, b.data() + 24 + 8, 4);
  EXPECT_EQ(magic, 0xa1b2c3d4u);
  EXPECT_EQ(linktype, kPcapEthernet);
  EXPECT_EQ(incl, 20u);
}

TEST_F(Capture, AnEmptyRecordingHasNoFrames) {
  PcapWriter(path_).Close();
  EXPECT_TRUE(ReadPcap(path_).empty());
}

TEST_F(Capture, DamagedFilesAreRefused) {
  PcapWriter w(path_);
  w.Write(Frame(60, 9));
  w.Close();
  Bytes good = ReadRaw();

  Bytes cut(good.begin(), good.end() - 1);  // the frame cut short
  WriteRaw(cut);
  EXPECT_THROW(ReadPcap(path_), std::runtime_error);

  Bytes half(good.begin(), good.begin() + 24 + 8);  // a record header cut short
  WriteRaw(half);
  EXPECT_THROW(ReadPcap(path_), std::runtime_error);

  Bytes huge = good;  // a record longer than any frame
  uint32_t len = kPcapSnapLen + 1;
  std::memcpy(huge.data() + 24 + 8, &len, 4);
  WriteRaw(huge);
  EXPECT_THROW(ReadPcap(path_), std::runtime_error);

  Bytes other = good;  // another link type
  other[20] = 105;
  WriteRaw(other);
  EXPECT_THROW(ReadPcap(path_), std::runtime_error);

  WriteRaw(Bytes{'n', 'o', 't'});
  EXPECT_THROW(ReadPcap(path_), std::runtime_error);
  EXPECT_THROW(ReadPcap(path_ + ".missing"), std::system_error);
}

}  // namespace
}  // namespace ptl_inject
