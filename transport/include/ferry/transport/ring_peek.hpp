#pragma once
// The messages waiting in a ring, copied out for observability (`ferry
// pool` reads the pool references queued in each ring). Reads only: works
// on a read-only mapping and never moves head, so the consumer sees no
// difference; far too slow for the data path.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ferry/transport/ring_layout.hpp"

namespace ferry::transport {

struct PeekedMessage {
  std::uint32_t flags = 0;        // the slot's flags, as pushed
  std::uint32_t length = 0;       // the message's full length
  std::vector<std::byte> prefix;  // its first min(length, max_prefix) bytes
  SlotMeta meta{};                // as pushed
};

// A snapshot of the messages between head and tail. Both sides may run
// meanwhile: a message the consumer took (or drop_oldest discarded) while it
// was copied is left out, so every message returned was in the queue, intact,
// at one moment of the read. Empty when `mem` is not a ring of this layout.
[[nodiscard]] std::vector<PeekedMessage> peek_ring(const void* mem, std::size_t bytes,
                                                   std::size_t max_prefix);

}  // namespace ferry::transport
