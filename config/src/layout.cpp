// build_schema: resolves field types and lays types out by the C ABI.
//
// Nothing here recurses on the type graph: one iterative depth-first walk
// finds cycles and each type's nesting depth and yields an order in which
// every type comes after the types it holds; layout then follows that order.
// A configuration may chain thousands of types, and the stack must not
// depend on it.

#include <limits>
#include <unordered_map>

#include "build_schema.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "ferry/config/schema.hpp"
#include "ferry/config/units.hpp"
#include "field_type.hpp"
#include "quote.hpp"
#include "suggest.hpp"

namespace ferry::config {

namespace {
using detail::quote;
std::string at(SourcePos pos) {
  return std::to_string(pos.line) + ":" + std::to_string(pos.column);
}
std::uint64_t align_up(std::uint64_t value, std::uint64_t align) {
  return (value + align - 1) / align * align;
}
bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
const std::string kTooLarge = "over the " + format_size(kMaxSampleSize) + " limit";
constexpr std::size_t kNoField = std::numeric_limits<std::size_t>::max();

// Links shown of a long chain: the first three and the last two.
constexpr std::size_t kChainHead = 3;
constexpr std::size_t kChainTail = 2;

std::string join_links(const std::vector<std::string>& links) {
  std::string out;
  for (const auto& link : links) out += (out.empty() ? "" : " -> ") + link;
  return out;
}
}  // namespace

class SchemaBuilder {
 public:
  SchemaBuilder(std::span<const TypeDecl> decls, std::span<const std::string> files,
                std::vector<Diagnostic>& errors, detail::SuggestBudget& suggestions)
      : decls_(decls),
        files_(files),
        errors_(errors),
        suggestions_(suggestions),
        state_(decls.size()),
        types_(decls.size()),
        depth_(decls.size(), 1),
        deepest_(decls.size(), kNoField),
        bottom_(decls.size(), 0),
        last_holder_(decls.size(), 0) {}

  Schema build() {
    check_type_names();
    const std::vector<std::size_t> order = walk();
    check_nesting();
    for (const std::size_t i : order) layout(i);
    return compact();
  }

 private:
  enum class State : std::uint8_t { Unvisited, Ok, Bad };

  // At `pos` in the file of the type being looked at (current_).
  void report(SourcePos pos, std::string message) {
    const std::size_t file = decls_.empty() ? 0 : decls_[current_].file;
    errors_.push_back(Diagnostic{file < files_.size() ? files_[file] : std::string(), pos.line,
                                 pos.column, std::move(message)});
  }
  // Where type `i` is declared, for "first declared at": with its file
  // when that is not the one of the type being looked at.
  std::string declared_at(std::size_t i) const {
    const std::size_t file = decls_[i].file;
    if (file == decls_[current_].file || file >= files_.size()) return at(decls_[i].pos);
    return files_[file] + ":" + at(decls_[i].pos);
  }

