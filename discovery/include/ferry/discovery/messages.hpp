#pragma once
// The messages of the ferryd control protocol, as plain structs. Encoding and
// decoding live in protocol.hpp; this header only says what each message
// carries. Every request from a client gets exactly one reply (its specific
// reply or Error) with the same request id; Matched and Unmatched are
// notifications from the daemon and carry request id 0.
//
// Adding a message: a struct with a new MessageType value and kType, an entry
// in Message, and its field list in src/codec.cpp. Never renumber.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ferry/config/policy.hpp"

namespace ferry::discovery {

// Wire value of the header's type field. Values are stable forever.
enum class MessageType : std::uint16_t {
  Hello = 1,
  Welcome = 2,
  CreatePublisher = 3,
  CreateSubscriber = 4,
  PortCreated = 5,
  DestroyPort = 6,
  PortDestroyed = 7,
  Matched = 8,
  Unmatched = 9,
  Error = 10,
  ListTopics = 11,
  TopicList = 12,
  Ping = 13,
  Pong = 14,
  ListNodes = 15,
  NodeList = 16,
  GetConfig = 17,
  ConfigText = 18,
  QueueReleased = 19,
};

// Full-queue policy of a topic (docs/concepts/policies.md): config's, on the wire as its number.
using Policy = config::Policy;
using config::to_string;
static_assert(static_cast<std::uint8_t>(Policy::Block) == 0 &&
                  static_cast<std::uint8_t>(Policy::DropNew) == 1 &&
                  static_cast<std::uint8_t>(Policy::DropOldest) == 2,
              "the wire carries a policy as this number");

// Why a pair of ports was unmatched.
enum class UnmatchReason : std::uint8_t {
  PortDestroyed = 0,  // the peer destroyed its port
  PeerClosed = 1,     // the peer's socket closed (exit or crash)
  PeerTimedOut = 2,   // the peer's heartbeat stopped
};

// Why ferryd refused a request: the code an Error reply carries on the wire
// (the public API reports ferry::ErrorCode).
enum class RefusalCode : std::uint16_t {
  MalformedMessage = 1,    // the daemon could not decode the request
  UnsupportedVersion = 2,  // Hello or header with another protocol version
  NotRegistered = 3,       // a request before Hello
  AlreadyRegistered = 4,   // a second Hello on one connection
  InvalidArgument = 5,     // e.g. an empty or malformed topic or node name
  UnknownTopic = 6,        // undeclared topic under `strict: true`
  TypeMismatch = 7,        // type name, size, alignment or layout differs from the topic's
  LimitExceeded = 8,       // max_publishers / max_subscribers
  PermissionDenied = 9,    // refused by the topic's `allow:`
  UnknownPort = 10,        // DestroyPort of a port this node does not own
  NodeExpired = 11,        // the node was declared dead; its ports are gone
  ResourceExhausted = 12,  // shared memory or pool space ran out
  Internal = 13,           // a daemon bug; the message says what
};

[[nodiscard]] std::string_view to_string(MessageType type) noexcept;
[[nodiscard]] std::string_view to_string(UnmatchReason reason) noexcept;
[[nodiscard]] std::string_view to_string(RefusalCode code) noexcept;

// ---- session ---------------------------------------------------------------

// Client -> daemon, first message on a connection.
struct Hello {
  static constexpr MessageType kType = MessageType::Hello;
  std::uint16_t protocol_version = 0;
  std::string node_name;  // <= kMaxNodeName
  std::int32_t pid = 0;   // > 0; the daemon compares it with SO_PEERCRED
  // Reconnecting after ferryd restarted: the heartbeat slot (pool owner id)
  // this process had. A daemon that adopted the domain's state gives it
  // back, so that what the node holds in the pool stays attributed to it.
  std::uint32_t resume_slot = 0;  // 0: a new node
  bool operator==(const Hello&) const = default;
};

// Daemon -> client, reply to Hello.
struct Welcome {
  static constexpr MessageType kType = MessageType::Welcome;
  std::uint64_t node_id = 0;
  std::string domain;  // <= kMaxDomainName
  std::uint32_t heartbeat_ms = 0;
  std::uint32_t timeout_ms = 0;
  std::string registry_shm;  // <= kMaxShmName
  // This node's slot in the domain: its heartbeat word in the registry and
  // its owner id in the loaned-memory pool (1..65535).
  std::uint32_t node_slot = 0;
  bool operator==(const Welcome&) const = default;
};

// ---- ports -----------------------------------------------------------------

// What the port's type must be; the daemon checks it against the topic.
struct PortRequest {
  std::string topic;      // <= kMaxTopicName
  std::string type_name;  // <= kMaxTypeName
  std::uint64_t type_size = 0;
  std::uint32_t type_align = 0;
  // Re-registering a port after ferryd restarted: its identity, the first
  // id it was ever given (0: a new port, whose identity is its first id;
  // peers match their old queues to the new one with it) and, for a
  // subscriber, the doorbell it keeps (its publishers ring it already).
  std::uint64_t identity = 0;
  std::string resume_doorbell;  // <= kMaxShmName
  // A generated type's layout fingerprint (ferry/config/layout_fingerprint.hpp;
  // protocol version 4): checked field by field against the topic's type.
  // Empty for a hand-written type: name, size and alignment are checked.
  std::string type_layout{};  // <= kMaxTypeLayout; {}: may be left out of an initializer
  // Subscribers only: an observer (a tool inspecting the topic). Its queues
  // are drop_oldest rings whatever the topic's policy, publishers never wait
  // for it nor count it in their results, and it does not count toward
  // max_subscribers.
  bool observer = false;
  bool operator==(const PortRequest&) const = default;
};

struct CreatePublisher : PortRequest {
  static constexpr MessageType kType = MessageType::CreatePublisher;
  bool operator==(const CreatePublisher&) const = default;
};

struct CreateSubscriber : PortRequest {
  static constexpr MessageType kType = MessageType::CreateSubscriber;
  bool operator==(const CreateSubscriber&) const = default;
};

struct TopicLimits {
  std::uint32_t max_publishers = 0;
  std::uint32_t max_subscribers = 0;
  std::uint32_t max_loans = 0;  // unpublished loans per publisher
  std::uint32_t max_held = 0;   // samples a subscriber holds at once
  std::uint32_t history = 0;    // samples handed to a late subscriber
  bool operator==(const TopicLimits&) const = default;
};

// A topic's effective configuration, as the daemon resolved it.
struct TopicConfig {
  Policy policy = Policy::DropOldest;
  std::uint32_t capacity = 1;  // slots per queue; a power of two
  std::uint32_t slot_size = 0;
  std::uint32_t block_timeout_ms = 0;
  TopicLimits limits;
  std::uint64_t sample_size = 0;  // fixed-size types
  std::uint64_t max_size = 0;     // `bytes` topics
  bool operator==(const TopicConfig&) const = default;
};

// Daemon -> client, reply to CreatePublisher / CreateSubscriber.
struct PortCreated {
  static constexpr MessageType kType = MessageType::PortCreated;
  std::uint64_t port_id = 0;
  TopicConfig topic;
  // A subscriber's doorbell word (empty name for a publisher).
  std::string doorbell_shm;  // <= kMaxShmName
  std::uint64_t doorbell_offset = 0;
  bool operator==(const PortCreated&) const = default;
};

// Client -> daemon.
struct DestroyPort {
  static constexpr MessageType kType = MessageType::DestroyPort;
  std::uint64_t port_id = 0;
  bool operator==(const DestroyPort&) const = default;
};

// Daemon -> client, reply to DestroyPort.
struct PortDestroyed {
  static constexpr MessageType kType = MessageType::PortDestroyed;
  std::uint64_t port_id = 0;
  bool operator==(const PortDestroyed&) const = default;
};

// Daemon -> client notification (request id 0): `port_id` (ours) now shares
// the ring `ring_shm` with `peer_port_id`. A publisher also gets the
// subscriber's doorbell, to wake it; a subscriber gets an empty doorbell name.
struct Matched {
  static constexpr MessageType kType = MessageType::Matched;
  std::uint64_t port_id = 0;
  std::uint64_t peer_port_id = 0;
  std::string peer_node;  // <= kMaxNodeName
  std::int32_t peer_pid = 0;
  std::uint16_t peer_owner = 0;  // the peer node's pool owner id (its Welcome::node_slot)
  std::string ring_shm;          // <= kMaxShmName
  std::string doorbell_shm;      // <= kMaxShmName
  std::uint64_t doorbell_offset = 0;
  // The peer port's identity (PortRequest::identity), its first id: the
  // same across daemon restarts, it identifies the queues this one replaces
  // after one.
  std::uint64_t peer_identity = 0;
  // To a publisher: the peer is an observer subscriber (PortRequest::observer).
  bool peer_observer = false;
  bool operator==(const Matched&) const = default;
};

// Daemon -> client notification (request id 0): the pair is gone.
struct Unmatched {
  static constexpr MessageType kType = MessageType::Unmatched;
  std::uint64_t port_id = 0;
  std::uint64_t peer_port_id = 0;
  UnmatchReason reason = UnmatchReason::PortDestroyed;
  bool operator==(const Unmatched&) const = default;
};

// Client -> daemon notification (request id 0, no reply): after an
// Unmatched, this node has let go of the queue's ring name (it mapped the
// ring when the Matched came, or gave up), so ferryd may unlink it. Until
// then the name stays, so that a peer that leaves right after matching
// cannot pull the ring out from under a node that has not opened it yet.
struct QueueReleased {
  static constexpr MessageType kType = MessageType::QueueReleased;
  std::uint64_t port_id = 0;       // ours
  std::uint64_t peer_port_id = 0;  // the departed peer's
  bool operator==(const QueueReleased&) const = default;
};

// Daemon -> client: the reply to a failed request, or (request id 0) an
// unsolicited error such as node_expired before the daemon closes.
struct Error {
  static constexpr MessageType kType = MessageType::Error;
  RefusalCode code = RefusalCode::Internal;
  std::string message;  // <= kMaxErrorMessage; one sentence for the user
  bool operator==(const Error&) const = default;
};

// ---- introspection (the ferry CLI) -------------------------------------------

// Client -> daemon. Topics are returned in pages that fit one datagram:
// ask again with start = previous start + entries received until `total` is
// reached. A non-empty `topic` asks for that topic only. A topic with more
// ports and queues than one datagram holds comes in parts: a reply whose
// `next_part` is not 0 ends with a partial topic; ask again with `start` at
// that topic and `part` = next_part for the rest of its items.
struct ListTopics {
  static constexpr MessageType kType = MessageType::ListTopics;
  std::uint32_t start = 0;
  std::string topic;  // <= kMaxTopicName; empty: all topics
  // Items of topic `start` already received: its publishers, then its
  // subscribers, then its queues, counted in that order.
  std::uint32_t part = 0;
  bool operator==(const ListTopics&) const = default;
};

struct PortInfo {
  std::uint64_t port_id = 0;
  std::string node;  // <= kMaxNodeName
  std::int32_t pid = 0;
  bool observer = false;  // a subscriber that is an observer (PortRequest::observer)
  bool operator==(const PortInfo&) const = default;
};

// One (publisher, subscriber) queue and the ring segment holding it.
struct QueueInfo {
  std::uint64_t publisher_port_id = 0;
  std::uint64_t subscriber_port_id = 0;
  std::string ring_shm;  // <= kMaxShmName
  bool operator==(const QueueInfo&) const = default;
};

struct TopicInfo {
  std::string name;       // <= kMaxTopicName
  std::string type_name;  // <= kMaxTypeName
  Policy policy = Policy::DropOldest;
  std::uint32_t capacity = 1;  // a power of two
  std::uint64_t sample_size = 0;
  std::vector<PortInfo> publishers;
  std::vector<PortInfo> subscribers;
  std::vector<QueueInfo> queues;
  bool operator==(const TopicInfo&) const = default;
};

// Daemon -> client, reply to ListTopics: topics [start, start + size) of
// `total`. The first topic holds its items from `part` on (the request's);
// when `next_part` is not 0 the last topic is cut there (see ListTopics).
struct TopicList {
  static constexpr MessageType kType = MessageType::TopicList;
  std::uint32_t total = 0;
  std::uint32_t start = 0;
  std::vector<TopicInfo> topics;
  std::uint32_t part = 0;
  std::uint32_t next_part = 0;
  bool operator==(const TopicList&) const = default;
};

// Client -> daemon: the domain's nodes, paged like ListTopics.
struct ListNodes {
  static constexpr MessageType kType = MessageType::ListNodes;
  std::uint32_t start = 0;
  bool operator==(const ListNodes&) const = default;
};

// A port as a node's entry lists it.
struct NodePortInfo {
  std::uint64_t port_id = 0;
  std::string topic;  // <= kMaxTopicName
  bool operator==(const NodePortInfo&) const = default;
};

struct NodeInfo {
  std::uint64_t node_id = 0;
  std::string name;  // <= kMaxNodeName
  std::int32_t pid = 0;
  std::uint32_t slot = 0;          // its Welcome::node_slot (heartbeat word, pool owner id)
  std::uint64_t connected_ms = 0;  // since its Hello
  // Age of its last heartbeat as ferryd saw it. A daemon that does not watch
  // heartbeats reports 0: the node's socket is open, so it is alive now.
  std::uint64_t heartbeat_age_ms = 0;
  std::vector<NodePortInfo> publishers;
  std::vector<NodePortInfo> subscribers;
  bool operator==(const NodeInfo&) const = default;
};

// Daemon -> client, reply to ListNodes: nodes [start, start + size) of `total`.
struct NodeList {
  static constexpr MessageType kType = MessageType::NodeList;
  std::uint32_t total = 0;
  std::uint32_t start = 0;
  std::vector<NodeInfo> nodes;
  bool operator==(const NodeList&) const = default;
};

// Client -> daemon: the configuration text ferryd serves (so that tools can
// build the type schema), from byte `offset`.
struct GetConfig {
  static constexpr MessageType kType = MessageType::GetConfig;
  std::uint32_t offset = 0;
  bool operator==(const GetConfig&) const = default;
};

// Daemon -> client, reply to GetConfig: bytes [offset, offset + text.size())
// of the `total`-byte YAML text it loaded from `source`. Ask again from
// offset + text.size() until `total` is reached.
struct ConfigText {
  static constexpr MessageType kType = MessageType::ConfigText;
  std::string source;  // <= kMaxPathName; the file name, for messages
  std::uint32_t total = 0;
  std::uint32_t offset = 0;
  std::string text;  // <= kMaxConfigChunk
  bool operator==(const ConfigText&) const = default;
};

// ---- keep-alive --------------------------------------------------------------

struct Ping {
  static constexpr MessageType kType = MessageType::Ping;
  bool operator==(const Ping&) const = default;
};

struct Pong {
  static constexpr MessageType kType = MessageType::Pong;
  bool operator==(const Pong&) const = default;
};

using Message =
    std::variant<Hello, Welcome, CreatePublisher, CreateSubscriber, PortCreated, DestroyPort,
                 PortDestroyed, Matched, Unmatched, Error, ListTopics, TopicList, Ping, Pong,
                 ListNodes, NodeList, GetConfig, ConfigText, QueueReleased>;

[[nodiscard]] MessageType type_of(const Message& message) noexcept;

// True for notifications (the daemon's, and the client's QueueReleased),
// which always carry request id 0 and get no reply.
[[nodiscard]] constexpr bool is_notification(MessageType type) noexcept {
  return type == MessageType::Matched || type == MessageType::Unmatched ||
         type == MessageType::QueueReleased;
}

// An Error whose message is cut (at a UTF-8 boundary) to kMaxErrorMessage
// and has NUL bytes replaced, so that it always encodes.
[[nodiscard]] Error make_error(RefusalCode code, std::string_view message);

}  // namespace ferry::discovery
