#pragma once
// The two ends of a ring (RingProducer, RingConsumer). Each is built on its
// fast path (ring_fast_path.hpp: try_push, prefetch_next_slot and publish;
// ready, try_pop_ready and has_data), the only part of them that
// <ferry/ferry.hpp> compiles into the caller (ferry/detail/lane.hpp). The
// rest of the ring (geometry, format, attach, waiting, batches, the
// overwrite protocol, stats) is declared here where it is a member and
// defined in ferry/transport/ring.hpp or ring.cpp: include ring.hpp to call
// it (a member marked `inline` below and called without it is a
// compile-time warning and a link error).
//
// How the ring works is described at the top of ring.hpp.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <span>

#include "ferry/transport/cache_demote.hpp"
#include "ferry/transport/doorbell_word.hpp"
#include "ferry/transport/platform.hpp"
#include "ferry/transport/ring_fast_path.hpp"
#include "ferry/transport/ring_layout.hpp"
#include "ferry/transport/spin.hpp"

namespace ferry::transport {

enum class PushOutcome : std::uint8_t {
  Appended,   // there was room
  Overwrote,  // the oldest message was discarded to make room
};

// Spin iterations (each one try + spin_wait_step(), ~150 ns) before
// push()/pop() go to sleep: ~15 us, many cross-core round trips (~0.5 us).
inline constexpr std::uint32_t kDefaultSpinLimit = 100;

namespace detail {

inline void store_word(std::byte* p, std::uint64_t v) noexcept {
  // SYNC: relaxed; published by the producer's release store of tail.
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .store(v, std::memory_order_relaxed);
}
inline std::uint64_t pack_header(std::uint32_t length, std::uint32_t flags) noexcept {
  const ring_layout::SlotHeader h{length, flags};
  std::uint64_t w = 0;
  std::memcpy(&w, &h, sizeof w);
  return w;
}
// A slot's SlotMeta, word by word (overwrite mode: the producer may be
// rewriting it; a torn copy is thrown away with the rest of the message).
inline SlotMeta load_meta(const std::byte* slot) noexcept {
  const std::byte* m = slot + ring_layout::kSlotMetaOffset;
  return SlotMeta{load_word(m), load_word(m + 8), load_word(m + 16)};
}
inline void store_meta(std::byte* slot, const SlotMeta& meta) noexcept {
  std::byte* m = slot + ring_layout::kSlotMetaOffset;
  store_word(m, meta.sequence);
  store_word(m + 8, meta.publisher_id);
  store_word(m + 16, meta.publish_time_ns);
}

// How long push()/pop() spin before they sleep, adapted per handle: the
// budget halves each time spinning did not pay off (we slept anyway: the peer
// is slow, or shares our CPU and our spinning only delays it) and grows back
// by a sixteenth of the limit with every push()/pop() that succeeded without
// sleeping. A budget shorter than the peer's answer never succeeds, so it
// would never grow back: every 32nd time spinning fails, the next wait
// probes with the full limit again. On the 2-vCPU test machine, loaded by other work, 2 M messages
// between two processes through a capacity-2 ring took 10-30 s with a fixed
// budget and 1-11 s with this one; with a responsive peer the budget stays at
// the limit, so latency is unchanged.
class SpinBudget {
 public:
  [[nodiscard]] std::uint32_t budget() const noexcept { return budget_; }
  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }
  void set_limit(std::uint32_t limit) noexcept {
    limit_ = limit;
    budget_ = limit;
  }
  void paid_off() noexcept {
    const std::uint32_t grown = budget_ + limit_ / 16 + 1;
    budget_ = grown < limit_ ? grown : limit_;
  }
  void wasted() noexcept { budget_ = (++misses_ % 32 == 0) ? limit_ : budget_ / 2; }

 private:
  std::uint32_t limit_ = kDefaultSpinLimit;
  std::uint32_t budget_ = kDefaultSpinLimit;
  std::uint32_t misses_ = 0;
};

}  // namespace detail

