// docs/operations/ferryd.md: ferryd stopped (SIGTERM) while nodes live leaves the domain to
// them: flows go on, the objects stay, the next ferryd adopts the domain;
// with no node left, stopping removes every object of the domain.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "daemon_fixture.hpp"
#include "ferry/transport/names.hpp"
#include "pubsub_util.hpp"
#include "signal_pipe.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig =
    seq_config("  - { name: t, type: Seq, capacity: 64, policy: block, block_timeout_ms: 5000 }\n",
               "liveness: { heartbeat_ms: 20, timeout_ms: 500 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

bool has_object(const TestDomain& domain, const std::string& what) {
  const auto names = ferry::transport::list_domain_objects(domain.name());
  return std::find(names.begin(), names.end(), ferry::transport::shm_name(domain.name(), what)) !=
         names.end();
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "SIGTERM with live nodes leaves the domain to them; the next ferryd adopts it") {
  Signal go;
  Signal progress;  // raised every 200 samples the subscriber takes in order
  Signal finish;
  Signal finished;  // the same, for the subscriber: its queue runs dry then, not before
  Child pub([&] {
    ferry::Node node{"pub"};
    auto publisher = node.publisher<Seq>("t");
    if (!publisher.wait_for_subscribers(1, std::chrono::seconds(10))) return 1;
    go.raise();
    // Publishes until told to finish (at most 20 s of 1 ms steps).
    for (std::uint64_t i = 0; i < 20000 && !finish.wait(0ms); ++i) {
      if (publisher.publish(make_seq(1, i)).delivered < 1) return 2;
      std::this_thread::sleep_for(1ms);
    }
    return 0;
  });
  Child sub([&] {
    ferry::Node node{"sub"};
    auto subscriber = node.subscriber<Seq>("t");
    for (std::uint64_t i = 0;; ++i) {
      auto s = subscriber.take(1500ms);
      if (!s) return finished.wait(0ms) ? 0 : 12;  // the publisher finished, or samples stopped
      if ((*s)->seq != i || !intact(**s)) return 11;
      if (i % 200 == 199) progress.raise();
    }
  });
  REQUIRE(go.wait());
  REQUIRE(progress.wait());

  CHECK(daemon.stop() == 0);
  // No daemon: the objects stay, the samples keep flowing.
  CHECK(has_object(domain, "pool"));
  CHECK(has_object(domain, "registry"));
  CHECK(progress.wait());
  CHECK(progress.wait());

  daemon.start();  // adopts: a new port matches the publisher of the old ferryd
  {
    ferry::Node late_node{"late"};
    auto late = late_node.subscriber<Seq>("t");
    CHECK(eventually([&] { return late.publisher_count() == 1; }, 5s));
    CHECK(late.take(3s));
  }
  CHECK(progress.wait());
  finish.raise();
  finished.raise();
  CHECK(pub.wait() == 0);
  CHECK(sub.wait() == 0);

  // No node left: stopping removes everything, the lock too.
  CHECK(daemon.stop() == 0);
  CHECK(ferry::transport::list_domain_objects(domain.name()).empty());
}
