#pragma once
// Ctrl-C for the verbs that run until interrupted (echo, hz, bw, pub, top):
// SIGINT and SIGTERM set a flag that their loops poll, so they stop cleanly
// (ports destroyed, terminal restored) and exit 0.

namespace ferry::cli {

// Installs the handlers (without SA_RESTART, so blocking reads return EINTR).
void catch_interrupts();
[[nodiscard]] bool interrupted() noexcept;

}  // namespace ferry::cli
