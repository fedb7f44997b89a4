// A small seeded fuzz test: valid datagrams mutated at random, and random
// bytes behind a valid header. Decoding must never crash (ASan/UBSan builds
// watch for it), and whatever it accepts must re-encode to the very same
// bytes (the format is canonical: one message, one encoding).

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "ferry/discovery/protocol.hpp"
#include "raw_datagram.hpp"
#include "sample_messages.hpp"

using namespace ferry::discovery;

namespace {

using Bytes = std::vector<std::byte>;

constexpr int kIterations = 100'000;

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  std::byte any_byte() { return static_cast<std::byte>(below(256)); }

  // Values that sit on the edges of the format's checks.
  std::byte edge_byte() {
    static constexpr unsigned char kEdges[] = {0x00, 0x01, 0x02, 0x7F, 0x80,
                                               0xFF, 0x0F, 0x10, 0x40};
    return static_cast<std::byte>(kEdges[below(sizeof(kEdges))]);
  }

  void mutate(Bytes& d) {
    switch (below(8)) {
      case 0:  // flip one bit
        if (!d.empty()) d[below(d.size())] ^= static_cast<std::byte>(1u << below(8));
        break;
      case 1:  // overwrite a byte
        if (!d.empty()) d[below(d.size())] = any_byte();
        break;
      case 2:  // an edge value, where lengths and counts live
        if (!d.empty()) d[below(d.size())] = edge_byte();
        break;
      case 3:  // insert bytes
        for (std::size_t i = 0, n = 1 + below(8); i < n; ++i) {
          d.insert(d.begin() + static_cast<std::ptrdiff_t>(below(d.size() + 1)), any_byte());
        }
        break;
      case 4:  // erase bytes
        for (std::size_t i = 0, n = 1 + below(8); i < n && !d.empty(); ++i) {
          d.erase(d.begin() + static_cast<std::ptrdiff_t>(below(d.size())));
        }
        break;
      case 5:  // truncate
        d.resize(below(d.size() + 1));
        break;
      case 6:  // append garbage
        for (std::size_t i = 0, n = 1 + below(32); i < n; ++i) d.push_back(any_byte());
        break;
      case 7:  // a u16 length/count set to 0 or 0xFFFF
        if (d.size() >= 2) {
          const std::size_t at = below(d.size() - 1);
          const std::byte v = below(2) == 0 ? std::byte{0} : std::byte{0xFF};
          d[at] = v;
          d[at + 1] = v;
        }
        break;
    }
  }

 private:
  std::mt19937_64 rng_;
};

// Every sample message encoded (a notification with request id 0, any
// other with 1): the datagrams the fuzzers start from.
std::vector<Bytes> seed_datagrams() {
  std::vector<Bytes> seeds;
  for (const Message& m : test::sample_messages()) {
    seeds.push_back(encode(m, is_notification(type_of(m)) ? 0 : 1).value());
  }
  return seeds;
}

// Decodes a fuzzed datagram: a refusal must say why (and is counted by its
// code in `errors`, when given); what is accepted must encode back to the
// very same bytes. Returns whether it was accepted.
bool decodes_canonically(const Bytes& d, std::map<DecodeErrorCode, int>* errors) {
  const auto decoded = decode(d);
  if (!decoded) {
    if (errors != nullptr) ++(*errors)[decoded.error().code];
    REQUIRE_FALSE(decoded.error().message.empty());
    return false;
  }
  const auto again = encode(decoded->message, decoded->request_id);
  REQUIRE_MESSAGE(again.has_value(), again.error().message);
  REQUIRE(*again == d);
  return true;
}

}  // namespace

