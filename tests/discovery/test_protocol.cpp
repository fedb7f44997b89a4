#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ferry/discovery/protocol.hpp"
#include "raw_datagram.hpp"
#include "sample_messages.hpp"

using namespace ferry::discovery;
using ferry::discovery::test::RawBody;
using ferry::discovery::test::sample_messages;

namespace {

std::vector<std::byte> must_encode(const Message& m, std::uint32_t request_id = 1) {
  auto bytes = encode(m, request_id);
  REQUIRE_MESSAGE(bytes.has_value(), bytes.error().message);
  return *bytes;
}

DecodeError decode_failure(const std::vector<std::byte>& d) {
  auto decoded = decode(d);
  REQUIRE_FALSE(decoded.has_value());
  return decoded.error();
}

std::uint16_t raw(MessageType t) { return static_cast<std::uint16_t>(t); }

}  // namespace

TEST_CASE("every message type survives an encode/decode round trip") {
  const auto samples = sample_messages();
  CHECK(samples.size() == std::variant_size_v<Message>);  // one sample per type
  std::uint32_t request_id = 100;
  for (const Message& m : samples) {
    CAPTURE(to_string(type_of(m)));
    const std::uint32_t id = is_notification(type_of(m)) ? 0 : ++request_id;
    const auto bytes = must_encode(m, id);
    const auto decoded = decode(bytes);
    REQUIRE_MESSAGE(decoded.has_value(), decoded.error().message);
    CHECK(decoded->request_id == id);
    CHECK(decoded->message == m);
    CHECK(type_of(decoded->message) == type_of(m));
    CHECK(encoded_size(m).value() == bytes.size());
  }
}

TEST_CASE("default-constructed messages that are valid round-trip too") {
  for (const Message& m : {Message{Ping{}}, Message{DestroyPort{}}, Message{ListTopics{}},
                           Message{TopicList{}}, Message{Unmatched{}}}) {
    const auto decoded = decode(must_encode(m, 0));
    REQUIRE(decoded.has_value());
    CHECK(decoded->message == m);
  }
}

TEST_CASE("the header is magic, version, type, body length and request id, little-endian") {
  const auto bytes = must_encode(Ping{}, 0x01020304);
  const std::vector<std::byte> expected =
      RawBody{}.datagram(raw(MessageType::Ping), RawBody::Header{}.with_request_id(0x01020304));
  CHECK(bytes == expected);
  REQUIRE(bytes.size() == kHeaderSize);
  CHECK(bytes[0] == std::byte{'F'});
  CHECK(bytes[3] == std::byte{'Y'});
  CHECK(bytes[12] == std::byte{0x04});
}

TEST_CASE("a Hello is encoded field by field exactly as documented") {
  const auto bytes = must_encode(Hello{1, "ab", 0x01020304, 7}, 9);
  const auto expected =
      RawBody{}
          .u16(1)
          .str("ab")
          .u32(0x01020304)
          .u32(7)
          .datagram(raw(MessageType::Hello), RawBody::Header{}.with_request_id(9));
  CHECK(bytes == expected);
  CHECK(bytes.size() == kHeaderSize + 2 + 2 + 2 + 4 + 4);
}

TEST_CASE("datagrams shorter than the header are refused") {
  for (std::size_t n = 0; n < kHeaderSize; ++n) {
    const auto e = decode_failure(std::vector<std::byte>(n));
    CHECK(e.code == DecodeErrorCode::TruncatedHeader);
  }
  CHECK(decode_failure(std::vector<std::byte>(7)).message ==
        "datagram of 7 bytes is shorter than the 16-byte header");
}

TEST_CASE("datagrams longer than the message limit are refused") {
  std::vector<std::byte> d = RawBody{}.datagram(raw(MessageType::Ping));
  d.resize(kMaxMessageSize + 1);
  test::fix_body_length(d);
  CHECK(decode_failure(d).code == DecodeErrorCode::Oversized);
}

TEST_CASE("a wrong magic means the peer does not speak ferry") {
  const auto e = decode_failure(
      RawBody{}.datagram(raw(MessageType::Ping), RawBody::Header{}.with_magic(0x12345678)));
  CHECK(e.code == DecodeErrorCode::BadMagic);
  CHECK(e.message.find("0x12345678") != std::string::npos);
}

