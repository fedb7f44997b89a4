#include "transports/cyclonedds/cyclonedds_side.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"  // kPeerTimeoutNs

namespace ferry::bench {

namespace {

// Loopback only, discovery by unicast to 127.0.0.1 (no multicast, which a
// container's loopback does not carry); a socket receive buffer of up to
// 10 MB (the kernel caps it at net.core.rmem_max), the tuning ROS 2's
// documentation gives for large messages (with the default ~200 KB, a
// 1080p frame overflows it and waits for Cyclone's retransmits); otherwise
// Cyclone's defaults (fragments of its 14720-byte messages).
constexpr const char* kConfig =
    "<CycloneDDS><Domain>"
    "<General><Interfaces><NetworkInterface name=\"lo\"/></Interfaces>"
    "<AllowMulticast>false</AllowMulticast></General>"
    "<Internal><SocketReceiveBufferSize min=\"default\" max=\"10MB\"/></Internal>"
    "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
    "<MaxAutoParticipantIndex>30</MaxAutoParticipantIndex>"
    "<Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery>"
    "</Domain></CycloneDDS>";

std::string cyclone_error(const char* what, dds_return_t rc) {
  return fmt::format("cyclonedds: {} failed: {}", what, dds_strretcode(rc));
}

dds_qos_t* endpoint_qos(bool keep_all, std::int32_t depth) {
  dds_qos_t* qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(5));
  dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
  if (keep_all) {
    dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
  } else {
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, depth);
  }
  return qos;
}

}  // namespace

std::uint32_t cyclone_domain_for(int orchestrator_pid) noexcept {
  return 101 + static_cast<std::uint32_t>(orchestrator_pid) % 100;
}

std::unique_ptr<CycloneNode> CycloneNode::join(std::uint32_t domain, std::string& error) {
  std::unique_ptr<CycloneNode> node(new CycloneNode());
  node->domain_ = dds_create_domain(domain, kConfig);
  if (node->domain_ < 0) {
    error = cyclone_error("dds_create_domain", node->domain_);
    node->domain_ = 0;
    return nullptr;
  }
  node->participant_ = dds_create_participant(domain, nullptr, nullptr);
  if (node->participant_ < 0) {
    error = cyclone_error("dds_create_participant", node->participant_);
    node->participant_ = 0;
    return nullptr;
  }
  return node;
}

CycloneNode::~CycloneNode() {
  if (participant_ > 0) (void)dds_delete(participant_);
  if (domain_ > 0) (void)dds_delete(domain_);
}

dds_entity_t CycloneNode::topic(const std::string& name, std::string& error) {
  const dds_entity_t t =
      dds_create_topic(participant_, &ferry_bench_Payload_desc, name.c_str(), nullptr, nullptr);
  if (t < 0) error = cyclone_error("dds_create_topic", t);
  return t;
}

dds_entity_t CycloneNode::writer(const std::string& name, bool keep_all, std::int32_t depth,
                                 std::string& error) {
  const dds_entity_t t = topic(name, error);
  if (t < 0) return t;
  dds_qos_t* qos = endpoint_qos(keep_all, depth);
  const dds_entity_t w = dds_create_writer(participant_, t, qos, nullptr);
  dds_delete_qos(qos);
  if (w < 0) error = cyclone_error("dds_create_writer", w);
  return w;
}

dds_entity_t CycloneNode::reader(const std::string& name, bool keep_all, std::int32_t depth,
                                 std::string& error) {
  const dds_entity_t t = topic(name, error);
  if (t < 0) return t;
  dds_qos_t* qos = endpoint_qos(keep_all, depth);
  const dds_entity_t r = dds_create_reader(participant_, t, qos, nullptr);
  dds_delete_qos(qos);
  if (r < 0) error = cyclone_error("dds_create_reader", r);
  return r;
}

bool cyclone_matched(dds_entity_t endpoint, std::uint32_t count, std::int64_t timeout_ns) {
  const std::int64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    std::uint32_t matched = 0;
    dds_publication_matched_status_t pub{};
    dds_subscription_matched_status_t sub{};
    if (dds_get_publication_matched_status(endpoint, &pub) == DDS_RETCODE_OK) {
      matched = pub.current_count;
    } else if (dds_get_subscription_matched_status(endpoint, &sub) == DDS_RETCODE_OK) {
      matched = sub.current_count;
    }
    if (matched >= count) return true;
    if (now_ns() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool cyclone_write(dds_entity_t writer, std::vector<std::uint8_t>& bytes, std::uint64_t seq,
                   RunControl& control, const char* who) {
  write_seq(reinterpret_cast<std::byte*>(bytes.data()), seq);
  ferry_bench_Payload msg{};
  msg.data._maximum = static_cast<std::uint32_t>(bytes.size());
  msg.data._length = static_cast<std::uint32_t>(bytes.size());
  msg.data._buffer = bytes.data();
  msg.data._release = false;
  const dds_return_t rc = dds_write(writer, &msg);
  if (rc != DDS_RETCODE_OK) {
    report_error(control,
                 fmt::format("{}: dds_write of {} failed: {}", who, seq, dds_strretcode(rc)));
    return false;
  }
  return true;
}

CycloneTaker::CycloneTaker(dds_entity_t reader) : reader_(reader) {
  waitset_ = dds_create_waitset(DDS_CYCLONEDDS_HANDLE);
  condition_ = dds_create_readcondition(reader_, DDS_ANY_STATE);
  if (waitset_ > 0 && condition_ > 0) (void)dds_waitset_attach(waitset_, condition_, 0);
}

CycloneTaker::~CycloneTaker() {
  give_back();
  if (condition_ > 0) (void)dds_delete(condition_);
  if (waitset_ > 0) (void)dds_delete(waitset_);
}

void CycloneTaker::give_back() noexcept {
  if (count_ > 0) (void)dds_return_loan(reader_, samples_, count_);
  count_ = at_ = 0;
  samples_[0] = nullptr;  // the next take loans again
}

const ferry_bench_Payload* CycloneTaker::next(RunControl& control, const char* who) {
  const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
  for (;;) {
    while (at_ < count_) {
      const std::int32_t i = at_++;
      if (infos_[i].valid_data) return static_cast<const ferry_bench_Payload*>(samples_[i]);
    }
    give_back();
    const dds_return_t n = dds_take(reader_, samples_, infos_, kBatch, kBatch);
    if (n < 0) {
      report_error(control, fmt::format("{}: dds_take failed: {}", who, dds_strretcode(n)));
      return nullptr;
    }
    count_ = n;
    if (n > 0) continue;
    const std::int64_t left = deadline - now_ns();
    if (left > 0 && waitset_ > 0) {
      // Woken by data (or at the deadline): take again.
      (void)dds_waitset_wait(waitset_, nullptr, 0, left);
      continue;
    }
    if (left > 0) {
      report_error(control, fmt::format("{}: cannot make a WaitSet on the reader", who));
      return nullptr;
    }
    report_error(control,
                 fmt::format("{}: no sample within {} s", who, kPeerTimeoutNs / 1'000'000'000));
    return nullptr;
  }
}

std::uint64_t cyclone_seq(const ferry_bench_Payload& p) noexcept {
  if (p.data._length < 8 || p.data._buffer == nullptr) return 0;
  return read_seq(reinterpret_cast<const std::byte*>(p.data._buffer));
}

std::uint64_t cyclone_size(const ferry_bench_Payload& p) noexcept { return p.data._length; }

}  // namespace ferry::bench
