#pragma once
// Errors: construction and configuration failures throw ferry::Error with a
// one-sentence message naming the thing and the fix; run-time outcomes on the
// hot path are ErrorCode values, never exceptions.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ferry {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ErrorCode : std::uint8_t {
  TooManyHeld,       // the subscriber holds max_held samples already
  TooManyLoans,      // the publisher holds max_loans unpublished loans already
  PoolExhausted,     // no free chunk of a fitting size class
  TooLarge,          // the payload exceeds the topic's sample size or max_size
  PortClosed,        // the port was destroyed or its node left the domain
  NodeDeclaredDead,  // ferryd declared this node dead (missed heartbeats)
  CorruptData,       // a peer wrote invalid data into shared memory
  InheritedNode,     // the node belongs to the process this one was forked from
};

[[nodiscard]] const char* to_string(ErrorCode code) noexcept;

}  // namespace ferry
