#include "dds_ports.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ferry::bridge {

namespace {

constexpr std::uint32_t kPortBase = 7400;   // Cyclone's Discovery/Ports/Base default
constexpr std::uint32_t kDomainGain = 250;  // ... and DomainGain
constexpr std::uint32_t kMaxPort = 65535;

// A configuration of the user's may move the ports (Discovery/Ports): then
// the default mapping says nothing.
bool user_maps_ports() {
  const char* uri = std::getenv("CYCLONEDDS_URI");
  return uri != nullptr && std::string(uri).find("Ports") != std::string::npos;
}

}  // namespace

std::uint64_t cyclone_first_port(std::uint32_t domain) noexcept {
  return kPortBase + std::uint64_t{kDomainGain} * domain;
}

std::uint32_t cyclone_max_domain() noexcept { return (kMaxPort - 1 - kPortBase) / kDomainGain; }

std::optional<std::uint32_t> port_in_range(std::uint32_t domain, PortRange ephemeral) noexcept {
  const std::uint64_t first = cyclone_first_port(domain);
  for (const std::uint64_t port : {first, first + 1}) {
    if (port >= ephemeral.low && port <= ephemeral.high) return static_cast<std::uint32_t>(port);
  }
  return std::nullopt;
}

std::optional<PortRange> parse_port_range(const std::string& text) noexcept {
  std::istringstream in(text);
  long low = -1, high = -1;
  if (!(in >> low >> high)) return std::nullopt;
  std::string rest;
  if (in >> rest) return std::nullopt;
  if (low < 1 || high > kMaxPort || low > high) return std::nullopt;
  return PortRange{static_cast<std::uint32_t>(low), static_cast<std::uint32_t>(high)};
}

std::string ephemeral_port_note(std::uint32_t domain) {
  if (user_maps_ports()) return {};
  std::ifstream file("/proc/sys/net/ipv4/ip_local_port_range");
  // Bounded: the file is one short line; a longer one is not a port range.
  std::string text(64, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  const auto range = parse_port_range(text);
  if (!range) return {};
  const auto port = port_in_range(domain, *range);
  if (!port) return {};
  return fmt::format(
      "DDS domain {}'s fixed port {} lies in this machine's ephemeral port range ({}-{}), where "
      "another socket may hold it first; domains 0 to 101 keep their ports below that range",
      domain, *port, range->low, range->high);
}

std::string domain_range_error(std::uint32_t domain) {
  if (domain <= cyclone_max_domain() || user_maps_ports()) return {};
  return fmt::format(
      "DDS domain {} is out of range: Cyclone DDS's ports for it ({} + {} x {} = {}) lie above "
      "{}; use a domain from 0 to {}, or set Discovery/Ports in CYCLONEDDS_URI",
      domain, kPortBase, kDomainGain, domain, cyclone_first_port(domain), kMaxPort,
      cyclone_max_domain());
}

}  // namespace ferry::bridge
