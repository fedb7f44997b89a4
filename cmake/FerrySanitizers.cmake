# FERRY_SANITIZE=address gives ASan+UBSan for the whole build; =thread gives TSan.
# Sanitizer builds compile at -Og with line tables only (-g1): enough for the
# sanitizers' stack traces. -Og compiles an instrumented file in about two
# thirds of -O1's time (port_state.cpp under ASan: 22 s -> 15 s of CPU), and
# -O1 in about half of -O2 -g's (these options come after the build type's
# flags, so they win).
if(NOT FERRY_SANITIZE STREQUAL "")
  add_compile_options(-Og -g1)
endif()
if(FERRY_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(FERRY_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT FERRY_SANITIZE STREQUAL "")
  message(FATAL_ERROR "FERRY_SANITIZE must be '', 'address' or 'thread', not '${FERRY_SANITIZE}'")
endif()
