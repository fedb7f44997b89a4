// Buffers for the samples a subscriber has taken and not yet released, at
// most max_held of them. Inline samples are copied out of the ring into one of
// these buffers, so the ring slot is free at once and the sample stays valid
// until its Sample handle dies.
//
// The user's thread acquires buffers; a Sample may be released from any
// thread, even after its Subscriber is gone.
//
// No read-modify-write on the hot path: a release is one release-store of
// its buffer's `released_` flag (its last access to this object); the owner
// keeps the buffers it knows free in a private mask and, only when that mask
// is empty, collects the released flags (plain loads and stores, once per
// max_held takes). An empty take() touches nothing here.
//
// Lifetime: the owner closes the object when its Subscriber goes. If every
// buffer is back it is deleted then; otherwise it waits in a process-wide
// list of closed objects that close() and create() sweep (a closed object
// whose flags are all set has no releaser left inside it: each release's
// flag store is its last access).
//
// acquire and release (ferry/detail/held_samples.hpp) are inline: a few
// instructions each.

#include "ferry/detail/held_samples.hpp"

#include <pthread.h>

#include <mutex>
#include <new>
#include <vector>

#include "domain_pool_view.hpp"
#include "ferry/config/limits.hpp"

namespace ferry::detail {

// A topic's `max_held` (validated against config::kMaxHeld) is the count
// create() is given: the two limits are one.
static_assert(HeldSamples::kMaxBuffers == config::kMaxHeld,
              "HeldSamples::kMaxBuffers must equal config::kMaxHeld (max_held)");

namespace {
constexpr std::size_t kAlign = 64;
std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

// Closed objects with samples still out, deleted by a later sweep once every
// buffer is back. Not the hot path: only create() and close() come here.
struct ClosedHeldSamples {
  std::mutex mutex;
  std::vector<HeldSamples*> waiting;  // under mutex

  // Adds `add` (if any), then deletes the waiting objects whose buffers are
  // all back.
  void sweep(HeldSamples* add) {
    std::vector<HeldSamples*> done;
    {
      std::lock_guard lock(mutex);
      if (add != nullptr) waiting.push_back(add);
      done.reserve(waiting.size());  // the predicate below must not throw
      std::erase_if(waiting, [&](HeldSamples* h) {
        if (!h->all_released()) return false;
        done.push_back(h);
        return true;
      });
    }
    for (HeldSamples* h : done) delete h;
  }

  static ClosedHeldSamples& instance() {
    // Never destroyed: a Sample released by a static destructor at exit may
    // still look here. What waits at exit is still reachable (not a leak).
    static auto* list = [] {
      auto* made = new ClosedHeldSamples;
      // Held across fork(): a thread of the parent sweeping at that moment
      // would leave it locked for good in the child, whose first subscriber
      // would then hang (fork_guard.hpp).
      ::pthread_atfork([] { instance().mutex.lock(); }, [] { instance().mutex.unlock(); },
                       [] { instance().mutex.unlock(); });
      return made;
    }();
    return *list;
  }
};

HeldSamples* HeldSamples::create(std::uint32_t count, std::size_t buffer_size,
                                 std::shared_ptr<DomainPoolView> pool) {
  if (count == 0 || count > kMaxBuffers) throw std::bad_alloc();
  ClosedHeldSamples::instance().sweep(nullptr);
  const std::size_t rounded = round_up(buffer_size == 0 ? 1 : buffer_size);
  auto* storage =
      static_cast<std::byte*>(::operator new (rounded* count, std::align_val_t{kAlign}));
  return new HeldSamples(count, rounded, storage, std::move(pool));
}

HeldSamples::HeldSamples(std::uint32_t count, std::size_t buffer_size, std::byte* storage,
                         std::shared_ptr<DomainPoolView> pool) noexcept
    : count_(count),
      buffer_size_(buffer_size),
      storage_(storage),
      pool_(std::move(pool)),
      free_((std::uint64_t{1} << count) - 1) {}

HeldSamples::~HeldSamples() { ::operator delete (storage_, std::align_val_t{kAlign}); }

bool HeldSamples::collect() noexcept {
  for (std::uint32_t i = 0; i < count_; ++i) {
    // SYNC: acquire, pairs with the release store in release(): the reader
    // of the buffer (any thread) has finished with it before we reuse it.
    if (released_[i].load(std::memory_order_acquire) != 0) {
      // SYNC: relaxed; the buffer is ours again, and reaches a releaser only
      // through a new Sample handle (which carries the ordering).
      released_[i].store(0, std::memory_order_relaxed);
      free_ |= std::uint64_t{1} << i;
    }
  }
  return free_ != 0;
}

void HeldSamples::release_chunk(std::uint32_t token) noexcept {
  // SYNC: relaxed; see hold_chunk.
  const std::uint64_t ref = chunks_[token].load(std::memory_order_relaxed);
  chunks_[token].store(0, std::memory_order_relaxed);
  // A failure means ferryd reclaimed the chunk already (this node was
  // declared dead): nothing is left to give back.
  (void)pool_->pool.release(transport::ChunkRef::unpack(ref), pool_->owner);
}

bool HeldSamples::all_released() const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i) {
    // SYNC: acquire, pairs with the release store in release() (see there).
    if (released_[i].load(std::memory_order_acquire) == 0) return false;
  }
  return true;
}

void HeldSamples::close() noexcept {
  // The buffers only the owner knew free count as released from now on.
  for (std::uint32_t i = 0; i < count_; ++i) {
    if ((free_ >> i & 1) != 0) {
      // SYNC: relaxed; nobody else writes a free buffer's flag, and a sweep
      // on another thread sees it through the list's mutex.
      released_[i].store(1, std::memory_order_relaxed);
    }
  }
  free_ = 0;
  if (all_released()) {
    delete this;
    ClosedHeldSamples::instance().sweep(nullptr);
    return;
  }
  try {
    ClosedHeldSamples::instance().sweep(this);
  } catch (...) {
    // No memory to remember it: leak it rather than free a buffer in use.
  }
}

// The held sample is a pool chunk (ChunkRef::pack()): release drops the
// node's reference to it. Owner thread, between acquire and handing out.
void HeldSamples::hold_chunk(std::uint32_t token, std::uint64_t ref) noexcept {
  // SYNC: relaxed; published to a releasing thread with the Sample handle,
  // and read back by release() on the thread that got that handle.
  chunks_[token].store(ref, std::memory_order_relaxed);
}

bool HeldSamples::holds_from(std::uint64_t publisher_id) const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i) {
    if ((free_ >> i & 1) != 0) continue;
    // SYNC: acquire, pairs with the release store in release(): a sample
    // released is no longer read through its token.
    if (released_[i].load(std::memory_order_acquire) != 0) continue;
    if (infos_[i].publisher_id == publisher_id) return true;
  }
  return false;
}

std::uint32_t HeldSamples::held_count() const noexcept {
  std::uint32_t free = static_cast<std::uint32_t>(std::popcount(free_));
  for (std::uint32_t i = 0; i < count_; ++i) {
    // SYNC: relaxed; a statistic.
    free += released_[i].load(std::memory_order_relaxed);
  }
  return count_ - free;
}

}  // namespace ferry::detail
