// Holders: the references to live chunks and every change of their counts
// (add_ref, give, transfer, accept, release, revoke), each one CAS on the
// holder slot that counts them; the chain of holder nodes that gives a chunk
// any number of holders; and what freeing a chunk or a node leaves behind.
// docs/design/pool.md explains the design.
#include <bit>

#include "ferry/transport/cache_demote.hpp"
#include "ferry/transport/pool.hpp"
#include "pool_counters.hpp"
#include "pool_flatten.hpp"
#include "pool_hints.hpp"
#include "pool_prefetch.hpp"
#include "pool_test_hooks.hpp"
#include "pool_walk.hpp"

namespace ferry::transport {

using namespace pool_layout;
using namespace detail;  // the pool's private helpers (pool_*.hpp beside this file)
namespace st = pool_layout::state;
namespace hw = pool_layout::holder;

std::expected<Pool::Located, PoolError> Pool::locate(ChunkRef ref) const noexcept {
  if (ref.size_class >= class_count_ || ref.index >= classes_[ref.size_class].count ||
      ref.generation == 0) {
    bump(counters_->invalid_refs);
    return std::unexpected(PoolError::InvalidReference);
  }
  const ClassView& cv = classes_[ref.size_class];
  return Located{&cv, &cv.meta[ref.index]};
}

// The state word of a chunk that a holder's reference names: Live, with the
// reference's generation.
std::expected<std::uint64_t, PoolError> Pool::live_state(const pool_layout::ChunkMeta& m,
                                                         std::uint32_t generation) const noexcept {
  // SYNC: acquire, pairs with the release store/CAS that made holder slots
  // Live (claim, reserve): the holder words we read next are theirs or newer.
  const std::uint64_t s = m.state.load(std::memory_order_acquire);
  if (!st::well_formed(s)) {
    bump(counters_->corrupt);
    return std::unexpected(PoolError::Corrupt);
  }
  if (st::mode(s) != st::kModeLive || st::generation(s) != generation) {
    bump(counters_->stale_refs);
    return std::unexpected(PoolError::StaleReference);
  }
  return s;
}

void Pool::after_free(const ClassView& cv, std::uint32_t index, OwnerId freer) noexcept {
  hint_freed(cv.hints[index / 64], std::uint64_t{1} << (index % 64));
  // SYNC: release, pairs with the acquire fence of in_use_of
  // (pool_counters.hpp): a reader that counts this free counts the
  // allocation before it. Free on x86 (a locked add either way).
  cv.counters->by_owner[freer % kOwnerCountLines].freed.fetch_add(1, std::memory_order_release);
}

void Pool::after_free_node(std::uint32_t index) noexcept {
  hint_freed(nodes_.hints[index / 64], std::uint64_t{1} << (index % 64));
}

void Pool::note_freed(ChunkRef ref) noexcept {
  // SYNC: relaxed; a private guess of this handle (threads share it).
  std::atomic_ref<std::uint64_t>(freed_[ref.size_class])
      .store((std::uint64_t{ref.index} + 1) << 32 | st::next_generation(ref.generation),
             std::memory_order_relaxed);
}

std::unexpected<PoolError> Pool::corrupt() const noexcept {
  bump(counters_->corrupt);
  return std::unexpected(PoolError::Corrupt);
}
std::unexpected<PoolError> Pool::not_held() const noexcept {
  bump(counters_->not_held);
  return std::unexpected(PoolError::NotHeld);
}
std::unexpected<PoolError> Pool::contended() const noexcept {
  bump(counters_->contended);
  return std::unexpected(PoolError::Contended);
}

template <class Step>
std::expected<void, PoolError> Pool::update_live(ChunkRef ref, Step step) noexcept {
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(*loc->meta, ref.generation);
    if (!s) return std::unexpected(s.error());
    const std::expected<Outcome, PoolError> r = step(*loc->meta, *s);
    if (!r) return std::unexpected(r.error());
    if (*r == Outcome::Done) return {};
  }
  return contended();
}

