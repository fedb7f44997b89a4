#pragma once
// Where a domain lives on the file system (docs/concepts/index.md): which domain a
// program is in, its runtime directory and the daemon's socket path.

#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::discovery {

enum class PathErrorCode : std::uint8_t {
  InvalidDomain,       // not [A-Za-z0-9_-]{1,32}
  create_failed,       // mkdir or stat of the runtime directory failed
  not_a_directory,     // the runtime directory path is something else
  insecure_directory,  // owned by another user, or group/world-writable
  path_too_long,       // the socket path does not fit sockaddr_un
};

struct PathError {
  PathErrorCode code;
  std::string message;  // one sentence naming the value, where it came from and the fix
};

// The domain: `cli_value` (--domain), else env FERRY_DOMAIN, else
// `config_value` (the config file's `domain:`), else "default". An empty
// FERRY_DOMAIN counts as unset; an empty --domain or domain: is an error.
[[nodiscard]] std::expected<std::string, PathError> resolve_domain(
    std::optional<std::string_view> cli_value, std::optional<std::string_view> config_value);

// $FERRY_RUNTIME_DIR, else $XDG_RUNTIME_DIR/ferry, else /tmp/ferry-<uid>.
// Empty (and, for XDG, relative) values count as unset.
[[nodiscard]] std::filesystem::path runtime_dir();

// Creates runtime_dir() (mode 0700, parents as needed) and checks that it is
// a directory of ours that no one else can write to.
[[nodiscard]] std::expected<std::filesystem::path, PathError> ensure_runtime_dir();
[[nodiscard]] std::expected<std::filesystem::path, PathError> ensure_runtime_dir(
    const std::filesystem::path& dir);

// <runtime_dir>/<domain>.sock, checked against the sockaddr_un size limit.
[[nodiscard]] std::expected<std::filesystem::path, PathError> socket_path(std::string_view domain);
[[nodiscard]] std::expected<std::filesystem::path, PathError> socket_path(
    std::string_view domain, const std::filesystem::path& runtime_dir);

// The longest path a Unix socket can bind to (sun_path minus its NUL).
[[nodiscard]] std::size_t max_socket_path_length() noexcept;

}  // namespace ferry::discovery
