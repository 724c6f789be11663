# Access-token verification for Toolport as an OAuth 2.1 resource server: JWKS parsing,
# JWS verification (RS256, PS256, ES256, EdDSA) and claim checks with OpenSSL, the verified-
# token cache, and the key source that discovers an authorization server's keys with the
# downstream HTTP client; and the OAuth token endpoint client (Toolport as an OAuth client).
# Included by the root CMakeLists.txt; every .cpp of this folder is compiled (no list to keep).
file(GLOB_RECURSE TOOLPORT_AUTH_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
target_sources(toolport_core PRIVATE ${TOOLPORT_AUTH_SOURCES})
