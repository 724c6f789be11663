# JSON-RPC 2.0 and MCP protocol revisions: messages, ids, the reader/writer, the peer.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_PROTOCOL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_PROTOCOL_SOURCES})
