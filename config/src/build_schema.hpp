#pragma once
// build_schema with the loader's "did you mean" budget, shared with the
// other sections of the same file.

#include <span>
#include <string_view>
#include <vector>

#include "ferry/config/schema.hpp"
#include "suggest.hpp"

namespace ferry::config::detail {

[[nodiscard]] Schema build_schema(std::span<const TypeDecl> decls,
                                  std::span<const std::string> files,
                                  std::vector<Diagnostic>& errors, SuggestBudget& suggestions);

}  // namespace ferry::config::detail
