// ferry top: a live table of every topic (rate, bandwidth, backlog, drops,
// overwrites, timeouts), refreshed every second from the queue counters in
// shared memory. Full screen on a terminal, `q` quits; plain repeated tables
// when stdout is not a terminal.
#include <fmt/format.h>

#include <ctime>
#include <string>
#include <thread>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "interrupt.hpp"
#include "queue_counters.hpp"
#include "service_ports.hpp"
#include "terminal.hpp"

namespace ferry::cli {

namespace {

constexpr std::chrono::milliseconds kRefresh{1000};
constexpr std::chrono::milliseconds kPoll{10};  // counters are sampled this often for the rates

// The seven fixed columns after TOPIC take 56 characters: their widths (49)
// plus the space before each (7).
constexpr const char* kColumns = "{:<{}} {:>5} {:>7} {:>9} {:>7} {:>7} {:>7} {:>7}";
constexpr int kFixedWidth = (5 + 7 + 9 + 7 + 7 + 7 + 7) + 7;

std::string clip(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  if (width <= 1) return text.substr(0, width);
  return text.substr(0, width - 1) + "~";
}

// `rates` null: not measured yet (the first frame on a terminal).
std::string frame(const std::string& domain, const std::vector<TopicSnapshot>& now,
                  const RateMeter* rates, int width, bool keys) {
  std::size_t longest = 5;
  for (const auto& s : now)
    longest = std::max(longest, printable(display_name(s.info.name)).size());
  // The last terminal column stays free: a line that fills it wraps on
  // terminals without deferred wrapping, and the screen would scroll.
  const int room = std::max(10, width - kFixedWidth - 1);
  const auto topic_width = std::min<std::size_t>(longest, static_cast<std::size_t>(room));
  const auto line_width = static_cast<std::size_t>(width);

  const std::time_t t = std::time(nullptr);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", std::localtime(&t));
  std::string out =
      clip(fmt::format("ferry top - domain {} - {} topic(s) - {}{}", printable(domain), now.size(),
                       clock, keys ? " - q quits" : ""),
           line_width) +
      "\n";
  out += clip(fmt::format(fmt::runtime(kColumns), "TOPIC", topic_width, "P/S", "RATE/s", "BW/s",
                          "BACKLOG", "DROPPED", "OVERWR", "TIMEOUT"),
              line_width) +
         "\n";
  const auto at = std::chrono::steady_clock::now();
  for (const auto& s : now) {
    const std::optional<double> rate =
        rates != nullptr ? rates->rate(s.info.name, at) : std::nullopt;
    std::optional<double> bandwidth;
    if (rate && s.info.sample_size > 0 && s.info.type_name != "bytes") {
      bandwidth = *rate * static_cast<double>(s.info.sample_size);
    }
    const auto& c = s.total;
    out += clip(fmt::format(fmt::runtime(kColumns),
                            clip(printable(display_name(s.info.name)), topic_width), topic_width,
                            fmt::format("{}/{}", s.info.publishers.size(),
                                        subscribers_of(s.info, false).size()),
                            human_rate(rate), human_bytes(bandwidth, ""), human_count(c.backlog),
                            human_count(c.dropped), human_count(c.overwritten),
                            human_count(c.timed_out)),
                line_width) +
           "\n";
  }
  if (now.empty()) out += "(no topics)\n";
  return out;
}

class Top {
 public:
  explicit Top(const Context& context)
      : client_(connect_daemon(context)), domain_(client_.welcome().domain) {}

  void run(const TopOptions& o) {
    catch_interrupts();
    Screen screen;
    refresh_topics();
    // A terminal gets the table at once; the rates come with the next frame.
    if (screen.is_terminal())
      screen.show(frame(domain_, snapshots_, nullptr, screen.width(), screen.reads_keys()));
    for (std::uint64_t refresh = 1;; ++refresh) {
      if (!wait_or_quit(screen)) return;
      refresh_topics();
      screen.show(frame(domain_, snapshots_, &meter_, screen.width(), screen.reads_keys()));
      meter_.restart();
      if (o.count != 0 && refresh >= o.count) return;
    }
  }

 private:
  // Lists the topics again and takes a snapshot of each.
  void refresh_topics() {
    topics_ = list_topics(client_);
    // A service shows as its request topic (calls; clients/server); its
    // response topics are its plumbing.
    std::erase_if(topics_, [](const auto& t) {
      const auto role = service_role(t.name, true);
      return role && role->hidden;
    });
    std::vector<std::string> ring_names;
    for (const auto& t : topics_) {
      for (const auto& q : t.queues) ring_names.push_back(q.ring_shm);
    }
    rings_.keep_only(ring_names);
    observe();
  }
  void observe() {
    snapshots_.clear();
    for (const auto& t : topics_) {
      snapshots_.push_back(snapshot(t, rings_));
      meter_.observe(snapshots_.back());
    }
  }
  // Samples the counters until the next refresh; false on `q` or Ctrl-C.
  bool wait_or_quit(const Screen& screen) {
    const auto end = std::chrono::steady_clock::now() + kRefresh;
    while (!interrupted()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return true;
      const auto step = std::min(left, kPoll);
      if (screen.reads_keys()) {
        if (auto key = read_key(step); key && (*key == 'q' || *key == 'Q')) return false;
      } else {
        std::this_thread::sleep_for(step);
      }
      observe();
    }
    return false;
  }

  discovery::Client client_;
  std::string domain_;
  RingReader rings_;
  RateMeter meter_;
  std::vector<discovery::TopicInfo> topics_;
  std::vector<TopicSnapshot> snapshots_;
};

void top(const Context& context, const TopOptions& o) { Top(context).run(o); }

}  // namespace

int run_top(const TopOptions& o, const Context& context) {
  top(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
