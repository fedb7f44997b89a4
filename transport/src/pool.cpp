#include "ferry/transport/pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "pool_test_hooks.hpp"

namespace ferry::transport {

using namespace pool_layout;
namespace st = pool_layout::state;
namespace hw = pool_layout::holder;

std::string_view to_string(PoolError e) noexcept {
  switch (e) {
    case PoolError::Exhausted:
      return "the pool has no free chunk of a fitting size";
    case PoolError::TooLarge:
      return "the requested size is larger than the pool's largest chunk";
    case PoolError::InvalidReference:
      return "invalid chunk reference (class, index or generation out of range)";
    case PoolError::StaleReference:
      return "stale chunk reference (the chunk was freed or reused since)";
    case PoolError::NotHeld:
      return "the owner holds no such reference";
    case PoolError::TooManyHolders:
      return "the chunk already has the maximum number of distinct holders";
    case PoolError::InvalidOwner:
      return "invalid owner id (0) or reference count";
    case PoolError::Corrupt:
      return "the pool's shared memory holds an impossible value";
    case PoolError::Contended:
      return "gave up after too many lost races on the pool's shared memory";
    case PoolError::InvalidGeometry:
      return "invalid pool geometry (classes, chunk sizes or counts)";
    case PoolError::BadLayout:
      return "memory is not a pool of this layout version";
    case PoolError::TooSmall:
      return "memory region is too small for the pool";
    case PoolError::Misaligned:
      return "pool memory is not 64-byte aligned";
    case PoolError::Aborted:
      return "operation stopped at a simulated crash point (tests)";
  }
  return "unknown pool error";
}

namespace {

using detail::PoolCrashStep;

// The crash-point hook of the production entry points: never stops.
struct NeverStop {
  constexpr bool operator()(PoolCrashStep /*step*/) const noexcept { return false; }
};
// PoolTestHooks': stops right after `step`.
struct StopAt {
  PoolCrashStep step;
  bool operator()(PoolCrashStep k) const noexcept { return k == step; }
};

// Event counters in shared memory: many writers, read by read_pool_stats.
void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
  // SYNC: relaxed; a counter, it orders nothing.
  counter.fetch_add(n, std::memory_order_relaxed);
}

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) noexcept {
  return (v + a - 1) / a * a;
}

// The whole layout, computed from the classes (ascending chunk sizes,
// multiples of 64). format, attach and read_pool_stats all use it: attach
// recomputes it from the shared class table and requires every stored
// offset to match.
struct Layout {
  std::uint32_t class_count = 0;
  std::array<ClassEntry, kMaxPoolClasses> entries{};
  std::uint64_t total_bytes = 0;
  std::uint64_t total_chunks = 0;
};

std::expected<Layout, PoolError> compute_layout(const PoolClassSpec* classes,
                                                std::uint32_t n) noexcept {
  if (n == 0 || n > kMaxPoolClasses) return std::unexpected(PoolError::InvalidGeometry);
  Layout l;
  l.class_count = n;
  std::uint64_t off = kClassTableOffset + std::uint64_t{n} * sizeof(ClassEntry);
  const std::uint64_t counters_at = off;
  off += std::uint64_t{n} * sizeof(ClassCounters);
  std::uint64_t prev = 0;
  for (std::uint32_t c = 0; c < n; ++c) {
    const std::uint64_t size = classes[c].chunk_size;
    const std::uint32_t count = classes[c].count;
    if (size < kMinPoolChunkSize || size > kMaxPoolChunkSize || size % kCacheLine != 0 ||
        size <= prev) {
      return std::unexpected(PoolError::InvalidGeometry);
    }
    if (count == 0 || count > kMaxChunksPerClass)
      return std::unexpected(PoolError::InvalidGeometry);
    prev = size;
    ClassEntry& e = l.entries[c];
    e.chunk_size = size;
    e.count = count;
    e.hint_words = (count + 63) / 64;
    e.counters_offset = counters_at + std::uint64_t{c} * sizeof(ClassCounters);
    e.meta_offset = off;
    off += std::uint64_t{count} * sizeof(ChunkMeta);
    e.hint_offset = off;
    off += round_up(std::uint64_t{e.hint_words} * sizeof(std::uint64_t), kCacheLine);
    l.total_chunks += count;
  }
  for (std::uint32_t c = 0; c < n; ++c) {
    ClassEntry& e = l.entries[c];
    e.payload_offset = off;
    off += e.chunk_size * e.count;  // <= 2^30 * 2^24: no overflow, and 32 of them neither
  }
  l.total_bytes = off;
  return l;
}

// The geometry, rounded and sorted, as compute_layout wants it.
std::expected<Layout, PoolError> layout_of(const PoolGeometry& g) noexcept {
  const std::size_t n = g.classes.size();
  if (n == 0 || n > kMaxPoolClasses) return std::unexpected(PoolError::InvalidGeometry);
  std::array<PoolClassSpec, kMaxPoolClasses> sorted{};
  for (std::size_t c = 0; c < n; ++c) {
    const std::uint64_t size = g.classes[c].chunk_size;
    if (size == 0 || size > kMaxPoolChunkSize) return std::unexpected(PoolError::InvalidGeometry);
    sorted[c] = {round_up(size, kCacheLine), g.classes[c].count};
  }
  std::sort(
      sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n),
      [](const PoolClassSpec& a, const PoolClassSpec& b) { return a.chunk_size < b.chunk_size; });
  return compute_layout(sorted.data(), static_cast<std::uint32_t>(n));
}

