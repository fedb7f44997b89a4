// Observation: what a pool holds and who holds it, read by scans (tests,
// `ferry pool`, ferryd's accounting). Reads only; never on the data path.
#include <algorithm>
#include <bit>

#include "ferry/transport/pool.hpp"
#include "pool_counters.hpp"
#include "pool_geometry.hpp"
#include "pool_walk.hpp"

namespace ferry::transport {

using namespace pool_layout;
using namespace detail;  // the pool's private helpers (pool_*.hpp beside this file)
namespace st = pool_layout::state;

namespace {

// The owner that allocated the Live chunk whose state word is `s`, or
// kNoOwner when it was not recorded for this generation.
OwnerId origin_of(const ChunkMeta& m, std::uint64_t s) noexcept {
  // SYNC: relaxed; published with the Live state the caller acquired.
  const std::uint64_t origin = m.origin.load(std::memory_order_relaxed);
  if (static_cast<std::uint32_t>(origin >> 32) != st::generation(s)) return kNoOwner;
  return static_cast<OwnerId>(origin & 0xFFFF);
}

}  // namespace

OwnerHoldings Pool::holdings(OwnerId owner) const noexcept {
  OwnerHoldings out;
  for_each_live_chunk([&](std::uint32_t c, std::uint32_t i, ChunkMeta& m, std::uint64_t s) {
    bool has = false;
    const ChunkRef ref = ChunkRef::of(c, i, st::generation(s));
    OpenHolders walk(nodes_, m, s, ref.pack(), Malformed::Skip);
    for (HolderRead h; walk.next(h);) {
      if (h.fields.owner == owner) {
        has = true;
        out.held += h.fields.held;
        out.pending += h.fields.pending;
      }
      if (h.fields.aux == owner) out.given += h.fields.pending;
    }
    if (has) ++out.chunks;
  });
  return out;
}

std::vector<LiveChunk> Pool::live_chunks() const {
  std::vector<LiveChunk> out;
  for_each_live_chunk([&](std::uint32_t c, std::uint32_t i, ChunkMeta& m, std::uint64_t s) {
    LiveChunk chunk;
    chunk.ref = ChunkRef::of(c, i, st::generation(s));
    chunk.chunk_size = classes_[c].chunk_size;
    chunk.origin = origin_of(m, s);
    OpenHolders walk(nodes_, m, s, chunk.ref.pack(), Malformed::Skip);
    for (HolderRead h; walk.next(h);) {
      const auto& f = h.fields;
      chunk.holders.push_back(ChunkHolder{f.owner, f.aux, f.held, f.pending});
    }
    chunk.holder_count = static_cast<std::uint32_t>(chunk.holders.size());
    if (chunk.holder_count > 0) out.push_back(chunk);
  });
  return out;
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
      ChunkMeta& m = cv.meta[i];
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
          // Every Live slot of every node of the chain, closed ones included
          // (they are counted).
          std::uint32_t open = 0;
          const ChunkRef ref = ChunkRef::of(c, i, st::generation(s));
          Chain chain(nodes_, m, s, ref.pack());
          for (NodeView node; chain.next(node);) {
            if (node.id != kChunkNode) ++r.nodes_linked;
            r.reserving_slots +=
                static_cast<std::uint64_t>(std::popcount(st::reserving_pairs(node.s)));
            LiveSlots slots(node.s);
            for (unsigned j = 0; slots.next(j);) {
              const HolderRead h = read_holder(node, j);
              if (h.fields.closed) {
                ++r.closing_slots;
              } else if (!h.open_well_formed()) {
                ++r.corrupt;
              } else {
                ++open;
                r.held_refs += h.fields.held;
                r.pending_refs += h.fields.pending;
              }
            }
          }
          switch (chain.end()) {
            case ChainEnd::Closing:
              ++r.closing_slots;
              break;
            case ChainEnd::Stale:
              ++r.stale_links;
              break;
            case ChainEnd::Corrupt:
              ++r.corrupt;
              break;
            default:
              break;
          }
          if (open == 0) ++r.ownerless_live;
        }
      }
    }
  }
  // The overflow nodes: each Live one must be in exactly one chain (the
  // walks above reached nodes_linked of them, each through its one link).
  r.nodes_total = nodes_.count;
  std::uint64_t live_nodes = 0;
  for (std::uint32_t e = 0; e < nodes_.count; ++e) {
    // SYNC: acquire, as for a chunk's state word.
    const std::uint64_t s = nodes_.meta[e].state.load(std::memory_order_acquire);
    if (!st::well_formed(s)) {
      ++r.corrupt;
      continue;
    }
    switch (st::mode(s)) {
      case st::kModeFree:
        ++r.nodes_free;
        // SYNC: relaxed: a snapshot.
        if ((nodes_.hints[e / 64].load(std::memory_order_relaxed) &
             (std::uint64_t{1} << (e % 64))) == 0) {
          ++r.nodes_unhinted;
        }
        break;
      case st::kModeClaimed:
        ++r.nodes_claimed;
        break;
      default:
        ++live_nodes;
    }
  }
  if (live_nodes > r.nodes_linked) r.nodes_orphaned = live_nodes - r.nodes_linked;
  r.ok = r.corrupt == 0 && r.claimed == 0 && r.closing_slots == 0 && r.unhinted_free == 0 &&
         r.ownerless_live == 0 && r.free + r.live == r.total && r.nodes_claimed == 0 &&
         r.nodes_orphaned == 0 && r.nodes_unhinted == 0 && r.stale_links == 0 &&
         live_nodes == r.nodes_linked;
  return r;
}

