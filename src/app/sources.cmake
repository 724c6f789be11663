# Configuration, runtime and `serve` (the commands and main() belong to the executable).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB TOOLPORT_APP_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
list(REMOVE_ITEM TOOLPORT_APP_SOURCES ${CMAKE_CURRENT_LIST_DIR}/main.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_APP_SOURCES})
