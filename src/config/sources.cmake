# The configuration layer: the declarations of keys and sections, the one reader of the
# configuration file (Settings), and what is generated from the declarations (the JSON
# Schema and docs/configuration.md). Depends only on util and libraries.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_CONFIG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_CONFIG_SOURCES})