// Reads and checks the header and class table of the pool in `mem`, once.
std::expected<Layout, PoolError> read_layout(const void* mem, std::size_t bytes) noexcept {
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(PoolError::Misaligned);
  }
  if (bytes < kClassTableOffset) return std::unexpected(PoolError::TooSmall);
  const auto* base = static_cast<const std::byte*>(mem);
  const auto* header = reinterpret_cast<const PoolHeader*>(base + kHeaderOffset);
  // SYNC: acquire, pairs with the release store of the magic in format_pool:
  // the header and tables written before it are visible.
  if (header->magic.load(std::memory_order_acquire) != kPoolMagic)
    return std::unexpected(PoolError::BadLayout);
  // Each field read once, into locals, then checked.
  const std::uint32_t version = header->layout_version;
  const std::uint32_t n = header->class_count;
  const std::uint32_t holders = header->holders_per_chunk;
  const std::uint32_t meta_size = header->meta_size;
  const std::uint64_t table_offset = header->class_table_offset;
  const std::uint64_t total = header->total_bytes;
  if (version != kPoolLayoutVersion || holders != kHoldersPerChunk ||
      meta_size != sizeof(ChunkMeta) || table_offset != kClassTableOffset || n == 0 ||
      n > kMaxPoolClasses) {
    return std::unexpected(PoolError::BadLayout);
  }
  if (bytes < kClassTableOffset + std::uint64_t{n} * sizeof(ClassEntry))
    return std::unexpected(PoolError::TooSmall);
  std::array<ClassEntry, kMaxPoolClasses> stored{};
  std::memcpy(stored.data(), base + kClassTableOffset, n * sizeof(ClassEntry));
  std::array<PoolClassSpec, kMaxPoolClasses> specs{};
  for (std::uint32_t c = 0; c < n; ++c) specs[c] = {stored[c].chunk_size, stored[c].count};
  auto layout = compute_layout(specs.data(), n);
  if (!layout) return std::unexpected(PoolError::BadLayout);
  for (std::uint32_t c = 0; c < n; ++c) {
    const ClassEntry& want = layout->entries[c];
    const ClassEntry& got = stored[c];
    if (got.hint_words != want.hint_words || got.meta_offset != want.meta_offset ||
        got.hint_offset != want.hint_offset || got.payload_offset != want.payload_offset ||
        got.counters_offset != want.counters_offset) {
      return std::unexpected(PoolError::BadLayout);
    }
  }
  if (total != layout->total_bytes) return std::unexpected(PoolError::BadLayout);
  if (bytes < total) return std::unexpected(PoolError::TooSmall);
  return layout;
}

// allocated - freed over every owner's line. Every freed count is read
// before any allocated one: a free always follows its allocation, so (on x86,
// where loads are not reordered) the sum is never below the truth; it errs
// high by the frees that happen meanwhile.
std::int64_t in_use_of(const ClassCounters& cc) noexcept {
  std::int64_t freed = 0;
  std::int64_t allocated = 0;
  // SYNC: relaxed; counters (a snapshot, it orders nothing).
  for (const OwnerCounts& o : cc.by_owner) freed += o.freed.load(std::memory_order_relaxed);
  // SYNC: relaxed, as above.
  for (const OwnerCounts& o : cc.by_owner) allocated += o.allocated.load(std::memory_order_relaxed);
  return allocated - freed;
}

// Empties holder slot j, whose holder word we closed into `closed_word`.
// Frees the chunk when no other slot is Live (the CAS that empties the last
// Live slot is the one that makes the chunk Free, with the next generation).
// Returns true if it freed the chunk; false also when someone else already
// emptied the slot (only a node that was declared dead and woke up, or a
// second reclaim, can find that).
std::expected<bool, PoolError> vacate(ChunkMeta& m, unsigned j, std::uint64_t closed_word,
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
    // Still the holder word we closed? A slot is reserved again only after
    // it was emptied, and its reserver rewrites the holder word (new tag)
    // before making it Live; so if the word is still ours, slot j as seen in
    // `s` is still the one we closed.
    // SYNC: acquire, pairs with the release of the reserver's commit CAS.
    if (m.holders[j].load(std::memory_order_acquire) != closed_word) return false;
    const std::uint64_t others = st::live_pairs(s) & ~(std::uint64_t{1} << (2 * j));
    const std::uint64_t next = others != 0 ? st::with_slot(s, j, st::kSlotEmpty)
                                           : st::make_free(st::next_generation(st::generation(s)));
    // SYNC: acq_rel. Release: every holder's last access to the payload
    // happened before its own closing CAS, and those CASes chain through the
    // holder words and this state word (all read-modify-writes) into the one
    // that frees the chunk, which the next claimer acquires. Acquire: pairs
    // with the other closers' releases. seq_cst (the same instruction on
    // x86): a free is in the total order after_free's hint check relies on.
    if (m.state.compare_exchange_weak(s, next, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
      return others == 0;
    }
  }
  bump(k.contended);
  return std::unexpected(PoolError::Contended);
}

}  // namespace

std::size_t pool_bytes(const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  return l ? static_cast<std::size_t>(l->total_bytes) : 0;
}

std::expected<void, PoolError> validate_geometry(const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  if (!l) return std::unexpected(l.error());
  return {};
}

std::expected<void, PoolError> format_pool(void* mem, std::size_t bytes,
                                           const PoolGeometry& geometry) noexcept {
  auto l = layout_of(geometry);
  if (!l) return std::unexpected(l.error());
  if (mem == nullptr || reinterpret_cast<std::uintptr_t>(mem) % kCacheLine != 0) {
    return std::unexpected(PoolError::Misaligned);
  }
  if (bytes < l->total_bytes) return std::unexpected(PoolError::TooSmall);
  auto* base = static_cast<std::byte*>(mem);
  auto* header = new (base + kHeaderOffset) PoolHeader{};
  new (base + kCountersOffset) PoolCounters{};
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    std::memcpy(base + kClassTableOffset + c * sizeof(ClassEntry), &e, sizeof e);
    new (base + e.counters_offset) ClassCounters{};
    auto* meta = reinterpret_cast<ChunkMeta*>(base + e.meta_offset);
    for (std::uint32_t i = 0; i < e.count; ++i) {
      auto* m = new (&meta[i]) ChunkMeta{};
      // SYNC: relaxed throughout: nothing runs concurrently with format_pool;
      // the release store of the magic (and Segment::seal) publishes it all.
      m->state.store(st::make_free(1), std::memory_order_relaxed);
    }
    auto* hints = reinterpret_cast<std::atomic<std::uint64_t>*>(base + e.hint_offset);
    const std::uint32_t padded = static_cast<std::uint32_t>(round_up(e.hint_words, kCacheLine / 8));
    for (std::uint32_t w = 0; w < padded; ++w) {
      std::uint64_t bits = 0;
      if (w + 1 < e.hint_words) {
        bits = ~std::uint64_t{0};
      } else if (w + 1 == e.hint_words) {
        const std::uint32_t rest = e.count - w * 64;  // 1..64
        bits = rest == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << rest) - 1;
      }
      new (&hints[w]) std::atomic<std::uint64_t>(bits);
    }
  }
  header->layout_version = kPoolLayoutVersion;
  header->class_count = l->class_count;
  header->holders_per_chunk = kHoldersPerChunk;
  header->total_bytes = l->total_bytes;
  header->meta_size = sizeof(ChunkMeta);
  header->class_table_offset = kClassTableOffset;
  header->total_chunks = l->total_chunks;
  // SYNC: release, pairs with the acquire load in read_layout (attach,
  // read_pool_stats) for openers that did not get the memory through a seal.
  header->magic.store(kPoolMagic, std::memory_order_release);
  return {};
}

