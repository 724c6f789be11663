// toolport pins: the operator's side of tool-definition pinning (docs/pinning.md).
//
//   toolport pins list [SOURCE] [--pending] [--json]
//   toolport pins diff SOURCE [NAME]
//   toolport pins approve SOURCE [NAME] [--digest HEX]
//   toolport pins reset SOURCE [NAME]
// each on the pins file of the configuration (--config; pinning.path, else the state
// directory's pins.json; --file names one), or on a running server with --url (its
// /admin/pins API, bearer token from --token or TOOLPORT_TOKEN), which is the way with a
// redis:// store: a configuration whose pins are in Redis is refused without --url. A server polls its file and picks an approval up within pinning.poll_ms;
// through --url at once. Every approval and reset is written to the audit log (the
// configuration's, when it is on; the server's with --url).
//
// `approve --digest` approves only the definition with that digest (from `list` or
// `diff`): an upstream that changes its tool again between the review and the approval
// gets nothing approved.
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "app/config.hpp"
#include "async/task.hpp"
#include "client/blocking_loop.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "providers/pin_definition.hpp"
#include "stores/audit_log.hpp"
#include "stores/local_pin_store.hpp"
#include "util/canonical_json.hpp"
#include "util/line_diff.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct PinsFlags {
    std::string config;
    std::string file;
    std::string url;
    std::string token;
    std::string ca_file;
    std::string source;
    std::string name;
    std::string digest;
    bool pending_only = false;
    bool json = false;
};

constexpr std::string_view kSeen = toolport::pins::kSeenKind;

struct PinsFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string who() {
    const char* user = std::getenv("USER");
    return fmt::format("cli:{}", user && *user ? user : std::to_string(::getuid()));
}

// A record named `name` (or keyed: "prompt:review" when a tool has that name too); a
// "seen:<kind>" marker only by its key.
bool matches(const stores::PinRecord& r, const std::string& name) {
    return name.empty() || (r.name == name && r.kind != kSeen) || r.key() == name;
}

// ---- a running server -------------------------------------------------------------------------

std::pair<int, std::string> http_call(const PinsFlags& flags, const std::string& method, const std::string& path,
                                      const std::string& body) {
    try {
        auto reply = call_operator_endpoint(flags.url, flags.token, flags.ca_file, method, path, body);
        return {reply.status, std::move(reply.body)};
    } catch (const std::runtime_error& e) {
        throw PinsFailure(e.what());
    }
}

Json server_json(const PinsFlags& flags, const std::string& method, const std::string& path, const Json& body) {
    auto [status, text] = http_call(flags, method, path, body.is_null() ? std::string() : body.dump());
    Json reply = Json::parse(text, nullptr, false);
    if (status != 200) {
        std::string why = reply.is_object() && reply.contains("error") && reply["error"].is_string()
                              ? reply["error"].get<std::string>()
                              : util::sanitize_for_message(text, 300);
        if (reply.is_object() && reply.contains("error") && reply["error"].is_object())
            why = reply["error"].value("message", why);
        throw PinsFailure(fmt::format("{} answered HTTP {}: {}", flags.url, status, why));
    }
    if (reply.is_discarded()) throw PinsFailure("the server's answer is not JSON");
    return reply;
}

// ---- the pins, from the file or the server ---------------------------------------------------

struct View {
    stores::PinSnapshot snapshot;
    std::map<std::string, std::string> policies;  // by source, when known
};

std::unique_ptr<stores::LocalPinStore> local_store(const PinsFlags& flags, Config* config_out) {
    std::string path = flags.file;
    if (path.empty()) {
        Config config = load_config(flags.config);
        // A file nobody reads would be approved in vain: the servers read Redis.
        if (config.pins_store == "redis" || (config.pins_store == "auto" && config.store.url.rfind("redis://", 0) == 0)) {
            throw PinsFailure(
                "this configuration keeps its pins in the Redis store (pinning.store); give --url of a running "
                "server, which reads and writes them there (every replica sees the change), or --file for a pins "
                "file");
        }
        path = config.pins_path.empty() ? stores::default_pins_path() : config.pins_path;
        if (config_out) *config_out = std::move(config);
    } else if (config_out && !flags.config.empty()) {
        *config_out = load_config(flags.config);
    }
    if (path.empty()) throw PinsFailure("no pins file: give --file, or set pinning.path or XDG_STATE_HOME/HOME");
    return std::make_unique<stores::LocalPinStore>(path);
}

