#include "protocol/raw_json.hpp"

#include <vector>

#include "protocol/json_reader.hpp"

namespace toolport::protocol {

Json make_raw_json(std::string_view text) {
    return Json::binary(std::vector<std::uint8_t>(text.begin(), text.end()), kRawJsonSubtype);
}

bool is_raw_json(const Json& value) {
    if (!value.is_binary()) return false;
    const auto& bytes = value.get_binary();
    return bytes.has_subtype() && bytes.subtype() == kRawJsonSubtype;
}

std::string_view raw_json_text(const Json& value) {
    if (!is_raw_json(value)) return {};
    const auto& bytes = value.get_binary();
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

void expand_raw_json(Json& value) {
    if (!is_raw_json(value)) return;
    // Checked when it was read (within the message's depth limit), so this parse succeeds.
    // Read as a document of its own, which is what it was inside the message too: no
    // JSON-RPC id lies in a result's content. Parsed before the assignment destroys the
    // binary value the text lives in.
    Json parsed = read_json(raw_json_text(value));
    value = std::move(parsed);
}

void expand_raw_result_parts(Json& result) {
    if (!result.is_object()) return;
    for (const char* key : {"content", "structuredContent"}) {
        if (auto it = result.find(key); it != result.end()) expand_raw_json(*it);
    }
}

}  // namespace toolport::protocol
