#include "harness/proc_stats.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ferry/transport/names.hpp"

namespace ferry::bench {

std::optional<std::int64_t> cpu_time_ns(pid_t pid) {
  std::error_code ec;
  const std::filesystem::path tasks = fmt::format("/proc/{}/task", pid);
  std::int64_t total = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(task.path() / "schedstat");
    std::int64_t on_cpu = 0;
    if (in >> on_cpu) {
      total += on_cpu;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

std::optional<std::uint64_t> rss_bytes(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  1234 kB"
  }
  return std::nullopt;
}

DomainShm domain_shm(const std::string& domain) {
  DomainShm shm;
  const std::string prefix = transport::shm_prefix(domain);
  for (const auto& name : transport::list_domain_objects(domain)) {
    struct stat st {};
    if (::stat(("/dev/shm/" + name).c_str(), &st) != 0) continue;  // gone meanwhile
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const std::string what = name.substr(std::min(prefix.size(), name.size()));
    if (what.rfind("ring.", 0) == 0) {
      ++shm.rings;
      shm.ring_bytes += size;
    } else if (what.rfind("bell.", 0) == 0) {
      ++shm.doorbells;
      shm.doorbell_bytes += size;
    } else if (what == "registry") {
      shm.registry_bytes = size;
    } else if (what == "pool") {
      shm.pool_bytes = size;
    } else {
      shm.other_bytes += size;
    }
  }
  return shm;
}

}  // namespace ferry::bench
