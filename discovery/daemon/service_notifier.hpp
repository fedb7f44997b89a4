#pragma once
// ferryd under systemd (Type=notify): tells the service manager it is ready
// once the socket listens, that it reloads or stops, and pets the watchdog
// at half of WATCHDOG_USEC from the event loop (a hung loop is not petted).
// Through libsystemd's sd_notify when ferryd was built with it; without it,
// or outside systemd (no NOTIFY_SOCKET), every call does nothing.

#include <chrono>
#include <optional>

namespace ferry::discovery {

class ServiceNotifier {
 public:
  // Reads the watchdog's interval (WATCHDOG_USEC, for this pid).
  ServiceNotifier();

  void ready() noexcept;
  void reloading() noexcept;
  void stopping() noexcept;
  // Pets the watchdog when half its interval has passed since the last pet.
  void tick() noexcept;
  // How long the loop may sleep and still pet in time; nullopt: no watchdog.
  [[nodiscard]] std::optional<std::chrono::milliseconds> tick_period() const noexcept;

  // False when ferryd was built without libsystemd.
  [[nodiscard]] static bool available() noexcept;

 private:
  std::optional<std::chrono::microseconds> watchdog_;
  std::chrono::steady_clock::time_point last_pet_{};
};

}  // namespace ferry::discovery
