#pragma once
// Private to the pool: the one way to walk its chunks, a chunk's chain of
// holder nodes, and to read, walk and change holder words. Every operation
// and scan goes through these, so the memory ordering of those reads and
// CASes is stated here once (docs/design/pool.md, "Memory ordering").

#include <atomic>
#include <bit>
#include <cstdint>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "pool_test_hooks.hpp"

namespace ferry::transport::detail {

// The node id of a chunk's own metadata (the first node of its chain);
// overflow nodes are named by their index in the node area.
inline constexpr std::uint32_t kChunkNode = 0xFFFF'FFFFU;

// One node of a chunk's holder chain, and its state word as one acquire
// load read it (Live; for an overflow node, with the generation its link
// names).
struct NodeView {
  pool_layout::ChunkMeta* m = nullptr;
  std::uint64_t s = 0;
  std::uint32_t id = kChunkNode;
};

// Holder slot `slot` of node `m` as one load read it. (The walk that read
// it knows the node's state and id: OpenHolders::node().)
struct HolderRead {
  pool_layout::ChunkMeta* m = nullptr;
  unsigned slot = 0;
  std::uint64_t word = 0;  // what a change of this slot expects (write_holder)
  pool_layout::holder::Fields fields;

  // Open, with counts a correct process could have written.
  [[nodiscard]] bool open_well_formed() const noexcept {
    return !fields.closed && pool_layout::holder::open_well_formed(fields);
  }
};

// Whether node n is still the incarnation a walk entered: its state word
// still Live with the generation read then. A slot word read between that
// read and this check belongs to that incarnation (generations only grow),
// and a CAS of it later succeeds only while the slot is still that Live
// one. Overflow nodes need it (one can be freed and serve another chunk
// while a walk is in it); a chunk's own node, for an operation, is kept
// by the caller's reference.
[[nodiscard]] inline bool still_entered(const NodeView& n) noexcept {
  // SYNC: acquire, after the acquire load of the slot word (so that load
  // is not satisfied after this one).
  const std::uint64_t now = n.m->state.load(std::memory_order_acquire);
  return pool_layout::state::mode(now) == pool_layout::state::kModeLive &&
         pool_layout::state::generation(now) == pool_layout::state::generation(n.s);
}

[[nodiscard]] inline HolderRead read_holder(const NodeView& n, unsigned j) noexcept {
  // SYNC: acquire, pairs with the acq_rel CASes on this holder word
  // (write_holder) and, through the caller's acquire load of the node's
  // state word that showed slot j Live, with the release that made it Live
  // (claim's store, reserve's commit CAS): the word read is theirs or newer.
  const std::uint64_t w = n.m->holders[j].load(std::memory_order_acquire);
  return HolderRead{n.m, j, w, pool_layout::holder::decode(w)};
}

// Changes slot h.slot of node h.m from h.word to `next` in ONE CAS: every
// change of a Live slot's holder word (its counts, transfer's new owner, its
// close) is this instruction. False: it raced (the slot changed since h was
// read).
[[nodiscard]] inline bool write_holder(const HolderRead& h, std::uint64_t next) noexcept {
  std::uint64_t expected = h.word;
  // SYNC: acq_rel: a link in the chain of count changes on this word.
  // Release: the caller's accesses to the payload precede the eventual free
  // (the chain ends in the CAS of the chunk's state word that frees it,
  // which the next claimer acquires). Acquire: pairs with the previous link.
  // Relaxed on failure: the caller reads the word again, with acquire.
  return h.m->holders[h.slot].compare_exchange_strong(expected, next, std::memory_order_acq_rel,
                                                      std::memory_order_relaxed);
}

// The holder word of `f` closed by `closer` (who will vacate the slot): its
// counts are 0; owner and tag stay.
[[nodiscard]] constexpr std::uint64_t closed_word(pool_layout::holder::Fields f,
                                                  OwnerId closer) noexcept {
  f.held = 0;
  f.pending = 0;
  f.aux = closer;
  f.closed = true;
  return pool_layout::holder::encode(f);
}

// The Live holder slots (0..12) of a state word, in slot order.
class LiveSlots {
 public:
  LiveSlots() noexcept = default;
  explicit LiveSlots(std::uint64_t s) noexcept
      : live_(pool_layout::state::live_pairs(s) & pool_layout::state::kHolderPairLowBits) {}
  bool next(unsigned& j) noexcept {
    if (live_ == 0) return false;
    j = static_cast<unsigned>(std::countr_zero(live_) / 2);
    live_ &= live_ - 1;
    return true;
  }

