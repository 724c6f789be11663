#include "client/wire_payload.hpp"

#include <fmt/format.h>

#include "protocol/json_reader.hpp"
#include "protocol/jsonrpc.hpp"

namespace toolport::client {

namespace {
constexpr std::size_t kMaxDepth = 128;
}

WirePayload decode_wire_payload(std::string_view text) {
    WirePayload out;
    nlohmann::json value;
    try {
        protocol::JsonReadOptions options;
        options.keep_big_integer_ids = true;  // a server's big integer ids stay exact
        // A tool result's content stays text until somebody reads it (McpClient expands it
        // for every request but those that pass it on: RequestOptions::raw_result).
        options.raw_result_parts = true;
        options.max_depth = kMaxDepth;
        value = protocol::read_json(text, options);
    } catch (const protocol::JsonTooDeep&) {
        out.error = fmt::format("JSON nesting depth {} exceeds the limit of {}", protocol::max_nesting_depth(text),
                                kMaxDepth);
        return out;
    } catch (const nlohmann::json::exception& e) {
        std::string detail = e.what();
        if (auto pos = detail.find("] "); pos != std::string::npos) detail = detail.substr(pos + 2);
        out.error = "not JSON: " + detail;
        return out;
    }
    if (value.is_array()) {
        for (auto& member : value) out.messages.push_back(std::move(member));
    } else {
        out.messages.push_back(std::move(value));
    }
    return out;
}

}  // namespace toolport::client