// ---------------------------------------------------------------------------

std::expected<Pool, PoolError> Pool::attach(void* mem, std::size_t bytes) noexcept {
  auto l = read_layout(mem, bytes);
  if (!l) return std::unexpected(l.error());
  auto* base = static_cast<std::byte*>(mem);
  Pool p;
  p.base_ = base;
  p.bytes_ = bytes;
  p.counters_ = reinterpret_cast<PoolCounters*>(base + kCountersOffset);
  p.class_count_ = l->class_count;
  // Handles of different processes start their search in different places,
  // so that they do not all contend for the first hint word.
  const auto spread = static_cast<std::uint32_t>(::getpid()) * 2654435761U;
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    ClassView& v = p.classes_[c];
    v.chunk_size = e.chunk_size;
    v.count = e.count;
    v.hint_words = e.hint_words;
    v.meta = reinterpret_cast<ChunkMeta*>(base + e.meta_offset);
    v.hints = reinterpret_cast<std::atomic<std::uint64_t>*>(base + e.hint_offset);
    v.payload = base + e.payload_offset;
    v.counters = reinterpret_cast<ClassCounters*>(base + e.counters_offset);
    p.cursor_[c] = (spread >> 8) % e.hint_words;
  }
  return p;
}

namespace {
// The line at p, fetched ahead: for writing with PREFETCHW (a NOP on cores
// without it), so that our store finds the line ours.
inline void prefetch_line(const void* p, bool for_write) noexcept {
#if defined(__x86_64__)
  if (for_write) {
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
    return;
  }
#endif
  (void)for_write;
  __builtin_prefetch(p);  // elsewhere a read prefetch still brings the line near
}
}  // namespace

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
  // A bit already set is left alone: in a steady stream nobody clears it
  // (allocate_again claims without it), so the word stays shared in every
  // core's cache instead of moving to each freer's core with a locked or.
  // SYNC: seq_cst, pairs with the seq_cst fetch_and of a scanner in
  // allocate_from and the seq_cst CASes on the state word (the free before
  // this load, the scanner's claim after its fetch_and): if we see the bit
  // still set, the scanner's clear comes later in the single total order,
  // so its claim sees our free and takes the chunk; if its claim failed
  // before our free, its clear came first and we see the bit clear.
  std::atomic<std::uint64_t>& word = cv.hints[index / 64];
  const std::uint64_t bit = std::uint64_t{1} << (index % 64);
  if ((word.load(std::memory_order_seq_cst) & bit) == 0) {
    // SYNC: relaxed: setting a hint orders nothing (claimers synchronise
    // through the state word); the load above decided it was needed.
    word.fetch_or(bit, std::memory_order_relaxed);
  }
  // SYNC: relaxed; counter (on the freer's own line).
  cv.counters->by_owner[freer % kOwnerCountLines].freed.fetch_add(1, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// allocate

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_impl(std::size_t size, OwnerId owner,
                                                       Stop stop) noexcept {
  if (owner == kNoOwner) return std::unexpected(PoolError::InvalidOwner);
  std::uint32_t first = class_count_;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    if (classes_[c].chunk_size >= size) {
      first = c;
      break;
    }
  }
  if (first == class_count_) return std::unexpected(PoolError::TooLarge);
  for (std::uint32_t c = first; c < class_count_; ++c) {
    auto r = allocate_from(c, owner, stop);
    if (r) {
      if (c != first) bump(classes_[c].counters->fallbacks);
      return r;
    }
    if (r.error() != PoolError::Exhausted) return r;
    bump(classes_[c].counters->exhausted);
  }
  return std::unexpected(PoolError::Exhausted);
}

// Claims chunk `m` for `owner` if it is Free and makes it Live with one
// holder (owner, held 1). Returns the generation, or 0 when the chunk was not
// free (a stale hint) or another claimer got it.
template <class Stop>
std::expected<std::uint32_t, PoolError> Pool::claim(pool_layout::ChunkMeta& m, OwnerId owner,
                                                    Stop& stop, std::uint64_t guess) noexcept {
  // SYNC: relaxed; the CAS below re-checks it (with acquire). With a guess
  // (the Free word we expect) the CAS goes first: one transfer of the line
  // from the core that freed the chunk instead of a load and then a CAS.
  std::uint64_t s = guess != 0 ? guess : m.state.load(std::memory_order_relaxed);
  std::uint32_t gen = 0;
  for (std::uint32_t attempt = 0;; ++attempt) {
    if (!st::well_formed(s)) {
      bump(counters_->corrupt);
      return 0;
    }
    if (st::mode(s) != st::kModeFree || attempt == 8) return 0;
    gen = st::generation(s);
    // SYNC: acq_rel on success: acquire pairs with the release CAS that
    // freed the chunk (every former holder is done with the payload before
    // we hand it out). On failure `s` is reloaded: if the chunk is still
    // Free (our first load was an older Free), try again. seq_cst both ways
    // (free on x86): a scanner's claim, success or failure, is in the total
    // order with the hint bit it cleared before (see after_free).
    if (m.state.compare_exchange_strong(s, st::make_claimed(gen, owner), std::memory_order_seq_cst,
                                        std::memory_order_seq_cst)) {
      break;
    }
  }
  if (stop(PoolCrashStep::allocate_claimed)) return std::unexpected(PoolError::Aborted);
  // While Claimed(gen, owner) nobody else writes this chunk's words: other
  // claimers skip it, references to this generation are refused until it is
  // Live, and reclaim_owner undoes the claim only when the owner's process is
  // gone (with process_gone false it leaves it: a node declared dead while
  // merely stopped may wake up right here). So plain stores.
  hw::Fields f;
  f.owner = owner;
  f.held = 1;
  // SYNC: relaxed (the tag of the slot's previous holder word); this load and
  // the store below are published by the release store of Live below.
  f.tag = hw::decode(m.holders[0].load(std::memory_order_relaxed)).tag + 1;
  m.holders[0].store(hw::encode(f), std::memory_order_relaxed);
  // SYNC: relaxed; published by the release store of Live below (stats only).
  m.origin.store(std::uint64_t{owner} | (std::uint64_t{gen} << 32), std::memory_order_relaxed);
  if (stop(PoolCrashStep::allocate_holder_written)) return std::unexpected(PoolError::Aborted);
  // SYNC: release, pairs with the acquire loads of the state word in every
  // operation that then reads holders[0].
  m.state.store(st::with_slot(st::make_live(gen), 0, st::kSlotLive), std::memory_order_release);
  return gen;
}

