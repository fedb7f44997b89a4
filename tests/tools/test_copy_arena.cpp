// CopyArena (tools/ferry/copy_arena.hpp), where ferry record's taking
// thread copies small samples for its writer thread: alignment, wrapping,
// refusal when full, and a producer and a consumer on two threads (run
// under TSan, label tsan).

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "copy_arena.hpp"

using ferry::cli::CopyArena;

TEST_CASE("copy arena: aligned pieces, refused when full, reusable once given back") {
  CopyArena arena(4 * CopyArena::kAlign);
  std::uint64_t end1 = 0, end2 = 0, end3 = 0;
  std::byte* a = arena.allocate(10, end1);
  std::byte* b = arena.allocate(CopyArena::kAlign + 1, end2);  // two lines
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % CopyArena::kAlign == 0);
  CHECK(b == a + CopyArena::kAlign);
  CHECK(arena.allocate(2 * CopyArena::kAlign, end3) == nullptr);  // one line left
  CHECK(arena.allocate(5 * CopyArena::kAlign, end3) == nullptr);  // never fits
  arena.give_back(end1);
  // One line at the end, one free at the start: a two-line piece skips the
  // end and needs the start's two lines, one of which b still holds.
  CHECK(arena.allocate(2 * CopyArena::kAlign, end3) == nullptr);
  arena.give_back(end2);
  std::byte* c = arena.allocate(2 * CopyArena::kAlign, end3);
  CHECK(c == a);  // wrapped to the start
}

TEST_CASE("copy arena: a producer and a consumer thread see every piece as written") {
  constexpr std::uint32_t kPieces = 100000;
  CopyArena arena(64 * CopyArena::kAlign);
  struct Piece {
    const std::byte* data;
    std::uint32_t size;
    std::uint64_t end;
  };
  // A plain hand-off of the pieces: what TSan checks is the arena's bytes.
  std::vector<Piece> pieces(kPieces);
  std::atomic<std::uint32_t> published{0};
  std::thread consumer([&] {
    bool intact = true;
    for (std::uint32_t i = 0; i < kPieces; ++i) {
      // SYNC: acquire, pairs with the producer's release store of `published`.
      while (published.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      const Piece& p = pieces[i];
      for (std::uint32_t k = 0; k < p.size; ++k)
        intact = intact && p.data[k] == static_cast<std::byte>((i + k) & 0xFF);
      arena.give_back(p.end);
    }
    CHECK(intact);
  });
  for (std::uint32_t i = 0; i < kPieces; ++i) {
    const auto size = static_cast<std::uint32_t>(1 + (i * 37) % (3 * CopyArena::kAlign));
    std::uint64_t end = 0;
    std::byte* data = nullptr;
    while ((data = arena.allocate(size, end)) == nullptr) std::this_thread::yield();
    for (std::uint32_t k = 0; k < size; ++k) data[k] = static_cast<std::byte>((i + k) & 0xFF);
    pieces[i] = Piece{data, size, end};
    // SYNC: release, pairs with the consumer's acquire load.
    published.store(i + 1, std::memory_order_release);
  }
  consumer.join();
}
