// cdr: a sample's C layout <-> little-endian CDR (docs/record-replay.md). One walk over
// the type describes both sides; encode, decode and size are three visitors.

#include "ferry/config/cdr.hpp"

#include <bit>
#include <cstring>
#include <string>

namespace ferry::config {

static_assert(std::endian::native == std::endian::little,
              "ferry's supported ABIs are little-endian: CDR_LE is a copy of the C layout");

namespace {

constexpr std::byte kHeader[kCdrHeaderSize] = {std::byte{0x00}, std::byte{0x01}, std::byte{0x00},
                                               std::byte{0x00}};
constexpr std::uint64_t kMaxTrailingPadding = 3;

std::uint64_t align_up(std::uint64_t value, std::uint64_t align) {
  return (value + align - 1) / align * align;
}

// Walks `type` in CDR order with a codec: codec.run(field, owner,
// sample_offset, cdr_offset, element_size, count, is_bool) for each run of
// primitives (or raw bytes: element_size 1); for string<=N and T[<=N],
// codec.length(field, owner, sample_offset, cdr_offset) first handles the
// uint32 length at `cdr_offset` (aligned) and returns the elements used (a
// string's bytes without its NUL), and codec.terminator(field, owner,
// cdr_offset) the NUL after a string's bytes. Returns the CDR offset after
// the type. `cdr` is relative to the first byte after the header.
template <typename Codec>
std::uint64_t walk(const Schema& schema, const Type& type, std::uint64_t sample, std::uint64_t cdr,
                   Codec& codec) {
  if (type.kind == TypeKind::Opaque) {
    static const Field kData = [] {
      Field f;
      f.name = "data";
      return f;
    }();
    codec.run(kData, type, sample, cdr, 1, type.size, false);
    return cdr + type.size;
  }
  for (const Field& f : type.fields) {
    const std::uint64_t at = sample + f.offset;
    std::uint64_t count = f.count;
    std::uint64_t elements = at;  // where the elements are in the sample
    if (f.bounded()) {
      cdr = align_up(cdr, sizeof(std::uint32_t));
      count = codec.length(f, type, at, cdr);
      cdr += sizeof(std::uint32_t);
      elements = at + f.data_offset;
    }
    switch (f.kind) {
      case FieldKind::Scalar: {
        const std::uint64_t size = scalar_size(f.scalar);
        cdr = align_up(cdr, size);
        codec.run(f, type, elements, cdr, size, count, f.scalar == Scalar::Bool);
        cdr += size * count;
        break;
      }
      case FieldKind::String:
        codec.run(f, type, elements, cdr, 1, count, false);
        cdr += count;
        break;
      case FieldKind::BoundedString:
        codec.run(f, type, elements, cdr, 1, count, false);
        cdr += count;
        codec.terminator(f, type, cdr);
        cdr += 1;
        break;
      case FieldKind::Nested: {
        const Type& nested = schema.type(f.nested);
        for (std::uint64_t i = 0; i < count; ++i)
          cdr = walk(schema, nested, elements + i * f.element_size, cdr, codec);
        break;
      }
    }
  }
  return cdr;
}

std::uint32_t load_u32(const std::byte* at) {
  std::uint32_t v = 0;
  std::memcpy(&v, at, sizeof v);
  return v;
}

std::string bound_error(const Field& f, const Type& owner, std::uint64_t length,
                        const std::string& where) {
  return std::string(f.kind == FieldKind::BoundedString ? "string" : "sequence") + " field '" +
         f.name + "' of type '" + owner.name + "' has length " + std::to_string(length) + where +
         ", over its bound " + std::to_string(f.count);
}

// Reads the lengths from a sample (untrusted: a length over the bound is a
// CdrError, never a read past the field).
struct SampleLengths {
  std::span<const std::byte> sample;
  std::uint64_t length(const Field& f, const Type& owner, std::uint64_t at, std::uint64_t) const {
    const std::uint32_t n = load_u32(sample.data() + at);
    if (n > f.count)
      throw CdrError("the sample " + bound_error(f, owner, n, " at byte " + std::to_string(at)));
    return n;
  }
};

// The CDR size of one sample: lengths from the sample, nothing written.
struct Measure : SampleLengths {
  void run(const Field&, const Type&, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
           bool) const noexcept {}
  void terminator(const Field&, const Type&, std::uint64_t) const noexcept {}
};

// For fixed types only (no lengths to read).
struct NoVisit {
  void run(const Field&, const Type&, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
           bool) const noexcept {}
  std::uint64_t length(const Field& f, const Type&, std::uint64_t, std::uint64_t) const noexcept {
    return f.count;
  }
  void terminator(const Field&, const Type&, std::uint64_t) const noexcept {}
};

std::uint64_t payload_size(const Schema& schema, const Type& type) {
  NoVisit none;
  return walk(schema, type, 0, 0, none);
}

void check_sample_size(const Type& type, std::size_t size, const char* what) {
  if (size != type.size)
    throw CdrError(std::string(what) + " of type '" + type.name + "' is " + std::to_string(size) +
                   " bytes; expected " + std::to_string(type.size));
}

// The payload after a checked header.
std::span<const std::byte> checked_payload(std::span<const std::byte> cdr,
                                           const std::string& what) {
  if (cdr.size() < kCdrHeaderSize)
    throw CdrError("CDR " + what + " is " + std::to_string(cdr.size()) +
                   " bytes, shorter than the 4-byte encapsulation header");
  if (cdr[0] != std::byte{0} || cdr[1] != std::byte{1}) {
    const auto kind = std::to_integer<unsigned>(cdr[0]) << 8 | std::to_integer<unsigned>(cdr[1]);
    throw CdrError("CDR " + what + " has encapsulation " + std::to_string(kind) +
                   (kind == 0 ? " (big-endian CDR)" : "") +
                   " at offset 0; only 1 (little-endian CDR, bytes 00 01) is supported");
  }
  return cdr.subspan(kCdrHeaderSize);
}

void check_trailing(std::uint64_t used, std::size_t available, const std::string& what) {
  if (available - used > kMaxTrailingPadding)
    throw CdrError("CDR " + what + " has " + std::to_string(available - used) +
                   " unexpected bytes after its last field at offset " +
                   std::to_string(used + kCdrHeaderSize));
}

}  // namespace

std::uint64_t cdr_size(const Schema& schema, std::size_t type) {
  return kCdrHeaderSize + payload_size(schema, schema.type(type));
}

std::uint64_t cdr_size(const Schema& schema, std::size_t type_index,
                       std::span<const std::byte> sample) {
  const Type& type = schema.type(type_index);
  if (!type.variable) return cdr_size(schema, type_index);
  check_sample_size(type, sample.size(), "the sample");
  Measure measure{{sample}};
  return kCdrHeaderSize + walk(schema, type, 0, 0, measure);
}

bool cdr_is_sample_image(const Schema& schema, std::size_t type_index) {
  const Type& type = schema.type(type_index);
  if (type.variable) return false;
  bool same = true;
  std::uint64_t next = 0;  // where the previous run ended: no gap, not even
                           // one both layouts share (the sample's padding
                           // bytes are not ours to write into a file)
  struct Check : NoVisit {
    bool& same;
    std::uint64_t& next;
    void run(const Field&, const Type&, std::uint64_t from, std::uint64_t to, std::uint64_t size,
             std::uint64_t count, bool is_bool) const {
      same = same && from == to && to == next && !is_bool;
      next = to + size * count;
    }
  } check{{}, same, next};
  const std::uint64_t payload = walk(schema, type, 0, 0, check);
  return same && payload == type.size;
}

void cdr_encode(const Schema& schema, std::size_t type_index, std::span<const std::byte> sample,
                std::span<std::byte> out) {
  const Type& type = schema.type(type_index);
  check_sample_size(type, sample.size(), "the sample");
  const std::uint64_t payload = cdr_size(schema, type_index, sample) - kCdrHeaderSize;
  if (out.size() != kCdrHeaderSize + payload)
    throw CdrError("the CDR buffer for type '" + type.name + "' is " + std::to_string(out.size()) +
                   " bytes; expected " + std::to_string(kCdrHeaderSize + payload));
  std::memcpy(out.data(), kHeader, kCdrHeaderSize);
  std::byte* const body = out.data() + kCdrHeaderSize;
  struct Copy : SampleLengths {
    std::byte* body;
    void run(const Field&, const Type&, std::uint64_t from, std::uint64_t to, std::uint64_t size,
             std::uint64_t count, bool is_bool) const {
      if (!is_bool) {
        if (count != 0) std::memcpy(body + to, sample.data() + from, size * count);
        return;
      }
      for (std::uint64_t i = 0; i < count; ++i)
        body[to + i] = sample[from + i] != std::byte{0} ? std::byte{1} : std::byte{0};
    }
    // The length was checked by measuring; a string's CDR length counts its NUL.
    std::uint64_t length(const Field& f, const Type& owner, std::uint64_t at,
                         std::uint64_t cdr) const {
      const auto n = static_cast<std::uint32_t>(SampleLengths::length(f, owner, at, cdr));
      const std::uint32_t written = f.kind == FieldKind::BoundedString ? n + 1 : n;
      std::memcpy(body + cdr, &written, sizeof written);
      return n;
    }
    void terminator(const Field&, const Type&, std::uint64_t cdr) const {
      body[cdr] = std::byte{0};
    }
  };
  // Alignment gaps are zero, as DDS implementations write them.
  std::memset(body, 0, payload);
  Copy copy{{sample}, body};
  walk(schema, type, 0, 0, copy);
}

void cdr_encode(const Schema& schema, std::size_t type, std::span<const std::byte> sample,
                std::vector<std::byte>& out) {
  const std::size_t start = out.size();
  out.resize(start + cdr_size(schema, type, sample));
  cdr_encode(schema, type, sample, std::span<std::byte>(out).subspan(start));
}

void cdr_decode(const Schema& schema, std::size_t type_index, std::span<const std::byte> cdr,
                std::span<std::byte> sample) {
  const Type& type = schema.type(type_index);
  check_sample_size(type, sample.size(), "the sample buffer");
  const std::string what = "sample of type '" + type.name + "'";
  const std::span<const std::byte> payload = checked_payload(cdr, what);
  // Only what is not written below needs clearing: a large sequence's
  // unused storage is left as it is (an image's worth of bytes).
  if (!type.variable) std::memset(sample.data(), 0, sample.size());
  struct Copy {
    const std::string& what;
    std::span<const std::byte> payload;
    std::span<std::byte> sample;
    std::size_t cdr_size;

    void need(const Field& field, const Type& owner, std::uint64_t from,
              std::uint64_t bytes) const {
      if (from > payload.size() || bytes > payload.size() - from)
        throw CdrError("CDR " + what + " is truncated: field '" + field.name + "' of type '" +
                       owner.name + "' needs bytes " + std::to_string(from + kCdrHeaderSize) +
                       ".." + std::to_string(from + kCdrHeaderSize + bytes) + " but it has " +
                       std::to_string(cdr_size));
    }
    void run(const Field& field, const Type& owner, std::uint64_t to, std::uint64_t from,
             std::uint64_t size, std::uint64_t count, bool is_bool) const {
      const std::uint64_t bytes = size * count;
      need(field, owner, from, bytes);
      if (is_bool) {
        for (std::uint64_t i = 0; i < count; ++i) {
          const std::byte b = payload[from + i];
          if (b != std::byte{0} && b != std::byte{1})
            throw CdrError("CDR " + what + ": bool field '" + field.name + "' of type '" +
                           owner.name + "' holds " + std::to_string(std::to_integer<unsigned>(b)) +
                           " at offset " + std::to_string(from + i + kCdrHeaderSize) +
                           "; expected 0 or 1");
        }
      }
      if (bytes != 0) std::memcpy(sample.data() + to, payload.data() + from, bytes);
    }
    // The length from the CDR, checked against the bound before anything
    // is read or written by it.
    std::uint64_t length(const Field& field, const Type& owner, std::uint64_t at,
                         std::uint64_t cdr) const {
      need(field, owner, cdr, sizeof(std::uint32_t));
      std::uint32_t n = load_u32(payload.data() + cdr);
      const std::string where = " at offset " + std::to_string(cdr + kCdrHeaderSize);
      if (field.kind == FieldKind::BoundedString) {
        if (n == 0)
          throw CdrError("CDR " + what + ": string field '" + field.name + "' of type '" +
                         owner.name + "' has length 0" + where +
                         "; expected at least 1 (its terminating NUL)");
        n -= 1;  // the NUL
      }
      if (n > field.count)
        throw CdrTooLong("CDR " + what + ": " + bound_error(field, owner, n, where));
      std::memcpy(sample.data() + at, &n, sizeof n);
      return n;
    }
    void terminator(const Field& field, const Type& owner, std::uint64_t cdr) const {
      need(field, owner, cdr, 1);
      if (payload[cdr] != std::byte{0})
        throw CdrError("CDR " + what + ": string field '" + field.name + "' of type '" +
                       owner.name + "' lacks its terminating NUL at offset " +
                       std::to_string(cdr + kCdrHeaderSize));
    }
  };
  Copy copy{what, payload, sample, cdr.size()};
  const std::uint64_t used = walk(schema, type, 0, 0, copy);
  check_trailing(used, payload.size(), what);
}

std::uint64_t cdr_bytes_size(std::uint64_t data_size) noexcept {
  return kCdrHeaderSize + sizeof(std::uint32_t) + data_size;
}

void cdr_encode_bytes(std::span<const std::byte> data, std::span<std::byte> out) {
  if (data.size() > UINT32_MAX)
    throw CdrError("a bytes sample of " + std::to_string(data.size()) +
                   " bytes does not fit CDR's 32-bit length");
  if (out.size() != cdr_bytes_size(data.size()))
    throw CdrError("the CDR buffer for a bytes sample of " + std::to_string(data.size()) +
                   " bytes is " + std::to_string(out.size()) + " bytes; expected " +
                   std::to_string(cdr_bytes_size(data.size())));
  const auto length = static_cast<std::uint32_t>(data.size());
  std::memcpy(out.data(), kHeader, kCdrHeaderSize);
  std::memcpy(out.data() + kCdrHeaderSize, &length, sizeof length);
  if (!data.empty())
    std::memcpy(out.data() + kCdrHeaderSize + sizeof length, data.data(), data.size());
}

void cdr_encode_bytes(std::span<const std::byte> data, std::vector<std::byte>& out) {
  const std::size_t start = out.size();
  out.resize(start + cdr_bytes_size(data.size()));
  cdr_encode_bytes(data, std::span<std::byte>(out).subspan(start));
}

std::span<const std::byte> cdr_decode_bytes(std::span<const std::byte> cdr) {
  const std::string what = "bytes sample";
  const std::span<const std::byte> payload = checked_payload(cdr, what);
  std::uint32_t length = 0;
  if (payload.size() < sizeof length)
    throw CdrError("CDR bytes sample is truncated: its 4-byte length at offset 4 needs " +
                   std::to_string(kCdrHeaderSize + sizeof length) + " bytes but it has " +
                   std::to_string(cdr.size()));
  std::memcpy(&length, payload.data(), sizeof length);
  if (length > payload.size() - sizeof length)
    throw CdrError("CDR bytes sample is truncated: its length at offset 4 says " +
                   std::to_string(length) + " bytes but only " +
                   std::to_string(payload.size() - sizeof length) + " follow");
  check_trailing(sizeof length + length, payload.size(), what);
  return payload.subspan(sizeof length, length);
}

}  // namespace ferry::config
