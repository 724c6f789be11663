# YAML and JSON files read as JSON values with the line of each value, under one rule for
# YAML scalars (document.hpp): the spec runner's files, OpenAPI documents. Low in the layers:
# it depends on yaml-cpp, nlohmann-json and fmt only.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_DOCUMENT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_DOCUMENT_SOURCES})
