#include "stores/audit_record.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
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

// Appends `"key":"value"` (with a comma before it unless first). Printable ASCII, the
// usual case, is copied; anything else (escapes, UTF-8, bytes that are not UTF-8) is
// written by nlohmann, which replaces invalid bytes with U+FFFD.
void append_string(std::string& out, std::string_view value) {
    bool plain = true;
    for (unsigned char c : value) {
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            plain = false;
            break;
        }
    }
    if (plain) {
        out += '"';
        out += value;
        out += '"';
    } else {
        out += Json(std::string(value)).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
}

// `out` ends with '{' before the record's first member.
void field(std::string& out, std::string_view key, std::string_view value) {
    if (value.empty()) return;
    out += out.back() == '{' ? "\"" : ",\"";
    out += key;
    out += "\":";
    append_string(out, value);
}

void raw_field(std::string& out, std::string_view key, std::string_view text) {
    out += out.back() == '{' ? "\"" : ",\"";
    out += key;
    out += "\":";
    out += text;
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
    out += '{';
    std::string digest = r.args_sha256;
    if (digest.empty() && !r.canonical_arguments.empty()) digest = util::sha256_hex(r.canonical_arguments);
    if (r.arguments) {
        std::string text;
        protocol::write_json(*r.arguments, text);
        raw_field(out, "arguments", text);
    }
    field(out, "args_sha256", digest);
    field(out, "cache", r.cache);
    field(out, "code", r.code);
    if (r.downstream_calls) raw_field(out, "downstream_calls", std::to_string(*r.downstream_calls));
    // Microseconds are enough, and keep the line short.
    raw_field(out, "duration_ms", fmt::format("{:.3f}", r.duration_ms < 0 ? 0.0 : r.duration_ms));
    field(out, "method", r.method);
    field(out, "outcome", r.outcome);
    field(out, "principal", r.principal);
    field(out, "profile", r.profile);
    field(out, "replica", r.replica);
    field(out, "request_id", r.request_id);
    field(out, "session", r.session);
    field(out, "source", r.source);
    field(out, "subject", r.subject);
    field(out, "target", r.target);
    field(out, "trace_id", r.trace_id);
    field(out, "ts", iso_time(r.time));
    out += '}';
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
        static constexpr std::string_view kOutcomes[] = {"ok", "tool_error", "protocol_error", "cancelled", "error"};
        if (std::find(std::begin(kOutcomes), std::end(kOutcomes), value) == std::end(kOutcomes)) {
            return "outcome must be one of ok, tool_error, protocol_error, cancelled, error";
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
