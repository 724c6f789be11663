# The downstream HTTP client (https, pool, proxies, decoding, redirects, retries) that
# every source calling a web API shares. Included by the root CMakeLists.txt.
find_package(ZLIB REQUIRED)
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/http_client.cpp
  ${CMAKE_CURRENT_LIST_DIR}/url.cpp
  ${CMAKE_CURRENT_LIST_DIR}/proxy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/retry_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/body_decoder.cpp
)
target_link_libraries(toolport_core PUBLIC OpenSSL::SSL ZLIB::ZLIB)
if(TOOLPORT_SANITIZE)
  # Asio coroutines in COMDAT sections: see src/client/sources.cmake.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/http_client.cpp PROPERTIES COMPILE_OPTIONS "-fno-sanitize=function")
endif()