void Pool::count_allocation(const ClassView& cv, std::uint32_t c, std::uint32_t index,
                            std::uint32_t generation, OwnerId owner, bool searched) noexcept {
  // SYNC: relaxed; a counter, on the allocator's own line.
  cv.counters->by_owner[owner % kOwnerCountLines].allocated.fetch_add(1, std::memory_order_relaxed);
  if (searched) {
    // The class grew into a chunk found through the hints: raise the
    // high-water mark (by CAS) to the sum of every owner's line.
    const std::int64_t now = in_use_of(*cv.counters);
    // SYNC: relaxed; a counter.
    std::int64_t peak = cv.counters->peak_in_use.load(std::memory_order_relaxed);
    while (now > peak &&
           !cv.counters->peak_in_use.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  // SYNC: relaxed; a private guess of this handle (threads share it): the
  // chunk, and the generation it will have once Free again.
  std::atomic_ref<std::uint64_t>(last_[c]).store(
      (std::uint64_t{index} + 1) << 32 | st::next_generation(generation),
      std::memory_order_relaxed);
}

void Pool::note_freed(ChunkRef ref) noexcept {
  // SYNC: relaxed; a private guess of this handle (threads share it).
  std::atomic_ref<std::uint64_t>(freed_[ref.size_class])
      .store((std::uint64_t{ref.index} + 1) << 32 | st::next_generation(ref.generation),
             std::memory_order_relaxed);
}

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_again(std::uint32_t c, std::uint64_t known,
                                                        OwnerId owner, Stop stop) noexcept {
  const ClassView& cv = classes_[c];
  const std::uint64_t index = (known >> 32) - 1;
  if (known == 0 || index >= cv.count) return std::unexpected(PoolError::Exhausted);
  // A chunk this handle knows, Free with generation `known` if nobody took
  // it since. Claiming it directly leaves the class's hint word alone: its
  // bit stays set (a stale hint once we hold the chunk, which is allowed: a
  // hint is only a candidate, the next scanner clears it after one failed
  // claim), so the word is not written on every loan.
  if (stop(PoolCrashStep::allocate_hint_cleared))
    return std::unexpected(PoolError::Aborted);  // nothing done yet: nothing to repair
  ChunkMeta& m = cv.meta[index];
  // The loan's first write goes to the payload the last reader may have in
  // its cache: fetch it for writing while the claim's CAS fetches the metadata.
  prefetch_line(cv.payload + static_cast<std::size_t>(index) * cv.chunk_size, true);
  auto claimed = claim(m, owner, stop, st::make_free(static_cast<std::uint32_t>(known)));
  if (!claimed) return std::unexpected(claimed.error());
  if (*claimed == 0) return std::unexpected(PoolError::Exhausted);  // in use: try another
  if (stop(PoolCrashStep::allocate_live)) return std::unexpected(PoolError::Aborted);
  count_allocation(cv, c, static_cast<std::uint32_t>(index), *claimed, owner, false);
  return ChunkRef{static_cast<std::uint16_t>(c), static_cast<std::uint32_t>(index), *claimed};
}

template <class Stop>
std::expected<ChunkRef, PoolError> Pool::allocate_from(std::uint32_t c, OwnerId owner,
                                                       Stop stop) noexcept {
  // First the chunk this handle freed last: its metadata line is still in
  // our cache (in a ping-pong each side frees the other's sample, then loans
  // its answer). Then the one it allocated last: in a one-way stream the
  // subscriber has freed it by now. Only then the hints.
  // SYNC: relaxed; private guesses of this handle (threads share them).
  std::atomic_ref<std::uint64_t> freed(freed_[c]);
  const std::uint64_t mine = freed.load(std::memory_order_relaxed);
  if (mine != 0) {
    freed.store(0, std::memory_order_relaxed);  // tried once: a claim of ours, or taken
    if (auto r = allocate_again(c, mine, owner, stop); r || r.error() != PoolError::Exhausted)
      return r;
  }
  const std::uint64_t last =
      std::atomic_ref<std::uint64_t>(last_[c]).load(std::memory_order_relaxed);
  if (last != mine) {
    if (auto r = allocate_again(c, last, owner, stop); r || r.error() != PoolError::Exhausted)
      return r;
  }
  const ClassView& cv = classes_[c];
  std::atomic_ref<std::uint32_t> cursor(cursor_[c]);
  // SYNC: relaxed; a private search hint of this handle.
  std::uint32_t start = cursor.load(std::memory_order_relaxed);
  if (start >= cv.hint_words) start = 0;
  for (std::uint32_t k = 0; k < cv.hint_words; ++k) {
    std::uint32_t w = start + k;
    if (w >= cv.hint_words) w -= cv.hint_words;
    std::atomic<std::uint64_t>& word = cv.hints[w];
    // SYNC: relaxed: hints are candidates only; the claim CAS on the chunk's
    // state word is what orders (and decides) anything.
    std::uint64_t bits = word.load(std::memory_order_relaxed);
    // Bounded: each round clears one bit of `bits` or of the shared word;
    // freers setting bits meanwhile cannot keep us here beyond 128 rounds.
    for (std::uint32_t round = 0; bits != 0 && round < 128; ++round) {
      const unsigned b = static_cast<unsigned>(std::countr_zero(bits));
      const std::uint64_t bit = std::uint64_t{1} << b;
      // SYNC: seq_cst, see after_free. Clearing the bit first makes us (almost
      // always) the only candidate for this chunk. Only the old value of
      // this one bit is used, so x86 does it with one `lock btr` instead of a
      // CAS loop (seq_cst is the same instruction).
      const bool was_set = (word.fetch_and(~bit, std::memory_order_seq_cst) & bit) != 0;
      if (!was_set) {
        // Someone else took it: look at what is there now.
        // SYNC: relaxed, a hint as above.
        bits = word.load(std::memory_order_relaxed) & ~bit;
        continue;
      }
      bits &= ~bit;
      const std::uint32_t i = w * 64 + b;
      if (i >= cv.count) {
        bump(counters_->corrupt);  // a hint beyond the class
        continue;
      }
      if (stop(PoolCrashStep::allocate_hint_cleared)) return std::unexpected(PoolError::Aborted);
      ChunkMeta& m = cv.meta[i];
      auto claimed = claim(m, owner, stop, 0);
      if (!claimed) return std::unexpected(claimed.error());
      if (*claimed == 0) {
        // Not free (a stale hint), or lost to another claimer. If it is Free
        // after all (we gave up racing for it), put its hint back.
        // SYNC: relaxed: a hint (see after_free).
        const std::uint64_t now = m.state.load(std::memory_order_relaxed);
        if (st::well_formed(now) && st::mode(now) == st::kModeFree) {
          word.fetch_or(bit, std::memory_order_relaxed);
        }
        continue;
      }
      const std::uint32_t gen = *claimed;
      if (stop(PoolCrashStep::allocate_live)) return std::unexpected(PoolError::Aborted);
      count_allocation(cv, c, i, gen, owner, true);
      if (w != start) cursor.store(w, std::memory_order_relaxed);
      return ChunkRef{static_cast<std::uint16_t>(c), i, gen};
    }
  }
  return std::unexpected(PoolError::Exhausted);
}

std::expected<ChunkRef, PoolError> Pool::allocate(std::size_t size, OwnerId owner) noexcept {
  return allocate_impl(size, owner, NeverStop{});
}

// ---------------------------------------------------------------------------
// holder slots

// Reserves an Empty slot of the chunk whose state was `s` for holder `f` and
// makes it Live. Retry: the state word moved on, read it again.
template <class Stop>
std::expected<Pool::Outcome, PoolError> Pool::reserve(pool_layout::ChunkMeta& m, std::uint64_t s,
                                                      pool_layout::holder::Fields f,
                                                      Stop& stop) noexcept {
  const std::uint64_t empty = st::empty_pairs(s);
  if (empty == 0) {
    bump(counters_->holder_overflow);
    return std::unexpected(PoolError::TooManyHolders);
  }
  const auto j = static_cast<unsigned>(std::countr_zero(empty) / 2);
  // SYNC: acq_rel on success (a read-modify-write in the chain of the state
  // word); relaxed on failure: we read the word again.
  if (!m.state.compare_exchange_strong(s, st::with_slot(s, j, st::kSlotReserving),
                                       std::memory_order_acq_rel, std::memory_order_relaxed)) {
    return Outcome::Retry;
  }
  if (stop(PoolCrashStep::slot_reserving)) return std::unexpected(PoolError::Aborted);
  const std::uint32_t gen = st::generation(s);
  // The slot is ours until we make it Live: nobody else writes its holder
  // word, except a reserver declared dead while stopped here, whose slot was
  // wiped when the chunk was freed and reused since: so a CAS from what we
  // read, retried only while the state still shows our reservation.
  // SYNC: relaxed; published by the release CAS below.
  std::uint64_t old = m.holders[j].load(std::memory_order_relaxed);
  for (std::uint32_t attempt = 0;; ++attempt) {
    f.tag = hw::decode(old).tag + 1;
    // SYNC: relaxed; published by the release CAS below.
    if (m.holders[j].compare_exchange_strong(old, hw::encode(f), std::memory_order_relaxed)) break;
    const std::uint64_t cur = m.state.load(std::memory_order_relaxed);
    if (st::mode(cur) != st::kModeLive || st::generation(cur) != gen ||
        st::slot(cur, j) != st::kSlotReserving || attempt == 8) {
      bump(counters_->stale_refs);
      return std::unexpected(PoolError::StaleReference);
    }
  }
  if (stop(PoolCrashStep::slot_holder_written)) return std::unexpected(PoolError::Aborted);
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    // SYNC: relaxed; the CAS below is what publishes.
    std::uint64_t cur = m.state.load(std::memory_order_relaxed);
    if (!st::well_formed(cur)) {
      bump(counters_->corrupt);
      return std::unexpected(PoolError::Corrupt);
    }
    if (st::mode(cur) != st::kModeLive || st::generation(cur) != gen ||
        st::slot(cur, j) != st::kSlotReserving) {
      // Freed under us: the caller did not hold a reference.
      bump(counters_->stale_refs);
      return std::unexpected(PoolError::StaleReference);
    }
    // SYNC: release (acq_rel), pairs with the acquire loads of the state word
    // before holder words are read: whoever sees slot j Live sees our word.
    if (m.state.compare_exchange_weak(cur, st::with_slot(cur, j, st::kSlotLive),
                                      std::memory_order_acq_rel, std::memory_order_relaxed)) {
      return Outcome::Done;
    }
  }
  bump(counters_->contended);
  return std::unexpected(PoolError::Contended);
}

template <class Stop>
std::expected<void, PoolError> Pool::add_ref_impl(ChunkRef ref, OwnerId owner, std::uint32_t n,
                                                  Stop stop) noexcept {
  if (owner == kNoOwner || n == 0 || n > kMaxRefsPerHolder)
    return std::unexpected(PoolError::InvalidOwner);
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  ChunkMeta& m = *loc->meta;
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(m, ref.generation);
    if (!s) return std::unexpected(s.error());
    bool holds = false;
    bool raced = false;
    for (std::uint64_t live = st::live_pairs(*s); live != 0 && !raced; live &= live - 1) {
      const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
      // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
      std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
      hw::Fields f = hw::decode(w);
      if (f.closed) continue;
      if (!hw::open_well_formed(f)) return corrupt();
      if (f.owner != owner) continue;
      holds = true;
      if (f.held + f.pending + n > kMaxRefsPerHolder) continue;
      f.held += n;
      // SYNC: acq_rel: a link in the chain of count changes on this word.
      if (m.holders[j].compare_exchange_strong(w, hw::encode(f), std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
        return {};
      }
      raced = true;
    }
    if (raced) continue;
    if (!holds) return not_held();
    // Every slot of the owner is full: a new one.
    hw::Fields f;
    f.owner = owner;
    f.held = n;
    auto r = reserve(m, *s, f, stop);
    if (!r) return std::unexpected(r.error());
    if (*r == Outcome::Done) return {};
  }
  return contended();
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
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  ChunkMeta& m = *loc->meta;
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(m, ref.generation);
    if (!s) return std::unexpected(s.error());
    bool giver_holds = false;
    int target = -1;
    std::uint64_t target_word = 0;
    for (std::uint64_t live = st::live_pairs(*s); live != 0; live &= live - 1) {
      const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
      // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
      const std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
      const hw::Fields f = hw::decode(w);
      if (f.closed) continue;
      if (!hw::open_well_formed(f)) return corrupt();
      if (f.owner == from) giver_holds = true;
      if (f.owner == to && target < 0 && (f.aux == from || f.pending == 0) &&
          f.held + f.pending + n <= kMaxRefsPerHolder) {
        target = static_cast<int>(j);
        target_word = w;
      }
    }
    if (!giver_holds) return not_held();
    if (target >= 0) {
      hw::Fields f = hw::decode(target_word);
      f.aux = from;
      f.pending += n;
      // SYNC: acq_rel: a link in the chain of count changes on this word.
      if (m.holders[target].compare_exchange_strong(
              target_word, hw::encode(f), std::memory_order_acq_rel, std::memory_order_relaxed)) {
        return {};
      }
      continue;
    }
    hw::Fields f;
    f.owner = to;
    f.aux = from;
    f.pending = n;
    auto r = reserve(m, *s, f, stop);
    if (!r) return std::unexpected(r.error());
    if (*r == Outcome::Done) return {};
  }
  return contended();
}

