# ferry_public_library(target alias): a ferry library's ferry::<name> alias
# and its include/ directory, as seen from the build tree and once installed.
function(ferry_public_library target alias)
  add_library(${alias} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()

# ferry_tool_library(target source...): the static library behind one of the
# ferry command's tools (tools/<tool>/): its include/ directory public, its
# src/ directory private to its sources.
function(ferry_tool_library target)
  add_library(${target} STATIC ${ARGN})
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                             PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
endfunction()
