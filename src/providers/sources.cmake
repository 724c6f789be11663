# Sources (built-in packs, REST catalogs, OpenAPI documents, upstream MCP servers).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_PROVIDERS_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_PROVIDERS_SOURCES})
