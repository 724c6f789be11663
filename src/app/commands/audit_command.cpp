// toolport audit: reads the audit log (one record per tools/call, resources/read and
// prompts/get) and prints the records that match, oldest first: from the audit file and
// its rotated files, from the Redis stream every replica writes to (a redis:// store), or
// from a running server's GET /audit (--url). --follow keeps printing new records as they
// are written (across rotations). `toolport audit summary --url URL` prints a running
// server's orchestration summary (GET /orchestration): per downstream service, its calls,
// failure rate, mean response time and breaker state.
//
//   toolport audit --config toolport.yaml --tool get_weather --outcome error --since 1h
//   toolport audit --file /var/lib/toolport/audit.jsonl --principal bearer:1a2b... --json
//   toolport audit --url http://127.0.0.1:8080/mcp --token "$TOOLPORT_TOKEN" --limit 20
//   toolport audit summary --url http://127.0.0.1:8080/mcp
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "app/config.hpp"
#include "async/task.hpp"
#include "client/blocking_loop.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "stores/audit_log.hpp"
#include "stores/audit_query.hpp"
#include "util/percent.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct AuditFlags {
    std::string config_file;
    std::string file;
    std::string from = "auto";  // auto, file, redis
    std::string url;
    std::string token;
    std::string ca_file;
    std::string principal, tool, outcome, method, session, since, until;
    long long limit = 100;
    bool json = false;
    bool follow = false;
};

// One record as a line for people: time, outcome (code), method and target, who, how long.
std::string text_line(const Json& r) {
    auto field = [&](const char* key) -> std::string {
        auto it = r.find(key);
        if (it == r.end()) return {};
        return it->is_string() ? it->get<std::string>() : it->dump();
    };
    std::string outcome = field("outcome");
    if (auto code = field("code"); !code.empty()) outcome += "(" + code + ")";
    std::string who = field("subject").empty() ? field("principal") : field("subject");
    if (who.empty()) who = "-";
    std::string extra;
    if (auto d = field("downstream_calls"); !d.empty() && d != "0") extra += " downstream=" + d;
    if (auto c = field("cache"); !c.empty() && c != "bypass") extra += " cache=" + c;
    if (auto p = field("profile"); !p.empty()) extra += " profile=" + p;
    return util::sanitize_for_message(fmt::format("{} {:<24} {} {} by {} session={} {}ms{}", field("ts"), outcome,
                                                  field("method"), field("target"), who,
                                                  field("session").empty() ? "-" : field("session").substr(0, 16),
                                                  field("duration_ms"), extra),
                                      4096);
}

void print_record(const AuditFlags& flags, const Json& r) {
    if (flags.json) fmt::print("{}\n", r.dump(-1, ' ', false, Json::error_handler_t::replace));
    else fmt::print("{}\n", text_line(r));
}

// GET <origin><path> with the bearer token: the body of a 200, or an error message.
std::optional<std::string> http_get(const AuditFlags& flags, const std::string& target, std::string& error) {
    OperatorReply reply;
    try {
        reply = call_operator_endpoint(flags.url, flags.token, flags.ca_file, "GET", target);
    } catch (const std::runtime_error& e) {
        error = e.what();
        return std::nullopt;
    }
    if (reply.status != 200) {
        error = fmt::format("{} answered HTTP {}: {}", flags.url, reply.status,
                            util::sanitize_for_message(reply.body, 300));
        return std::nullopt;
    }
    return std::move(reply.body);
}

std::vector<std::pair<std::string, std::string>> filter_fields(const AuditFlags& flags) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"principal", &flags.principal},
                                      {"tool", &flags.tool},
                                      {"outcome", &flags.outcome},
                                      {"method", &flags.method},
                                      {"session", &flags.session},
                                      {"since", &flags.since},
                                      {"until", &flags.until}}) {
        if (!value->empty()) fields.emplace_back(name, *value);
    }
    fields.emplace_back("limit", std::to_string(flags.limit));
    return fields;
}

int from_server(const AuditFlags& flags) {
    std::string query;
    for (const auto& [name, value] : filter_fields(flags)) {
        query += (query.empty() ? "?" : "&") + name + "=" + util::percent_encode(value);
    }
    std::string error;
    auto response = http_get(flags, "/audit" + query, error);
    if (!response) {
        fmt::print(stderr, "toolport audit: {}\n", error);
        return 1;
    }
    auto body = Json::parse(*response, nullptr, false);
    if (!body.is_object() || !body.value("records", Json()).is_array()) {
        fmt::print(stderr, "toolport audit: the server's answer is not an audit query result\n");
        return 1;
    }
    for (const auto& r : body["records"]) print_record(flags, r);
    return 0;
}

int summary(const AuditFlags& flags) {
    if (flags.url.empty()) {
        fmt::print(stderr, "toolport audit summary: --url is required (the summary is a running server's)\n");
        return 2;
    }
    std::string error;
    auto response = http_get(flags, "/orchestration", error);
    if (!response) {
        fmt::print(stderr, "toolport audit summary: {}\n", error);
        return 1;
    }
    auto body = Json::parse(*response, nullptr, false);
    if (flags.json || !body.is_object() || !body.value("server_health", Json()).is_array()) {
        fmt::print("{}\n", *response);
        return 0;
    }
    fmt::print("{:<28} {:>8} {:>8} {:>9} {:>10}  {}\n", "service", "calls", "failed", "failure%", "mean ms", "breaker");
    for (const auto& s : body["server_health"]) {
        fmt::print("{:<28} {:>8} {:>8} {:>9} {:>10}  {}\n",
                   util::sanitize_for_message(s.value("server_id", std::string()), 28), s.value("total_calls", 0LL),
                   s.value("failed_calls", 0LL), s.value("failure_rate", 0LL), s.value("avg_response_ms", 0LL),
                   s.value("breaker", std::string()));
    }
    return 0;
}