TEST_CASE("randomly mutated datagrams never crash the decoder and decode canonically") {
  const std::vector<Bytes> seeds = seed_datagrams();

  Mutator mutator{0xF3221};  // fixed seed: a failure reproduces
  std::map<DecodeErrorCode, int> errors;
  int accepted = 0;
  for (int i = 0; i < kIterations; ++i) {
    Bytes d = seeds[mutator.below(seeds.size())];
    for (std::size_t n = 0, count = 1 + mutator.below(4); n < count; ++n) mutator.mutate(d);
    // Most of the time keep the header consistent so that mutations reach
    // the body checks rather than stopping at the length check.
    if (mutator.below(4) != 0) test::fix_body_length(d);

    if (decodes_canonically(d, &errors)) ++accepted;
  }
  MESSAGE("accepted " << accepted << " of " << kIterations);
  CHECK(accepted > 0);
  // The mutations reach every layer of checks.
  for (const auto code : {DecodeErrorCode::TruncatedHeader, DecodeErrorCode::BadMagic,
                          DecodeErrorCode::UnsupportedVersion, DecodeErrorCode::LengthMismatch,
                          DecodeErrorCode::UnknownType, DecodeErrorCode::TruncatedBody,
                          DecodeErrorCode::StringTooLong, DecodeErrorCode::InvalidString,
                          DecodeErrorCode::InvalidEnum, DecodeErrorCode::InvalidValue,
                          DecodeErrorCode::TrailingBytes}) {
    CAPTURE(static_cast<int>(code));
    CHECK(errors[code] > 0);
  }
}

TEST_CASE("random bodies behind a valid header of every type never crash the decoder") {
  Mutator mutator{0xFE77};
  for (int i = 0; i < kIterations / 4; ++i) {
    test::RawBody body;
    for (std::size_t n = 0, size = mutator.below(200); n < size; ++n) {
      body.u8(std::to_integer<unsigned>(mutator.below(3) == 0 ? mutator.edge_byte()
                                                              : mutator.any_byte()));
    }
    const auto type =
        static_cast<std::uint16_t>(1 + mutator.below(std::variant_size_v<Message> + 2));
    const auto d = body.datagram(type, test::RawBody::Header{}.with_request_id(0));
    const auto decoded = decode(d);
    if (decoded) REQUIRE(encode(decoded->message, 0).value() == d);
  }
}

// Structure-aware: a datagram's header (its type) with another message's
// body, runs of bytes copied from a third message, or a run of its own body
// repeated (as a list element or a string would be). These reach the
// decoder's per-type checks with well-formed pieces in the wrong places,
// which single-byte mutations of one message rarely build.
TEST_CASE("bodies spliced across message types and repeated runs never crash the decoder") {
  const std::vector<Bytes> seeds = seed_datagrams();
  const auto body_of = [](const Bytes& d) {
    return Bytes(d.begin() + static_cast<std::ptrdiff_t>(kHeaderSize), d.end());
  };
  Mutator mutator{0x5B11CE};  // fixed seed: a failure reproduces
  int accepted = 0;
  for (int i = 0; i < kIterations; ++i) {
    const Bytes& head = seeds[mutator.below(seeds.size())];
    Bytes body = body_of(seeds[mutator.below(seeds.size())]);
    const Bytes donor = body_of(seeds[mutator.below(seeds.size())]);
    switch (mutator.below(3)) {
      case 0:  // another message's body as is
        break;
      case 1:  // a run of a third message's body, overwritten or inserted
        if (!donor.empty()) {
          const std::size_t from = mutator.below(donor.size());
          const std::size_t length = 1 + mutator.below(donor.size() - from);
          const auto at = static_cast<std::ptrdiff_t>(mutator.below(body.size() + 1));
          const auto run = donor.begin() + static_cast<std::ptrdiff_t>(from);
          body.insert(body.begin() + at, run, run + static_cast<std::ptrdiff_t>(length));
        }
        break;
      default:  // a run of the body repeated in place, once or many times
        if (!body.empty()) {
          const std::size_t from = mutator.below(body.size());
          const std::size_t length =
              1 + mutator.below(std::min<std::size_t>(64, body.size() - from));
          const Bytes run(body.begin() + static_cast<std::ptrdiff_t>(from),
                          body.begin() + static_cast<std::ptrdiff_t>(from + length));
          for (std::size_t n = 0, times = 1 + mutator.below(40); n < times; ++n) {
            body.insert(body.begin() + static_cast<std::ptrdiff_t>(from), run.begin(), run.end());
          }
        }
        break;
    }
    Bytes d(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(kHeaderSize));
    d.insert(d.end(), body.begin(), body.end());
    test::fix_body_length(d);
    if (decodes_canonically(d, nullptr)) ++accepted;
  }
  MESSAGE("accepted " << accepted << " of " << kIterations);
  CHECK(accepted > 0);
}
