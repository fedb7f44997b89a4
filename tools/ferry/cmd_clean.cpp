// ferry clean: removes what a dead ferryd of the domain left behind: its
// shared-memory objects (/dev/shm/ferry.<domain>.*), its socket and its pid
// file. Refuses while a ferryd serves the domain (it holds the domain's lock,
// /dev/shm/ferry.<domain>.lock, whatever its runtime directory).
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/pid_file.hpp"
#include "ferry/discovery/socket.hpp"
#include "ferry/transport/domain_lock.hpp"
#include "ferry/transport/names.hpp"
#include "sample_codec.hpp"

namespace ferry::cli {

namespace {

namespace fs = std::filesystem;

struct Cleaned {
  std::vector<std::string> objects;  // names in /dev/shm
  std::optional<std::string> socket;
  std::optional<std::string> pid_file;
  std::optional<pid_t> dead_pid;      // what the pid file said
  std::vector<std::string> failures;  // "what: why"
};

[[noreturn]] void refuse_live(const std::string& domain, const fs::path& socket,
                              std::optional<pid_t> pid) {
  const std::string who = pid ? fmt::format("ferryd (pid {})", *pid) : std::string{"a ferryd"};
  const std::string stop =
      pid ? fmt::format("stop it first (kill {})", *pid) : std::string{"stop it first"};
  throw Failure(kExitRuntime,
                fmt::format("{} is serving domain '{}' on {}; {}: ferry clean only removes what a "
                            "dead ferryd left behind",
                            who, domain, socket.string(), stop));
}

// The domain's lock in /dev/shm, seen by every ferryd of the domain
// whatever its runtime directory; refuses (Failure, exit 1) while one holds it.
transport::DomainLock lock_domain_objects(const std::string& domain, const fs::path& socket) {
  auto lock = transport::DomainLock::acquire(domain);
  if (!lock) {
    if (lock.error().held) {
      const auto pid = lock.error().holder;
      std::error_code ec;
      const std::string where = fs::exists(socket, ec)
                                    ? fmt::format("on {}", socket.string())
                                    : fmt::format("with another runtime directory than {}",
                                                  socket.parent_path().string());
      throw Failure(
          kExitRuntime,
          fmt::format(
              "{} is serving domain '{}' {} (it holds /dev/shm/{}); {}: ferry "
              "clean only removes what a dead ferryd left behind",
              pid ? fmt::format("ferryd (pid {})", *pid) : std::string{"a ferryd"}, domain, where,
              transport::domain_lock_name(domain),
              pid ? fmt::format("stop it first (kill {})", *pid) : std::string{"stop it first"}));
    }
    throw Failure(kExitRuntime, lock.error().message);
  }
  return std::move(*lock);
}

// Holds the domain's server lock while it cleans, so that no ferryd starts
// meanwhile; refuses (Failure, exit 1) while one serves the domain.
std::optional<discovery::ServerLock> lock_dead_domain(const std::string& domain,
                                                      const fs::path& dir, const fs::path& socket) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;  // no runtime directory: no socket there
  auto lock = discovery::ServerLock::acquire(socket);
  if (!lock) {
    if (lock.error().code == discovery::SocketErrorCode::AlreadyServed) {
      refuse_live(domain, socket, discovery::read_pid_file(discovery::pid_file_path(domain, dir)));
    }
    throw Failure(kExitRuntime, lock.error().message);
  }
  // A server that does not take the lock (an older ferryd) still answers.
  if (auto probe =
          discovery::UnixSeqpacketSocket::connect(socket, std::chrono::milliseconds(500))) {
    std::optional<pid_t> pid;
    if (auto cred = probe->peer_credentials()) pid = cred->pid;
    refuse_live(domain, socket, pid);
  }
  return std::move(*lock);
}

void remove_file(const fs::path& path, std::optional<std::string>& removed,
                 std::vector<std::string>& failures) {
  if (::unlink(path.c_str()) == 0) {
    removed = path.string();
  } else if (errno != ENOENT) {
    failures.push_back(fmt::format("{}: {}", path.string(), std::strerror(errno)));
  }
}

// Why /dev/shm/<name> stays: another user's object (/dev/shm is sticky:
// only its owner or root may remove it) is named with its owner.
std::string cannot_remove(const std::string& name, int err) {
  struct stat st {};
  if ((err == EPERM || err == EACCES) && ::lstat(("/dev/shm/" + name).c_str(), &st) == 0 &&
      st.st_uid != ::geteuid()) {
    return fmt::format(
        "/dev/shm/{}: another user's object (owner uid {}), which only that user or root can "
        "remove; ferryd leaves it alone",
        name, st.st_uid);
  }
  return fmt::format("/dev/shm/{}: {}", name, std::strerror(err));
}

Cleaned clean_domain(const std::string& domain, const fs::path& dir, const fs::path& socket) {
  Cleaned cleaned;
  const std::string lock = transport::domain_lock_name(domain);
  for (const auto& name : transport::list_domain_objects(domain)) {
    if (name == lock) continue;  // held by us: removed last
    if (::shm_unlink(("/" + name).c_str()) == 0) {
      cleaned.objects.push_back(name);
    } else if (errno != ENOENT) {
      cleaned.failures.push_back(cannot_remove(name, errno));
    }
  }
  struct stat st {};
  if (::lstat(socket.c_str(), &st) == 0) {
    if (S_ISSOCK(st.st_mode)) {
      remove_file(socket, cleaned.socket, cleaned.failures);
    } else {
      cleaned.failures.push_back(
          fmt::format("{}: not a socket, left as it is (remove it by hand)", socket.string()));
    }
  }
  const fs::path pid_file = discovery::pid_file_path(domain, dir);
  cleaned.dead_pid = discovery::read_pid_file(pid_file);
  remove_file(pid_file, cleaned.pid_file, cleaned.failures);
  // Dead nodes' lock files (node_lock.hpp): they name nothing once the
  // objects are gone.
  (void)discovery::remove_node_locks(domain, dir);
  return cleaned;
}

void print(const std::string& domain, const Cleaned& cleaned, bool json) {
  if (json) {
    const auto or_null = [](const std::optional<std::string>& v) {
      return v ? Json(*v) : Json(nullptr);
    };
    Json out{{"domain", domain},
             {"objects", cleaned.objects},
             {"socket", or_null(cleaned.socket)},
             {"pid_file", or_null(cleaned.pid_file)},
             {"dead_pid", cleaned.dead_pid ? Json(*cleaned.dead_pid) : Json(nullptr)},
             {"failures", cleaned.failures}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  for (const auto& name : cleaned.objects) std::printf("removed /dev/shm/%s\n", name.c_str());
  if (cleaned.socket) std::printf("removed %s\n", cleaned.socket->c_str());
  if (cleaned.pid_file) {
    std::printf(
        "removed %s%s\n", cleaned.pid_file->c_str(),
        cleaned.dead_pid
            ? fmt::format(" (of ferryd pid {}, no longer serving)", *cleaned.dead_pid).c_str()
            : "");
  }
  if (cleaned.objects.empty() && !cleaned.socket && !cleaned.pid_file) {
    std::printf("domain '%s': nothing to clean\n", domain.c_str());
  } else {
    std::printf("domain '%s': removed %zu shared-memory object(s)%s%s\n", domain.c_str(),
                cleaned.objects.size(), cleaned.socket ? ", the stale socket" : "",
                cleaned.pid_file ? ", the pid file" : "");
  }
}

void clean(const Context& context, bool json) {
  const std::string domain = context.domain();
  const fs::path dir = discovery::runtime_dir();
  auto socket = discovery::socket_path(domain, dir);
  if (!socket) throw Failure(kExitRuntime, socket.error().message);
  // A lock a dead ferryd left is reported with its other objects; one this
  // command makes to lock the domain is not.
  std::error_code ec;
  const std::string lock_name = transport::domain_lock_name(domain);
  const bool lock_left = fs::exists("/dev/shm/" + lock_name, ec);
  transport::DomainLock objects_lock = lock_domain_objects(domain, *socket);
  const auto lock = lock_dead_domain(domain, dir, *socket);
  Cleaned cleaned = clean_domain(domain, dir, *socket);
  objects_lock.remove();
  if (lock_left) cleaned.objects.push_back(lock_name);
  print(domain, cleaned, json);
  if (!cleaned.failures.empty()) {
    std::string list;
    for (const auto& f : cleaned.failures) list += (list.empty() ? "" : "; ") + f;
    throw Failure(kExitRuntime,
                  fmt::format("could not remove everything of domain '{}': {}", domain, list));
  }
}

}  // namespace

int run_clean(const CleanOptions& o, const Context& context) {
  clean(context, o.json);
  return kExitOk;
}

}  // namespace ferry::cli
