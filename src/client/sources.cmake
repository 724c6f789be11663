# The MCP client (stdio, Streamable HTTP, legacy HTTP+SSE and in-process transports)
# behind `toolport list`, `call`, `skills` and `test`, and the gateway's upstream
# connections. Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_CLIENT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_CLIENT_SOURCES})
if(TOOLPORT_SANITIZE)
  # clang 14 cannot assemble -fsanitize=function checks in coroutines that live in COMDAT
  # sections, as Asio's awaitable templates do ("Cannot represent a difference across
  # sections"). Only that one check is dropped; the rest of UBSan and ASan stay.
  set_source_files_properties(
    ${CMAKE_CURRENT_LIST_DIR}/http_client_transport.cpp
    ${CMAKE_CURRENT_LIST_DIR}/legacy_sse_client_transport.cpp
    ${CMAKE_CURRENT_LIST_DIR}/stdio_client_transport.cpp
    PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
# The OAuth 2.1 client of the Streamable HTTP transport (client/oauth/oauth_authorizer.hpp).
if(TOOLPORT_SANITIZE)
  set_source_files_properties(
    ${CMAKE_CURRENT_LIST_DIR}/oauth/redirect_listener.cpp
    ${CMAKE_CURRENT_LIST_DIR}/oauth/oauth_authorizer.cpp
    PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
