#pragma once
// Just enough terminal handling for `ferry top`: keys without Enter, the
// alternate screen, the width.

#include <termios.h>

#include <chrono>
#include <optional>
#include <string>

namespace ferry::cli {

// While alive: stdin (when it is a terminal) delivers keys one by one
// without echo; stdout (when it is a terminal) shows the alternate screen
// with the cursor hidden. Everything is restored on destruction, also when
// a verb fails with an exception.
class Screen {
 public:
  Screen();
  ~Screen();
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  [[nodiscard]] bool is_terminal() const noexcept { return output_tty_; }
  [[nodiscard]] bool reads_keys() const noexcept { return raw_input_; }
  // Replaces the screen's content (a terminal) or prints `frame` (otherwise).
  void show(const std::string& frame) const;
  // Columns of the terminal; 80 when unknown.
  [[nodiscard]] int width() const noexcept;

 private:
  bool output_tty_ = false;
  bool raw_input_ = false;
  termios saved_{};
};

// Waits up to `timeout` for a key on stdin; nothing on timeout or interrupt.
[[nodiscard]] std::optional<char> read_key(std::chrono::milliseconds timeout);

}  // namespace ferry::cli
