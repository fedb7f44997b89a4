#include "ferry/discovery/paths.hpp"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "ferry/transport/names.hpp"
#include "text.hpp"

namespace ferry::discovery {

namespace {

std::optional<std::string_view> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string_view{value};
}

std::expected<std::string, PathError> checked_domain(std::string_view name,
                                                     std::string_view source) {
  if (transport::is_valid_domain(name)) return std::string{name};
  return std::unexpected(
      PathError{PathErrorCode::InvalidDomain,
                text::cat("domain name '", name, "' (from ", source,
                          ") is invalid: use 1 to 32 characters from [A-Za-z0-9_-]")});
}

}  // namespace

std::expected<std::string, PathError> resolve_domain(std::optional<std::string_view> cli_value,
                                                     std::optional<std::string_view> config_value) {
  if (cli_value) return checked_domain(*cli_value, "--domain");
  if (const auto from_env = env("FERRY_DOMAIN")) return checked_domain(*from_env, "FERRY_DOMAIN");
  if (config_value) return checked_domain(*config_value, "the config file's domain:");
  return std::string{"default"};
}

std::filesystem::path runtime_dir() {
  if (const auto dir = env("FERRY_RUNTIME_DIR")) return std::filesystem::path{*dir};
  // The XDG spec says to ignore a relative XDG_RUNTIME_DIR.
  if (const auto xdg = env("XDG_RUNTIME_DIR"); xdg && xdg->starts_with('/')) {
    return std::filesystem::path{*xdg} / "ferry";
  }
  return std::filesystem::path{"/tmp"} / text::cat("ferry-", ::getuid());
}

std::expected<std::filesystem::path, PathError> ensure_runtime_dir() {
  return ensure_runtime_dir(runtime_dir());
}

std::expected<std::filesystem::path, PathError> ensure_runtime_dir(
    const std::filesystem::path& dir) {
  const std::string shown = dir.string();
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir.parent_path(), ec);  // their mode: the umask's
  }
  if (::mkdir(dir.c_str(), 0700) == 0) {
    // mkdir applies the umask; a umask may only take bits away, but say
    // what we mean.
    ::chmod(dir.c_str(), 0700);
  } else if (errno != EEXIST) {
    const int err = errno;
    return std::unexpected(
        PathError{PathErrorCode::create_failed,
                  text::cat("cannot create the runtime directory ", shown, ": ", std::strerror(err),
                            "; set FERRY_RUNTIME_DIR to a writable directory")});
  }
  // lstat: a symlink planted in /tmp by someone else must not redirect us.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = errno;
    return std::unexpected(PathError{
        PathErrorCode::create_failed,
        text::cat("cannot stat the runtime directory ", shown, ": ", std::strerror(err))});
  }
  if (S_ISLNK(st.st_mode) && st.st_uid == ::geteuid()) {
    // Our own symlink (e.g. FERRY_RUNTIME_DIR pointing elsewhere): check its target.
    if (::stat(dir.c_str(), &st) != 0) {
      const int err = errno;
      return std::unexpected(PathError{
          PathErrorCode::create_failed,
          text::cat("cannot stat the runtime directory ", shown, ": ", std::strerror(err))});
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return std::unexpected(PathError{
        PathErrorCode::not_a_directory,
        text::cat("the runtime directory ", shown,
                  " exists but is not a directory (or is someone else's symlink); remove it or "
                  "set FERRY_RUNTIME_DIR")});
  }
  if (st.st_uid != ::geteuid()) {
    return std::unexpected(PathError{
        PathErrorCode::insecure_directory,
        text::cat("the runtime directory ", shown, " belongs to uid ", st.st_uid,
                  ", not to us (uid ", ::geteuid(),
                  "); refusing to use it, set FERRY_RUNTIME_DIR to a directory of ours")});
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return std::unexpected(PathError{
        PathErrorCode::insecure_directory,
        text::cat("the runtime directory ", shown,
                  " is writable by group or others; refusing to use it, run chmod 700 on it")});
  }
  return dir;
}

std::size_t max_socket_path_length() noexcept { return sizeof(sockaddr_un::sun_path) - 1; }

std::expected<std::filesystem::path, PathError> socket_path(std::string_view domain) {
  return socket_path(domain, runtime_dir());
}

std::expected<std::filesystem::path, PathError> socket_path(
    std::string_view domain, const std::filesystem::path& runtime_dir) {
  if (!transport::is_valid_domain(domain)) {
    return std::unexpected(checked_domain(domain, "socket_path").error());
  }
  std::filesystem::path path = runtime_dir / text::cat(domain, ".sock");
  const std::size_t length = path.native().size();
  if (length > max_socket_path_length()) {
    return std::unexpected(PathError{
        PathErrorCode::path_too_long,
        text::cat("socket path ", path.string(), " is ", length, " bytes, longer than the ",
                  max_socket_path_length(),
                  " a Unix socket allows; set FERRY_RUNTIME_DIR to a shorter directory")});
  }
  return path;
}

}  // namespace ferry::discovery
