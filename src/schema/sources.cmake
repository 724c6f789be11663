# JSON Schema validator (draft-07 and 2020-12) for tool arguments. Included by the root
# CMakeLists.txt right after toolport_core is defined.
file(GLOB_RECURSE TOOLPORT_SCHEMA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_SCHEMA_SOURCES})
