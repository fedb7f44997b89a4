// The pool's error messages.
#include <string_view>

#include "ferry/transport/pool.hpp"

namespace ferry::transport {

std::string_view to_string(PoolError e) noexcept {
  switch (e) {
    case PoolError::Exhausted:
      return "the pool has no free chunk of a fitting size";
    case PoolError::TooLarge:
      return "the requested size is larger than the pool's largest chunk";
    case PoolError::InvalidReference:
      return "invalid chunk reference (class, index or generation out of range)";
    case PoolError::StaleReference:
      return "stale chunk reference (the chunk was freed or reused since)";
    case PoolError::NotHeld:
      return "the owner holds no such reference";
    case PoolError::TooManyHolders:
      return "the chunk already has the maximum number of distinct holders";
    case PoolError::InvalidOwner:
      return "invalid owner id (0) or reference count";
    case PoolError::Corrupt:
      return "the pool's shared memory holds an impossible value";
    case PoolError::Contended:
      return "gave up after too many lost races on the pool's shared memory";
    case PoolError::InvalidGeometry:
      return "invalid pool geometry (classes, chunk sizes or counts)";
    case PoolError::BadLayout:
      return "memory is not a pool of this layout version";
    case PoolError::TooSmall:
      return "memory region is too small for the pool";
    case PoolError::Misaligned:
      return "pool memory is not 64-byte aligned";
    case PoolError::Aborted:
      return "operation stopped at a simulated crash point (tests)";
  }
  return "unknown pool error";
}

}  // namespace ferry::transport
