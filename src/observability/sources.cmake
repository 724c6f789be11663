# Observability: metrics (Prometheus text format), the health report, structured JSON logs.
# Included by the root CMakeLists.txt right after toolport_core is defined.
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metric_help.cpp
  ${CMAKE_CURRENT_LIST_DIR}/health.cpp
  ${CMAKE_CURRENT_LIST_DIR}/events.cpp
  ${CMAKE_CURRENT_LIST_DIR}/iso_time.cpp
)
