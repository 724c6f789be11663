#include "stores/audit_record.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "protocol/json_writer.hpp"
#include "util/digest.hpp"

namespace toolport::stores {

namespace {

// Digits of `text` at [pos, pos+n) as a number, or -1.
int digits(std::string_view text, std::size_t pos, std::size_t n) {
    if (pos + n > text.size()) return -1;
    int value = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

std::optional<std::chrono::system_clock::time_point> parse_iso(std::string_view t) {
    // YYYY-MM-DD[THH:MM:SS[.fff...]][Z]
    const int year = digits(t, 0, 4), month = digits(t, 5, 2), day = digits(t, 8, 2);
    // Past 2200 the clock's nanoseconds overflow.
    if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31 || t[4] != '-' || t[7] != '-') {
        return std::nullopt;
    }
    int hour = 0, minute = 0, second = 0;
    long long millis = 0;
    std::size_t pos = 10;
    if (pos < t.size()) {
        if (t[pos] != 'T' && t[pos] != 't' && t[pos] != ' ') return std::nullopt;
        hour = digits(t, pos + 1, 2);
        minute = digits(t, pos + 4, 2);
        second = digits(t, pos + 7, 2);
        if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60 || t[pos + 3] != ':' ||
            t[pos + 6] != ':') {
            return std::nullopt;
        }
        pos += 9;
        if (pos < t.size() && t[pos] == '.') {
            ++pos;
            int scale = 100;
            std::size_t start = pos;
            while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos]))) {
                millis += (t[pos] - '0') * scale;
                scale /= 10;
                ++pos;
            }
            if (pos == start) return std::nullopt;
        }
        if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) ++pos;
        if (pos != t.size()) return std::nullopt;
    }
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    const std::time_t seconds = timegm(&tm);
    if (seconds == static_cast<std::time_t>(-1)) return std::nullopt;
    return std::chrono::system_clock::time_point(std::chrono::seconds(seconds)) + std::chrono::milliseconds(millis);
}

}  // namespace

std::string iso_time(std::chrono::system_clock::time_point time) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(time.time_since_epoch()).count();
    // The date and time to the second are made once a second per thread: a busy server
    // writes thousands of records in each.
    thread_local long long cached_second = -1;
    thread_local char cached[24];
    const long long second = ms / 1000;
    if (second != cached_second) {
        const std::time_t t = static_cast<std::time_t>(second);
        std::tm tm{};
        gmtime_r(&t, &tm);
        fmt::format_to_n(cached, sizeof cached, "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cached_second = second;
    }
    std::string out(cached, 19);
    const int millis = static_cast<int>(ms % 1000);
    out += '.';
    out += static_cast<char>('0' + millis / 100);
    out += static_cast<char>('0' + millis / 10 % 10);
    out += static_cast<char>('0' + millis % 10);
    out += 'Z';
    return out;
}

std::string arguments_digest(const Json& arguments) {
    std::string text;
    protocol::write_json(arguments, text);
    return util::sha256_hex(text);
}

namespace {

// Whether `text` goes into a JSON string as it is: printable ASCII but '"' and '\\'. Eight
// bytes at a time: nearly every value of a record is such a text.
bool plain_json_text(std::string_view text) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    auto has_byte_below = [](std::uint64_t w, unsigned n) { return (w - ones * n) & ~w & highs; };
    auto has_byte = [&](std::uint64_t w, unsigned char c) { return has_byte_below(w ^ (ones * c), 1); };
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, text.data() + i, sizeof w);
        // DEL (0x7f) plus one sets the high bit, as do bytes at or above 0x80.
        if ((w | (w + ones * 1)) & highs || has_byte_below(w, 0x20) || has_byte(w, '"') || has_byte(w, '\\'))
            return false;
    }
    for (; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
    }
    return true;
}

// Appends a member: `opening` is `,"key":"` (every member starts with a comma; the record's
// first one is taken away at its end). Empty values are left out.
void field(std::string& out, std::string_view opening, std::string_view value) {
    if (value.empty()) return;
    out += opening;
    if (plain_json_text(value)) {
        out += value;
        out += '"';
    } else {
        out.pop_back();  // write_json_string writes its own quotes
        protocol::write_json_string(value, out);
    }
}

