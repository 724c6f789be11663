// ResponseTooLarge: a response over the size its reader allows, refused on its announced
// Content-Length before reading or cut off while reading. The HTTP client throws it (the
// limit counts the bytes read and the decoded bytes); the MCP client throws it too, by the
// name client::ResponseTooLarge, for a message over a transport's max_message_bytes.
// Sources that catch it answer the call with MCP_RESPONSE_TOO_LARGE.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace toolport::http_client {

struct ResponseTooLarge : std::runtime_error {
    ResponseTooLarge(const std::string& message, std::size_t size, std::size_t limit, bool read_so_far)
        : std::runtime_error(message), size(size), limit(limit), read_so_far(read_so_far) {}
    std::size_t size;  // the announced size, or what was read before stopping
    std::size_t limit;
    bool read_so_far;  // true: stopped while reading (the whole response is larger)
};

}  // namespace toolport::http_client
