// The layout fingerprint check (docs/types.md) against a real ferryd: a
// generated type whose fields differ from the topic's declared type is
// refused with a sentence naming the field, even when name, size and
// alignment agree; hand-written structs keep the name/size/alignment check.
#include <doctest/doctest.h>

#include <cstdint>
#include <ferry/ferry.hpp>
#include <string>

#include "daemon_fixture.hpp"
#include "layout_port_types.hpp"  // generated from gen/layout_port_types.yaml
#include "test_domain.hpp"

using namespace ferry::test;

// Written by hand with Pair's fields swapped too: no fingerprint to check.
struct HandPair {
  std::uint32_t right;
  std::uint32_t left;
};
FERRY_TYPE_NAMED(HandPair, "Pair");

// Hand-written with a third field: Pair's name, another size.
struct WidePair {
  std::uint32_t left;
  std::uint32_t right;
  std::uint32_t extra;
};
FERRY_TYPE_NAMED(WidePair, "Pair");

// Hand-written with Pair's size but another alignment.
struct alignas(8) LoosePair {
  std::uint8_t bytes[8];
};
FERRY_TYPE_NAMED(LoosePair, "Pair");

namespace {

// What the topics are declared with: Pair's fields left, right.
const std::string kConfig = R"(domain: layout
types:
  Pair:
    fields:
      - { name: left, type: u32 }
      - { name: right, type: u32 }
  Holder:
    fields:
      - { name: id, type: u64 }
      - { name: pair, type: Pair }
  Point:
    fields:
      - { name: x, type: f64 }
      - { name: y, type: f64 }
topics:
  - { name: t/pair, type: Pair }
  - { name: t/holder, type: Holder }
  - { name: t/point, type: Point }
)";

using Served = ferry::test::ServedDomain<kConfig>;

std::string error_of(auto&& make) {
  try {
    make();
  } catch (const ferry::Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE_FIXTURE(Served,
                  "a generated struct with two same-size fields swapped is refused, naming them") {
  ferry::Node node{"layout"};
  static_assert(sizeof(Pair) == 8 && alignof(Pair) == 4);  // the old check passes

  const std::string publisher = error_of([&] { node.publisher<Pair>("t/pair"); });
  INFO(publisher);
  CHECK(has(publisher,
            "layout mismatch on topic 't/pair' (type 'Pair'): field 'left' is u32 at "
            "offset 4 in the port's type but u32 at offset 0 in the topic's (the "
            "port's type has 'right' there)"));
  CHECK(has(publisher, "the port's layout is {right:u32@0 left:u32@4}"));
  CHECK(has(publisher, "the topic's is {left:u32@0 right:u32@4}"));

  // Nested: the dotted path names the field inside the nested type.
  const std::string subscriber = error_of([&] { node.subscriber<Holder>("t/holder"); });
  INFO(subscriber);
  CHECK(has(subscriber,
            "field 'pair.left' is u32 at offset 12 in the port's type but u32 at "
            "offset 8 in the topic's"));
}

TEST_CASE_FIXTURE(
    Served,
    "a generated struct that matches is accepted; a hand-written one keeps the size check") {
  ferry::Node node{"layout"};
  auto pub = node.publisher<Point>("t/point");
  auto sub = node.subscriber<Point>("t/point");
  // Hand-written: name, size and alignment agree, so it is accepted as today.
  auto hand = node.publisher<HandPair>("t/pair");
  CHECK(hand.subscriber_count() == 0);
  // The size check itself: the name agrees, the size does not.
  const std::string wide = error_of([&] { node.publisher<WidePair>("t/pair"); });
  INFO(wide);
  CHECK(has(wide, "type mismatch on topic 't/pair'"));
  CHECK(has(wide, "'Pair' (size 12, alignment 4)"));
  CHECK(has(wide, "'Pair' (size 8, alignment 4)"));
  // And the alignment check: same name and size, alignment 8 against 4.
  const std::string loose = error_of([&] { node.subscriber<LoosePair>("t/pair"); });
  INFO(loose);
  CHECK(has(loose, "'Pair' (size 8, alignment 8)"));
}
