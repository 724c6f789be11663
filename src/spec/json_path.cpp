#include "spec/json_path.hpp"

#include <fmt/format.h>

namespace toolport::spec::detail {

namespace {

[[noreturn]] void bad_path(const std::string& text, std::size_t at, const std::string& what) {
    throw std::invalid_argument(fmt::format("invalid JSON path \"{}\" at character {}: {}", text, at + 1, what));
}

bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

}  // namespace

JsonPath::JsonPath(const std::string& text) : text_(text) {
    if (text.empty()) throw std::invalid_argument("invalid JSON path: it is empty (use \"$\" for the whole document)");
    // Like mcp-server-kit, "a.b" means "$.a.b".
    std::string path = text[0] == '$' ? text : (text[0] == '[' ? "$" + text : "$." + text);
    std::size_t offset = path.size() - text.size();  // to report positions in the text as written
    std::size_t i = 1;
    auto fail = [&](std::size_t at, const std::string& what) { bad_path(text, at >= offset ? at - offset : 0, what); };
    while (i < path.size()) {
        char c = path[i];
        if (c == '.') {
            ++i;
            if (i < path.size() && path[i] == '.') fail(i, "recursive descent (..) is not supported");
            std::size_t start = i;
            while (i < path.size() && path[i] != '.' && path[i] != '[') {
                if (path[i] == ']') fail(i, "unexpected ']'");
                ++i;
            }
            std::string name = path.substr(start, i - start);
            if (name.empty()) fail(start, "a member name is missing after '.'");
            if (name == "*") {
                segments_.push_back({Segment::Kind::wildcard, {}, 0, true});
            } else {
                segments_.push_back({Segment::Kind::member, name, 0, true});
            }
        } else if (c == '[') {
            ++i;
            if (i >= path.size()) fail(i, "unclosed '['");
            if (path[i] == '*') {
                ++i;
                if (i >= path.size() || path[i] != ']') fail(i, "expected ']' after '*'");
                ++i;
                segments_.push_back({Segment::Kind::wildcard, {}, 0, false});
            } else if (path[i] == '\'' || path[i] == '"') {
                char quote = path[i++];
                std::string name;
                while (i < path.size() && path[i] != quote) {
                    if (path[i] == '\\' && i + 1 < path.size()) ++i;
                    name += path[i++];
                }
                if (i >= path.size()) fail(i, "unclosed quoted name");
                ++i;
                if (i >= path.size() || path[i] != ']') fail(i, "expected ']' after the quoted name");
                ++i;
                segments_.push_back({Segment::Kind::member, name, 0, false});
            } else {
                std::size_t start = i;
                if (path[i] == '-') ++i;
                while (i < path.size() && path[i] >= '0' && path[i] <= '9') ++i;
                std::string digits = path.substr(start, i - start);
                if (i >= path.size() || path[i] != ']' || !all_digits(digits[0] == '-' ? digits.substr(1) : digits)) {
                    fail(start, "expected an index, '*' or a quoted name inside [...]");
                }
                if (digits.size() > 18) fail(start, "index too large");
                ++i;
                segments_.push_back({Segment::Kind::index, digits, std::stoll(digits), false});
            }
        } else {
            fail(i, fmt::format("unexpected '{}' (expected '.' or '[')", c));
        }
    }
}

std::optional<Json> JsonPath::evaluate(const Json& document) const {
    // After a wildcard several values are being followed at once.
    std::vector<const Json*> current{&document};
    bool multiple = false;
    for (const Segment& segment : segments_) {
        std::vector<const Json*> next;
        for (const Json* value : current) {
            switch (segment.kind) {
                case Segment::Kind::member:
                    if (value->is_object()) {
                        if (auto it = value->find(segment.name); it != value->end()) next.push_back(&*it);
                    } else if (value->is_array() && segment.from_dot && all_digits(segment.name) &&
                               segment.name.size() < 18) {
                        auto index = std::stoull(segment.name);
                        if (index < value->size()) next.push_back(&(*value)[index]);
                    }
                    break;
                case Segment::Kind::index:
                    if (value->is_array()) {
                        long long size = static_cast<long long>(value->size());
                        long long index = segment.index < 0 ? size + segment.index : segment.index;
                        if (index >= 0 && index < size) next.push_back(&(*value)[static_cast<std::size_t>(index)]);
                    } else if (value->is_object()) {
                        if (auto it = value->find(segment.name); it != value->end()) next.push_back(&*it);
                    }
                    break;
                case Segment::Kind::wildcard:
                    if (value->is_array() || value->is_object()) {
                        for (const auto& item : *value) next.push_back(&item);
                    } else if (!multiple) {
                        return std::nullopt;  // nothing to spread
                    }
                    break;
            }
        }
        if (segment.kind == Segment::Kind::wildcard) multiple = true;
        if (!multiple && next.empty()) return std::nullopt;
        current = std::move(next);
    }
    if (!multiple) return *current.front();
    Json matches = Json::array();
    for (const Json* value : current) matches.push_back(*value);
    return matches;
}

}  // namespace toolport::spec::detail
