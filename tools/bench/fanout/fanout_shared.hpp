#pragma once
// What the sides of one `ferry bench fanout` run share: the start barrier
// and first error (RunControl), how many subscribers took the current
// sample, and per sample when the publish began, what it cost, and when
// each subscriber had it. One anonymous shared mapping made before the fork.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "harness/run_control.hpp"

namespace ferry::bench {

class FanoutShared {
 public:
  // Throws std::runtime_error when mmap fails.
  FanoutShared(std::uint32_t subscribers, std::uint64_t samples);
  ~FanoutShared();
  FanoutShared(const FanoutShared&) = delete;
  FanoutShared& operator=(const FanoutShared&) = delete;

  [[nodiscard]] RunControl& control() const noexcept { return header_->control; }
  // Takes of every sample so far, summed over subscribers.
  [[nodiscard]] std::atomic<std::uint64_t>& taken() const noexcept { return header_->taken; }
  [[nodiscard]] std::int64_t& publish_start(std::uint64_t i) const noexcept { return start_[i]; }
  [[nodiscard]] std::int64_t& publish_cost(std::uint64_t i) const noexcept { return cost_[i]; }
  [[nodiscard]] std::int64_t& woke(std::uint32_t k, std::uint64_t i) const noexcept {
    return woke_[std::size_t{k} * samples_ + i];
  }
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }
  [[nodiscard]] std::uint32_t subscribers() const noexcept { return subscribers_; }

 private:
  struct alignas(64) Header {
    RunControl control;
    alignas(64) std::atomic<std::uint64_t> taken{0};
  };
  std::size_t bytes_ = 0;
  std::uint32_t subscribers_ = 0;
  std::uint64_t samples_ = 0;
  Header* header_ = nullptr;
  std::int64_t* start_ = nullptr;
  std::int64_t* cost_ = nullptr;
  std::int64_t* woke_ = nullptr;
};

}  // namespace ferry::bench