 private:
  std::uint64_t live_ = 0;
};

// How a chain walk ended (at the last node's link slot).
enum class ChainEnd : std::uint8_t {
  Open,     // the link slot is Empty: the chain can grow here
  Growing,  // the link slot is Reserving: someone is linking a node
  Pending,  // a Live link to a node still Claimed: its linker is finishing
  Closing,  // a closed link: its node is Free, the slot is being vacated
  Stale,    // an open link to a node that is Free or reused: its closer has
            // not closed it yet (or died first): close_link repairs it
  Corrupt,  // a malformed link, a node of another chunk, or a loop
};

// Moves `cur` to the node its Live link slot names, if that node is Live
// with the link's generation and extends `chunk`; else sets `end` to how the
// chain ends there. `link`: the link word read; `steps`: nodes entered so far
// (a walk never enters more than the node area has: a loop is corrupt).
// Out of line: only chunks with more than 13 holders get here.
[[gnu::noinline]] inline bool follow_link(const NodeArea& area, NodeView& cur, std::uint64_t chunk,
                                          std::uint64_t& link, std::uint32_t& steps,
                                          ChainEnd& end) noexcept {
  namespace st = pool_layout::state;
  const unsigned link_state = st::slot(cur.s, kLinkSlot);
  if (link_state == st::kSlotEmpty) {
    end = ChainEnd::Open;
    return false;
  }
  if (link_state == st::kSlotReserving) {
    end = ChainEnd::Growing;
    return false;
  }
  // SYNC: acquire, pairs with the release of the commit CAS that made the
  // link slot Live (reserve) and with the acq_rel CAS that closed it.
  link = cur.m->holders[kLinkSlot].load(std::memory_order_acquire);
  if (pool_layout::link::closed(link)) {
    end = ChainEnd::Closing;
    return false;
  }
  const std::uint32_t index = pool_layout::link::index(link);
  const std::uint32_t gen = pool_layout::link::generation(link);
  if (gen == 0 || index >= area.count || ++steps > area.count) {
    end = ChainEnd::Corrupt;
    return false;
  }
  pool_layout::ChunkMeta& next = area.meta[index];
  // SYNC: acquire, pairs with the release store that made the node Live
  // (extend) and the acq_rel CASes of its slots: its holder words and
  // origin, read next, are those or newer.
  const std::uint64_t s = next.state.load(std::memory_order_acquire);
  if (!st::well_formed(s) || st::generation(s) != gen) {
    end = st::well_formed(s) ? ChainEnd::Stale : ChainEnd::Corrupt;
    return false;
  }
  if (st::mode(s) == st::kModeClaimed) {
    end = ChainEnd::Pending;
    return false;
  }
  if (st::mode(s) != st::kModeLive) {
    end = ChainEnd::Stale;
    return false;
  }
  // SYNC: relaxed; written while the node was Claimed, published by the
  // release store of Live that the acquire load above read.
  if (next.origin.load(std::memory_order_relaxed) != chunk) {
    end = ChainEnd::Corrupt;
    return false;
  }
  cur = NodeView{&next, s, index};
  return true;
}

// The nodes of a Live chunk's holder chain: the chunk's own metadata, then
// each overflow node a Live link names while that node is Live with the
// link's generation and extends this chunk. A snapshot: operations re-check
// with their CASes.
//   Chain chain(nodes, m, s, ref.pack());
//   for (NodeView n; chain.next(n);) { ... }
//   chain.end(), chain.last(), chain.link_word(): where and how it ended
class Chain {
 public:
  Chain(const NodeArea& area, pool_layout::ChunkMeta& m, std::uint64_t s,
        std::uint64_t chunk) noexcept
      : area_(&area), cur_{&m, s, kChunkNode}, chunk_(chunk) {}

  // The next node into n; false at the end.
  bool next(NodeView& n) noexcept {
    if (!started_) {
      started_ = true;
    } else if (!follow_link(*area_, cur_, chunk_, link_, steps_, end_)) {
      return false;
    }
    n = cur_;
    return true;
  }
  [[nodiscard]] ChainEnd end() const noexcept { return end_; }
  // The last node walked (where the chain ended), and its link word as read
  // (ChainEnd::Pending, closing, stale).
  [[nodiscard]] const NodeView& last() const noexcept { return cur_; }
  [[nodiscard]] std::uint64_t link_word() const noexcept { return link_; }

