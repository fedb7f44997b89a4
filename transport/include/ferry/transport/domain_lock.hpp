#pragma once
// The domain's lock: /dev/shm/ferry.<domain>.lock, held with flock by the
// ferryd that serves the domain (and by `ferry clean` while it cleans).
// Shared-memory names are global, runtime directories are not: the lock
// lives where the objects live, so every process that could touch them
// sees it, whatever FERRY_RUNTIME_DIR it was given.

#include <sys/types.h>

#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::transport {

// "ferry.<domain>.lock": never removed with the domain's other objects.
[[nodiscard]] std::string domain_lock_name(std::string_view domain);

struct DomainLockError {
  bool held = false;            // another process holds it (else: could not take it)
  std::optional<pid_t> holder;  // the pid it wrote, when readable
  std::string message;          // one sentence naming the object and why
};

class DomainLock {
 public:
  // Opens (creating with `mode` and `group`, -1: ours) and locks the domain's
  // lock object without waiting, then writes our pid into it. Refuses an
  // object that another uid owns.
  [[nodiscard]] static std::expected<DomainLock, DomainLockError> acquire(
      std::string_view domain, mode_t mode = 0600, gid_t group = static_cast<gid_t>(-1));

  DomainLock(DomainLock&& other) noexcept;
  DomainLock& operator=(DomainLock&& other) noexcept;
  DomainLock(const DomainLock&) = delete;
  DomainLock& operator=(const DomainLock&) = delete;
  ~DomainLock();  // closing the descriptor releases the lock

  // The domain is gone: unlinks the lock object while still holding it (a
  // waiter that opened the old one sees it unlinked and retries).
  void remove() noexcept;

 private:
  DomainLock(int fd, std::string name) noexcept;
  int fd_ = -1;
  std::string name_;
};

}  // namespace ferry::transport
