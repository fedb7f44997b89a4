#pragma once
// The three values a recording keeps of each sample (docs/cpp-api.md, docs/record-replay.md): its
// publisher's sequence, the publisher's id and the publish time. One place
// reads them from a taken sample.

#include <cstdint>
#include <ferry/ferry.hpp>

namespace ferry::cli {

struct SampleMeta {
  std::uint64_t sequence = 0;
  std::uint64_t publisher_id = 0;
  std::uint64_t publish_time_ns = 0;  // CLOCK_REALTIME
};

// CLOCK_REALTIME now, the clock of publish_time_ns (an MCAP log_time).
[[nodiscard]] inline std::uint64_t realtime_ns() noexcept { return detail::realtime_ns(); }

// As Sample<T>::info() reports them.
class SampleMetaReader {
 public:
  [[nodiscard]] SampleMeta operator()(const RawSample& sample) const noexcept {
    const SampleInfo& info = sample.info();
    return SampleMeta{info.sequence, info.publisher_id, info.publish_time_ns};
  }
};

}  // namespace ferry::cli