PoolStats Pool::stats(bool scan_chunks) const noexcept {
  return read_pool_stats(base_, bytes_, scan_chunks);
}

PoolStats read_pool_stats(const void* mem, std::size_t bytes, bool scan_chunks) noexcept {
  PoolStats out;
  auto l = detail::read_layout(mem, bytes);
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
  const auto& nk = *reinterpret_cast<const NodeCounters*>(base + l->node_counters_offset);
  out.holder_nodes = l->holder_nodes;
  out.holder_nodes_exhausted = nk.exhausted.load(std::memory_order_relaxed);
  out.holder_nodes_linked = nk.links.load(std::memory_order_relaxed);
  // The walks below read through a NodeArea (they never write).
  NodeArea nodes;
  nodes.count = l->holder_nodes;
  nodes.hint_words = l->node_hint_words;
  nodes.meta = reinterpret_cast<ChunkMeta*>(const_cast<std::byte*>(base) + l->node_meta_offset);
  if (scan_chunks) {
    for (std::uint32_t e = 0; e < nodes.count; ++e) {
      // SYNC: relaxed; a snapshot.
      const std::uint64_t s = nodes.meta[e].state.load(std::memory_order_relaxed);
      if (st::well_formed(s) && st::mode(s) == st::kModeFree) ++out.holder_nodes_free;
    }
  }
  for (std::uint32_t c = 0; c < l->class_count; ++c) {
    const ClassEntry& e = l->entries[c];
    const auto& cc = *reinterpret_cast<const ClassCounters*>(base + e.counters_offset);
    PoolClassStats& cs = out.classes[c];
    cs.chunk_size = e.chunk_size;
    cs.total = e.count;
    // Never below the truth (pool_counters.hpp).
    cs.in_use = in_use_of(cc);
    // The high-water mark: what allocations recorded, or what we see now
    // (recycling allocations do not record it; pool_layout.hpp).
    const std::int64_t peak = std::max(cc.peak_in_use.load(std::memory_order_relaxed), cs.in_use);
    cs.low_water = std::max<std::int64_t>(0, std::int64_t{e.count} - peak);
    cs.exhausted = cc.exhausted.load(std::memory_order_relaxed);
    cs.fallbacks = cc.fallbacks.load(std::memory_order_relaxed);
    if (!scan_chunks) continue;
    cs.scanned = true;
    auto* meta = reinterpret_cast<ChunkMeta*>(const_cast<std::byte*>(base) + e.meta_offset);
    for (std::uint32_t i = 0; i < e.count; ++i) {
      ChunkMeta& m = meta[i];
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
      // Loaned: only its allocator holds it, nothing pending.
      const OwnerId origin = origin_of(m, s);
      bool loaned = origin != kNoOwner;
      const ChunkRef ref = ChunkRef::of(c, i, st::generation(s));
      OpenHolders walk(nodes, m, s, ref.pack(), Malformed::Skip);
      for (HolderRead h; loaned && walk.next(h);) {
        loaned = h.fields.owner == origin && h.fields.pending == 0;
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

}  // namespace ferry::transport
