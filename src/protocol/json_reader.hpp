// A JSON reader that builds the same nlohmann::json document Json::parse builds, about three
// times faster: every JSON-RPC message Toolport receives, and every reply from an upstream,
// is read with it (profiling showed nlohmann's lexer at a fifth of a gateway call's CPU).
//
// Same document means: the same values of the same types (a non-negative integer is
// unsigned, a negative one signed, one beyond 64 bits a double; the last of duplicate keys
// wins; a leading UTF-8 byte order mark is skipped), and the same refusals (strict RFC 8259
// grammar, invalid UTF-8, unpaired surrogate escapes, unescaped control characters, numbers
// that overflow a double, trailing text). Refusals are thrown as Json::parse_error, with a
// message of our own that names the byte offset and what was expected. One refusal is
// stricter on purpose: nlohmann takes a NUL byte for the end of the input and ignores what
// follows it; here a NUL after the value is trailing text like any other.
//
// Two differences are optional: with `raw_result_parts`, a reply's tool result content is
// kept as checked text (raw_json.hpp); with `keep_big_integer_ids`, an integer beyond 64 bits
// where a JSON-RPC id lies becomes a big integer id (request_id.hpp) instead of a double.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include "protocol/request_id.hpp"

namespace toolport::protocol {

struct JsonReadOptions {
    // Keep a message's "id" (top level, or in a member of a top-level array) and the
    // "params.requestId" of such a message exact when they overflow 64 bits.
    bool keep_big_integer_ids = false;
    // Keep a reply's result.content and result.structuredContent (a message's, when they
    // are an array or an object) as raw JSON (raw_json.hpp): checked as everything else is,
    // but not built into a document, for a result passed on unread.
    bool raw_result_parts = false;
    // Containers nested deeper than this are refused (JsonTooDeep), which also protects the
    // reader's stack.
    std::size_t max_depth = 512;
};

// Containers nested deeper than JsonReadOptions::max_depth (not a syntax error: the text may
// be well-formed JSON that is refused for its depth alone).
struct JsonTooDeep : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws Json::parse_error, or JsonTooDeep.
Json read_json(std::string_view text, const JsonReadOptions& options = {});

}  // namespace toolport::protocol