// Reserves Empty slot j of `node` for slot word `word` and makes it Live.
// Retry: the node's state word moved on, read it again.
template <class Stop>
std::expected<Pool::Outcome, PoolError> Pool::reserve(const NodeView& node, unsigned j,
                                                      std::uint64_t word, Stop& stop) noexcept {
  ChunkMeta& m = *node.m;
  std::uint64_t s = node.s;
  // SYNC: acq_rel on success (a read-modify-write in the chain of the state
  // word); relaxed on failure: we read the word again.
  if (!m.state.compare_exchange_strong(s, st::with_slot(s, j, st::kSlotReserving),
                                       std::memory_order_acq_rel, std::memory_order_relaxed)) {
    return Outcome::Retry;
  }
  if (stop(PoolCrashStep::SlotReserving)) return std::unexpected(PoolError::Aborted);
  const std::uint32_t gen = st::generation(s);
  // The slot is ours until we make it Live: nobody else writes its word,
  // except a reserver declared dead while stopped here, whose slot was
  // wiped when the node was freed and reused since: so a CAS from what we
  // read, retried only while the state still shows our reservation.
  // SYNC: relaxed; published by the release CAS below.
  std::uint64_t old = m.holders[j].load(std::memory_order_relaxed);
  for (std::uint32_t attempt = 0;; ++attempt) {
    const std::uint64_t next = hw::with_tag(word, hw::tag_of(old) + 1);
    // SYNC: relaxed; published by the release CAS below.
    if (m.holders[j].compare_exchange_strong(old, next, std::memory_order_relaxed)) break;
    const std::uint64_t cur = m.state.load(std::memory_order_relaxed);
    if (st::mode(cur) != st::kModeLive || st::generation(cur) != gen ||
        st::slot(cur, j) != st::kSlotReserving || attempt == 8) {
      bump(counters_->stale_refs);
      return std::unexpected(PoolError::StaleReference);
    }
  }
  if (stop(PoolCrashStep::SlotHolderWritten)) return std::unexpected(PoolError::Aborted);
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    // SYNC: relaxed; the CAS below is what publishes.
    std::uint64_t cur = m.state.load(std::memory_order_relaxed);
    if (!st::well_formed(cur)) return corrupt();
    if (st::mode(cur) != st::kModeLive || st::generation(cur) != gen ||
        st::slot(cur, j) != st::kSlotReserving) {
      // Freed under us: the caller did not hold a reference, or (an
      // overflow node) the node emptied and was freed meanwhile.
      bump(counters_->stale_refs);
      return std::unexpected(PoolError::StaleReference);
    }
    // SYNC: release (acq_rel), pairs with the acquire loads of the state word
    // before slot words are read: whoever sees slot j Live sees our word.
    if (m.state.compare_exchange_weak(cur, st::with_slot(cur, j, st::kSlotLive),
                                      std::memory_order_acq_rel, std::memory_order_relaxed)) {
      return Outcome::Done;
    }
  }
  return contended();
}

namespace {
// A linker in progress (the chain's end Reserving, or linked to a node still
// Claimed) is waited for this many re-reads of the chunk before the holder
// is refused (TooManyHolders): a linker killed there blocks only this chunk's
// chain, until the chunk is freed (docs/design/pool.md, crash table).
constexpr std::uint32_t kLinkerPatience = 4096;
}  // namespace

template <class Stop>
std::expected<Pool::Outcome, PoolError> Pool::add_holder(ChunkRef ref, ChunkMeta& m,
                                                         std::uint64_t s, hw::Fields f,
                                                         OwnerId actor, std::uint32_t& waits,
                                                         Stop& stop) noexcept {
  Chain chain(nodes_, m, s, ref.pack());
  for (NodeView n; chain.next(n);) {
    const std::uint64_t empty = st::empty_pairs(n.s) & st::kHolderPairLowBits;
    if (empty != 0) {
      const auto j = static_cast<unsigned>(std::countr_zero(empty) / 2);
      auto r = reserve(n, j, hw::encode(f), stop);
      // An overflow node freed under us (it emptied): walk again.
      if (!r && r.error() == PoolError::StaleReference && n.id != kChunkNode) return Outcome::Retry;
      return r;
    }
  }
  // Every holder slot of the chain is taken: grow it.
  switch (chain.end()) {
    case ChainEnd::Open:
      return extend(ref, chain.last(), f, actor, stop);
    case ChainEnd::Stale: {
      // The link to a freed node that its closer has not closed (it may
      // have died first): close it ourselves, then walk again.
      auto r = close_link(classes_[ref.size_class], ref.index, chain.last(), chain.link_word(),
                          actor, stop);
      if (!r) return std::unexpected(r.error());
      return Outcome::Retry;
    }
    case ChainEnd::Corrupt:
      return corrupt();
    default:
      break;
  }
  // growing, pending, closing: someone is linking a node or unlinking one.
  if (++waits == kLinkerPatience) {
    bump(counters_->holder_overflow);
    return std::unexpected(PoolError::TooManyHolders);
  }
  return Outcome::Retry;
}

