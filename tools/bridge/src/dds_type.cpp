// The ops language of Cyclone DDS 0.10 (dds_opcodes.h), as idlc writes it:
// one instruction per field (ADR | type, offset[, count[, jump, size]]),
// RTS at the end of each struct; a nested struct is a separate block that
// EXT (one), ARR|STU (an array) or SEQ|STU (a sequence) jumps to, relative
// to the instruction.
//
// A fixed-size type's ops read the ferry sample in place (its layout is the
// C one idlc assumes). A type with string<=N or T[<=N] is described as ROS
// 2's IDL has it (unbounded `string`, `sequence<T>`), at the offsets of the
// C struct idlc would make of that IDL (char*, dds_sequence_t): the bridge
// never hands Cyclone such a sample, it moves their CDR (docs/bridge.md).

#include "dds_type.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "ferry/config/ros2msg.hpp"

namespace ferry::bridge {

namespace {

using config::FieldKind;
using config::Scalar;

// One instruction word from opcode, type and flag parts (enums of
// different types in the C header).
template <typename... Parts>
constexpr std::uint32_t op(Parts... parts) {
  return (static_cast<std::uint32_t>(parts) | ...);
}

// Type bits and flags of one scalar; `array` selects the SUBTYPE encoding.
std::uint32_t scalar_bits(Scalar s, bool array) {
  auto type = [array](std::uint32_t value) { return array ? (value << 8u) : (value << 16u); };
  switch (s) {
    case Scalar::Bool:
      return type(DDS_OP_VAL_BLN);
    case Scalar::I8:
      return type(DDS_OP_VAL_1BY) | DDS_OP_FLAG_SGN;
    case Scalar::U8:
      return type(DDS_OP_VAL_1BY);
    case Scalar::I16:
      return type(DDS_OP_VAL_2BY) | DDS_OP_FLAG_SGN;
    case Scalar::U16:
      return type(DDS_OP_VAL_2BY);
    case Scalar::I32:
      return type(DDS_OP_VAL_4BY) | DDS_OP_FLAG_SGN;
    case Scalar::U32:
      return type(DDS_OP_VAL_4BY);
    case Scalar::I64:
      return type(DDS_OP_VAL_8BY) | DDS_OP_FLAG_SGN;
    case Scalar::U64:
      return type(DDS_OP_VAL_8BY);
    case Scalar::F32:
      return type(DDS_OP_VAL_4BY) | DDS_OP_FLAG_FP;
    case Scalar::F64:
      return type(DDS_OP_VAL_8BY) | DDS_OP_FLAG_FP;
  }
  return type(DDS_OP_VAL_1BY);
}

std::uint64_t align_up(std::uint64_t value, std::uint64_t align) {
  return (value + align - 1) / align * align;
}

// The C layout idlc gives the IDL of a type: a fixed-size type's is ferry's
// own; in a type with bounded fields a string is a char*, a sequence a
// dds_sequence_t, and the rest moves accordingly.
class CLayouts {
 public:
  explicit CLayouts(const config::Schema& schema) : schema_(schema) {}

  struct Layout {
    std::uint64_t size = 0;
    std::uint64_t align = 1;
    std::vector<std::uint64_t> offsets;  // per field
  };

  const Layout& of(std::size_t index) {
    if (const auto it = cache_.find(index); it != cache_.end()) return it->second;
    const config::Type& type = schema_.type(index);
    Layout out;
    if (!type.variable) {
      out.size = type.size;
      out.align = type.align;
      for (const config::Field& f : type.fields) out.offsets.push_back(f.offset);
      return cache_[index] = out;
    }
    std::uint64_t at = 0;
    for (const config::Field& f : type.fields) {
      std::uint64_t size = 0;
      std::uint64_t align = 1;
      if (f.sequence) {
        size = sizeof(dds_sequence_t);
        align = alignof(dds_sequence_t);
      } else if (f.kind == FieldKind::BoundedString) {
        size = sizeof(char*);
        align = alignof(char*);
      } else if (f.kind == FieldKind::Nested) {
        const Layout& nested = of(f.nested);
        size = nested.size * f.count;
        align = nested.align;
      } else {
        size = f.size;
        align = f.align;
      }
      at = align_up(at, align);
      out.offsets.push_back(at);
      at += size;
      out.align = std::max(out.align, align);
    }
    out.size = align_up(at, out.align);
    return cache_[index] = out;
  }

