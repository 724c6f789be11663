# Observability: metrics (Prometheus text format), the health report, structured JSON logs.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_OBSERVABILITY_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_OBSERVABILITY_SOURCES})