View read_view(const PinsFlags& flags) {
    View view;
    if (!flags.url.empty()) {
        Json described = server_json(flags, "GET", "/admin/pins", nullptr);
        for (const auto& s : described.value("sources", Json::array())) {
            const std::string source = s.value("source", "");
            auto& pins = view.snapshot[source];
            for (const auto& r : s.value("pinned", Json::array())) {
                if (auto record = stores::PinRecord::from_json(r)) pins.pinned[record->key()] = *record;
            }
            for (const auto& r : s.value("pending", Json::array())) {
                if (auto record = stores::PinRecord::from_json(r)) pins.pending[record->key()] = *record;
            }
            for (const auto& kind : s.value("seen_empty", Json::array())) {
                if (!kind.is_string()) continue;
                stores::PinRecord marker;
                marker.kind = std::string(kSeen);
                marker.name = kind.get<std::string>();
                pins.pinned[marker.key()] = marker;
            }
            view.policies[source] = s.value("policy", "");
        }
        return view;
    }
    Config config;
    auto store = local_store(flags, &config);
    view.snapshot = store->load_now();
    for (const auto& [source, pins] : view.snapshot) {
        auto it = config.pinning.sources.find(source);
        view.policies[source] = pins::policy_name(it != config.pinning.sources.end() ? it->second
                                                                                     : config.pinning.default_policy);
    }
    return view;
}

// ---- the subcommands ----------------------------------------------------------------------------

int list(const PinsFlags& flags) {
    View view = read_view(flags);
    if (flags.json) {
        Json out = Json::array();
        for (const auto& [source, pins] : view.snapshot) {
            if (!flags.source.empty() && source != flags.source) continue;
            Json pinned = Json::array(), pending = Json::array();
            Json seen_empty = Json::array();
            for (const auto& [key, r] : pins.pinned) {
                if (r.kind == kSeen) seen_empty.push_back(r.name);
                else pinned.push_back(r.to_json());
            }
            for (const auto& [key, r] : pins.pending) pending.push_back(r.to_json());
            out.push_back({{"source", source},
                           {"policy", view.policies[source]},
                           {"pinned", pinned},
                           {"pending", pending},
                           {"seen_empty", seen_empty}});
        }
        fmt::print("{}\n", out.dump(2));
        return 0;
    }
    std::size_t shown = 0;
    for (const auto& [source, pins] : view.snapshot) {
        if (!flags.source.empty() && source != flags.source) continue;
        for (const auto& [key, r] : pins.pending) {
            fmt::print("{}\t{}\tpending\tsha256:{}\t{}\n", source, util::sanitize_for_message(key, 200),
                       r.digest.substr(0, 16), util::sanitize_for_message(r.change, 400));
            ++shown;
        }
        if (flags.pending_only) continue;
        for (const auto& [key, r] : pins.pinned) {
            if (r.kind == kSeen) {
                // Seen listing none of a kind: what it lists later waits for approval.
                fmt::print("{}\t{}\tseen empty\t-\t{} {}\n", source, util::sanitize_for_message(key, 200),
                           r.by.empty() ? "-" : util::sanitize_for_message(r.by, 80), r.time);
                ++shown;
                continue;
            }
            fmt::print("{}\t{}\tpinned\tsha256:{}\t{} {}\n", source, util::sanitize_for_message(key, 200),
                       r.digest.substr(0, 16), r.by.empty() ? "-" : util::sanitize_for_message(r.by, 80), r.time);
            ++shown;
        }
    }
    if (shown == 0)
        fmt::print(stderr, "no {}pins{}\n", flags.pending_only ? "pending " : "",
                   flags.source.empty() ? "" : " of source " + flags.source);
    return 0;
}

