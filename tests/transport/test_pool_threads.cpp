// Threaded pool tests on a heap buffer, so that TSan sees every access
// (label "tsan"): many threads allocating, giving, accepting, forwarding and
// releasing with checksums; drop_oldest through a real overwrite ring; and
// owners that "die" mid-operation while the others keep going and the
// supervisor reclaims them concurrently.

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/ring.hpp"
#include "pool_test_hooks.hpp"  // transport/src: tests only
#include "pool_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;
using namespace std::chrono_literals;

namespace {

const PoolGeometry kMixed{{{64, 256}, {1024, 128}, {16384, 32}, {65536, 8}}};

struct Message {
  std::uint64_t ref = 0;  // packed ChunkRef
  OwnerId from = 0;
  std::uint64_t stamp = 0;
};

// A subscriber queue: the test stands in for the ring here (the ring has its
// own tests); what matters is that references cross threads.
class Queue {
 public:
  void push(const Message& m) {
    std::lock_guard lock(mutex_);
    items_.push_back(m);
  }
  bool pop(Message& m) {
    std::lock_guard lock(mutex_);
    if (items_.empty()) return false;
    m = items_.front();
    items_.pop_front();
    return true;
  }

 private:
  std::mutex mutex_;
  std::deque<Message> items_;
};

struct Totals {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<std::uint64_t> bad_payload{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> exhausted{0};
};

}  // namespace

TEST_CASE(
    "threads: owners allocating random sizes and passing references through queues keep every "
    "checksum, and every chunk comes back") {
  HeapPool hp(kMixed);
  Pool& pool = hp.pool;
  constexpr int kThreads = 6;
  // Threads t and t + 4 share an owner: a node with two threads.
  auto owner_of = [](int t) { return static_cast<OwnerId>(t % 4 + 1); };
  std::vector<Queue> queues(kThreads);
  Totals totals;
  std::atomic<int> running{kThreads};
  const std::uint64_t iterations = scaled(40'000, 3);

  auto body = [&](int t) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(t) * 7919 + 1);
    const OwnerId me = owner_of(t);
    std::vector<ChunkRef> held;
    std::uint64_t seq = 0;
    auto fail = [&] { totals.errors.fetch_add(1); };
    auto take_one = [&](bool may_forward) {
      Message m;
      if (!queues[t].pop(m)) return false;
      const ChunkRef ref = ChunkRef::unpack(m.ref);
      if (!pool.accept(ref, me, m.from)) return fail(), true;
      auto p = pool.resolve(ref);
      if (!p) return fail(), true;
      if (check_payload(*p) != m.stamp) totals.bad_payload.fetch_add(1);
      totals.taken.fetch_add(1);
      if (may_forward && rng() % 4 == 0) {  // pass it on, as a subscriber republishing
        const int u = static_cast<int>(
            (static_cast<std::uint64_t>(t) + 1 + rng() % (kThreads - 1)) % kThreads);
        if (pool.give(ref, me, owner_of(u))) {
          queues[u].push({m.ref, me, m.stamp});
          totals.sent.fetch_add(1);
        }
        if (!pool.release(ref, me)) fail();
        return true;
      }
      held.push_back(ref);
      if (held.size() > 6) {
        if (!pool.release(held.front(), me)) fail();
        held.erase(held.begin());
      }
      return true;
    };
    for (std::uint64_t i = 0; i < iterations; ++i) {
      auto ref = pool.allocate(random_size(rng), me);
      if (!ref) {
        if (ref.error() != PoolError::Exhausted) fail();
        totals.exhausted.fetch_add(1);
        while (take_one(false)) {
        }
        for (auto h : held) {
          if (!pool.release(h, me)) fail();
        }
        held.clear();
        std::this_thread::yield();
        continue;
      }
      auto p = pool.resolve(*ref);
      if (!p) {
        fail();
        continue;
      }
      const std::uint64_t stamp = (static_cast<std::uint64_t>(t) << 48) | ++seq;
      fill_payload(*p, stamp);
      if (rng() % 8 == 0) {  // an extra reference, dropped at once
        if (!pool.add_ref(*ref, me) || !pool.release(*ref, me)) fail();
      }
      const int fanout = 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < fanout; ++k) {
        const int u = static_cast<int>(
            (static_cast<std::uint64_t>(t) + 1 + rng() % (kThreads - 1)) % kThreads);
        if (!pool.give(*ref, me, owner_of(u))) {
          fail();
          continue;
        }
        queues[u].push({ref->pack(), me, stamp});
        totals.sent.fetch_add(1);
      }
      if (!pool.release(*ref, me)) fail();
      take_one(true);
      take_one(true);
    }
    running.fetch_sub(1);
    while (running.load() > 0) {
      if (!take_one(false)) std::this_thread::yield();
    }
    while (take_one(false)) {
    }
    for (auto h : held) {
      if (!pool.release(h, me)) fail();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();
  CHECK(totals.errors.load() == 0);
  CHECK(totals.bad_payload.load() == 0);
  CHECK(totals.taken.load() == totals.sent.load());
  CHECK(totals.sent.load() > iterations);
  MESSAGE(totals.sent.load() << " references passed, " << totals.exhausted.load()
                             << " allocations found the pool exhausted");
  check_all_free(pool);
  const PoolStats s = pool.stats();
  CHECK(s.invalid_refs == 0);
  CHECK(s.stale_refs == 0);
  CHECK(s.corrupt == 0);
}

TEST_CASE(
    "threads: drop_oldest through an overwrite ring revokes every discarded sample and delivers "
    "the rest in order, intact") {
  HeapPool hp(PoolGeometry{{{64, 24}}});
  Pool& pool = hp.pool;
  HeapRing ring({.capacity = 8, .slot_size = 40, .mode = RingMode::Overwrite});
  auto producer = *RingProducer::attach(ring.mem(), ring.bytes());
  auto consumer = *RingConsumer::attach(ring.mem(), ring.bytes());
  constexpr OwnerId kP = 1;
  constexpr OwnerId kS = 2;
  const std::uint64_t n = scaled(200'000, 3);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> errors{0};
  std::uint64_t discarded = 0;

  std::thread pub([&] {
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      std::expected<ChunkRef, PoolError> ref;
      while (!(ref = pool.allocate(64, kP))) {
        if (ref.error() != PoolError::Exhausted) errors.fetch_add(1);
        std::this_thread::yield();
      }
      fill_payload(*pool.resolve(*ref), seq);
      if (!pool.give(*ref, kP, kS)) errors.fetch_add(1);
      const std::uint64_t packed = ref->pack();
      auto pushed = producer.try_push_overwrite(std::as_bytes(std::span(&packed, 1)), 0,
                                                [&](std::span<const std::byte> old, std::uint32_t) {
                                                  std::uint64_t w = 0;
                                                  if (old.size() != 8)
                                                    return errors.fetch_add(1), void();
                                                  std::memcpy(&w, old.data(), 8);
                                                  ++discarded;
                                                  if (!pool.revoke(ChunkRef::unpack(w), kP, kS))
                                                    errors.fetch_add(1);
                                                });
      if (!pushed) {
        errors.fetch_add(1);
        if (!pool.revoke(*ref, kP, kS)) errors.fetch_add(1);
      }
      if (!pool.release(*ref, kP)) errors.fetch_add(1);
      if (seq % 4 == 0) std::this_thread::yield();  // let the consumer win some races
    }
    done.store(true);
  });

  std::uint64_t taken = 0;
  std::uint64_t last = 0;
  std::uint64_t out_of_order = 0;
  std::array<std::byte, 8> buf{};
  auto take = [&] {
    auto r = consumer.try_pop(buf);
    if (!r) return false;
    std::uint64_t w = 0;
    std::memcpy(&w, buf.data(), 8);
    const ChunkRef ref = ChunkRef::unpack(w);
    if (!pool.accept(ref, kS, kP)) {
      errors.fetch_add(1);
      return true;
    }
    const std::uint64_t seq = check_payload(*pool.resolve(ref));
    if (seq <= last || seq == UINT64_MAX) ++out_of_order;
    last = seq;
    ++taken;
    if (!pool.release(ref, kS)) errors.fetch_add(1);
    if (taken % 64 == 0) std::this_thread::sleep_for(20us);  // fall behind now and then
    return true;
  };
  while (!done.load()) {
    if (!take()) std::this_thread::yield();
  }
  while (take()) {
  }
  pub.join();
  CHECK(errors.load() == 0);
  CHECK(out_of_order == 0);
  CHECK(taken + discarded == n);
  CHECK(last == n);  // the newest always arrives
  MESSAGE(taken << " taken, " << discarded << " discarded by drop_oldest");
  check_all_free(pool);
}

TEST_CASE(
    "threads: owners dying mid-operation are reclaimed while the others keep working, and every "
    "chunk comes back") {
  using Hooks = detail::PoolTestHooks;
  HeapPool hp(kMixed);
  Pool& pool = hp.pool;
  constexpr OwnerId kA = 1;  // a long-lived node: receives from the victims, sends to them
  const int rounds = static_cast<int>(scaled(40, 2));
  Queue to_a;
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> bad_payload{0};
  std::atomic<bool> stop_a{false};
  std::atomic<OwnerId> dead_victim{0};  // set by the supervisor: A drains, settles, acks
  std::atomic<OwnerId> settled_victim{0};
  std::atomic<OwnerId> current_victim{0};
  std::atomic<std::uint64_t> a_loops{0};  // A's progress, so the supervisor knows it saw a change
  Queue to_victim;

  // A: takes what victims send it; sends samples to the current victim.
  std::thread a([&] {
    std::mt19937_64 rng(99);
    std::vector<ChunkRef> held;
    auto drain = [&] {
      Message m;
      while (to_a.pop(m)) {
        const ChunkRef ref = ChunkRef::unpack(m.ref);
        if (!pool.accept(ref, kA, m.from)) {
          errors.fetch_add(1);
          continue;
        }
        if (check_payload(*pool.resolve(ref)) != m.stamp) bad_payload.fetch_add(1);
        held.push_back(ref);
        if (held.size() > 4) {
          if (!pool.release(held.front(), kA)) errors.fetch_add(1);
          held.erase(held.begin());
        }
      }
    };
    std::uint64_t seq = 0;
    while (!stop_a.load()) {
      drain();
      const OwnerId dead = dead_victim.load();
      if (dead != 0 && settled_victim.load() != dead) {
        drain();  // everything the dead victim pushed is in our queue by now
        pool.settle_pending(kA, dead);
        settled_victim.store(dead);
      }
      const OwnerId v = current_victim.load();
      if (v != 0 && rng() % 2 == 0) {
        auto ref = pool.allocate(1 + rng() % 2000, kA);
        if (ref) {
          fill_payload(*pool.resolve(*ref), ++seq);
          if (pool.give(*ref, kA, v))
            to_victim.push({ref->pack(), kA, seq});
          else
            errors.fetch_add(1);
          if (!pool.release(*ref, kA)) errors.fetch_add(1);
        }
      }
      a_loops.fetch_add(1);
      std::this_thread::yield();
    }
    drain();
    for (auto h : held) {
      if (!pool.release(h, kA)) errors.fetch_add(1);
    }
  });
  auto wait_for_a = [&] {
    const std::uint64_t seen = a_loops.load();
    while (a_loops.load() < seen + 2) std::this_thread::sleep_for(50us);
  };

  std::mt19937_64 rng(5);
  std::uint64_t stopped_mid_op = 0;
  for (int round = 0; round < rounds; ++round) {
    const auto victim = static_cast<OwnerId>(100 + round);
    current_victim.store(victim);
    const std::uint64_t die_after = rng() % 3000;
    const int how = static_cast<int>(rng() % 6);
    using enum detail::PoolCrashStep;
    constexpr std::array kAllocateSteps{AllocateHintCleared, AllocateClaimed, AllocateHolderWritten,
                                        AllocateLive};
    constexpr std::array kSlotSteps{SlotReserving, SlotHolderWritten};
    constexpr std::array kCloseSteps{HolderClosed, ChunkFreed};
    const auto step = static_cast<std::size_t>(rng() % 4);
    std::thread v([&] {
      std::mt19937_64 vr(static_cast<std::uint64_t>(victim));
      std::vector<ChunkRef> held;
      std::uint64_t seq = 0;
      for (std::uint64_t i = 0;; ++i) {
        if (i == die_after) {  // die in the middle of an operation
          auto ref = pool.allocate(64, victim);
          switch (how) {
            case 0:
              (void)Hooks::allocate(pool, 64, victim, kAllocateSteps[step]);
              break;
            case 1:
              if (ref) (void)Hooks::give(pool, *ref, victim, kA, 1, kSlotSteps[step % 2]);
              break;
            case 2:
              if (ref) (void)Hooks::release(pool, *ref, victim, kCloseSteps[step % 2]);
              break;
            case 3:
              if (ref && pool.give(*ref, victim, kA))
                (void)Hooks::revoke(pool, *ref, victim, kA, kCloseSteps[step % 2]);
              break;
            case 4:
              if (ref)
                (void)Hooks::add_ref(pool, *ref, victim, kMaxRefsPerHolder, kSlotSteps[step % 2]);
              break;
            default:
              break;  // between operations
          }
          ++stopped_mid_op;
          return;  // "killed": everything it held stays as it is
        }
        Message m;
        while (to_victim.pop(m)) {
          const ChunkRef ref = ChunkRef::unpack(m.ref);
          if (!pool.accept(ref, victim, m.from)) {
            errors.fetch_add(1);
            continue;
          }
          if (check_payload(*pool.resolve(ref)) != m.stamp) bad_payload.fetch_add(1);
          held.push_back(ref);
        }
        auto ref = pool.allocate(1 + vr() % 20000, victim);
        if (!ref) continue;
        fill_payload(*pool.resolve(*ref), ++seq);
        if (vr() % 2 == 0) {
          if (pool.give(*ref, victim, kA))
            to_a.push({ref->pack(), victim, seq});
          else
            errors.fetch_add(1);
          if (!pool.release(*ref, victim)) errors.fetch_add(1);
        } else {
          held.push_back(*ref);  // a loan it keeps
        }
        if (held.size() > 5) {
          if (!pool.release(held.front(), victim)) errors.fetch_add(1);
          held.erase(held.begin());
        }
      }
    });
    v.join();
    // The supervisor: no more sends to the victim, then reclaim it (A keeps
    // working meanwhile), then A drains and settles what the victim gave it.
    current_victim.store(0);
    pool.reclaim_owner(victim);  // while A may still be giving to it
    wait_for_a();                // now A has stopped giving to it
    // Samples A sent to the dead victim and that sit in its queue are gone with it.
    Message m;
    while (to_victim.pop(m)) {
    }
    pool.reclaim_owner(victim);  // again, now that A can no longer give to it
    dead_victim.store(victim);
    while (settled_victim.load() != victim) std::this_thread::sleep_for(100us);
    const OwnerHoldings h = pool.holdings(victim);
    CHECK(h.held == 0);
    CHECK(h.pending == 0);
    CHECK(h.given == 0);
  }
  stop_a.store(true);
  a.join();
  CHECK(errors.load() == 0);
  CHECK(bad_payload.load() == 0);
  CHECK(stopped_mid_op == static_cast<std::uint64_t>(rounds));
  check_all_free(pool, false);
  CHECK(pool.stats().corrupt == 0);
}

TEST_CASE(
    "threads: a publisher fans every chunk out to 30 reader owners (chains of overflow nodes "
    "growing and shrinking under them), every reader gets every sample intact and every chunk "
    "and node comes back") {
  // Few chunks, so that chains are built, emptied, unlinked and their nodes
  // reused by other chunks all the time, while readers release out of order.
  HeapPool hp(PoolGeometry{{{64, 24}, {4096, 8}}, 64});  // 2 nodes for each chunk's 30
  Pool& pool = hp.pool;
  constexpr OwnerId kP = 1;
  constexpr int kReaders = 30;
  constexpr int kReaderThreads = 3;
  const std::uint64_t n = scaled(6'000, 3);
  std::vector<Queue> queues(kReaders);
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> bad_payload{0};
  std::atomic<std::uint64_t> out_of_order{0};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<bool> done{false};
  auto owner_of = [](int r) { return static_cast<OwnerId>(10 + r); };

  std::thread pub([&] {
    std::mt19937_64 rng(17);
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      std::expected<ChunkRef, PoolError> ref;
      while (!(ref = pool.allocate(rng() % 4 == 0 ? 4000 : 64, kP))) {
        if (ref.error() != PoolError::Exhausted) errors.fetch_add(1);
        std::this_thread::yield();
      }
      fill_payload(*pool.resolve(*ref), seq);
      // One give and one push per reader, as core delivers: early readers
      // take and release while the chain still grows for later ones.
      for (int r = 0; r < kReaders; ++r) {
        if (!pool.give(*ref, kP, owner_of(r))) {
          errors.fetch_add(1);
          continue;
        }
        queues[static_cast<std::size_t>(r)].push({ref->pack(), kP, seq});
      }
      if (!pool.release(*ref, kP)) errors.fetch_add(1);
    }
    done.store(true);
  });

  std::vector<std::thread> readers;
  for (int t = 0; t < kReaderThreads; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 100);
      std::vector<std::uint64_t> last(kReaders, 0);
      std::vector<std::vector<ChunkRef>> held(kReaders);
      auto drain = [&] {
        bool any = false;
        for (int r = t; r < kReaders; r += kReaderThreads) {
          Message m;
          auto& mine = held[static_cast<std::size_t>(r)];
          while (queues[static_cast<std::size_t>(r)].pop(m)) {
            any = true;
            const ChunkRef ref = ChunkRef::unpack(m.ref);
            if (!pool.accept(ref, owner_of(r), m.from)) {
              errors.fetch_add(1);
              continue;
            }
            if (check_payload(*pool.resolve(ref)) != m.stamp) bad_payload.fetch_add(1);
            if (m.stamp <= last[static_cast<std::size_t>(r)]) out_of_order.fetch_add(1);
            last[static_cast<std::size_t>(r)] = m.stamp;
            taken.fetch_add(1, std::memory_order_relaxed);
            mine.push_back(ref);
            // Keep up to 3, release a random one of them.
            while (mine.size() > rng() % 4) {
              const std::size_t k = rng() % mine.size();
              if (!pool.release(mine[k], owner_of(r))) errors.fetch_add(1);
              mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(k));
            }
          }
        }
        return any;
      };
      while (!done.load()) {
        if (!drain()) std::this_thread::yield();
      }
      drain();
      for (int r = t; r < kReaders; r += kReaderThreads) {
        for (ChunkRef ref : held[static_cast<std::size_t>(r)]) {
          if (!pool.release(ref, owner_of(r))) errors.fetch_add(1);
        }
      }
    });
  }
  pub.join();
  for (auto& r : readers) r.join();
  CHECK(errors.load() == 0);
  CHECK(bad_payload.load() == 0);
  CHECK(out_of_order.load() == 0);
  CHECK(taken.load() == n * kReaders);
  const PoolStats s = pool.stats();
  CHECK(s.holder_overflow == 0);
  CHECK(s.holder_nodes_linked > 0);
  MESSAGE(n << " samples to " << kReaders << " readers; " << s.holder_nodes_linked
            << " overflow nodes linked");
  check_all_free(pool);
  const AccountingReport r = pool.check_accounting();
  CHECK(r.nodes_free == r.nodes_total);
}
