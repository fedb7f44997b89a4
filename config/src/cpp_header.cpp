// ferry gen cpp: a schema as C++ structs (docs/types.md).

#include "ferry/config/cpp_header.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <set>

#include "ferry/config/layout_fingerprint.hpp"
#include "gen_header.hpp"

namespace ferry::config {

namespace {

// C++23 keywords and alternative tokens: none may name a struct or member.
constexpr std::string_view kKeywords[] = {
    "alignas",       "alignof",     "and",
    "and_eq",        "asm",         "auto",
    "bitand",        "bitor",       "bool",
    "break",         "case",        "catch",
    "char",          "char8_t",     "char16_t",
    "char32_t",      "class",       "compl",
    "concept",       "const",       "consteval",
    "constexpr",     "constinit",   "const_cast",
    "continue",      "co_await",    "co_return",
    "co_yield",      "decltype",    "default",
    "delete",        "do",          "double",
    "dynamic_cast",  "else",        "enum",
    "explicit",      "export",      "extern",
    "false",         "float",       "for",
    "friend",        "goto",        "if",
    "inline",        "int",         "long",
    "mutable",       "namespace",   "new",
    "noexcept",      "not",         "not_eq",
    "nullptr",       "operator",    "or",
    "or_eq",         "private",     "protected",
    "public",        "register",    "reinterpret_cast",
    "requires",      "return",      "short",
    "signed",        "sizeof",      "static",
    "static_assert", "static_cast", "struct",
    "switch",        "template",    "this",
    "thread_local",  "throw",       "true",
    "try",           "typedef",     "typeid",
    "typename",      "union",       "unsigned",
    "using",         "virtual",     "void",
    "volatile",      "wchar_t",     "while",
    "xor",           "xor_eq",      "offsetof"};  // offsetof: a macro

bool is_keyword(std::string_view word) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

std::string_view scalar_cpp(Scalar scalar) noexcept {
  switch (scalar) {
    case Scalar::Bool:
      return "bool";
    case Scalar::I8:
      return "std::int8_t";
    case Scalar::I16:
      return "std::int16_t";
    case Scalar::I32:
      return "std::int32_t";
    case Scalar::I64:
      return "std::int64_t";
    case Scalar::U8:
      return "std::uint8_t";
    case Scalar::U16:
      return "std::uint16_t";
    case Scalar::U32:
      return "std::uint32_t";
    case Scalar::U64:
      return "std::uint64_t";
    case Scalar::F32:
      return "float";
    case Scalar::F64:
      return "double";
  }
  return "std::uint8_t";
}

// A YAML type name as namespaces and a struct name: "pkg/sub/Name" and
// "pkg::Name" split at each separator; other characters C++ does not allow
// become '_'.
struct CppName {
  std::vector<std::string> namespaces;
  std::string name;

  [[nodiscard]] std::string qualified() const {
    std::string out;
    for (const auto& n : namespaces) out += n + "::";
    return out + name;
  }
};

std::string identifier(std::string_view segment) {
  std::string out;
  for (const char c : segment) {
    out += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front())) != 0) out.insert(0, "_");
  return out;
}

CppName cpp_name(std::string_view yaml_name) {
  std::vector<std::string> parts;
  std::string_view rest = yaml_name;
  while (true) {
    const auto slash = rest.find('/');
    const auto colons = rest.find("::");
    const auto cut = std::min(slash, colons);
    if (cut == std::string_view::npos) break;
    parts.push_back(identifier(rest.substr(0, cut)));
    rest = rest.substr(cut + (cut == colons ? 2 : 1));
  }
  CppName out;
  out.namespaces = std::move(parts);
  out.name = identifier(rest);
  return out;
}

class Writer {
 public:
  Writer(const Schema& schema, std::string_view file) : schema_(schema), file_(file) {
    names_.reserve(schema.types().size());
    for (const Type& t : schema.types()) names_.push_back(cpp_name(t.name));
  }

