#pragma once
// One status line on stderr while a benchmark runs, only when stderr is a terminal.

#include <string>

namespace ferry::bench {

class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress();  // erases the line
  void show(const std::string& what);

 private:
  bool enabled_;
  std::size_t width_ = 0;
};

}  // namespace ferry::bench
