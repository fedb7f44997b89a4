// doctest's main, with one addition: a program whose cases asked to be
// skipped (skip.hpp) and otherwise passed exits 77, ctest's "skipped".
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "skip.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  if (result == 0 && ferry::test::skip_requested()) return 77;
  return result;
}
