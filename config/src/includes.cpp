#include "includes.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "ferry/config/load.hpp"
#include "quote.hpp"
#include "readers.hpp"
#include "yaml_parse.hpp"

#ifndef FERRY_INSTALLED_MSGS_DIR
#define FERRY_INSTALLED_MSGS_DIR ""
#endif

namespace ferry::config::detail {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string_view> kIncludedKeys{"include", "types"};
constexpr std::string_view kIncludeExample = "[sensor_msgs.yaml]";

class IncludeReader {
 public:
  IncludeReader(Included& out, std::vector<Diagnostic>& errors) : out_(out), errors_(errors) {}

  // The configuration itself: an include of it is a cycle too.
  void enter(const std::string& file) {
    std::error_code ec;
    stack_.push_back(fs::weakly_canonical(file, ec).string());
  }

  void include(Reader& reader, const Entry& e, const std::string& including) {
    std::vector<std::pair<std::string, SourcePos>> names;
    if (e.value.IsScalar()) {
      names.emplace_back(e.value.Scalar(), e.value_pos);
    } else if (reader.expect_list(e.value, e.value_pos, "'include'",
                                  std::string(kIncludeExample))) {
      std::size_t index = 0;
      for (const YAML::Node& item : e.value) {
        ++index;
        const SourcePos pos = item.IsNull() ? e.value_pos : pos_of(item);
        if (!item.IsScalar() || item.Scalar().empty()) {
          reader.error(pos, "item " + std::to_string(index) +
                                " of 'include' is not a file name; expected a list like " +
                                std::string(kIncludeExample));
          continue;
        }
        names.emplace_back(item.Scalar(), pos);
      }
    }
    for (const auto& [name, pos] : names) one(reader, name, pos, including);
  }

 private:
  void one(Reader& reader, const std::string& name, SourcePos pos, const std::string& including) {
    const auto path = find(name, including);
    if (!path) {
      std::string where = fs::path(including).parent_path().string();
      for (const auto& dir : msgs_search_path()) where += ", " + dir;
      reader.error(pos, "included file " + quote(name) + " was not found (looked in " + where +
                            "); expected a YAML file next to " + quote(including) +
                            " or one of ferry's shipped definitions");
      return;
    }
    std::error_code ec;
    const std::string key = fs::weakly_canonical(*path, ec).string();
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] != key) continue;
      std::string chain;
      for (std::size_t k = i; k < stack_.size(); ++k) chain += stack_[k] + " -> ";
      reader.error(
          pos, "include cycle: " + chain + key + "; expected files that do not include each other");
      return;
    }
    for (const auto& done : done_)
      if (done == key) return;  // read once, however often included
    done_.push_back(key);
    read_file(*path, key);
  }

  void read_file(const fs::path& path, const std::string& key) {
    const std::string file = path.string();
    Reader r(file, errors_);
    auto text = read_config_text(path);
    if (!text) {
      errors_.push_back(std::move(text.error()));
      return;
    }
    const auto parsed = parse_yaml(*text);
    if (!parsed) {
      r.error(parsed.error().pos,
              "YAML syntax error: " + parsed.error().what + "; expected well-formed YAML");
      return;
    }
    if (!parsed->root.IsMap()) {
      r.error({1, 1},
              "an included file must be a map with 'types' (and 'include'); expected "
              "'types: { ... }'");
      return;
    }
    stack_.push_back(key);
    const auto entries = r.entries(parsed->root, "in an included file", kIncludedKeys);
    if (const Entry* e = find_entry(entries, "include")) include(r, *e, file);
    stack_.pop_back();
    const std::size_t index = out_.files.size();
    out_.files.push_back(file);
    out_.texts.push_back(std::move(*text));
    if (const Entry* e = find_entry(entries, "types")) {
      for (TypeDecl& d : read_types(r, *e)) {
        d.file = index;
        out_.decls.push_back(std::move(d));
      }
    }
  }

  static const Entry* find_entry(const std::vector<Entry>& entries, std::string_view key) {
    return detail::find(entries, key);
  }

  static std::optional<fs::path> find(const std::string& name, const std::string& including) {
    std::error_code ec;
    const fs::path own = fs::path(including).parent_path() / name;
    if (fs::is_regular_file(own, ec)) return own;
    if (fs::path(name).is_absolute()) return std::nullopt;
    for (const auto& dir : msgs_search_path()) {
      const fs::path p = fs::path(dir) / name;
      if (fs::is_regular_file(p, ec)) return p;
    }
    return std::nullopt;
  }

  Included& out_;
  std::vector<Diagnostic>& errors_;
  std::vector<std::string> stack_;  // files being read, outermost first
  std::vector<std::string> done_;
};

}  // namespace

std::vector<std::string> msgs_search_path() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("FERRY_MSGS_PATH"); env != nullptr) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      if (colon != 0) out.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path().parent_path() / "share/ferry/msgs").string());
  if (std::string_view(FERRY_INSTALLED_MSGS_DIR).size() != 0)
    out.emplace_back(FERRY_INSTALLED_MSGS_DIR);
  return out;
}

void read_includes(Reader& reader, const Entry& include, const std::string& including,
                   Included& out, std::vector<Diagnostic>& errors) {
  if (out.files.empty()) out.files.push_back(including);
  IncludeReader r(out, errors);
  r.enter(including);
  r.include(reader, include, including);
}

}  // namespace ferry::config::detail

namespace ferry::config {

std::string self_contained_text(const Config& config, std::string_view text) {
  if (config.included_texts.empty()) return std::string(text);
  // Each was parsed when the configuration was loaded: they are valid.
  const auto main = detail::parse_yaml(text);
  if (!main || !main->root.IsMap()) return std::string(text);
  YAML::Node types(YAML::NodeType::Map);
  for (const std::string& t : config.included_texts) {
    const auto parsed = detail::parse_yaml(t);
    if (!parsed || !parsed->root.IsMap() || !parsed->root["types"]) continue;
    for (const auto& kv : parsed->root["types"]) types[kv.first.Scalar()] = kv.second;
  }
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : main->root) {
    const std::string key = kv.first.Scalar();
    if (key == "include") continue;
    if (key == "types") {
      for (const auto& t : kv.second) types[t.first.Scalar()] = t.second;
      continue;
    }
    out[key] = kv.second;
  }
  out["types"] = types;
  YAML::Emitter emitter;
  emitter << out;
  return std::string(emitter.c_str()) + "\n";
}

}  // namespace ferry::config
