# The MCP client (stdio, Streamable HTTP, legacy HTTP+SSE and in-process transports)
# behind `toolport list` and `toolport call`, and later the gateway's upstream
# connections. Included by the root CMakeLists.txt right after toolport_core is defined.
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mcp_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mcp_client_stateless.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elicitation_answers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/skills.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stateless_http_headers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sync_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/blocking_loop.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stdio_client_transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http_client_transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http_transport_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/legacy_sse_client_transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/in_process_transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/child_process.cpp
  ${CMAKE_CURRENT_LIST_DIR}/json_id_scanner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shell_words.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sse_parser.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wire_payload.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tool_output.cpp
)
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
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/oauth/www_authenticate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/pkce.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/json_document.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/protected_resource.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/server_metadata.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/scope_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/client_registration.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/token_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/redirect_listener.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/browser.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/authorization_request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/dpop.cpp
  ${CMAKE_CURRENT_LIST_DIR}/oauth/oauth_authorizer.cpp
)
if(TOOLPORT_SANITIZE)
  set_source_files_properties(
    ${CMAKE_CURRENT_LIST_DIR}/oauth/redirect_listener.cpp
    ${CMAKE_CURRENT_LIST_DIR}/oauth/oauth_authorizer.cpp
    PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
