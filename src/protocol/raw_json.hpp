// A JSON value carried as the text it arrived in, for a result passed on unread.
//
// A gateway forwards an upstream's tool result to its own client and reads none of its
// content: parsing that content into a document and writing it again took a sixth of the
// gateway's instructions per call (callgrind, issue 31), more the larger the result. So
// the client reads a reply's result.content and result.structuredContent (when they are an
// array or an object) as *raw JSON*: a Json binary value holding the text, already checked
// to be one well-formed JSON value (json_reader.hpp's grammar and UTF-8 rules). The writer
// (json_writer.hpp) writes that text as it is, and json_size() counts it.
//
// Like a big integer id (request_id.hpp), a raw value is a binary value of its own subtype:
// no JSON text parses to one, so a peer cannot forge it. It lives only where it is asked for
// (client::RequestOptions::raw_result); anything else that reads the value expands it first
// (expand_raw_json), because to nlohmann it is an opaque binary value, not the JSON it holds.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/json.hpp"

namespace toolport::protocol {

// The binary subtype that marks raw JSON (kBigIntegerIdSubtype is 0x1d).
inline constexpr std::uint64_t kRawJsonSubtype = 0x1e;

// Raw JSON holding `text`, which must be one well-formed JSON value (not checked here: the
// reader that made it checked it).
Json make_raw_json(std::string_view text);
bool is_raw_json(const Json& value);
// The text of raw JSON; empty for any other value. Points into `value`.
std::string_view raw_json_text(const Json& value);

// Replaces `value`, when it is raw JSON, with the document its text holds (the document
// the reader would have built in its place).
void expand_raw_json(Json& value);
// The same for the members of a tool result (an object) that the reader may have kept raw:
// "content" and "structuredContent".
void expand_raw_result_parts(Json& result);

}  // namespace toolport::protocol
