#include "ferry/transport/domain_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <utility>

#include "ferry/transport/names.hpp"

namespace ferry::transport {

namespace {

// A lock object whose name was unlinked between our open and our flock is
// retried; that happens at most once per competing remover.
constexpr int kMaxAttempts = 8;

std::string sentence(const std::string& object, const char* what, int err) {
  return "cannot " + std::string(what) + " the domain's lock /dev/shm/" + object + ": " +
         std::strerror(err);
}

std::string foreign(const std::string& object, uid_t owner) {
  return "the domain's lock /dev/shm/" + object + " is owned by uid " + std::to_string(owner) +
         ", expected uid " + std::to_string(::geteuid()) +
         " (this process): another user made it; remove it as root or that user";
}

std::optional<pid_t> read_holder(int fd) {
  char text[16] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return std::nullopt;
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(text, text + n, pid);
  if (ec != std::errc{} || pid <= 0) return std::nullopt;
  return pid;
}

void write_holder(int fd) {
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
  }
}

}  // namespace

std::string domain_lock_name(std::string_view domain) { return shm_name(domain, "lock"); }

DomainLock::DomainLock(int fd, std::string name) noexcept : fd_(fd), name_(std::move(name)) {}

DomainLock::DomainLock(DomainLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), name_(std::move(other.name_)) {}

DomainLock& DomainLock::operator=(DomainLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    name_ = std::move(other.name_);
  }
  return *this;
}

DomainLock::~DomainLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::expected<DomainLock, DomainLockError> DomainLock::acquire(std::string_view domain, mode_t mode,
                                                               gid_t group) {
  const std::string name = domain_lock_name(domain);
  const std::string path = "/" + name;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // shm_open adds O_NOFOLLOW: a planted symlink is refused, not followed.
    const int fd = ::shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, mode);
    if (fd < 0) {
      const int err = errno;
      struct stat other {};
      if (err == EACCES && ::stat(("/dev/shm" + path).c_str(), &other) == 0 &&
          other.st_uid != ::geteuid()) {
        return std::unexpected(DomainLockError{false, std::nullopt, foreign(name, other.st_uid)});
      }
      return std::unexpected(DomainLockError{false, std::nullopt, sentence(name, "open", err)});
    }
    struct stat own {};
    if (::fstat(fd, &own) != 0) {
      const int err = errno;
      ::close(fd);
      return std::unexpected(DomainLockError{false, std::nullopt, sentence(name, "stat", err)});
    }
    if (own.st_uid != ::geteuid()) {
      ::close(fd);
      return std::unexpected(DomainLockError{false, std::nullopt, foreign(name, own.st_uid)});
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const auto holder = read_holder(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return std::unexpected(DomainLockError{
            true, holder,
            "domain '" + std::string(domain) + "' is in use by " +
                (holder ? "pid " + std::to_string(*holder) : std::string("another process")) +
                ", which holds its lock /dev/shm/" + name +
                " (whatever runtime directory either was given)"});
      }
      return std::unexpected(DomainLockError{false, std::nullopt, sentence(name, "lock", err)});
    }
    // The object we locked must still be the one under the name: a remover
    // unlinks it while holding it, and we may have opened it just before.
    struct stat named {};
    if (::stat(("/dev/shm" + path).c_str(), &named) != 0 || named.st_ino != own.st_ino ||
        named.st_dev != own.st_dev) {
      ::close(fd);
      continue;
    }
    // Our own object: its mode and group are what we were asked for.
    if ((own.st_mode & 07777) != mode && ::fchmod(fd, mode) != 0) {
      const int err = errno;
      ::close(fd);
      return std::unexpected(DomainLockError{false, std::nullopt, sentence(name, "chmod", err)});
    }
    if (group != static_cast<gid_t>(-1) && own.st_gid != group &&
        ::fchown(fd, static_cast<uid_t>(-1), group) != 0) {
      const int err = errno;
      ::close(fd);
      return std::unexpected(DomainLockError{false, std::nullopt, sentence(name, "chown", err)});
    }
    write_holder(fd);
    return DomainLock(fd, name);
  }
  return std::unexpected(
      DomainLockError{false, std::nullopt,
                      "cannot lock /dev/shm/" + name + ": it was removed and re-made " +
                          std::to_string(kMaxAttempts) + " times in a row while we tried"});
}

void DomainLock::remove() noexcept {
  if (fd_ < 0) return;
  ::shm_unlink(("/" + name_).c_str());
}

}  // namespace ferry::transport
