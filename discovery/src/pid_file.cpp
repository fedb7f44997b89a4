#include "ferry/discovery/pid_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <system_error>

#include "text.hpp"

namespace ferry::discovery {

std::filesystem::path pid_file_path(std::string_view domain,
                                    const std::filesystem::path& runtime_dir) {
  return runtime_dir / text::cat(domain, ".pid");
}

std::expected<void, std::string> write_pid_file(const std::filesystem::path& path, pid_t pid) {
  const std::string temporary = text::cat(path.string(), ".", ::getpid(), ".tmp");
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return std::unexpected(
        text::cat("cannot write the pid file ", temporary, ": ", std::strerror(errno)));
  }
  const std::string line = text::cat(pid, "\n");
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int write_errno = errno;
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = written ? errno : write_errno;
    ::unlink(temporary.c_str());
    return std::unexpected(
        text::cat("cannot write the pid file ", path.string(), ": ", std::strerror(err)));
  }
  return {};
}

std::optional<pid_t> read_pid_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
  if (ec != std::errc{} || end != line.data() + line.size() || pid <= 0) return std::nullopt;
  return pid;
}

void remove_pid_file(const std::filesystem::path& path, pid_t pid) noexcept {
  try {
    if (read_pid_file(path) == pid) ::unlink(path.c_str());
  } catch (...) {
    // Best effort at exit: a pid file left behind is only a stale hint.
  }
}

}  // namespace ferry::discovery
