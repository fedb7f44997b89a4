#include "ferry/discovery/node_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>

namespace ferry::discovery {

namespace {

// The lock descriptors of this process, closed in a forked child so that a
// child never keeps its parent's node alive (the lock belongs to the open
// file, which a fork shares). Fixed size: a process rarely runs more than a
// few nodes; beyond that a child keeps the extra ones until it execs (the
// descriptors are close-on-exec) or exits.
constexpr std::size_t kTrackedLocks = 64;
// fd + 1 of each tracked lock; 0 = none (zero-initialised before any use).
std::array<std::atomic<int>, kTrackedLocks> g_lock_fds{};

void close_locks_in_child() noexcept {
  for (auto& slot : g_lock_fds) {
    // SYNC: relaxed; the child has one thread, the forking one.
    const int f = slot.exchange(0, std::memory_order_relaxed) - 1;
    if (f >= 0) ::close(f);
  }
}

void track(int fd) noexcept {
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, close_locks_in_child); });
  for (auto& slot : g_lock_fds) {
    int expected = 0;
    // SYNC: relaxed; only fork's child handler reads these (fork orders it).
    if (slot.compare_exchange_strong(expected, fd + 1, std::memory_order_relaxed)) return;
  }
}

void untrack(int fd) noexcept {
  for (auto& slot : g_lock_fds) {
    int expected = fd + 1;
    // SYNC: relaxed, as in track().
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_relaxed)) return;
  }
}

}  // namespace

std::filesystem::path node_lock_path(std::string_view domain, std::uint32_t slot,
                                     const std::filesystem::path& runtime_dir) {
  return runtime_dir / fmt::format("{}.node-{}.lock", domain, slot);
}

std::expected<NodeLock, std::string> NodeLock::take(std::string_view domain, std::uint32_t slot,
                                                    const std::filesystem::path& runtime_dir,
                                                    std::optional<gid_t> group) {
  const std::filesystem::path path = node_lock_path(domain, slot, runtime_dir);
  const std::filesystem::path temp =
      path.string() + fmt::format(".{}.{}", ::getpid(), std::random_device{}());
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return std::unexpected(fmt::format("cannot create the node lock file '{}': {}", temp.string(),
                                       std::strerror(errno)));
  }
  if (group && (::fchown(fd, static_cast<uid_t>(-1), *group) != 0 || ::fchmod(fd, 0640) != 0)) {
    const int error = errno;
    ::unlink(temp.c_str());
    ::close(fd);
    return std::unexpected(fmt::format("cannot open the node lock file '{}' to group {}: {}",
                                       temp.string(), *group, std::strerror(error)));
  }
  // Locked before it gets its name: whoever finds the name finds it locked.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    ::close(fd);
    return std::unexpected(
        fmt::format("cannot take the node lock '{}': {}", path.string(), std::strerror(error)));
  }
  track(fd);
  return NodeLock(fd);
}

std::expected<NodeLock, std::string> NodeLock::adopt(int fd, const std::filesystem::path& path) {
  struct stat sent {};
  struct stat named {};
  const char* why = nullptr;
  if (::fstat(fd, &sent) != 0 || !S_ISREG(sent.st_mode)) {
    why = "what came is not a regular file";
  } else if (::stat(path.c_str(), &named) != 0 || named.st_dev != sent.st_dev ||
             named.st_ino != sent.st_ino) {
    why = "what came is not the file of that name";
  } else if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // Holding the lock through `fd` already, flock succeeds (it is ours);
    // failing means another open file holds it.
    why = "another process holds its lock";
  }
  if (why != nullptr) {
    ::close(fd);
    return std::unexpected(
        fmt::format("ferryd sent a node lock that is not '{}': {}", path.string(), why));
  }
  track(fd);
  return NodeLock(fd);
}

NodeLock::NodeLock(NodeLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

NodeLock& NodeLock::operator=(NodeLock&& other) noexcept {
  if (this != &other) {
    this->~NodeLock();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

NodeLock::~NodeLock() {
  if (fd_ < 0) return;
  untrack(fd_);
  ::close(fd_);
  fd_ = -1;
}

NodeLockState probe_node_lock(const std::filesystem::path& path) noexcept {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno == ENOENT ? NodeLockState::Missing : NodeLockState::Held;
  // A shared try: it fails only while the node holds its exclusive lock.
  const bool taken = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
  ::close(fd);  // releases our try at once
  return taken ? NodeLockState::Free : NodeLockState::Held;
}

bool node_process_alive(const std::filesystem::path& lock_path, pid_t pid) noexcept {
  switch (probe_node_lock(lock_path)) {
    case NodeLockState::Held:
      return true;
    case NodeLockState::Free:
      return false;
    case NodeLockState::Missing:
      break;
  }
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

void remove_node_lock(const std::filesystem::path& path) noexcept { ::unlink(path.c_str()); }

std::size_t remove_node_locks(std::string_view domain, const std::filesystem::path& runtime_dir) {
  std::error_code ec;
  std::size_t removed = 0;
  const std::string prefix = fmt::format("{}.node-", domain);  // domains have no '.'
  std::filesystem::directory_iterator it(runtime_dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.find(".lock") == std::string::npos) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace ferry::discovery
