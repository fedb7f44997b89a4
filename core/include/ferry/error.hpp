#pragma once
/// @file
/// Errors: construction and configuration failures throw ferry::Error with a
/// one-sentence message naming the thing and the fix; run-time outcomes on the
/// hot path are ErrorCode values, never exceptions.

#include <cstdint>
#include <stdexcept>
#include <string>

/// ferry's public API (`#include <ferry/ferry.hpp>`).
namespace ferry {

/// A construction or configuration failure (no ferryd, a refused port, a
/// type mismatch...): its what() is one sentence naming the thing and the fix.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Why a hot-path operation did not happen: a value, never an exception.
enum class ErrorCode : std::uint8_t {
  TooManyHeld,       ///< the subscriber holds max_held samples already
  TooManyLoans,      ///< the publisher holds max_loans unpublished loans already
  PoolExhausted,     ///< no free chunk of a fitting size class
  TooLarge,          ///< the payload exceeds the topic's sample size or max_size
  PortClosed,        ///< the port was destroyed or its node left the domain
  NodeDeclaredDead,  ///< ferryd declared this node dead (missed heartbeats)
  CorruptData,       ///< a peer wrote invalid data into shared memory
  InheritedNode,     ///< the node belongs to the process this one was forked from
  NoServer,          ///< the service has no server (docs/services.md)
  Timeout,           ///< the call's response did not come in time
  ServerGone,        ///< the server died or left with the call pending
  TooManyPending,    ///< the client has `capacity` calls in flight already
  NoResponse,        ///< the server dropped the request without answering it
  InvalidArgument,   ///< the call cannot take its argument (an empty or foreign loan)
};

/// One sentence saying what the code means.
[[nodiscard]] const char* to_string(ErrorCode code) noexcept;

}  // namespace ferry
