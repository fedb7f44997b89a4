// Each message's field list, written once as `fields(io, message)` and run
// by WireWriter (encode) and WireReader (decode); plus the header.

#include <concepts>
#include <type_traits>
#include <utility>

#include "ferry/discovery/protocol.hpp"
#include "text.hpp"
#include "wire.hpp"

namespace ferry::discovery {

namespace {

using wire::WireReader;
using wire::WireWriter;

// `Like<Hello> auto& m` binds both `Hello&` (decode) and `const Hello&` (encode).
template <class T, class U>
concept Like = std::same_as<std::remove_const_t<T>, U>;

bool is_power_of_two(std::uint32_t value) { return value != 0 && (value & (value - 1)) == 0; }

void port_request(auto& io, auto& m) {
  io.str(m.topic, "topic", kMaxTopicName);
  io.str(m.type_name, "type_name", kMaxTypeName);
  io.num(m.type_size, "type_size");
  io.num(m.type_align, "type_align");
  io.num(m.identity, "identity");
  io.str(m.resume_doorbell, "resume_doorbell", kMaxShmName);
  io.str(m.type_layout, "type_layout", kMaxTypeLayout);
  io.flag(m.observer, "observer");
}

void capacity(auto& io, const std::uint32_t& value) {
  io.require(is_power_of_two(value), [&] {
    return text::cat("field 'capacity' is ", value, ", it must be a power of two");
  });
}

void fields(auto& io, Like<Hello> auto& m) {
  io.num(m.protocol_version, "protocol_version");
  io.str(m.node_name, "node_name", kMaxNodeName);
  io.pid(m.pid, "pid");
  io.num(m.resume_slot, "resume_slot");
}

void fields(auto& io, Like<Welcome> auto& m) {
  io.num(m.node_id, "node_id");
  io.str(m.domain, "domain", kMaxDomainName);
  io.num(m.heartbeat_ms, "heartbeat_ms");
  io.num(m.timeout_ms, "timeout_ms");
  io.str(m.registry_shm, "registry_shm", kMaxShmName);
  io.num(m.node_slot, "node_slot");
}

void fields(auto& io, Like<CreatePublisher> auto& m) { port_request(io, m); }
void fields(auto& io, Like<CreateSubscriber> auto& m) { port_request(io, m); }

void fields(auto& io, Like<TopicConfig> auto& m) {
  io.enumeration(m.policy, "policy");
  io.num(m.capacity, "capacity");
  capacity(io, m.capacity);
  io.num(m.slot_size, "slot_size");
  io.num(m.block_timeout_ms, "block_timeout_ms");
  io.num(m.limits.max_publishers, "max_publishers");
  io.num(m.limits.max_subscribers, "max_subscribers");
  io.num(m.limits.max_loans, "max_loans");
  io.num(m.limits.max_held, "max_held");
  io.num(m.limits.history, "history");
  io.num(m.sample_size, "sample_size");
  io.num(m.max_size, "max_size");
}

void fields(auto& io, Like<PortCreated> auto& m) {
  io.num(m.port_id, "port_id");
  fields(io, m.topic);
  io.str(m.doorbell_shm, "doorbell_shm", kMaxShmName);
  io.num(m.doorbell_offset, "doorbell_offset");
}

void fields(auto& io, Like<DestroyPort> auto& m) { io.num(m.port_id, "port_id"); }
void fields(auto& io, Like<PortDestroyed> auto& m) { io.num(m.port_id, "port_id"); }

void fields(auto& io, Like<Matched> auto& m) {
  io.num(m.port_id, "port_id");
  io.num(m.peer_port_id, "peer_port_id");
  io.str(m.peer_node, "peer_node", kMaxNodeName);
  io.pid(m.peer_pid, "peer_pid");
  io.num(m.peer_owner, "peer_owner");
  io.str(m.ring_shm, "ring_shm", kMaxShmName);
  io.str(m.doorbell_shm, "doorbell_shm", kMaxShmName);
  io.num(m.doorbell_offset, "doorbell_offset");
  io.num(m.peer_identity, "peer_identity");
  io.flag(m.peer_observer, "peer_observer");
}

void fields(auto& io, Like<Unmatched> auto& m) {
  io.num(m.port_id, "port_id");
  io.num(m.peer_port_id, "peer_port_id");
  io.enumeration(m.reason, "reason");
}

void fields(auto& io, Like<QueueReleased> auto& m) {
  io.num(m.port_id, "port_id");
  io.num(m.peer_port_id, "peer_port_id");
}

void fields(auto& io, Like<Error> auto& m) {
  io.enumeration(m.code, "code");
  io.str(m.message, "message", kMaxErrorMessage);
}

void fields(auto& io, Like<ListTopics> auto& m) {
  io.num(m.start, "start");
  io.str(m.topic, "topic", kMaxTopicName);
  io.num(m.part, "part");
}

void fields(auto& io, Like<PortInfo> auto& m) {
  io.num(m.port_id, "port_id");
  io.str(m.node, "node", kMaxNodeName);
  io.pid(m.pid, "pid");
  io.flag(m.observer, "observer");
}

void fields(auto& io, Like<QueueInfo> auto& m) {
  io.num(m.publisher_port_id, "publisher_port_id");
  io.num(m.subscriber_port_id, "subscriber_port_id");
  io.str(m.ring_shm, "ring_shm", kMaxShmName);
}

void fields(auto& io, Like<TopicInfo> auto& m);  // used by struct_list below
void fields(auto& io, Like<NodePortInfo> auto& m);
void fields(auto& io, Like<NodeInfo> auto& m);

// A list of structs that have their own field list.
template <class IO, class Vector>
void struct_list(IO& io, Vector& items, std::string_view field) {
  io.list(items, field, [](IO& inner, auto& item) { fields(inner, item); });
}

void fields(auto& io, Like<TopicInfo> auto& m) {
  io.str(m.name, "name", kMaxTopicName);
  io.str(m.type_name, "type_name", kMaxTypeName);
  io.enumeration(m.policy, "policy");
  io.num(m.capacity, "capacity");
  capacity(io, m.capacity);
  io.num(m.sample_size, "sample_size");
  struct_list(io, m.publishers, "publishers");
  struct_list(io, m.subscribers, "subscribers");
  struct_list(io, m.queues, "queues");
}

void fields(auto& io, Like<TopicList> auto& m) {
  io.num(m.total, "total");
  io.num(m.start, "start");
  struct_list(io, m.topics, "topics");
  io.num(m.part, "part");
  io.num(m.next_part, "next_part");
}

void fields(auto& io, Like<ListNodes> auto& m) { io.num(m.start, "start"); }

void fields(auto& io, Like<NodePortInfo> auto& m) {
  io.num(m.port_id, "port_id");
  io.str(m.topic, "topic", kMaxTopicName);
}

void fields(auto& io, Like<NodeInfo> auto& m) {
  io.num(m.node_id, "node_id");
  io.str(m.name, "name", kMaxNodeName);
  io.pid(m.pid, "pid");
  io.num(m.slot, "slot");
  io.num(m.connected_ms, "connected_ms");
  io.num(m.heartbeat_age_ms, "heartbeat_age_ms");
  struct_list(io, m.publishers, "publishers");
  struct_list(io, m.subscribers, "subscribers");
}

void fields(auto& io, Like<NodeList> auto& m) {
  io.num(m.total, "total");
  io.num(m.start, "start");
  struct_list(io, m.nodes, "nodes");
}

void fields(auto& io, Like<GetConfig> auto& m) { io.num(m.offset, "offset"); }

void fields(auto& io, Like<ConfigText> auto& m) {
  io.str(m.source, "source", kMaxPathName);
  io.num(m.total, "total");
  io.num(m.offset, "offset");
  io.str(m.text, "text", kMaxConfigChunk);
  io.require(m.offset <= m.total && m.text.size() <= m.total - m.offset, [&] {
    return text::cat("config text of ", m.text.size(), " bytes at offset ", m.offset,
                     " runs past its total of ", m.total);
  });
}

void fields(auto& /*io*/, Like<Ping> auto& /*m*/) {}
void fields(auto& /*io*/, Like<Pong> auto& /*m*/) {}

// ---- header ------------------------------------------------------------------

void header(WireWriter& w, MessageType type, std::size_t body_size, std::uint32_t request_id) {
  w.put(kMagic, 4);
  w.put(kProtocolVersion, 2);
  w.put(static_cast<std::uint16_t>(type), 2);
  w.put(body_size, 4);
  w.put(request_id, 4);
}

std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t offset, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) {
    value |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(bytes[offset + i]))
             << (8 * i);
  }
  return value;
}