std::expected<void, PoolError> Pool::give(ChunkRef ref, OwnerId from, OwnerId to,
                                          std::uint32_t n) noexcept {
  return give_impl(ref, from, to, n, NeverStop{});
}

std::expected<void, PoolError> Pool::transfer(ChunkRef ref, OwnerId from, OwnerId to) noexcept {
  if (from == kNoOwner || to == kNoOwner || from == to)
    return std::unexpected(PoolError::InvalidOwner);
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  ChunkMeta& m = *loc->meta;
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(m, ref.generation);
    if (!s) return std::unexpected(s.error());
    int mine = -1;
    std::uint64_t word = 0;
    for (std::uint64_t live = st::live_pairs(*s); live != 0; live &= live - 1) {
      const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
      // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
      const std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
      const hw::Fields f = hw::decode(w);
      if (f.closed) continue;
      if (!hw::open_well_formed(f)) return corrupt();
      if (f.owner != from) continue;
      // Anything but exactly one held reference: not ours to hand over whole.
      if (mine >= 0 || f.held != 1 || f.pending != 0) return not_held();
      mine = static_cast<int>(j);
      word = w;
    }
    if (mine < 0) return not_held();
    hw::Fields f = hw::decode(word);
    f.owner = to;
    f.aux = from;
    f.held = 0;
    f.pending = 1;
    ++f.tag;  // another owner's word now: a stale expectation of the old one fails
    // SYNC: acq_rel: a link in the chain of count changes on this word (as
    // give's pending +1 and release's close would be); the slot stays Live,
    // so the state word does not change.
    if (m.holders[mine].compare_exchange_strong(word, hw::encode(f), std::memory_order_acq_rel,
                                                std::memory_order_relaxed)) {
      return {};
    }
  }
  return contended();
}

