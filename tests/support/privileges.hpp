#pragma once
// Tests that depend on who runs them. CI runs as root: a case that needs
// root is a doctest skip elsewhere (counted in the summary, never a silent
// pass), and a check that a user WITHOUT rights is refused runs in a child
// that dropped root for `nobody`, so it runs as root too.

#include <doctest/doctest.h>
#include <grp.h>
#include <sys/types.h>
#include <unistd.h>

namespace ferry::test {

inline constexpr uid_t kNobody = 65534;
inline constexpr gid_t kNoGroup = 65534;

// Decorator of a test case that needs root: `TEST_CASE("..." * needs_root())`.
inline doctest::skip needs_root() { return doctest::skip(::geteuid() != 0); }

// In a forked child: as root, becomes `nobody` (no supplementary groups);
// as anyone else, stays who it is (already without root's rights). False
// when the switch failed.
[[nodiscard]] inline bool drop_root() {
  if (::geteuid() != 0) return true;
  return ::setgroups(0, nullptr) == 0 && ::setgid(kNoGroup) == 0 && ::setuid(kNobody) == 0 &&
         ::geteuid() == kNobody;
}

}  // namespace ferry::test
