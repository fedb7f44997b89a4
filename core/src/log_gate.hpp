#pragma once
// ferry's own threads (a node's runtime thread above all) log through
// spdlog, whose sinks hold a mutex while they write. A fork() made by
// another thread at that moment would leave the child that mutex held for
// good, and the child's first log line would never return. So ferry logs
// through this gate, which pthread_atfork handlers close around fork():
// fork() waits until no ferry thread is inside spdlog, and the child
// starts with a new gate. (A user's own threads logging at that moment are
// the user's to guard, like any lock of theirs.) Not the hot path: nothing
// there logs.

#include <spdlog/spdlog.h>

#include <shared_mutex>
#include <utility>

namespace ferry::detail {

// Shared by every log call, held exclusively by a thread that forks. The
// fork handlers are registered on first use (NodeRuntime::start makes that
// before any runtime thread exists).
std::shared_mutex& log_gate() noexcept;

// spdlog's default logger at `level`, through the gate. A line below the
// logger's level costs one load, as spdlog's own calls do.
template <class... Args>
void log_line(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format,
              Args&&... args) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  if (!logger->should_log(level)) return;
  std::shared_lock lock(log_gate());
  logger->log(level, format, std::forward<Args>(args)...);
}

}  // namespace ferry::detail
