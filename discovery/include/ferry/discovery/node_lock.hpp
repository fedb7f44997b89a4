#pragma once
// Whether a node's process still exists, decided without pids: each node
// holds an exclusive flock on `<runtime_dir>/<domain>.node-<slot>.lock` (its
// heartbeat slot = pool owner id) for as long as its process lives. The
// kernel drops the lock when the last descriptor of it closes, i.e. when the
// process exits: a zombie has closed its files, so it counts as gone; a node
// in another pid namespace (a container sharing the runtime directory) is
// judged the same way, since a lock belongs to a file, not to a pid.
//
// The node takes the lock on a private file and renames it into place, so
// the named file is locked from the moment it exists. ferryd removes it once
// it has freed the node's slot (owner ids are not reused, so no second node
// ever locks the same name). A file that does not exist means the node never
// took one (it died before, or could not create it): then, and only then,
// the caller falls back to the pid (probe_node_process).

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::discovery {

// <runtime_dir>/<domain>.node-<slot>.lock
[[nodiscard]] std::filesystem::path node_lock_path(std::string_view domain, std::uint32_t slot,
                                                   const std::filesystem::path& runtime_dir);

// The lock a node holds while its process lives (move-only). A child forked
// from the node does not keep it (the descriptor is closed in the child).
//
// ferryd takes it for each new node and sends the descriptor with the
// Welcome (SCM_RIGHTS), then closes its own: the node needs no write access
// to the runtime directory (a `--group` member has none), and the file names
// stay ferryd's to choose. A node whose ferryd sent none takes its own.
class NodeLock {
 public:
  // Creates <runtime_dir>/<domain>.node-<slot>.lock, locked. With `group`,
  // the file is readable by that group (0640), so that the group's nodes can
  // probe it; else 0600. The error is one sentence naming the file.
  [[nodiscard]] static std::expected<NodeLock, std::string> take(
      std::string_view domain, std::uint32_t slot, const std::filesystem::path& runtime_dir,
      std::optional<gid_t> group = std::nullopt);
  // The lock ferryd sent: `fd` must be the open file `path` names, and its
  // lock must be held through `fd` (or free). Takes `fd` over either way (it
  // is closed when refused); the error is one sentence naming the file.
  [[nodiscard]] static std::expected<NodeLock, std::string> adopt(
      int fd, const std::filesystem::path& path);
  NodeLock() = default;
  NodeLock(NodeLock&& other) noexcept;
  NodeLock& operator=(NodeLock&& other) noexcept;
  NodeLock(const NodeLock&) = delete;
  NodeLock& operator=(const NodeLock&) = delete;
  // Closes the descriptor (the lock goes with it); the file stays for ferryd
  // to find unlocked and remove.
  ~NodeLock();

  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }
  // The descriptor, to send to the node it was taken for.
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  explicit NodeLock(int fd) noexcept : fd_(fd) {}
  int fd_ = -1;
};

enum class NodeLockState : std::uint8_t {
  Held,     // a live process holds it
  Free,     // the file exists and nobody holds it: the node's process is gone
  Missing,  // no such file: the node never took a lock
};

// Looks at a node's lock without disturbing its holder (a non-blocking try,
// released at once).
[[nodiscard]] NodeLockState probe_node_lock(const std::filesystem::path& path) noexcept;

// Whether the process of node `slot` may still run: its lock decides; a
// node without a lock file is judged by `pid` (kill(pid, 0), the one
// namespace-bound fallback; pid <= 0: gone).
[[nodiscard]] bool node_process_alive(const std::filesystem::path& lock_path, pid_t pid) noexcept;

// Removes the lock file of a node whose process is gone (no error if absent).
void remove_node_lock(const std::filesystem::path& path) noexcept;

// Removes every node lock file of `domain` in `runtime_dir`; returns how many.
std::size_t remove_node_locks(std::string_view domain, const std::filesystem::path& runtime_dir);

}  // namespace ferry::discovery
