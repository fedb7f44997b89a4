#include "protocol.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

namespace ferry::foxglove {

namespace {

using nlohmann::json;

// Ops of the protocol that need a capability this server does not declare.
constexpr std::array<std::string_view, 9> kUnsupportedOps = {"getParameters",
                                                             "setParameters",
                                                             "subscribeParameterUpdates",
                                                             "unsubscribeParameterUpdates",
                                                             "subscribeConnectionGraph",
                                                             "unsubscribeConnectionGraph",
                                                             "fetchAsset",
                                                             "callService",
                                                             "serviceCallRequest"};

// A JSON text kept to a length that fits in a status message.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

std::optional<std::uint32_t> as_u32(const json& value) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v <= std::numeric_limits<std::uint32_t>::max()) return static_cast<std::uint32_t>(v);
  } else if (value.is_number_integer()) {
    const auto v = value.get<std::int64_t>();
    if (v >= 0 && v <= std::numeric_limits<std::uint32_t>::max())
      return static_cast<std::uint32_t>(v);
  }
  return std::nullopt;
}

// The member `key` of object `o` as a u32, or why not.
std::variant<std::uint32_t, std::string> u32_member(const json& o, const char* key,
                                                    std::string_view op) {
  const auto it = o.find(key);
  if (it == o.end()) return fmt::format("'{}': an entry lacks '{}'", op, key);
  if (auto v = as_u32(*it)) return *v;
  return fmt::format("'{}': '{}' must be an integer from 0 to 4294967295, got {}", op, key,
                     excerpt(it->dump()));
}

// The string member `key` of object `o`, or nullptr when it is missing or
// not a string.
const std::string* string_member(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// The array member `key`, or an Invalid.
const json* array_member(const json& o, const char* key, std::string_view op, Invalid& error) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_array()) {
    error.why = fmt::format("'{}' needs an array '{}'", op, key);
    return nullptr;
  }
  return &*it;
}

ClientText parse_subscribe(const json& o) {
  Invalid error;
  const json* list = array_member(o, "subscriptions", "subscribe", error);
  if (list == nullptr) return error;
  Subscribe s;
  for (const json& entry : *list) {
    if (!entry.is_object()) return Invalid{"'subscribe': each subscription must be an object"};
    auto id = u32_member(entry, "id", "subscribe");
    if (auto* why = std::get_if<std::string>(&id)) return Invalid{*why};
    auto channel = u32_member(entry, "channelId", "subscribe");
    if (auto* why = std::get_if<std::string>(&channel)) return Invalid{*why};
    s.subscriptions.push_back({std::get<std::uint32_t>(id), std::get<std::uint32_t>(channel)});
  }
  return s;
}

// unsubscribe's subscriptionIds and client unadvertise's channelIds.
std::variant<std::vector<std::uint32_t>, Invalid> id_list(const json& o, const char* key,
                                                          std::string_view op) {
  Invalid error;
  const json* list = array_member(o, key, op, error);
  if (list == nullptr) return error;
  std::vector<std::uint32_t> ids;
  for (const json& entry : *list) {
    auto v = as_u32(entry);
    if (!v)
      return Invalid{fmt::format("'{}': '{}' must hold integers from 0 to 4294967295, got {}", op,
                                 key, excerpt(entry.dump()))};
    ids.push_back(*v);
  }
  return ids;
}

ClientText parse_advertise(const json& o) {
  Invalid error;
  const json* list = array_member(o, "channels", "advertise", error);
  if (list == nullptr) return error;
  ClientAdvertise a;
  for (const json& entry : *list) {
    if (!entry.is_object()) return Invalid{"'advertise': each channel must be an object"};
    auto id = u32_member(entry, "id", "advertise");
    if (auto* why = std::get_if<std::string>(&id)) return Invalid{*why};
    ClientAdvertise::One one{std::get<std::uint32_t>(id), {}, {}, {}};
    for (auto [key, into] : {std::pair{"topic", &one.topic}, std::pair{"encoding", &one.encoding},
                             std::pair{"schemaName", &one.schema_name}}) {
      const std::string* value = string_member(entry, key);
      if (value == nullptr)
        return Invalid{fmt::format("'advertise': channel {} needs a string '{}'", one.id, key)};
      *into = *value;
    }
    a.channels.push_back(std::move(one));
  }
  return a;
}

}  // namespace

