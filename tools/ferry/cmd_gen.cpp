// ferry gen cpp|c FILE [-o HEADER] and ferry gen msg FILE [TYPE]: the YAML's
// types as C++ structs (docs/types.md), C structs (docs/c-api.md) or ROS 2
// .msg text.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "commands.hpp"
#include "ferry/config/c_header.hpp"
#include "ferry/config/cpp_header.hpp"
#include "ferry/config/msg_to_yaml.hpp"
#include "ferry/config/ros2msg.hpp"

namespace ferry::cli {

namespace {

// Writes beside the target and renames, so that a build never reads half a
// header.
void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      throw Failure(kExitRuntime, "cannot write '" + temporary + "': " + std::strerror(errno));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Failure(kExitRuntime, "cannot write '" + path + "': " + error.message());
  }
}

// `generate` is config::generate_cpp_header or config::generate_c_header.
template <class Generate>
void gen_header(const std::string& file, const std::string& output, Generate generate) {
  const config::Config loaded = load_checked(file);
  const std::string source = std::filesystem::path(file).filename().string();
  auto header = generate(loaded.schema, source, file);
  if (!header) {
    for (const auto& d : header.error()) std::fprintf(stderr, "%s\n", d.to_string().c_str());
    throw Failure(kExitUsage, std::to_string(header.error().size()) + " problem(s) in " + file);
  }
  if (output.empty() || output == "-") {
    std::fwrite(header->data(), 1, header->size(), stdout);
    return;
  }
  write_file(output, *header);
}

void gen_msg(const std::string& file, const std::string& type) {
  const config::Config loaded = load_checked(file);
  const auto& types = loaded.schema.types();
  if (!type.empty()) {
    const auto index = loaded.schema.index_of(type);
    if (!index) {
      std::string known;
      for (const auto& t : types) known += (known.empty() ? "" : ", ") + t.name;
      throw Failure(kExitUsage,
                    "type '" + type + "' is not declared in " + file +
                        (known.empty() ? " (it declares no types)" : "; its types are " + known));
    }
    std::fputs(config::ros2msg_definition(loaded.schema, *index).c_str(), stdout);
    return;
  }
  // Every type, each under a comment naming it (a .msg comment), a blank
  // line between them.
  for (std::size_t i = 0; i < types.size(); ++i) {
    std::printf("%s# %s (ferry type '%s')\n", i == 0 ? "" : "\n",
                config::ros2_type_name(loaded.schema, i).c_str(), types[i].name.c_str());
    std::fputs(config::ros2msg_definition(loaded.schema, i).c_str(), stdout);
  }
}

}  // namespace

int run_gen_cpp(const GenCppOptions& o, const Context& /*context*/) {
  gen_header(o.file, o.output, config::generate_cpp_header);
  return kExitOk;
}

int run_gen_c(const GenCOptions& o, const Context& /*context*/) {
  gen_header(o.file, o.output, config::generate_c_header);
  return kExitOk;
}

int run_gen_yaml(const GenYamlOptions& o, const Context& /*context*/) {
  std::vector<config::MsgFile> files;
  for (const std::string& path : o.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(kExitUsage, path + ": cannot read: " + std::strerror(errno));
    files.push_back({path, std::string(std::istreambuf_iterator<char>(in), {})});
  }
  auto yaml = config::msg_to_yaml(files, {o.max_string, o.max_sequence});
  if (!yaml) {
    std::string all;
    for (const auto& d : yaml.error()) all += (all.empty() ? "" : "\n") + d.to_string();
    throw Failure(kExitUsage, all);
  }
  if (o.output.empty()) {
    std::fputs(yaml->c_str(), stdout);
  } else {
    std::ofstream out(o.output, std::ios::binary);
    out << *yaml;
    if (!out) throw Failure(kExitUsage, o.output + ": cannot write: " + std::strerror(errno));
  }
  return kExitOk;
}

int run_gen_msg(const GenMsgOptions& o, const Context& /*context*/) {
  gen_msg(o.file, o.type);
  return kExitOk;
}

}  // namespace ferry::cli
