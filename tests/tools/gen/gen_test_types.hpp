#pragma once
// The YAML of the `ferry gen cpp` golden test: every field type of
// all_types_yaml.hpp, plus an opaque type, a type in a package
// ("geo/Point": namespace geo) using it and a type declared before the
// type it nests (the header must still define that one first).

#include <string>

#include "../all_types_yaml.hpp"

namespace ferry::test {

inline std::string gen_test_yaml() {
  return std::string("types:\n") + kInnerAndAllTypes + R"(  geo/Point:
    fields:
      - { name: id, type: u16 }
      - { name: blob, type: Blob }
      - { name: blobs, type: "Blob[2]" }
      - { name: inner, type: Inner }
  Blob: { size: 12, align: 4 }
)";
}

}  // namespace ferry::test
