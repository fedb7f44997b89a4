#pragma once
// No loops (DESIGN 1.11): a sample this bridge imported and published
// locally reaches its own exporting subscriber of the same topic, and must
// not go back to DDS. The importer records a fingerprint of each sample it
// published; the exporter skips a sample whose fingerprint is recorded (and
// forgets it). Only topics both exported and imported need one.
// Bounded: at most `capacity` fingerprints (the oldest go first: a sample
// the local queue overwrote is never taken, so its record must age out).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>

namespace ferry::bridge {

// 64-bit fingerprint of a sample's bytes (8 bytes per step).
[[nodiscard]] std::uint64_t fingerprint(std::span<const std::byte> bytes) noexcept;

class EchoFilter {
 public:
  explicit EchoFilter(std::size_t capacity) : capacity_(capacity) {}
  // The importer published this sample locally.
  void published(std::uint64_t print);
  // The exporter took a sample: true when it is one the importer published
  // (then forgotten).
  [[nodiscard]] bool is_echo(std::uint64_t print);

 private:
  std::mutex mutex_;  // importer and exporter threads
  std::deque<std::uint64_t> prints_;
  std::size_t capacity_;
};

}  // namespace ferry::bridge
