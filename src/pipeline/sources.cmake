# The call pipeline and its stages (validation, cache, rate limit, budget, timeout, ...).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_PIPELINE_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_PIPELINE_SOURCES})