int diff(const PinsFlags& flags) {
    View view = read_view(flags);
    auto it = view.snapshot.find(flags.source);
    std::size_t shown = 0;
    if (it != view.snapshot.end()) {
        for (const auto& [key, current] : it->second.pending) {
            if (!matches(current, flags.name)) continue;
            auto pinned = it->second.pinned.find(key);
            const std::string before = pinned == it->second.pinned.end()
                                           ? std::string()
                                           : util::canonical_json(pinned->second.definition, 2);
            const std::string after = util::canonical_json(current.definition, 2);
            fmt::print("{} {} of source {}: {}\n", current.kind, util::sanitize_for_message(current.name, 200),
                       flags.source, util::sanitize_for_message(current.change, 400));
            // A prompt or template by its key: a tool may have its name.
            fmt::print("approve with: toolport pins approve {} {} --digest {}\n", flags.source,
                       util::sanitize_for_message(current.kind == toolport::pins::kToolKind ? current.name
                                                                                            : current.key(),
                                                  200),
                       current.digest);
            fmt::print("{}\n", util::unified_diff(before, after,
                                                  pinned == it->second.pinned.end()
                                                      ? std::string("(not pinned)")
                                                      : "pinned (sha256:" + pinned->second.digest.substr(0, 16) + ")",
                                                  "current (sha256:" + current.digest.substr(0, 16) + ")"));
            ++shown;
        }
    }
    if (shown == 0) {
        fmt::print(stderr, "nothing pending for source {}{}\n", flags.source,
                   flags.name.empty() ? "" : " (" + util::sanitize_for_message(flags.name, 200) + ")");
    }
    return 0;
}

void audit(const Config& config, const std::string& source, const std::string& target, const std::string& outcome,
           const std::string& detail) {
    if (!config.audit.enabled) return;
    auto options = stores::resolve_audit_options(config.audit, config.store, config.audit_redis, config.audit_stream);
    if (options.path.empty()) return;
    stores::AuditLog log(options);
    stores::AuditRecord r;
    r.time = std::chrono::system_clock::now();
    r.method = "pins/" + outcome;
    r.target = target;
    r.source = source;
    r.principal = who();
    r.outcome = outcome;
    r.code = detail.substr(0, 500);
    log.submit(std::move(r));
    log.flush();
}

int approve(const PinsFlags& flags) {
    if (!flags.url.empty()) {
        Json body = {{"source", flags.source}, {"name", flags.name}};
        if (!flags.digest.empty()) body["digest"] = flags.digest;
        Json reply = server_json(flags, "POST", "/admin/pins/approve", body);
        const auto approved = reply.value("approved", Json::array());
        for (const auto& r : approved) {
            fmt::print("approved {} {} of source {} (sha256:{})\n", r.value("kind", ""),
                       util::sanitize_for_message(r.value("name", ""), 200), flags.source,
                       r.value("digest", "").substr(0, 16));
        }
        if (approved.empty()) {
            fmt::print(stderr, "nothing pending for source {} matched; nothing approved\n", flags.source);
            return 1;
        }
        return 0;
    }
    Config config;
    auto store = local_store(flags, &config);
    auto snapshot = store->load_now();
    std::vector<stores::PinRecord> chosen;
    if (auto it = snapshot.find(flags.source); it != snapshot.end()) {
        for (const auto& [key, r] : it->second.pending) {
            if (!matches(r, flags.name)) continue;
            if (!flags.digest.empty() && r.digest.rfind(flags.digest, 0) != 0) {
                fmt::print(stderr,
                           "{} {} is not the definition you gave (--digest {}): it changed since you read it; not "
                           "approved\n",
                           r.kind, util::sanitize_for_message(r.name, 200),
                           util::sanitize_for_message(flags.digest, 80));
                return 1;
            }
            chosen.push_back(r);
        }
    }
    if (chosen.empty()) {
        fmt::print(stderr, "nothing pending for source {} matched; nothing approved\n", flags.source);
        return 1;
    }
    const std::string by = who();
    for (auto record : chosen) {
        const std::string change = record.change;
        record.by = by;
        record.time = stores::iso_time(std::chrono::system_clock::now());
        record.change.clear();
        store->approve_now(flags.source, record);
        audit(config, flags.source, record.kind == toolport::pins::kToolKind ? record.name : record.key(), "approved",
              change);
        fmt::print("approved {} {} of source {} (sha256:{}): served within pinning.poll_ms\n", record.kind,
                   util::sanitize_for_message(record.name, 200), flags.source, record.digest.substr(0, 16));
    }
    return 0;
}