template <class Stop>
std::expected<Pool::Outcome, PoolError> Pool::extend(ChunkRef ref, const NodeView& last,
                                                     hw::Fields f, OwnerId actor,
                                                     Stop& stop) noexcept {
  // A free overflow node, claimed by the caller (reclaim_owner(actor)
  // finishes or undoes what it leaves half done).
  auto claimed = claim_hinted(nodes_.hints, nodes_.hint_words, nodes_.count, node_cursor_,
                              nodes_.meta, PoolCrashStep::NodeHintCleared, stop,
                              [&](std::uint32_t i) { return claim(nodes_.meta[i], actor, 0); });
  if (!claimed) {
    if (claimed.error() != PoolError::Exhausted) return std::unexpected(claimed.error());
    bump(nodes_.counters->exhausted);
    bump(counters_->holder_overflow);
    return std::unexpected(PoolError::TooManyHolders);
  }
  const auto [index, gen] = *claimed;
  ChunkMeta& e = nodes_.meta[index];
  // While Claimed(gen, actor) nobody else writes this node's words (as a
  // claimed chunk's, pool_allocate.cpp): plain stores, published by the
  // release of the link's commit CAS and of the Live store below.
  // SYNC: relaxed (the tag of slot 0's previous word), as in make_loan.
  const std::uint64_t old = e.holders[0].load(std::memory_order_relaxed);
  e.holders[0].store(hw::with_tag(hw::encode(f), hw::tag_of(old) + 1), std::memory_order_relaxed);
  // SYNC: relaxed, as above: which chunk this node extends (checked by walks).
  e.origin.store(ref.pack(), std::memory_order_relaxed);
  if (stop(PoolCrashStep::NodeClaimed)) return std::unexpected(PoolError::Aborted);
  auto linked = reserve(last, kLinkSlot, link::make(index, gen, 0), stop);
  if (!linked || *linked != Outcome::Done) {
    if (!linked && linked.error() == PoolError::Aborted) return linked;
    // Not linked: the node goes back (still Claimed by us: one CAS).
    std::uint64_t expect = st::make_claimed(gen, actor);
    // SYNC: seq_cst, a free like any other (hint_freed).
    if (e.state.compare_exchange_strong(expect, st::make_free(st::next_generation(gen)),
                                        std::memory_order_seq_cst, std::memory_order_relaxed)) {
      after_free_node(index);
    }
    if (!linked && linked.error() != PoolError::StaleReference) return linked;
    return Outcome::Retry;  // the chain changed (or its last node was freed): walk again
  }
  if (stop(PoolCrashStep::NodeLinked)) return std::unexpected(PoolError::Aborted);
  // SYNC: release, pairs with the acquire load of the node's state in every
  // chain walk: whoever enters the node sees its holder and origin.
  e.state.store(st::make_live_one(gen), std::memory_order_release);
  bump(nodes_.counters->links);
  return Outcome::Done;
}