TEST_CASE("another protocol version is refused with both versions named") {
  // 99: a version no ferry speaks (nor will soon), whatever kProtocolVersion is now.
  const auto e = decode_failure(RawBody{}.u16(99).str("x").u32(1).datagram(
      raw(MessageType::Hello), RawBody::Header{}.with_version(99)));
  CHECK(e.code == DecodeErrorCode::UnsupportedVersion);
  CHECK(e.message == "protocol version 99, this side speaks " + std::to_string(kProtocolVersion));
}

TEST_CASE("the header's body length must match the datagram") {
  std::vector<std::byte> d = RawBody{}.u64(1).u64(2).u64(3).datagram(
      raw(MessageType::DestroyPort), RawBody::Header{}.with_body_length(12));
  REQUIRE(d.size() == 40);
  const auto e = decode_failure(d);
  CHECK(e.code == DecodeErrorCode::LengthMismatch);
  CHECK(e.message.starts_with("body length 12 does not match datagram length 40"));
}

TEST_CASE("unknown message types are a specific error") {
  const auto past_last = static_cast<int>(std::variant_size_v<Message>) + 1;
  for (const int type : {0, past_last, 77, 0xFFFF}) {
    const auto e = decode_failure(RawBody{}.datagram(static_cast<std::uint16_t>(type)));
    CHECK(e.code == DecodeErrorCode::UnknownType);
    if (type == 77) CHECK(e.message == "unknown message type 77");
  }
}

TEST_CASE("string fields over their limit are refused by the encoder and the decoder") {
  CreatePublisher too_long{{std::string(300, 't'), "Pose", 40, 8, 0, {}}};
  const auto encoded = encode(too_long, 1);
  REQUIRE_FALSE(encoded.has_value());
  CHECK(encoded.error().code == EncodeErrorCode::StringTooLong);
  CHECK(encoded.error().message == "string field 'topic' is 300 bytes, limit 128");

  const auto d = RawBody{}
                     .str(std::string(300, 't'))
                     .str("Pose")
                     .u64(40)
                     .u32(8)
                     .datagram(raw(MessageType::CreatePublisher));
  const auto e = decode_failure(d);
  CHECK(e.code == DecodeErrorCode::StringTooLong);
  CHECK(e.message == "string field 'topic' is 300 bytes, limit 128");
}

TEST_CASE("string fields exactly at their limit are accepted") {
  const Message limits[] = {
      Hello{1, std::string(kMaxNodeName, 'n'), 1},
      CreateSubscriber{
          {std::string(kMaxTopicName, 't'), std::string(kMaxTypeName, 'T'), 1, 1, 0, {}}},
      Error{RefusalCode::Internal, std::string(kMaxErrorMessage, 'e')},
      Welcome{1, std::string(kMaxDomainName, 'd'), 1, 1, std::string(kMaxShmName, 's'), 0},
  };
  for (const Message& m : limits) {
    const auto decoded = decode(must_encode(m));
    REQUIRE(decoded.has_value());
    CHECK(decoded->message == m);
  }
  CHECK_FALSE(encode(Hello{1, std::string(kMaxNodeName + 1, 'n'), 1}, 1).has_value());
  CHECK_FALSE(encode(Error{RefusalCode::Internal, std::string(kMaxErrorMessage + 1, 'e')}, 1));
  CHECK_FALSE(encode(Matched{1, 2, "n", 3, 4, std::string(kMaxShmName + 1, 's'), "", 0}, 0));
}

TEST_CASE("strings with a NUL byte are refused") {
  std::string with_nul = "robot";
  with_nul.push_back('\0');
  with_nul += "pose";
  const auto encoded = encode(CreatePublisher{{with_nul, "Pose", 40, 8, 0, {}}}, 1);
  REQUIRE_FALSE(encoded.has_value());
  CHECK(encoded.error().code == EncodeErrorCode::InvalidString);

  const auto e = decode_failure(RawBody{}.str(with_nul).str("Pose").u64(40).u32(8).datagram(
      raw(MessageType::CreatePublisher)));
  CHECK(e.code == DecodeErrorCode::InvalidString);
  CHECK(e.message == "string field 'topic' contains a NUL byte at offset 5");
}

