# Compiler warnings and sanitizers applied to tunekit's own targets through tunekit_warnings.
add_library(tunekit_warnings INTERFACE)
target_compile_options(tunekit_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wno-unused-parameter)
if(TUNEKIT_WERROR)
  target_compile_options(tunekit_warnings INTERFACE -Werror)
endif()
if(TUNEKIT_SANITIZE)
  string(REPLACE "," ";" _san_list "${TUNEKIT_SANITIZE}")
  string(REPLACE ";" "," _san "${_san_list}")
  add_compile_options(-fsanitize=${_san} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_san})
  if("undefined" IN_LIST _san_list)
    # Undefined behaviour ends the process (and fails its test) instead of printing and going on.
    add_compile_options(-fno-sanitize-recover=undefined)
    add_link_options(-fno-sanitize-recover=undefined)
  endif()
endif()
