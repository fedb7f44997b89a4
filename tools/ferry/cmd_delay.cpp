// ferry topic delay TOPIC: subscribes and prints, every second, the
// publish-to-take delay of the samples taken in the last --window seconds
// (p50, p90, max, count), from each sample's publish_time_ns.
#include <fmt/format.h>

#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "delay_stats.hpp"
#include "interrupt.hpp"
#include "report_loop.hpp"
#include "sample_codec.hpp"

namespace ferry::cli {

namespace {

std::string report_text(const DelayReport* r, std::uint64_t total, double window_s) {
  if (r == nullptr) return total == 0 ? "no samples yet\n" : "no new samples\n";
  return fmt::format(
      "delay p50: {:.3f} ms  p90: {:.3f} ms  max: {:.3f} ms  ({} samples in the last {:g} s)\n",
      r->p50_ms, r->p90_ms, r->max_ms, r->count, window_s);
}

Json report_json(const DelayReport* r, std::uint64_t total, double window_s) {
  Json out{{"count", r != nullptr ? r->count : 0}, {"samples", total}, {"window_s", window_s}};
  if (r == nullptr) return out;
  out.update(Json{
      {"p50_ms", r->p50_ms}, {"p90_ms", r->p90_ms}, {"max_ms", r->max_ms}, {"min_ms", r->min_ms}});
  return out;
}

void delay(const Context& context, const DelayOptions& o) {
  const std::string domain = context.domain();
  {
    auto client = connect_daemon(context);
    (void)find_topic(client, o.topic);  // exit 1 on an unknown topic, before subscribing
  }
  catch_interrupts();
  ferry::Node node{"ferry-delay", ferry::NodeOptions{.domain = domain}};
  // An observer, as every inspecting verb: it never slows the publisher.
  auto sub = node.raw_subscriber(o.topic, ferry::SubscriberOptions{.observer = true});

  using WindowClock = DelayWindow::Clock;
  DelayWindow window(
      std::chrono::duration_cast<WindowClock::duration>(std::chrono::duration<double>(o.window_s)));
  std::uint64_t reported_total = 0;
  take_and_report(
      sub, o.duration,
      [&](const RawSample& sample) {
        // The clock right after the take: what the sample waited, publish to here.
        const std::uint64_t taken_ns = ferry::detail::realtime_ns();
        const auto delay_ns = static_cast<std::int64_t>(taken_ns) -
                              static_cast<std::int64_t>(sample.info().publish_time_ns);
        window.add(WindowClock::now(), delay_ns);
      },
      [&](WindowClock::time_point now) {
        window.expire(now);
        // Only new samples make a new report: a silent topic says so.
        const auto r = window.total() > reported_total ? window.report() : std::nullopt;
        const DelayReport* shown = r ? &*r : nullptr;
        if (o.json) {
          std::printf("%s\n", to_json_line(report_json(shown, window.total(), o.window_s)).c_str());
        } else {
          std::fputs(report_text(shown, window.total(), o.window_s).c_str(), stdout);
        }
        reported_total = window.total();
      });
}

}  // namespace

int run_delay(const DelayOptions& o, const Context& context) {
  delay(context, o);
  return kExitOk;
}

}  // namespace ferry::cli
