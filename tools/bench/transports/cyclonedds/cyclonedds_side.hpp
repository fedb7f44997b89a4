#pragma once
// What the Cyclone DDS comparator's sides share: a participant in a domain
// of the invocation's own, configured for loopback; reliable writers and
// readers of the bench's byte message on a run's topic; writing one
// numbered sample; taking samples (loaned) one at a time, polling or in a
// WaitSet. Only transports/cyclonedds/ includes Cyclone's headers. Every
// entity is made in the forked side (Cyclone's threads do not survive a
// fork), never in the orchestrator.

#include <dds/dds.h>
#include <dds/version.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_payload.h"  // idlc's, from bench_payload.idl
#include "ferry/bench/options.hpp"
#include "harness/run_control.hpp"

namespace ferry::bench {

// How long a side waits to discover its peers before it gives up.
inline constexpr std::int64_t kDdsMatchTimeoutNs = 10'000'000'000;

// Cyclone's domain for this invocation's runs: 101..200 from the
// orchestrator's pid (runs of other invocations then rarely share one; when
// they do, the topic names, which carry the pid, keep them apart).
[[nodiscard]] std::uint32_t cyclone_domain_for(int orchestrator_pid) noexcept;

class CycloneNode {
 public:
  // Creates the domain (loopback, unicast discovery to 127.0.0.1) and a
  // participant; on failure returns null with the reason in `error`.
  [[nodiscard]] static std::unique_ptr<CycloneNode> join(std::uint32_t domain, std::string& error);
  ~CycloneNode();
  CycloneNode(const CycloneNode&) = delete;
  CycloneNode& operator=(const CycloneNode&) = delete;

  // Reliable, volatile endpoints on `topic`; `keep_all`: the writer blocks
  // (up to kPeerTimeoutNs) while a reader's history is full, nothing is
  // lost; else keep-last `depth`. Negative (a Cyclone error) on failure,
  // with the reason in `error`.
  dds_entity_t writer(const std::string& topic, bool keep_all, std::int32_t depth,
                      std::string& error);
  dds_entity_t reader(const std::string& topic, bool keep_all, std::int32_t depth,
                      std::string& error);

 private:
  CycloneNode() = default;
  dds_entity_t topic(const std::string& name, std::string& error);
  dds_entity_t domain_ = 0;
  dds_entity_t participant_ = 0;
};

// Waits until `endpoint` (a writer or a reader) matched `count` peers; false
// after `timeout_ns`.
[[nodiscard]] bool cyclone_matched(dds_entity_t endpoint, std::uint32_t count,
                                   std::int64_t timeout_ns);

// Writes a sample of `bytes.size()` bytes whose first 8 are `seq` (the bytes
// are the caller's buffer, reused). Reports failure to `control`.
[[nodiscard]] bool cyclone_write(dds_entity_t writer, std::vector<std::uint8_t>& bytes,
                                 std::uint64_t seq, RunControl& control, const char* who);

// Takes a reader's samples, loaned, up to 64 at a time, and hands them out
// one by one; waits in a WaitSet at every --wait: Cyclone delivers through
// its own receive threads, from which a polling side would only take CPU
// (docs/benchmarks.md).
class CycloneTaker {
 public:
  explicit CycloneTaker(dds_entity_t reader);
  ~CycloneTaker();
  CycloneTaker(const CycloneTaker&) = delete;
  CycloneTaker& operator=(const CycloneTaker&) = delete;
  // The next sample with data, valid until the next call; null (reported)
  // when none came within kPeerTimeoutNs or taking failed.
  const ferry_bench_Payload* next(RunControl& control, const char* who);

 private:
  void give_back() noexcept;
  static constexpr std::int32_t kBatch = 64;
  dds_entity_t reader_;
  dds_entity_t waitset_ = 0;
  dds_entity_t condition_ = 0;
  void* samples_[kBatch]{};
  dds_sample_info_t infos_[kBatch]{};
  std::int32_t count_ = 0;  // loaned samples in samples_
  std::int32_t at_ = 0;     // the next one to look at
};

// The sequence number of a sample, and its size.
[[nodiscard]] std::uint64_t cyclone_seq(const ferry_bench_Payload& p) noexcept;
[[nodiscard]] std::uint64_t cyclone_size(const ferry_bench_Payload& p) noexcept;

}  // namespace ferry::bench
