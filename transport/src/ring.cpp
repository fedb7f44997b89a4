#include "ferry/transport/ring.hpp"

#include <algorithm>
#include <new>

namespace ferry::transport {

using ring_layout::RingHeader;

// The fast path's offsets (ring_fast_path.hpp) are where the layout puts
// those words.
static_assert(ring_layout::kTailOffset ==
              offsetof(RingHeader, producer) + offsetof(ring_layout::ProducerLine, tail));
static_assert(ring_layout::kPushedOffset ==
              offsetof(RingHeader, producer) + offsetof(ring_layout::ProducerLine, pushed));
static_assert(ring_layout::kProducerBacklogOffset ==
              offsetof(RingHeader, producer) + offsetof(ring_layout::ProducerLine, max_backlog));
static_assert(ring_layout::kHeadOffset ==
              offsetof(RingHeader, consumer) + offsetof(ring_layout::ConsumerLine, head));
static_assert(ring_layout::kPoppedOffset ==
              offsetof(RingHeader, consumer) + offsetof(ring_layout::ConsumerLine, popped));
static_assert(ring_layout::kConsumerBacklogOffset ==
              offsetof(RingHeader, consumer) + offsetof(ring_layout::ConsumerLine, max_backlog));
static_assert(ring_layout::kSpaceBellOffset == offsetof(RingHeader, space_bell));
static_assert(ring_layout::kSlotMetaOffset == 8 && ring_layout::kSlotHeaderBytes == 32);

std::expected<std::uint32_t, RingError> ConsumerFastPath::try_pop_general(std::span<std::byte> out,
                                                                          std::uint32_t* flags,
                                                                          SlotMeta* meta) noexcept {
  // Every ConsumerFastPath is a RingConsumer's (its only constructor is protected).
  return static_cast<RingConsumer*>(this)->try_pop(out, flags, meta);
}

std::string_view to_string(RingError e) noexcept {
  switch (e) {
    case RingError::Full:
      return "ring is full";
    case RingError::Empty:
      return "ring is empty";
    case RingError::TooLarge:
      return "message is larger than the ring's slot payload";
    case RingError::BufferTooSmall:
      return "buffer is smaller than the message (it stays in the ring)";
    case RingError::CorruptSlot:
      return "a slot held an impossible length; it was skipped";
    case RingError::CorruptIndices:
      return "ring indices are corrupt (tail - head > capacity)";
    case RingError::Timeout:
      return "timed out waiting on the ring";
    case RingError::InvalidGeometry:
      return "invalid ring geometry (capacity must be a power of two, slot size a multiple of 8 >= "
             "16)";
    case RingError::BadLayout:
      return "memory does not hold a ring of this layout version";
    case RingError::TooSmall:
      return "memory region is too small for the ring";
    case RingError::Misaligned:
      return "ring memory is not 64-byte aligned";
    case RingError::WrongMode:
      return "operation not available in this ring mode";
    case RingError::Contended:
      return "the producer overwrote every message we tried to take; try again";
    case RingError::Abandoned:
      return "gave up waiting for room: the consumer is gone";
  }
  return "unknown ring error";
}

std::expected<void, RingError> validate_geometry(const RingGeometry& g) noexcept {
  using namespace ring_layout;
  if (g.capacity == 0 || g.capacity > kMaxCapacity || !std::has_single_bit(g.capacity)) {
    return std::unexpected(RingError::InvalidGeometry);
  }
  if (g.slot_size < kMinSlotSize || g.slot_size > kMaxSlotSize || g.slot_size % 8 != 0) {
    return std::unexpected(RingError::InvalidGeometry);
  }
  if (g.mode != RingMode::Spsc && g.mode != RingMode::Overwrite) {
    return std::unexpected(RingError::InvalidGeometry);
  }
  return {};
}

std::size_t ring_bytes(const RingGeometry& g) noexcept {
  if (!validate_geometry(g)) return 0;
  return ring_layout::kSlotsOffset + static_cast<std::size_t>(g.capacity) * g.slot_size;
}

std::expected<void, RingError> format_ring(void* mem, std::size_t bytes, const RingGeometry& g,
                                           std::uint32_t initial_index) noexcept {
  if (auto ok = validate_geometry(g); !ok) return ok;
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(RingError::Misaligned);
  }
  const std::size_t need = ring_bytes(g);
  if (bytes < need) return std::unexpected(RingError::TooSmall);
  auto* header = new (mem) RingHeader{};  // value-initialised: counters and doorbells zero
  auto& geo = header->geometry;
  geo.magic = kRingMagic;
  geo.layout_version = kRingLayoutVersion;
  geo.capacity = g.capacity;
  geo.mask = g.capacity - 1;
  geo.slot_size = g.slot_size;
  geo.mode = static_cast<std::uint32_t>(g.mode);
  geo.slots_offset = static_cast<std::uint32_t>(ring_layout::kSlotsOffset);
  geo.total_bytes = need;
  // SYNC: relaxed; nothing runs concurrently with format_ring, the memory is
  // published afterwards (Segment::seal's release, or thread creation).
  header->producer.tail.store(initial_index, std::memory_order_relaxed);
  header->consumer.head.store(initial_index, std::memory_order_relaxed);
  std::memset(static_cast<std::byte*>(mem) + ring_layout::kSlotsOffset, 0,
              need - ring_layout::kSlotsOffset);
  return {};
}

