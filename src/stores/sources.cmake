# Shared stores (cache, rate limits, budgets, task records): in memory, or in Redis through
# hiredis's async API on the process's Asio loop. Included by the root CMakeLists.txt right after
# toolport_core is defined.
find_path(HIREDIS_INCLUDE_DIR hiredis/async.h REQUIRED)
find_library(HIREDIS_LIBRARY hiredis REQUIRED)

target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/store_health.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/local_rate_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/local_budgets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/task_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_task_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/argument_checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_url.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_script.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_rate_limits.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_budgets.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_task_store.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shared_sessions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/redis_shared_sessions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stores.cpp
)
# hiredis headers are included by the Redis .cpp files only; nothing public depends on them.
target_include_directories(toolport_core PRIVATE ${HIREDIS_INCLUDE_DIR})
target_link_libraries(toolport_core PUBLIC ${HIREDIS_LIBRARY})
