#pragma once
// `ferry gen yaml` (docs/messages.md): ROS 2 .msg definitions as ferry YAML
// types. A field `string` becomes string<=max_string, `T[]` becomes
// T[<=max_sequence`]; `string<=N`, `T[<=N]` and `T[N]` keep their bounds;
// byte and char become u8; constants are left out (they are not part of a
// sample); a nested `pkg/Name` is the type `pkg/msg/Name`, a bare `Name`
// one of the same package. The package and the name come from the file's
// path: .../PKG/msg/NAME.msg.

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "ferry/config/diagnostic.hpp"

namespace ferry::config {

struct MsgFile {
  std::string path;  // for the package, the name and messages
  std::string text;
};

struct MsgToYamlOptions {
  std::uint64_t max_string = 256;
  std::uint64_t max_sequence = 1024;
};

// The YAML text (an `include:` of ferry's shipped definitions for the
// standard types the files use, then `types:`), or every problem found with
// the file, line and column.
[[nodiscard]] std::expected<std::string, std::vector<Diagnostic>> msg_to_yaml(
    const std::vector<MsgFile>& files, const MsgToYamlOptions& options);

}  // namespace ferry::config
