// Recovery: dropping what dead owners had or gave (crash table, pool.hpp).
// Scans every chunk; never on the hot path.
#include <functional>

#include "ferry/transport/pool.hpp"
#include "pool_counters.hpp"
#include "pool_test_hooks.hpp"
#include "pool_walk.hpp"

namespace ferry::transport {

using namespace pool_layout;
using namespace detail;  // the pool's private helpers (pool_*.hpp beside this file)
namespace st = pool_layout::state;
namespace hw = pool_layout::holder;

template <class Receiver, class Stop>
std::uint64_t Pool::settle_impl(Receiver is_receiver, OwnerId from, OwnerId closer,
                                Stop stop) noexcept {
  if (from == kNoOwner || closer == kNoOwner) return 0;
  std::uint64_t dropped = 0;
  bool aborted = false;
  for_each_live_chunk([&](std::uint32_t c, std::uint32_t i, ChunkMeta& m, std::uint64_t s) {
    if (aborted) return;  // a simulated crash: nothing after it happens
    OpenHolders walk(m, s, Malformed::skip);
    for (HolderRead h; !aborted && walk.next(h);) {
      // This slot until it no longer has pending references from `from`.
      for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries && h.open_well_formed();
           ++attempt, h = read_holder(m, h.slot)) {
        hw::Fields f = h.fields;
        if (f.aux != from || f.pending == 0 || !is_receiver(f.owner)) break;
        const std::uint32_t n = f.pending;
        f.pending = 0;
        if (f.held > 0) {
          if (!write_holder(m, h, hw::encode(f))) continue;
          dropped += n;
          break;
        }
        // The closer is the caller: if it dies before vacating, its own
        // reclaim finishes the close (crash table, pool.hpp).
        const std::uint64_t closed = closed_word(f, closer);
        if (!write_holder(m, h, closed)) continue;
        dropped += n;
        auto freed = finish_close(classes_[c], i, h.slot, closed, closer, stop);
        aborted = !freed && freed.error() == PoolError::Aborted;
        break;
      }
    }
  });
  if (aborted) return dropped;
  bump(counters_->reclaimed_refs, dropped);
  return dropped;
}

std::uint64_t Pool::settle_pending(OwnerId to, OwnerId from) noexcept {
  if (to == kNoOwner) return 0;
  return settle_impl([to](OwnerId o) { return o == to; }, from, to, NeverStop{});
}

std::uint64_t Pool::revoke_given(OwnerId from, OwnerId to) noexcept {
  if (to == kNoOwner) return 0;
  return settle_impl([to](OwnerId o) { return o == to; }, from, from, NeverStop{});
}

ReclaimReport Pool::reclaim_owner(OwnerId dead, bool process_gone,
                                  const std::function<bool(OwnerId)>& dead_receiver) noexcept {
  ReclaimReport report;
  if (dead == kNoOwner) return report;
  if (dead_receiver) {
    // What `dead` gave to receivers that are dead too: nobody will ever
    // take it (each such receiver's own reclaim may have run before `dead`
    // gave). `dead` closes these slots: a crash here is finished below or
    // by the next reclaim of `dead`.
    report.given_dropped = settle_impl([&](OwnerId o) { return o != dead && dead_receiver(o); },
                                       dead, dead, NeverStop{});
  }
  NeverStop never;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      ChunkMeta& m = cv.meta[i];
      for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
        // SYNC: acquire, pairs with the release that made the slots Live
        // (and with the CAS that freed the chunk).
        std::uint64_t s = m.state.load(std::memory_order_acquire);
        if (!st::well_formed(s)) {
          bump(counters_->corrupt);
          break;
        }
        const std::uint64_t mode = st::mode(s);
        if (mode == st::kModeFree) {
          const std::uint64_t bit = std::uint64_t{1} << (i % 64);
          // SYNC: relaxed: a hint (see after_free).
          if ((cv.hints[i / 64].load(std::memory_order_relaxed) & bit) == 0) {
            // Unreachable after a crash between "freed" and "hinted", or
            // between a claimer's "unhinted" and its claim; or a live
            // claimer is between those two steps right now: then it is a
            // double candidate, and the claim CAS picks one.
            cv.hints[i / 64].fetch_or(bit, std::memory_order_relaxed);
            ++report.hints_repaired;
          }
          break;
        }
        if (mode == st::kModeClaimed) {
          if (st::claimer(s) != dead) break;
          if (!process_gone) {
            ++report.claims_left;  // it may wake up and finish the claim
            break;
          }
          // SYNC: acq_rel, as in vacate (a Free state is published by a release).
          if (m.state.compare_exchange_strong(
                  s, st::make_free(st::next_generation(st::generation(s))),
                  std::memory_order_acq_rel, std::memory_order_relaxed)) {
            // in_use was not counted yet (that happens once Live).
            cv.hints[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_relaxed);
            ++report.claims_undone;
            break;
          }
          continue;
        }
        // Live: each slot the dead owner had, or was closing (closed words
        // included, so not an OpenHolders walk).
        LiveSlots slots(s);
        for (unsigned j = 0; slots.next(j);) {
          for (std::uint32_t slot_attempt = 0; slot_attempt < kPoolMaxRetries; ++slot_attempt) {
            HolderRead h = read_holder(m, j);
            std::uint64_t closed = h.word;
            if (h.fields.closed) {
              if (h.fields.aux != dead) break;  // a live closer finishes it
              ++report.closes_finished;
            } else {
              if (!h.open_well_formed()) {
                bump(counters_->corrupt);
                break;
              }
              if (h.fields.owner != dead) break;
              closed = closed_word(h.fields, dead);
              if (!write_holder(m, h, closed)) continue;
              report.refs_dropped += h.fields.held + h.fields.pending;
            }
            auto freed = finish_close(cv, i, j, closed, dead, never);
            if (freed && *freed) ++report.chunks_freed;
            break;
          }
        }
        break;
      }
    }
  }
  bump(counters_->reclaims);
  bump(counters_->reclaimed_refs, report.refs_dropped);
  return report;
}

namespace detail {

std::uint64_t PoolTestHooks::settle_pending(Pool& pool, OwnerId to, OwnerId from,
                                            PoolCrashStep stop_after) noexcept {
  if (to == kNoOwner) return 0;
  return pool.settle_impl([to](OwnerId o) { return o == to; }, from, to, StopAt{stop_after});
}

}  // namespace detail

}  // namespace ferry::transport