// One pass over `message`: writes what fits in `out` and measures the rest.
WireWriter write_message(const Message& message, std::uint32_t request_id,
                         std::span<std::byte> out) {
  // The body length is needed in the header before the body is written:
  // measure the body first (cheap, no allocation).
  WireWriter body{{}};
  std::visit([&](const auto& m) { fields(body, m); }, message);
  WireWriter w{out};
  if (body.error()) return body;
  const MessageType type = type_of(message);
  w.require(!is_notification(type) || request_id == 0, [&] {
    return text::cat(to_string(type), " is a notification and must carry request id 0, not ",
                     request_id);
  });
  if (w.error()) return w;
  header(w, type, body.size(), request_id);
  std::visit([&](const auto& m) { fields(w, m); }, message);
  return w;
}

std::expected<std::size_t, EncodeError> check_written(const WireWriter& w, const Message& message) {
  if (w.error()) return std::unexpected(*w.error());
  if (w.size() > kMaxMessageSize) {
    return std::unexpected(
        EncodeError{EncodeErrorCode::TooLarge,
                    text::cat(to_string(type_of(message)), " encodes to ", w.size(),
                              " bytes, more than the ", kMaxMessageSize, "-byte message limit")});
  }
  return w.size();
}

// Each alternative of Message has its own wire type.
template <std::size_t... I>
consteval bool types_are_unique(std::index_sequence<I...>) {
  constexpr MessageType types[] = {std::variant_alternative_t<I, Message>::kType...};
  for (std::size_t a = 0; a < sizeof...(I); ++a) {
    for (std::size_t b = a + 1; b < sizeof...(I); ++b) {
      if (types[a] == types[b]) return false;
    }
  }
  return true;
}
static_assert(types_are_unique(std::make_index_sequence<std::variant_size_v<Message>>{}),
              "two messages share a MessageType");

