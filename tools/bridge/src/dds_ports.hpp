#pragma once
// Cyclone DDS's fixed ports of a domain against the machine's ephemeral
// port range. With its default port mapping (the DDSI one: base 7400,
// domain gain 250) a domain's discovery and data multicast ports are
// 7400 + 250 * domain and the next one, bound for the life of the domain.
// Any socket bound to port 0 gets a port from the ephemeral range, Cyclone's
// own unicast sockets included (its ParticipantIndex defaults to none); one
// that got a domain's fixed port first makes the domain fail to start
// ("failed to bind to ANY:P: address in use"). docs/bridge.md, DDS settings.

#include <cstdint>
#include <optional>
#include <string>

namespace ferry::bridge {

struct PortRange {
  std::uint32_t low = 0;
  std::uint32_t high = 0;  // inclusive
};

// The first of domain's two fixed ports (the second is the next one); 64
// bits, so that no domain id wraps it into a port.
[[nodiscard]] std::uint64_t cyclone_first_port(std::uint32_t domain) noexcept;

// The largest domain whose fixed ports are ports (below 65536): 232.
[[nodiscard]] std::uint32_t cyclone_max_domain() noexcept;

// The first of domain's fixed ports that lies in `ephemeral`, if any.
[[nodiscard]] std::optional<std::uint32_t> port_in_range(std::uint32_t domain,
                                                         PortRange ephemeral) noexcept;

// "LOW HIGH" as /proc/sys/net/ipv4/ip_local_port_range holds it; nullopt
// when it is not two ports, low first.
[[nodiscard]] std::optional<PortRange> parse_port_range(const std::string& text) noexcept;

// Why `domain` may fail to start on this machine, as a clause for a warning
// or an error; empty when its fixed ports lie outside the ephemeral range,
// when the range cannot be read, or when CYCLONEDDS_URI maps ports itself.
[[nodiscard]] std::string ephemeral_port_note(std::uint32_t domain);

// Why `domain` cannot start at all, as a sentence for an error: its fixed
// ports lie above 65535. Empty when they do not, or when CYCLONEDDS_URI maps
// ports itself.
[[nodiscard]] std::string domain_range_error(std::uint32_t domain);

}  // namespace ferry::bridge
