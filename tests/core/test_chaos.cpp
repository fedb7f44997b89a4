// Chaos: three publishers and three subscribers on topics of all three
// policies (inline samples, loans, history) while 200 random kill -9 hit
// them, each victim started again at once. No subscriber may ever see a
// torn, repeated or reordered sample (per publisher incarnation), and once
// every node is gone the pool is whole again.
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "daemon_fixture.hpp"
#include "pool_probe.hpp"
#include "pubsub_util.hpp"
#include "shared_object.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

const std::string kConfig = seq_config(
    "  - { name: c_block, type: Seq, capacity: 16, policy: block, block_timeout_ms: 100 }\n"
    "  - { name: c_new, type: Seq, capacity: 16, policy: drop_new }\n"
    "  - { name: c_old, type: bytes, max_size: 8KiB, capacity: 8, policy: drop_oldest, "
    "history: 2, max_loans: 2 }\n",
    "liveness: { heartbeat_ms: 20, timeout_ms: 1000 }\n"
    "pool:\n"
    "  - { chunk_size: 8KiB, count: 1024 }\n");

using Served = ferry::test::ServedDomain<kConfig>;

// Shared by the test and every worker (an anonymous shared mapping made
// before the forks).
struct Board {
  std::atomic<std::uint64_t> next_id{1};  // publisher incarnations
  std::atomic<std::uint64_t> violations{0};
  std::atomic<std::uint64_t> taken{0};
  // Per flow: samples subscriber slot s took on topic t; and publish rounds
  // per publisher slot. A flow that stops growing is wedged.
  std::atomic<std::uint64_t> flow_taken[3][3]{};
  std::atomic<std::uint64_t> rounds[3]{};
  std::atomic<bool> stop{false};
};

// A pooled sample's header; the rest of the payload repeats `check`.
struct BlobHeader {
  std::uint64_t publisher;
  std::uint64_t seq;
  std::uint64_t check;
};

// Runs `make` until it does not throw (ferryd may be restarting: a port
// request then fails with a sentence), for at most 10 s.
template <class Make>
auto joined(Make&& make) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (true) {
    try {
      return make();
    } catch (const std::exception&) {
      if (std::chrono::steady_clock::now() > give_up) throw;
      std::this_thread::sleep_for(20ms);
    }
  }
}

struct PubPorts {
  ferry::Node node{"chaos-pub"};
  ferry::Publisher<Seq> block = node.publisher<Seq>("c_block");
  ferry::Publisher<Seq> fresh = node.publisher<Seq>("c_new");
  ferry::Publisher<ferry::Bytes> old = node.publisher<ferry::Bytes>("c_old");
};

struct SubPorts {
  ferry::Node node{"chaos-sub"};
  ferry::Subscriber<Seq> block = node.subscriber<Seq>("c_block");
  ferry::Subscriber<Seq> fresh = node.subscriber<Seq>("c_new");
  ferry::Subscriber<ferry::Bytes> old = node.subscriber<ferry::Bytes>("c_old");
};

int publisher(Board& board, int slot) {
  const std::uint64_t id = board.next_id.fetch_add(1);
  auto ports = joined([] { return std::make_unique<PubPorts>(); });
  auto& block = ports->block;
  auto& fresh = ports->fresh;
  auto& old = ports->old;
  std::mt19937 random(static_cast<std::uint32_t>(id));
  for (std::uint64_t seq = 0; !board.stop.load(); ++seq) {
    block.publish(make_seq(id, seq));
    fresh.publish(make_seq(id, seq));
    const std::size_t size = sizeof(BlobHeader) + 8 * (random() % 900);
    if (auto loan = old.loan(size)) {
      const Seq s = make_seq(id, seq);
      const BlobHeader h{id, seq, s.check};
      std::byte* p = (*loan)->data();
      std::memcpy(p, &h, sizeof h);
      for (std::size_t at = sizeof h; at + 8 <= size; at += 8) std::memcpy(p + at, &s.check, 8);
      old.publish(std::move(*loan));
    }
    board.rounds[slot].fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 300));
  }
  return 0;
}

int subscriber(Board& board, int slot) {
  auto ports = joined([] { return std::make_unique<SubPorts>(); });
  auto& block = ports->block;
  auto& fresh = ports->fresh;
  auto& old = ports->old;
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> next;  // (topic, publisher) -> next seq
  auto check = [&](int topic, std::uint64_t pub, std::uint64_t seq, bool intact_sample) {
    auto [it, first] = next.try_emplace({topic, pub}, 0);
    const bool backwards = !first && seq < it->second;
    if (!intact_sample || backwards) {
      board.violations.fetch_add(1);
      std::fprintf(stderr, "chaos: topic %d publisher %llu seq %llu after %llu%s\n", topic,
                   static_cast<unsigned long long>(pub), static_cast<unsigned long long>(seq),
                   static_cast<unsigned long long>(it->second), intact_sample ? "" : " (torn)");
    }
    it->second = seq + 1;
    board.taken.fetch_add(1, std::memory_order_relaxed);
    board.flow_taken[slot][topic].fetch_add(1, std::memory_order_relaxed);
  };
  while (!board.stop.load()) {
    if (auto s = block.take(1ms)) check(0, (*s)->publisher, (*s)->seq, intact(**s));
    if (auto s = fresh.take()) check(1, (*s)->publisher, (*s)->seq, intact(**s));
    if (auto s = old.take()) {
      const std::byte* p = (*s)->data();
      const std::size_t size = (*s)->size();
      BlobHeader h{};
      bool whole = size >= sizeof h;
      if (whole) {
        std::memcpy(&h, p, sizeof h);
        whole = h.check == make_seq(h.publisher, h.seq).check;
        for (std::size_t at = sizeof h; whole && at + 8 <= size; at += 8) {
          std::uint64_t word = 0;
          std::memcpy(&word, p + at, 8);
          whole = word == h.check;
        }
      }
      check(2, h.publisher, h.seq, whole);
    }
  }
  return 0;
}

