# FERRY_SANITIZE=address gives ASan+UBSan for the whole build; =thread gives TSan.
# Sanitizer builds compile at -O1 with line tables only (-g1): enough for the
# sanitizers' stack traces, and about half the compile time of -O2 -g (these
# options come after the build type's flags, so they win).
if(NOT FERRY_SANITIZE STREQUAL "")
  add_compile_options(-O1 -g1)
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
