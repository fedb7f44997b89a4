// ferryd's liveness state machine (node_liveness.hpp), stepped with a fake
// clock and a fake process probe: every transition of its table, no sleeps.
#include <doctest/doctest.h>

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "daemon_fakes.hpp"
#include "node_liveness.hpp"

using namespace ferry::discovery;
using ferry::discovery::test::FakeActions;
using ferry::discovery::test::Table;

namespace {

constexpr std::uint32_t kTimeoutMs = 500;

// Liveness over a fresh table with the fake actions.
struct Attached {
  Table table;
  FakeActions actions;
  NodeLiveness liveness{actions, kTimeoutMs};
  Attached() { liveness.attach(table.beats); }
};

}  // namespace

TEST_CASE_FIXTURE(
    Attached, "a beating node stays alive; silence past the timeout declares it dead, then free") {
  std::uint64_t now = 10'000;

  CHECK(liveness.state(7) == NodeState::Free);
  liveness.joined(7, 4242, now);
  liveness.set_must_beat(7, true);
  actions.running.insert(7);
  CHECK(liveness.state(7) == NodeState::Alive);
  CHECK(table.word(7) == SlotState::Alive);
  CHECK(table.beats.slot(7)->pid.load() == 4242);

  // Beats keep it alive well past one timeout.
  for (int i = 0; i < 10; ++i) {
    now += kTimeoutMs / 2;
    table.beat(7, now);
    CHECK(liveness.tick(now).empty());
  }
  CHECK(liveness.state(7) == NodeState::Alive);

  // Exactly the timeout is still alive; one ms more is not.
  now += kTimeoutMs;
  CHECK(liveness.tick(now).empty());
  now += 1;
  const auto deaths = liveness.tick(now);
  REQUIRE(deaths.size() == 1);
  CHECK(deaths[0].owner == 7);
  CHECK(deaths[0].pid == 4242);
  CHECK(deaths[0].silent_ms == kTimeoutMs + 1);
  CHECK_FALSE(deaths[0].orphan);
  CHECK(liveness.state(7) == NodeState::DeclaredDead);
  CHECK(table.word(7) == SlotState::DeclaredDead);  // the node reads this when it wakes
  CHECK(actions.reclaims.empty());                  // ferryd drops its ports first

  // The daemon dropped it: reclaimed while its (frozen) process lives.
  liveness.left(7);
  CHECK(liveness.state(7) == NodeState::Reclaiming);
  CHECK(table.word(7) == SlotState::DeclaredDead);
  CHECK(actions.reclaims == std::vector<std::pair<std::uint16_t, bool>>{{7, false}});
  CHECK(liveness.waiting() == 1);

  // Its process goes: the next probe turn reclaims the rest and frees it.
  actions.running.erase(7);
  now += NodeLiveness::kProbePeriodMs;
  CHECK(liveness.tick(now).empty());
  CHECK(liveness.state(7) == NodeState::Free);
  CHECK(table.word(7) == SlotState::Free);
  CHECK(actions.reclaims.back() == std::pair<std::uint16_t, bool>{7, true});
  CHECK(actions.released_slots == std::vector<std::uint16_t>{7});
  CHECK(liveness.waiting() == 0);
}

TEST_CASE_FIXTURE(Attached, "a node without ports is never declared dead for silence") {
  liveness.joined(3, 99, 0);
  CHECK(liveness.tick(100 * kTimeoutMs).empty());
  CHECK(liveness.state(3) == NodeState::Alive);
  liveness.set_must_beat(3, true);  // its first port
  CHECK(liveness.tick(100 * kTimeoutMs).size() == 1);
}

TEST_CASE_FIXTURE(Attached,
                  "a closed socket reclaims at once and frees the slot when the process is gone") {
  liveness.joined(1, 11, 0);
  liveness.joined(2, 22, 0);
  actions.running = {2};

  liveness.left(1);  // process already gone
  CHECK(liveness.state(1) == NodeState::Free);
  CHECK(table.word(1) == SlotState::Free);
  CHECK(actions.reclaims == std::vector<std::pair<std::uint16_t, bool>>{{1, true}});
  CHECK(actions.released_slots == std::vector<std::uint16_t>{1});

  liveness.left(2);  // socket closed, process still runs (stopped)
  CHECK(liveness.state(2) == NodeState::Reclaiming);
  CHECK(table.word(2) == SlotState::Reclaiming);
  CHECK(actions.reclaims.back() == std::pair<std::uint16_t, bool>{2, false});

  // Probes run once a period, not on every tick.
  const int probes = actions.probes;
  CHECK(liveness.tick(NodeLiveness::kProbePeriodMs).empty());
  CHECK(liveness.tick(NodeLiveness::kProbePeriodMs + 1).empty());
  CHECK(actions.probes == probes + 1);
  CHECK(liveness.state(2) == NodeState::Reclaiming);

  // Recycling asks now, without waiting for the period.
  actions.running.clear();
  liveness.probe_waiting();
  CHECK(liveness.state(2) == NodeState::Free);
  CHECK(table.word(2) == SlotState::Free);
  CHECK(actions.released_slots == std::vector<std::uint16_t>{1, 2});

  // Leaving twice, or a slot never joined, does nothing.
  liveness.left(2);
  liveness.left(9);
  CHECK(actions.reclaims.size() == 3);
}

