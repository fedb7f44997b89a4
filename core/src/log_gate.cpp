// The log gate's fork handlers (log_gate.hpp).
#include "log_gate.hpp"

#include <pthread.h>

namespace ferry::detail {

std::shared_mutex& log_gate() noexcept {
  // Never destroyed: a runtime thread may still log while statics are
  // destroyed at exit.
  static auto* gate = [] {
    auto* made = new std::shared_mutex;
    // The forking thread takes the gate before fork() and lets it go on
    // both sides after; in the child it is that same thread, the gate's
    // owner there, that unlocks.
    ::pthread_atfork([] { log_gate().lock(); }, [] { log_gate().unlock(); },
                     [] { log_gate().unlock(); });
    return made;
  }();
  return *gate;
}

}  // namespace ferry::detail
