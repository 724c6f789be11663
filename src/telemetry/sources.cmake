# Telemetry export: the OTLP trace exporter (batching, retries, its HTTP client) and its
# settings (the `telemetry:` section and the standard OTEL_* variables). Included by the root
# CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_TELEMETRY_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_TELEMETRY_SOURCES})
