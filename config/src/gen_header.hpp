#pragma once
// What ferry gen c and ferry gen cpp (c_header.cpp, cpp_header.cpp) share:
// the order they write types in, and how they refuse a type.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"
#include "ferry/config/schema.hpp"

namespace ferry::config {

// Every type of the schema, depth first: a type's nested types come before
// it (the schema has no cycles and bounds the depth, kMaxTypeNesting).
inline std::vector<std::size_t> types_in_dependency_order(const Schema& schema) {
  std::vector<std::size_t> order;
  std::vector<bool> done(schema.types().size(), false);
  auto visit = [&](auto& self, std::size_t index) -> void {
    if (done[index]) return;
    done[index] = true;
    for (const Field& f : schema.type(index).fields) {
      if (f.kind == FieldKind::Nested) self(self, f.nested);
    }
    order.push_back(index);
  };
  for (std::size_t i = 0; i < schema.types().size(); ++i) visit(visit, i);
  return order;
}

// The error for a type the generator cannot write in `language`, at the
// type's place in `file`.
inline Diagnostic unwritable_type(std::string_view file, const Type& t, std::string_view language,
                                  const std::string& why) {
  return Diagnostic{std::string(file), t.pos.line, t.pos.column,
                    "type '" + t.name + "' cannot be written as " + std::string(language) + ": " +
                        why + "; rename it in the YAML"};
}

}  // namespace ferry::config
