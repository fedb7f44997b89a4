// Pool::live_chunks: the scan behind `ferry pool`'s per-topic attribution.
// Apart from pool.cpp because nothing on the data path uses it.
#include <bit>

#include "ferry/transport/pool.hpp"

namespace ferry::transport {

namespace st = pool_layout::state;
namespace hw = pool_layout::holder;

std::vector<LiveChunk> Pool::live_chunks() const {
  std::vector<LiveChunk> out;
  for (std::uint32_t c = 0; c < class_count_; ++c) {
    const ClassView& cv = classes_[c];
    for (std::uint32_t i = 0; i < cv.count; ++i) {
      const pool_layout::ChunkMeta& m = cv.meta[i];
      // SYNC: acquire, pairs with the release that made the slots Live (the
      // holder words read below are theirs or newer). A snapshot.
      const std::uint64_t s = m.state.load(std::memory_order_acquire);
      if (!st::well_formed(s) || st::mode(s) != st::kModeLive) continue;
      LiveChunk chunk;
      chunk.ref = ChunkRef{static_cast<std::uint16_t>(c), i, st::generation(s)};
      chunk.chunk_size = cv.chunk_size;
      // SYNC: relaxed; published with the Live state acquired above.
      const std::uint64_t origin = m.origin.load(std::memory_order_relaxed);
      if (static_cast<std::uint32_t>(origin >> 32) == st::generation(s)) {
        chunk.origin = static_cast<OwnerId>(origin & 0xFFFF);
      }
      for (std::uint64_t live = st::live_pairs(s); live != 0; live &= live - 1) {
        const auto j = static_cast<unsigned>(std::countr_zero(live) / 2);
        // SYNC: acquire, pairs with the acq_rel CASes on this holder word.
        const hw::Fields f = hw::decode(m.holders[j].load(std::memory_order_acquire));
        if (f.closed || !hw::open_well_formed(f)) continue;
        chunk.holders[chunk.holder_count++] = ChunkHolder{f.owner, f.aux, f.held, f.pending};
      }
      if (chunk.holder_count > 0) out.push_back(chunk);
    }
  }
  return out;
}

}  // namespace ferry::transport
