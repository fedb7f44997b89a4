#pragma once
// Private to the pool: the one way to walk its chunks and to read, walk and
// change a chunk's holder words. Every operation and scan goes through
// these, so the memory ordering of those reads and CASes is stated here
// once (pool.hpp, "Memory ordering").

#include <atomic>
#include <bit>
#include <cstdint>

#include "ferry/transport/pool.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "pool_test_hooks.hpp"

namespace ferry::transport::detail {

// Holder slot j of a chunk as one load read it.
struct HolderRead {
  unsigned slot = 0;
  std::uint64_t word = 0;  // what a change of this slot expects (write_holder)
  pool_layout::holder::Fields fields;

  // Open, with counts a correct process could have written.
  [[nodiscard]] bool open_well_formed() const noexcept {
    return !fields.closed && pool_layout::holder::open_well_formed(fields);
  }
};

[[nodiscard]] inline HolderRead read_holder(const pool_layout::ChunkMeta& m, unsigned j) noexcept {
  // SYNC: acquire, pairs with the acq_rel CASes on this holder word
  // (write_holder) and, through the caller's acquire load of the state word
  // that showed slot j Live, with the release that made it Live (claim's
  // store, reserve's commit CAS): the word read is theirs or newer.
  const std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
  return HolderRead{j, w, pool_layout::holder::decode(w)};
}

// Changes slot h.slot from h.word to `next` in ONE CAS: every change of a
// Live slot's holder word (its counts, transfer's new owner, its close) is
// this instruction. False: it raced (the slot changed since h was read).
[[nodiscard]] inline bool write_holder(pool_layout::ChunkMeta& m, const HolderRead& h,
                                       std::uint64_t next) noexcept {
  std::uint64_t expected = h.word;
  // SYNC: acq_rel: a link in the chain of count changes on this word.
  // Release: the caller's accesses to the payload precede the eventual free
  // (the chain ends in the CAS of the state word that frees the chunk, which
  // the next claimer acquires). Acquire: pairs with the previous link.
  // Relaxed on failure: the caller reads the word again, with acquire.
  return m.holders[h.slot].compare_exchange_strong(expected, next, std::memory_order_acq_rel,
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

// The Live slots of a state word, in slot order.
class LiveSlots {
 public:
  explicit LiveSlots(std::uint64_t s) noexcept : live_(pool_layout::state::live_pairs(s)) {}
  bool next(unsigned& j) noexcept {
    if (live_ == 0) return false;
    j = static_cast<unsigned>(std::countr_zero(live_) / 2);
    live_ &= live_ - 1;
    return true;
  }

 private:
  std::uint64_t live_;
};

// What a walk over open holders does with a malformed open holder word.
enum class Malformed : std::uint8_t {
  stop,  // end the walk; corrupt() tells (operations: PoolError::Corrupt)
  skip,  // pass over it (scans: a snapshot of what can be trusted)
};

// The open holders of a Live chunk whose state word was `s`: one read_holder
// per Live slot, closed ones passed over.
//   OpenHolders walk(m, s);
//   for (HolderRead h; walk.next(h);) { ... write_holder(m, h, ...) ... }
//   if (walk.corrupt()) return corrupt();
class OpenHolders {
 public:
  OpenHolders(const pool_layout::ChunkMeta& m, std::uint64_t s,
              Malformed on_malformed = Malformed::stop) noexcept
      : m_(&m), slots_(s), skip_malformed_(on_malformed == Malformed::skip) {}

  // The next open holder into h; false at the end (or at a malformed word).
  bool next(HolderRead& h) noexcept {
    for (unsigned j = 0; slots_.next(j);) {
      h = read_holder(*m_, j);
      if (h.fields.closed) continue;
      if (pool_layout::holder::open_well_formed(h.fields)) return true;
      if (skip_malformed_) continue;
      corrupt_ = true;
      return false;
    }
    return false;
  }
  // The walk ended at a malformed holder word (Malformed::stop).
  [[nodiscard]] bool corrupt() const noexcept { return corrupt_; }

 private:
  const pool_layout::ChunkMeta* m_;
  LiveSlots slots_;
  bool skip_malformed_;
  bool corrupt_ = false;
};

// Empties holder slot j, whose holder word we closed into `closed`. Frees
// the chunk when no other slot is Live (the CAS that empties the last Live
// slot is the one that makes the chunk Free, with the next generation).
// Returns true if it freed the chunk; false also when someone else already
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
                                                  unsigned j, std::uint64_t closed, OwnerId closer,
                                                  Stop& stop) noexcept {
  using detail::PoolCrashStep;
  if (stop(PoolCrashStep::holder_closed)) return std::unexpected(PoolError::Aborted);
  auto freed = detail::vacate(cv.meta[index], j, closed, *counters_);
  if (!freed || !*freed) return freed;
  if (stop(PoolCrashStep::chunk_freed)) return std::unexpected(PoolError::Aborted);
  after_free(cv, index, closer);
  return true;
}

}  // namespace ferry::transport
