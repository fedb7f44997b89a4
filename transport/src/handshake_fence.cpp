// The two fences of the doorbell handshake (docs/design/wait.md), made
// asymmetric: the notifier, on every publish, pays a compiler barrier; the
// waiter, about to sleep anyway, pays a membarrier(2) system call that puts
// a full barrier on every CPU running a registered process.
//
// A process is a light notifier only once membarrier's
// MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED succeeded for it (at load, and
// again in a forked child); until then, and where the kernel or a seccomp
// filter refuses it, and under ThreadSanitizer (which does not see
// membarrier), it fences with seq_cst. Either kind of notifier pairs with
// waiter_fence(). A waiter whose membarrier fails while the kernel offers it
// (a seccomp filter of its own) cannot reach light notifiers: waiter_fence()
// says so, and the caller sleeps at most kUnsureSleepBound at a time, so a
// missed wake-up costs at most that delay, never a sample.
#include "ferry/transport/handshake_fence.hpp"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ferry::transport {

namespace {

int call_membarrier(int command) noexcept {
  return static_cast<int>(::syscall(SYS_membarrier, command, 0U, 0));
}

// What this kernel offers (MEMBARRIER_CMD_QUERY): the same for every
// process on the machine, whatever its seccomp filter lets it call.
bool kernel_offers_global_expedited() noexcept {
  const int offered = call_membarrier(MEMBARRIER_CMD_QUERY);
  constexpr int kNeeded =
      MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
  return offered > 0 && (offered & kNeeded) == kNeeded;
}

bool register_light_notifier() noexcept {
#if defined(__SANITIZE_THREAD__)
  return false;  // ThreadSanitizer cannot see the barrier membarrier(2) adds
#else
  return kernel_offers_global_expedited() &&
         call_membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
#endif
}

// A forked child inherits the registration with its copy of the address
// space; registering again is cheap and makes sure of it.
void reregister_in_child() noexcept { detail::g_light_notifier = register_light_notifier(); }

bool initialise_handshake_fence() noexcept {
  ::pthread_atfork(nullptr, nullptr, &reregister_in_child);
  return register_light_notifier();
}

// Whether any process here can be a light notifier. Asked once, on first
// use: a wait made while the library is still being initialised must not
// read a flag that is not set yet.
bool kernel_offers() noexcept {
  static const bool offers = kernel_offers_global_expedited();
  return offers;
}

}  // namespace

namespace detail {
// Dynamic initialisation: until it ran, every notify fences with seq_cst.
// Written before any thread of ours publishes, read by every notify: a
// plain bool.
bool g_light_notifier = initialise_handshake_fence();
}  // namespace detail

bool waiter_fence() noexcept {
  // SYNC: seq_cst fence, pairs with the seq_cst fence of a notifier that
  // is not light (notifier_fence).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!kernel_offers()) return true;  // no notifier anywhere is light
  // SYNC: membarrier, pairs with the compiler barrier of light notifiers:
  // every CPU running one executes a full barrier before this returns. If
  // its barrier came after its index store, that store is visible to the
  // reads we make next; if before, its load of `sleeping` comes after the
  // barrier and sees our announcement (made before this call).
  return call_membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

// Whether this process notifies with the light fence, and whether its waits
// reach light notifiers (for tests and diagnostics).
bool light_notifier() noexcept { return detail::g_light_notifier; }
bool waits_reach_light_notifiers() noexcept { return waiter_fence(); }

}  // namespace ferry::transport
