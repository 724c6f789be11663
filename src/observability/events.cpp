// Structured logging on spdlog. In json format the sink gets a formatter that writes one
// JSON object per line: ordinary spdlog calls become {"ts","level","msg"}; events come
// through a second logger on the same sink (the formatter tells them apart by its name)
// whose payload is already the event's JSON members.
#include "observability/events.hpp"

#include <algorithm>
#include <vector>
#include <atomic>
#include <cctype>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "async/log_ids.hpp"
#include "observability/iso_time.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::observability {

namespace {

constexpr std::string_view kLoggerName = "toolport";
constexpr std::string_view kEventLoggerName = "toolport.events";
constexpr std::size_t kMaxStringChars = 4096;
// Deeper than any JSON the transports accept (http.max_json_depth); keeps recursion bounded.
constexpr int kMaxDepth = 64;

// The events logger in json format; null in text format or before configure_logging.
std::atomic<std::shared_ptr<spdlog::logger>> g_event_logger;

std::optional<spdlog::level::level_enum> parse_level(std::string_view name) {
    using spdlog::level::level_enum;
    if (name == "trace") return level_enum::trace;
    if (name == "debug") return level_enum::debug;
    if (name == "info") return level_enum::info;
    if (name == "warn" || name == "warning") return level_enum::warn;
    if (name == "error") return level_enum::err;
    if (name == "critical") return level_enum::critical;
    if (name == "off") return level_enum::off;
    return std::nullopt;
}

std::string_view level_name(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace: return "trace";
        case spdlog::level::debug: return "debug";
        case spdlog::level::info: return "info";
        case spdlog::level::warn: return "warn";
        case spdlog::level::err: return "error";
        case spdlog::level::critical: return "critical";
        default: return "off";
    }
}

spdlog::level::level_enum to_spdlog(EventLevel level) {
    switch (level) {
        case EventLevel::trace: return spdlog::level::trace;
        case EventLevel::debug: return spdlog::level::debug;
        case EventLevel::info: return spdlog::level::info;
        case EventLevel::warn: return spdlog::level::warn;
        case EventLevel::error: return spdlog::level::err;
    }
    return spdlog::level::info;
}

// A JSON value on one line; invalid UTF-8 is replaced rather than thrown about, because a
// log line must never fail to be written.
std::string to_json_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

void append_json_string(std::string& out, std::string_view text) { out += to_json_text(Json(std::string(text))); }

// token|secret|password|api_key|apikey|authorization|cookie|key$, case-insensitive.
// Secret-looking keys, judged by their words ("access_token", "apiKey", "X-Api-Key" →
// token / key last; "client_secret", "password", "Authorization", "cookie" anywhere), so
// that counters like "tokens_estimate" or "key_count" stay readable.
bool is_secret_key(std::string_view key) {
    std::vector<std::string> words;
    std::string word;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(key[i]);
        const bool boundary = std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(key[i - 1]));
        if (!std::isalnum(c) || boundary) {
            if (!word.empty()) words.push_back(word);
            word.clear();
        }
        if (std::isalnum(c)) word += static_cast<char>(std::tolower(c));
    }
    if (!word.empty()) words.push_back(word);
    if (words.empty()) return false;
    for (const auto& w : words) {
        if (w == "secret" || w == "password" || w == "passwd" || w == "authorization" || w == "cookie" ||
            w == "apikey" || w == "credential" || w == "credentials" || w == "bearer")
            return true;
    }
    const auto& last = words.back();
    return last == "token" || last == "key" || last == "secret";
}

Json redact(const Json& value, int depth) {
    if (depth > kMaxDepth) return "[too deep]";
    switch (value.type()) {
        case Json::value_t::object: {
            Json out = Json::object();
            for (const auto& [key, item] : value.items()) {
                out[key] = is_secret_key(key) ? Json("[redacted]") : redact(item, depth + 1);
            }
            return out;
        }
        case Json::value_t::array: {
            Json out = Json::array();
            for (const auto& item : value) out.push_back(redact(item, depth + 1));
            return out;
        }
        case Json::value_t::string:
            return util::sanitize_for_message(value.get_ref<const std::string&>(), kMaxStringChars);
        default: return value;
    }
}

// `"event":"name","k":v,...`: the members of an event line after ts and level.
std::string event_members(std::string_view event, const Json& fields) {
    std::string out = "\"event\":";
    append_json_string(out, event);
    auto member = [&out](std::string_view key, const Json& value) {
        out += ',';
        if (key == "ts" || key == "level" || key == "event") {
            append_json_string(out, "field_" + std::string(key));
        } else {
            append_json_string(out, key);
        }
        out += ':';
        out += to_json_text(value);
    };
    if (fields.is_object()) {
        for (const auto& [key, value] : fields.items()) member(key, value);
    } else if (!fields.is_null()) {
        member("fields", fields);
    }
    return out;
}

// Lowercase hex of `bytes`, appended.
template <std::size_t N>
void append_hex(std::string& out, const std::array<std::uint8_t, N>& bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (auto b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 0xF];
    }
}

// The running request's ids (async/log_ids.hpp) as JSON members, after a comma.
void append_trace_members(std::string& line, const LogIds& ids) {
    line += ",\"trace_id\":\"";
    append_hex(line, ids.trace_id);
    line += "\",\"span_id\":\"";
    append_hex(line, ids.span_id);
    line += '"';
}

