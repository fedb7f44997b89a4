#pragma once
// Helpers shared by the ring tests: rings over a heap buffer or a Segment,
// self-checking messages (iteration counts: test_scale.hpp).

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <thread>

#include "ferry/transport/names.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "test_domain.hpp"
#include "test_scale.hpp"

namespace ferry::test {

// 64-byte aligned heap memory (ASan sees every out-of-bounds access to it).
struct HeapBuffer {
  explicit HeapBuffer(std::size_t n)
      : bytes(n),
        ptr(static_cast<std::byte*>(::operator new (n, std::align_val_t{transport::kCacheLine}))) {
    std::memset(ptr, 0xA5, n);
  }
  ~HeapBuffer() { ::operator delete (ptr, std::align_val_t{transport::kCacheLine}); }
  HeapBuffer(const HeapBuffer&) = delete;
  HeapBuffer& operator=(const HeapBuffer&) = delete;
  std::size_t bytes;
  std::byte* ptr;
};

// A formatted ring on the heap.
struct HeapRing {
  explicit HeapRing(transport::RingGeometry g, std::uint32_t initial_index = 0)
      : geometry(g), buffer(transport::ring_bytes(g)) {
    const auto ok = transport::format_ring(buffer.ptr, buffer.bytes, g, initial_index);
    if (!ok) std::abort();
  }
  [[nodiscard]] void* mem() const { return buffer.ptr; }
  [[nodiscard]] std::size_t bytes() const { return buffer.bytes; }
  [[nodiscard]] transport::ring_layout::RingHeader& header() const {
    return *reinterpret_cast<transport::ring_layout::RingHeader*>(buffer.ptr);
  }
  transport::RingGeometry geometry;
  HeapBuffer buffer;
};

inline constexpr std::uint32_t kRingLayoutForTests = transport::kRingLayoutVersion;

// A formatted, sealed ring in a Segment named after the test domain.
inline transport::Segment create_ring_segment(const TestDomain& domain, const std::string& what,
                                              transport::RingGeometry g,
                                              std::uint32_t initial_index = 0) {
  auto seg = transport::Segment::create(transport::shm_name(domain.name(), what),
                                        transport::SegmentKind::Ring, kRingLayoutForTests,
                                        transport::ring_bytes(g));
  if (!seg) std::abort();
  if (!transport::format_ring(seg->payload(), seg->payload_size(), g, initial_index)) std::abort();
  seg->seal();
  return std::move(*seg);
}

inline transport::Segment open_ring_segment(const std::string& domain, const std::string& what) {
  auto seg =
      transport::Segment::open(transport::shm_name(domain, what), transport::SegmentKind::Ring,
                               kRingLayoutForTests, std::chrono::seconds(5));
  if (!seg) std::abort();
  return std::move(*seg);
}

// A T (atomics a test and its children share) in a sealed Segment named
// "shared" after the test domain; the children open it by name.
template <class T>
transport::Segment create_shared_segment(const TestDomain& domain) {
  auto seg = transport::Segment::create(transport::shm_name(domain.name(), "shared"),
                                        transport::SegmentKind::Test, 1, sizeof(T));
  REQUIRE(seg.has_value());
  new (seg->payload()) T{};
  seg->seal();
  return std::move(*seg);
}
template <class T>
T& shared_in(transport::Segment& seg) {
  return *reinterpret_cast<T*>(seg.payload());
}

// Self-checking messages: 8-byte sequence number, then bytes derived from it;
// the length varies with the sequence (at least 8, at most `max`).
inline std::uint32_t message_length(std::uint64_t seq, std::uint32_t max) {
  return 8 + static_cast<std::uint32_t>(seq % (max - 7));
}
inline std::byte pattern_byte(std::uint64_t seq, std::size_t i) {
  return static_cast<std::byte>((seq * 131 + i * 7 + 3) & 0xff);
}
inline std::span<const std::byte> make_message(std::uint64_t seq, std::uint32_t length,
                                               std::byte* buf) {
  std::memcpy(buf, &seq, 8);
  for (std::size_t i = 8; i < length; ++i) buf[i] = pattern_byte(seq, i);
  return {buf, length};
}
// The sequence number if the message is intact, or UINT64_MAX.
inline std::uint64_t check_message(std::span<const std::byte> msg) {
  if (msg.size() < 8) return UINT64_MAX;
  std::uint64_t seq;
  std::memcpy(&seq, msg.data(), 8);
  for (std::size_t i = 8; i < msg.size(); ++i) {
    if (msg[i] != pattern_byte(seq, i)) return UINT64_MAX;
  }
  return seq;
}

// Waiting in a test loop: spin a little, then yield, so that a test whose
// two threads share one CPU (a loaded CI machine) still makes progress.
class Backoff {
 public:
  void operator()() {
    if (++spins_ < 128) {
      transport::cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  void reset() { spins_ = 0; }

 private:
  unsigned spins_ = 0;
};

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ferry::test
