# The downstream HTTP client (https, pool, proxies, decoding, redirects, retries) that
# every source calling a web API shares. Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
find_package(ZLIB REQUIRED)
file(GLOB_RECURSE TOOLPORT_HTTP_CLIENT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_HTTP_CLIENT_SOURCES})
target_link_libraries(toolport_core PUBLIC OpenSSL::SSL ZLIB::ZLIB)
if(TOOLPORT_SANITIZE)
  # Asio coroutines in COMDAT sections: see src/client/sources.cmake.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/http_client.cpp PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
