// The log gate's fork handlers (log_gate.hpp).
#include "log_gate.hpp"

#include <pthread.h>

#include <new>

namespace ferry::detail {

namespace {
// Never destroyed: a runtime thread may still log while statics are
// destroyed at exit.
std::shared_mutex* g_gate = nullptr;

void close_gate() { g_gate->lock(); }
void open_gate_in_parent() { g_gate->unlock(); }
// The child's only thread is the one that locked the gate, but under
// another thread id, and glibc's rwlock knows its writer by thread id: an
// unlock here would be taken for a reader's and leave the gate locked. No
// other thread exists to hold it, so the child starts from a new gate.
void open_gate_in_child() { ::new (static_cast<void*>(g_gate)) std::shared_mutex; }
}  // namespace

std::shared_mutex& log_gate() noexcept {
  static const bool made = [] {
    g_gate = new std::shared_mutex;
#if !defined(__SANITIZE_THREAD__)
    ::pthread_atfork(&close_gate, &open_gate_in_parent, &open_gate_in_child);
#else
    // ThreadSanitizer cannot follow a lock made anew in the child: the
    // thread still holds the old one in its books, and every later log line
    // there is reported as a read lock of a write-locked mutex. Its builds
    // run without the handlers (as ferry did before the gate); the fork
    // tests run in the others.
    (void)&close_gate;
    (void)&open_gate_in_parent;
    (void)&open_gate_in_child;
#endif
    return true;
  }();
  (void)made;
  return *g_gate;
}

}  // namespace ferry::detail
