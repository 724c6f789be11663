// JSON-RPC ids: kept exactly as the peer sent them and echoed back unchanged.
//
// nlohmann-json reads an integer beyond 64 bits as a double, so the id
// 123456789012345678901234567890 would come back as 1.2345678901234568e+29 and the peer
// could not match the reply. The payload parser (json_text.hpp) therefore keeps such an
// integer, where it is a message's "id" (or the "requestId" of notifications/cancelled),
// as a *big integer id*: a Json binary value holding its digits. No JSON text parses to a
// binary value, so a peer cannot forge one; serialize() writes it back as the bare digits.
//
// A big integer id is an ordinary RequestId everywhere else: it compares, copies and
// dumps (as map keys do with id.dump()) consistently, and never equals a string or a
// number id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/json.hpp"

namespace toolport::protocol {

// A JSON-RPC id exactly as the peer sent it (string or number, or a big integer id).
using RequestId = Json;

// The binary subtype that marks a big integer id (any fixed value would do; nothing else
// in Toolport makes binary values).
inline constexpr std::uint64_t kBigIntegerIdSubtype = 0x1d;

// True for JSON-number text without fraction or exponent: an optional '-' and digits.
bool is_integer_lexeme(std::string_view text);

// A big integer id holding `digits` (which must pass is_integer_lexeme; throws
// std::invalid_argument otherwise).
Json make_big_integer_id(std::string_view digits);
bool is_big_integer_id(const Json& value);
// The digits of a big integer id; empty for any other value. Points into `value`.
std::string_view big_integer_id_digits(const Json& value);

// What JSON-RPC accepts as an id: a string, a number, or a big integer id.
bool is_valid_id(const Json& id);

// The id as it is written on the wire: "\"abc\"", "42", or a big integer id's digits.
std::string id_text(const RequestId& id);
// A map key for an id: the same text as id.dump() (so equal ids, and only they, share a
// key, and a key made elsewhere with dump() matches), built without nlohmann's serializer
// for integer ids and plain string ids, which is what nearly every id is: transports and
// request tables key by id several times per request.
std::string id_key(const RequestId& id);
// The id for a JSON document other than a message (a log line): the id itself, or a big
// integer id's digits as a string (as a JSON number it would lose them).
Json loggable_id(const RequestId& id);

}  // namespace toolport::protocol
