# The YAML spec runner (`toolport test`): spec model and loader, assertions, runner, reporter.
# Independent of transports; the command adapts an MCP client to spec::Target.
file(GLOB_RECURSE TOOLPORT_SPEC_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_SPEC_SOURCES})