TEST_CASE("enum fields out of range are refused") {
  SUBCASE("policy") {
    RawBody body;
    body.u64(1).u8(9);  // port_id, policy 9
    body.u32(64).u32(128).u32(0).u32(1).u32(1).u32(1).u32(1).u32(0).u64(8).u64(0).str("").u64(0);
    const auto e = decode_failure(body.datagram(raw(MessageType::PortCreated)));
    CHECK(e.code == DecodeErrorCode::InvalidEnum);
    CHECK(e.message == "field 'policy' has value 9, valid values are 0 to 2");
  }
  SUBCASE("error code 0 and past the last") {
    for (const int code : {0, 14, 0xFFFF}) {
      const auto e = decode_failure(RawBody{}.u16(code).str("x").datagram(raw(MessageType::Error)));
      CHECK(e.code == DecodeErrorCode::InvalidEnum);
    }
  }
  SUBCASE("unmatch reason") {
    const auto e = decode_failure(RawBody{}.u64(1).u64(2).u8(3).datagram(
        raw(MessageType::Unmatched), RawBody::Header{}.with_request_id(0)));
    CHECK(e.code == DecodeErrorCode::InvalidEnum);
  }
  SUBCASE("a bool (a subscriber's observer flag) is 0 or 1") {
    RawBody body;
    body.str("t").str("T").u64(8).u32(8).u64(0).str("").str("").u8(2);  // no type_layout
    const auto e = decode_failure(body.datagram(raw(MessageType::CreateSubscriber)));
    CHECK(e.code == DecodeErrorCode::InvalidEnum);
    CHECK(e.message == "field 'observer' has value 2, valid values are 0 to 1");
  }
  SUBCASE("the encoder refuses them too") {
    Unmatched u{1, 2, static_cast<UnmatchReason>(7)};
    const auto encoded = encode(u, 0);
    REQUIRE_FALSE(encoded.has_value());
    CHECK(encoded.error().code == EncodeErrorCode::InvalidValue);
  }
}

TEST_CASE("a pid must be positive") {
  const auto e = decode_failure(RawBody{}.u16(1).str("n").u32(0).datagram(raw(MessageType::Hello)));
  CHECK(e.code == DecodeErrorCode::InvalidValue);
  CHECK(decode_failure(RawBody{}.u16(1).str("n").u32(0xFFFFFFFF).datagram(raw(MessageType::Hello)))
            .code == DecodeErrorCode::InvalidValue);
  CHECK_FALSE(encode(Hello{1, "n", -5}, 1).has_value());
}

TEST_CASE("a topic capacity must be a power of two") {
  PortCreated created{1, TopicConfig{}, "", 0};
  created.topic.capacity = 48;
  const auto encoded = encode(created, 1);
  REQUIRE_FALSE(encoded.has_value());
  CHECK(encoded.error().message == "field 'capacity' is 48, it must be a power of two");
  created.topic.capacity = 0;
  CHECK_FALSE(encode(created, 1).has_value());
  created.topic.capacity = 1u << 31;
  CHECK(encode(created, 1).has_value());
}

TEST_CASE("bytes after the last field are refused") {
  auto d = must_encode(DestroyPort{5});
  d.push_back(std::byte{0});
  test::fix_body_length(d);
  const auto e = decode_failure(d);
  CHECK(e.code == DecodeErrorCode::TrailingBytes);
  CHECK(e.message == "message DestroyPort has 1 unexpected bytes after its last field");
}

