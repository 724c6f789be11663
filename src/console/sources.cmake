# The operator console (`console:`): its JSON API and live streams, the in-memory time
# series behind the Overview, and the page's embedded files (static_assets.*).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB TOOLPORT_CONSOLE_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_CONSOLE_SOURCES})
