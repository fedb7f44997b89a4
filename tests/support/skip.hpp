#pragma once
// A test that cannot do here what it is meant to (a pid or network
// namespace, a missing tool): it says why, and the test program exits 77
// once everything else passed, which ctest shows as skipped
// (SKIP_RETURN_CODE, tests/CMakeLists.txt), never as passed. CI fails on a
// skip it does not expect (.ci/allowed-skips).

#include <string>

namespace ferry::test {

// In the test process (not in a forked child: the exit code is its own).
void skip_test(const std::string& why);
[[nodiscard]] bool skip_requested() noexcept;

}  // namespace ferry::test