  // Duplicates and bad names are found before layout so that a field
  // naming a duplicate still resolves to the first declaration.
  void check_type_names() {
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      const TypeDecl& d = decls_[i];
      current_ = i;
      if (is_reserved_type_name(d.name)) {
        report(d.pos, "type name " + quote(d.name) +
                          " is reserved (a primitive or 'bytes'); expected another name");
        state_[i] = State::Bad;
      } else if (!is_valid_type_name(d.name)) {
        report(d.pos, "invalid type name " + quote(d.name) +
                          "; expected up to 128 characters of A-Z a-z 0-9 _ : / . - starting "
                          "with a letter or '_'");
        state_[i] = State::Bad;
      }
      const auto [it, inserted] = by_name_.emplace(d.name, i);
      if (!inserted) {
        report(d.pos, "duplicate type " + quote(d.name) + "; first declared at " +
                          declared_at(it->second));
        state_[i] = State::Bad;
      }
    }
    // A type may also be named by its ROS 2 name (`ros2:`), unless a type
    // is declared under that name.
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      if (!decls_[i].ros2.empty() && state_[i] != State::Bad) by_name_.emplace(decls_[i].ros2, i);
    }
  }

  // The declared type a field holds, if it names one (primitives and char
  // win over a type declared with their name, which is refused anyway).
  std::optional<std::size_t> nested_type(const FieldDecl& fd) const {
    const auto ref = detail::parse_field_type(fd.type);
    if (!ref || ref->base == "char" || ref->base == "bytes" || ref->base == "string" ||
        parse_scalar(ref->base))
      return std::nullopt;
    const auto it = by_name_.find(ref->base);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }

  // Depth-first over "type holds type" in declaration order, with an
  // explicit stack. Reports each field that closes a cycle, computes
  // depth_ and deepest_, and returns the types in post-order: a type after
  // every type it holds (except through a cycle, which layout refuses).
  // Types with a bad name are not entered: they are never laid out.
  std::vector<std::size_t> walk() {
    enum class Mark : std::uint8_t { New, OnStack, Done };
    struct Frame {
      std::size_t type;
      std::size_t next_field;
    };
    std::vector<Mark> mark(decls_.size(), Mark::New);
    std::vector<std::size_t> stack_index(decls_.size(), 0);  // of a type marked OnStack
    std::vector<std::size_t> order;
    order.reserve(decls_.size());
    std::vector<Frame> stack;
    for (std::size_t root = 0; root < decls_.size(); ++root) {
      if (mark[root] != Mark::New) continue;
      mark[root] = Mark::OnStack;
      stack.push_back({root, 0});
      stack_index[root] = 0;
      while (!stack.empty()) {
        Frame& top = stack.back();
        const TypeDecl& d = decls_[top.type];
        if (state_[top.type] != State::Bad && top.next_field < d.fields.size()) {
          const std::size_t f = top.next_field++;
          const auto j = nested_type(d.fields[f]);
          if (!j) continue;
          current_ = top.type;
          if (mark[*j] == Mark::OnStack) {
            report_cycle(stack, stack_index[*j], d.fields[f]);
          } else if (mark[*j] == Mark::Done) {
            holds(top.type, f, *j);
          } else {
            mark[*j] = Mark::OnStack;
            stack_index[*j] = stack.size();
            stack.push_back({*j, 0});  // invalidates `top`
          }
          continue;
        }
        const std::size_t done = top.type;
        mark[done] = Mark::Done;
        order.push_back(done);
        stack.pop_back();
        if (!stack.empty()) holds(stack.back().type, stack.back().next_field - 1, done);
      }
    }
    return order;
  }

  // Type `i` holds type `j` (laid out before it) in field `f`.
  void holds(std::size_t i, std::size_t f, std::size_t j) {
    if (depth_[j] + 1 <= depth_[i]) return;
    depth_[i] = depth_[j] + 1;
    deepest_[i] = f;
    const bool leaf = deepest_[j] == kNoField;
    bottom_[i] = leaf ? j : bottom_[j];
    last_holder_[i] = leaf ? i : last_holder_[j];
  }

  // Types nested deeper than kMaxTypeNesting are left out. Each chain is
  // reported once, at the outermost type of it (one no deep type holds).
  void check_nesting() {
    std::vector<bool> held_by_deep(decls_.size(), false);
    bool any = false;
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      if (depth_[i] <= kMaxTypeNesting || state_[i] == State::Bad) continue;
      any = true;
      for (const FieldDecl& fd : decls_[i].fields) {
        if (const auto j = nested_type(fd)) held_by_deep[*j] = true;
      }
    }
    if (!any) return;
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      if (depth_[i] <= kMaxTypeNesting || state_[i] == State::Bad) continue;
      current_ = i;
      if (!held_by_deep[i]) report_too_deep(i);
      state_[i] = State::Bad;
    }
  }

  std::string link(std::size_t type, std::size_t field) const {
    return decls_[type].name + "." + decls_[type].fields[field].name;
  }

  // The deepest chain from `i`, abbreviated in constant time whatever its
  // length (there may be thousands of such chains).
  void report_too_deep(std::size_t i) {
    std::vector<std::string> links;
    std::size_t t = i;
    for (std::size_t k = 0; k < kChainHead; ++k) {
      links.push_back(link(t, deepest_[t]));
      t = *nested_type(decls_[t].fields[deepest_[t]]);
    }
    links.emplace_back("...");
    links.push_back(link(last_holder_[i], deepest_[last_holder_[i]]));
    links.push_back(decls_[bottom_[i]].name);
    report(decls_[i].fields[deepest_[i]].type_pos,
           "type " + quote(decls_[i].name) + " nests types " + std::to_string(depth_[i]) +
               " levels deep (" + join_links(links) + "); expected at most " +
               std::to_string(kMaxTypeNesting) + " levels of nested types");
  }
  static_assert(kMaxTypeNesting > kChainHead + kChainTail, "a reported chain is abbreviated");

  // Every type it holds was laid out before (walk()'s order).
  bool layout(std::size_t i) {
    if (state_[i] == State::Bad) return false;
    current_ = i;
    const bool ok = decls_[i].opaque_size ? layout_opaque(i) : layout_struct(i);
    state_[i] = ok ? State::Ok : State::Bad;
    return ok;
  }

  bool layout_opaque(std::size_t i) {
    const TypeDecl& d = decls_[i];
    const std::uint64_t size = *d.opaque_size;
    const std::uint64_t align = d.opaque_align;
    bool ok = true;
    if (size == 0 || size > kMaxSampleSize) {
      report(d.size_pos, "size " + std::to_string(size) + " of opaque type " + quote(d.name) +
                             " is out of range; expected 1 B to " + format_size(kMaxSampleSize));
      ok = false;
    }
    if (!is_power_of_two(align) || align > kMaxAlign) {
      report(d.align_pos, "alignment " + std::to_string(align) + " of type " + quote(d.name) +
                              " is not a power of two up to " + std::to_string(kMaxAlign) +
                              "; expected 1, 2, 4, 8, 16, ...");
      ok = false;
    } else if (ok && size % align != 0) {
      report(d.size_pos, "size " + std::to_string(size) + " of type " + quote(d.name) +
                             " is not a multiple of its alignment " + std::to_string(align) +
                             "; expected a multiple of " + std::to_string(align) +
                             " (as sizeof always is in C++)");
      ok = false;
    }
    types_[i] = Type{d.name, TypeKind::Opaque, size, align, {}, d.pos, d.ros2, file_name(d), false};
    return ok;
  }

  bool layout_struct(std::size_t i) {
    const TypeDecl& d = decls_[i];
    Type& out = types_[i];
    out = Type{d.name, TypeKind::Struct, 0, 1, {}, d.pos, d.ros2, file_name(d), false};
    if (d.fields.empty()) {
      report(d.pos, "type " + quote(d.name) +
                        " has no fields; expected at least one field, or 'size' for an opaque "
                        "type");
      return false;
    }
    bool ok = true;
    std::unordered_map<std::string_view, SourcePos> seen;
    std::uint64_t end = 0;
    for (std::size_t f = 0; f < d.fields.size(); ++f) {
      const FieldDecl& fd = d.fields[f];
      if (!is_valid_field_name(fd.name)) {
        report(fd.name_pos, "invalid field name " + quote(fd.name) + " in type " + quote(d.name) +
                                "; expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
        ok = false;
      } else if (const auto [it, inserted] = seen.emplace(fd.name, fd.name_pos); !inserted) {
        report(fd.name_pos, "duplicate field " + quote(fd.name) + " in type " + quote(d.name) +
                                "; first declared at " + at(it->second));
        ok = false;
      }
      std::optional<Field> field = resolve_field(d, fd);
      if (!field) {
        ok = false;
        continue;
      }
      if (!ok) continue;  // keep reporting field problems, but stop laying out
      field->offset = align_up(end, field->align);
      end = field->offset + field->size;  // both <= 1 GiB: no overflow
      if (end > kMaxSampleSize) {
        report(fd.type_pos, "type " + quote(d.name) + " is too large: field " + quote(fd.name) +
                                " ends at byte " + std::to_string(end) + ", " + kTooLarge +
                                "; expected smaller fields");
        ok = false;
        continue;
      }
      out.align = std::max(out.align, field->align);
      out.variable = out.variable || field->bounded() ||
                     (field->kind == FieldKind::Nested && types_[field->nested].variable);
      out.fields.push_back(std::move(*field));
    }
    if (!ok) return false;
    out.size = align_up(end, out.align);
    if (out.size > kMaxSampleSize) {
      report(d.pos, "type " + quote(d.name) + " is too large: " + std::to_string(out.size) +
                        " bytes, " + kTooLarge + "; expected smaller fields");
      return false;
    }
    return true;
  }

  // The field's kind, element size, count and alignment (offset is set by
  // the caller), or nullopt after reporting (or silently when it uses a
  // type that already has a reported problem).
  std::optional<Field> resolve_field(const TypeDecl& d, const FieldDecl& fd) {
    const auto ref = detail::parse_field_type(fd.type);
    if (!ref) {
      report(fd.type_pos, ref.error());
      return std::nullopt;
    }
    Field field;
    field.name = fd.name;
    field.type_text = fd.type;
    field.is_array = ref->count.has_value() && !ref->bounded;
    field.sequence = ref->bounded;
    field.count = ref->count.value_or(1);
    if (ref->base == "string" && ref->bounded && !ref->count) {
      report(fd.type_pos, "field type 'string' of " + quote(fd.name) +
                              " needs a bound; expected string<=N, e.g. string<=64");
      return std::nullopt;
    }
    if (ref->base == "string" && ref->bounded && field.sequence &&
        fd.type.find('[') != std::string::npos) {
      report(fd.type_pos, "a sequence of strings " + quote(fd.type) + " (field " + quote(fd.name) +
                              ") is not supported; expected a declared type holding a string<=N, "
                              "and a sequence of that type");
      return std::nullopt;
    }
    if (ref->base == "string" && ref->bounded) {
      field.kind = FieldKind::BoundedString;
      field.sequence = false;
      field.element_size = 1;
      field.align = 1;
    } else if (ref->base == "char" && ref->bounded) {
      report(fd.type_pos, "field type " + quote(fd.type) + " of " + quote(fd.name) +
                              " is not supported; expected string<=N for a bounded string");
      return std::nullopt;
    } else if (ref->base == "char") {
      if (!ref->count) {
        report(fd.type_pos, "field type 'char' of " + quote(fd.name) +
                                " needs a length; expected char[N], e.g. char[16]");
        return std::nullopt;
      }
      field.kind = FieldKind::String;
      field.is_array = false;
      field.element_size = 1;
      field.align = 1;
    } else if (ref->base == "bytes") {
      report(fd.type_pos, "'bytes' is a topic type, not a field type (field " + quote(fd.name) +
                              "); expected a fixed-size type such as u8[256]");
      return std::nullopt;
    } else if (const auto scalar = parse_scalar(ref->base)) {
      field.kind = FieldKind::Scalar;
      field.scalar = *scalar;
      field.element_size = scalar_size(*scalar);
      field.align = field.element_size;
    } else if (const auto it = by_name_.find(ref->base); it != by_name_.end()) {
      const std::size_t j = it->second;
      // Not laid out: a problem already reported where it is declared, a
      // cycle or a chain too deep (reported by walk() and check_nesting()).
      if (state_[j] != State::Ok) return std::nullopt;
      field.kind = FieldKind::Nested;
      field.nested = j;
      field.element_size = types_[j].size;
      field.align = types_[j].align;
    } else {
      report_unknown_type(fd, ref->base);
      return std::nullopt;
    }
    bool overflow = __builtin_mul_overflow(field.element_size, field.count, &field.size);
    if (field.bounded() && !overflow) {
      // A uint32 length, then the elements (ferry::String, ferry::Vector).
      field.align = std::max<std::uint64_t>(field.align, sizeof(std::uint32_t));
      field.data_offset = field.align;
      overflow = __builtin_add_overflow(field.size, field.data_offset, &field.size);
      field.size = align_up(field.size, field.align);
    }
    if (overflow || field.size > kMaxSampleSize) {
      report(fd.type_pos, "field " + quote(fd.name) + " of type " + quote(d.name) + " (" + fd.type +
                              ") is " + kTooLarge + "; expected a smaller array");
      return std::nullopt;
    }
    return field;
  }

  void report_unknown_type(const FieldDecl& fd, std::string_view base) {
    std::string message = "unknown field type " + quote(base) + " of field " + quote(fd.name);
    if (!suggestions_.exhausted() && type_candidates_.empty()) {
      type_candidates_ = {"bool", "i8",  "i16", "i32", "i64", "u8",
                          "u16",  "u32", "u64", "f32", "f64", "char"};
      for (const TypeDecl& other : decls_) type_candidates_.push_back(other.name);
    }
    if (const auto guess = suggestions_.closest(base, type_candidates_)) {
      message += "; did you mean " + quote(*guess) + "?";
    } else {
      message +=
          "; expected bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, char[N], "
          "string<=N, T[N], T[<=N] or a type declared under 'types'";
    }
    report(fd.type_pos, std::move(message));
  }

  // The field `fd`, the one the top of `stack` follows, holds the type at
  // stack[from]: a cycle.
  template <class Frame>
  void report_cycle(const std::vector<Frame>& stack, std::size_t from, const FieldDecl& fd) {
    std::vector<std::string> links;
    const std::size_t length = stack.size() - from;
    for (std::size_t k = from; k < stack.size(); ++k) {
      if (length > kChainHead + kChainTail + 1 && k == from + kChainHead) {
        links.emplace_back("...");
        k = stack.size() - kChainTail;
      }
      links.push_back(link(stack[k].type, stack[k].next_field - 1));
    }
    const std::string& name = decls_[stack[from].type].name;
    links.push_back(name);
    report(fd.type_pos, "recursive type: " + quote(name) + " contains itself (" +
                            join_links(links) +
                            "); expected types that do not nest themselves (a type cannot hold "
                            "itself by value)");
  }

  // Keeps the good types in declaration order and renumbers nested indices.
  Schema compact() {
    std::vector<std::size_t> new_index(decls_.size(), 0);
    Schema schema;
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      if (state_[i] != State::Ok) continue;
      new_index[i] = schema.types_.size();
      schema.types_.push_back(std::move(types_[i]));
    }
    // An Ok type only nests Ok types, so every index is remapped.
    for (Type& type : schema.types_) {
      for (Field& field : type.fields) {
        if (field.kind == FieldKind::Nested) field.nested = new_index[field.nested];
      }
    }
    return schema;
  }

  std::string file_name(const TypeDecl& d) const {
    return d.file < files_.size() ? files_[d.file] : std::string();
  }

  std::span<const TypeDecl> decls_;
  std::span<const std::string> files_;
  std::size_t current_ = 0;  // the type whose problems report() reports
  std::vector<Diagnostic>& errors_;
  detail::SuggestBudget& suggestions_;
  std::unordered_map<std::string_view, std::size_t> by_name_;  // first declaration
  // Parallel to decls_:
  std::vector<State> state_;
  std::vector<Type> types_;
  std::vector<std::size_t> depth_;    // levels of nesting, 1 for no nested field
  std::vector<std::size_t> deepest_;  // the field leading to the deepest chain, or kNoField
  // With a deepest_ field: that chain's innermost type, and the type holding it.
  std::vector<std::size_t> bottom_;
  std::vector<std::size_t> last_holder_;
  // Primitives and declared names for "did you mean", built on first use.
  std::vector<std::string_view> type_candidates_;
};

namespace detail {
Schema build_schema(std::span<const TypeDecl> decls, std::span<const std::string> files,
                    std::vector<Diagnostic>& errors, SuggestBudget& suggestions) {
  return SchemaBuilder(decls, files, errors, suggestions).build();
}
}  // namespace detail

Schema build_schema(std::span<const TypeDecl> decls, std::string_view file,
                    std::vector<Diagnostic>& errors) {
  detail::SuggestBudget suggestions;
  const std::string files[] = {std::string(file)};
  return detail::build_schema(decls, files, errors, suggestions);
}

Schema build_schema(std::span<const TypeDecl> decls, std::span<const std::string> files,
                    std::vector<Diagnostic>& errors) {
  detail::SuggestBudget suggestions;
  return detail::build_schema(decls, files, errors, suggestions);
}

}  // namespace ferry::config
