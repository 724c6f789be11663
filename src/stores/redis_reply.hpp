// RedisReply: one reply from Redis, copied out of hiredis (so nothing outside
// redis_client.cpp sees hiredis types). Strings are binary-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace toolport::stores {

struct RedisReply {
    enum class Type { string, array, integer, nil, status, error };

    Type type = Type::nil;
    std::string text;  // string, status, error
    std::int64_t integer = 0;
    std::vector<RedisReply> elements;  // array

    bool is_error() const { return type == Type::error; }
    bool is_nil() const { return type == Type::nil; }
    bool is_string() const { return type == Type::string; }
    bool is_integer() const { return type == Type::integer; }
    bool is_array() const { return type == Type::array; }
    // An error reply whose code (first word) is `code`, e.g. "NOSCRIPT".
    bool is_error_code(std::string_view code) const {
        return is_error() && text.compare(0, code.size(), code) == 0 &&
               (text.size() == code.size() || text[code.size()] == ' ');
    }
};

}  // namespace toolport::stores
