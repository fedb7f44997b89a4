#pragma once
/// @file
/// PublishResult: what became of one published sample.
#include <cstdint>
#include <optional>

#include "ferry/error.hpp"

namespace ferry {

/// What became of one published sample, counted in subscriber queues
/// (for a batch: samples x queues).
struct PublishResult {
  std::uint32_t delivered = 0;    ///< queues that took it (overwritten ones included)
  std::uint32_t dropped = 0;      ///< drop_new: queues that were full and refused it
  std::uint32_t overwritten = 0;  ///< drop_oldest: queues that discarded their oldest to take it
  std::uint32_t timed_out = 0;    ///< block: queues still full at block_timeout_ms
  /// Set when the sample could not be sent at all: NodeDeclaredDead (ferryd
  /// declared this node dead; create a new port to rejoin), PoolExhausted,
  /// TooManyLoans or TooLarge (a large sample found no chunk).
  std::optional<ErrorCode> error;
};

}  // namespace ferry
