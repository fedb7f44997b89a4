#include "harness/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace ferry::bench {

Progress::Progress(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && width_ > 0) std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
}

void Progress::show(const std::string& what) {
  if (!enabled_) return;
  const std::size_t pad = width_ > what.size() ? width_ - what.size() : 0;
  std::fprintf(stderr, "\r%s%*s", what.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  width_ = what.size();
}

}  // namespace ferry::bench
