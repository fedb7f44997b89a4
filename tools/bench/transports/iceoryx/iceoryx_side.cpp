#include "transports/iceoryx/iceoryx_side.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>

#include "ferry/bench/clock.hpp"
#include "ferry/bench/spin.hpp"
#include "harness/seq.hpp"
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/internal/runtime/ipc_interface_base.hpp"
#include "iceoryx_posh/internal/runtime/ipc_message.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "latency/latency_transport.hpp"  // kPeerTimeoutNs

namespace ferry::bench {

namespace {

constexpr std::int64_t kConnectTimeoutNs = 10'000'000'000;

iox::capro::IdString_t id(const std::string& s) {
  return iox::capro::IdString_t(iox::cxx::TruncateToCapacity, s.c_str(), s.size());
}

}  // namespace

void join_iceoryx(const std::string& runtime_name) {
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kError,
                                                           iox::log::LogLevelOutput::kHideLogLevel);
  iox::runtime::PoshRuntime::initRuntime(
      iox::RuntimeName_t(iox::cxx::TruncateToCapacity, runtime_name.c_str(), runtime_name.size()));
}

void leave_iceoryx() noexcept {
  auto& runtime = iox::runtime::PoshRuntime::getInstance();
  iox::runtime::IpcMessage request;
  request << iox::runtime::IpcMessageTypeToString(iox::runtime::IpcMessageType::TERMINATION)
          << runtime.getInstanceName();
  iox::runtime::IpcMessage answer;
  (void)runtime.sendRequestToRouDi(request,
                                   answer);  // RouDi answers TERMINATION_ACK once it cleaned up
}

iox::capro::ServiceDescription iceoryx_service(std::uint64_t run, const char* event) {
  return {id("ferry-bench"), id(fmt::format("run{}", run)), id(event)};
}

iox::popo::PublisherOptions iceoryx_publisher_options() {
  iox::popo::PublisherOptions o;
  o.historyCapacity = 0;
  o.subscriberTooSlowPolicy = iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER;
  return o;
}

iox::popo::SubscriberOptions iceoryx_subscriber_options(std::uint64_t queue_capacity) {
  iox::popo::SubscriberOptions o;
  o.queueCapacity = queue_capacity;
  o.historyRequest = 0;
  o.queueFullPolicy = iox::popo::QueueFullPolicy::BLOCK_PRODUCER;
  return o;
}

bool wait_connected(iox::popo::UntypedSubscriber& sub, iox::popo::UntypedPublisher* pub) {
  // RouDi connects ports in its discovery loop (every 100 ms): no hurry.
  const std::int64_t deadline = now_ns() + kConnectTimeoutNs;
  while (sub.getSubscriptionState() != iox::SubscribeState::SUBSCRIBED ||
         (pub != nullptr && !pub->hasSubscribers())) {
    if (now_ns() > deadline) return false;
    ::usleep(1000);
  }
  return true;
}

bool publish_seq(iox::popo::UntypedPublisher& pub, std::uint64_t size, std::uint64_t seq,
                 RunControl& control, const char* who) {
  auto loan = pub.loan(static_cast<std::uint32_t>(size));
  if (loan.has_error()) {
    report_error(control, fmt::format("{}: loan of {} bytes failed (iceoryx AllocationError {})",
                                      who, size, static_cast<int>(loan.get_error())));
    return false;
  }
  write_seq(static_cast<std::byte*>(loan.value()), seq);
  pub.publish(loan.value());
  return true;
}

ChunkWaiter::ChunkWaiter(iox::popo::UntypedSubscriber& sub, Wait wait) : sub_(sub), wait_(wait) {
  if (wait_ == Wait::Sleep) {
    waitset_.emplace();
    if (waitset_->attachState(sub_, iox::popo::SubscriberState::HAS_DATA).has_error()) {
      throw std::runtime_error("cannot attach the subscriber to a WaitSet");
    }
  }
}

const std::byte* ChunkWaiter::next(RunControl& control, const char* who) {
  const void* payload = nullptr;
  const auto take = [&] {
    auto r = sub_.take();
    if (r.has_error()) return false;
    payload = r.value();
    return true;
  };
  bool got = false;
  if (wait_ == Wait::Spin) {
    got = spin_until(take, kPeerTimeoutNs);
  } else {
    const std::int64_t deadline = now_ns() + kPeerTimeoutNs;
    while (!(got = take())) {
      const std::int64_t left = deadline - now_ns();
      if (left <= 0) break;
      (void)waitset_->timedWait(iox::units::Duration::fromNanoseconds(left));
    }
  }
  if (!got) {
    report_error(control,
                 fmt::format("{}: no message within {} s", who, kPeerTimeoutNs / 1'000'000'000));
    return nullptr;
  }
  return static_cast<const std::byte*>(payload);
}

void ChunkWaiter::release(const std::byte* payload) noexcept { sub_.release(payload); }

std::uint64_t iceoryx_payload_size(const std::byte* payload) noexcept {
  return iox::mepoo::ChunkHeader::fromUserPayload(payload)->userPayloadSize();
}

}  // namespace ferry::bench
