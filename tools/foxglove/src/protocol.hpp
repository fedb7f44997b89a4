#pragma once
// The Foxglove WebSocket protocol v1 (subprotocol foxglove.websocket.v1), as
// far as ferry foxglove speaks it: the JSON messages it sends, the client
// messages it understands, and the binary frames both ways. Pure functions,
// no sockets: the unit tests call them directly.
//
// Server -> client: serverInfo, status, advertise, unadvertise (JSON);
// messageData (binary: opcode 0x01, subscription id u32 LE, timestamp u64
// LE in ns, payload). Client -> server: subscribe, unsubscribe, advertise,
// unadvertise (JSON, the last two with the clientPublish capability);
// client message data (binary: opcode 0x01, channel id u32 LE, payload).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ferry::foxglove {

inline constexpr std::string_view kSubprotocol = "foxglove.websocket.v1";

using ChannelId = std::uint32_t;
using SubscriptionId = std::uint32_t;
using ClientChannelId = std::uint32_t;

enum class StatusLevel : std::uint8_t { Info = 0, Warning = 1, Error = 2 };

struct ChannelDescription {
  ChannelId id = 0;
  std::string topic;
  std::string schema_name;  // e.g. "geo/msg/Pose"
  std::string schema;       // the ros2msg text
};

[[nodiscard]] std::string server_info_json(std::string_view name, std::string_view session_id,
                                           std::string_view domain);
[[nodiscard]] std::string status_json(StatusLevel level, std::string_view message,
                                      std::string_view id = {});
[[nodiscard]] std::string advertise_json(std::span<const ChannelDescription> channels);
[[nodiscard]] std::string unadvertise_json(std::span<const ChannelId> channels);

// The 13 bytes before a messageData payload.
inline constexpr std::size_t kMessageDataHeaderSize = 13;
[[nodiscard]] std::array<std::byte, kMessageDataHeaderSize> message_data_header(
    SubscriptionId subscription, std::uint64_t timestamp_ns) noexcept;

// Client messages.
struct Subscribe {
  struct One {
    SubscriptionId id;
    ChannelId channel;
  };
  std::vector<One> subscriptions;
};
struct Unsubscribe {
  std::vector<SubscriptionId> ids;
};
struct ClientAdvertise {
  struct One {
    ClientChannelId id;
    std::string topic;
    std::string encoding;
    std::string schema_name;
  };
  std::vector<One> channels;
};
struct ClientUnadvertise {
  std::vector<ClientChannelId> ids;
};
// A JSON op the protocol has that this server does not offer (parameters,
// services, connection graph, assets): answered with a status.
struct Unsupported {
  std::string op;
};
// Malformed: the sentence to send back as an error status.
struct Invalid {
  std::string why;
};
using ClientText =
    std::variant<Subscribe, Unsubscribe, ClientAdvertise, ClientUnadvertise, Unsupported, Invalid>;

// Parses one text frame. Never throws: anything malformed is Invalid.
[[nodiscard]] ClientText parse_client_text(std::string_view text);

struct ClientMessageData {
  ClientChannelId channel = 0;
  std::span<const std::byte> payload;  // a view of the frame
};
struct ServiceCallRequest {};  // opcode 0x02: no services here
using ClientBinary = std::variant<ClientMessageData, ServiceCallRequest, Invalid>;

// Parses one binary frame (a view of `frame`). Never throws.
[[nodiscard]] ClientBinary parse_client_binary(std::span<const std::byte> frame);

}  // namespace ferry::foxglove