// ---------------------------------------------------------------------------
// The producer side. One per ring at a time (the caller guarantees it).
class RingProducer : public ProducerFastPath {
 public:
  // Checks the ring in `mem` once (magic, version, power-of-two capacity,
  // mask, slot size, size, indices) and continues from its stored tail.
  // Clears a stale `sleeping` flag on the space doorbell (its own side). With
  // `data_doorbell`, notifications go there instead of the ring's own data
  // doorbell (the consumer must wait on the same one).
  [[nodiscard]] static std::expected<RingProducer, RingError> attach(
      void* mem, std::size_t bytes, DoorbellWord* data_doorbell = nullptr) noexcept;

  RingProducer(RingProducer&&) noexcept = default;
  RingProducer& operator=(RingProducer&&) noexcept = default;
  RingProducer(const RingProducer&) = delete;
  RingProducer& operator=(const RingProducer&) = delete;
  ~RingProducer() = default;

  // --- Pushing, either protocol --------------------------------------------

  // From ProducerFastPath (ring_fast_path.hpp), inline and forced so: they
  // are the publish() of a port with one queue (ferry/detail/lane.hpp).
  // - try_push(msg, flags, meta): the one way in for one message: copies it
  //   into the next slot and publishes it (with anything stage_many()d
  //   before), or fails with Full, TooLarge or CorruptIndices having written
  //   nothing. Full is not counted: call count_dropped() when the policy
  //   gives the message up.
  // - prefetch_next_slot(size): a hint for the try_push of `size` bytes that
  //   follows: starts taking the lines it will write (the slot's header and
  //   metadata and the first payload bytes) away from the consumer, which
  //   read them last, so that this transfer overlaps whatever the caller does
  //   first instead of stalling the slot's stores. Reads no shared memory;
  //   does nothing when the ring looks full (the next slot may still be the
  //   consumer's to read).
  // - publish(): publishes what stage_many() wrote; returns how many.

  // try_push that waits for room: spins (at most spin_limit() iterations,
  // fewer while spinning keeps failing, see detail::SpinBudget), then
  // sleeps on the space doorbell, at most `timeout` from the moment it first
  // decides to sleep (so it never returns Timeout early). A Timeout is
  // counted in timed_out.
  //
  // `give_up` (optional): another thread raises it, then calls
  // notify_space(), to end a wait whose consumer is gone (Abandoned).
  [[nodiscard]] inline std::expected<void, RingError> push(
      std::span<const std::byte> msg, std::uint32_t flags, std::chrono::nanoseconds timeout,
      const std::atomic<bool>* give_up = nullptr, const SlotMeta& meta = {}) noexcept;

  // Batch of samples of one size (`count` of `size` bytes each, back to
  // back at `data`): writes as many as there is room for into free slots,
  // in order, the k-th with meta.sequence + k (the rest of `meta` is the
  // batch's), without publishing them. Re-reads head at most once.
  // publish() then makes them all visible with ONE tail store and at most
  // one notification. Returns how many it staged: 0 when full, too large or
  // corrupt (try_push then says which).
  [[nodiscard]] FERRY_HOT inline std::size_t stage_many(const std::byte* data, std::size_t count,
                                                        std::uint32_t size, std::uint32_t flags,
                                                        SlotMeta meta) noexcept;
  // Waits until a push would find room: spins (as push()), then sleeps on
  // the space doorbell, at most `timeout` from the moment it decides to
  // sleep. Timeout is not counted (the caller knows how many messages it
  // gives up); Abandoned when `give_up` is raised; CorruptIndices.
  [[nodiscard]] std::expected<void, RingError> wait_room(
      std::chrono::nanoseconds timeout, const std::atomic<bool>* give_up = nullptr) noexcept;
  // Whether the next try_push finds room: the cached head, re-read only when
  // it says full. Only this producer fills the ring, so a yes holds until
  // that push (Spsc). False when full or the indices are corrupt.
  [[nodiscard]] bool room_for_next() noexcept { return ensure_room().has_value(); }
  // The last published slot's first line goes to the shared cache, where
  // its consumer reads it next (cache_demote.hpp): after a push that
  // flushed, for a message whose reader waits for it.
  void demote_last_slot() const noexcept { cache_demote(slot_at(tail_ - 1)); }
  // Re-reads head: true when a push would find room (or the indices are
  // corrupt, so that a waiter stops waiting and sees the error). The
  // predicate of wait_room's sleep; polled by callers that spin instead.
  [[nodiscard]] inline bool has_room() noexcept;