std::expected<void, PoolError> Pool::accept(ChunkRef ref, OwnerId to, OwnerId from) noexcept {
  if (to == kNoOwner || from == kNoOwner) return std::unexpected(PoolError::InvalidOwner);
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  ChunkMeta& m = *loc->meta;
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(m, ref.generation);
    if (!s) return std::unexpected(s.error());
    bool raced = false;
    for (std::uint64_t live = st::live_pairs(*s); live != 0 && !raced; live &= live - 1) {
      const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
      // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
      std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
      hw::Fields f = hw::decode(w);
      if (f.closed) continue;
      if (!hw::open_well_formed(f)) return corrupt();
      if (f.owner != to || f.aux != from || f.pending == 0) continue;
      f.pending -= 1;
      f.held += 1;
      // SYNC: acq_rel: a link in the chain of count changes on this word.
      if (m.holders[j].compare_exchange_strong(w, hw::encode(f), std::memory_order_acq_rel,
                                               std::memory_order_relaxed)) {
        return {};
      }
      raced = true;
    }
    if (!raced) return not_held();
  }
  return contended();
}

template <class Stop>
std::expected<void, PoolError> Pool::drop_impl(ChunkRef ref, OwnerId owner, bool by_giver,
                                               OwnerId other, Stop stop) noexcept {
  if (owner == kNoOwner || (by_giver && other == kNoOwner))
    return std::unexpected(PoolError::InvalidOwner);
  auto loc = locate(ref);
  if (!loc) return std::unexpected(loc.error());
  ChunkMeta& m = *loc->meta;
  const OwnerId closer = by_giver ? other : owner;
  for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
    auto s = live_state(m, ref.generation);
    if (!s) return std::unexpected(s.error());
    bool raced = false;
    for (std::uint64_t live = st::live_pairs(*s); live != 0 && !raced; live &= live - 1) {
      const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
      // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
      std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
      hw::Fields f = hw::decode(w);
      if (f.closed) continue;
      if (!hw::open_well_formed(f)) return corrupt();
      if (f.owner != owner) continue;
      if (by_giver) {
        if (f.aux != other || f.pending == 0) continue;
        f.pending -= 1;
      } else {
        if (f.held == 0) continue;
        f.held -= 1;
      }
      if (f.held + f.pending > 0) {
        // SYNC: acq_rel: a link in the chain of count changes on this word
        // (release: our accesses to the payload precede the eventual free).
        if (m.holders[j].compare_exchange_strong(w, hw::encode(f), std::memory_order_acq_rel,
                                                 std::memory_order_relaxed)) {
          return {};
        }
        raced = true;
        continue;
      }
      // The last reference of this slot.
      if (!by_giver && st::live_pairs(*s) == (std::uint64_t{1} << (2 * j))) {
        // ... and of the chunk: nobody else can change this slot or the
        // state word now (that takes holding a reference, and ours is the
        // only one), so ONE CAS frees the chunk. A node declared dead that
        // wakes up here fails it: reclaim changed the state word.
        // SYNC: acq_rel, as in vacate (release: our payload accesses, and
        // through this slot's CAS chain every earlier holder's, happen before
        // the next claimer's acquire); seq_cst for after_free's hint check.
        std::uint64_t expected = *s;
        if (m.state.compare_exchange_strong(expected,
                                            st::make_free(st::next_generation(ref.generation)),
                                            std::memory_order_seq_cst, std::memory_order_relaxed)) {
          if (stop(PoolCrashStep::chunk_freed)) return std::unexpected(PoolError::Aborted);
          after_free(*loc->cv, ref.index, owner);
          note_freed(ref);
          return {};
        }
        raced = true;
        continue;
      }
      // Close it, naming us, then empty it.
      hw::Fields closed = f;
      closed.aux = closer;
      closed.closed = true;
      const std::uint64_t closed_word = hw::encode(closed);
      // SYNC: acq_rel, as above.
      if (!m.holders[j].compare_exchange_strong(w, closed_word, std::memory_order_acq_rel,
                                                std::memory_order_relaxed)) {
        raced = true;
        continue;
      }
      if (stop(PoolCrashStep::holder_closed)) return std::unexpected(PoolError::Aborted);
      auto freed = vacate(m, j, closed_word, *counters_);
      if (!freed) return std::unexpected(freed.error());
      if (*freed) {
        if (stop(PoolCrashStep::chunk_freed)) return std::unexpected(PoolError::Aborted);
        after_free(*loc->cv, ref.index, closer);
        note_freed(ref);
      }
      return {};
    }
    if (!raced) return not_held();
  }
  return contended();
}

