#include "protocol/json_reader.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "protocol/plain_bytes.hpp"
#include "protocol/raw_json.hpp"
#include "util/utf8.hpp"

namespace toolport::protocol {

namespace {

// Where a value lies, as far as JSON-RPC ids care: a message is the root object or an
// object member of the root array; its "id", and the "requestId" in its "params". And its
// "result", whose content may be kept raw (JsonReadOptions::raw_result_parts).
enum class Role : std::uint8_t { other, root, message, params, message_id, request_id, result };

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Bytes a JSON string holds as they are: ASCII from the space on, but '"' and '\\'.
constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
    return table;
}();

class Reader {
public:
    Reader(std::string_view text, const JsonReadOptions& options)
        : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), options_(options) {}

    Json document() {
        // A UTF-8 byte order mark is not JSON, but nlohmann skips it, and so do we.
        if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF && static_cast<unsigned char>(p_[1]) == 0xBB &&
            static_cast<unsigned char>(p_[2]) == 0xBF) {
            p_ += 3;
        }
        Json root;
        skip_space();
        read_value(root, 0, Role::root);
        skip_space();
        if (p_ != end_) fail("unexpected text after the JSON value");
        if (kept_request_id_) restore_request_ids(root);
        return root;
    }

private:
    [[noreturn]] void fail(std::string_view what) const {
        const auto byte = static_cast<std::size_t>(p_ - begin_) + 1;
        throw Json::parse_error::create(101, byte, fmt::format("syntax error: {}", what), nullptr);
    }

    void skip_space() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }

    void expect_literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
            fail("invalid literal (expected true, false or null)");
        p_ += word.size();
    }

    void read_value(Json& out, std::size_t depth, Role role) {
        if (p_ == end_) fail("unexpected end of input; expected a value");
        switch (*p_) {
            case '{': return read_object(out, depth + 1, role);
            case '[': return read_array(out, depth + 1, role);
            case '"': {
                std::string s;
                read_string(s);
                out = std::move(s);
                return;
            }
            case 't':
                expect_literal("true");
                out = true;
                return;
            case 'f':
                expect_literal("false");
                out = false;
                return;
            case 'n':
                expect_literal("null");
                out = nullptr;
                return;
            default:
                if (*p_ == '-' || is_digit(*p_)) return read_number(out, role);
                fail("unexpected character; expected a value");
        }
    }

    void enter(std::size_t depth) const {
        if (depth > options_.max_depth) {
            throw JsonTooDeep(fmt::format("JSON nesting deeper than {} levels at byte {}", options_.max_depth,
                                          static_cast<std::size_t>(p_ - begin_) + 1));
        }
    }

    void read_object(Json& out, std::size_t depth, Role role) {
        enter(depth);
        ++p_;  // '{'
        out = Json::object();
        auto& members = out.get_ref<Json::object_t&>();
        skip_space();
        if (p_ != end_ && *p_ == '}') {
            ++p_;
            return;
        }
        const bool message = role == Role::root || role == Role::message;
        std::string key;
        for (;;) {
            if (p_ == end_ || *p_ != '"') fail("expected a member name in double quotes");
            key.clear();
            read_string(key);
            skip_space();
            if (p_ == end_ || *p_ != ':') fail("expected ':' after a member name");
            ++p_;
            skip_space();
            // The last of duplicate names wins, as with nlohmann (the member in place is read
            // over). Hinted at the end: a member that sorts after the others (every member
            // of a document written sorted, as nlohmann and Toolport write them) goes there
            // after one comparison; any other is placed as operator[] would place it.
            if (role == Role::result && p_ != end_ && (*p_ == '[' || *p_ == '{') &&
                (key == "content" || key == "structuredContent")) {
                // Checked as any value is, but kept as its text (raw_json.hpp).
                const char* start = p_;
                skip_value(depth);
                auto slot = members.emplace_hint(members.end(), std::move(key), nullptr);
                slot->second = make_raw_json(std::string_view(start, static_cast<std::size_t>(p_ - start)));
            } else {
                Role inner = Role::other;
                if (message) {
                    if (key == "id") inner = Role::message_id;
                    else if (key == "params") inner = Role::params;
                    else if (key == "result" && options_.raw_result_parts) inner = Role::result;
                } else if (role == Role::params && key == "requestId") {
                    inner = Role::request_id;
                }
                auto slot = members.emplace_hint(members.end(), std::move(key), nullptr);
                read_value(slot->second, depth, inner);
            }
            skip_space();
            if (p_ == end_) fail("unexpected end of input inside an object");
            if (*p_ == ',') {
                ++p_;
                skip_space();
                continue;
            }
            if (*p_ == '}') {
                ++p_;
                return;
            }
            fail("expected ',' or '}' after an object member");
        }
    }

    void read_array(Json& out, std::size_t depth, Role role) {
        enter(depth);
        ++p_;  // '['
        out = Json::array();
        auto& items = out.get_ref<Json::array_t&>();
        skip_space();
        if (p_ != end_ && *p_ == ']') {
            ++p_;
            return;
        }
        const Role inner = role == Role::root ? Role::message : Role::other;
        for (;;) {
            items.emplace_back();
            read_value(items.back(), depth, inner);
            skip_space();
            if (p_ == end_) fail("unexpected end of input inside an array");
            if (*p_ == ',') {
                ++p_;
                skip_space();
                continue;
            }
            if (*p_ == ']') {
                ++p_;
                return;
            }
            fail("expected ',' or ']' after an array element");
        }
    }

    std::uint32_t read_hex4() {
        if (end_ - p_ < 4) fail("a \\u escape needs four hexadecimal digits");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i, ++p_) {
            const char c = *p_;
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
            else fail("a \\u escape needs four hexadecimal digits");
        }
        return v;
    }

    void read_escape(std::string& out) {
        ++p_;  // '\'
        if (p_ == end_) fail("unexpected end of input in an escape");
        const char c = *p_++;
        switch (c) {
            case '"': out += '"'; return;
            case '\\': out += '\\'; return;
            case '/': out += '/'; return;
            case 'b': out += '\b'; return;
            case 'f': out += '\f'; return;
            case 'n': out += '\n'; return;
            case 'r': out += '\r'; return;
            case 't': out += '\t'; return;
            case 'u': {
                std::uint32_t cp = read_hex4();
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
                        fail("a high surrogate escape must be followed by a low surrogate escape");
                    p_ += 2;
                    const std::uint32_t low = read_hex4();
                    if (low < 0xDC00 || low > 0xDFFF)
                        fail("a high surrogate escape must be followed by a low surrogate escape");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail("a low surrogate escape without a high surrogate before it");
                }
                util::append_utf8(out, cp);
                return;
            }
            default: --p_; fail("invalid escape in a string");
        }
    }

    // One UTF-8 sequence starting at a byte >= 0x80 (RFC 3629: no overlong forms, no
    // surrogates, nothing beyond U+10FFFF).
    void skip_utf8_sequence() {
        const auto byte = [&](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
        const auto in = [](unsigned char b, unsigned char lo, unsigned char hi) { return b >= lo && b <= hi; };
        const unsigned char lead = byte(0);
        const std::ptrdiff_t left = end_ - p_;
        int length = 0;
        bool ok = false;
        if (in(lead, 0xC2, 0xDF)) {
            length = 2;
            ok = left >= 2 && in(byte(1), 0x80, 0xBF);
        } else if (in(lead, 0xE0, 0xEF)) {
            length = 3;
            const unsigned char lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
            ok = left >= 3 && in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF);
        } else if (in(lead, 0xF0, 0xF4)) {
            length = 4;
            const unsigned char lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
            ok = left >= 4 && in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF);
        }
        if (!ok) fail("invalid UTF-8 in a string");
        p_ += length;
    }

    void read_string(std::string& out) { scan_string<true>(out); }

    // A string checked as read_string checks it, its text not kept.
    void skip_string() {
        scan_string<false>(scratch_);
        scratch_.clear();
    }

    // Reads a string into `out` (kKeep), or only checks it (escapes still go to `out`).
    template <bool kKeep>
    void scan_string(std::string& out) {
        ++p_;  // '"'
        const char* run = p_;
        for (;;) {
            // Runs of plain bytes (most of every key and value): eight at a time up to the
            // byte that ends the run (the last few bytes of the input one by one); that byte
            // (the closing quote, an escape, a control byte, UTF-8) is read below.
            const char* p = p_ + plain_prefix(p_, static_cast<std::size_t>(end_ - p_));
            while (p != end_ && kPlain[static_cast<unsigned char>(*p)]) ++p;
            p_ = p;
            if (p_ == end_) fail("unexpected end of input inside a string");
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                // Most strings have no escape: built at once (appending to the empty string
                // goes through the general replace).
                if constexpr (kKeep) {
                    if (out.empty()) out = std::string(run, p_);
                    else out.append(run, p_);
                }
                ++p_;
                return;
            }
            if (c == '\\') {
                if constexpr (kKeep) out.append(run, p_);
                read_escape(out);
                run = p_;
            } else if (c < 0x20) {
                fail("a control character in a string must be escaped");
            } else {
                skip_utf8_sequence();  // (every other byte below 0x80 is plain)
            }
        }
    }

    // A value checked as read_value checks it (grammar, UTF-8, escapes, numbers, depth),
    // nothing built: for raw JSON, whose text is kept instead.
    void skip_value(std::size_t depth) {
        if (p_ == end_) fail("unexpected end of input; expected a value");
        switch (*p_) {
            case '{': return skip_container(depth + 1, '}');
            case '[': return skip_container(depth + 1, ']');
            case '"': return skip_string();
            case 't': return expect_literal("true");
            case 'f': return expect_literal("false");
            case 'n': return expect_literal("null");
            default:
                if (*p_ == '-' || is_digit(*p_)) {
                    Json number;  // a number holds no allocation
                    return read_number(number, Role::other);
                }
                fail("unexpected character; expected a value");
        }
    }

    void skip_container(std::size_t depth, char close) {
        enter(depth);
        const bool object = close == '}';
        ++p_;  // '{' or '['
        skip_space();
        if (p_ != end_ && *p_ == close) {
            ++p_;
            return;
        }
        for (;;) {
            if (object) {
                if (p_ == end_ || *p_ != '"') fail("expected a member name in double quotes");
                skip_string();
                skip_space();
                if (p_ == end_ || *p_ != ':') fail("expected ':' after a member name");
                ++p_;
                skip_space();
            }
            skip_value(depth);
            skip_space();
            if (p_ == end_)
                fail(object ? "unexpected end of input inside an object" : "unexpected end of input inside an array");
            if (*p_ == ',') {
                ++p_;
                skip_space();
                continue;
            }
            if (*p_ == close) {
                ++p_;
                return;
            }
            fail(object ? "expected ',' or '}' after an object member" : "expected ',' or ']' after an array element");
        }
    }

    void read_number(Json& out, Role role) {
        const char* start = p_;
        if (*p_ == '-') ++p_;
        if (p_ == end_ || !is_digit(*p_)) fail("expected a digit in a number");
        if (*p_ == '0') {
            ++p_;
        } else {
            while (p_ != end_ && is_digit(*p_)) ++p_;
        }
        bool integral = true;
        if (p_ != end_ && *p_ == '.') {
            integral = false;
            ++p_;
            if (p_ == end_ || !is_digit(*p_)) fail("expected a digit after the decimal point");
            while (p_ != end_ && is_digit(*p_)) ++p_;
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            integral = false;
            ++p_;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || !is_digit(*p_)) fail("expected a digit in the exponent");
            while (p_ != end_ && is_digit(*p_)) ++p_;
        }
        if (integral) {
            // As nlohmann: negative integers are signed, the others unsigned; one that
            // overflows 64 bits becomes a double (or, where an id lies, a big integer id).
            if (*start == '-') {
                std::int64_t v = 0;
                if (auto [end, ec] = std::from_chars(start, p_, v); ec == std::errc() && end == p_) {
                    out = v;
                    return;
                }
            } else {
                std::uint64_t v = 0;
                if (auto [end, ec] = std::from_chars(start, p_, v); ec == std::errc() && end == p_) {
                    out = v;
                    return;
                }
            }
            if (options_.keep_big_integer_ids && (role == Role::message_id || role == Role::request_id)) {
                if (role == Role::request_id) kept_request_id_ = true;
                out = make_big_integer_id(std::string_view(start, static_cast<std::size_t>(p_ - start)));
                return;
            }
        }
        double d = 0;
        if (auto [end, ec] = std::from_chars(start, p_, d); ec != std::errc() || end != p_) {
            // Out of range: strtod says what it is (0 for an underflow, as nlohmann reads it;
            // infinity for an overflow, refused below).
            d = std::strtod(std::string(start, p_).c_str(), nullptr);
        }
        if (!std::isfinite(d)) fail("number out of range of a double");
        out = d;
    }

    // A requestId is an id only in notifications/cancelled; anywhere else the big number
    // goes back to the double nlohmann would have made of it.
    static void restore_request_id(Json& message) {
        if (!message.is_object()) return;
        auto params = message.find("params");
        if (params == message.end() || !params->is_object()) return;
        auto request_id = params->find("requestId");
        if (request_id == params->end() || !is_big_integer_id(*request_id)) return;
        auto method = message.find("method");
        if (method != message.end() && *method == "notifications/cancelled") return;
        *request_id = std::strtod(std::string(big_integer_id_digits(*request_id)).c_str(), nullptr);
    }

    static void restore_request_ids(Json& root) {
        if (!root.is_array()) return restore_request_id(root);
        for (auto& member : root) restore_request_id(member);
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    const JsonReadOptions& options_;
    bool kept_request_id_ = false;
    std::string scratch_;  // what skip_string's escapes decode to, thrown away
};

}  // namespace

Json read_json(std::string_view text, const JsonReadOptions& options) { return Reader(text, options).document(); }

}  // namespace toolport::protocol
