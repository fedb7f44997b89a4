#include "terminal.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace ferry::cli {

namespace {
constexpr const char* kEnterScreen = "\x1b[?1049h\x1b[?25l";  // alternate screen, cursor hidden
constexpr const char* kLeaveScreen = "\x1b[?25h\x1b[?1049l";
constexpr const char* kHomeClear = "\x1b[H\x1b[2J";

void write_all(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}
}  // namespace

Screen::Screen() : output_tty_(::isatty(STDOUT_FILENO) == 1) {
  if (::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    raw_input_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  if (output_tty_) write_all(kEnterScreen);
}

Screen::~Screen() {
  if (output_tty_) write_all(kLeaveScreen);
  if (raw_input_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

void Screen::show(const std::string& frame) const {
  if (!output_tty_) {
    write_all(frame + "\n");
    return;
  }
  // Raw-ish mode keeps output post-processing (\n -> \r\n), so plain lines work.
  write_all(kHomeClear + frame);
}

int Screen::width() const noexcept {
  winsize ws{};
  if (output_tty_ && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 80;
}

std::optional<char> read_key(std::chrono::milliseconds timeout) {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  const int ready = ::poll(&fd, 1, static_cast<int>(timeout.count()));
  if (ready <= 0) return std::nullopt;  // timeout, or a signal (the caller checks interrupted())
  char c = 0;
  if ((fd.revents & POLLIN) != 0 && ::read(STDIN_FILENO, &c, 1) == 1) return c;
  // The terminal hung up or stdin ended: no key will come; do not spin.
  std::this_thread::sleep_for(timeout);
  return std::nullopt;
}

}  // namespace ferry::cli
