#pragma once
// What the sides of both iceoryx transports do: register with the
// benchmark's RouDi, name a run's services, wait for the peer, take chunks
// (polled or on a WaitSet), deregister. Only the iceoryx transports include
// this file (and with it iceoryx's headers).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ferry/bench/options.hpp"
#include "harness/run_control.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"

namespace ferry::bench {

// In a forked side: registers with RouDi as `runtime_name` (unique while
// it is registered). iceoryx logs only errors, and to stderr: stdout
// carries --json.
void join_iceoryx(const std::string& runtime_name);

// Deregisters this process from RouDi, which frees its ports and chunks
// now. This is what iceoryx's runtime destructor does, which a forked side
// never runs (it leaves with _Exit, destructors not run). Call it after
// the side's ports are destroyed.
void leave_iceoryx() noexcept;

// Run `run`'s service `event` ("ping", "pong", "stream"): every run has
// services of its own, so no side of an earlier run is ever matched.
[[nodiscard]] iox::capro::ServiceDescription iceoryx_service(std::uint64_t run, const char* event);

// Lossless, like every transport of the benchmark: a full subscriber queue
// makes the publisher wait (ferry's policy `block`); no history.
[[nodiscard]] iox::popo::PublisherOptions iceoryx_publisher_options();
[[nodiscard]] iox::popo::SubscriberOptions iceoryx_subscriber_options(std::uint64_t queue_capacity);

// Waits until `sub` is subscribed (RouDi connected it to the publisher)
// and, when given, `pub` has a subscriber; false after 10 s.
[[nodiscard]] bool wait_connected(iox::popo::UntypedSubscriber& sub,
                                  iox::popo::UntypedPublisher* pub);

// Loans a chunk of `size` bytes, writes `seq` into its first 8 bytes and
// publishes it; false (reported) when no chunk could be loaned.
[[nodiscard]] bool publish_seq(iox::popo::UntypedPublisher& pub, std::uint64_t size,
                               std::uint64_t seq, RunControl& control, const char* who);

// The next chunk of a subscriber: take() polled (spin) or, when there is
// none, a wait on a WaitSet (sleep).
class ChunkWaiter {
 public:
  ChunkWaiter(iox::popo::UntypedSubscriber& sub, Wait wait);
  ChunkWaiter(const ChunkWaiter&) = delete;
  ChunkWaiter& operator=(const ChunkWaiter&) = delete;

  // The next chunk's payload (release it with release()); nullptr
  // (reported) after kPeerTimeoutNs.
  [[nodiscard]] const std::byte* next(RunControl& control, const char* who);
  void release(const std::byte* payload) noexcept;

 private:
  iox::popo::UntypedSubscriber& sub_;
  Wait wait_;
  std::optional<iox::popo::WaitSet<1>> waitset_;
};

// The payload size a chunk was loaned with.
[[nodiscard]] std::uint64_t iceoryx_payload_size(const std::byte* payload) noexcept;

}  // namespace ferry::bench
