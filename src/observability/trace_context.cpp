#include "observability/trace_context.hpp"

#include <algorithm>
#include <random>

namespace toolport::observability {
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;  // upper case is not allowed by the format
}

template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
    if (text.size() != 2 * N) return false;
    for (std::size_t i = 0; i < N; ++i) {
        const int high = hex_value(text[2 * i]), low = hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        out[i] = static_cast<std::uint8_t>(high * 16 + low);
    }
    return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& id) {
    return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
void append_hex(std::string& out, const std::array<std::uint8_t, N>& bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (std::uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 15]);
    }
}

std::mt19937_64& generator() {
    thread_local std::mt19937_64 engine([] {
        std::random_device device;
        return (static_cast<std::uint64_t>(device()) << 32) ^ device();
    }());
    return engine;
}

template <std::size_t N>
std::array<std::uint8_t, N> random_id() {
    std::array<std::uint8_t, N> id{};
    do {
        for (std::size_t i = 0; i < N; i += 8) {
            std::uint64_t word = generator()();
            for (std::size_t j = 0; j < 8 && i + j < N; ++j) id[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
        }
    } while (all_zero(id));
    return id;
}

// A list of `key=value` members separated by commas (optional whitespace around them),
// as both tracestate and baggage are: counts the members, checks each has a key and a
// `=`, and that no control character or non-ASCII byte appears.
bool valid_member_list(std::string_view value, std::size_t max_members) {
    if (value.empty()) return false;
    std::size_t members = 0;
    std::size_t start = 0;
    while (start <= value.size()) {
        std::size_t end = value.find(',', start);
        if (end == std::string_view::npos) end = value.size();
        std::string_view member = value.substr(start, end - start);
        while (!member.empty() && (member.front() == ' ' || member.front() == '\t')) member.remove_prefix(1);
        while (!member.empty() && (member.back() == ' ' || member.back() == '\t')) member.remove_suffix(1);
        if (!member.empty()) {  // empty members are allowed and ignored
            const auto eq = member.find('=');
            if (eq == 0 || eq == std::string_view::npos) return false;
            if (++members > max_members) return false;
        }
        start = end + 1;
    }
    return std::all_of(value.begin(), value.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
    });
}

}  // namespace

bool TraceContext::valid() const { return !all_zero(trace_id) && !all_zero(span_id); }

std::optional<TraceContext> parse_traceparent(std::string_view tp) {
    if (tp.size() < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-') return std::nullopt;
    std::array<std::uint8_t, 1> version{}, flags{};
    if (!read_hex(tp.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
    // Version 00 is exactly 55 characters; a later version may append "-..." fields.
    if (version[0] == 0 ? tp.size() != 55 : (tp.size() > 55 && tp[55] != '-')) return std::nullopt;
    TraceContext context;
    if (!read_hex(tp.substr(3, 32), context.trace_id) || !read_hex(tp.substr(36, 16), context.span_id) ||
        !read_hex(tp.substr(53, 2), flags)) {
        return std::nullopt;
    }
    if (!context.valid()) return std::nullopt;
    context.flags = flags[0];
    return context;
}

std::string format_traceparent(const TraceContext& context) {
    std::string out;
    out.reserve(55);
    out += "00-";
    append_hex(out, context.trace_id);
    out += '-';
    append_hex(out, context.span_id);
    out += '-';
    append_hex(out, std::array<std::uint8_t, 1>{context.flags});
    return out;
}

bool valid_tracestate(std::string_view value) { return value.size() <= 512 && valid_member_list(value, 32); }

bool valid_baggage(std::string_view value) { return value.size() <= 8192 && valid_member_list(value, 180); }

std::string to_hex(const TraceId& id) {
    std::string out;
    out.reserve(32);
    append_hex(out, id);
    return out;
}

std::string to_hex(const SpanId& id) {
    std::string out;
    out.reserve(16);
    append_hex(out, id);
    return out;
}

TraceId new_trace_id() { return random_id<16>(); }
SpanId new_span_id() { return random_id<8>(); }

LogIds log_ids_of(const TraceContext& context) {
    LogIds ids;
    if (!context.valid()) return ids;
    ids.trace_id = context.trace_id;
    ids.span_id = context.span_id;
    ids.set = true;
    ids.sampled = context.sampled();
    return ids;
}

}  // namespace toolport::observability
