#include "util/json_pointer.hpp"

namespace toolport::util {

std::optional<std::vector<std::string>> parse_json_pointer(std::string_view pointer) {
    std::vector<std::string> tokens;
    if (pointer.empty()) return tokens;
    if (pointer[0] != '/') return std::nullopt;
    pointer.remove_prefix(1);
    while (true) {
        std::size_t slash = pointer.find('/');
        std::string_view raw = pointer.substr(0, slash);
        std::string token;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] != '~') {
                token += raw[i];
            } else if (i + 1 < raw.size() && raw[i + 1] == '0') {
                token += '~';
                ++i;
            } else if (i + 1 < raw.size() && raw[i + 1] == '1') {
                token += '/';
                ++i;
            } else {
                return std::nullopt;
            }
        }
        tokens.push_back(std::move(token));
        if (slash == std::string_view::npos) break;
        pointer.remove_prefix(slash + 1);
    }
    return tokens;
}

void append_pointer_token(std::string& out, std::string_view token) {
    for (char c : token) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
}

}  // namespace toolport::util