volatile std::sig_atomic_t interrupted = 0;

int run(const AuditFlags& flags) {
    stores::AuditFilter filter;
    const auto now = std::chrono::system_clock::now();
    for (const auto& [name, value] : filter_fields(flags)) {
        if (auto problem = stores::set_filter_field(filter, name, value, now); !problem.empty()) {
            fmt::print(stderr, "toolport audit: --{}\n", problem);
            return 2;
        }
    }
    if (!flags.url.empty()) {
        if (flags.follow) {
            fmt::print(stderr, "toolport audit: --follow reads the file or the Redis stream, not --url\n");
            return 2;
        }
        return from_server(flags);
    }
    stores::AuditOptions options;
    if (!flags.file.empty()) {
        options.path = flags.file;
    } else {
        Config config;
        try {
            config = load_config(flags.config_file);
        } catch (const ConfigError& e) {
            fmt::print(stderr, "toolport audit: {}\n", e.what());
            return 2;
        }
        options = stores::resolve_audit_options(config.audit, config.store, config.audit_redis, config.audit_stream);
    }
    const bool redis = flags.from == "redis" ||
                       (flags.from == "auto" && flags.file.empty() && !options.redis_url.empty());
    if (redis && options.redis_url.empty()) {
        fmt::print(stderr, "toolport audit: --from redis needs a redis:// store in the configuration\n");
        return 2;
    }
    if (!redis && options.path.empty()) {
        fmt::print(stderr, "toolport audit: no audit file: give --file, or set audit.path or XDG_STATE_HOME/HOME\n");
        return 2;
    }
    try {
        // --follow starts where the log ends now; the records before are printed first.
        std::unique_ptr<stores::AuditFollower> file_follower;
        std::unique_ptr<stores::StreamFollower> stream_follower;
        if (flags.follow) {
            if (redis)
                stream_follower = std::make_unique<stores::StreamFollower>(options.redis_url, options.stream, filter);
            else file_follower = std::make_unique<stores::AuditFollower>(options.path, filter);
        }
        auto result = redis ? stores::query_audit_stream(options.redis_url, options.stream, filter)
                            : stores::query_audit_files(options.path, filter);
        for (const auto& r : result.records) print_record(flags, r);
        if (result.skipped_lines > 0) {
            fmt::print(stderr, "toolport audit: skipped {} line(s) that are not audit records\n", result.skipped_lines);
        }
        std::fflush(stdout);
        if (!flags.follow) return 0;
        std::signal(SIGINT, [](int) { interrupted = 1; });
        std::signal(SIGTERM, [](int) { interrupted = 1; });
        while (!interrupted) {
            std::vector<Json> fresh;
            if (stream_follower) {
                fresh = stream_follower->poll(std::chrono::milliseconds(500));
            } else {
                fresh = file_follower->poll();
                if (fresh.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
            }
            for (const auto& r : fresh) print_record(flags, r);
            if (!fresh.empty()) std::fflush(stdout);
        }
        return 0;
    } catch (const stores::AuditError& e) {
        fmt::print(stderr, "toolport audit: {}\n", util::sanitize_for_message(e.what()));
        return 1;
    }
}

void add_target_options(CLI::App* command, AuditFlags& flags) {
    command->add_option("--url", flags.url,
                        "A running server (its MCP endpoint, e.g. http://127.0.0.1:8080/mcp); the operator's "
                        "endpoints are asked at its root");
    command->add_option("--token", flags.token, "Bearer token for --url (default: $TOOLPORT_TOKEN)");
    command->add_option("--ca-file", flags.ca_file, "CA certificate for an https server with a private CA");
    command->add_flag("--json", flags.json, "One JSON object per line");
}

}  // namespace

Command add_audit(CLI::App& app) {
    auto flags = std::make_shared<AuditFlags>();
    auto* command =
        app.add_subcommand("audit", "Read the audit log: who called what, when, with what outcome (filters combine)");
    command->add_option("--config", flags->config_file, "The server's configuration file (audit: and store:)");
    command->add_option("--file", flags->file, "The audit file to read (instead of the configuration's)");
    command
        ->add_option("--from", flags->from, "Where to read: auto (the Redis stream with a redis:// store), file, redis")
        ->check(CLI::IsMember({"auto", "file", "redis"}));
    command->add_option("--principal", flags->principal, "Only this caller (its principal or token subject)");
    command->add_option("--tool", flags->tool, "Only this tool, resource URI or prompt");
    command->add_option("--outcome", flags->outcome,
                        "ok, tool_error, protocol_error, cancelled, denied, or error (any but ok)");
    command->add_option("--method", flags->method, "tools/call, resources/read or prompts/get");
    command->add_option("--session", flags->session, "Only this MCP session");
    command->add_option("--since", flags->since, "From this time: ISO-8601 UTC, or an age (90s, 15m, 2h, 7d)");
    command->add_option("--until", flags->until, "Before this time: ISO-8601 UTC, or an age");
    command->add_option("--limit", flags->limit, "The newest this many (0: all)")->check(CLI::Range(0LL, 1000000LL));
    command->add_flag("--follow,-f", flags->follow, "Keep printing new records as they are written (Ctrl-C ends)");
    add_target_options(command, *flags);
    auto* sum = command->add_subcommand("summary",
                                        "A running server's orchestration summary (GET /orchestration): per service, "
                                        "calls, failure rate, mean response time, breaker state");
    auto summary_flags = std::make_shared<AuditFlags>();
    add_target_options(sum, *summary_flags);
    return {command, [flags, summary_flags, sum] { return sum->parsed() ? summary(*summary_flags) : run(*flags); }};
}

}  // namespace toolport::commands
