# The kinds of guard (pipeline/guard.hpp) that ask an outside service: an HTTP webhook and an
# MCP server with SEP-2624 interceptors. Above the MCP client they use, below the app that
# builds them from `guards:`. Every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_GUARDS_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_GUARDS_SOURCES})
