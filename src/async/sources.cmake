# Coroutine tasks, executors, the worker pool and coroutine frame pool.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_ASYNC_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_ASYNC_SOURCES})
