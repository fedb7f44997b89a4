#include "service_notifier.hpp"

#include <algorithm>
#include <cstdint>

#ifdef FERRY_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace ferry::discovery {

namespace {

void notify([[maybe_unused]] const char* state) noexcept {
#ifdef FERRY_HAVE_LIBSYSTEMD
  (void)sd_notify(0, state);  // nothing to do when no manager listens
#endif
}

}  // namespace

ServiceNotifier::ServiceNotifier() {
#ifdef FERRY_HAVE_LIBSYSTEMD
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ = std::chrono::microseconds(usec);
#endif
}

bool ServiceNotifier::available() noexcept {
#ifdef FERRY_HAVE_LIBSYSTEMD
  return true;
#else
  return false;
#endif
}

void ServiceNotifier::ready() noexcept {
  notify("READY=1");
  last_pet_ = {};
  tick();  // the first pet with readiness: the manager's clock starts now
}

void ServiceNotifier::reloading() noexcept { notify("RELOADING=1"); }

void ServiceNotifier::stopping() noexcept { notify("STOPPING=1"); }

void ServiceNotifier::tick() noexcept {
  if (!watchdog_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_pet_ < *watchdog_ / 2) return;
  last_pet_ = now;
  notify("WATCHDOG=1");
}

std::optional<std::chrono::milliseconds> ServiceNotifier::tick_period() const noexcept {
  if (!watchdog_) return std::nullopt;
  // Wake at least four times per interval, so that a pet is never late by
  // more than a quarter of it.
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog_ / 4));
}

}  // namespace ferry::discovery
