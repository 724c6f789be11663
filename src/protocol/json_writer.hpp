// Compact JSON text, written without nlohmann's serializer.
//
// Every message Toolport sends is written here, and the pipeline measures every tool
// result with json_size(), so this is on every call's path (twice through a gateway).
// nlohmann's serializer builds itself per call (a locale lookup), writes byte by byte
// through a virtual output adapter, and allocates; measured with callgrind through the
// gateway it took ~10,800 instructions to write one 400-byte reply. This writes runs of
// plain bytes at once and allocates nothing but the output.
//
// The text is byte for byte what Json::dump(-1, ' ', false, Json::error_handler_t::replace)
// writes (checked against it in tests/unit/json_writer_test.cpp over the
// JSON-Schema-Test-Suite's documents and by fuzz_jsonrpc), except that a big integer id
// (request_id.hpp) is written as its bare digits wherever it is, and raw JSON (raw_json.hpp)
// as the text it holds. What is rare and
// intricate (floating-point numbers, strings with invalid UTF-8, other binary values) is
// handed to nlohmann, so its exact output stays nlohmann's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "protocol/request_id.hpp"

namespace toolport::protocol {

// Appends the compact text of `value` to `out`.
void write_json(const Json& value, std::string& out);
// How many bytes write_json would append, without writing them.
std::size_t json_size(const Json& value);
// Appends `text` as a JSON string (quoted, escaped; invalid UTF-8 replaced as nlohmann
// replaces it): for writers that build a line field by field (the audit log's records).
void write_json_string(std::string_view text, std::string& out);

}  // namespace toolport::protocol
