#include "object_names.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cstdint>
#include <random>

namespace ferry::discovery {

namespace {

std::uint64_t random_bits() {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, 0) == static_cast<ssize_t>(sizeof bits)) return bits;
  // getrandom cannot fail once the kernel's pool is ready; should it, the
  // name is still unique per try (never predictable from the port id alone).
  static std::random_device fallback;
  return (static_cast<std::uint64_t>(fallback()) << 32) | fallback();
}

constexpr int kTries = 4;

}  // namespace

std::expected<std::string, std::string> make_unguessable(
    const std::string& base,
    const std::function<std::expected<void, std::string>(const std::string&)>& make) {
  std::string failure;
  for (int i = 0; i < kTries; ++i) {
    std::string name = fmt::format("{}.{:016x}", base, random_bits());
    auto made = make(name);
    if (made) return name;
    failure = std::move(made.error());
  }
  return std::unexpected(fmt::format("{} (and {} other names tried)", failure, kTries - 1));
}

}  // namespace ferry::discovery
