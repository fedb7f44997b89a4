#pragma once
// The schema the CLI tests encode and decode: a struct `All` with a field of
// every scalar type, a char[N] string, an array, a nested struct and an
// array of structs. Entries of a `types:` map; each test adds its own types
// and topics after them.

namespace ferry::test {

inline constexpr const char* kInnerAndAllTypes = R"(  Inner:
    fields:
      - { name: flag, type: bool }
      - { name: label, type: "char[8]" }
      - { name: value, type: f64 }
  All:
    fields:
      - { name: b, type: bool }
      - { name: i8, type: i8 }
      - { name: i16, type: i16 }
      - { name: i32, type: i32 }
      - { name: i64, type: i64 }
      - { name: u8, type: u8 }
      - { name: u16, type: u16 }
      - { name: u32, type: u32 }
      - { name: u64, type: u64 }
      - { name: f32, type: f32 }
      - { name: f64, type: f64 }
      - { name: name, type: "char[16]" }
      - { name: arr, type: "i32[3]" }
      - { name: inner, type: Inner }
      - { name: inners, type: "Inner[2]" }
)";

}  // namespace ferry::test
