# Shared stores (cache, rate limits, budgets, task records): in memory, or in Redis through
# hiredis's async API on the process's Asio loop. Included by the root CMakeLists.txt right after
# toolport_core is defined.
find_path(HIREDIS_INCLUDE_DIR hiredis/async.h REQUIRED)
find_library(HIREDIS_LIBRARY hiredis REQUIRED)

file(GLOB_RECURSE TOOLPORT_STORES_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_STORES_SOURCES})
# hiredis headers are included by the Redis .cpp files only; nothing public depends on them.
target_include_directories(toolport_core PRIVATE ${HIREDIS_INCLUDE_DIR})
target_link_libraries(toolport_core PUBLIC ${HIREDIS_LIBRARY})