std::string server_info_json(std::string_view name, std::string_view session_id,
                             std::string_view domain) {
  const json j = {{"op", "serverInfo"},
                  {"name", name},
                  {"capabilities", json::array({"clientPublish"})},
                  {"supportedEncodings", json::array({"cdr"})},
                  {"metadata", {{"ferry_domain", domain}}},
                  {"sessionId", session_id}};
  return j.dump();
}

std::string status_json(StatusLevel level, std::string_view message, std::string_view id) {
  json j = {{"op", "status"}, {"level", static_cast<int>(level)}, {"message", message}};
  if (!id.empty()) j["id"] = id;
  // A message may quote what a client sent: replace invalid UTF-8 rather than throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string advertise_json(std::span<const ChannelDescription> channels) {
  json list = json::array();
  for (const auto& c : channels)
    list.push_back({{"id", c.id},
                    {"topic", c.topic},
                    {"encoding", "cdr"},
                    {"schemaName", c.schema_name},
                    {"schema", c.schema},
                    {"schemaEncoding", "ros2msg"}});
  return json{{"op", "advertise"}, {"channels", std::move(list)}}.dump();
}

std::string unadvertise_json(std::span<const ChannelId> channels) {
  return json{{"op", "unadvertise"},
              {"channelIds", std::vector<ChannelId>(channels.begin(), channels.end())}}
      .dump();
}

std::array<std::byte, kMessageDataHeaderSize> message_data_header(
    SubscriptionId subscription, std::uint64_t timestamp_ns) noexcept {
  static_assert(std::endian::native == std::endian::little, "the protocol is little-endian");
  std::array<std::byte, kMessageDataHeaderSize> h{};
  h[0] = std::byte{0x01};
  std::memcpy(h.data() + 1, &subscription, sizeof subscription);
  std::memcpy(h.data() + 5, &timestamp_ns, sizeof timestamp_ns);
  return h;
}

ClientText parse_client_text(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid{fmt::format("malformed JSON: {}", excerpt(text))};
  if (!j.is_object())
    return Invalid{
        fmt::format("a text message must be a JSON object with an "
                    "'op', got {}",
                    excerpt(text))};
  const auto op_it = j.find("op");
  if (op_it == j.end() || !op_it->is_string())
    return Invalid{fmt::format("a text message needs a string 'op': {}", excerpt(text))};
  const auto& op = op_it->get_ref<const std::string&>();
  if (op == "subscribe") return parse_subscribe(j);
  if (op == "unsubscribe") {
    auto ids = id_list(j, "subscriptionIds", op);
    if (auto* bad = std::get_if<Invalid>(&ids)) return *bad;
    return Unsubscribe{std::get<0>(std::move(ids))};
  }
  if (op == "advertise") return parse_advertise(j);
  if (op == "unadvertise") {
    auto ids = id_list(j, "channelIds", op);
    if (auto* bad = std::get_if<Invalid>(&ids)) return *bad;
    return ClientUnadvertise{std::get<0>(std::move(ids))};
  }
  for (std::string_view known : kUnsupportedOps)
    if (op == known) return Unsupported{op};
  return Invalid{fmt::format("unknown op '{}'", excerpt(op))};
}

ClientBinary parse_client_binary(std::span<const std::byte> frame) {
  if (frame.empty()) return Invalid{"an empty binary message (it needs an opcode)"};
  switch (std::to_integer<unsigned>(frame[0])) {
    case 0x01: {
      if (frame.size() < 5)
        return Invalid{
            fmt::format("a client message data of {} bytes (at least 5: opcode and "
                        "channel id)",
                        frame.size())};
      ClientMessageData m;
      std::memcpy(&m.channel, frame.data() + 1, sizeof m.channel);
      m.payload = frame.subspan(5);
      return m;
    }
    case 0x02:
      return ServiceCallRequest{};
    default:
      return Invalid{
          fmt::format("unknown binary opcode 0x{:02x}", std::to_integer<unsigned>(frame[0]))};
  }
}

}  // namespace ferry::foxglove
