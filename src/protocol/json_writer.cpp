#include "protocol/json_writer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "protocol/plain_bytes.hpp"
#include "protocol/raw_json.hpp"

namespace toolport::protocol {

namespace {

std::string nlohmann_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Length of the well-formed UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 when
// it is not one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    const auto continuation = [&](std::size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
        return k < s.size() && byte(k) >= lo && byte(k) <= hi;
    };
    if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(i + 1) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
        return continuation(i + 1, lo, hi) && continuation(i + 2) ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
        return continuation(i + 1, lo, hi) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
    }
    return 0;
}

// What a byte below 0x80 becomes inside a JSON string: 0 for itself, else the escape's
// second character ('u' for \u00XX).
constexpr std::array<char, 128> kEscapes = [] {
    std::array<char, 128> table{};
    for (int c = 0; c < 0x20; ++c) table[c] = 'u';
    table['\b'] = 'b';
    table['\t'] = 't';
    table['\n'] = 'n';
    table['\f'] = 'f';
    table['\r'] = 'r';
    table['"'] = '"';
    table['\\'] = '\\';
    return table;
}();

// Writes into a string. A reply is written in a few hundred small pieces (a quote, a key, a
// colon...): the string is grown ahead and written through a pointer, and cut to what was
// written at the end, instead of an out-of-line append checking the capacity per piece.
class TextSink {
public:
    explicit TextSink(std::string& out) : out_(out), used_(out.size()) {
        out_.resize(std::max(out_.capacity(), used_ + 64));
    }
    ~TextSink() { out_.resize(used_); }
    TextSink(const TextSink&) = delete;
    TextSink& operator=(const TextSink&) = delete;

    void put(char c) { *room(1) = c; }
    void put(std::string_view s) {
        if (!s.empty()) std::memcpy(room(s.size()), s.data(), s.size());
    }
    std::size_t mark() const { return used_; }
    void rewind(std::size_t to) { used_ = to; }

private:
    char* room(std::size_t n) {
        if (used_ + n > out_.size()) out_.resize(std::max(out_.size() * 2, used_ + n));
        char* at = out_.data() + used_;
        used_ += n;
        return at;
    }
    std::string& out_;
    std::size_t used_;
};

// Counts what would be written.
struct CountSink {
    std::size_t count = 0;
    void put(char) { ++count; }
    void put(std::string_view s) { count += s.size(); }
    std::size_t mark() const { return count; }
    void rewind(std::size_t to) { count = to; }
};

template <typename Sink>
void write_string(std::string_view s, Sink& sink) {
    const std::size_t start = sink.mark();
    sink.put('"');
    std::size_t run = 0;  // start of the bytes not yet written
    for (std::size_t i = 0; i < s.size();) {
        // Plain bytes are written with the run they are part of: passed over eight at a
        // time up to what ends the run (the last few bytes of the string one by one).
        i += plain_prefix(s.data() + i, s.size() - i);
        while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80 && kEscapes[static_cast<unsigned char>(s[i])] == 0)
            ++i;
        if (i == s.size()) break;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            const char escape = kEscapes[c];
            sink.put(s.substr(run, i - run));
            if (escape == 'u') {
                constexpr char kHex[] = "0123456789abcdef";
                const char text[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
                sink.put(std::string_view(text, 6));
            } else {
                const char text[2] = {'\\', escape};
                sink.put(std::string_view(text, 2));
            }
            run = ++i;
            continue;
        }
        const std::size_t length = utf8_sequence(s, i);
        if (length == 0) {
            // Invalid UTF-8: nlohmann's replacement rules, exactly.
            sink.rewind(start);
            sink.put(nlohmann_text(Json(std::string(s))));
            return;
        }
        i += length;
    }
    sink.put(s.substr(run));
    sink.put('"');
}

template <typename Sink>
void write_value(const Json& value, Sink& sink) {
    switch (value.type()) {
        case Json::value_t::null: sink.put("null"); return;
        case Json::value_t::boolean: sink.put(value.get<bool>() ? std::string_view("true") : "false"); return;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned: {
            char digits[24];
            auto end = value.is_number_unsigned()
                           ? std::to_chars(digits, digits + sizeof digits, value.get<std::uint64_t>()).ptr
                           : std::to_chars(digits, digits + sizeof digits, value.get<std::int64_t>()).ptr;
            sink.put(std::string_view(digits, static_cast<std::size_t>(end - digits)));
            return;
        }
        case Json::value_t::string: write_string(value.get_ref<const std::string&>(), sink); return;
        case Json::value_t::array: {
            sink.put('[');
            bool first = true;
            for (const auto& item : value.get_ref<const Json::array_t&>()) {
                if (!first) sink.put(',');
                first = false;
                write_value(item, sink);
            }
            sink.put(']');
            return;
        }
        case Json::value_t::object: {
            sink.put('{');
            bool first = true;
            // nlohmann keeps members sorted by key and writes them in that order.
            for (const auto& [key, item] : value.get_ref<const Json::object_t&>()) {
                if (!first) sink.put(',');
                first = false;
                write_string(key, sink);
                sink.put(':');
                write_value(item, sink);
            }
            sink.put('}');
            return;
        }
        case Json::value_t::binary:
            if (is_big_integer_id(value)) {
                sink.put(big_integer_id_digits(value));
                return;
            }
            if (is_raw_json(value)) {  // checked JSON text, passed on as it came (raw_json.hpp)
                sink.put(raw_json_text(value));
                return;
            }
            break;
        case Json::value_t::number_float: {
            // nlohmann's own number text (its dump_float: "null" when not finite, else its
            // Grisu2 digits), without building a serializer and a string per number (every
            // result's _meta.duration_ms).
            const double x = value.get<double>();
            if (!std::isfinite(x)) {
                sink.put("null");
                return;
            }
            char digits[64];
            const char* end = nlohmann::detail::to_chars(digits, digits + sizeof digits, x);
            sink.put(std::string_view(digits, static_cast<std::size_t>(end - digits)));
            return;
        }
        case Json::value_t::discarded: break;
    }
    sink.put(nlohmann_text(value));
}

}  // namespace

void write_json(const Json& value, std::string& out) {
    TextSink sink(out);
    write_value(value, sink);
}

void write_json_string(std::string_view text, std::string& out) {
    // Nothing to escape (the usual case): appended as it is, without a sink's set-up.
    std::size_t plain = plain_prefix(text.data(), text.size());
    while (plain < text.size()) {
        const auto c = static_cast<unsigned char>(text[plain]);
        if (c >= 0x80 || kEscapes[c] != 0) break;
        ++plain;
    }
    if (plain == text.size()) {
        out.reserve(out.size() + text.size() + 2);
        out += '"';
        out += text;
        out += '"';
        return;
    }
    TextSink sink(out);
    write_string(text, sink);
}

std::size_t json_size(const Json& value) {
    CountSink sink;
    write_value(value, sink);
    return sink.count;
}

}  // namespace toolport::protocol
