# ferry_gen_cpp(NAME YAML HEADER TARGETS...): runs the built `ferry gen cpp`
# on YAML into <build>/generated/<dir>/HEADER (a custom target NAME), and
# lets each of TARGETS include it as "HEADER". The header is made again
# whenever the YAML or the ferry tool changes.
# ferry_gen_c(NAME YAML HEADER TARGETS...): the same with `ferry gen c`.
function(ferry_gen_header language name yaml header)
  get_filename_component(yaml_path ${yaml} ABSOLUTE)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(out ${dir}/${header})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND $<TARGET_FILE:ferry_cli> gen ${language} ${yaml_path} -o ${out}
    DEPENDS ferry_cli ${yaml_path}
    COMMENT "ferry gen ${language} ${yaml} -> ${header}"
    VERBATIM)
  add_custom_target(${name} DEPENDS ${out})
  foreach(target ${ARGN})
    add_dependencies(${target} ${name})
    target_include_directories(${target} PRIVATE ${dir})
  endforeach()
endfunction()

function(ferry_gen_cpp name yaml header)
  ferry_gen_header(cpp ${name} ${yaml} ${header} ${ARGN})
endfunction()

function(ferry_gen_c name yaml header)
  ferry_gen_header(c ${name} ${yaml} ${header} ${ARGN})
endfunction()
