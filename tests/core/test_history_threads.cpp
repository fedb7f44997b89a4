// The history's seqlock between its writer (the publishing thread) and a
// reader (the node's runtime thread handing history to a late subscriber):
// a read either returns exactly the entry that was recorded under that
// sequence number or says it is gone, never a mix. Run under TSan too.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "history.hpp"

using ferry::detail::History;
namespace transport = ferry::transport;

namespace {

constexpr std::uint32_t kEntryBytes = 256;

// Entry `seq`: every word holds seq, the length depends on seq.
std::vector<std::byte> entry_for(std::uint64_t seq) {
  std::vector<std::byte> bytes(8 * (1 + seq % (kEntryBytes / 8)));
  for (std::size_t w = 0; w < bytes.size() / 8; ++w) std::memcpy(&bytes[w * 8], &seq, 8);
  return bytes;
}

// Entry `seq`'s metadata: distinct words, all derived from seq.
transport::SlotMeta meta_for(std::uint64_t seq) { return {seq, seq * 3 + 1, seq * 7 + 2}; }

}  // namespace

TEST_CASE("history keeps the last N entries, in order, and evicts the oldest") {
  History history(3, kEntryBytes);
  for (std::uint64_t seq = 0; seq < 5; ++seq)
    (void)history.record(entry_for(seq), 0, meta_for(seq));
  CHECK(history.recorded() == 5);
  std::vector<std::byte> out(kEntryBytes);
  std::uint32_t length = 0;
  std::uint32_t flags = 9;
  transport::SlotMeta meta{};
  CHECK_FALSE(history.read(1, out, length, flags, meta));  // evicted
  for (std::uint64_t seq = 2; seq < 5; ++seq) {
    REQUIRE(history.read(seq, out, length, flags, meta));
    const auto expected = entry_for(seq);
    CHECK(length == expected.size());
    CHECK(flags == 0);
    CHECK(meta == meta_for(seq));  // a late subscriber gets the original metadata
    CHECK(std::memcmp(out.data(), expected.data(), length) == 0);
  }
}

TEST_CASE("history returns a pooled entry's reference when it evicts it") {
  History history(2, kEntryBytes);
  const std::uint64_t slot[2] = {0xABCD, 100};  // a PooledSlot: reference, size
  CHECK(history.record(std::as_bytes(std::span(slot)), 1, meta_for(0)) == 0);
  CHECK(history.record(entry_for(1), 0, meta_for(1)) == 0);
  CHECK(history.record(entry_for(2), 0, meta_for(2)) == 0xABCD);  // the pooled one leaves
  std::vector<std::uint64_t> kept;
  history.for_each_pooled([&](std::uint64_t ref) { kept.push_back(ref); });
  CHECK(kept.empty());
}

TEST_CASE("a reader racing the writer sees whole entries or nothing") {
  History history(8, kEntryBytes);
  constexpr std::uint64_t kCount = 200'000;
  std::atomic<bool> done{false};
  std::uint64_t torn = 0;
  std::uint64_t good = 0;
  std::thread reader([&] {
    std::vector<std::byte> out(kEntryBytes);
    while (!done.load(std::memory_order_acquire)) {
      const std::uint64_t recorded = history.recorded();
      const std::uint64_t first = recorded > 8 ? recorded - 8 : 0;
      for (std::uint64_t seq = first; seq < recorded; ++seq) {
        std::uint32_t length = 0;
        std::uint32_t flags = 0;
        transport::SlotMeta meta{};
        if (!history.read(seq, out, length, flags, meta)) continue;
        const auto expected = entry_for(seq);
        if (length != expected.size() || std::memcmp(out.data(), expected.data(), length) != 0 ||
            meta != meta_for(seq)) {
          ++torn;
        } else {
          ++good;
        }
      }
    }
  });
  for (std::uint64_t seq = 0; seq < kCount; ++seq)
    (void)history.record(entry_for(seq), 0, meta_for(seq));
  done.store(true, std::memory_order_release);
  reader.join();
  CHECK(torn == 0);
  CHECK(good > 0);
}
