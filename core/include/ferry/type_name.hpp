#pragma once
/// @file
/// The name a C++ type is declared under in the topic YAML. FERRY_TYPE(Pose)
/// names it "Pose"; FERRY_TYPE_NAMED(Frame, "camera/Frame") chooses the name.
/// Use both at global namespace scope.
///
/// Types written by `ferry gen cpp` also carry their layout fingerprint
/// (FERRY_TYPE_LAYOUT; see ferry/config/layout_fingerprint.hpp for the text):
/// a port of such a type is checked field by field against the topic's
/// declared type, not only by name, size and alignment.

#include <string_view>
#include <type_traits>

namespace ferry {

/// The YAML type name of T, in `value`: specialised by FERRY_TYPE /
/// FERRY_TYPE_NAMED.
template <class T>
struct TypeName;

/// A type a port can carry: trivially copyable, and named by FERRY_TYPE.
template <class T>
concept NamedSample = std::is_trivially_copyable_v<T> && requires {
  { TypeName<T>::value } -> std::convertible_to<std::string_view>;
};

/// T's layout fingerprint, in `value`: specialised by FERRY_TYPE_LAYOUT
/// (headers written by `ferry gen cpp`).
template <class T>
struct TypeLayout;

/// A type with a layout fingerprint: checked field by field against the topic.
template <class T>
concept HasTypeLayout = requires {
  { TypeLayout<T>::value } -> std::convertible_to<std::string_view>;
};

}  // namespace ferry

/// Registers T under the YAML type name NAME (a string literal). Use at global
/// namespace scope; T must be trivially copyable.
#define FERRY_TYPE_NAMED(T, NAME)                                                        \
  template <>                                                                            \
  struct ferry::TypeName<T> {                                                            \
    static_assert(std::is_trivially_copyable_v<T>,                                       \
                  "ferry samples must be trivially copyable: they are copied as bytes"); \
    static constexpr std::string_view value = NAME;                                      \
  }

/// Registers T under its own name: FERRY_TYPE(Pose) is the YAML type "Pose".
#define FERRY_TYPE(T) FERRY_TYPE_NAMED(T, #T)

/// Gives T its layout fingerprint LAYOUT (written by `ferry gen cpp`, not by hand).
#define FERRY_TYPE_LAYOUT(T, LAYOUT)                  \
  template <>                                         \
  struct ferry::TypeLayout<T> {                       \
    static constexpr std::string_view value = LAYOUT; \
  }