// Text lines: ` trace_id=... span_id=...` at the end while a request's code logs (the %*
// flag of the pattern below).
class TraceIdsFlag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
        const LogIds& ids = current_log_ids();
        if (!ids.set) return;
        std::string text = " trace_id=";
        append_hex(text, ids.trace_id);
        text += " span_id=";
        append_hex(text, ids.span_id);
        dest.append(text.data(), text.data() + text.size());
    }
    std::unique_ptr<spdlog::custom_flag_formatter> clone() const override { return std::make_unique<TraceIdsFlag>(); }
};

// `[name] ` when the logger has a name (spdlog's own %+ layout leaves an empty one out).
class LoggerNameFlag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        if (msg.logger_name.size() == 0) return;
        dest.push_back('[');
        dest.append(msg.logger_name.data(), msg.logger_name.data() + msg.logger_name.size());
        dest.append(std::string_view("] "));
    }
    std::unique_ptr<spdlog::custom_flag_formatter> clone() const override { return std::make_unique<LoggerNameFlag>(); }
};

// One JSON object per line. Events carry their members in the payload; anything else is
// a plain message and is written, escaped, as "msg". A line written while a request's code
// runs carries its "trace_id" and "span_id" (an event that names them itself keeps its own).
class JsonLineFormatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        std::string line = "{\"ts\":\"";
        line += iso8601_utc(msg.time, true);
        line += "\",\"level\":\"";
        line += level_name(msg.level);
        line += "\",";
        std::string_view payload(msg.payload.data(), msg.payload.size());
        const LogIds& ids = current_log_ids();
        if (std::string_view(msg.logger_name.data(), msg.logger_name.size()) == kEventLoggerName) {
            line += payload;
            if (ids.set && payload.find("\"trace_id\":") == std::string_view::npos) append_trace_members(line, ids);
        } else {
            line += "\"msg\":";
            append_json_string(line, payload);
            if (ids.set) append_trace_members(line, ids);
        }
        line += "}\n";
        dest.append(line.data(), line.data() + line.size());
    }
    std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonLineFormatter>(); }
};

}  // namespace

bool is_log_level(std::string_view name) { return parse_level(name).has_value(); }
bool is_log_format(std::string_view name) { return name == "json" || name == "text"; }

void configure_logging(const LogOptions& options) {
    auto level = parse_level(options.level);
    if (!level) {
        throw std::runtime_error(
            fmt::format("log level \"{}\" is not one of trace, debug, info, warn, error, "
                        "critical, off",
                        util::sanitize_for_message(options.level, 40)));
    }
    if (!is_log_format(options.format)) {
        throw std::runtime_error(
            fmt::format("log format \"{}\" is not json or text", util::sanitize_for_message(options.format, 40)));
    }
    const bool json = options.format == "json";

    spdlog::sink_ptr sink;
    if (options.file.empty()) {
        // Never stdout: it carries the stdio transport. No colours in JSON lines.
        if (json) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        else sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    } else {
        try {
            sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file, /*truncate=*/false);
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("cannot open the log file: {}", util::sanitize_for_message(e.what())));
        }
    }
    if (json) {
        sink->set_formatter(std::make_unique<JsonLineFormatter>());
    } else {
        // spdlog's own layout, then the request's ids when there are.
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<LoggerNameFlag>('N').add_flag<TraceIdsFlag>('*').set_pattern(
            "[%Y-%m-%d %H:%M:%S.%e] %N[%^%l%$] %v%*");
        sink->set_formatter(std::move(formatter));
    }

    auto logger = std::make_shared<spdlog::logger>(std::string(kLoggerName), sink);
    logger->set_level(*level);
    // A file is read while the server runs (tail -f, log shippers): every line goes out at once.
    if (!options.file.empty()) logger->flush_on(spdlog::level::trace);

    std::shared_ptr<spdlog::logger> events;
    if (json) {
        // Its own level stays at trace: log_event filters by the default logger's level, so
        // spdlog::set_level() keeps working for events too.
        events = std::make_shared<spdlog::logger>(std::string(kEventLoggerName), sink);
        events->set_level(spdlog::level::trace);
        if (!options.file.empty()) events->flush_on(spdlog::level::trace);
    }
    spdlog::set_default_logger(logger);
    g_event_logger.store(std::move(events));
}

Json redact_fields(const Json& fields) { return redact(fields, 0); }

void log_event(EventLevel level, std::string_view event, nlohmann::json fields, const TraceContext& trace) {
    if (trace.valid() && fields.is_object()) {
        fields["trace_id"] = to_hex(trace.trace_id);
        fields["span_id"] = to_hex(trace.span_id);
    }
    log_event(level, event, std::move(fields));
}

void log_event(EventLevel level, std::string_view event, nlohmann::json fields) {
    const auto lvl = to_spdlog(level);
    auto* logger = spdlog::default_logger_raw();
    if (!logger || !logger->should_log(lvl)) return;
    Json clean = redact_fields(fields);
    if (auto events = g_event_logger.load()) {
        std::string members = event_members(event, clean);
        events->log(lvl, spdlog::string_view_t(members.data(), members.size()));
        return;
    }
    logger->log(lvl, "{} {}", event, to_json_text(clean));
}

}  // namespace toolport::observability
