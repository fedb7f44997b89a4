// ferry gen cpp FILE [-o HEADER] and ferry gen msg FILE [TYPE]: the YAML's
// types as C++ structs (DESIGN 1.9) or as ROS 2 .msg text.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "ferry/config/cpp_header.hpp"
#include "ferry/config/ros2msg.hpp"
#include "usage.hpp"

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

void gen_cpp(const std::string& file, const std::string& output) {
  const config::Config loaded = load_checked(file);
  const std::string source = std::filesystem::path(file).filename().string();
  auto header = config::generate_cpp_header(loaded.schema, source, file);
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
                config::ros2_type_name(types[i].name).c_str(), types[i].name.c_str());
    std::fputs(config::ros2msg_definition(loaded.schema, i).c_str(), stdout);
  }
}

}  // namespace

void add_gen_commands(CLI::App& app, Context& context) {
  auto* gen = app.add_subcommand("gen", "Generate code from a YAML configuration's types");
  gen->require_subcommand(1);

  auto* cpp = gen->add_subcommand(
      "cpp", "Write the YAML's types as C++ structs with FERRY_TYPE_NAMED and layout checks");
  auto cpp_file = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  cpp->add_option("FILE", *cpp_file, "The YAML file")->required();
  cpp->add_option("-o,--output", *output, "The header to write (default: standard output)");
  add_domain_option(*cpp, context, "Accepted for uniformity, not used: gen reads FILE only");
  cpp->footer("Example:\n  ferry gen cpp examples/hello/hello.yaml -o hello_types.hpp");
  cpp->callback([cpp_file, output] { gen_cpp(*cpp_file, *output); });

  auto* msg = gen->add_subcommand("msg", "Print the ROS 2 .msg definition of the YAML's types");
  auto msg_file = std::make_shared<std::string>();
  auto type = std::make_shared<std::string>();
  msg->add_option("FILE", *msg_file, "The YAML file")->required();
  msg->add_option("TYPE", *type, "Only this type (default: every type, each under a comment)");
  add_domain_option(*msg, context, "Accepted for uniformity, not used: gen reads FILE only");
  msg->footer("Example:\n  ferry gen msg examples/hello/hello.yaml Pose > Pose.msg");
  msg->callback([msg_file, type] { gen_msg(*msg_file, *type); });
}

}  // namespace ferry::cli
