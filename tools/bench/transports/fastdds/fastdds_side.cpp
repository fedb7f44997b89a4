#include "transports/fastdds/fastdds_side.hpp"

#include <fastdds/rtps/common/Locator.h>
#include <fastrtps/utils/IPLocator.h>
#include <fmt/format.h>

#include <chrono>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/StdoutErrConsumer.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <thread>

#include "ferry/bench/clock.hpp"
#include "harness/seq.hpp"
#include "latency/latency_transport.hpp"  // kPeerTimeoutNs
#include "transports/fastdds/fastdds_type.hpp"

namespace ferry::bench {

namespace dds = eprosima::fastdds::dds;
using eprosima::fastrtps::Duration_t;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;

namespace {

constexpr std::uint64_t kFrameBytes = 1u << 20;  // above this a sample counts as a frame

template <class Qos>
void endpoint_qos(Qos& qos, bool keep_all, std::int32_t depth) {
  qos.reliability().kind = dds::RELIABLE_RELIABILITY_QOS;
  qos.reliability().max_blocking_time = fastdds_duration(kPeerTimeoutNs);
  qos.durability().kind = dds::VOLATILE_DURABILITY_QOS;
  qos.history().kind = keep_all ? dds::KEEP_ALL_HISTORY_QOS : dds::KEEP_LAST_HISTORY_QOS;
  qos.history().depth = depth;
  qos.resource_limits().max_instances = 1;
  qos.resource_limits().max_samples_per_instance = depth;
  qos.resource_limits().max_samples = depth;
  // Data-sharing (Fast DDS's default, automatic: on for a plain type) for
  // keep-last; off for keep-all: a keep-all data-sharing writer of Fast DDS
  // 2.9 waited for acknowledgements that did not come (its history full,
  // write failing after 5 s; docs/benchmarks.md), so the lossless stream
  // goes through the shared-memory transport, as a non-plain type's would.
  if (keep_all) {
    qos.data_sharing().off();
  } else {
    qos.data_sharing().automatic();
  }
}

}  // namespace

Duration_t fastdds_duration(std::int64_t ns) {
  return Duration_t(static_cast<std::int32_t>(ns / 1'000'000'000),
                    static_cast<std::uint32_t>(ns % 1'000'000'000));
}

std::uint32_t fastdds_domain_for(int orchestrator_pid) noexcept {
  return 1 + static_cast<std::uint32_t>(orchestrator_pid) % 100;
}

std::int32_t fastdds_depth(std::uint64_t size, bool keep_all) noexcept {
  if (!keep_all) return 4;  // one sample in flight
  return size > kFrameBytes ? 16 : 4096;
}

std::unique_ptr<FastNode> FastNode::join(std::uint32_t domain, std::uint64_t size,
                                         std::string& error) {
  // Fast DDS logs to stdout by default, which carries the results: errors
  // only, to stderr.
  dds::Log::ClearConsumers();
  dds::Log::RegisterConsumer(std::make_unique<dds::StdoutErrConsumer>());
  dds::Log::SetVerbosity(dds::Log::Error);

  std::unique_ptr<FastNode> node(new FastNode());
  node->size_ = size;
  dds::DomainParticipantQos qos = dds::PARTICIPANT_QOS_DEFAULT;
  qos.name("ferry-bench");
  // The built-in transports (shared memory and UDPv4), as ROS 2 leaves
  // them; localhost as an initial peer too, so that discovery does not
  // depend on multicast (which a container may not route).
  Locator_t local;
  IPLocator::setIPv4(local, 127, 0, 0, 1);
  qos.wire_protocol().builtin.initialPeersList.push_back(local);
  node->participant_ =
      dds::DomainParticipantFactory::get_instance()->create_participant(domain, qos);
  if (node->participant_ == nullptr) {
    error = fmt::format("fastdds: cannot create a participant in domain {}", domain);
    return nullptr;
  }
  dds::TypeSupport type(new FastBytesType(size));
  node->type_name_ = type.get_type_name();
  if (type.register_type(node->participant_) != ReturnCode_t::RETCODE_OK) {
    error = "fastdds: cannot register the bench's type";
    return nullptr;
  }
  node->publisher_ = node->participant_->create_publisher(dds::PUBLISHER_QOS_DEFAULT);
  node->subscriber_ = node->participant_->create_subscriber(dds::SUBSCRIBER_QOS_DEFAULT);
  if (node->publisher_ == nullptr || node->subscriber_ == nullptr) {
    error = "fastdds: cannot create a publisher or a subscriber";
    return nullptr;
  }
  return node;
}

FastNode::~FastNode() {
  if (participant_ == nullptr) return;
  (void)participant_->delete_contained_entities();
  (void)dds::DomainParticipantFactory::get_instance()->delete_participant(participant_);
}

dds::Topic* FastNode::topic(const std::string& name, std::string& error) {
  dds::Topic* t = participant_->create_topic(name, type_name_, dds::TOPIC_QOS_DEFAULT);
  if (t == nullptr) error = fmt::format("fastdds: cannot create topic {}", name);
  return t;
}

dds::DataWriter* FastNode::writer(const std::string& name, bool keep_all, std::string& error) {
  dds::Topic* t = topic(name, error);
  if (t == nullptr) return nullptr;
  dds::DataWriterQos qos = dds::DATAWRITER_QOS_DEFAULT;
  endpoint_qos(qos, keep_all, fastdds_depth(size_, keep_all));
  if (keep_all) {
    // A keep-all writer frees a sample once every reader acknowledged it,
    // and readers acknowledge in answer to a heartbeat (every 3 s by
    // default, during which a full history blocks the writer): one every
    // millisecond while samples are unacknowledged.
    qos.reliable_writer_qos().times.heartbeatPeriod = Duration_t(0, 1'000'000);
  }
  dds::DataWriter* w = publisher_->create_datawriter(t, qos);
  if (w == nullptr) error = fmt::format("fastdds: cannot create a writer on {}", name);
  return w;
}

dds::DataReader* FastNode::reader(const std::string& name, bool keep_all, std::string& error) {
  dds::Topic* t = topic(name, error);
  if (t == nullptr) return nullptr;
  dds::DataReaderQos qos = dds::DATAREADER_QOS_DEFAULT;
  endpoint_qos(qos, keep_all, fastdds_depth(size_, keep_all));
  // Acknowledge a heartbeat at once (the default waits 5 ms), so that a
  // keep-all writer is not held up by the delay.
  qos.reliable_reader_qos().times.heartbeatResponseDelay = Duration_t(0, 0);
  dds::DataReader* r = subscriber_->create_datareader(t, qos);
  if (r == nullptr) error = fmt::format("fastdds: cannot create a reader on {}", name);
  return r;
}

namespace {

template <class Count>
bool wait_count(Count&& count, std::uint32_t want, std::int64_t timeout_ns) {
  const std::int64_t deadline = now_ns() + timeout_ns;
  while (count() < want) {
    if (now_ns() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

bool fastdds_matched(dds::DataWriter* writer, std::uint32_t count, std::int64_t timeout_ns) {
  return wait_count(
      [&] {
        dds::PublicationMatchedStatus s;
        (void)writer->get_publication_matched_status(s);
        return static_cast<std::uint32_t>(s.current_count);
      },
      count, timeout_ns);
}

bool fastdds_matched(dds::DataReader* reader, std::uint32_t count, std::int64_t timeout_ns) {
  return wait_count(
      [&] {
        dds::SubscriptionMatchedStatus s;
        (void)reader->get_subscription_matched_status(s);
        return static_cast<std::uint32_t>(s.current_count);
      },
      count, timeout_ns);
}

bool fastdds_write(dds::DataWriter* writer, std::uint64_t seq, RunControl& control,
                   const char* who) {
  void* sample = nullptr;
  ReturnCode_t rc = writer->loan_sample(sample);
  if (rc == ReturnCode_t::RETCODE_OUT_OF_RESOURCES) {
    // Every sample of the pool is in the history, unacknowledged: wait for
    // the readers, as a full keep-all writer does.
    const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
    while (rc == ReturnCode_t::RETCODE_OUT_OF_RESOURCES && now_ns() < deadline) {
      std::this_thread::yield();
      rc = writer->loan_sample(sample);
    }
  }
  if (rc != ReturnCode_t::RETCODE_OK) {
    report_error(control,
                 fmt::format("{}: loan_sample for {} failed (ReturnCode {})", who, seq, rc()));
    return false;
  }
  write_seq(static_cast<std::byte*>(sample), seq);
  if (!writer->write(sample)) {
    (void)writer->discard_loan(sample);
    report_error(control, fmt::format("{}: write of {} failed (a full history for {} s?)", who, seq,
                                      kPeerTimeoutNs / 1'000'000'000));
    return false;
  }
  return true;
}

FastTaker::~FastTaker() { give_back(); }

void FastTaker::give_back() noexcept {
  if (loaned_) (void)reader_->return_loan(data_, infos_);
  loaned_ = false;
  at_ = 0;
}

const std::byte* FastTaker::next(RunControl& control, const char* who) {
  const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
  for (;;) {
    if (loaned_) {
      while (at_ < data_.length()) {
        const std::int32_t i = at_++;
        if (infos_[i].valid_data) return static_cast<const std::byte*>(data_.buffer()[i]);
      }
      give_back();
    }
    const ReturnCode_t rc = reader_->take(data_, infos_, 64);
    if (rc == ReturnCode_t::RETCODE_OK) {
      loaned_ = true;
      continue;
    }
    if (rc != ReturnCode_t::RETCODE_NO_DATA) {
      report_error(control, fmt::format("{}: take failed (ReturnCode {})", who, rc()));
      return nullptr;
    }
    const std::int64_t left = deadline - now_ns();
    if (left > 0) {
      (void)reader_->wait_for_unread_message(fastdds_duration(left));
      continue;
    }
    report_error(control,
                 fmt::format("{}: no sample within {} s", who, kPeerTimeoutNs / 1'000'000'000));
    return nullptr;
  }
}

}  // namespace ferry::bench
