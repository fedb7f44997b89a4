// Recovery: dropping what dead owners had or gave (docs/design/pool.md, "The
// crash table").
// Scans every chunk; never on the hot path.
#include <functional>

#include "ferry/transport/pool.hpp"
#include "pool_counters.hpp"
#include "pool_hints.hpp"
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
    const ChunkRef ref = ChunkRef::of(c, i, st::generation(s));
    // Walks the chunk's chain until a walk changes nothing: after a change
    // (or a lost race) it starts again from the chunk, so that it never goes
    // on in a node that the change freed.
    for (std::uint32_t pass = 0; pass < kPoolMaxRetries && !aborted; ++pass) {
      bool again = false;
      OpenHolders walk(nodes_, m, s, ref.pack(), Malformed::Skip);
      for (HolderRead h; !again && walk.next(h);) {
        hw::Fields f = h.fields;
        if (f.aux != from || f.pending == 0 || !is_receiver(f.owner)) continue;
        again = true;
        const std::uint32_t n = f.pending;
        f.pending = 0;
        if (f.held > 0) {
          if (write_holder(h, hw::encode(f))) dropped += n;
          continue;
        }
        // The closer is the caller: if it dies before vacating, its own
        // reclaim finishes the close (crash table, docs/design/pool.md).
        const std::uint64_t closed = closed_word(f, closer);
        if (!write_holder(h, closed)) continue;
        dropped += n;
        auto freed = finish_close(classes_[c], i, walk.node(), h.slot, closed, closer, stop);
        aborted = !freed && freed.error() == PoolError::Aborted;
      }
      if (!again || aborted) break;
      // SYNC: acquire, as in for_each_live_chunk.
      s = m.state.load(std::memory_order_acquire);
      if (!st::well_formed(s) || st::mode(s) != st::kModeLive ||
          st::generation(s) != ref.generation) {
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

namespace {

// How far a dead claimer got linking an overflow node into its chunk's
// chain: not at all, the link slot Reserving with the link word written, or
// the link slot Live.
enum class Linked : std::uint8_t { No, Reserving, Live };

}  // namespace

void Pool::reclaim_nodes(OwnerId dead, bool process_gone, ReclaimReport& report) noexcept {
  for (std::uint32_t e = 0; e < nodes_.count; ++e) {
    ChunkMeta& node = nodes_.meta[e];
    for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
      // SYNC: acquire, pairs with the release that made the node Live or
      // Claimed (and with the CAS that freed it).
      std::uint64_t s = node.state.load(std::memory_order_acquire);
      if (!st::well_formed(s)) {
        bump(counters_->corrupt);
        break;
      }
      const std::uint64_t mode = st::mode(s);
      if (mode == st::kModeFree) {
        const std::uint64_t bit = std::uint64_t{1} << (e % 64);
        // SYNC: relaxed: a hint (see hint_freed).
        if ((nodes_.hints[e / 64].load(std::memory_order_relaxed) & bit) == 0) {
          nodes_.hints[e / 64].fetch_or(bit, std::memory_order_relaxed);
          ++report.hints_repaired;
        }
        break;
      }
      if (mode != st::kModeClaimed || st::claimer(s) != dead) break;  // Live: walked by chunk
      if (!process_gone) {
        ++report.claims_left;  // it may wake up and finish linking it
        break;
      }
      // A node `dead` was linking. Its chunk (origin, if `dead` got as far
      // as writing it; a stale origin names a chunk that cannot link this
      // generation) says how far: the link Live, Reserving, or not there.
      const std::uint32_t gen = st::generation(s);
      // SYNC: relaxed; written by the dead claimer before its link reserve
      // (a release we acquire below through the chunk's chain), or stale.
      const ChunkRef chunk = ChunkRef::unpack(node.origin.load(std::memory_order_relaxed));
      Linked linked = Linked::No;
      NodeView end;
      if (chunk.size_class < class_count_ && chunk.index < classes_[chunk.size_class].count &&
          chunk.generation != 0) {
        ChunkMeta& m = classes_[chunk.size_class].meta[chunk.index];
        // SYNC: acquire, as in for_each_live_chunk.
        const std::uint64_t cs = m.state.load(std::memory_order_acquire);
        if (st::well_formed(cs) && st::mode(cs) == st::kModeLive &&
            st::generation(cs) == chunk.generation) {
          Chain chain(nodes_, m, cs, chunk.pack());
          for (NodeView n; chain.next(n);) {
          }
          end = chain.last();
          const std::uint64_t w = chain.link_word();
          if (chain.end() == ChainEnd::Pending && link::index(w) == e &&
              link::generation(w) == gen) {
            linked = Linked::Live;
          } else if (chain.end() == ChainEnd::Growing) {
            // SYNC: acquire, pairs with nothing new: the reserver's word
            // write is relaxed, so this only recognises `dead`'s link (only
            // `dead` writes a link to a node it claims).
            const std::uint64_t rw = end.m->holders[kLinkSlot].load(std::memory_order_acquire);
            if (!link::closed(rw) && link::index(rw) == e && link::generation(rw) == gen) {
              linked = Linked::Reserving;
            }
          }
        }
      }
      if (linked == Linked::Live) {
        // Linked, not yet Live: finish it. Its holder becomes a reference
        // of the party it names (a phantom pending one, if `dead` was
        // giving: the receiver settles it; `dead`'s own: dropped below).
        // SYNC: release, as extend's store of Live.
        if (node.state.compare_exchange_strong(s, st::make_live_one(gen), std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
          ++report.claims_undone;
          break;
        }
        continue;
      }
      if (linked == Linked::Reserving) {
        // `dead`'s reservation of the link slot, its link word written:
        // cancel it (a reservation never counted anything).
        std::uint64_t es = end.s;
        for (std::uint32_t k = 0; k < kPoolMaxRetries; ++k) {
          if (st::slot(es, kLinkSlot) != st::kSlotReserving) break;
          // SYNC: acq_rel, a change of the node's state word like reserve's.
          if (end.m->state.compare_exchange_weak(es, st::with_slot(es, kLinkSlot, st::kSlotEmpty),
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_acquire)) {
            break;
          }
          if (st::mode(es) != st::kModeLive || st::generation(es) != st::generation(end.s)) break;
        }
      }
      // Not linked: back to Free.
      // SYNC: seq_cst, a free like any other (hint_freed).
      if (node.state.compare_exchange_strong(s, st::make_free(st::next_generation(gen)),
                                             std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
        after_free_node(e);
        ++report.claims_undone;
        break;
      }
    }
  }
}

ReclaimReport Pool::reclaim_owner(OwnerId dead, bool process_gone,
                                  const std::function<bool(OwnerId)>& dead_receiver) noexcept {
  ReclaimReport report;
  if (dead == kNoOwner) return report;
  // First the overflow nodes `dead` was linking: a finished one's holders
  // are then walked below like any other.
  reclaim_nodes(dead, process_gone, report);
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
          // SYNC: relaxed: a hint (see hint_freed).
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
        // Live: each slot of each node of its chain the dead owner had, or
        // was closing (closed words included, so not an OpenHolders walk),
        // and the link at the chain's end if `dead` was closing it or it is
        // stale. After a change the walk starts again from the chunk (it
        // never goes on in a node the change freed).
        const ChunkRef ref = ChunkRef::of(c, i, st::generation(s));
        for (std::uint32_t pass = 0; pass < kPoolMaxRetries; ++pass) {
          bool again = false;
          bool chunk_freed = false;
          Chain chain(nodes_, m, s, ref.pack());
          for (NodeView node; !again && chain.next(node);) {
            LiveSlots slots(node.s);
            for (unsigned j = 0; !again && slots.next(j);) {
              HolderRead h = read_holder(node, j);
              if (!still_entered(node)) {
                again = true;  // freed under us: walk again
                break;
              }
              std::uint64_t closed = h.word;
              if (h.fields.closed) {
                if (h.fields.aux != dead) continue;  // a live closer finishes it
              } else {
                if (!h.open_well_formed()) {
                  bump(counters_->corrupt);
                  continue;
                }
                if (h.fields.owner != dead) continue;
                closed = closed_word(h.fields, dead);
              }
              again = true;
              if (!h.fields.closed) {
                if (!write_holder(h, closed)) continue;
                report.refs_dropped += h.fields.held + h.fields.pending;
              } else {
                ++report.closes_finished;
              }
              auto freed = finish_close(cv, i, node, j, closed, dead, never);
              if (freed && *freed) {
                ++report.chunks_freed;
                chunk_freed = true;
              }
            }
          }
          if (chunk_freed) break;
          if (!again) {
            const std::uint64_t w = chain.link_word();
            if (chain.end() == ChainEnd::Closing && link::closer(w) == dead) {
              // `dead` closed the link to a freed node and died before vacating.
              ++report.closes_finished;
              auto freed = detail::vacate(*chain.last().m, kLinkSlot, w, *counters_);
              if (freed && *freed) {
                if (chain.last().id == kChunkNode) {
                  after_free(cv, i, dead);
                  ++report.chunks_freed;
                } else {
                  after_free_node(chain.last().id);
                  auto up =
                      unlink(cv, i, chain.last().id, st::generation(chain.last().s), dead, never);
                  if (up && *up) ++report.chunks_freed;
                }
              }
            } else if (chain.end() == ChainEnd::Stale) {
              // A link to a freed node whose closer died (or is about to
              // close it: then one of us wins the CAS, and that one vacates).
              auto freed = close_link(cv, i, chain.last(), w, dead, never);
              if (freed) ++report.links_repaired;
              if (freed && *freed) ++report.chunks_freed;
            }
            break;
          }
          // SYNC: acquire, as above.
          s = m.state.load(std::memory_order_acquire);
          if (!st::well_formed(s) || st::mode(s) != st::kModeLive ||
              st::generation(s) != ref.generation) {
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
                                            PoolCrashStep stop_after,
                                            unsigned occurrence) noexcept {
  if (to == kNoOwner) return 0;
  return pool.settle_impl([to](OwnerId o) { return o == to; }, from, to,
                          StopAt{stop_after, occurrence});
}

}  // namespace detail

}  // namespace ferry::transport
