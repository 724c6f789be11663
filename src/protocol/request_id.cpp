#include "protocol/request_id.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace toolport::protocol {

bool is_integer_lexeme(std::string_view text) {
    if (!text.empty() && text.front() == '-') text.remove_prefix(1);
    if (text.empty()) return false;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

Json make_big_integer_id(std::string_view digits) {
    if (!is_integer_lexeme(digits)) {
        throw std::invalid_argument("a big integer id holds an optional '-' and digits only");
    }
    return Json::binary(std::vector<std::uint8_t>(digits.begin(), digits.end()), kBigIntegerIdSubtype);
}

bool is_big_integer_id(const Json& value) {
    if (!value.is_binary()) return false;
    const auto& bytes = value.get_binary();
    return bytes.has_subtype() && bytes.subtype() == kBigIntegerIdSubtype;
}

std::string_view big_integer_id_digits(const Json& value) {
    if (!is_big_integer_id(value)) return {};
    const auto& bytes = value.get_binary();
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

bool is_valid_id(const Json& id) { return id.is_string() || id.is_number() || is_big_integer_id(id); }

std::string id_text(const RequestId& id) {
    if (is_big_integer_id(id)) return std::string(big_integer_id_digits(id));
    return id_key(id);
}

std::string id_key(const RequestId& id) {
    if (id.is_number_integer()) {
        return id.is_number_unsigned() ? std::to_string(id.get<std::uint64_t>())
                                       : std::to_string(id.get<std::int64_t>());
    }
    if (id.is_string()) {
        const auto& text = id.get_ref<const std::string&>();
        // Printable ASCII without '"' or '\\' is written as it is, in quotes.
        if (std::all_of(text.begin(), text.end(),
                        [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; })) {
            std::string key;
            key.reserve(text.size() + 2);
            key += '"';
            key += text;
            key += '"';
            return key;
        }
    }
    return id.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json loggable_id(const RequestId& id) {
    if (is_big_integer_id(id)) return std::string(big_integer_id_digits(id));
    return id;
}

}  // namespace toolport::protocol