 private:
  const config::Schema& schema_;
  std::map<std::size_t, Layout> cache_;
};

class OpsBuilder {
 public:
  explicit OpsBuilder(const config::Schema& schema) : schema_(schema), layouts_(schema) {}
  [[nodiscard]] CLayouts& layouts() noexcept { return layouts_; }

  // The top type's fields `shift` bytes further, after `prefix` (whole
  // instructions at offsets below `shift`).
  void build(std::size_t top, std::uint32_t shift = 0, std::vector<std::uint32_t> prefix = {},
             std::uint32_t prefix_instructions = 0) {
    shift_ = shift;
    ops_ = std::move(prefix);
    instructions_ = prefix_instructions;
    pending_.push_back(top);
    for (std::size_t i = 0; i < pending_.size(); ++i) emit_block(pending_[i]);
    for (const Jump& j : jumps_) {
      const auto target = static_cast<std::uint32_t>(block_start_.at(j.type));
      ops_[j.word] = (j.length << 16) | (target - j.instruction);
    }
  }
  [[nodiscard]] std::vector<std::uint32_t> take() { return std::move(ops_); }
  [[nodiscard]] std::uint32_t instructions() const noexcept { return instructions_; }

 private:
  struct Jump {
    std::size_t word;           // where the (length << 16 | jump) word goes
    std::uint32_t instruction;  // the instruction's first word
    std::uint32_t length;       // the instruction's length in words
    std::size_t type;           // the block it jumps to
  };

  std::uint32_t here() const { return static_cast<std::uint32_t>(ops_.size()); }
  void bytes_array(std::uint64_t offset, std::uint64_t count) {
    ops_.insert(ops_.end(),
                {op(DDS_OP_ADR, DDS_OP_TYPE_ARR, DDS_OP_SUBTYPE_1BY),
                 static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(count)});
    ++instructions_;
  }
  void want(std::size_t type) {
    if (block_start_.contains(type)) return;
    for (std::size_t t : pending_)
      if (t == type) return;
    pending_.push_back(type);
  }

  void emit_block(std::size_t index) {
    const std::uint32_t shift = block_start_.empty() ? shift_ : 0;  // only the top block's
    block_start_[index] = ops_.size();
    const config::Type& type = schema_.type(index);
    if (type.kind == config::TypeKind::Opaque) {
      bytes_array(shift, type.size);  // an opaque topic type: uint8[size] data
    }
    const std::vector<std::uint64_t> offsets = layouts_.of(index).offsets;
    for (std::size_t i = 0; i < type.fields.size(); ++i) {
      const config::Field& f = type.fields[i];
      const auto offset = static_cast<std::uint32_t>(offsets[i]) + shift;
      const auto count = static_cast<std::uint32_t>(f.count);
      switch (f.kind) {
        case FieldKind::Scalar:
          if (f.sequence) {
            ops_.insert(ops_.end(),
                        {op(DDS_OP_ADR, DDS_OP_TYPE_SEQ) | scalar_bits(f.scalar, true), offset});
          } else if (f.is_array) {
            ops_.insert(ops_.end(), {op(DDS_OP_ADR, DDS_OP_TYPE_ARR) | scalar_bits(f.scalar, true),
                                     offset, count});
          } else {
            ops_.insert(ops_.end(), {op(DDS_OP_ADR) | scalar_bits(f.scalar, false), offset});
          }
          ++instructions_;
          break;
        case FieldKind::String:
          bytes_array(offset, f.count);  // char[N] -> uint8[N]
          break;
        case FieldKind::BoundedString:
          ops_.insert(ops_.end(), {op(DDS_OP_ADR, DDS_OP_TYPE_STR), offset});
          ++instructions_;
          break;
        case FieldKind::Nested: {
          const config::Type& nested = schema_.type(f.nested);
          if (nested.kind == config::TypeKind::Opaque && !f.sequence) {
            bytes_array(offset, f.size);  // an opaque field: its bytes
            break;
          }
          const auto element_size = static_cast<std::uint32_t>(layouts_.of(f.nested).size);
          const std::uint32_t at = here();
          if (f.sequence) {
            ops_.insert(ops_.end(), {op(DDS_OP_ADR, DDS_OP_TYPE_SEQ, DDS_OP_SUBTYPE_STU), offset,
                                     element_size, 0});
            jumps_.push_back({at + 3u, at, 4, f.nested});
          } else if (f.is_array) {
            ops_.insert(ops_.end(), {op(DDS_OP_ADR, DDS_OP_TYPE_ARR, DDS_OP_SUBTYPE_STU), offset,
                                     count, 0, element_size});
            jumps_.push_back({at + 3u, at, 5, f.nested});
          } else {
            ops_.insert(ops_.end(), {op(DDS_OP_ADR, DDS_OP_TYPE_EXT), offset, 0});
            jumps_.push_back({at + 2u, at, 3, f.nested});
          }
          ++instructions_;
          want(f.nested);
          break;
        }
      }
    }
    ops_.push_back(op(DDS_OP_RTS));
    ++instructions_;
  }

