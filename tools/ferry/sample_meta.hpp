#pragma once
// The three values a recording keeps of each sample (DESIGN 1.7, 1.10): its
// publisher's sequence, the publisher's id and the publish time. One place
// reads them from a taken sample.

#include <time.h>

#include <cstdint>
#include <ferry/ferry.hpp>

namespace ferry::cli {

struct SampleMeta {
  std::uint64_t sequence = 0;
  std::uint64_t publisher_id = 0;
  std::uint64_t publish_time_ns = 0;  // CLOCK_REALTIME
};

[[nodiscard]] inline std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Per subscriber: samples carry no metadata yet, so the sequence counts the
// samples taken (no gap can show) and the publish time is the take time.
class SampleMetaReader {
 public:
  [[nodiscard]] SampleMeta operator()(const RawSample& /*sample*/) noexcept {
    return SampleMeta{taken_++, 0, realtime_ns()};
  }

 private:
  std::uint64_t taken_ = 0;
};

}  // namespace ferry::cli