std::expected<void, PoolError> Pool::release(ChunkRef ref, OwnerId owner) noexcept {
  return drop_impl(ref, owner, false, kNoOwner, NeverStop{});
}

std::expected<void, PoolError> Pool::revoke(ChunkRef ref, OwnerId from, OwnerId to) noexcept {
  return drop_impl(ref, to, true, from, NeverStop{});
}

std::expected<std::span<std::byte>, PoolError> Pool::resolve(ChunkRef ref) const noexcept {
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
  prefetch_line(cv.payload + static_cast<std::size_t>(ref.index) * cv.chunk_size, for_write);
}

bool Pool::contains(const void* p) const noexcept {
  const auto* b = static_cast<const std::byte*>(p);
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    if (b >= cv.payload && b < cv.payload + cv.chunk_size * cv.count) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// recovery

template <class Receiver, class Stop>
std::uint64_t Pool::settle_impl(Receiver is_receiver, OwnerId from, OwnerId closer,
                                Stop stop) noexcept {
  if (from == kNoOwner || closer == kNoOwner) return 0;
  std::uint64_t dropped = 0;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      ChunkMeta& m = cv.meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (st::mode(s) != st::kModeLive || !st::well_formed(s)) continue;
      for (std::uint64_t live = st::live_pairs(s); live != 0; live &= live - 1) {
        const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
        for (std::uint32_t attempt = 0; attempt < kPoolMaxRetries; ++attempt) {
          // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
          std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
          hw::Fields f = hw::decode(w);
          if (f.closed || f.aux != from || f.pending == 0 || !hw::open_well_formed(f)) break;
          if (f.owner == kNoOwner || !is_receiver(f.owner)) break;
          const std::uint32_t n = f.pending;
          f.pending = 0;
          if (f.held > 0) {
            // SYNC: acq_rel: a link in the chain of count changes on this word.
            if (m.holders[j].compare_exchange_strong(w, hw::encode(f), std::memory_order_acq_rel,
                                                     std::memory_order_relaxed)) {
              dropped += n;
              break;
            }
            continue;
          }
          // The closer is the caller: if it dies before vacating, its own
          // reclaim finishes the close (crash table, pool.hpp).
          f.aux = closer;
          f.closed = true;
          const std::uint64_t closed_word = hw::encode(f);
          // SYNC: acq_rel, as above.
          if (!m.holders[j].compare_exchange_strong(w, closed_word, std::memory_order_acq_rel,
                                                    std::memory_order_relaxed)) {
            continue;
          }
          dropped += n;
          if (stop(PoolCrashStep::holder_closed)) return dropped;
          auto freed = vacate(m, j, closed_word, *counters_);
          if (freed && *freed) {
            if (stop(PoolCrashStep::chunk_freed)) return dropped;
            after_free(cv, i, closer);
          }
          break;
        }
      }
    }
  }
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
        // Live: each slot the dead owner had, or was closing.
        for (std::uint64_t live = st::live_pairs(s); live != 0; live &= live - 1) {
          const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
          for (std::uint32_t slot_attempt = 0; slot_attempt < kPoolMaxRetries; ++slot_attempt) {
            // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
            std::uint64_t w = m.holders[j].load(std::memory_order_acquire);
            hw::Fields f = hw::decode(w);
            std::uint64_t closed_word = w;
            if (f.closed) {
              if (f.aux != dead) break;  // a live closer finishes it
              ++report.closes_finished;
            } else {
              if (!hw::open_well_formed(f)) {
                bump(counters_->corrupt);
                break;
              }
              if (f.owner != dead) break;
              const std::uint64_t n = f.held + f.pending;
              f.held = 0;
              f.pending = 0;
              f.aux = dead;
              f.closed = true;
              closed_word = hw::encode(f);
              // SYNC: acq_rel: a link in the chain of count changes on this word.
              if (!m.holders[j].compare_exchange_strong(w, closed_word, std::memory_order_acq_rel,
                                                        std::memory_order_relaxed)) {
                continue;
              }
              report.refs_dropped += n;
            }
            auto freed = vacate(m, j, closed_word, *counters_);
            if (freed && *freed) {
              after_free(cv, i, dead);
              ++report.chunks_freed;
            }
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

// ---------------------------------------------------------------------------
// observation

OwnerHoldings Pool::holdings(OwnerId owner) const noexcept {
  OwnerHoldings h;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      const ChunkMeta& m = cv.meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (st::mode(s) != st::kModeLive || !st::well_formed(s)) continue;
      bool has = false;
      for (std::uint64_t live = st::live_pairs(s); live != 0; live &= live - 1) {
        const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
        // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
        const hw::Fields f = hw::decode(m.holders[j].load(std::memory_order_acquire));
        if (f.closed) continue;
        if (f.owner == owner) {
          has = true;
          h.held += f.held;
          h.pending += f.pending;
        }
        if (f.aux == owner) h.given += f.pending;
      }
      if (has) ++h.chunks;
    }
  }
  return h;
}