RingStats read_ring_stats(const void* mem, std::size_t bytes) noexcept {
  RingStats s;
  if (mem == nullptr || bytes < kRingHeaderBytes ||
      reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return s;
  }
  const auto* header = static_cast<const RingHeader*>(mem);
  const auto& geo = header->geometry;
  if (geo.magic != kRingMagic || geo.layout_version != kRingLayoutVersion) return s;
  s.valid = true;
  s.capacity = geo.capacity;
  s.slot_size = geo.slot_size;
  s.mode = static_cast<RingMode>(geo.mode);
  // SYNC: relaxed loads throughout: a monitoring snapshot, it orders nothing.
  // tail first, then head: the consumer cannot pass a tail we already read,
  // so backlog does not go negative with honest peers.
  s.tail = header->producer.tail.load(std::memory_order_relaxed);
  s.head = header->consumer.head.load(std::memory_order_relaxed);
  s.backlog = s.tail - s.head;
  s.pushed = header->producer.pushed.load(std::memory_order_relaxed);
  s.dropped = header->producer.dropped.load(std::memory_order_relaxed);
  s.overwritten = header->producer.overwritten.load(std::memory_order_relaxed);
  s.timed_out = header->producer.timed_out.load(std::memory_order_relaxed);
  s.max_backlog = std::max({header->producer.max_backlog.load(std::memory_order_relaxed),
                            header->consumer.max_backlog.load(std::memory_order_relaxed),
                            s.backlog <= s.capacity ? s.backlog : 0});
  s.popped = header->consumer.popped.load(std::memory_order_relaxed);
  s.corrupt = header->consumer.corrupt.load(std::memory_order_relaxed);
  return s;
}

namespace detail {

std::expected<RingAttachment, RingError> attach_ring(void* mem, std::size_t bytes) noexcept {
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(RingError::Misaligned);
  }
  if (bytes < ring_layout::kSlotsOffset) return std::unexpected(RingError::TooSmall);
  auto* header = static_cast<RingHeader*>(mem);
  // Each geometry field is read once, into this private copy, then checked;
  // the handle never reads the shared geometry again.
  ring_layout::GeometryLine geo;
  std::memcpy(static_cast<void*>(&geo), &header->geometry, sizeof geo);
  if (geo.magic != kRingMagic || geo.layout_version != kRingLayoutVersion) {
    return std::unexpected(RingError::BadLayout);
  }
  const RingGeometry g{geo.capacity, geo.slot_size, static_cast<RingMode>(geo.mode)};
  if (!validate_geometry(g) || geo.mask != geo.capacity - 1 ||
      geo.slots_offset != ring_layout::kSlotsOffset || geo.total_bytes != ring_bytes(g)) {
    return std::unexpected(RingError::BadLayout);
  }
  if (bytes < ring_bytes(g)) return std::unexpected(RingError::TooSmall);
  RingAttachment a;
  a.header = header;
  a.slots = static_cast<std::byte*>(mem) + ring_layout::kSlotsOffset;
  a.capacity = g.capacity;
  a.mask = g.capacity - 1;
  a.slot_size = g.slot_size;
  a.mode = g.mode;
  return a;
}

}  // namespace detail

// ---------------------------------------------------------------------------

std::expected<RingProducer, RingError> RingProducer::attach(void* mem, std::size_t bytes,
                                                            DoorbellWord* data_doorbell) noexcept {
  auto a = detail::attach_ring(mem, bytes);
  if (!a) return std::unexpected(a.error());
  RingHeader* header = a->header;
  // SYNC: relaxed for our own index (we are its only writer; a previous
  // producer's stores reached us through whatever handed us the ring).
  const std::uint32_t tail = header->producer.tail.load(std::memory_order_relaxed);
  // SYNC: acquire, pairs with the consumer's release store (or CAS) of head.
  const std::uint32_t head = header->consumer.head.load(std::memory_order_acquire);
  if (tail - head > a->capacity) return std::unexpected(RingError::CorruptIndices);
  RingProducer p;
  p.header_ = header;
  p.slots_ = a->slots;
  p.data_bell_ = data_doorbell != nullptr ? data_doorbell : &header->data_bell;
  p.capacity_ = a->capacity;
  p.mask_ = a->mask;
  p.slot_size_ = a->slot_size;
  p.payload_max_ = a->slot_size - static_cast<std::uint32_t>(ring_layout::kSlotHeaderBytes);
  p.mode_ = a->mode;
  p.tail_ = tail;
  p.next_ = tail;
  p.cached_head_ = head;
  // Continue the counters of a previous producer.
  // SYNC: relaxed; single-writer counters, we are now the writer.
  p.pushed_ = header->producer.pushed.load(std::memory_order_relaxed);
  p.dropped_ = header->producer.dropped.load(std::memory_order_relaxed);
  p.overwritten_ = header->producer.overwritten.load(std::memory_order_relaxed);
  p.timed_out_ = header->producer.timed_out.load(std::memory_order_relaxed);
  p.max_backlog_ = header->producer.max_backlog.load(std::memory_order_relaxed);
  // A previous producer killed while waiting for room left `sleeping` set:
  // the consumer would make a useless futex_wake on every pop.
  doorbell_reset_sleeping(header->space_bell);
  return p;
}

