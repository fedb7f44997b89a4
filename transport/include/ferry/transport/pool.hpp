#pragma once
// The loaned-memory pool: fixed-size chunks in size classes, in ONE shared
// memory region (a Segment of kind Pool made by ferryd, or a heap buffer in
// tests), used by many processes and threads at once with no lock, no system
// call and no heap allocation on the hot path. docs/design/pool.md is the
// design (how a chunk's holders are counted and reclaimed, the crash table,
// the memory ordering); this is the summary the code needs at hand.
//
// ## References, owners, holders
// A chunk is named by a ChunkRef {class, index, generation} packed into a
// u64 (fits a ring slot; copied atomically); never a pointer. The chunk's
// generation moves on when it is freed, so a stale reference is recognised
// and refused (counted), never dereferenced.
//
// Every reference to a chunk belongs to an OWNER: a small integer
// (1..65535) that ferryd gives each node (0 = none). References are counted
// in HOLDERS: a holder word names one owner and counts its references:
//   held     the owner has them: its loan, history it keeps, samples it took
//   pending  someone (the holder's giver, `aux`) gave them to the owner and
//            the owner has not accepted them yet: they sit in its queue, or
//            are being pushed there
// Every change of a count is ONE atomic instruction on the word that names
// its owner: a process killed at any instruction leaves every reference
// attributed to exactly one owner, which is what makes reclaim exact.
//
// ## Holder nodes and chains (docs/design/pool.md, "Holder nodes")
// A holder node is a state word (generation, mode Free/Claimed/Live, two
// bits per slot: Empty/Reserving/Live) and 14 slot words: slots 0..12 hold
// holders, slot 13 links the next node. A chunk's metadata is its first
// node; past its 13 holders, overflow nodes from the pool's node area are
// linked into the chunk's CHAIN, so a chunk has any number of holders. The
// CAS that empties a node's last Live slot frees it (the chunk's own node:
// the chunk); whoever frees an overflow node then closes the link to it and
// empties that slot, and so on up the chain. A chain grows at its end: claim
// a free node, write its holder, reserve and write the link slot, make the
// link Live, then the node.
//
// ## The protocol (what core does; every step is one call here)
//   publish:  ref = allocate(size, P)            P: held 1 (the loan)
//             write the payload
//             for each subscriber queue q (subscriber node S):
//               give(ref, P, S)                  S: pending +1 (giver P)
//               push ref.pack() into q           (ring tail store: visible to S)
//               if the push failed: revoke(ref, P, S)
//               drop_oldest discarded an older R: revoke(R, P, S)
//             release(ref, P)   (or keep it as history: give it later to a late joiner)
//             one subscriber queue and no history: transfer(ref, P, S) replaces
//               give + release (P's held 1 becomes S's pending 1, one CAS)
//   take:     pop a packed ref from q; accept(ref, S, P)   S: pending -1, held +1
//             resolve(ref) -> the payload; the user reads it
//             release(ref, S)
//   S leaves a queue of a DEAD publisher P: drain it, then settle_pending(S, P).
//   ferryd, when node D is dead: reclaim_owner(D) (idempotent), with
//             dead_receiver; revoke_given(P, D) by a publisher still giving
//             to D after that. Run reclaim_owner again once D's process is
//             gone, and never give D's id to a new node.
// Queued references are the SUBSCRIBER's (pending in its holder) from the
// moment give() returns.
//
// ## Crash table, ordering, free hints, sizing, limits, cost
// docs/design/pool.md. The crash-point hooks (transport/src/
// pool_test_hooks.hpp) stop each operation after each step of that table.
// In short: a chunk or node that is Claimed is undone or finished by
// reclaim(claimer) (only once its process is gone); a closed slot is
// finished by reclaim(closer); a free node or chunk without its hint, and a
// link to a freed node, are repaired by any reclaim; a phantom pending
// reference by its receiver's settle_pending. Nothing is freed twice: a
// reference is dropped only by a CAS on the one word that counts it, and a
// slot is emptied only after checking its word is still the one its closer
// closed.
//
// ## Never trusting shared memory
// attach() checks magic, version, class table, node area and every offset
// against the memory size ONCE and keeps the geometry privately (later
// writes to the shared header change nothing). Every reference is checked
// (class, index, generation) before use; every state, holder and link word
// read is checked for impossible values (PoolError::Corrupt, counted); a
// chain is followed only into a node that is Live with the link's generation
// and names this chunk as its origin, and never further than the node area
// has nodes; hint bits beyond a class are ignored; every loop is bounded
// (hint scan by the class size, CAS retries by kPoolMaxRetries).
//
// ## Where the code is (transport/src)
// pool_format.cpp (format, attach), pool_allocate.cpp, pool_holders.cpp
// (add_ref .. revoke, chains, freeing), pool_recovery.cpp (settle, reclaim),
// pool_observe.cpp (stats, scans), pool_error.cpp. pool_walk.hpp is the one
// way to walk chains and read and change slot words; pool_hints.hpp the
// free hints; pool_test_hooks.hpp the crash points.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/transport/platform.hpp"
#include "ferry/transport/pool_layout.hpp"

