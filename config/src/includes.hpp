#pragma once
// `include:` (docs/messages.md): the types of other YAML files, looked up
// next to the including file, then in the shipped definitions
// (share/ferry/msgs/). Each file is read once however often it is
// included; a cycle is an error at the include that closes it.

#include <string>
#include <vector>

#include "ferry/config/schema.hpp"
#include "yaml_reader.hpp"

namespace ferry::config::detail {

struct Included {
  std::vector<TypeDecl> decls;     // of every included file, in load order
  std::vector<std::string> files;  // files[0]: the configuration; then each included file
  std::vector<std::string> texts;  // texts[i]: the text of files[i + 1]
};

// Reads the files `include` lists (a list of file names, or one name) in a
// file named `including` (its directory is searched first), appending their
// declarations to `out` with TypeDecl::file set. Problems go to `errors`,
// each with the file, line and column it is about.
void read_includes(Reader& reader, const Entry& include, const std::string& including,
                   Included& out, std::vector<Diagnostic>& errors);

// The directories searched after the including file's: FERRY_MSGS_PATH
// (colon-separated), then share/ferry/msgs next to the running program
// (<prefix>/bin/../share/ferry/msgs), then the installed one.
[[nodiscard]] std::vector<std::string> msgs_search_path();

}  // namespace ferry::config::detail