template <class Stop>
std::expected<void, PoolError> Pool::add_ref_impl(ChunkRef ref, OwnerId owner, std::uint32_t n,
                                                  Stop stop) noexcept {
  if (owner == kNoOwner || n == 0 || n > kMaxRefsPerHolder)
    return std::unexpected(PoolError::InvalidOwner);
  std::uint32_t waits = 0;
  return update_live(ref, [&](ChunkMeta& m, std::uint64_t s) -> std::expected<Outcome, PoolError> {
    bool holds = false;
    OpenHolders walk(nodes_, m, s, ref.pack());
    for (HolderRead h; walk.next(h);) {
      if (h.fields.owner != owner) continue;
      holds = true;
      if (h.fields.held + h.fields.pending + n > kMaxRefsPerHolder) continue;
      hw::Fields f = h.fields;
      f.held += n;
      return write_holder(h, hw::encode(f)) ? Outcome::Done : Outcome::Retry;
    }
    if (walk.corrupt()) return corrupt();
    if (!holds) return not_held();
    // Every slot of the owner is full: a new one.
    hw::Fields f;
    f.owner = owner;
    f.held = n;
    return add_holder(ref, m, s, f, owner, waits, stop);
  });
}

std::expected<void, PoolError> Pool::add_ref(ChunkRef ref, OwnerId owner,
                                             std::uint32_t n) noexcept {
  return add_ref_impl(ref, owner, n, NeverStop{});
}

template <class Stop>
std::expected<void, PoolError> Pool::give_impl(ChunkRef ref, OwnerId from, OwnerId to,
                                               std::uint32_t n, Stop stop) noexcept {
  if (from == kNoOwner || to == kNoOwner || n == 0 || n > kMaxRefsPerHolder) {
    return std::unexpected(PoolError::InvalidOwner);
  }
  std::uint32_t waits = 0;
  return update_live(ref, [&](ChunkMeta& m, std::uint64_t s) -> std::expected<Outcome, PoolError> {
    bool giver_holds = false;
    bool has_target = false;
    HolderRead target;
    OpenHolders walk(nodes_, m, s, ref.pack());
    for (HolderRead h; walk.next(h);) {
      const hw::Fields& f = h.fields;
      if (f.owner == from) giver_holds = true;
      if (f.owner == to && !has_target && (f.aux == from || f.pending == 0) &&
          f.held + f.pending + n <= kMaxRefsPerHolder) {
        target = h;
        has_target = true;
      }
      if (giver_holds && has_target) break;
    }
    if (walk.corrupt()) return corrupt();
    if (!giver_holds) return not_held();
    hw::Fields f;
    if (has_target) {
      f = target.fields;
      f.aux = from;
      f.pending += n;
      return write_holder(target, hw::encode(f)) ? Outcome::Done : Outcome::Retry;
    }
    f.owner = to;
    f.aux = from;
    f.pending = n;
    return add_holder(ref, m, s, f, from, waits, stop);
  });
}

std::expected<void, PoolError> Pool::give(ChunkRef ref, OwnerId from, OwnerId to,
                                          std::uint32_t n) noexcept {
  return give_impl(ref, from, to, n, NeverStop{});
}

FERRY_FLATTEN std::expected<void, PoolError> Pool::transfer(ChunkRef ref, OwnerId from,
                                                            OwnerId to) noexcept {
  if (from == kNoOwner || to == kNoOwner || from == to)
    return std::unexpected(PoolError::InvalidOwner);
  return update_live(ref, [&](ChunkMeta& m, std::uint64_t s) -> std::expected<Outcome, PoolError> {
    bool found = false;
    HolderRead mine;
    OpenHolders walk(nodes_, m, s, ref.pack());
    for (HolderRead h; walk.next(h);) {
      if (h.fields.owner != from) continue;
      // Anything but exactly one held reference: not ours to hand over whole.
      if (found || h.fields.held != 1 || h.fields.pending != 0) return not_held();
      mine = h;
      found = true;
    }
    if (walk.corrupt()) return corrupt();
    if (!found) return not_held();
    hw::Fields f = mine.fields;
    f.owner = to;
    f.aux = from;
    f.held = 0;
    f.pending = 1;
    ++f.tag;  // another owner's word now: a stale expectation of the old one fails
    // A link in the chain of count changes like any other (as give's pending
    // +1 and release's close would be); the slot stays Live, so the state
    // word does not change.
    if (!write_holder(mine, hw::encode(f))) return Outcome::Retry;
    // The receiver's accept and its read come next, on another core: the
    // metadata line and the payload's first go to the shared cache (the
    // CAS above completed every store to them).
    cache_demote(&m);
    const ClassView& cv = classes_[ref.size_class];
    cache_demote(cv.payload + static_cast<std::size_t>(ref.index) * cv.chunk_size);
    return Outcome::Done;
  });
}

