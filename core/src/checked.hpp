#pragma once
// Checks of the runtime's own invariants (state-machine transitions, the
// lock order): compiled into debug and sanitizer builds, where the tests
// run them, and out of release builds, where they would cost a load and a
// branch on paths that only our own code can drive wrong. A failed check is
// a bug in ferry, never bad input: it logs what broke and aborts.

#include <string_view>

#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FERRY_CHECKED 1
#else
#define FERRY_CHECKED 0
#endif

namespace ferry::detail {

// Logs "internal invariant broken: <what>" and aborts.
[[noreturn]] void invariant_broken(std::string_view what) noexcept;

}  // namespace ferry::detail

// `what` names the invariant (a string literal); evaluated only when it fails.
#if FERRY_CHECKED
#define FERRY_CHECK(condition, what)           \
  do {                                         \
    if (!(condition)) [[unlikely]]             \
      ::ferry::detail::invariant_broken(what); \
  } while (false)
#else
#define FERRY_CHECK(condition, what) \
  do {                               \
  } while (false)
#endif