// `,"key":` then `text` (a number, or JSON written elsewhere).
void raw_field(std::string& out, std::string_view opening, std::string_view text) {
    out += opening;
    out += text;
}

// Milliseconds to the microsecond ("12.345"), without a formatting library's set-up per record.
void append_milliseconds(std::string& out, double ms) {
    const auto micros = static_cast<std::uint64_t>(std::llround(std::max(ms, 0.0) * 1000.0));
    char digits[24];
    auto [end, error] = std::to_chars(digits, digits + sizeof digits, micros / 1000);
    out.append(digits, end);
    const auto fraction = static_cast<unsigned>(micros % 1000);
    const char tail[4] = {'.', static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
    out.append(tail, 4);
}

// SHA-256 (hex) of canonical arguments, the last one kept per thread: the calls of a
// tool often carry the same arguments (a tool without any: "{}" every time), and hashing
// them was half of what encoding a record cost.
std::string_view canonical_digest(std::string_view canonical) {
    thread_local std::string last_text, last_digest;
    if (last_digest.empty() || canonical != last_text) {
        last_digest = util::sha256_hex(canonical);
        last_text.assign(canonical);
    }
    return last_digest;
}

}  // namespace

// Written by hand, keys in order: nlohmann building an object of fifteen members and
// dumping it was most of the writer thread's time per record.
std::string encode_record(const AuditRecord& r) {
    std::string out;
    append_record(r, out);
    return out;
}

void append_record(const AuditRecord& r, std::string& out) {
    // One growth for the whole line: its members' names and values, and room for escapes.
    out.reserve(out.size() + 256 + r.cache.size() + r.code.size() + r.method.size() + r.outcome.size() +
                r.principal.size() + r.profile.size() + r.replica.size() + r.request_id.size() + r.session.size() +
                r.source.size() + r.subject.size() + r.target.size() + r.trace_id.size());
    const std::size_t start = out.size();
    out += '{';
    std::string_view digest = r.args_sha256;
    if (digest.empty() && !r.canonical_arguments.empty()) digest = canonical_digest(r.canonical_arguments);
    if (r.arguments) {
        std::string text;
        protocol::write_json(*r.arguments, text);
        raw_field(out, R"(,"arguments":)", text);
    }
    field(out, R"(,"args_sha256":")", digest);
    field(out, R"(,"cache":")", r.cache);
    field(out, R"(,"code":")", r.code);
    if (r.downstream_calls) raw_field(out, R"(,"downstream_calls":)", std::to_string(*r.downstream_calls));
    // Microseconds are enough, and keep the line short.
    out += R"(,"duration_ms":)";
    append_milliseconds(out, r.duration_ms);
    if (!r.guards.empty()) {
        out += R"(,"guards":[)";
        for (std::size_t i = 0; i < r.guards.size(); ++i) {
            const GuardMark& g = r.guards[i];
            if (i > 0) out += ',';
            out += '{';
            if (g.cached) out += R"("cached":true,)";
            // (Never empty: the members after it start with their comma.)
            field(out, R"("decision":")", g.decision.empty() ? std::string_view("unknown") : g.decision);
            field(out, R"(,"guard":")", g.guard);
            field(out, R"(,"phase":")", g.phase);
            out += '}';
        }
        out += ']';
    }
    field(out, R"(,"method":")", r.method);
    field(out, R"(,"outcome":")", r.outcome);
    field(out, R"(,"principal":")", r.principal);
    field(out, R"(,"profile":")", r.profile);
    field(out, R"(,"replica":")", r.replica);
    field(out, R"(,"request_id":")", r.request_id);
    field(out, R"(,"session":")", r.session);
    field(out, R"(,"source":")", r.source);
    field(out, R"(,"subject":")", r.subject);
    field(out, R"(,"target":")", r.target);
    field(out, R"(,"trace_id":")", r.trace_id);
    field(out, R"(,"ts":")", iso_time(r.time));
    out += '}';
    out.erase(start + 1, 1);  // the first member's comma
}