std::expected<void, RingError> RingProducer::push_slow(std::span<const std::byte> msg,
                                                       std::uint32_t flags,
                                                       std::chrono::nanoseconds timeout,
                                                       const std::atomic<bool>* give_up,
                                                       const SlotMeta& meta) noexcept {
  // SYNC: acquire, pairs with the release store of whoever raises give_up
  // before notify_space(); the doorbell's fences order that store against
  // our `sleeping` flag, so the wake-up is not lost.
  // Or the consumer left for good (reader_left): nobody makes room.
  auto gave_up = [this, give_up] {
    return (give_up != nullptr && give_up->load(std::memory_order_acquire)) || reader_left();
  };
  // The clock is read only here, when we are about to sleep.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto r = try_push(msg, flags, meta);
    if (r || r.error() != RingError::Full) return r;
    if (gave_up()) return std::unexpected(RingError::Abandoned);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      count_timed_out();
      return std::unexpected(RingError::Timeout);
    }
    doorbell_wait(
        header_->space_bell, [&] { return has_room() || gave_up(); }, deadline - now);
  }
}

std::expected<void, RingError> RingProducer::wait_room(std::chrono::nanoseconds timeout,
                                                       const std::atomic<bool>* give_up) noexcept {
  for (std::uint32_t spin = 0;; ++spin) {
    auto r = ensure_room();
    if (r || r.error() != RingError::Full) {
      spin_.paid_off();
      return r;
    }
    if (spin >= spin_.budget()) break;
    spin_wait_step();
  }
  spin_.wasted();
  // SYNC: acquire, as in push_slow.
  // Or the consumer left for good (reader_left): nobody makes room.
  auto gave_up = [this, give_up] {
    return (give_up != nullptr && give_up->load(std::memory_order_acquire)) || reader_left();
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto r = ensure_room();
    if (r || r.error() != RingError::Full) return r;
    if (gave_up()) return std::unexpected(RingError::Abandoned);
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::unexpected(RingError::Timeout);
    doorbell_wait(
        header_->space_bell, [&] { return has_room() || gave_up(); }, deadline - now);
  }
}

// ---------------------------------------------------------------------------

std::expected<RingConsumer, RingError> RingConsumer::attach(void* mem, std::size_t bytes,
                                                            DoorbellWord* data_doorbell) noexcept {
  auto a = detail::attach_ring(mem, bytes);
  if (!a) return std::unexpected(a.error());
  RingHeader* header = a->header;
  // SYNC: relaxed for our own index (we are its only writer in Spsc mode).
  const std::uint32_t head = header->consumer.head.load(std::memory_order_relaxed);
  // SYNC: acquire, pairs with the producer's release store of tail.
  const std::uint32_t tail = header->producer.tail.load(std::memory_order_acquire);
  if (tail - head > a->capacity) return std::unexpected(RingError::CorruptIndices);
  RingConsumer c;
  c.header_ = header;
  c.slots_ = a->slots;
  c.data_bell_ = data_doorbell != nullptr ? data_doorbell : &header->data_bell;
  c.capacity_ = a->capacity;
  c.mask_ = a->mask;
  c.slot_size_ = a->slot_size;
  c.payload_max_ = a->slot_size - static_cast<std::uint32_t>(ring_layout::kSlotHeaderBytes);
  c.mode_ = a->mode;
  c.head_ = head;
  c.cached_tail_ = head;  // forces a fresh tail read on the first pop
  // SYNC: relaxed; single-writer counters, we are now the writer.
  c.popped_ = header->consumer.popped.load(std::memory_order_relaxed);
  c.corrupt_ = header->consumer.corrupt.load(std::memory_order_relaxed);
  c.max_backlog_ = header->consumer.max_backlog.load(std::memory_order_relaxed);
  // A consumer killed in futex_wait left `sleeping` set. An external doorbell
  // is shared by the owner's other rings (one of which may be waiting right
  // now): its owner resets it, not us.
  if (data_doorbell == nullptr) doorbell_reset_sleeping(header->data_bell);
  return c;
}

std::expected<std::uint32_t, RingError> RingConsumer::pop_slow(std::span<std::byte> out,
                                                               std::uint32_t* flags,
                                                               std::chrono::nanoseconds timeout,
                                                               SlotMeta* meta) noexcept {
  // The clock is read only here, when we are about to sleep.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto r = try_pop(out, flags, meta);
    if (r || r.error() != RingError::Empty) return r;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::unexpected(RingError::Timeout);
    doorbell_wait(
        *data_bell_, [this] { return has_data(); }, deadline - now);
  }
}

}  // namespace ferry::transport
