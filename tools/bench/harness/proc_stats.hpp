#pragma once
// What the kernel says a process costs: CPU time and resident memory, from
// /proc, for `ferry bench scale` (ferryd's idle CPU, every node's RSS) and
// the sizes of a domain's shared-memory objects.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ferry::bench {

// CPU time (user + system, every thread) `pid` has used, in ns: the sum of
// /proc/PID/task/*/schedstat (ns resolution, unlike the tick counts of
// /proc/PID/stat). nullopt when the process is gone.
[[nodiscard]] std::optional<std::int64_t> cpu_time_ns(pid_t pid);

// Resident set (VmRSS of /proc/PID/status), in bytes; nullopt when gone.
[[nodiscard]] std::optional<std::uint64_t> rss_bytes(pid_t pid);

// The shared-memory objects of `domain` by kind, from their sizes in /dev/shm.
struct DomainShm {
  std::uint64_t rings = 0;  // ring.PUB.SUB: one per queue
  std::uint64_t ring_bytes = 0;
  std::uint64_t doorbells = 0;  // bell.PORT: one per subscriber
  std::uint64_t doorbell_bytes = 0;
  std::uint64_t registry_bytes = 0;  // the heartbeat table
  std::uint64_t pool_bytes = 0;
  std::uint64_t other_bytes = 0;
};
[[nodiscard]] DomainShm domain_shm(const std::string& domain);

}  // namespace ferry::bench