FERRY_FLATTEN std::expected<void, PoolError> Pool::accept(ChunkRef ref, OwnerId to,
                                                          OwnerId from) noexcept {
  if (to == kNoOwner || from == kNoOwner) return std::unexpected(PoolError::InvalidOwner);
  return update_live(ref, [&](ChunkMeta& m, std::uint64_t s) -> std::expected<Outcome, PoolError> {
    OpenHolders walk(nodes_, m, s, ref.pack());
    for (HolderRead h; walk.next(h);) {
      hw::Fields f = h.fields;
      if (f.owner != to || f.aux != from || f.pending == 0) continue;
      f.pending -= 1;
      f.held += 1;
      return write_holder(h, hw::encode(f)) ? Outcome::Done : Outcome::Retry;
    }
    if (walk.corrupt()) return corrupt();
    return not_held();
  });
}

template <class Stop>
std::expected<void, PoolError> Pool::drop_impl(ChunkRef ref, OwnerId owner, bool by_giver,
                                               OwnerId other, Stop stop) noexcept {
  if (owner == kNoOwner || (by_giver && other == kNoOwner))
    return std::unexpected(PoolError::InvalidOwner);
  const OwnerId closer = by_giver ? other : owner;
  return update_live(ref, [&](ChunkMeta& m, std::uint64_t s) -> std::expected<Outcome, PoolError> {
    OpenHolders walk(nodes_, m, s, ref.pack());
    HolderRead h;
    bool found = false;
    while (!found && walk.next(h)) {
      const hw::Fields& f = h.fields;
      found = f.owner == owner && (by_giver ? f.aux == other && f.pending > 0 : f.held > 0);
    }
    if (walk.corrupt()) return corrupt();
    if (!found) return not_held();
    hw::Fields f = h.fields;
    if (by_giver) {
      f.pending -= 1;
    } else {
      f.held -= 1;
    }
    if (f.held + f.pending > 0) {
      return write_holder(h, hw::encode(f)) ? Outcome::Done : Outcome::Retry;
    }
    // The last reference of this slot.
    const ClassView& cv = classes_[ref.size_class];
    if (!by_giver && walk.node().id == kChunkNode &&
        st::live_pairs(s) == (std::uint64_t{1} << (2 * h.slot))) {
      // ... and of the chunk (no other slot, no link): nobody else can
      // change this slot or the state word now (that takes holding a
      // reference, and ours is the only one), so ONE CAS frees the chunk. A
      // node declared dead that wakes up here fails it: reclaim changed the
      // state word.
      // SYNC: acq_rel, as in vacate (release: our payload accesses, and
      // through this slot's CAS chain every earlier holder's, happen before
      // the next claimer's acquire); seq_cst for hint_freed's check.
      std::uint64_t expected = s;
      if (!m.state.compare_exchange_strong(expected,
                                           st::make_free(st::next_generation(ref.generation)),
                                           std::memory_order_seq_cst, std::memory_order_relaxed)) {
        return Outcome::Retry;
      }
      if (stop(PoolCrashStep::ChunkFreed)) return std::unexpected(PoolError::Aborted);
      after_free(cv, ref.index, owner);
      note_freed(ref);
      return Outcome::Done;
    }
    // Close it, naming us, then empty it.
    const std::uint64_t closed = closed_word(f, closer);
    if (!write_holder(h, closed)) return Outcome::Retry;
    auto freed = finish_close(cv, ref.index, walk.node(), h.slot, closed, closer, stop);
    if (!freed) return std::unexpected(freed.error());
    if (*freed) note_freed(ref);
    return Outcome::Done;
  });
}

FERRY_FLATTEN std::expected<void, PoolError> Pool::release(ChunkRef ref, OwnerId owner) noexcept {
  return drop_impl(ref, owner, false, kNoOwner, NeverStop{});
}