  void check() {
    std::map<std::string, std::size_t> taken;  // qualified name -> type
    std::set<std::string> namespaces;
    for (const CppName& n : names_) {
      std::string path;
      for (const auto& ns : n.namespaces)
        namespaces.insert(path += (path.empty() ? "" : "::") + ns);
    }
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const Type& t = schema_.type(i);
      const CppName& n = names_[i];
      const std::string q = n.qualified();
      for (const auto& part : n.namespaces) {
        if (is_keyword(part) || part == "std") {
          fail(t, "its namespace '" + part + "' is a C++ keyword or std");
        }
      }
      if (is_keyword(n.name)) fail(t, "its struct name '" + n.name + "' is a C++ keyword");
      if (auto [at, fresh] = taken.emplace(q, i); !fresh) {
        fail(t, "it becomes the C++ struct '" + q + "', as type '" + schema_.type(at->second).name +
                    "' does");
      }
      if (namespaces.contains(q)) {
        fail(t, "its C++ name '" + q + "' is also the namespace of another type");
      }
      for (const Field& f : t.fields) {
        if (is_keyword(f.name)) fail(t, "its field '" + f.name + "' is a C++ keyword");
        if (f.name == n.name) {
          fail(t, "its field '" + f.name + "' has the struct's own name, which C++ forbids");
        }
      }
    }
  }

  [[nodiscard]] std::vector<Diagnostic> take_errors() { return std::move(errors_); }

  std::string header(std::string_view source_name) {
    out_ += "// Generated by `ferry gen cpp` from " + std::string(source_name) + ".\n";
    out_ += "// Do not edit: change the YAML and generate again.\n";
    out_ += "#pragma once\n\n#include <cstddef>\n#include <cstdint>\n";
    const bool bounded = std::ranges::any_of(schema_.types(), [](const Type& t) {
      return std::ranges::any_of(t.fields, &Field::bounded);
    });
    if (bounded) out_ += "#include <ferry/bounded.hpp>\n";
    out_ += "#include <ferry/type_name.hpp>\n";
    for (const std::size_t i : types_in_dependency_order(schema_)) emit(i);
    return std::move(out_);
  }

 private:
  void fail(const Type& t, const std::string& why) {
    errors_.push_back(unwritable_type(file_, t, "C++", why));
  }

  // Inside a namespace a nested type is named from the global one, so that
  // a same-named type of that namespace cannot shadow it.
  std::string element_type(const Field& f, bool in_namespace) const {
    switch (f.kind) {
      case FieldKind::Scalar:
        return std::string(scalar_cpp(f.scalar));
      case FieldKind::String:
        return "char";
      case FieldKind::BoundedString:
        return "::ferry::String<" + std::to_string(f.count) + ">";
      case FieldKind::Nested:
        return (in_namespace ? "::" : "") + names_[f.nested].qualified();
    }
    return "std::uint8_t";
  }
  std::string member_type(const Field& f, bool in_namespace) const {
    if (!f.sequence) return element_type(f, in_namespace);
    return "::ferry::Vector<" + element_type(f, in_namespace) + ", " + std::to_string(f.count) +
           ">";
  }

  void emit(std::size_t index) {
    const Type& t = schema_.type(index);
    const CppName& n = names_[index];
    const std::string q = n.qualified();
    out_ += "\n";
    for (const auto& ns : n.namespaces) out_ += "namespace " + ns + " {\n";
    if (!n.namespaces.empty()) out_ += "\n";
    if (t.kind == TypeKind::Opaque) {
      out_ += "struct alignas(" + std::to_string(t.align) + ") " + n.name + " {\n";
      out_ += "  std::byte data[" + std::to_string(t.size) + "];\n";
    } else {
      out_ += "struct " + n.name + " {\n";
      for (const Field& f : t.fields) {
        const bool bracket = f.kind == FieldKind::String || f.is_array;
        out_ += "  " + member_type(f, !n.namespaces.empty()) + " " + f.name +
                (bracket ? "[" + std::to_string(f.count) + "]" : "") + ";\n";
      }
    }
    out_ += "};\n";
    if (!n.namespaces.empty()) out_ += "\n";
    for (auto ns = n.namespaces.rbegin(); ns != n.namespaces.rend(); ++ns) {
      out_ += "}  // namespace " + *ns + "\n";
    }
    if (!n.namespaces.empty()) out_ += "\n";
    out_ += "FERRY_TYPE_NAMED(" + q + ", \"" + t.name + "\");\n";
    if (auto layout = layout_fingerprint(schema_, index)) emit_layout(q, *layout);
    out_ += "static_assert(sizeof(" + q + ") == " + std::to_string(t.size) + ");\n";
    out_ += "static_assert(alignof(" + q + ") == " + std::to_string(t.align) + ");\n";
    if (t.kind == TypeKind::Opaque) {
      out_ += "static_assert(offsetof(" + q + ", data) == 0);\n";
    }
    for (const Field& f : t.fields) {
      out_ += "static_assert(offsetof(" + q + ", " + f.name + ") == " + std::to_string(f.offset) +
              ");\n";
    }
  }

  // One string literal per field, so that the header reads as a list and
  // stays within the line limit (clang-format leaves it as it is).
  void emit_layout(const std::string& q, const std::string& layout) {
    out_ += "FERRY_TYPE_LAYOUT(" + q + ",\n";
    std::string_view rest = layout;
    while (!rest.empty()) {
      const auto space = rest.find(' ');
      const bool last = space == std::string_view::npos;
      out_ +=
          "                  \"" + std::string(rest.substr(0, space)) + (last ? "\");\n" : " \"\n");
      rest = last ? std::string_view{} : rest.substr(space + 1);
    }
  }

  const Schema& schema_;
  std::string_view file_;
  std::vector<CppName> names_;
  std::vector<Diagnostic> errors_;
  std::string out_;
};

}  // namespace

std::expected<std::string, std::vector<Diagnostic>> generate_cpp_header(
    const Schema& schema, std::string_view source_name, std::string_view file_for_errors) {
  Writer writer(schema, file_for_errors);
  writer.check();
  if (auto errors = writer.take_errors(); !errors.empty())
    return std::unexpected(std::move(errors));
  return writer.header(source_name);
}

}  // namespace ferry::config