TEST_CASE("adoption after a restart: orphans resume, go silent, or lose their lock") {
  Table table;
  // What the previous ferryd left: three live nodes, one stopped and
  // declared dead, one whose reclaim it did not finish, one free slot.
  table.set(1, SlotState::Alive, 101);
  table.set(2, SlotState::Alive, 102);
  table.set(3, SlotState::Alive, 103);
  table.set(4, SlotState::DeclaredDead, 104);
  table.set(5, SlotState::Reclaiming, 105);
  table.set(6, SlotState::Alive, 106);  // its process died while no ferryd ran
  std::uint64_t now = 50'000;
  for (std::uint16_t owner = 1; owner <= 6; ++owner) table.beat(owner, now);

  FakeActions actions;
  actions.running = {1, 2, 3, 4};
  NodeLiveness liveness(actions, kTimeoutMs);
  const auto orphans = liveness.adopt(table.beats);
  REQUIRE(orphans.size() == 3);
  for (std::uint16_t owner = 1; owner <= 3; ++owner) {
    CHECK(liveness.state(owner) == NodeState::Orphan);
    CHECK(table.word(owner) == SlotState::Alive);  // untouched: they still run
  }
  CHECK(liveness.state(4) == NodeState::Reclaiming);
  CHECK(liveness.state(5) == NodeState::Reclaiming);
  CHECK(liveness.state(6) == NodeState::Reclaiming);
  CHECK(actions.reclaims.empty());  // the pool is not adopted yet

  CHECK(liveness.finish_adoption() == 3);
  CHECK(liveness.state(4) == NodeState::Reclaiming);  // stopped: waits for its process
  CHECK(table.word(4) == SlotState::DeclaredDead);    // what it was told stays
  CHECK(liveness.state(5) == NodeState::Free);
  CHECK(liveness.state(6) == NodeState::Free);
  CHECK(table.word(6) == SlotState::Free);

  // Orphan 1 reconnects from its pid: alive again. From another pid it
  // would be a stranger.
  CHECK_FALSE(liveness.resumed(1, 999));
  CHECK(liveness.resumed(1, 101));
  CHECK(liveness.state(1) == NodeState::Alive);
  CHECK_FALSE(liveness.resumed(1, 101));
  liveness.joined(1, 101, now);
  CHECK_FALSE(liveness.resumed(5, 105));  // free: nothing to resume

  // Orphan 2's process goes: its lock is free at the next probe turn.
  actions.running.erase(2);
  now += NodeLiveness::kProbePeriodMs;
  for (std::uint16_t owner = 1; owner <= 3; ++owner) table.beat(owner, now);
  auto deaths = liveness.tick(now);
  REQUIRE(deaths.size() == 1);
  CHECK(deaths[0].owner == 2);
  CHECK(deaths[0].orphan);
  CHECK(deaths[0].silent_ms == 0);
  CHECK(liveness.state(2) == NodeState::Free);
  CHECK(table.word(2) == SlotState::Free);
  CHECK(actions.reclaims.back() == std::pair<std::uint16_t, bool>{2, true});

  // Orphan 3 freezes (its process lives, no beat): declared dead, reclaimed,
  // waits for its process.
  now += kTimeoutMs + 1;
  table.beat(1, now);
  deaths = liveness.tick(now);
  REQUIRE(deaths.size() == 1);
  CHECK(deaths[0].owner == 3);
  CHECK(deaths[0].orphan);
  CHECK(deaths[0].silent_ms == kTimeoutMs + 1);
  CHECK(liveness.state(3) == NodeState::Reclaiming);
  CHECK(table.word(3) == SlotState::DeclaredDead);
  CHECK(actions.reclaims.back() == std::pair<std::uint16_t, bool>{3, false});
  CHECK(liveness.state(1) == NodeState::Alive);

  // Both stopped processes end: freed at the next probe turn.
  actions.running = {1};
  now += NodeLiveness::kProbePeriodMs;
  table.beat(1, now);
  CHECK(liveness.tick(now).empty());
  CHECK(liveness.state(3) == NodeState::Free);
  CHECK(liveness.state(4) == NodeState::Free);
  CHECK(liveness.waiting() == 0);
  CHECK(liveness.state(1) == NodeState::Alive);
}

TEST_CASE_FIXTURE(Attached, "a beat from the future is fresh") {
  liveness.joined(4, 1, 1000);
  liveness.set_must_beat(4, true);
  table.beat(4, 5000);
  CHECK(liveness.silent_ms(4, 1000) == 0);
  CHECK(liveness.tick(1000).empty());
}
