#include "wire.hpp"

#include "text.hpp"

namespace ferry::discovery::wire {

StringProblem check_string(std::string_view value, std::size_t limit) noexcept {
  if (value.size() > limit) return StringProblem::TooLong;
  if (value.find('\0') != std::string_view::npos) return StringProblem::HasNul;
  return StringProblem::None;
}

std::string string_message(StringProblem problem, std::string_view value, std::string_view field,
                           std::size_t limit) {
  if (problem == StringProblem::TooLong) {
    return text::cat("string field '", field, "' is ", value.size(), " bytes, limit ", limit);
  }
  return text::cat("string field '", field, "' contains a NUL byte at offset ", value.find('\0'));
}

std::string WireWriter::enum_message(std::string_view field, std::uint64_t raw, std::uint64_t min,
                                     std::uint64_t max) {
  return text::cat("field '", field, "' has value ", raw, ", valid values are ", min, " to ", max);
}

std::string WireWriter::too_many_message(std::string_view field, std::size_t count) {
  return text::cat("list field '", field, "' has ", count, " entries, limit ", kMaxListEntries);
}

void WireWriter::put(std::uint64_t value, std::size_t bytes) noexcept {
  for (std::size_t i = 0; i < bytes; ++i, ++pos_) {
    if (pos_ < out_.size()) out_[pos_] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
  }
}

void WireWriter::pid(const std::int32_t& value, std::string_view field) {
  require(value > 0,
          [&] { return text::cat("field '", field, "' is ", value, ", a pid must be > 0"); });
  if (!error_) put(static_cast<std::uint32_t>(value), 4);
}

void WireWriter::str(const std::string& value, std::string_view field, std::size_t limit) {
  if (error_) return;
  if (const auto problem = check_string(value, limit); problem != StringProblem::None) {
    fail(problem == StringProblem::TooLong ? EncodeErrorCode::StringTooLong
                                           : EncodeErrorCode::InvalidString,
         string_message(problem, value, field, limit));
    return;
  }
  put(value.size(), 2);
  for (const char c : value) put(static_cast<unsigned char>(c), 1);
}

bool WireReader::take(std::uint64_t& value, std::size_t bytes, std::string_view field) {
  if (error_) return false;
  if (remaining() < bytes) {
    fail(DecodeErrorCode::TruncatedBody,
         text::cat("message ", message_name_, " ends inside field '", field, "' (needs ", bytes,
                   " bytes, ", remaining(), " left)"));
    return false;
  }
  value = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    value |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(in_[pos_ + i])) << (8 * i);
  }
  pos_ += bytes;
  return true;
}

void WireReader::pid(std::int32_t& value, std::string_view field) {
  std::uint64_t raw = 0;
  if (!take(raw, 4, field)) return;
  const auto pid = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
  require(pid > 0,
          [&] { return text::cat("field '", field, "' is ", pid, ", a pid must be > 0"); });
  if (!error_) value = pid;
}

void WireReader::str(std::string& value, std::string_view field, std::size_t limit) {
  std::uint64_t length = 0;
  if (!take(length, 2, field)) return;
  if (length > limit) {
    fail(DecodeErrorCode::StringTooLong,
         text::cat("string field '", field, "' is ", length, " bytes, limit ", limit));
    return;
  }
  if (remaining() < length) {
    fail(DecodeErrorCode::TruncatedBody,
         text::cat("message ", message_name_, " ends inside string field '", field, "' (", length,
                   " bytes announced, ", remaining(), " left)"));
    return;
  }
  const auto bytes = in_.subspan(pos_, static_cast<std::size_t>(length));
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (const auto problem = check_string(text, limit); problem != StringProblem::None) {
    fail(DecodeErrorCode::InvalidString, string_message(problem, text, field, limit));
    return;
  }
  pos_ += bytes.size();
  value = std::move(text);
}

}  // namespace ferry::discovery::wire