  // --- Overwrite protocol (drop_oldest) only: WrongMode on a plain ring -----
  // Defined in ring.hpp's overwrite section.

  // Publishes `msg`; when the ring is full, first discards the oldest
  // message (CAS on head) and, if that CAS won, calls
  // on_discard(std::span<const std::byte> payload, std::uint32_t flags) with
  // it before its slot is reused (an unreadable length gives an empty span).
  // If the consumer took that message first, there is room and nothing is
  // discarded.
  template <class OnDiscard>
  [[nodiscard]] std::expected<PushOutcome, RingError> try_push_overwrite(
      std::span<const std::byte> msg, std::uint32_t flags, OnDiscard&& on_discard,
      const SlotMeta& meta = {}) noexcept;
  // Batch (samples as stage_many's): publishes them with ONE tail store,
  // keeping the newest `capacity`, as `count` calls of try_push_overwrite
  // would leave the ring: the oldest queued messages that must go are
  // discarded with one CAS of head (on_discard for each, as
  // try_push_overwrite), and when count > capacity the batch's first
  // count - capacity samples are never written (each would have been
  // overwritten by a later one of the same batch). Returns how many
  // messages were overwritten in that per-sample sense (discarded plus
  // skipped); the ring's overwritten counter counts the same.
  template <class OnDiscard>
  [[nodiscard]] std::expected<std::size_t, RingError> try_push_overwrite_many(
      const std::byte* data, std::size_t count, std::uint32_t size, std::uint32_t flags,
      SlotMeta meta, OnDiscard&& on_discard) noexcept;

  // --- Policy outcomes and the end of the ring -------------------------------

  // The producer's last word: no message follows (RingConsumer::finished()).
  inline void close() noexcept;
  // Any thread: wakes a push() asleep for room (see its give_up). The
  // header pointer is fixed at attach, so this reads nothing the owner writes.
  inline void notify_space() const noexcept;
  // Any thread: the consumer said it takes no more (RingConsumer::leave()).
  [[nodiscard]] inline bool reader_left() const noexcept;
  // Messages the caller's policy gave up (drop_new, a block deadline).
  inline void count_dropped(std::uint64_t n = 1) noexcept;
  inline void count_timed_out(std::uint64_t n = 1) noexcept;

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint32_t max_message_size() const noexcept { return payload_max_; }
  [[nodiscard]] RingMode mode() const noexcept { return mode_; }
  // The spin budget's limit. Stays public for the benchmarks' `--wait sleep`
  // and the tests of the sleeping handshake: 0 makes push() and wait_room()
  // sleep as soon as the ring is full.
  [[nodiscard]] std::uint32_t spin_limit() const noexcept { return spin_.limit(); }
  void set_spin_limit(std::uint32_t iterations) noexcept { spin_.set_limit(iterations); }

 private:
  RingProducer() = default;

  [[nodiscard]] std::expected<void, RingError> push_slow(std::span<const std::byte> msg,
                                                         std::uint32_t flags,
                                                         std::chrono::nanoseconds timeout,
                                                         const std::atomic<bool>* give_up,
                                                         const SlotMeta& meta) noexcept;

  detail::SpinBudget spin_;
  // Shadows of the single-writer counters (stored, never read back).
  std::uint64_t dropped_ = 0;
  std::uint64_t overwritten_ = 0;
  std::uint64_t timed_out_ = 0;
};

// ---------------------------------------------------------------------------
// The consumer side. One per ring at a time (the caller guarantees it).
class RingConsumer : public ConsumerFastPath {
 public:
  // Checks the ring once and continues from its stored head. Clears a stale
  // `sleeping` flag on the ring's own data doorbell (a consumer killed in
  // futex_wait leaves it set). With `data_doorbell` (shared by all of this
  // consumer's rings), pop() sleeps there; its owner resets its flag.
  [[nodiscard]] static std::expected<RingConsumer, RingError> attach(
      void* mem, std::size_t bytes, DoorbellWord* data_doorbell = nullptr) noexcept;