// Finds the variant alternative whose kType is `type` and decodes it.
template <std::size_t I = 0>
bool decode_body(MessageType type, WireReader& r, Message& out) {
  if constexpr (I == std::variant_size_v<Message>) {
    return false;
  } else {
    using M = std::variant_alternative_t<I, Message>;
    if (M::kType != type) return decode_body<I + 1>(type, r, out);
    fields(r, out.emplace<M>());
    return true;
  }
}

DecodeError decode_error(DecodeErrorCode code, std::string message) {
  return DecodeError{code, std::move(message)};
}

}  // namespace

std::expected<std::size_t, EncodeError> encoded_size(const Message& message) {
  return check_written(write_message(message, 0, {}), message);
}

std::expected<std::size_t, EncodeError> encode_into(const Message& message,
                                                    std::uint32_t request_id,
                                                    std::span<std::byte> out) {
  const WireWriter w = write_message(message, request_id, out);
  auto size = check_written(w, message);
  if (size && !w.fits()) {
    return std::unexpected(EncodeError{EncodeErrorCode::BufferTooSmall,
                                       text::cat(to_string(type_of(message)), " needs ", *size,
                                                 " bytes, the buffer has ", out.size())});
  }
  return size;
}

std::expected<std::vector<std::byte>, EncodeError> encode(const Message& message,
                                                          std::uint32_t request_id) {
  const auto size = check_written(write_message(message, request_id, {}), message);
  if (!size) return std::unexpected(size.error());
  std::vector<std::byte> bytes(*size);
  (void)write_message(message, request_id, bytes);
  return bytes;  // same message, same size: the measuring pass has checked everything
}

std::expected<Envelope, DecodeError> decode(std::span<const std::byte> datagram) {
  using enum DecodeErrorCode;
  if (datagram.size() > kMaxMessageSize) {
    return std::unexpected(
        decode_error(Oversized, text::cat("datagram of ", datagram.size(), " bytes exceeds the ",
                                          kMaxMessageSize, "-byte limit")));
  }
  if (datagram.size() < kHeaderSize) {
    return std::unexpected(decode_error(
        TruncatedHeader, text::cat("datagram of ", datagram.size(), " bytes is shorter than the ",
                                   kHeaderSize, "-byte header")));
  }
  const auto magic = static_cast<std::uint32_t>(read_le(datagram, 0, 4));
  const auto version = static_cast<std::uint16_t>(read_le(datagram, 4, 2));
  const auto raw_type = static_cast<std::uint16_t>(read_le(datagram, 6, 2));
  const auto body_length = static_cast<std::uint32_t>(read_le(datagram, 8, 4));
  const auto request_id = static_cast<std::uint32_t>(read_le(datagram, 12, 4));

  if (magic != kMagic) {
    return std::unexpected(decode_error(
        BadMagic, text::cat("magic ", text::hex32(magic), " is not ferry's ", text::hex32(kMagic),
                            ": the peer does not speak the ferry protocol")));
  }
  if (version != kProtocolVersion) {
    return std::unexpected(decode_error(
        UnsupportedVersion,
        text::cat("protocol version ", version, ", this side speaks ", kProtocolVersion)));
  }
  if (body_length != datagram.size() - kHeaderSize) {
    return std::unexpected(decode_error(
        LengthMismatch,
        text::cat("body length ", body_length, " does not match datagram length ", datagram.size(),
                  " (header ", kHeaderSize, " + body ", datagram.size() - kHeaderSize, ")")));
  }
  const auto type = static_cast<MessageType>(raw_type);
  if (to_string(type).empty()) {
    return std::unexpected(decode_error(UnknownType, text::cat("unknown message type ", raw_type)));
  }
  if (is_notification(type) && request_id != 0) {
    return std::unexpected(decode_error(
        InvalidValue,
        text::cat(to_string(type), " is a notification and must carry request id 0, not ",
                  request_id)));
  }

  Envelope envelope{request_id, Ping{}};
  WireReader r{datagram.subspan(kHeaderSize), to_string(type)};
  if (!decode_body(type, r, envelope.message)) {
    return std::unexpected(decode_error(UnknownType, text::cat("unknown message type ", raw_type)));
  }
  if (r.error()) return std::unexpected(*r.error());
  if (r.remaining() != 0) {
    return std::unexpected(
        decode_error(TrailingBytes, text::cat("message ", to_string(type), " has ", r.remaining(),
                                              " unexpected bytes after its last field")));
  }
  return envelope;
}

}  // namespace ferry::discovery