namespace ferry::transport {

// A node slot (docs/concepts/glossary.md): the number ferryd gives each
// node, its heartbeat slot's index and the owner its pool references are
// counted under. 0 is nobody.
using NodeSlot = std::uint16_t;
inline constexpr NodeSlot kNoNodeSlot = 0;
// The pool's word for a node slot: whose references a holder slot counts.
using OwnerId = NodeSlot;
inline constexpr OwnerId kNoOwner = kNoNodeSlot;

// CAS loops give up (PoolError::Contended) after this many lost races. Only a
// peer scribbling over the pool, or pathological contention, gets there.
inline constexpr std::uint32_t kPoolMaxRetries = 1U << 20;

struct ChunkRef {
  // Eight bytes, so that a reference travels in one register: passed or
  // returned as a 12-byte struct, GCC assembled it on the stack from narrow
  // stores and read it back wide, a failed store forward that waited for
  // every older store (a ring slot's, from the other core) to commit.
  // One 64-bit unit: as two 32-bit words it was still built in halves.
  std::uint64_t size_class : 8 = 0;   // < kMaxPoolClasses
  std::uint64_t index : 24 = 0;       // < kMaxChunksPerClass
  std::uint64_t generation : 32 = 0;  // never 0 for a real chunk

  // bits 0..31 generation, 32..55 index, 56..63 class. 0 is "no reference".
  [[nodiscard]] constexpr std::uint64_t pack() const noexcept {
    return std::uint64_t{generation} | (std::uint64_t{index & 0xFF'FFFFU} << 32) |
           (std::uint64_t{size_class & 0xFFU} << 56);
  }
  [[nodiscard]] static constexpr ChunkRef unpack(std::uint64_t w) noexcept {
    return of(static_cast<std::uint32_t>(w >> 56), static_cast<std::uint32_t>(w >> 32),
              static_cast<std::uint32_t>(w));
  }
  // From its parts, each cut to its field's width (as pack() cut them).
  [[nodiscard]] static constexpr ChunkRef of(std::uint32_t size_class, std::uint32_t index,
                                             std::uint32_t generation) noexcept {
    return ChunkRef{size_class & 0xFFU, index & 0xFF'FFFFU, generation};
  }
  friend constexpr bool operator==(const ChunkRef&, const ChunkRef&) = default;
};
static_assert(sizeof(ChunkRef) == 8);

enum class PoolError : std::uint8_t {
  Exhausted,         // no free chunk in any class large enough
  TooLarge,          // larger than the largest class
  InvalidReference,  // class, index or generation 0 out of range: forged or corrupted (counted)
  StaleReference,    // the chunk was freed since (generation) or is not live (counted)
  NotHeld,           // the owner holds no such reference (no pending one from that giver) (counted)
  TooManyHolders,    // the chunk's holder chain cannot grow: no free overflow node (counted)
  InvalidOwner,      // owner id 0, or a count of 0 or above kMaxRefsPerHolder
  Corrupt,           // an impossible value in the pool's shared memory (counted)
  Contended,         // gave up after kPoolMaxRetries lost races (counted)
  InvalidGeometry,   // format: no class, too many, a size or count out of range, duplicates
  BadLayout,         // attach: not a pool of this layout (magic, version, class table, offsets)
  TooSmall,          // the memory is smaller than the pool needs
  Misaligned,        // the memory is not 64-byte aligned
  Aborted,           // tests only: the operation stopped at a simulated crash point
};

[[nodiscard]] std::string_view to_string(PoolError e) noexcept;

// ---------------------------------------------------------------------------
// Geometry

struct PoolClassSpec {
  std::uint64_t chunk_size = 0;  // bytes; rounded up to a multiple of 64
  std::uint32_t count = 0;       // chunks, 1..kMaxChunksPerClass
};

struct PoolGeometry {
  std::vector<PoolClassSpec> classes;  // any order; sorted by chunk size in the pool
  // Overflow holder nodes (13 holders each) for chunks with more than 13
  // holders at once; 0: default_holder_nodes(total chunks).
  std::uint32_t holder_nodes = 0;
};

// The overflow nodes of a pool of `total_chunks` chunks when the geometry
// does not say: one per chunk (a fan-out of 25 readers on every chunk at
// once), at least 64.
[[nodiscard]] std::uint32_t default_holder_nodes(std::uint64_t total_chunks) noexcept;
// Overflow nodes that let each of `chunks` chunks have `holders` holders at
// once (a publisher and its readers), at least 64, at most kMaxHolderNodes.
[[nodiscard]] std::uint32_t holder_nodes_for(std::uint64_t chunks, std::uint64_t holders) noexcept;

// Bytes a pool of this geometry needs (0 when the geometry is invalid).
[[nodiscard]] std::size_t pool_bytes(const PoolGeometry& geometry) noexcept;
[[nodiscard]] std::expected<void, PoolError> validate_geometry(
    const PoolGeometry& geometry) noexcept;

// Initialises a pool in `mem` (64-byte aligned, `bytes` >= pool_bytes): every
// chunk free, generation 1. Payloads are not touched. Not concurrent with
// anything; publish the memory afterwards (Segment::seal).
[[nodiscard]] std::expected<void, PoolError> format_pool(void* mem, std::size_t bytes,
                                                         const PoolGeometry& geometry) noexcept;

// ---------------------------------------------------------------------------
// Observability

struct PoolClassStats {
  std::uint64_t chunk_size = 0;
  std::uint32_t total = 0;
  // From a scan of the chunks' state words (exact when nothing runs; a
  // snapshot otherwise). `scanned` false: not scanned, these are 0.
  bool scanned = false;
  std::uint32_t free = 0;
  std::uint32_t loaned =
      0;  // held only by the owner that allocated it (a loan, or history it keeps)
  std::uint32_t in_flight = 0;  // live and held or queued by someone else
  std::uint32_t claiming =
      0;  // Claimed: an allocation in progress, or a dead allocator's (reclaim)
  // Running counters (no scan).
  std::int64_t in_use = 0;     // allocated minus freed
  std::int64_t low_water = 0;  // total - peak in_use: the fewest free chunks seen
  std::uint64_t exhausted = 0;
  std::uint64_t fallbacks = 0;
};

struct PoolStats {
  bool valid = false;  // false: not a pool of this layout (everything else is zero)
  std::uint32_t class_count = 0;
  std::array<PoolClassStats, kMaxPoolClasses> classes{};
  std::uint64_t invalid_refs = 0;
  std::uint64_t stale_refs = 0;
  std::uint64_t not_held = 0;
  std::uint64_t corrupt = 0;
  std::uint64_t holder_overflow = 0;
  std::uint64_t contended = 0;
  std::uint64_t reclaims = 0;
  std::uint64_t reclaimed_refs = 0;
  // The overflow-node area (holders beyond a chunk's own 13).
  std::uint32_t holder_nodes = 0;            // total
  std::uint32_t holder_nodes_free = 0;       // from the scan (0 when not scanned)
  std::uint64_t holder_nodes_exhausted = 0;  // a chain could not grow (TooManyHolders)
  std::uint64_t holder_nodes_linked = 0;     // overflow nodes linked into chains, ever
};

// A snapshot of a pool's counters from any mapping, read-only included. It
// validates the header and class table like attach. With `scan_chunks` it
// also reads every chunk's state word (exact free/loaned/in_flight; costs one
// cache line per chunk, never a write).
[[nodiscard]] PoolStats read_pool_stats(const void* mem, std::size_t bytes,
                                        bool scan_chunks = true) noexcept;

// What one owner has in the pool (a scan).
struct OwnerHoldings {
  std::uint64_t chunks = 0;   // chunks where it has a slot
  std::uint64_t held = 0;     // references it holds
  std::uint64_t pending = 0;  // references given to it, not accepted yet
  std::uint64_t given = 0;    // references it gave that are still pending with their receivers
};

// One live chunk and who keeps it, from a scan (Pool::live_chunks): what
// `ferry pool` needs to say which topics hold the pool's memory.
struct ChunkHolder {
  OwnerId owner = kNoOwner;
  OwnerId giver =
      kNoOwner;  // who gave them (it stays after they are taken); kNoOwner: its own allocation
  std::uint32_t held = 0;
  std::uint32_t pending = 0;
};
struct LiveChunk {
  ChunkRef ref;
  std::uint64_t chunk_size = 0;
  OwnerId origin =
      kNoOwner;  // the owner that allocated it (kNoOwner: not recorded for this generation)
  std::uint32_t holder_count = 0;    // holders.size()
  std::vector<ChunkHolder> holders;  // every open holder, the chunk's chain in order
};

// Invariants checked by a scan; meant for tests and `ferry` when nothing runs.
struct AccountingReport {
  bool ok = false;  // every chunk Free or Live with a holder, nothing half-done, nothing corrupt
  std::uint64_t total = 0;
  std::uint64_t free = 0;
  std::uint64_t live = 0;
  std::uint64_t held_refs = 0;
  std::uint64_t pending_refs = 0;
  std::uint64_t claimed = 0;          // half-done allocations
  std::uint64_t closing_slots = 0;    // closed holders not yet emptied
  std::uint64_t reserving_slots = 0;  // stuck reservations (not an error: wiped on free)
  std::uint64_t unhinted_free =
      0;  // free chunks whose hint bit is clear (unreachable until repaired)
  std::uint64_t ownerless_live = 0;  // live chunks without an open holder
  std::uint64_t corrupt = 0;         // malformed words
  // The overflow-node area.
  std::uint64_t nodes_total = 0;
  std::uint64_t nodes_free = 0;
  std::uint64_t nodes_linked = 0;    // Live nodes reached through some chunk's chain
  std::uint64_t nodes_claimed = 0;   // half-done extensions
  std::uint64_t nodes_orphaned = 0;  // Live nodes no chain reaches (never in a correct pool)
  std::uint64_t nodes_unhinted = 0;  // free nodes whose hint bit is clear
  std::uint64_t stale_links = 0;     // links to a freed node, not yet closed
};

struct ReclaimReport {
  std::uint64_t claims_undone = 0;  // chunks and overflow nodes the owner was allocating or linking
  std::uint64_t claims_left = 0;   // ... left alone: its process may still run (process_gone false)
  std::uint64_t refs_dropped = 0;  // held + pending references it had
  std::uint64_t closes_finished = 0;  // closes it had started
  std::uint64_t chunks_freed = 0;
  std::uint64_t hints_repaired = 0;  // free chunks made findable again (any owner's crash)
  std::uint64_t given_dropped = 0;   // pending references it gave to dead receivers
  std::uint64_t links_repaired = 0;  // links to freed overflow nodes closed (any owner's crash)
};

namespace detail {
struct PoolTestHooks;  // simulated crash points (tests only)
enum class PoolCrashStep : std::uint8_t;
struct NodeView;  // one node of a chunk's holder chain (pool_walk.hpp)
struct HolderRead;
// What attach learned (and checked) about the overflow-node area.
struct NodeArea {
  std::uint32_t count = 0;
  std::uint32_t hint_words = 0;
  pool_layout::ChunkMeta* meta = nullptr;
  std::atomic<std::uint64_t>* hints = nullptr;
  pool_layout::NodeCounters* counters = nullptr;
};
}  // namespace detail

// ---------------------------------------------------------------------------
// A handle on a formatted pool. Cheap to use from many threads at once.
class Pool {
 public:
  // Validates the pool in `mem` once (magic, version, class table, offsets
  // and sizes against `bytes`) and keeps the geometry privately.
  [[nodiscard]] static std::expected<Pool, PoolError> attach(void* mem, std::size_t bytes) noexcept;

  Pool(Pool&&) noexcept = default;
  Pool& operator=(Pool&&) noexcept = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() = default;

  // A chunk of at least `size` bytes from the smallest class that fits, else
  // the next larger class with a free chunk; `owner` holds 1 reference.
  [[nodiscard]] std::expected<ChunkRef, PoolError> allocate(std::size_t size,
                                                            OwnerId owner) noexcept;

  // `owner`, holding `ref`, takes `n` more references for itself.
  [[nodiscard]] std::expected<void, PoolError> add_ref(ChunkRef ref, OwnerId owner,
                                                       std::uint32_t n = 1) noexcept;
  // `owner` drops one reference it holds; the last reference frees the chunk.
  [[nodiscard]] std::expected<void, PoolError> release(ChunkRef ref, OwnerId owner) noexcept;

  // `from`, holding `ref`, gives `n` references to `to` (pending with `to`,
  // giver `from`): call it before pushing the reference into to's queue.
  [[nodiscard]] std::expected<void, PoolError> give(ChunkRef ref, OwnerId from, OwnerId to,
                                                    std::uint32_t n = 1) noexcept;
  // give(ref, from, to) and release(ref, from) in ONE CAS, when `from`'s
  // only reference is its one held reference (a fresh loan with one
  // subscriber): from's holder word becomes to's pending one (giver `from`).
  // NotHeld when `from` holds anything else (the caller gives and releases).
  // Crash-wise it is a give whose giver then released at once: before the
  // CAS reclaim(from) frees the chunk; after it the reference is to's
  // (queued, or a phantom that settle_pending(to, from) drops).
  [[nodiscard]] std::expected<void, PoolError> transfer(ChunkRef ref, OwnerId from,
                                                        OwnerId to) noexcept;
  // Starts fetching the first line of ref's payload (for writing: to own
  // it), reading nothing shared: a caller that is about to wait for the
  // chunk's metadata (accept's CAS) overlaps the two transfers from the
  // other process's core. A bad reference is ignored.
  void prefetch_payload(ChunkRef ref, bool for_write) const noexcept;
  // `to` took a reference given by `from` out of its queue: pending -> held.
  [[nodiscard]] std::expected<void, PoolError> accept(ChunkRef ref, OwnerId to,
                                                      OwnerId from) noexcept;
  // `from` takes back one reference it gave `to` that `to` will never take
  // (the push failed, or drop_oldest discarded it); may free the chunk.
  [[nodiscard]] std::expected<void, PoolError> revoke(ChunkRef ref, OwnerId from,
                                                      OwnerId to) noexcept;

  // The payload of a live chunk (chunk_size bytes, 64-byte aligned). Checks
  // class, index and generation; a bad reference is counted, never followed.
  [[nodiscard]] std::expected<std::span<std::byte>, PoolError> resolve(ChunkRef ref) const noexcept;

  // Recovery (scans every chunk; not for the hot path).
  // `to` drained every queue it had from the dead `from`: drop every pending
  // reference `from` gave `to` (phantoms). Returns how many it dropped.
  std::uint64_t settle_pending(OwnerId to, OwnerId from) noexcept;
  // The giver's side of the same: `from` has stopped giving to `to`, whose
  // node is dead (every queue to it was dropped by the thread that gave),
  // and drops every pending reference it gave `to` that `to` can no longer
  // take: those given after ferryd reclaimed `to`. Returns how many.
  std::uint64_t revoke_given(OwnerId from, OwnerId to) noexcept;
  // `owner` is dead: drop everything attributed to it, finish its half-done
  // closes, undo its half-done allocations, repair lost free hints.
  // Concurrent with other processes using the pool; idempotent.
  // `process_gone`: the owner's process no longer exists (ferryd saw it exit,
  // or killed it). False when it was declared dead but may only be stopped
  // (SIGSTOP, a debugger): everything is reclaimed the same, except chunks it
  // is in the middle of allocating (it may wake up and finish writing them):
  // run it again with true once the process is gone.
  // `dead_receiver` (optional): also drop the pending references `owner`
  // gave to receivers it says are dead (a publisher that died while still
  // giving to a subscriber that had died before it).
  ReclaimReport reclaim_owner(OwnerId owner, bool process_gone = true,
                              const std::function<bool(OwnerId)>& dead_receiver = {}) noexcept;

  [[nodiscard]] OwnerHoldings holdings(OwnerId owner) const noexcept;
  // Every live chunk with its open holders (a scan; reads only, so a
  // read-only mapping serves; a snapshot while others run).
  [[nodiscard]] std::vector<LiveChunk> live_chunks() const;

  [[nodiscard]] AccountingReport check_accounting() const noexcept;
  [[nodiscard]] PoolStats stats(bool scan_chunks = true) const noexcept;

  [[nodiscard]] std::uint32_t class_count() const noexcept { return class_count_; }
  [[nodiscard]] std::uint64_t chunk_size(std::uint32_t size_class) const noexcept {
    return size_class < class_count_ ? classes_[size_class].chunk_size : 0;
  }
  [[nodiscard]] std::uint32_t chunk_count(std::uint32_t size_class) const noexcept {
    return size_class < class_count_ ? classes_[size_class].count : 0;
  }
  // Overflow holder nodes (docs/design/pool.md): 13 holders each.
  [[nodiscard]] std::uint32_t holder_nodes() const noexcept { return nodes_.count; }
  [[nodiscard]] std::uint64_t max_chunk_size() const noexcept {
    return class_count_ == 0 ? 0 : classes_[class_count_ - 1].chunk_size;
  }
  // True if `p` lies inside a chunk payload of this pool (zero-copy checks).
  [[nodiscard]] bool contains(const void* p) const noexcept;

 private:
  friend struct detail::PoolTestHooks;

  // What attach learned (and checked) about one class; never re-read from
  // shared memory.
  struct ClassView {
    std::uint64_t chunk_size = 0;
    std::uint32_t count = 0;
    std::uint32_t hint_words = 0;
    pool_layout::ChunkMeta* meta = nullptr;
    std::atomic<std::uint64_t>* hints = nullptr;
    std::byte* payload = nullptr;
    pool_layout::ClassCounters* counters = nullptr;
  };

  struct Located {
    const ClassView* cv;
    pool_layout::ChunkMeta* meta;
  };
  enum class Outcome : std::uint8_t { Done, Retry };

  Pool() = default;

  [[nodiscard]] std::expected<Located, PoolError> locate(ChunkRef ref) const noexcept;
  [[nodiscard]] std::expected<std::uint64_t, PoolError> live_state(
      const pool_layout::ChunkMeta& m, std::uint32_t generation) const noexcept;
  // Chunk `index` was freed by `freer`: its hint, the freer's count.
  void after_free(const ClassView& cv, std::uint32_t index, OwnerId freer) noexcept;
  // Overflow node `index` was freed: its hint.
  void after_free_node(std::uint32_t index) noexcept;
  [[nodiscard]] std::unexpected<PoolError> corrupt() const noexcept;
  [[nodiscard]] std::unexpected<PoolError> not_held() const noexcept;
  [[nodiscard]] std::unexpected<PoolError> contended() const noexcept;

  // The operations, with a crash-point hook: `stop(k)` true makes the
  // operation return Aborted right after its step k, leaving shared memory
  // as a kill -9 there would. Production passes a hook that is constant
  // false (it compiles away).
  template <class Stop>
  std::expected<ChunkRef, PoolError> allocate_impl(std::size_t size, OwnerId owner,
                                                   Stop stop) noexcept;
  template <class Stop>
  std::expected<ChunkRef, PoolError> allocate_from(std::uint32_t c, OwnerId owner,
                                                   Stop stop) noexcept;
  // Chunk `known` ((index + 1) << 32 | the generation it has when Free) of
  // class c, if it is Free with that generation (Exhausted: it is not).
  template <class Stop>
  std::expected<ChunkRef, PoolError> allocate_again(std::uint32_t c, std::uint64_t known,
                                                    OwnerId owner, Stop stop) noexcept;
  // This handle freed `ref`: the next allocate in its class tries it first.
  void note_freed(ChunkRef ref) noexcept;
  // Claims node `m` (a chunk, or an overflow node) for `owner` if it is
  // Free: the generation, or 0 when it was not free (a stale hint) or
  // another claimer got it. `guess`: the Free state word expected (0: load it).
  std::expected<std::uint32_t, PoolError> claim(pool_layout::ChunkMeta& m, OwnerId owner,
                                                std::uint64_t guess) noexcept;
  // Makes the chunk claimed by `owner` at generation `gen` Live with one
  // holder (owner, held 1).
  template <class Stop>
  std::expected<std::uint32_t, PoolError> make_loan(pool_layout::ChunkMeta& m, OwnerId owner,
                                                    std::uint32_t gen, Stop& stop) noexcept;
  // Searches `hints` (`words` words, `count` bits that count) from `cursor`
  // for a node that `try_claim(index)` claims (its generation; 0: not
  // claimed). Exhausted when none.
  template <class TryClaim, class Stop>
  std::expected<std::pair<std::uint32_t, std::uint32_t>, PoolError> claim_hinted(
      std::atomic<std::uint64_t>* hints, std::uint32_t words, std::uint32_t count,
      std::uint32_t& cursor, pool_layout::ChunkMeta* meta, detail::PoolCrashStep hint_step,
      Stop& stop, TryClaim try_claim) noexcept;
  // Counts an allocation by `owner` on its line; `searched`: found through
  // the hints, so it also raises the high-water mark.
  void count_allocation(const ClassView& cv, std::uint32_t c, std::uint32_t index,
                        std::uint32_t generation, OwnerId owner, bool searched) noexcept;
  // Runs step(meta, s) with the Live state s of ref's chunk (at ref's
  // generation) until it returns Done or fails; Retry: it lost a race, read
  // the state again (Contended after kPoolMaxRetries).
  template <class Step>
  std::expected<void, PoolError> update_live(ChunkRef ref, Step step) noexcept;
  // Calls visit(class, index, meta, s) for each chunk whose state word
  // s (one acquire load) is well formed and Live: the scans (pool_walk.hpp).
  template <class Visit>
  void for_each_live_chunk(Visit visit) const noexcept;
  // Slot j of `node` (of chunk `index` of cv), closed into `closed` by
  // `closer`: vacates it and, when that freed the node, finishes what
  // freeing it leaves: a chunk's hint, or an overflow node's hint and its
  // link (unlink). True: the chunk was freed.
  template <class Stop>
  std::expected<bool, PoolError> finish_close(const ClassView& cv, std::uint32_t index,
                                              const detail::NodeView& node, unsigned j,
                                              std::uint64_t closed, OwnerId closer,
                                              Stop& stop) noexcept;
  // Overflow node `node` (generation `gen`) of chunk `index` of cv was
  // freed: closes the link to it (naming `closer`) and vacates that slot,
  // and so on up the chain while that frees nodes. True: the chunk was freed.
  template <class Stop>
  std::expected<bool, PoolError> unlink(const ClassView& cv, std::uint32_t index,
                                        std::uint32_t node, std::uint32_t gen, OwnerId closer,
                                        Stop& stop) noexcept;
  template <class Stop>
  std::expected<void, PoolError> add_ref_impl(ChunkRef ref, OwnerId owner, std::uint32_t n,
                                              Stop stop) noexcept;
  template <class Stop>
  std::expected<void, PoolError> give_impl(ChunkRef ref, OwnerId from, OwnerId to, std::uint32_t n,
                                           Stop stop) noexcept;
  // release (by_giver false: a held one of `owner`) or revoke (by_giver true:
  // a pending one of `owner` given by `other`).
  template <class Stop>
  std::expected<void, PoolError> drop_impl(ChunkRef ref, OwnerId owner, bool by_giver,
                                           OwnerId other, Stop stop) noexcept;
  // Drops the pending references `from` gave to owners for which
  // is_receiver(owner) holds; `closer` is named in the slots it closes.
  template <class Receiver, class Stop>
  std::uint64_t settle_impl(Receiver is_receiver, OwnerId from, OwnerId closer, Stop stop) noexcept;
  // Reserves Empty slot j of `node` and makes it Live with slot word `word`
  // (its tag bits are set here). Retry: the node's state word moved on.
  template <class Stop>
  std::expected<Outcome, PoolError> reserve(const detail::NodeView& node, unsigned j,
                                            std::uint64_t word, Stop& stop) noexcept;
  // A new holder slot (fields `f`) in ref's chain, whose first node is `m`
  // (state `s`): the first Empty holder slot, else a new overflow node linked
  // at the end of the chain, claimed by `actor` (the caller).
  template <class Stop>
  std::expected<Outcome, PoolError> add_holder(ChunkRef ref, pool_layout::ChunkMeta& m,
                                               std::uint64_t s, pool_layout::holder::Fields f,
                                               OwnerId actor, std::uint32_t& waits,
                                               Stop& stop) noexcept;
  // Links a new overflow node holding `f` after `last` (whose link slot is
  // Empty).
  template <class Stop>
  std::expected<Outcome, PoolError> extend(ChunkRef ref, const detail::NodeView& last,
                                           pool_layout::holder::Fields f, OwnerId actor,
                                           Stop& stop) noexcept;
  // Closes the link slot of `node` whose (open) link word is `word`, naming
  // `closer`, and vacates it: a link to a freed overflow node (stale).
  template <class Stop>
  std::expected<bool, PoolError> close_link(const ClassView& cv, std::uint32_t index,
                                            const detail::NodeView& node, std::uint64_t word,
                                            OwnerId closer, Stop& stop) noexcept;
  // reclaim_owner's part for the overflow-node area: `dead`'s half-done
  // extensions finished (linked) or undone (not linked), free nodes' hints.
  void reclaim_nodes(OwnerId dead, bool process_gone, ReclaimReport& report) noexcept;

  pool_layout::PoolCounters* counters_ = nullptr;
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint32_t class_count_ = 0;
  std::array<ClassView, kMaxPoolClasses> classes_{};
  detail::NodeArea nodes_{};
  // Where this handle last found a free chunk, per class (a hint word
  // index), and a free overflow node. Private to the handle; threads share
  // them through atomic_ref.
  std::array<std::uint32_t, kMaxPoolClasses> cursor_{};
  std::uint32_t node_cursor_ = 0;
  // The chunk this handle allocated last, and the one it freed last, per
  // class: (index + 1) << 32 | the generation it has once Free, 0 for none.
  // Private to the handle, shared by its threads through atomic_ref.
  std::array<std::uint64_t, kMaxPoolClasses> last_{};
  std::array<std::uint64_t, kMaxPoolClasses> freed_{};
};

}  // namespace ferry::transport