std::optional<Json> parse_record(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() != '{') return std::nullopt;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    auto ts = j.find("ts");
    if (ts == j.end() || !ts->is_string()) return std::nullopt;
    return j;
}

std::optional<std::chrono::system_clock::time_point> parse_time(std::string_view text,
                                                                std::chrono::system_clock::time_point now) {
    if (text.empty()) return std::nullopt;
    if (text.size() >= 2 && std::isdigit(static_cast<unsigned char>(text.front())) &&
        std::string_view("smhd").find(text.back()) != std::string_view::npos &&
        text.find('-') == std::string_view::npos) {
        long long n = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
        if (ec != std::errc() || end != text.data() + text.size() - 1 || n < 0 || n > 100LL * 365 * 86400) {
            return std::nullopt;
        }
        const long long unit = text.back() == 's' ? 1 : text.back() == 'm' ? 60 : text.back() == 'h' ? 3600 : 86400;
        if (n > 100LL * 365 * 86400 / unit) return std::nullopt;
        return now - std::chrono::seconds(n * unit);
    }
    return parse_iso(text);
}

std::string set_filter_field(AuditFilter& filter, std::string_view name, std::string_view value,
                             std::chrono::system_clock::time_point now) {
    if (name == "principal") filter.principal = value;
    else if (name == "tool") filter.tool = value;
    else if (name == "source") filter.source = value;
    else if (name == "method") filter.method = value;
    else if (name == "session") filter.session = value;
    else if (name == "outcome") {
        static constexpr std::string_view kOutcomes[] = {"ok",        "tool_error", "protocol_error",
                                                         "cancelled", "denied",     "error"};
        if (std::find(std::begin(kOutcomes), std::end(kOutcomes), value) == std::end(kOutcomes)) {
            return "outcome must be one of ok, tool_error, protocol_error, cancelled, denied, error";
        }
        filter.outcome = value;
    } else if (name == "since" || name == "until") {
        auto t = parse_time(value, now);
        if (!t) {
            return fmt::format("{} must be an ISO-8601 UTC time (2026-11-28T06:40:17Z) or an age (90s, 15m, 2h, 7d)",
                               name);
        }
        (name == "since" ? filter.since : filter.until) = *t;
    } else if (name == "limit") {
        std::size_t n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || end != value.data() + value.size() || n > 1000000) {
            return "limit must be a number from 0 (all) to 1000000";
        }
        filter.limit = n;
    } else {
        return fmt::format(
            "unknown filter \"{}\" (principal, tool, source, outcome, method, session, since, until, limit)",
            name.substr(0, 64));
    }
    return {};
}

std::optional<std::chrono::system_clock::time_point> record_time(const Json& record) {
    auto ts = record.find("ts");
    if (ts == record.end() || !ts->is_string()) return std::nullopt;
    return parse_iso(ts->get_ref<const std::string&>());
}

namespace {
bool field_is(const Json& record, const char* key, const std::string& wanted) {
    auto it = record.find(key);
    return it != record.end() && it->is_string() && it->get_ref<const std::string&>() == wanted;
}
}  // namespace

bool AuditFilter::matches(const Json& record) const {
    if (!principal.empty() && !field_is(record, "principal", principal) && !field_is(record, "subject", principal)) {
        return false;
    }
    if (!tool.empty() && !field_is(record, "target", tool)) return false;
    if (!source.empty() && !field_is(record, "source", source)) return false;
    if (!method.empty() && !field_is(record, "method", method)) return false;
    if (!session.empty() && !field_is(record, "session", session)) return false;
    if (!outcome.empty()) {
        if (outcome == "error") {
            if (field_is(record, "outcome", "ok")) return false;
        } else if (!field_is(record, "outcome", outcome)) {
            return false;
        }
    }
    if (since || until) {
        auto t = record_time(record);
        if (!t) return false;
        if (since && *t < *since) return false;
        if (until && *t >= *until) return false;
    }
    return true;
}

}  // namespace toolport::stores