AccountingReport Pool::check_accounting() const noexcept {
  AccountingReport r;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    r.total += cv.count;
    for (std::uint32_t w = 0; w < cv.hint_words; ++w) {
      // SYNC: relaxed: a snapshot.
      const std::uint64_t bits = cv.hints[w].load(std::memory_order_relaxed);
      const std::uint32_t valid = std::min<std::uint32_t>(64, cv.count - w * 64);
      if (valid < 64 && (bits >> valid) != 0) ++r.corrupt;  // hints beyond the class
    }
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      const ChunkMeta& m = cv.meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (!st::well_formed(s)) {
        ++r.corrupt;
        continue;
      }
      switch (st::mode(s)) {
        case st::kModeFree: {
          ++r.free;
          // SYNC: relaxed: a snapshot.
          if ((cv.hints[i / 64].load(std::memory_order_relaxed) & (std::uint64_t{1} << (i % 64))) ==
              0) {
            ++r.unhinted_free;
          }
          break;
        }
        case st::kModeClaimed:
          ++r.claimed;
          break;
        default: {
          ++r.live;
          std::uint32_t open = 0;
          for (unsigned j = 0; j < kHoldersPerChunk; ++j) {
            const unsigned slot = st::slot(s, j);
            if (slot == st::kSlotReserving) ++r.reserving_slots;
            if (slot != st::kSlotLive) continue;
            // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
            const hw::Fields f = hw::decode(m.holders[j].load(std::memory_order_acquire));
            if (f.closed) {
              ++r.closing_slots;
            } else if (!hw::open_well_formed(f)) {
              ++r.corrupt;
            } else {
              ++open;
              r.held_refs += f.held;
              r.pending_refs += f.pending;
            }
          }
          if (open == 0) ++r.ownerless_live;
        }
      }
    }
  }
  r.ok = r.corrupt == 0 && r.claimed == 0 && r.closing_slots == 0 && r.unhinted_free == 0 &&
         r.ownerless_live == 0 && r.free + r.live == r.total;
  return r;
}

PoolStats Pool::stats(bool scan_chunks) const noexcept {
  return read_pool_stats(base_, bytes_, scan_chunks);
}

PoolStats read_pool_stats(const void* mem, std::size_t bytes, bool scan_chunks) noexcept {
  PoolStats out;
  auto l = read_layout(mem, bytes);
  if (!l) return out;
  const auto* base = static_cast<const std::byte*>(mem);
  const auto& k = *reinterpret_cast<const PoolCounters*>(base + kCountersOffset);
  out.valid = true;
  out.class_count = l->class_count;
  // SYNC: relaxed loads throughout: a monitoring snapshot, it orders nothing.
  out.invalid_refs = k.invalid_refs.load(std::memory_order_relaxed);
  out.stale_refs = k.stale_refs.load(std::memory_order_relaxed);
  out.not_held = k.not_held.load(std::memory_order_relaxed);
  out.corrupt = k.corrupt.load(std::memory_order_relaxed);
  out.holder_overflow = k.holder_overflow.load(std::memory_order_relaxed);
  out.contended = k.contended.load(std::memory_order_relaxed);
  out.reclaims = k.reclaims.load(std::memory_order_relaxed);
  out.reclaimed_refs = k.reclaimed_refs.load(std::memory_order_relaxed);
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    const auto& cc = *reinterpret_cast<const ClassCounters*>(base + e.counters_offset);
    PoolClassStats& cs = out.classes[c];
    cs.chunk_size = e.chunk_size;
    cs.total = e.count;
    // SYNC: relaxed, both: statistics. freed first: a free always follows
    // its allocation, so in_use read this way is never below the truth.
    cs.in_use = in_use_of(cc);
    // The high-water mark: what allocations recorded, or what we see now
    // (recycling allocations do not record it; pool_layout.hpp).
    const std::int64_t peak = std::max(cc.peak_in_use.load(std::memory_order_relaxed), cs.in_use);
    cs.low_water = std::max<std::int64_t>(0, std::int64_t{e.count} - peak);
    cs.exhausted = cc.exhausted.load(std::memory_order_relaxed);
    cs.fallbacks = cc.fallbacks.load(std::memory_order_relaxed);
    if (!scan_chunks) continue;
    cs.scanned = true;
    const auto* meta = reinterpret_cast<const ChunkMeta*>(base + e.meta_offset);
    for (std::uint32_t i = 0; i < e.count; ++i) {
      const ChunkMeta& m = meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live (the
      // holder words read below are theirs or newer). A snapshot.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (!st::well_formed(s)) continue;
      const std::uint64_t mode = st::mode(s);
      if (mode == st::kModeFree) {
        ++cs.free;
        continue;
      }
      if (mode == st::kModeClaimed) {
        ++cs.claiming;
        continue;
      }
      // SYNC: relaxed; published with the Live state acquired above.
      const std::uint64_t origin = m.origin.load(std::memory_order_relaxed);
      const auto origin_owner = static_cast<std::uint16_t>(origin & 0xFFFF);
      bool loaned = static_cast<std::uint32_t>(origin >> 32) == st::generation(s);
      for (std::uint64_t live = st::live_pairs(s); live != 0 && loaned; live &= live - 1) {
        const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
        // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
        const hw::Fields f = hw::decode(m.holders[j].load(std::memory_order_acquire));
        if (f.closed) continue;
        if (f.owner != origin_owner || f.pending != 0) loaned = false;
      }
      if (loaned) {
        ++cs.loaned;
      } else {
        ++cs.in_flight;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------

namespace detail {

std::expected<ChunkRef, PoolError> PoolTestHooks::allocate(Pool& pool, std::size_t size,
                                                           OwnerId owner,
                                                           PoolCrashStep stop_after) noexcept {
  return pool.allocate_impl(size, owner, StopAt{stop_after});
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
                                                      PoolCrashStep stop_after) noexcept {
  return pool.drop_impl(ref, owner, false, kNoOwner, StopAt{stop_after});
}
std::expected<void, PoolError> PoolTestHooks::revoke(Pool& pool, ChunkRef ref, OwnerId from,
                                                     OwnerId to,
                                                     PoolCrashStep stop_after) noexcept {
  return pool.drop_impl(ref, to, true, from, StopAt{stop_after});
}
std::uint64_t PoolTestHooks::settle_pending(Pool& pool, OwnerId to, OwnerId from,
                                            PoolCrashStep stop_after) noexcept {
  if (to == kNoOwner) return 0;
  return pool.settle_impl([to](OwnerId o) { return o == to; }, from, to, StopAt{stop_after});
}

}  // namespace detail

}  // namespace ferry::transport
