// ferry gen yaml: ROS 2 .msg text -> ferry YAML types (docs/messages.md).

#include "ferry/config/msg_to_yaml.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

namespace ferry::config {

namespace {

struct Primitive {
  std::string_view ros;
  std::string_view ferry;
};
constexpr Primitive kPrimitives[] = {
    {"bool", "bool"},  {"byte", "u8"},     {"char", "u8"},     {"int8", "i8"},    {"uint8", "u8"},
    {"int16", "i16"},  {"uint16", "u16"},  {"int32", "i32"},   {"uint32", "u32"}, {"int64", "i64"},
    {"uint64", "u64"}, {"float32", "f32"}, {"float64", "f64"},
};

// The shipped definition files and the packages they declare.
constexpr std::pair<std::string_view, std::string_view> kShipped[] = {
    {"builtin_interfaces", "builtin_interfaces.yaml"},
    {"std_msgs", "std_msgs.yaml"},
    {"geometry_msgs", "geometry_msgs.yaml"},
    {"sensor_msgs", "sensor_msgs.yaml"},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

class Converter {
 public:
  Converter(const MsgToYamlOptions& options, std::vector<Diagnostic>& errors)
      : options_(options), errors_(errors) {}

  void file(const MsgFile& f) {
    const std::filesystem::path path(f.path);
    const std::string name = path.stem().string();
    std::string package = path.parent_path().parent_path().filename().string();
    if (package.empty() || path.parent_path().filename() != "msg") package = "ferry";
    package_ = package;
    declared_.insert(package + "/msg/" + name);
    out_ += "  " + package + "/msg/" + name + ":\n    fields:\n";
    std::size_t line_no = 0;
    std::string_view rest = f.text;
    bool any = false;
    while (!rest.empty()) {
      ++line_no;
      const auto nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
      const auto hash = line.find('#');
      if (hash != std::string_view::npos) line = line.substr(0, hash);
      const std::size_t first = line.find_first_not_of(" \t");
      const std::size_t indent = first == std::string_view::npos ? 0 : first;
      line = trim(line);
      if (line.empty()) continue;
      const auto space = line.find_first_of(" \t");
      if (space == std::string_view::npos) {
        error(f.path, line_no, indent + 1,
              "'" + std::string(line) + "' is not a field; expected TYPE NAME, e.g. uint32 width");
        continue;
      }
      const std::string_view type = line.substr(0, space);
      std::string_view after = trim(line.substr(space));
      const auto name_end = after.find_first_of(" \t=");
      const std::string_view field = after.substr(0, name_end);
      const std::string_view tail =
          name_end == std::string_view::npos ? std::string_view{} : trim(after.substr(name_end));
      if (tail.starts_with("=")) continue;  // a constant: not part of a sample
      auto converted = field_type(type);
      if (!converted) {
        error(f.path, line_no, indent + 1, converted.error());
        continue;
      }
      out_ += "      - { name: " + std::string(field) + ", type: \"" + *converted + "\" }\n";
      any = true;
    }
    if (!any)
      error(f.path, 1, 1, "no fields; expected at least one field (ferry has no empty types)");
  }

  std::string finish() {
    std::string head;
    std::set<std::string_view> files;
    for (const auto& used : used_) {
      if (declared_.contains(used)) continue;
      const std::string package = used.substr(0, used.find('/'));
      for (const auto& [p, file] : kShipped)
        if (p == package) files.insert(file);
    }
    if (!files.empty()) {
      head += "include: [";
      bool first = true;
      for (const auto f : files) {
        head += (first ? "" : ", ") + std::string(f);
        first = false;
      }
      head += "]\n";
    }
    return head + "types:\n" + out_;
  }

 private:
  void error(const std::string& file, std::size_t line, std::size_t column, std::string message) {
    errors_.push_back(Diagnostic{file, line, column, std::move(message)});
  }

  std::expected<std::string, std::string> element(std::string_view base) {
    for (const auto& p : kPrimitives)
      if (p.ros == base) return std::string(p.ferry);
    if (base == "wstring" || base.starts_with("wstring<="))
      return std::unexpected("wstring is not supported; expected string");
    std::string name;
    const auto slash = base.find('/');
    if (slash == std::string_view::npos) {
      name = package_ + "/msg/" + std::string(base);
    } else if (base.find("/msg/") != std::string_view::npos) {
      name = std::string(base);
    } else {
      name = std::string(base.substr(0, slash)) + "/msg/" + std::string(base.substr(slash + 1));
    }
    used_.insert(name);
    return name;
  }

  std::expected<std::string, std::string> field_type(std::string_view type) {
    const auto open = type.find('[');
    const std::string_view base = type.substr(0, open);
    std::string suffix;
    if (open != std::string_view::npos) {
      const auto close = type.find(']', open);
      if (close == std::string_view::npos || close + 1 != type.size())
        return std::unexpected("invalid array type '" + std::string(type) +
                               "'; expected T[], T[N] or T[<=N]");
      const std::string_view inside = type.substr(open + 1, close - open - 1);
      suffix = inside.empty() ? "[<=" + std::to_string(options_.max_sequence) + "]"
                              : "[" + std::string(inside) + "]";
      if (base == "string" || base.starts_with("string<="))
        return std::unexpected("an array of strings ('" + std::string(type) +
                               "') has no ferry form; expected a type holding a string, and an "
                               "array of that type");
    }
    if (base == "string") return "string<=" + std::to_string(options_.max_string);
    if (base.starts_with("string<=")) return std::string(base);
    auto e = element(base);
    if (!e) return e;
    return *e + suffix;
  }

  const MsgToYamlOptions& options_;
  std::vector<Diagnostic>& errors_;
  std::string package_;
  std::string out_;
  std::set<std::string> declared_;
  std::set<std::string> used_;
};

}  // namespace

std::expected<std::string, std::vector<Diagnostic>> msg_to_yaml(const std::vector<MsgFile>& files,
                                                                const MsgToYamlOptions& options) {
  std::vector<Diagnostic> errors;
  Converter c(options, errors);
  for (const MsgFile& f : files) c.file(f);
  if (!errors.empty()) return std::unexpected(std::move(errors));
  return c.finish();
}

}  // namespace ferry::config