  const config::Schema& schema_;
  CLayouts layouts_;
  std::vector<std::uint32_t> ops_;
  std::uint32_t instructions_ = 0;
  std::uint32_t shift_ = 0;
  std::vector<std::size_t> pending_;                // blocks to emit, in order
  std::map<std::size_t, std::size_t> block_start_;  // type -> first word of its block
  std::vector<Jump> jumps_;
};

}  // namespace

std::string dds_type_name(const std::string& ferry_type) {
  // "pkg/msg/Name" -> "pkg::msg::dds_::Name_"
  const std::string ros = config::ros2_type_name(ferry_type);
  const auto last = ros.rfind('/');
  std::string out;
  for (char c : ros.substr(0, last)) {
    if (c == '/') {
      out += "::";
    } else {
      out += c;
    }
  }
  return out + "::dds_::" + ros.substr(last + 1) + "_";
}

DdsType::DdsType(const config::Schema& schema, std::size_t type) {
  OpsBuilder builder(schema);
  builder.build(type);
  const auto& layout = builder.layouts().of(type);
  variable_ = schema.type(type).variable;
  init(dds_type_name(config::ros2_type_name(schema, type)), builder.take(), builder.instructions(),
       static_cast<std::uint32_t>(layout.size), static_cast<std::uint32_t>(layout.align),
       !variable_);
}

DdsType DdsType::with_request_header(const config::Schema& schema, std::size_t type,
                                     std::string name) {
  constexpr std::uint32_t kHeader = 16;  // uint64 guid, int64 sequence number
  OpsBuilder builder(schema);
  builder.build(
      type, kHeader,
      {op(DDS_OP_ADR, DDS_OP_TYPE_8BY), 0, op(DDS_OP_ADR, DDS_OP_TYPE_8BY, DDS_OP_FLAG_SGN), 8}, 2);
  const config::Type& t = schema.type(type);
  DdsType out;
  out.init(std::move(name), builder.take(), builder.instructions(),
           static_cast<std::uint32_t>(kHeader + t.size),
           static_cast<std::uint32_t>(std::max<std::size_t>(t.align, 8)), true);
  return out;
}

DdsType DdsType::bytes() {
  DdsType t;
  t.init(dds_type_name(config::ros2_bytes_type_name()),
         {op(DDS_OP_ADR, DDS_OP_TYPE_SEQ, DDS_OP_SUBTYPE_1BY), 0, op(DDS_OP_RTS)}, 2,
         sizeof(dds_sequence_t), alignof(dds_sequence_t), false);
  return t;
}

void DdsType::init(std::string name, std::vector<std::uint32_t> ops, std::uint32_t instructions,
                   std::uint32_t size, std::uint32_t align, bool fixed_size) {
  s_ = std::make_unique<Storage>();
  s_->name = std::move(name);
  s_->ops = std::move(ops);
  s_->descriptor.emplace(dds_topic_descriptor_t{
      .m_size = size,
      .m_align = align,
      .m_flagset = fixed_size ? DDS_TOPIC_FIXED_SIZE : 0u,
      .m_nkeys = 0,
      .m_typename = s_->name.c_str(),
      .m_keys = nullptr,
      .m_nops = instructions,
      .m_ops = s_->ops.data(),
      .m_meta = "",
      .type_information = {nullptr, 0},
      .type_mapping = {nullptr, 0},
      .restrict_data_representation = 0,
  });
}

}  // namespace ferry::bridge
