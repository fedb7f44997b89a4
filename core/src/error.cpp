#include "ferry/error.hpp"

#include "ferry/error_name.hpp"

namespace ferry {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::TooManyHeld:
      return "the subscriber already holds max_held samples; release one first";
    case ErrorCode::TooManyLoans:
      return "the publisher already holds max_loans unpublished loans";
    case ErrorCode::PoolExhausted:
      return "the loaned-memory pool has no free chunk of a fitting size";
    case ErrorCode::TooLarge:
      return "the payload is larger than the topic allows";
    case ErrorCode::PortClosed:
      return "the port is closed";
    case ErrorCode::NodeDeclaredDead:
      return "ferryd declared this node dead after it missed its heartbeats";
    case ErrorCode::CorruptData:
      return "a peer wrote invalid data into shared memory";
    case ErrorCode::InheritedNode:
      return "the node belongs to the process this one was forked from; create a new node in "
             "the child";
    case ErrorCode::NoServer:
      return "the service has no server";
    case ErrorCode::Timeout:
      return "the response did not come in time";
    case ErrorCode::ServerGone:
      return "the server died or left with the call pending";
    case ErrorCode::TooManyPending:
      return "the client already has the service's capacity of calls in flight";
    case ErrorCode::NoResponse:
      return "the server dropped the request without answering it";
    case ErrorCode::InvalidArgument:
      return "the call cannot take this argument (an empty loan, or another publisher's)";
  }
  return "unknown error";
}

const char* name_of(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::TooManyHeld:
      return "TooManyHeld";
    case ErrorCode::TooManyLoans:
      return "TooManyLoans";
    case ErrorCode::PoolExhausted:
      return "PoolExhausted";
    case ErrorCode::TooLarge:
      return "TooLarge";
    case ErrorCode::PortClosed:
      return "PortClosed";
    case ErrorCode::NodeDeclaredDead:
      return "NodeDeclaredDead";
    case ErrorCode::CorruptData:
      return "CorruptData";
    case ErrorCode::InheritedNode:
      return "InheritedNode";
    case ErrorCode::NoServer:
      return "NoServer";
    case ErrorCode::Timeout:
      return "Timeout";
    case ErrorCode::ServerGone:
      return "ServerGone";
    case ErrorCode::TooManyPending:
      return "TooManyPending";
    case ErrorCode::NoResponse:
      return "NoResponse";
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
  }
  return "unknown error";
}

}  // namespace ferry
