// ferry::String<N> and ferry::Vector<T, N>: layout, bounds, no silent truncation.

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>

#include "ferry/bounded.hpp"

namespace {

struct Point {
  double x, y, z;
};

static_assert(std::is_trivially_copyable_v<ferry::String<8>>);
static_assert(std::is_standard_layout_v<ferry::String<8>>);
static_assert(std::is_trivially_copyable_v<ferry::Vector<Point, 4>>);
static_assert(std::is_standard_layout_v<ferry::Vector<Point, 4>>);
// The layout the YAML schema and `ferry gen c` use: a uint32 length, then
// the elements at their alignment; aligned to max(4, the element's).
static_assert(sizeof(ferry::String<8>) == 12 && alignof(ferry::String<8>) == 4);
static_assert(sizeof(ferry::String<5>) == 12);
static_assert(sizeof(ferry::Vector<std::uint8_t, 3>) == 8);
static_assert(sizeof(ferry::Vector<std::uint16_t, 3>) == 12);
static_assert(sizeof(ferry::Vector<Point, 2>) == 56 && alignof(ferry::Vector<Point, 2>) == 8);
static_assert(sizeof(ferry::Vector<ferry::String<3>, 2>) == 20);

}  // namespace

TEST_CASE("String keeps at most N bytes and says so") {
  ferry::String<5> s;
  CHECK(s.empty());
  CHECK(s.assign("hello"));
  CHECK(s.view() == "hello");
  CHECK_FALSE(s.assign("hello!"));
  CHECK(s.view() == "hello");  // unchanged, not truncated
  CHECK_FALSE(s.push_back('x'));
  s.clear();
  CHECK(s.push_back('a'));
  CHECK(s == "a");
  CHECK(s.resize(3));
  CHECK(s.view() == std::string_view("a\0\0", 3));
  CHECK_FALSE(s.resize(6));
  CHECK(s.size() == 3);
  const ferry::String<8> lit = "map";
  CHECK(lit.view() == "map");
  CHECK(ferry::String<8>::capacity() == 8);
}

TEST_CASE("Vector keeps at most N elements and says so") {
  ferry::Vector<Point, 2> v;
  CHECK(v.push_back({1, 2, 3}));
  CHECK(v.push_back({4, 5, 6}));
  CHECK_FALSE(v.push_back({7, 8, 9}));
  CHECK(v.size() == 2);
  CHECK(v.span()[1].y == 5);
  const std::array<Point, 3> three{};
  CHECK_FALSE(v.assign(three));
  CHECK(v.size() == 2);
  CHECK(v[0].x == 1);
  CHECK(v.assign(std::span(three).first(1)));
  CHECK(v.size() == 1);
  CHECK(v.resize(2));
  CHECK(v[1].x == 0);  // value-initialised
  CHECK_FALSE(v.resize(3));
  CHECK_FALSE(v.resize_for_overwrite(3));
  CHECK(v.resize_for_overwrite(0));
  CHECK(v.empty());
  ferry::Vector<std::uint8_t, 4> a;
  ferry::Vector<std::uint8_t, 4> b;
  CHECK(a.push_back(7));
  CHECK(b.push_back(7));
  CHECK(a == b);
}

TEST_CASE("a length from shared memory never reaches past the storage") {
  // Bytes as a hostile or torn publisher may leave them: length 1000.
  alignas(ferry::Vector<std::uint8_t, 4>) std::byte raw[sizeof(ferry::Vector<std::uint8_t, 4>)]{};
  const std::uint32_t huge = 1000;
  std::memcpy(raw, &huge, sizeof huge);
  ferry::Vector<std::uint8_t, 4> v;
  std::memcpy(&v, raw, sizeof v);
  CHECK(v.size() == 4);
  CHECK(v.span().size() == 4);
  ferry::String<4> s;
  std::memcpy(&s, raw, sizeof s);
  CHECK(s.view().size() == 4);
}
