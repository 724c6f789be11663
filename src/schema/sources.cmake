# JSON Schema validator (draft-07 and 2020-12) for tool arguments. Included by the root
# CMakeLists.txt right after toolport_core is defined.
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/compile.cpp
  ${CMAKE_CURRENT_LIST_DIR}/validate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/uri.cpp
  ${CMAKE_CURRENT_LIST_DIR}/regex.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unicode_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metaschemas.cpp
  ${CMAKE_CURRENT_LIST_DIR}/argument_names.cpp
)
