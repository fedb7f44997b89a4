#pragma once
/// @file
/// The name of an ErrorCode as the C++ API spells it, for messages that name
/// the code (the CLI's and Python's service errors).

#include "ferry/error.hpp"

namespace ferry {

/// The code's name as ferry/error.hpp spells it, e.g. "NoServer".
[[nodiscard]] const char* name_of(ErrorCode code) noexcept;

}  // namespace ferry
