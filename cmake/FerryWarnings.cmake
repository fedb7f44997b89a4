# ferry_warnings(target): the warning set every ferry target is built with.
add_library(ferry_warnings INTERFACE)
target_compile_options(ferry_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                       -Wno-sign-conversion)
install(TARGETS ferry_warnings EXPORT ferryTargets)
