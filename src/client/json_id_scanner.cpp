#include "client/json_id_scanner.hpp"

#include <charconv>

namespace toolport::client {

namespace {

// Keys longer than "method" cannot be one we look for; digits beyond this many are no id
// anyone sends (a big integer id has 20 and more, not hundreds).
constexpr std::size_t kMaxKeyBytes = 8;
constexpr std::size_t kMaxNumberBytes = 100;

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// An integer id as nlohmann-json reads it: non-negative ones unsigned, negative ones
// signed, and one that fits neither as a big integer id (what the payload parser keeps).
protocol::RequestId integer_id(std::string_view digits) {
    const char* end = digits.data() + digits.size();
    if (digits.front() == '-') {
        std::int64_t value = 0;
        if (auto r = std::from_chars(digits.data(), end, value); r.ec == std::errc() && r.ptr == end) return value;
    } else {
        std::uint64_t value = 0;
        if (auto r = std::from_chars(digits.data(), end, value); r.ec == std::errc() && r.ptr == end) return value;
    }
    return protocol::make_big_integer_id(digits);
}

}  // namespace

void JsonIdScanner::feed(std::string_view text) {
    for (char c : text) {
        if (finished_) return;
        take(c);
    }
}

void JsonIdScanner::take(char c) {
    if (in_string_) {
        take_in_string(c);
        return;
    }
    if (in_number_) {
        if (is_number_char(c)) {
            append(std::string_view(&c, 1));
            return;
        }
        end_number();
    }
    if (is_whitespace(c)) return;
    if (expect_value_) {
        expect_value_ = false;
        start_value(c);
        if (in_number_) return;
    }
    switch (c) {
        case '"':
            in_string_ = true;
            if (depth_ == 1 && root_is_object_ && expect_key_) {
                role_ = StringRole::key;
                expect_key_ = false;
            }
            break;
        case '{':
        case '[':
            if (depth_ == 0) {
                root_is_object_ = c == '{';
                expect_key_ = root_is_object_;
            }
            ++depth_;
            break;
        case '}':
        case ']':
            if (depth_ == 0 || --depth_ == 0) finished_ = true;  // a closer first: not JSON
            break;
        case ':':
            if (depth_ == 1 && root_is_object_) expect_value_ = true;
            break;
        case ',':
            if (depth_ == 1 && root_is_object_) expect_key_ = true;
            break;
        default:
            // A bare scalar as the whole message has no members at all.
            if (depth_ == 0) finished_ = true;
            break;
    }
}

// The first character of a root member's value.
void JsonIdScanner::start_value(char first) {
    if (key_ == Key::method) has_method_ = true;
    if (key_ != Key::id) return;
    id_.reset();  // whatever it was before, this "id" decides
    text_.clear();
    text_usable_ = true;
    if (first == '"') {
        role_ = StringRole::id_value;  // the switch in take() opens the string
    } else if (first == '-' || (first >= '0' && first <= '9')) {
        in_number_ = true;
        append(std::string_view(&first, 1));
    }
}

void JsonIdScanner::take_in_string(char c) {
    if (hex_digits_left_ > 0) {
        take_hex_digit(c);
    } else if (escaped_) {
        escaped_ = false;
        take_escaped(c);
    } else if (c == '\\') {
        escaped_ = true;
    } else if (c == '"') {
        end_string();
    } else {
        if (high_surrogate_ != 0) text_usable_ = false;  // a lone half: not valid JSON text
        append(std::string_view(&c, 1));
    }
}

void JsonIdScanner::take_escaped(char c) {
    char plain;
    switch (c) {
        case 'u':
            hex_digits_left_ = 4;
            hex_value_ = 0;
            return;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case '"':
        case '\\':
        case '/': plain = c; break;
        default:
            text_usable_ = false;  // not an escape JSON knows
            return;
    }
    take_code_point(static_cast<unsigned char>(plain));
}

void JsonIdScanner::take_hex_digit(char c) {
    const int digit = hex_value(c);
    if (digit < 0) {
        // Not valid JSON; count the escape as over and read on as plain string text.
        hex_digits_left_ = 0;
        text_usable_ = false;
        take_in_string(c);
        return;
    }
    hex_value_ = hex_value_ * 16 + static_cast<std::uint32_t>(digit);
    if (--hex_digits_left_ == 0) take_code_point(hex_value_);
}

// One character from an escape, written out as UTF-8 (surrogate pairs joined).
void JsonIdScanner::take_code_point(std::uint32_t cp) {
    const bool high = cp >= 0xD800 && cp <= 0xDBFF;
    const bool low = cp >= 0xDC00 && cp <= 0xDFFF;
    if (high_surrogate_ != 0) {
        if (!low) {
            text_usable_ = false;
            high_surrogate_ = 0;
            return;
        }
        cp = 0x10000 + ((high_surrogate_ - 0xD800) << 10) + (cp - 0xDC00);
        high_surrogate_ = 0;
    } else if (high) {
        high_surrogate_ = cp;
        return;
    } else if (low) {
        text_usable_ = false;
        return;
    }
    char utf8[4];
    std::size_t n;
    if (cp < 0x80) {
        utf8[0] = static_cast<char>(cp);
        n = 1;
    } else if (cp < 0x800) {
        utf8[0] = static_cast<char>(0xC0 | (cp >> 6));
        utf8[1] = static_cast<char>(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        utf8[0] = static_cast<char>(0xE0 | (cp >> 12));
        utf8[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        utf8[2] = static_cast<char>(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        utf8[0] = static_cast<char>(0xF0 | (cp >> 18));
        utf8[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        utf8[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        utf8[3] = static_cast<char>(0x80 | (cp & 0x3F));
        n = 4;
    }
    append(std::string_view(utf8, n));
}

// Keeps text only for the strings and number we look at, and only up to their bound.
void JsonIdScanner::append(std::string_view bytes) {
    std::size_t limit = 0;
    if (in_number_) limit = kMaxNumberBytes;
    else if (role_ == StringRole::key) limit = kMaxKeyBytes;
    else if (role_ == StringRole::id_value) limit = kMaxIdBytes;
    if (limit == 0) return;
    if (text_.size() + bytes.size() > limit) {
        text_usable_ = false;
        return;
    }
    text_.append(bytes);
}

void JsonIdScanner::end_string() {
    in_string_ = false;
    if (high_surrogate_ != 0) text_usable_ = false;
    high_surrogate_ = 0;
    if (role_ == StringRole::key) {
        key_ = !text_usable_ ? Key::other : text_ == "id" ? Key::id : text_ == "method" ? Key::method : Key::other;
    } else if (role_ == StringRole::id_value && text_usable_) {
        id_ = text_;
    }
    role_ = StringRole::skipped;
    text_.clear();
    text_usable_ = true;
}

void JsonIdScanner::end_number() {
    in_number_ = false;
    if (text_usable_ && protocol::is_integer_lexeme(text_)) id_ = integer_id(text_);
    text_.clear();
    text_usable_ = true;
}

}  // namespace toolport::client
