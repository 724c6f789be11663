#include "pipeline/result_size.hpp"

#include "protocol/json_writer.hpp"
#include "protocol/raw_json.hpp"

namespace toolport::pipeline {

std::size_t serialized_size(const Json& value) { return protocol::json_size(value); }

namespace {

std::size_t upper_bound(const Json& value) {
    constexpr std::size_t kEscapedByte = 6;  // \u00XX; a replaced invalid byte is 3
    switch (value.type()) {
        case Json::value_t::null: return 4;
        case Json::value_t::boolean: return 5;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned: return 20;
        case Json::value_t::number_float: return 25;  // "-1.7976931348623157e+308"
        case Json::value_t::string: return 2 + kEscapedByte * value.get_ref<const std::string&>().size();
        case Json::value_t::binary:
            if (protocol::is_raw_json(value)) return value.get_binary().size();  // written as it is
            return 64 + 4 * value.get_binary().size();                           // {"bytes":[n,...],"subtype":n}
        case Json::value_t::array: {
            std::size_t size = 2 + value.size();
            for (const auto& item : value) size += upper_bound(item);
            return size;
        }
        case Json::value_t::object: {
            std::size_t size = 2 + value.size();
            for (const auto& [key, item] : value.items()) size += 3 + kEscapedByte * key.size() + upper_bound(item);
            return size;
        }
        case Json::value_t::discarded: return 0;
    }
    return 0;
}

}  // namespace

std::size_t result_size_without_meta(const ToolResult& r) {
    constexpr std::size_t kKeyContent = 10;     // "content":
    constexpr std::size_t kIsErrorTrue = 14;    // "isError":true
    constexpr std::size_t kKeyStructured = 20;  // "structuredContent":
    std::size_t size = 2 + kKeyContent + protocol::json_size(r.content);
    if (!r.structured_content.is_null()) size += 1 + kKeyStructured + protocol::json_size(r.structured_content);
    if (r.is_error) size += 1 + kIsErrorTrue;
    return size;
}

std::size_t result_size(const ToolResult& r) {
    constexpr std::size_t kKeyMeta = 8;  // "_meta":
    std::size_t size = result_size_without_meta(r);
    if (!r.meta.is_null()) size += 1 + kKeyMeta + protocol::json_size(r.meta);
    return size;
}

std::size_t result_size_upper_bound(const ToolResult& r) {
    // The keys as in result_size, each part bounded instead of measured.
    std::size_t size = 2 + 10 + upper_bound(r.content);
    if (!r.structured_content.is_null()) size += 1 + 20 + upper_bound(r.structured_content);
    if (r.is_error) size += 1 + 14;
    if (!r.meta.is_null()) size += 1 + 8 + upper_bound(r.meta);
    return size;
}

}  // namespace toolport::pipeline
