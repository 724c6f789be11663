# The YAML spec runner (`toolport test`): spec model and loader, assertions, runner, reporter.
# Independent of transports; the command adapts an MCP client to spec::Target.
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/document.cpp
  ${CMAKE_CURRENT_LIST_DIR}/json_path.cpp
  ${CMAKE_CURRENT_LIST_DIR}/outcome.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reporter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/status.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/text.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/response_time.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/json_path.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/regex_match.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/snapshot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/assertions/json_schema.cpp
)
