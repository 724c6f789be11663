// What the two HTTP client transports (Streamable HTTP, http_client_transport.cpp, and
// the legacy HTTP+SSE of 2024-11-05, legacy_sse_client_transport.cpp) do alike: check
// the options a caller gave before anything is sent, add the caller's credentials and
// extra headers to each request, and turn an error answer's body into one readable line.
#pragma once

#include <string>
#include <string_view>

#include "client/client_transport.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"

namespace toolport::client {

// Parses options.url and checks the extra headers, the bearer token and the TLS options.
// Throws std::invalid_argument naming what is wrong.
http_client::Url check_http_client_options(const HttpClientOptions& options);

// Appends "Authorization: Bearer ..." (when there is a token) and the extra headers.
void add_caller_headers(const HttpClientOptions& options, http_client::Headers& headers);

// The explanation an error answer's body offers: a JSON-RPC error's message, or a short
// printable body as it is. Empty when the body explains nothing (other JSON, binary, long
// pages). Not yet sanitized for messages.
std::string error_body_detail(std::string_view body);

}  // namespace toolport::client