TEST_CASE("a body cut anywhere is a truncated body, never a crash") {
  for (const Message& m : sample_messages()) {
    CAPTURE(to_string(type_of(m)));
    const auto full = must_encode(m, 0);
    for (std::size_t cut = kHeaderSize; cut < full.size(); ++cut) {
      std::vector<std::byte> d(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
      test::fix_body_length(d);
      CAPTURE(cut);
      CHECK(decode_failure(d).code == DecodeErrorCode::TruncatedBody);
    }
  }
}

TEST_CASE("a list count larger than the datagram is a truncated body, not an allocation") {
  const auto d = RawBody{}.u32(1).u32(0).u16(0xFFFF).datagram(raw(MessageType::TopicList));
  const auto e = decode_failure(d);
  CHECK(e.code == DecodeErrorCode::TruncatedBody);
}

TEST_CASE("notifications carry request id 0") {
  const auto e = decode_failure(RawBody{}.u64(1).u64(2).u8(0).datagram(
      raw(MessageType::Unmatched), RawBody::Header{}.with_request_id(5)));
  CHECK(e.code == DecodeErrorCode::InvalidValue);
  const auto encoded = encode(Unmatched{1, 2, UnmatchReason::PeerClosed}, 5);
  REQUIRE_FALSE(encoded.has_value());
  CHECK(encoded.error().code == EncodeErrorCode::InvalidValue);
}

TEST_CASE("encode_into writes into the caller's buffer and reports a short one") {
  const Message m = Hello{1, "planner", 77};
  std::vector<std::byte> buffer(kMaxMessageSize);
  const auto n = encode_into(m, 3, buffer);
  REQUIRE(n.has_value());
  buffer.resize(*n);
  CHECK(buffer == must_encode(m, 3));

  std::vector<std::byte> small(10);
  const auto short_buffer = encode_into(m, 3, small);
  REQUIRE_FALSE(short_buffer.has_value());
  CHECK(short_buffer.error().code == EncodeErrorCode::BufferTooSmall);
}

TEST_CASE(
    "a topic list larger than one datagram is refused; encoded_size lets the daemon page it") {
  TopicList list{0, 0, {}};
  TopicInfo topic{std::string(100, 't'), std::string(100, 'T'), Policy::Block, 8, 8, {}, {}, {}};
  for (int i = 0; i < 40; ++i) topic.queues.push_back(QueueInfo{1, 2, std::string(150, 'r')});
  // Fill a page the way the daemon would: stop before the limit.
  while (true) {
    list.topics.push_back(topic);
    const auto size = encoded_size(list);
    if (!size) {
      CHECK(size.error().code == EncodeErrorCode::TooLarge);
      list.topics.pop_back();
      break;
    }
  }
  list.total = 1000;
  CHECK(list.topics.size() > 1);
  const auto bytes = must_encode(list);
  CHECK(bytes.size() <= kMaxMessageSize);
  CHECK(decode(bytes).has_value());
}

TEST_CASE("make_error always builds an encodable Error") {
  std::string long_text(kMaxErrorMessage - 1, 'a');
  long_text += "\xC3\xA9";  // a 2-byte UTF-8 sequence straddling the limit
  long_text += "tail";
  const Error e = make_error(RefusalCode::Internal, long_text);
  CHECK(e.message.size() == kMaxErrorMessage - 1);  // the cut sequence is dropped whole
  CHECK(encode(e, 1).has_value());

  std::string exact(kMaxErrorMessage - 2, 'a');
  exact += "\xC3\xA9zzz";
  CHECK(make_error(RefusalCode::Internal, exact).message.size() == kMaxErrorMessage);

  const Error nul = make_error(RefusalCode::Internal, std::string_view("a\0b", 3));
  CHECK(nul.message == "a?b");
}

TEST_CASE("every message and enum has a name") {
  for (const Message& m : sample_messages()) CHECK_FALSE(to_string(type_of(m)).empty());
  CHECK(to_string(Policy::DropOldest) == "drop_oldest");
  CHECK(to_string(RefusalCode::NodeExpired) == "node_expired");
  CHECK(to_string(UnmatchReason::PeerClosed) == "peer_closed");
  CHECK(to_string(static_cast<MessageType>(77)).empty());
}

TEST_CASE("a config text page may not run past its total, on either side") {
  CHECK(encode(ConfigText{"f.yaml", 10, 7, "abc"}, 1).has_value());
  const auto refused = encode(ConfigText{"f.yaml", 10, 8, "abc"}, 1);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == EncodeErrorCode::InvalidValue);

  const auto forged = RawBody{}.str("f.yaml").u32(10).u32(8).str("abc").datagram(
      raw(MessageType::ConfigText), RawBody::Header{}.with_request_id(1));
  CHECK(decode_failure(forged).code == DecodeErrorCode::InvalidValue);
}

TEST_CASE("a config text page holds up to kMaxConfigChunk bytes") {
  const std::string chunk(kMaxConfigChunk, 'y');
  const auto total = static_cast<std::uint32_t>(3 * kMaxConfigChunk);
  const auto bytes = must_encode(ConfigText{"big.yaml", total, 0, chunk});
  CHECK(bytes.size() <= kMaxMessageSize);
  CHECK(decode(bytes).has_value());
  CHECK_FALSE(encode(ConfigText{"big.yaml", total, 0, chunk + "y"}, 1).has_value());
}