 private:
  const NodeArea* area_;
  NodeView cur_;
  std::uint64_t chunk_;
  std::uint64_t link_ = 0;
  std::uint32_t steps_ = 0;
  bool started_ = false;
  ChainEnd end_ = ChainEnd::Open;
};

// What a walk over open holders does with a malformed open holder word.
enum class Malformed : std::uint8_t {
  Stop,  // end the walk; corrupt() tells (operations: PoolError::Corrupt)
  Skip,  // pass over it (scans: a snapshot of what can be trusted)
};

// The open holders of a Live chunk whose state word was `s`, over its whole
// chain: one read_holder per Live holder slot, closed ones passed over.
//   OpenHolders walk(nodes, m, s, ref.pack());
//   for (HolderRead h; walk.next(h);) { ... write_holder(h, ...) ... }
//   if (walk.corrupt()) return corrupt();
// Every holder read in an overflow node is checked with still_entered (a
// walk that finds its node freed ends there); in the chunk's own node too
// for a scan (Malformed::Skip: no reference keeps the chunk). A chunk with no
// Live link (up to 12 readers) is walked as one node, inline: the chain is
// followed out of line (follow_link).
class OpenHolders {
 public:
  OpenHolders(const NodeArea& area, pool_layout::ChunkMeta& m, std::uint64_t s, std::uint64_t chunk,
              Malformed on_malformed = Malformed::Stop) noexcept
      : area_(&area),
        node_{&m, s, kChunkNode},
        slots_(s),
        chunk_(chunk),
        skip_malformed_(on_malformed == Malformed::Skip),
        check_(skip_malformed_) {}

  // The next open holder into h; false at the end (or at a malformed word).
  // Always inline: it is every hot operation's loop (out of line it cost the
  // loan path a fifth, measured by the test "allocate plus release costs...").
  [[gnu::always_inline]] bool next(HolderRead& h) noexcept {
    for (;;) {
      for (unsigned j = 0; slots_.next(j);) {
        h = read_holder(node_, j);
        if (check_ && !still_entered(node_)) return false;
        if (h.fields.closed) continue;
        if (pool_layout::holder::open_well_formed(h.fields)) return true;
        if (skip_malformed_) continue;
        corrupt_ = true;
        return false;
      }
      if (pool_layout::state::slot(node_.s, kLinkSlot) != pool_layout::state::kSlotLive)
        return false;
      if (!follow_link(*area_, node_, chunk_, link_, steps_, end_)) return false;
      slots_ = LiveSlots(node_.s);
      check_ = true;
    }
  }
  // The walk ended at a malformed holder word (Malformed::Stop) or link.
  [[nodiscard]] bool corrupt() const noexcept { return corrupt_ || end_ == ChainEnd::Corrupt; }
  // The node of the holder next() gave last.
  [[nodiscard]] const NodeView& node() const noexcept { return node_; }

 private:
  const NodeArea* area_;
  NodeView node_;
  LiveSlots slots_;
  std::uint64_t chunk_;
  std::uint64_t link_ = 0;
  std::uint32_t steps_ = 0;
  ChainEnd end_ = ChainEnd::Open;
  bool skip_malformed_;
  bool check_;
  bool corrupt_ = false;
};

// Empties slot j of node m, whose slot word we closed into `closed`. Frees
// the node when no other slot is Live (the CAS that empties the last Live
// slot is the one that makes the node Free, with the next generation).
// Returns true if it freed the node; false also when someone else already
// emptied the slot (only a node that was declared dead and woke up, or a
// second reclaim, can find that). (pool_holders.cpp)
[[nodiscard]] std::expected<bool, PoolError> vacate(pool_layout::ChunkMeta& m, unsigned j,
                                                    std::uint64_t closed,
                                                    pool_layout::PoolCounters& k) noexcept;

}  // namespace ferry::transport::detail

