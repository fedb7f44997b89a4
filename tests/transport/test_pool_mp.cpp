// Multi-process pool tests: one pool in a Segment, opened by name in forked
// children that pass references through shared-memory rings (label "mp").
// Children report through exit codes and a shared block, never doctest.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ferry/transport/names.hpp"
#include "ferry/transport/pool.hpp"
#include "ferry/transport/ring.hpp"
#include "ferry/transport/segment.hpp"
#include "pool_test_hooks.hpp"  // transport/src: tests only
#include "pool_test_util.hpp"

using namespace ferry::transport;
using namespace ferry::test;
using namespace std::chrono_literals;

namespace {

constexpr int kOk = 0;
constexpr int kAttachFailed = 10;
constexpr int kErrors = 11;

const PoolGeometry kMixed{{{64, 256}, {1024, 128}, {16384, 32}, {65536, 8}}};

struct Shared {
  std::atomic<std::uint32_t> started{0};
  std::atomic<std::uint32_t> finished{0};
  std::atomic<std::uint32_t> stop{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> bad_payload{0};
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::uint64_t> exhausted{0};
  std::atomic<std::uint64_t> full{0};
};

Segment create_shared(const TestDomain& domain) { return create_shared_segment<Shared>(domain); }
Shared& shared_of(Segment& seg) { return shared_in<Shared>(seg); }
Segment open_shared(const std::string& domain) {
  return *Segment::open(shm_name(domain, "shared"), SegmentKind::Test, 1, 5s);
}

std::string ring_name(int from, int to) {
  return "ring." + std::to_string(from) + "." + std::to_string(to);
}

// A sample travels as {packed ref, stamp} in a ring slot: the stamp lets the
// taker check the payload.
struct Wire {
  std::uint64_t ref;
  std::uint64_t stamp;
};
const RingGeometry kWireRing{.capacity = 64, .slot_size = 48, .mode = RingMode::Spsc};

}  // namespace

TEST_CASE(
    "processes: several processes hammer one pool through rings, every checksum holds and every "
    "chunk comes back") {
  TestDomain domain;
  const std::string name = domain.name();
  constexpr int kProcs = 4;
  Segment pool_seg = create_pool_segment(domain, "pool", kMixed);
  std::vector<Segment> rings;
  for (int i = 0; i < kProcs; ++i) {
    for (int j = 0; j < kProcs; ++j) {
      if (i != j) rings.push_back(create_ring_segment(domain, ring_name(i, j), kWireRing));
    }
  }
  Segment shared_seg = create_shared(domain);
  Shared& shared = shared_of(shared_seg);
  const std::uint64_t iterations = scaled(200'000, 8);

  auto child = [&](int me) {
    Segment pseg = open_pool_segment(name, "pool");
    auto pool = Pool::attach(pseg.payload(), pseg.payload_size());
    Segment sseg = open_shared(name);
    Shared& sh = shared_of(sseg);
    if (!pool) return kAttachFailed;
    std::vector<Segment> segs;
    std::vector<std::optional<RingConsumer>> in(kProcs);
    std::vector<std::optional<RingProducer>> outs(kProcs);
    for (int j = 0; j < kProcs; ++j) {
      if (j == me) continue;
      segs.push_back(open_ring_segment(name, ring_name(me, j)));
      auto p = RingProducer::attach(segs.back().payload(), segs.back().payload_size());
      segs.push_back(open_ring_segment(name, ring_name(j, me)));
      auto c = RingConsumer::attach(segs.back().payload(), segs.back().payload_size());
      if (!p || !c) return kAttachFailed;
      outs[j].emplace(std::move(*p));
      in[j].emplace(std::move(*c));
    }
    const auto owner = static_cast<OwnerId>(me + 1);
    std::mt19937_64 rng(static_cast<std::uint64_t>(me) * 104729 + 3);
    std::vector<ChunkRef> held;
    std::uint64_t errors = 0;
    std::uint64_t seq = 0;
    auto take_all = [&] {
      bool any = false;
      for (int j = 0; j < kProcs; ++j) {
        if (j == me) continue;
        Wire w{};
        while (in[j]->try_pop(std::as_writable_bytes(std::span(&w, 1)))) {
          any = true;
          const ChunkRef ref = ChunkRef::unpack(w.ref);
          if (!pool->accept(ref, owner, static_cast<OwnerId>(j + 1))) {
            ++errors;
            continue;
          }
          auto p = pool->resolve(ref);
          if (!p || check_payload(*p) != w.stamp) sh.bad_payload.fetch_add(1);
          sh.taken.fetch_add(1, std::memory_order_relaxed);
          held.push_back(ref);
          if (held.size() > 4) {
            if (!pool->release(held.front(), owner)) ++errors;
            held.erase(held.begin());
          }
        }
      }
      return any;
    };
    sh.started.fetch_add(1);
    while (sh.started.load() < kProcs) std::this_thread::yield();  // all start together
    for (std::uint64_t i = 0; i < iterations; ++i) {
      auto ref = pool->allocate(random_size(rng), owner);
      if (!ref) {
        if (ref.error() != PoolError::Exhausted) ++errors;
        sh.exhausted.fetch_add(1, std::memory_order_relaxed);
        for (auto h : held) {
          if (!pool->release(h, owner)) ++errors;
        }
        held.clear();
        take_all();
        continue;
      }
      const std::uint64_t stamp = (static_cast<std::uint64_t>(me) << 48) | ++seq;
      fill_payload(*pool->resolve(*ref), stamp);
      const int j =
          static_cast<int>((static_cast<std::uint64_t>(me) + 1 + rng() % (kProcs - 1)) % kProcs);
      if (!pool->give(*ref, owner, static_cast<OwnerId>(j + 1))) ++errors;
      const Wire w{ref->pack(), stamp};
      bool pushed = false;
      for (int attempt = 0; attempt < 4 && !pushed; ++attempt) {
        pushed = outs[j]->try_push(std::as_bytes(std::span(&w, 1))).has_value();
        if (!pushed) {  // full: let the receiver run (2 cores, 4 processes)
          take_all();
          std::this_thread::yield();
        }
      }
      if (pushed) {
        sh.sent.fetch_add(1, std::memory_order_relaxed);
      } else {  // still full: the sample is dropped
        sh.full.fetch_add(1, std::memory_order_relaxed);
        if (!pool->revoke(*ref, owner, static_cast<OwnerId>(j + 1))) ++errors;
      }
      if (!pool->release(*ref, owner)) ++errors;
      take_all();
    }
    // SYNC: release, pairs with the acquire loads below in the other
    // children: our pushes are in the rings before they see us finished.
    sh.finished.fetch_add(1, std::memory_order_release);
    while (sh.finished.load(std::memory_order_acquire) < kProcs) {
      if (!take_all()) std::this_thread::yield();
    }
    take_all();
    for (auto h : held) {
      if (!pool->release(h, owner)) ++errors;
    }
    sh.errors.fetch_add(errors);
    return errors == 0 ? kOk : kErrors;
  };

  std::vector<Child> children;
  for (int i = 0; i < kProcs; ++i) children.emplace_back([&, i] { return child(i); });
  // Stats read from a read-only mapping while they run, never disturbing them.
  Segment ro = open_pool_segment(name, "pool", SegmentAccess::ReadOnly);
  std::uint64_t snapshots = 0;
  while (shared.finished.load() < kProcs) {
    const PoolStats s = read_pool_stats(ro.payload(), ro.payload_size());
    REQUIRE(s.valid);
    for (std::uint32_t c = 0; c < s.class_count; ++c) {
      CHECK(s.classes[c].free + s.classes[c].loaned + s.classes[c].in_flight +
                s.classes[c].claiming <=
            s.classes[c].total);
    }
    ++snapshots;
    std::this_thread::sleep_for(2ms);
  }
  for (auto& c : children) CHECK(c.wait(120s) == kOk);
  CHECK(shared.errors.load() == 0);
  CHECK(shared.bad_payload.load() == 0);
  CHECK(shared.taken.load() == shared.sent.load());
  MESSAGE(shared.sent.load() << " samples passed between " << kProcs << " processes ("
                             << shared.full.load() << " dropped on a full ring, "
                             << shared.exhausted.load()
                             << " allocations found the pool exhausted); " << snapshots
                             << " stats snapshots taken meanwhile");
  Pool pool = *Pool::attach(pool_seg.payload(), pool_seg.payload_size());
  check_all_free(pool);
  const PoolStats s = pool.stats();
  CHECK(s.invalid_refs == 0);
  CHECK(s.stale_refs == 0);
  CHECK(s.corrupt == 0);
  for (std::uint32_t c = 0; c < s.class_count; ++c)
    CHECK(s.classes[c].low_water < s.classes[c].total);
}

TEST_CASE(
    "processes: an owner SIGKILLed at random moments is reclaimed exactly, 200 times, while "
    "another process keeps using the pool") {
  TestDomain domain;
  const std::string name = domain.name();
  Segment pool_seg = create_pool_segment(domain, "pool", kMixed);
  Segment to_parent_seg = create_ring_segment(domain, "to_parent", kWireRing);
  Segment to_victim_seg = create_ring_segment(domain, "to_victim", kWireRing);
  Segment shared_seg = create_shared(domain);
  Shared& shared = shared_of(shared_seg);
  Pool pool = *Pool::attach(pool_seg.payload(), pool_seg.payload_size());
  constexpr OwnerId kParent = 1;
  constexpr OwnerId kBystander = 2;
  const int rounds = static_cast<int>(scaled(200, 4));

  // A bystander node using the pool the whole time (its own loans and
  // samples it sends itself), so that reclaim runs concurrently with traffic.
  Child bystander([&] {
    Segment pseg = open_pool_segment(name, "pool");
    auto p = Pool::attach(pseg.payload(), pseg.payload_size());
    Segment sseg = open_shared(name);
    Shared& sh = shared_of(sseg);
    if (!p) return kAttachFailed;
    std::mt19937_64 rng(11);
    std::uint64_t errors = 0;
    std::vector<std::pair<ChunkRef, std::uint64_t>> held;
    for (std::uint64_t seq = 1; sh.stop.load() == 0; ++seq) {
      auto ref = p->allocate(random_size(rng), kBystander);
      if (ref) {
        fill_payload(*p->resolve(*ref), seq);
        if (!p->give(*ref, kBystander, kBystander) || !p->release(*ref, kBystander) ||
            !p->accept(*ref, kBystander, kBystander)) {
          ++errors;
        }
        held.emplace_back(*ref, seq);
      }
      if (held.size() > 6 || (!ref && !held.empty())) {
        auto [r, s] = held.front();
        held.erase(held.begin());
        auto payload = p->resolve(r);
        if (!payload || check_payload(*payload) != s) sh.bad_payload.fetch_add(1);
        if (!p->release(r, kBystander)) ++errors;
      }
      sh.ops.fetch_add(1, std::memory_order_relaxed);
    }
    for (auto [r, s] : held) {
      if (!p->release(r, kBystander)) ++errors;
    }
    sh.errors.fetch_add(errors);
    return errors == 0 ? kOk : kErrors;
  });

  std::mt19937_64 rng(2718);
  std::vector<std::pair<ChunkRef, std::uint64_t>> held;  // samples the parent took from victims
  std::uint64_t parent_errors = 0;
  std::uint64_t bad_payload = 0;
  std::uint64_t taken = 0;
  std::uint64_t dropped_with_victim = 0;
  std::uint64_t settled = 0;
  ReclaimReport total;
  std::uint64_t seq = 0;
  const auto t0 = std::chrono::steady_clock::now();

  auto verify_held = [&] {
    for (auto [r, s] : held) {
      auto p = pool.resolve(r);
      if (!p || check_payload(*p) != s) ++bad_payload;  // freed under us: a double free somewhere
    }
  };

  for (int round = 0; round < rounds; ++round) {
    const auto victim = static_cast<OwnerId>(10 + round);
    REQUIRE(
        format_ring(to_parent_seg.payload(), to_parent_seg.payload_size(), kWireRing).has_value());
    REQUIRE(
        format_ring(to_victim_seg.payload(), to_victim_seg.payload_size(), kWireRing).has_value());
    auto from_victim = *RingConsumer::attach(to_parent_seg.payload(), to_parent_seg.payload_size());
    auto to_victim = *RingProducer::attach(to_victim_seg.payload(), to_victim_seg.payload_size());
    shared.started.store(0);

    Child v([&] {
      Segment pseg = open_pool_segment(name, "pool");
      auto p = Pool::attach(pseg.payload(), pseg.payload_size());
      Segment out_seg = open_ring_segment(name, "to_parent");
      Segment in_seg = open_ring_segment(name, "to_victim");
      auto out = RingProducer::attach(out_seg.payload(), out_seg.payload_size());
      auto in = RingConsumer::attach(in_seg.payload(), in_seg.payload_size());
      Segment sseg = open_shared(name);
      Shared& sh = shared_of(sseg);
      if (!p || !out || !in) return kAttachFailed;
      std::mt19937_64 vr(static_cast<std::uint64_t>(victim) * 31);
      std::vector<ChunkRef> mine;
      std::uint64_t vseq = 0;
      sh.started.store(1);
      while (true) {  // until killed
        Wire w{};
        while (in->try_pop(std::as_writable_bytes(std::span(&w, 1)))) {
          const ChunkRef ref = ChunkRef::unpack(w.ref);
          if (!p->accept(ref, victim, kParent)) continue;
          auto payload = p->resolve(ref);
          if (!payload || check_payload(*payload) != w.stamp) sh.bad_payload.fetch_add(1);
          mine.push_back(ref);
        }
        auto ref = p->allocate(random_size(vr), victim);
        if (ref) {
          fill_payload(*p->resolve(*ref), ++vseq);
          if (vr() % 4 == 0) (void)p->add_ref(*ref, victim, 2);
          if (p->give(*ref, victim, kParent)) {
            const Wire out_w{ref->pack(), vseq};
            if (!out->try_push(std::as_bytes(std::span(&out_w, 1))))
              (void)p->revoke(*ref, victim, kParent);
          }
          if (vr() % 3 == 0)
            mine.push_back(*ref);  // keeps the loan
          else
            (void)p->release(*ref, victim);
        }
        while (mine.size() > 5 || (!ref && !mine.empty())) {
          (void)p->release(mine.front(), victim);
          mine.erase(mine.begin());
        }
        sh.ops.fetch_add(1, std::memory_order_relaxed);
      }
    });
    while (shared.started.load() == 0) std::this_thread::yield();
    // Traffic both ways for a random while, then kill -9.
    const auto kill_at = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 3000);
    auto take_from_victim = [&] {
      Wire w{};
      while (from_victim.try_pop(std::as_writable_bytes(std::span(&w, 1)))) {
        const ChunkRef ref = ChunkRef::unpack(w.ref);
        if (!pool.accept(ref, kParent, victim)) {
          ++parent_errors;
          continue;
        }
        auto p = pool.resolve(ref);
        if (!p || check_payload(*p) != w.stamp) ++bad_payload;
        ++taken;
        held.emplace_back(ref, w.stamp);
      }
    };
    while (std::chrono::steady_clock::now() < kill_at) {
      take_from_victim();
      auto ref = pool.allocate(1 + rng() % 1000, kParent);
      if (ref) {
        fill_payload(*pool.resolve(*ref), ++seq);
        if (!pool.give(*ref, kParent, victim)) ++parent_errors;
        const Wire w{ref->pack(), seq};
        if (!to_victim.try_push(std::as_bytes(std::span(&w, 1))) &&
            !pool.revoke(*ref, kParent, victim)) {
          ++parent_errors;
        }
        if (!pool.release(*ref, kParent)) ++parent_errors;
      }
    }
    v.kill(SIGKILL);
    REQUIRE(v.wait(10s) == 128 + SIGKILL);

    // ferryd's part: reclaim the dead node (the bystander keeps going).
    const ReclaimReport r = pool.reclaim_owner(victim);
    total.refs_dropped += r.refs_dropped;
    total.closes_finished += r.closes_finished;
    total.claims_undone += r.claims_undone;
    total.chunks_freed += r.chunks_freed;
    total.hints_repaired += r.hints_repaired;
    // The parent's part: drain the dead publisher's queue, then settle.
    take_from_victim();
    settled += pool.settle_pending(kParent, victim);
    // What the parent queued to the victim died with it (reclaimed above).
    dropped_with_victim +=
        read_ring_stats(to_victim_seg.payload(), to_victim_seg.payload_size()).backlog;
    const OwnerHoldings h = pool.holdings(victim);
    CHECK(h.held == 0);
    CHECK(h.pending == 0);
    CHECK(h.given == 0);
    verify_held();
    while (held.size() > 16) {
      if (!pool.release(held.front().first, kParent)) ++parent_errors;
      held.erase(held.begin());
    }
  }
  verify_held();
  for (auto [r, s] : held) {
    if (!pool.release(r, kParent)) ++parent_errors;
  }
  shared.stop.store(1);
  CHECK(bystander.wait(60s) == kOk);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(parent_errors == 0);
  CHECK(bad_payload == 0);
  CHECK(shared.bad_payload.load() == 0);
  CHECK(shared.errors.load() == 0);
  CHECK(pool.holdings(kParent).held == 0);
  check_all_free(pool, false);
  const PoolStats s = pool.stats();
  CHECK(s.reclaims == static_cast<std::uint64_t>(rounds));
  CHECK(s.corrupt == 0);
  MESSAGE(rounds << " victims killed in " << seconds << " s; reclaim dropped " << total.refs_dropped
                 << " references, freed " << total.chunks_freed << " chunks, finished "
                 << total.closes_finished << " closes, undid " << total.claims_undone
                 << " claims, repaired " << total.hints_repaired << " hints; settle dropped "
                 << settled << "; parent took " << taken << " samples; " << dropped_with_victim
                 << " queued to victims died with them; pool ops meanwhile " << shared.ops.load());
}

namespace {

// A pool in an anonymous shared mapping that forked children inherit.
struct SharedPool {
  explicit SharedPool(const PoolGeometry& g) : bytes(pool_bytes(g)) {
    mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem != MAP_FAILED);
    REQUIRE(format_pool(mem, bytes, g).has_value());
    pool.emplace(*Pool::attach(mem, bytes));
  }
  ~SharedPool() { ::munmap(mem, bytes); }
  SharedPool(const SharedPool&) = delete;
  SharedPool& operator=(const SharedPool&) = delete;
  std::size_t bytes;
  void* mem = nullptr;
  std::optional<Pool> pool;
};

// One kill: `victim_ops` runs in a forked child on its own handle of the
// pool, which then SIGKILLs itself (shared memory stays exactly as the
// instruction before left it); the parent then does ferryd's part
// (reclaim_owner) and the survivors' (`after`).
struct KillCase {
  std::string name;
  std::function<void(Pool&, std::vector<ChunkRef>&)> before;  // the parent, first
  std::function<void(Pool&, std::vector<ChunkRef>&)> victim_ops;
  std::function<void(Pool&, std::vector<ChunkRef>&)> after;
};

constexpr OwnerId kVictim = 5;
constexpr OwnerId kPublisher = 1;
// Readers beside the victim: 100..111 fill a chunk's own holder slots (with
// its publisher), 113..125 an overflow node; 112 or the victim the next.
constexpr OwnerId kFirstReader = 100;
constexpr OwnerId kEndReaders = 126;

void give_all(Pool& p, ChunkRef ref, OwnerId from, OwnerId skip = 0) {
  for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
    if (o != 112 && o != skip) REQUIRE(p.give(ref, from, o).has_value());
  }
}

}  // namespace

