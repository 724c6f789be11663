# What the server publishes about itself before any connection: its MCP Registry entries
# (the v0.1 read API), their Server Cards and the AI Catalog (`registry.serve`).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB TOOLPORT_DISCOVERY_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_DISCOVERY_SOURCES})
