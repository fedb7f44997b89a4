#pragma once
// ferryd's pid file, `<runtime_dir>/<domain>.pid` (beside its socket): one
// line holding the pid of the ferryd that serves the domain. ferryd writes it
// once its socket listens (it then holds the domain's lock, so any file found
// there is a dead daemon's) and removes it when it stops cleanly. Tools read
// it only to name the daemon in a message (`ferry clean`); whether a daemon
// is alive is decided by its socket and lock, never by this file.

#include <sys/types.h>

#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::discovery {

// <runtime_dir>/<domain>.pid
[[nodiscard]] std::filesystem::path pid_file_path(std::string_view domain,
                                                  const std::filesystem::path& runtime_dir);

// Writes "<pid>\n" atomically (a temporary file renamed over `path`), mode
// 0644; the error is one sentence naming the file.
[[nodiscard]] std::expected<void, std::string> write_pid_file(const std::filesystem::path& path,
                                                              pid_t pid);

// The pid the file holds; nullopt when it is missing or holds no pid.
[[nodiscard]] std::optional<pid_t> read_pid_file(const std::filesystem::path& path);

// Removes the file if it still holds `pid` (a successor may have replaced it).
void remove_pid_file(const std::filesystem::path& path, pid_t pid) noexcept;

}  // namespace ferry::discovery
