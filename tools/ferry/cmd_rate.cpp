// ferry topic hz | bw TOPIC: subscribes and prints, every second, the rate
// (mean, min and max interval, standard deviation) or the bandwidth of the
// samples that arrive, over a window of the last N samples.
#include <fmt/format.h>

#include <cstdio>
#include <ferry/ferry.hpp>
#include <string>

#include "commands.hpp"
#include "daemon_query.hpp"
#include "format.hpp"
#include "interrupt.hpp"
#include "rate_stats.hpp"
#include "report_loop.hpp"
#include "sample_codec.hpp"

namespace ferry::cli {

namespace {

// `r` null: no new sample since the last report.
std::string report_text(Measure m, const RateReport* r, std::uint64_t total) {
  if (!r) return total == 0 ? "no samples yet\n" : "no new samples\n";
  if (m == Measure::Rate) {
    return fmt::format(
        "average rate: {:.3f} Hz\n\tmin: {:.6f}s max: {:.6f}s std dev: {:.6f}s window: {}\n",
        r->rate_hz, r->min_interval_s, r->max_interval_s, r->std_dev_s, r->window);
  }
  return fmt::format("bandwidth: {}/s from {} samples\n\tmean: {} min: {} max: {} window: {}\n",
                     human_bytes(r->bytes_per_s), r->window, human_bytes(r->mean_size),
                     human_bytes(static_cast<double>(r->min_size)),
                     human_bytes(static_cast<double>(r->max_size)), r->window);
}

Json report_json(Measure m, const RateReport* r, std::uint64_t total) {
  Json out{{"samples", total}, {"window", r ? r->window : 0}};
  if (!r) return out;
  if (m == Measure::Rate) {
    out.update(Json{{"rate_hz", r->rate_hz},
                    {"min_s", r->min_interval_s},
                    {"max_s", r->max_interval_s},
                    {"std_dev_s", r->std_dev_s}});
  } else {
    out.update(Json{{"bytes_per_s", r->bytes_per_s},
                    {"mean_size", r->mean_size},
                    {"min_size", r->min_size},
                    {"max_size", r->max_size}});
  }
  return out;
}

void measure(const Context& context, Measure m, const RateOptions& o) {
  const std::string domain = context.domain();
  {
    auto client = connect_daemon(context);
    (void)find_topic(client, o.topic);  // exit 1 on an unknown topic, before subscribing
  }
  catch_interrupts();
  ferry::Node node{m == Measure::Rate ? "ferry-hz" : "ferry-bw",
                   ferry::NodeOptions{.domain = domain}};
  // An observer: inspecting never changes how the topic runs (SubscriberOptions).
  auto sub = node.raw_subscriber(o.topic, ferry::SubscriberOptions{.observer = true});

  RateWindow window(o.window);
  std::uint64_t reported_total = 0;
  take_and_report(
      sub, o.duration,
      [&](const RawSample& sample) { window.add(RateWindow::Clock::now(), sample.size()); },
      [&](RateWindow::Clock::time_point) {
        // Only new samples make a new report: a silent topic says so.
        const auto r = window.total() > reported_total ? window.report() : std::nullopt;
        const RateReport* shown = r ? &*r : nullptr;
        if (o.json) {
          std::printf("%s\n", to_json_line(report_json(m, shown, window.total())).c_str());
        } else {
          std::fputs(report_text(m, shown, window.total()).c_str(), stdout);
        }
        reported_total = window.total();
      });
}

}  // namespace

int run_rate(Measure m, const RateOptions& o, const Context& context) {
  measure(context, m, o);
  return kExitOk;
}

}  // namespace ferry::cli
