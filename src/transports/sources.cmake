# stdio, Streamable HTTP and legacy HTTP+SSE transports over Asio/Beast.
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_TRANSPORTS_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_TRANSPORTS_SOURCES})
if(TOOLPORT_SANITIZE)
  # clang 14 cannot assemble the -fsanitize=function check for Asio coroutine frames in
  # this file ("Cannot represent a difference across sections"); the rest of UBSan and
  # AddressSanitizer stay on.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/http_server.cpp PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