int reset(const PinsFlags& flags) {
    std::size_t gone = 0;
    if (!flags.url.empty()) {
        Json reply = server_json(flags, "POST", "/admin/pins/reset", {{"source", flags.source}, {"name", flags.name}});
        gone = reply.value("reset", 0);
    } else {
        Config config;
        auto store = local_store(flags, &config);
        auto snapshot = store->load_now();
        if (flags.name.empty()) {
            gone = store->reset_now(flags.source, "");
        } else if (auto it = snapshot.find(flags.source); it != snapshot.end()) {
            std::set<std::string> keys;
            for (const auto& [key, r] : it->second.pinned)
                if (matches(r, flags.name)) keys.insert(key);
            for (const auto& [key, r] : it->second.pending)
                if (matches(r, flags.name)) keys.insert(key);
            for (const auto& key : keys) gone += store->reset_now(flags.source, key);
        }
        if (gone)
            audit(config, flags.source, flags.name.empty() ? "*" : flags.name, "reset", fmt::format("{} entries", gone));
    }
    fmt::print("{} entr{} of source {} reset: the next listing is pinned afresh\n", gone, gone == 1 ? "y" : "ies",
               flags.source);
    return 0;
}

}  // namespace

Command add_pins(CLI::App& app) {
    auto flags = std::make_shared<PinsFlags>();
    auto* pins = app.add_subcommand("pins", "Review and approve pinned tool definitions (docs/pinning.md)");
    pins->require_subcommand(1);
    auto common = [flags](CLI::App* cmd) {
        auto* config = cmd->add_option("--config", flags->config, "The server's configuration (pinning:, audit:)");
        cmd->add_option("--file", flags->file, "The pins file (instead of the configuration's)");
        auto* url = cmd->add_option("--url", flags->url, "A running server (its /admin/pins API) instead of the file");
        url->excludes(config);
        cmd->add_option("--token", flags->token, "Bearer token for --url (default: $TOOLPORT_TOKEN)");
        cmd->add_option("--ca-file", flags->ca_file, "CA bundle for an https --url");
    };
    auto* list_cmd = pins->add_subcommand("list", "The pins and the definitions pending review");
    list_cmd->add_option("SOURCE", flags->source, "Only this source");
    list_cmd->add_flag("--pending", flags->pending_only, "Only what waits for approval");
    list_cmd->add_flag("--json", flags->json, "As JSON, definitions included");
    common(list_cmd);
    auto* diff_cmd = pins->add_subcommand("diff", "The pinned and the current definitions, as a unified diff");
    diff_cmd->add_option("SOURCE", flags->source, "The source (upstream, catalog or document name)")->required();
    diff_cmd->add_option("NAME", flags->name, "Only this tool, prompt or template");
    common(diff_cmd);
    auto* approve_cmd = pins->add_subcommand("approve", "Pin the current definitions: served from then on");
    approve_cmd->add_option("SOURCE", flags->source, "The source")->required();
    approve_cmd->add_option("NAME", flags->name, "Only this tool, prompt or template (default: all pending)");
    approve_cmd->add_option("--digest", flags->digest, "Approve only the definition with this SHA-256 (or prefix)");
    common(approve_cmd);
    auto* reset_cmd = pins->add_subcommand("reset", "Forget pins: the next listing is pinned on first sight");
    reset_cmd->add_option("SOURCE", flags->source, "The source")->required();
    reset_cmd->add_option("NAME", flags->name, "Only this tool, prompt or template");
    common(reset_cmd);
    return {pins, [=]() {
                try {
                    if (list_cmd->parsed()) return list(*flags);
                    if (diff_cmd->parsed()) return diff(*flags);
                    if (approve_cmd->parsed()) return approve(*flags);
                    if (reset_cmd->parsed()) return reset(*flags);
                } catch (const ConfigError& e) {
                    fmt::print(stderr, "{}\n", e.what());
                    return 2;
                } catch (const PinsFailure& e) {
                    fmt::print(stderr, "toolport pins: {}\n", e.what());
                    return 1;
                } catch (const stores::PinStoreError& e) {
                    fmt::print(stderr, "toolport pins: {}\n", e.what());
                    return 1;
                } catch (const stores::AuditError& e) {
                    fmt::print(stderr, "toolport pins: the audit log: {}\n", e.what());
                    return 1;
                }
                return 2;
            }};
}

}  // namespace toolport::commands
