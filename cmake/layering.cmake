# Library layering of docs/ARCHITECTURE.md, checked at configure time: each kiln library may
# link only the kiln libraries listed for it here (external libraries are not restricted).
set(KILN_ALLOWED_DEPS_kiln_support "")
set(KILN_ALLOWED_DEPS_kiln_ir "kiln_support")
set(KILN_ALLOWED_DEPS_kiln_ops "kiln_ir;kiln_support")
set(KILN_ALLOWED_DEPS_kiln_exec "kiln_ops;kiln_ir;kiln_support")
set(KILN_ALLOWED_DEPS_kiln_frontend_onnx "kiln_ops;kiln_ir;kiln_support")
set(KILN_ALLOWED_DEPS_kiln_passes "kiln_exec;kiln_ops;kiln_ir;kiln_support")
set(KILN_ALLOWED_DEPS_kiln_kir "kiln_support")
set(KILN_ALLOWED_DEPS_kiln_target_spirv "kiln_kir;kiln_support")
set(KILN_ALLOWED_DEPS_kiln_compiler "kiln_passes;kiln_exec;kiln_ops;kiln_ir;kiln_kir;kiln_target_spirv;kiln_schema;kiln_support")
# The runtime never links compiler code: only the header-only artifact schema.
set(KILN_ALLOWED_DEPS_kiln_runtime "kiln_schema")
set(KILN_LIBRARIES kiln_support kiln_ir kiln_ops kiln_exec kiln_frontend_onnx kiln_passes
    kiln_kir kiln_target_spirv kiln_compiler kiln_runtime)

function(kiln_check_layering)
  foreach(lib IN LISTS KILN_LIBRARIES)
    get_target_property(deps ${lib} LINK_LIBRARIES)
    if(NOT deps)
      continue()
    endif()
    foreach(dep IN LISTS deps)
      if(dep MATCHES "^kiln_" AND NOT dep IN_LIST KILN_ALLOWED_DEPS_${lib})
        message(FATAL_ERROR "layering violation: ${lib} links ${dep}; allowed: ${KILN_ALLOWED_DEPS_${lib}}")
      endif()
    endforeach()
  endforeach()
endfunction()
