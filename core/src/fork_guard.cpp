// The child's side of fork() (fork_guard.hpp). The handler runs in the child
// with only the forking thread: it takes no lock (another thread of the
// parent may have held any of them at the fork) and allocates nothing.
#include "fork_guard.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include "domain_pool_view.hpp"
#include "ferry/discovery/heartbeats.hpp"

namespace ferry::detail {

namespace {

// Pool views of this process. Fixed size, lock-free: a process rarely runs
// more than a few nodes; beyond this many a child cannot tell the extra
// ones' ports that they are inherited (they keep the parent's mappings).
constexpr std::size_t kWatched = 256;
std::array<std::atomic<DomainPoolView*>, kWatched> g_views{};
std::atomic<std::uint64_t> g_generation{0};

// Replaces `segment`'s shared mapping by a private copy-on-write mapping of
// the same object, at the same address: the child's writes stay its own.
// If the object cannot be opened any more (removed), zero pages instead:
// every read of shared memory is checked, so an inherited object reading
// them is refused, and the parent's memory is still untouched.
void privatize(transport::Segment& segment) noexcept {
  void* base = const_cast<transport::SegmentHeader*>(&segment.header());
  const std::size_t size = segment.total_size();
  std::array<char, 256> path{};
  path[0] = '/';
  const std::size_t n = std::min(segment.name().size(), path.size() - 2);
  std::memcpy(path.data() + 1, segment.name().data(), n);
  const int fd = ::shm_open(path.data(), O_RDONLY | O_CLOEXEC, 0);
  void* mapped = MAP_FAILED;
  if (fd >= 0) {
    mapped = ::mmap(base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
    ::close(fd);
  }
  if (mapped == MAP_FAILED) {
    (void)::mmap(base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
                 0);
  }
}

void in_child() noexcept {
  // SYNC: relaxed; the child has one thread now, the forking one.
  g_generation.fetch_add(1, std::memory_order_relaxed);
  for (auto& slot : g_views) {
    // SYNC: relaxed, as above.
    DomainPoolView* view = slot.exchange(nullptr, std::memory_order_relaxed);
    if (view == nullptr) continue;
    view->inherited.store(true, std::memory_order_relaxed);  // SYNC: relaxed, as above
    // node_lock.cpp's own fork handler closes the lock's descriptor in the
    // child; its number may be reused by the child's files (its own node's
    // socket): the inherited view must never close it again.
    std::construct_at(&view->lock);
    privatize(view->segment);
    if (view->beats_segment) {
      privatize(*view->beats_segment);
      if (view->node_state != nullptr) {
        // Our private copy: the parent's slot is not touched.
        auto* state = const_cast<std::atomic<std::uint32_t>*>(view->node_state);
        // SYNC: relaxed, as above.
        state->store(static_cast<std::uint32_t>(discovery::SlotState::DeclaredDead),
                     std::memory_order_relaxed);
      }
    }
  }
}

}  // namespace

std::uint64_t fork_generation() noexcept {
  // SYNC: relaxed; it changes only in a child's handler, before any other
  // thread of the child exists.
  return g_generation.load(std::memory_order_relaxed);
}

void track_forks() noexcept {
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, in_child); });
}

void watch_across_fork(DomainPoolView& view) noexcept {
  track_forks();
  for (auto& slot : g_views) {
    DomainPoolView* expected = nullptr;
    // SYNC: acq_rel CAS; the handler reads the view's mappings through it in
    // the child, which fork orders after every store of the parent.
    if (slot.compare_exchange_strong(expected, &view, std::memory_order_acq_rel)) return;
  }
}

void unwatch_across_fork(DomainPoolView& view) noexcept {
  for (auto& slot : g_views) {
    DomainPoolView* expected = &view;
    // SYNC: acq_rel CAS, as in watch_across_fork().
    if (slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
  }
}

}  // namespace ferry::detail
