#pragma once
// What ferryd's core (daemon_core.hpp) asks its shell (daemon_io.hpp) to do,
// returned as data after each event, in the order they must be done: the
// core decides, the shell owns the sockets and the shared memory they touch.

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "ferry/discovery/messages.hpp"

namespace ferry::discovery {

// A client connection as the core knows it: an id the shell gives (its
// socket's descriptor), opaque to the core.
using ConnectionId = int;

// Sends `message` on connection `to` (request id 0: a notification). With
// `node_lock`, the node lock of that slot (node_lock.hpp) is taken and
// travels with the message: a new node's Welcome.
struct SendMessage {
  ConnectionId to = -1;
  std::uint32_t request_id = 0;
  Message message;
  std::optional<std::uint16_t> node_lock;
};

// Closes the connection after what was sent on it (the core has forgotten it).
struct CloseConnection {
  ConnectionId connection = -1;
};

// A node slot is about to be given again: what a late publisher gave the
// departed node after its reclaim goes now (the pool's reclaim of that owner
// id, its process gone). Comes before the Welcome that hands the slot out.
struct ReclaimSlot {
  std::uint16_t owner = 0;
};

using Effect = std::variant<SendMessage, CloseConnection, ReclaimSlot>;
using Effects = std::vector<Effect>;

}  // namespace ferry::discovery
