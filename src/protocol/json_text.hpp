// JSON-RPC payload text in and out, with big integer ids (request_id.hpp) kept exact.
#pragma once

#include <string>
#include <string_view>

#include "protocol/request_id.hpp"

namespace toolport::protocol {

// Parses `text` as Json::parse does (strict, no comments; throws Json::parse_error; read
// with json_reader.hpp, which builds the same document faster), except
// that an integer too large for 64 bits becomes a big integer id where it is the "id" of a
// message (the top-level object, or an object member of a top-level array) or the
// "requestId" in the params of such a message whose method is notifications/cancelled.
// Every other number is what nlohmann makes of it. Nesting beyond `max_depth` levels throws
// JsonTooDeep (json_reader.hpp).
Json parse_json_keeping_ids(std::string_view text, std::size_t max_depth = 512);

// Compact JSON text of a message, or of an array of messages (a batch reply). Byte for byte
// what Json::dump() writes, except that a big integer id is written as its digits
// (json_writer.hpp). Invalid UTF-8 in strings is replaced (U+FFFD) rather than thrown on.
std::string serialize(const Json& value);

}  // namespace toolport::protocol
