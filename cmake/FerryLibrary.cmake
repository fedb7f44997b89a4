# ferry_public_library(target alias): a ferry library's ferry::<name> alias
# and its include/ directory, as seen from the build tree and once installed.
function(ferry_public_library target alias)
  add_library(${alias} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endfunction()
