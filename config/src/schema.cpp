#include "ferry/config/schema.hpp"

#include <array>

namespace ferry::config {

namespace {
struct ScalarInfo {
  Scalar scalar;
  std::string_view name;
  std::uint64_t size;
};
constexpr std::array<ScalarInfo, 11> kScalars{{
    {Scalar::Bool, "bool", 1},
    {Scalar::I8, "i8", 1},
    {Scalar::I16, "i16", 2},
    {Scalar::I32, "i32", 4},
    {Scalar::I64, "i64", 8},
    {Scalar::U8, "u8", 1},
    {Scalar::U16, "u16", 2},
    {Scalar::U32, "u32", 4},
    {Scalar::U64, "u64", 8},
    {Scalar::F32, "f32", 4},
    {Scalar::F64, "f64", 8},
}};

// Lookups index kScalars by the enum's value.
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kScalars.size(); ++i)
    if (static_cast<std::size_t>(kScalars[i].scalar) != i) return false;
  return true;
}
static_assert(in_enum_order());
}  // namespace

std::string_view to_string(Scalar scalar) noexcept {
  return kScalars[static_cast<std::size_t>(scalar)].name;
}

std::optional<Scalar> parse_scalar(std::string_view text) noexcept {
  for (const auto& info : kScalars) {
    if (info.name == text) return info.scalar;
  }
  return std::nullopt;
}

// On x86_64 and aarch64 Linux every scalar, i64/u64/f64 included, is
// aligned to its size (unlike i386, where they align to 4).
std::uint64_t scalar_size(Scalar scalar) noexcept {
  return kScalars[static_cast<std::size_t>(scalar)].size;
}

std::optional<std::size_t> Schema::index_of(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < types_.size(); ++i) {
    if (types_[i].name == name) return i;
  }
  return std::nullopt;
}

const Type* Schema::find(std::string_view name) const noexcept {
  const auto index = index_of(name);
  return index ? &types_[*index] : nullptr;
}

}  // namespace ferry::config