std::expected<void, PoolError> Pool::revoke(ChunkRef ref, OwnerId from, OwnerId to) noexcept {
  return drop_impl(ref, to, true, from, NeverStop{});
}

FERRY_FLATTEN std::expected<std::span<std::byte>, PoolError> Pool::resolve(
    ChunkRef ref) const noexcept {
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  auto s = live_state(*loc->meta, ref.generation);
  if (!s) return std::unexpected(s.error());
  const ClassView& cv = *loc->cv;
  return std::span<std::byte>(cv.payload + static_cast<std::size_t>(ref.index) * cv.chunk_size,
                              cv.chunk_size);
}

void Pool::prefetch_payload(ChunkRef ref, bool for_write) const noexcept {
  if (ref.size_class >= class_count_ || ref.index >= classes_[ref.size_class].count) return;
  const ClassView& cv = classes_[ref.size_class];
  prefetch_head(cv.payload + static_cast<std::size_t>(ref.index) * cv.chunk_size, cv.chunk_size,
                for_write);
}

namespace detail {

std::expected<bool, PoolError> vacate(ChunkMeta& m, unsigned j, std::uint64_t closed,
                                      PoolCounters& k) noexcept {
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    // SYNC: acquire, pairs with the release CASes of other closers and
    // reservers on the state word.
    std::uint64_t s = m.state.load(std::memory_order_acquire);
    if (!st::well_formed(s)) {
      bump(k.corrupt);
      return std::unexpected(PoolError::Corrupt);
    }
    if (st::mode(s) != st::kModeLive || st::slot(s, j) != st::kSlotLive) return false;
    // Still the word we closed? A slot is reserved again only after it was
    // emptied, and its reserver rewrites the word (new tag) before making
    // it Live; so if the word is still ours, slot j as seen in `s` is still
    // the one we closed.
    // SYNC: acquire, pairs with the release of the reserver's commit CAS.
    if (m.holders[j].load(std::memory_order_acquire) != closed) return false;
    const std::uint64_t others = st::live_pairs(s) & ~(std::uint64_t{1} << (2 * j));
    const std::uint64_t next = others != 0 ? st::with_slot(s, j, st::kSlotEmpty)
                                           : st::make_free(st::next_generation(st::generation(s)));
    // SYNC: acq_rel. Release: every holder's last access to the payload
    // happened before its own closing CAS, and those CASes chain through the
    // holder words and the state words of the chain's nodes (all
    // read-modify-writes; an overflow node's free is followed by the CAS
    // that closes its link) into the one that frees the chunk, which the
    // next claimer acquires. Acquire: pairs with the other closers'
    // releases. seq_cst (the same instruction on x86): a free is in the
    // total order hint_freed's check relies on.
    if (m.state.compare_exchange_weak(s, next, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
      return others == 0;
    }
  }
  bump(k.contended);
  return std::unexpected(PoolError::Contended);
}

std::expected<void, PoolError> PoolTestHooks::add_ref(Pool& pool, ChunkRef ref, OwnerId owner,
                                                      std::uint32_t n,
                                                      PoolCrashStep stop_after) noexcept {
  return pool.add_ref_impl(ref, owner, n, StopAt{stop_after});
}
std::expected<void, PoolError> PoolTestHooks::give(Pool& pool, ChunkRef ref, OwnerId from,
                                                   OwnerId to, std::uint32_t n,
                                                   PoolCrashStep stop_after) noexcept {
  return pool.give_impl(ref, from, to, n, StopAt{stop_after});
}
std::expected<void, PoolError> PoolTestHooks::release(Pool& pool, ChunkRef ref, OwnerId owner,
                                                      PoolCrashStep stop_after,
                                                      unsigned occurrence) noexcept {
  return pool.drop_impl(ref, owner, false, kNoOwner, StopAt{stop_after, occurrence});
}
std::expected<void, PoolError> PoolTestHooks::revoke(Pool& pool, ChunkRef ref, OwnerId from,
                                                     OwnerId to, PoolCrashStep stop_after,
                                                     unsigned occurrence) noexcept {
  return pool.drop_impl(ref, to, true, from, StopAt{stop_after, occurrence});
}

}  // namespace detail

}  // namespace ferry::transport