  RingConsumer(RingConsumer&&) noexcept = default;
  RingConsumer& operator=(RingConsumer&&) noexcept = default;
  RingConsumer(const RingConsumer&) = delete;
  RingConsumer& operator=(const RingConsumer&) = delete;
  ~RingConsumer() = default;

  // --- Taking, either protocol -------------------------------------------------

  // Copies the oldest message into `out` and returns its length (flags in
  // *flags). Empty; BufferTooSmall (the message stays); CorruptSlot (its
  // length was impossible: skipped and counted, the next call goes on);
  // CorruptIndices; Contended (overwrite mode, see kMaxClaimRetries). On an
  // error `out` may have been written to.
  [[nodiscard]] std::expected<std::uint32_t, RingError> try_pop(std::span<std::byte> out,
                                                                std::uint32_t* flags = nullptr,
                                                                SlotMeta* meta = nullptr) noexcept {
    if (mode_ == RingMode::Overwrite) return try_pop_overwrite(out, flags, meta);
    auto slot = next_slot();
    if (!slot) return std::unexpected(slot.error());
    const ring_layout::SlotHeader h = *slot;
    if (h.length > out.size()) return std::unexpected(RingError::BufferTooSmall);
    if (h.length != 0)
      std::memcpy(out.data(), slot_at(head_) + ring_layout::kSlotHeaderBytes, h.length);
    if (flags != nullptr) *flags = h.flags;
    if (meta != nullptr)
      std::memcpy(meta, slot_at(head_) + ring_layout::kSlotMetaOffset, sizeof *meta);
    release_slot();
    return h.length;
  }

  // Like try_pop, but waits for a message: spins, then sleeps on the data
  // doorbell, at most `timeout` from the moment it first decides to sleep.
  [[nodiscard]] inline std::expected<std::uint32_t, RingError> pop(
      std::span<std::byte> out, std::uint32_t* flags, std::chrono::nanoseconds timeout,
      SlotMeta* meta = nullptr) noexcept;

  // From ConsumerFastPath (ring_fast_path.hpp), inline (the first two
  // forced so): they are the take() of a port with one queue.
  // - ready(): polling: is a message waiting? Cheaper than a try_pop that
  //   finds nothing, and takes nothing. Spsc: no shared load while the
  //   cached tail already says yes; else one acquire load of tail (and, like
  //   try_pop, a prefetch of the next slot's line, so that it travels with
  //   tail). True also for corrupt indices until a try_pop reported them
  //   (and marked the queue broken); false for good after that.
  // - try_pop_ready(out, length, flags, meta): the short way after ready()
  //   said yes. The port's inline take() must not carry a std::expected and
  //   must not re-check what ready() established: copies the message ready()
  //   saw into `out`, sets `length` and `flags`, and frees its slot. False,
  //   with nothing taken, in every other case (not Spsc, ready() not asked
  //   or said no, a length that is impossible or longer than `out`): try_pop
  //   then does what it always does (skips and counts a corrupt slot, ...).
  // - has_data(): a fresh read of tail: is there a message? For waiting on a
  //   shared doorbell over several rings (doorbell_wait's ready()). False for
  //   impossible indices and for a broken queue: a waiter must sleep, not
  //   spin on them. In overwrite mode, head past tail (signed distance < 0)
  //   is a tail read before the producer moved on: false there is safe for a
  //   waiter, since that push's notifier_fence() is then ordered after the
  //   waiter's waiter_fence() (else our load of tail would have seen it), so
  //   its doorbell_notify sees the waiter's `sleeping` and wakes it.

  // A peer wrote indices that no producer and consumer can produce (more
  // than a capacity apart): the queue is broken for good. Counted once (as a
  // corrupt slot: `ferry topic` shows it); nothing is taken from it again.
  [[nodiscard]] bool broken() const noexcept { return broken_; }
  // True when the producer closed the ring and every message is taken.
  [[nodiscard]] inline bool finished() const noexcept;
  // The consumer's last word: nothing more is taken (its subscriber port is
  // gone). A producer waiting for room gives up (RingProducer::reader_left()).
  inline void leave() noexcept;

  // --- Plain SPSC only: WrongMode on an overwrite ring -----------------------

