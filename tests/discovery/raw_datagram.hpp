#pragma once
// Builds datagrams byte by byte, independently of the encoder, so that tests
// can pin the wire format and craft input the encoder would never produce.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery::test {

class RawBody {
 public:
  RawBody& u8(std::uint64_t v) { return put(v, 1); }
  RawBody& u16(std::uint64_t v) { return put(v, 2); }
  RawBody& u32(std::uint64_t v) { return put(v, 4); }
  RawBody& u64(std::uint64_t v) { return put(v, 8); }
  RawBody& str(std::string_view s) {
    u16(s.size());
    for (const char c : s) u8(static_cast<unsigned char>(c));
    return *this;
  }
  // A string whose length prefix says `length` but carries `s`.
  RawBody& str_with_length(std::uint64_t length, std::string_view s) {
    u16(length);
    for (const char c : s) u8(static_cast<unsigned char>(c));
    return *this;
  }

  struct Header {
    std::uint32_t magic = kMagic;
    std::uint16_t version = kProtocolVersion;
    std::uint32_t request_id = 1;
    std::optional<std::uint32_t> body_length;  // default: the real one

    Header& with_magic(std::uint32_t v) {
      magic = v;
      return *this;
    }
    Header& with_version(std::uint16_t v) {
      version = v;
      return *this;
    }
    Header& with_request_id(std::uint32_t v) {
      request_id = v;
      return *this;
    }
    Header& with_body_length(std::uint32_t v) {
      body_length = v;
      return *this;
    }
  };

  [[nodiscard]] std::vector<std::byte> datagram(std::uint16_t type, Header h) const {
    RawBody out;
    out.u32(h.magic).u16(h.version).u16(type);
    out.u32(h.body_length.value_or(static_cast<std::uint32_t>(bytes_.size())));
    out.u32(h.request_id);
    out.bytes_.insert(out.bytes_.end(), bytes_.begin(), bytes_.end());
    return out.bytes_;
  }
  [[nodiscard]] std::vector<std::byte> datagram(std::uint16_t type) const {
    return datagram(type, Header{});
  }

 private:
  RawBody& put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

// Rewrites the header's body length to match the datagram's real length.
inline void fix_body_length(std::vector<std::byte>& d) {
  if (d.size() < kHeaderSize) return;
  const auto n = static_cast<std::uint32_t>(d.size() - kHeaderSize);
  for (int i = 0; i < 4; ++i)
    d[static_cast<std::size_t>(8 + i)] = static_cast<std::byte>((n >> (8 * i)) & 0xFF);
}

}  // namespace ferry::discovery::test