// A chaos worker in a child process: slots 0..2 publish, 3..5 subscribe.
constexpr int kWorkers = 6;
std::unique_ptr<Child> start_worker(Board* board, int slot) {
  return std::make_unique<Child>([board, slot] {
    try {
      return slot < 3 ? publisher(*board, slot) : subscriber(*board, slot - 3);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chaos worker %d: %s\n", slot, e.what());
      return 98;
    }
  });
}

}  // namespace

TEST_CASE_FIXTURE(
    Served, "200 random kill -9 of publishers and subscribers: no bad sample, every chunk back") {
  SharedObject<Board> board;
  auto start = [&](int slot) { return start_worker(board.get(), slot); };
  std::vector<std::unique_ptr<Child>> workers;
  for (int slot = 0; slot < kWorkers; ++slot) workers.push_back(start(slot));
  std::this_thread::sleep_for(300ms);

  std::mt19937 random(20261130);
  const int kills = static_cast<int>(scaled(200, 10));
  for (int k = 0; k < kills; ++k) {
    const int slot = static_cast<int>(random() % kWorkers);
    workers[static_cast<std::size_t>(slot)]->kill(SIGKILL);
    CHECK(workers[static_cast<std::size_t>(slot)]->wait(5s) == 128 + SIGKILL);
    workers[static_cast<std::size_t>(slot)] = start(slot);
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 30));
  }
  std::this_thread::sleep_for(300ms);
  board->stop.store(true);
  for (auto& w : workers) CHECK(w->wait(20s) == 0);

  CHECK(board->violations.load() == 0);
  CHECK(board->taken.load() > 1000);
  MESSAGE(kills << " kills, " << board->taken.load() << " samples checked");
  // Every node is gone: ferryd has reclaimed all they held.
  CHECK(ferry::test::pool_all_free(domain.name(), [](auto f) { return eventually(f, 10s); }));
}

TEST_CASE(
    "ferryd killed at random points, publishers stopped while subscribers die: every chunk back") {
  ServedConfig served(kConfig);
  SharedObject<Board> board;
  auto start = [&](int slot) { return start_worker(board.get(), slot); };
  std::vector<std::unique_ptr<Child>> workers;
  for (int slot = 0; slot < kWorkers; ++slot) workers.push_back(start(slot));
  std::this_thread::sleep_for(300ms);

  auto restart = [&](int slot) {
    auto& w = workers[static_cast<std::size_t>(slot)];
    w->kill(SIGKILL);
    CHECK(w->wait(5s) == 128 + SIGKILL);
    w = start(slot);
  };
  std::mt19937 random(20261201);
  const int rounds = static_cast<int>(scaled(30, 10)) + 3;
  int daemon_kills = 0;
  int stalls = 0;
  for (int round = 0; round < rounds; ++round) {
    switch (random() % 3) {
      case 0: {  // ferryd dies at a random moment, maybe a node with it
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 20));
        served.daemon.kill9();
        ++daemon_kills;
        const int victim = random() % 2 == 0 ? static_cast<int>(random() % kWorkers) : -1;
        if (victim >= 0) workers[static_cast<std::size_t>(victim)]->kill(SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 50));
        served.daemon.start();
        if (victim >= 0) {
          CHECK(workers[static_cast<std::size_t>(victim)]->wait(5s) == 128 + SIGKILL);
          workers[static_cast<std::size_t>(victim)] = start(victim);
        }
        break;
      }
      case 1: {  // a publisher stalls (well inside timeout_ms) while a subscriber dies
        const int stalled = static_cast<int>(random() % 3);
        ::kill(workers[static_cast<std::size_t>(stalled)]->pid(), SIGSTOP);
        ++stalls;
        restart(3 + static_cast<int>(random() % 3));
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
        ::kill(workers[static_cast<std::size_t>(stalled)]->pid(), SIGCONT);
        break;
      }
      default:  // a plain kill -9 of anybody
        restart(static_cast<int>(random() % kWorkers));
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 40));
  }
  // The last ferryd runs: every publisher keeps publishing and every
  // subscriber takes again on every topic (restarted nodes rejoin within
  // joined()'s 10 s), bounded.
  const auto grows = [](const std::atomic<std::uint64_t>& counter) {
    const std::uint64_t before = counter.load();
    return eventually([&] { return counter.load() > before; }, 15s);
  };
  for (int p = 0; p < 3; ++p) {
    CAPTURE(p);
    CHECK(grows(board->rounds[p]));
  }
  for (int sub = 0; sub < 3; ++sub) {
    for (int topic = 0; topic < 3; ++topic) {
      CAPTURE(sub);
      CAPTURE(topic);
      CHECK(grows(board->flow_taken[sub][topic]));
    }
  }
  board->stop.store(true);
  for (auto& w : workers) CHECK(w->wait(20s) == 0);

  CHECK(board->violations.load() == 0);
  CHECK(board->taken.load() > 500);
  MESSAGE(rounds << " rounds: " << daemon_kills << " ferryd kills, " << stalls << " stalls, "
                 << board->taken.load() << " samples checked");
  CHECK(
      ferry::test::pool_all_free(served.domain.name(), [](auto f) { return eventually(f, 10s); }));
}