namespace ferry::transport {

template <class Visit>
void Pool::for_each_live_chunk(Visit visit) const noexcept {
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      pool_layout::ChunkMeta& m = cv.meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live
      // (claim's store, reserve's commit CAS): the holder words the visitor
      // reads are theirs or newer. A snapshot.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (!pool_layout::state::well_formed(s) ||
          pool_layout::state::mode(s) != pool_layout::state::kModeLive) {
        continue;
      }
      visit(c, i, m, s);
    }
  }
}

// Shared by release/revoke (pool_holders.cpp) and the recovery scans.
template <class Stop>
std::expected<bool, PoolError> Pool::finish_close(const ClassView& cv, std::uint32_t index,
                                                  const detail::NodeView& node, unsigned j,
                                                  std::uint64_t closed, OwnerId closer,
                                                  Stop& stop) noexcept {
  using detail::PoolCrashStep;
  if (stop(PoolCrashStep::HolderClosed)) return std::unexpected(PoolError::Aborted);
  auto freed = detail::vacate(*node.m, j, closed, *counters_);
  if (!freed || !*freed) return freed;
  if (node.id == detail::kChunkNode) {
    if (stop(PoolCrashStep::ChunkFreed)) return std::unexpected(PoolError::Aborted);
    after_free(cv, index, closer);
    return true;
  }
  // An overflow node emptied: it is Free; now its hint and the link that
  // names it.
  if (stop(PoolCrashStep::NodeFreed)) return std::unexpected(PoolError::Aborted);
  after_free_node(node.id);
  return unlink(cv, index, node.id, pool_layout::state::generation(node.s), closer, stop);
}

template <class Stop>
std::expected<bool, PoolError> Pool::close_link(const ClassView& cv, std::uint32_t index,
                                                const detail::NodeView& node, std::uint64_t word,
                                                OwnerId closer, Stop& stop) noexcept {
  using detail::PoolCrashStep;
  const std::uint64_t closed = pool_layout::link::close(word, closer);
  std::uint64_t expected = word;
  // SYNC: acq_rel, a link in the chain that ends in the chunk's free (as
  // write_holder): the freed node's last closer precedes us (we read the
  // node Free or reused through the acquire loads of the chain walk).
  if (!node.m->holders[kLinkSlot].compare_exchange_strong(
          expected, closed, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    return false;  // closed by someone else (a live closer, or a repair)
  }
  if (stop(PoolCrashStep::LinkClosed)) return std::unexpected(PoolError::Aborted);
  auto freed = detail::vacate(*node.m, kLinkSlot, closed, *counters_);
  if (!freed || !*freed) return freed;
  if (node.id == detail::kChunkNode) {
    if (stop(PoolCrashStep::ChunkFreed)) return std::unexpected(PoolError::Aborted);
    after_free(cv, index, closer);
    return true;
  }
  if (stop(PoolCrashStep::NodeFreed)) return std::unexpected(PoolError::Aborted);
  after_free_node(node.id);
  return unlink(cv, index, node.id, pool_layout::state::generation(node.s), closer, stop);
}

template <class Stop>
std::expected<bool, PoolError> Pool::unlink(const ClassView& cv, std::uint32_t index,
                                            std::uint32_t node, std::uint32_t gen, OwnerId closer,
                                            Stop& stop) noexcept {
  pool_layout::ChunkMeta& m = cv.meta[index];
  {
    // SYNC: acquire, as in for_each_live_chunk.
    const std::uint64_t s = m.state.load(std::memory_order_acquire);
    if (!pool_layout::state::well_formed(s) ||
        pool_layout::state::mode(s) != pool_layout::state::kModeLive) {
      return false;  // someone else closed the link and freed the chunk
    }
    const ChunkRef ref = ChunkRef::of(static_cast<std::uint32_t>(&cv - classes_.data()), index,
                                      pool_layout::state::generation(s));
    // A freed node has no link of its own (a Live link slot would have kept
    // it), so it was the chain's last: the walk ends at the link to it.
    detail::Chain chain(nodes_, m, s, ref.pack());
    for (detail::NodeView n; chain.next(n);) {
    }
    const std::uint64_t w = chain.link_word();
    if (chain.end() != detail::ChainEnd::Stale || pool_layout::link::index(w) != node ||
        pool_layout::link::generation(w) != gen) {
      return false;  // already closed (by a repair), or not there
    }
    // If the close CAS loses, whoever won it (a live closer, a repair)
    // vacates the slot.
    return close_link(cv, index, chain.last(), w, closer, stop);
  }
}

}  // namespace ferry::transport