TEST_CASE(
    "processes: a publisher or a reader of a chunk with 26 readers, SIGKILLed right after each "
    "step of an operation on the chunk's holder chain, is reclaimed exactly and the pool is "
    "whole") {
  using Hooks = detail::PoolTestHooks;
  using enum detail::PoolCrashStep;
  const PoolGeometry g{{{64, 4}, {4096, 2}}, 12};  // 2 overflow nodes per chunk
  std::vector<KillCase> cases;

  // The publisher dies giving to the reader that needs a second overflow node.
  for (auto step :
       {NodeHintCleared, NodeClaimed, SlotReserving, SlotHolderWritten, NodeLinked, None}) {
    cases.push_back({"publisher killed in the give that links a node, step " +
                         std::to_string(static_cast<int>(step)),
                     [](Pool&, std::vector<ChunkRef>&) {},
                     [step](Pool& p, std::vector<ChunkRef>&) {
                       const ChunkRef ref = *p.allocate(64, kVictim);
                       fill_payload(*p.resolve(ref), 1);
                       give_all(p, ref, kVictim);
                       (void)Hooks::give(p, ref, kVictim, 112, 1, step);
                     },
                     [step](Pool& p, std::vector<ChunkRef>&) {
                       // Every reader drains the dead publisher's queue (nothing was
                       // pushed: phantoms) and settles.
                       for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
                         const bool given = o != 112 || step == None || step == NodeLinked;
                         CHECK(p.settle_pending(o, kVictim) == (given ? 1U : 0U));
                       }
                     }});
  }
  // The publisher dies revoking the last reader of the chain: two nodes and
  // the chunk freed in a cascade.
  const std::vector<std::pair<detail::PoolCrashStep, unsigned>> cascade = {
      {HolderClosed, 0}, {NodeFreed, 0},  {LinkClosed, 0}, {NodeFreed, 1},
      {LinkClosed, 1},   {ChunkFreed, 0}, {None, 0}};
  for (auto [step, occurrence] : cascade) {
    cases.push_back(
        {"publisher killed revoking the chain's last reader, step " +
             std::to_string(static_cast<int>(step)) + "#" + std::to_string(occurrence),
         [](Pool&, std::vector<ChunkRef>&) {},
         [step, occurrence](Pool& p, std::vector<ChunkRef>&) {
           const ChunkRef ref = *p.allocate(64, kVictim);
           give_all(p, ref, kVictim);
           REQUIRE(p.give(ref, kVictim, 112).has_value());  // a second node
           for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
             if (o != 112) REQUIRE(p.revoke(ref, kVictim, o).has_value());
           }
           REQUIRE(p.release(ref, kVictim).has_value());  // only links and 112 left
           (void)Hooks::revoke(p, ref, kVictim, 112, step, occurrence);
         },
         [](Pool& p, std::vector<ChunkRef>&) { CHECK(p.settle_pending(112, kVictim) == 0); }});
  }
  // A reader dies releasing the one holder of the chain's second node.
  for (auto step : {HolderClosed, NodeFreed, LinkClosed, None}) {
    cases.push_back({"reader killed releasing in the chain's last node, step " +
                         std::to_string(static_cast<int>(step)),
                     [](Pool& p, std::vector<ChunkRef>& refs) {
                       refs.push_back(*p.allocate(64, kPublisher));
                       fill_payload(*p.resolve(refs[0]), 3);
                       give_all(p, refs[0], kPublisher);
                       REQUIRE(p.give(refs[0], kPublisher, kVictim).has_value());
                     },
                     [step](Pool& p, std::vector<ChunkRef>& refs) {
                       REQUIRE(p.accept(refs[0], kVictim, kPublisher).has_value());
                       (void)Hooks::release(p, refs[0], kVictim, step);
                     },
                     [](Pool& p, std::vector<ChunkRef>& refs) {
                       for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
                         if (o == 112) continue;
                         REQUIRE(p.accept(refs[0], o, kPublisher).has_value());
                         CHECK(check_payload(*p.resolve(refs[0])) == 3);
                         REQUIRE(p.release(refs[0], o).has_value());
                       }
                       REQUIRE(p.release(refs[0], kPublisher).has_value());
                     }});
  }
  // A reader dies settling what its dead publisher gave it (its queue drained).
  for (auto step : {HolderClosed, NodeFreed, LinkClosed, None}) {
    cases.push_back({"reader killed settling in the chain's last node, step " +
                         std::to_string(static_cast<int>(step)),
                     [](Pool& p, std::vector<ChunkRef>& refs) {
                       refs.push_back(*p.allocate(64, kPublisher));
                       give_all(p, refs[0], kPublisher);
                       REQUIRE(p.give(refs[0], kPublisher, kVictim).has_value());
                       REQUIRE(p.release(refs[0], kPublisher).has_value());  // then it "died"
                     },
                     [step](Pool& p, std::vector<ChunkRef>&) {
                       (void)Hooks::settle_pending(p, kVictim, kPublisher, step);
                     },
                     [](Pool& p, std::vector<ChunkRef>&) {
                       for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
                         if (o != 112) CHECK(p.settle_pending(o, kPublisher) == 1);
                       }
                     }});
  }
  // A reader killed holding a taken sample and a queued one, in overflow nodes.
  cases.push_back({"reader killed holding samples in overflow nodes",
                   [](Pool& p, std::vector<ChunkRef>& refs) {
                     for (int k = 0; k < 2; ++k) {
                       refs.push_back(*p.allocate(64, kPublisher));
                       give_all(p, refs.back(), kPublisher);
                       REQUIRE(p.give(refs.back(), kPublisher, kVictim).has_value());
                     }
                   },
                   [](Pool& p, std::vector<ChunkRef>& refs) {
                     REQUIRE(p.accept(refs[0], kVictim, kPublisher).has_value());
                   },
                   [](Pool& p, std::vector<ChunkRef>& refs) {
                     for (ChunkRef ref : refs) {
                       for (OwnerId o = kFirstReader; o < kEndReaders; ++o) {
                         if (o == 112) continue;
                         REQUIRE(p.accept(ref, o, kPublisher).has_value());
                         REQUIRE(p.release(ref, o).has_value());
                       }
                       // The dead reader's queue, discarded by the publisher (drop_oldest):
                       // reclaim dropped it already, nothing is freed twice.
                       CHECK_FALSE(p.revoke(ref, kPublisher, kVictim).has_value());
                       REQUIRE(p.release(ref, kPublisher).has_value());
                     }
                   }});

  for (const KillCase& kc : cases) {
    CAPTURE(kc.name);
    SharedPool sp(g);
    Pool& pool = *sp.pool;
    std::vector<ChunkRef> refs;
    kc.before(pool, refs);
    Child victim([&] {
      auto p = Pool::attach(sp.mem, sp.bytes);  // this process's own handle
      if (!p) return kAttachFailed;
      kc.victim_ops(*p, refs);
      ::raise(SIGKILL);
      return kOk;
    });
    REQUIRE(victim.wait(10s) == 128 + SIGKILL);
    const ReclaimReport r = pool.reclaim_owner(kVictim);
    (void)r;
    kc.after(pool, refs);
    const OwnerHoldings h = pool.holdings(kVictim);
    CHECK(h.held == 0);
    CHECK(h.pending == 0);
    CHECK(h.given == 0);
    check_all_free(pool, false);
    const AccountingReport acc = pool.check_accounting();
    CHECK(acc.nodes_free == acc.nodes_total);
    // Whole: every chunk can be allocated again, and given to 26 readers.
    std::vector<ChunkRef> all;
    for (auto a = pool.allocate(1, kPublisher); a; a = pool.allocate(1, kPublisher)) {
      all.push_back(*a);
    }
    CHECK(all.size() == 6);
    for (ChunkRef a : all) {
      for (OwnerId o = kFirstReader; o < kEndReaders; ++o) CHECK(pool.give(a, kPublisher, o));
    }
    for (ChunkRef a : all) {
      for (OwnerId o = kFirstReader; o < kEndReaders; ++o) CHECK(pool.revoke(a, kPublisher, o));
      CHECK(pool.release(a, kPublisher).has_value());
    }
    check_all_free(pool, false);
  }
}