  // Batch: takes up to `max` messages with ONE head store and at most one
  // wake-up of a producer waiting for room. visit(payload, flags) sees each
  // one whose length is possible, in order, in place, and must copy what it
  // keeps (the slot is reused once this returns); a slot with an impossible
  // length is skipped and counted as corrupt, as try_pop does. Returns how
  // many slots it freed (0: empty); CorruptIndices as try_pop. Overwrite
  // rings are taken one by one (each message needs its own CAS).
  template <class Visit>
  [[nodiscard]] std::expected<std::uint32_t, RingError> consume_many(std::uint32_t max,
                                                                     Visit&& visit) noexcept;

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] std::uint32_t max_message_size() const noexcept { return payload_max_; }
  [[nodiscard]] RingMode mode() const noexcept { return mode_; }
  // Where pop() sleeps, for waiting with doorbell_wait over several rings.
  [[nodiscard]] DoorbellWord& data_doorbell() const noexcept { return *data_bell_; }
  // As RingProducer's: 0 makes pop() sleep as soon as the ring is empty.
  [[nodiscard]] std::uint32_t spin_limit() const noexcept { return spin_.limit(); }
  void set_spin_limit(std::uint32_t iterations) noexcept { spin_.set_limit(iterations); }

 private:
  RingConsumer() = default;

  // Spsc: the header of the slot at head_, validated; skips corrupt slots.
  [[nodiscard]] std::expected<ring_layout::SlotHeader, RingError> next_slot() noexcept {
    const std::uint32_t h = head_;
    if (h == cached_tail_) {
      // Start fetching the slot while we fetch tail: when the message is
      // there, its lines travel from the producer's core with tail instead
      // of after it. Measured on the 2-vCPU Xeon VM (ferry-bench-ring): the
      // first line, one-way p50 ~350 -> ~280 ns. The second (a 64 B sample's
      // payload spills into it), on the 2-vCPU EPYC VM when its cross-core
      // hand-off is slow (cacheline ~170 ns): ~520 -> ~380 ns.
      __builtin_prefetch(slot_at(h));
      __builtin_prefetch(slot_at(h) + kCacheLine);  // a hint: never faults
      // SYNC: acquire, pairs with the producer's release store of tail in
      // publish(): the slots before it are fully written.
      const std::uint32_t t = header_->producer.tail.load(std::memory_order_acquire);
      if (t == h) return std::unexpected(RingError::Empty);
      if (t - h > capacity_ || broken_) [[unlikely]] {
        mark_broken();
        return std::unexpected(RingError::CorruptIndices);  // cached_tail_ unchanged
      }
      cached_tail_ = t;
    }
    // The length is read ONCE (one 8-byte load of {length, flags}); the
    // producer may be broken or hostile and rewrite it behind our back.
    const ring_layout::SlotHeader hdr = detail::unpack_header(detail::load_word(slot_at(h)));
    if (hdr.length > payload_max_) {
      count_corrupt();
      advance_head();  // skip it: not popped, counted as corrupt
      return std::unexpected(RingError::CorruptSlot);
    }
    return hdr;
  }

  void mark_broken() noexcept {
    if (broken_) return;
    broken_ = true;
    count_corrupt();
  }
  void count_corrupt() noexcept {
    ++corrupt_;
    // SYNC: relaxed; single-writer counter, read by read_ring_stats.
    header_->consumer.corrupt.store(corrupt_, std::memory_order_relaxed);
  }

  // The overwrite protocol's take (ring_overwrite.cpp).
  [[nodiscard]] std::expected<std::uint32_t, RingError> try_pop_overwrite(std::span<std::byte> out,
                                                                          std::uint32_t* flags,
                                                                          SlotMeta* meta) noexcept;
  [[nodiscard]] std::expected<std::uint32_t, RingError> pop_slow(std::span<std::byte> out,
                                                                 std::uint32_t* flags,
                                                                 std::chrono::nanoseconds timeout,
                                                                 SlotMeta* meta) noexcept;

  DoorbellWord* data_bell_ = nullptr;
  detail::SpinBudget spin_;
  std::uint64_t corrupt_ = 0;
};

}  // namespace ferry::transport
