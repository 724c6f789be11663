# The operator console's page (web/console/), built at build time and embedded in the core:
#   1. npm ci in web/console, only when package-lock.json differs from the one last installed
#      there (npm_ci.cmake), so a build with the packages in place needs no network;
#   2. esbuild (build.mjs) bundles src/ into ${CMAKE_BINARY_DIR}/console/dist;
#   3. toolport_console_embed (embed_assets.cpp, built first) writes every file of dist,
#      gzip-compressed, into generated/console_assets.cpp: the table console::find_static_asset
#      (src/console/static_assets.cpp) looks paths up in.
# Node and npm come from scripts/install-deps.sh.
find_program(TOOLPORT_NODE node)
find_program(TOOLPORT_NPM npm)
if(NOT TOOLPORT_NODE OR NOT TOOLPORT_NPM)
  message(FATAL_ERROR "node and npm are needed to build the console's page: run scripts/install-deps.sh")
endif()

set(TOOLPORT_CONSOLE_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TOOLPORT_CONSOLE_BUILD_DIR ${CMAKE_BINARY_DIR}/console)
set(TOOLPORT_CONSOLE_DIST_DIR ${TOOLPORT_CONSOLE_BUILD_DIR}/dist)

add_custom_command(
  OUTPUT ${TOOLPORT_CONSOLE_BUILD_DIR}/npm-ci.stamp
  COMMAND ${CMAKE_COMMAND} -DNPM=${TOOLPORT_NPM} -DDIR=${TOOLPORT_CONSOLE_SOURCE_DIR}
          -DSTAMP=${TOOLPORT_CONSOLE_BUILD_DIR}/npm-ci.stamp -P ${TOOLPORT_CONSOLE_SOURCE_DIR}/npm_ci.cmake
  DEPENDS ${TOOLPORT_CONSOLE_SOURCE_DIR}/package-lock.json ${TOOLPORT_CONSOLE_SOURCE_DIR}/package.json
          ${TOOLPORT_CONSOLE_SOURCE_DIR}/npm_ci.cmake
  COMMENT "console: npm ci in web/console (when its package-lock.json changed)"
  VERBATIM)

file(GLOB_RECURSE TOOLPORT_CONSOLE_PAGE_SOURCES CONFIGURE_DEPENDS ${TOOLPORT_CONSOLE_SOURCE_DIR}/src/*)
add_custom_command(
  OUTPUT ${TOOLPORT_CONSOLE_BUILD_DIR}/dist.stamp
  COMMAND ${TOOLPORT_NODE} ${TOOLPORT_CONSOLE_SOURCE_DIR}/build.mjs ${TOOLPORT_CONSOLE_DIST_DIR}
          ${TOOLPORT_CONSOLE_BUILD_DIR}/dist.stamp
  WORKING_DIRECTORY ${TOOLPORT_CONSOLE_SOURCE_DIR}
  DEPENDS ${TOOLPORT_CONSOLE_BUILD_DIR}/npm-ci.stamp ${TOOLPORT_CONSOLE_SOURCE_DIR}/build.mjs
          ${TOOLPORT_CONSOLE_PAGE_SOURCES}
  COMMENT "console: esbuild web/console/src -> console/dist"
  VERBATIM)

# A host tool: no sanitizer or coverage flags matter to it, and it links only zlib and OpenSSL.
add_executable(toolport_console_embed ${TOOLPORT_CONSOLE_SOURCE_DIR}/embed_assets.cpp)
target_link_libraries(toolport_console_embed PRIVATE ZLIB::ZLIB OpenSSL::Crypto)
target_compile_options(toolport_console_embed PRIVATE ${TOOLPORT_WARNINGS})

add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/console_assets.cpp
  COMMAND toolport_console_embed ${TOOLPORT_CONSOLE_DIST_DIR} ${CMAKE_BINARY_DIR}/generated/console_assets.cpp
  DEPENDS toolport_console_embed ${TOOLPORT_CONSOLE_BUILD_DIR}/dist.stamp
  COMMENT "console: embedding console/dist in generated/console_assets.cpp"
  VERBATIM)
target_sources(toolport_core PRIVATE ${CMAKE_BINARY_DIR}/generated/console_assets.cpp)
