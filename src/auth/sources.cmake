# Access-token verification for Toolport as an OAuth 2.1 resource server: JWKS parsing,
# JWS verification (RS256, PS256, ES256, EdDSA) and claim checks with OpenSSL, the verified-
# token cache, and the key source that discovers an authorization server's keys with the
# downstream HTTP client; and the OAuth token endpoint client (Toolport as an OAuth client).
# Included by the root CMakeLists.txt.
target_sources(toolport_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/jwks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jwt.cpp
  ${CMAKE_CURRENT_LIST_DIR}/token_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/key_source.cpp
  ${CMAKE_CURRENT_LIST_DIR}/authenticator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/resource_metadata.cpp
  ${CMAKE_CURRENT_LIST_DIR}/token_endpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/upstream_credentials.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scope_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/introspection.cpp
)
