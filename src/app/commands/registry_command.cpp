// toolport registry: the MCP Registry from the command line (docs/registry.md).
//
//   toolport registry search [TEXT] [--limit N] [--cursor C] [--updated-since T] [--all]
//   toolport registry show NAME [--version V] [--versions]
//   toolport registry add NAME [--version V] [--as UPSTREAM] [--run TYPE] --config FILE
//   toolport registry update [NAME] [--config FILE]
//
// against --registry URL, else the configuration's registry.url (--config), else the
// official registry. `add` writes the upstream into the configuration file by editing its
// text (its comments and layout stay) and keeps the entry in the state directory, so the
// server's first start needs no registry; `update` resolves the kept `latest` entries again.
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "async/task.hpp"
#include "client/blocking_loop.hpp"
#include "document/document.hpp"
#include "document/yaml_insert.hpp"
#include "http_client/http_client.hpp"
#include "providers/gateway/registry/registry_api.hpp"
#include "providers/gateway/registry/registry_resolve.hpp"
#include "providers/gateway/registry/server_json.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct RegistryFlags {
    std::string registry;
    std::string config;
    std::string text;
    std::string name;
    std::string version;
    std::string cursor;
    std::string updated_since;
    std::string as;
    std::string run = "auto";
    int limit = 0;
    bool all = false;
    bool all_versions = false;
    bool versions = false;
    bool json = false;
};

struct RegistryFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// --registry, else the configuration's registry.url, else the official registry.
std::string registry_url(const RegistryFlags& flags) {
    std::string url = flags.registry;
    if (url.empty() && !flags.config.empty()) {
        try {
            const Json file = document::parse_document(document::read_text_file(flags.config), flags.config).value;
            if (file.is_object() && file.contains("registry") && file["registry"].is_object()) {
                if (auto it = file["registry"].find("url"); it != file["registry"].end() && it->is_string())
                    url = it->get<std::string>();
            }
        } catch (const std::exception& e) {
            throw UsageError(fmt::format("--config {}: {}", flags.config, e.what()));
        }
    }
    if (url.empty()) url = registry::kDefaultRegistryUrl;
    try {
        return registry::normalized_base(url);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
}

// Runs `task` on the session's loop until it is done; a registry's failure as the command's.
template <typename T>
T run_blocking(client::BlockingLoop& loop, Task<T> task) {
    try {
        return loop.run(std::move(task));
    } catch (const registry::RegistryError& e) {
        throw RegistryFailure(util::sanitize_for_message(e.what()));
    }
}

struct Session {
    client::BlockingLoop loop;
    http_client::HttpClient http{loop.asio_executor()};
    registry::RegistryClient client;
    explicit Session(const std::string& url) : client(http, url) {}
};

std::string field(const Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void print_row(const registry::Entry& e) {
    std::string description = field(e.server, "description");
    fmt::print("{:<48} {:<12} {:<10} {}\n", field(e.server, "name"), field(e.server, "version"),
               field(e.official, "status"), util::sanitize_for_message(description, 100));
}

int search(const RegistryFlags& flags) {
    Session session(registry_url(flags));
    registry::ListQuery query;
    query.search = flags.text;
    query.cursor = flags.cursor;
    query.updated_since = flags.updated_since;
    query.limit = flags.limit;
    query.version = flags.all_versions ? "" : "latest";
    Json rows = Json::array();
    std::string next;
    for (int page = 0; page < 1000; ++page) {
        auto result = run_blocking(session.loop, session.client.list(query));
        for (auto& entry : result.entries) {
            if (flags.json) {
                rows.push_back({{"server", entry.server}, {"_meta", {{registry::kOfficialMeta, entry.official}}}});
            } else {
                print_row(entry);
            }
        }
        next = result.next_cursor;
        if (!flags.all || next.empty()) break;
        query.cursor = next;
    }
    if (flags.json) {
        Json out = {{"servers", rows}};
        if (!next.empty() && !flags.all) out["metadata"] = {{"nextCursor", next}};
        fmt::print("{}\n", out.dump(2));
    } else if (!next.empty() && !flags.all) {
        fmt::print("more: --cursor {}\n", next);
    }
    return 0;
}

std::string input_line(const registry::ServerInput& in, const std::string& what) {
    std::string line = fmt::format("    {} {}", what, in.name.empty() ? "<" + in.value_hint + ">" : in.name);
    if (in.required) line += " (required)";
    if (in.secret) line += " (secret)";
    if (!in.value.empty()) line += " = " + in.value;
    else if (!in.default_value.empty()) line += " default " + in.default_value;
    if (!in.description.empty()) line += ": " + in.description;
    return util::sanitize_for_message(line, 300);
}

int show(const RegistryFlags& flags) {
    Session session(registry_url(flags));
    if (flags.versions) {
        auto page = run_blocking(session.loop, session.client.versions(flags.name));
        if (flags.json) {
            Json rows = Json::array();
            for (auto& e : page.entries)
                rows.push_back({{"server", e.server}, {"_meta", {{registry::kOfficialMeta, e.official}}}});
            fmt::print("{}\n", Json{{"servers", rows}}.dump(2));
            return 0;
        }
        for (const auto& e : page.entries) {
            fmt::print("{:<16} {:<10} {}{}\n", field(e.server, "version"), field(e.official, "status"),
                       field(e.official, "publishedAt"), e.official.value("isLatest", false) ? "  latest" : "");
        }
        return 0;
    }
    auto entry = run_blocking(session.loop,
                              session.client.version(flags.name, flags.version.empty() ? "latest" : flags.version));
    if (flags.json) {
        fmt::print("{}\n",
                   Json{{"server", entry.server}, {"_meta", {{registry::kOfficialMeta, entry.official}}}}.dump(2));
        return 0;
    }
    registry::ServerJson s;
    try {
        s = registry::read_server_json(entry.server);
    } catch (const registry::ServerJsonError& e) {
        throw RegistryFailure(e.what());
    }
    fmt::print("{} {}\n", s.name, s.version);
    if (!s.title.empty()) fmt::print("  title: {}\n", util::sanitize_for_message(s.title, 100));
    if (!s.description.empty()) fmt::print("  {}\n", util::sanitize_for_message(s.description, 300));
    if (!field(entry.official, "status").empty()) {
        fmt::print("  status: {}, published {}, updated {}{}\n", field(entry.official, "status"),
                   field(entry.official, "publishedAt"), field(entry.official, "updatedAt"),
                   entry.official.value("isLatest", false) ? ", latest" : "");
    }
    for (const auto& p : s.packages) {
        fmt::print("  package: {} {}{} ({})\n", p.registry_type, p.identifier, p.version.empty() ? "" : "@" + p.version,
                   p.transport);
        for (const auto& in : p.runtime_arguments) fmt::print("{}\n", input_line(in, "runtime argument"));
        for (const auto& in : p.package_arguments) fmt::print("{}\n", input_line(in, "argument"));
        for (const auto& in : p.environment_variables) fmt::print("{}\n", input_line(in, "env"));
    }
    for (const auto& r : s.remotes) {
        fmt::print("  remote: {} {}\n", r.type, util::sanitize_for_message(r.url, 300));
        for (const auto& in : r.headers) fmt::print("{}\n", input_line(in, "header"));
        for (const auto& [name, in] : r.variables) {
            auto named = in;
            named.name = "{" + name + "}";
            fmt::print("{}\n", input_line(named, "variable"));
        }
    }
    return 0;
}

// The upstream's name from the entry's: what follows the '/', in the characters upstream
// names allow.
std::string upstream_name_of(const std::string& entry) {
    std::string base = entry.substr(entry.rfind('/') + 1);
    std::string out;
    for (char c : base) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-';
        out += ok ? c : '_';
    }
    if (out.size() > 64) out.resize(64);
    return out.empty() ? "upstream" : out;
}

// Comments for what the entry requires, so the file says what is left to give.
std::vector<std::string> required_notes(const registry::ServerJson& s) {
    std::vector<std::string> notes;
    auto note = [&](const registry::ServerInput& in, const std::string& where) {
        if (!in.required || !in.value.empty() || !in.default_value.empty()) return;
        std::string text = fmt::format("# required: {}", where);
        if (in.secret) text += " (a secret: from Toolport's environment, or as \"${VAR}\")";
        if (!in.description.empty()) text += " - " + in.description;
        notes.push_back(util::sanitize_for_message(text, 300));
    };
    for (const auto& p : s.packages) {
        for (const auto& in : p.environment_variables) note(in, "env: {" + in.name + ": ...}");
        for (const auto& in : p.package_arguments) {
            std::string key = in.type == "named" ? in.name : (in.value_hint.empty() ? in.name : in.value_hint);
            while (!key.empty() && key.front() == '-') key.erase(key.begin());
            note(in, "arguments: {" + key + ": ...}");
        }
    }
    for (const auto& r : s.remotes) {
        for (const auto& in : r.headers) note(in, "headers: {" + in.name + ": ...}");
        for (const auto& [name, in] : r.variables) note(in, "arguments: {" + name + ": ...}");
    }
    return notes;
}

int add(const RegistryFlags& flags) {
    if (flags.config.empty()) throw UsageError("--config FILE is required: the configuration to add the upstream to");
    const std::string url = registry_url(flags);
    Session session(url);
    const std::string requested = flags.version.empty() ? "latest" : flags.version;
    // Resolved now (and kept): the entry exists, and the server's first start needs no registry.
    auto kept = run_blocking(session.loop, registry::resolve_entry(session.client, registry::registry_state_dir(),
                                                                   flags.name, requested, /*refresh=*/true));
    registry::ServerJson s;
    try {
        s = registry::read_server_json(kept.entry.server);
    } catch (const registry::ServerJsonError& e) {
        throw RegistryFailure(fmt::format("{}: {}", flags.name, e.what()));
    }
    const std::string upstream = flags.as.empty() ? upstream_name_of(flags.name) : flags.as;
    Json expected = {{"registry", flags.name}, {"version", requested}};
    std::vector<std::string> body = {"registry: " + Json(flags.name).dump(), "version: " + Json(requested).dump()};
    if (flags.run != "auto") {
        expected["run"] = flags.run;
        body.push_back("run: " + flags.run);
    }
    if (url != registry::kDefaultRegistryUrl) {
        // Another registry than the file's own: said so where the file says which one it asks.
        std::string configured;
        try {
            configured = registry_url(RegistryFlags{.config = flags.config});
        } catch (const UsageError&) {}
        if (configured != url) {
            fmt::print(stderr,
                       "note: the entry comes from {}; set registry: {{url: {}}} in {} for the server to ask it\n", url,
                       url, flags.config);
        }
    }
    for (auto& line : required_notes(s)) body.push_back(std::move(line));
    std::string text;
    if (std::filesystem::exists(flags.config)) {
        try {
            text = document::read_text_file(flags.config);
        } catch (const std::exception& e) {
            throw RegistryFailure(e.what());
        }
    }
    std::string edited;
    try {
        edited = document::insert_mapping_entry(text, "upstreams", upstream, body, expected);
    } catch (const document::YamlEditError& e) {
        throw RegistryFailure(fmt::format("{}: {}", flags.config, e.what()));
    }
    const std::string temporary = flags.config + ".toolport-tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << edited;
        if (!out) throw RegistryFailure(fmt::format("cannot write {}", temporary));
    }
    std::error_code ec;
    std::filesystem::rename(temporary, flags.config, ec);
    if (ec) throw RegistryFailure(fmt::format("cannot replace {}: {}", flags.config, ec.message()));
    fmt::print("added upstream {} ({} {}{}) to {}\n", upstream, flags.name, requested,
               requested == kept.version ? "" : ", now " + kept.version, flags.config);
    return 0;
}

int update(const RegistryFlags& flags) {
    const std::string url = registry_url(flags);
    Session session(url);
    const auto dir = registry::registry_state_dir();
    int updated = 0;
    int failed = 0;
    for (const auto& kept : registry::kept_entries(dir, url)) {
        if (kept.requested != "latest") continue;
        if (!flags.name.empty() && kept.name != flags.name) continue;
        try {
            auto fresh = run_blocking(session.loop, registry::resolve_entry(session.client, dir, kept.name, "latest",
                                                                            /*refresh=*/true));
            if (fresh.version == kept.version) {
                fmt::print("{}: latest is still {}\n", kept.name, kept.version);
            } else {
                fmt::print("{}: latest {} -> {} (a running server switches on `toolport reload` or SIGHUP)\n",
                           kept.name, kept.version, fresh.version);
            }
            ++updated;
        } catch (const RegistryFailure& e) {
            fmt::print(stderr, "{}: {} (the kept {} stays)\n", kept.name, e.what(), kept.version);
            ++failed;
        }
    }
    if (updated == 0 && failed == 0) {
        fmt::print("no `latest` entry of {} is kept{}\n", url, flags.name.empty() ? "" : " for " + flags.name);
    }
    return failed == 0 ? 0 : 1;
}

}  // namespace

Command add_registry(CLI::App& app) {
    auto flags = std::make_shared<RegistryFlags>();
    auto* registry = app.add_subcommand("registry",
                                        "Find MCP servers in the MCP Registry and add them (docs/registry.md)");
    registry->require_subcommand(1);
    auto common = [flags](CLI::App* cmd) {
        cmd->add_option("--registry", flags->registry,
                        "The registry's URL (default: the configuration's, else the official one)");
        cmd->add_option("--config", flags->config, "The configuration (its registry.url)");
    };
    auto* search_cmd = registry->add_subcommand("search",
                                                "Servers whose name contains TEXT (one page; --all for every page)");
    search_cmd->add_option("TEXT", flags->text, "Part of a server name");
    search_cmd->add_option("--limit", flags->limit, "Entries per page")->check(CLI::Range(1, 100));
    search_cmd->add_option("--cursor", flags->cursor, "The page after the one that said `more: --cursor C`");
    search_cmd->add_option("--updated-since", flags->updated_since, "Only entries updated since (RFC 3339)");
    search_cmd->add_flag("--all", flags->all, "Follow the pages to the end");
    search_cmd->add_flag("--all-versions", flags->all_versions, "Every version, not the latest only");
    search_cmd->add_flag("--json", flags->json, "The registry's entries as JSON");
    common(search_cmd);
    auto* show_cmd = registry->add_subcommand("show", "One server's entry: packages, remotes, what it requires");
    show_cmd->add_option("NAME", flags->name, "The server's name (io.github.example/weather)")->required();
    show_cmd->add_option("--version", flags->version, "This version (default: latest)");
    show_cmd->add_flag("--versions", flags->versions, "List its versions");
    show_cmd->add_flag("--json", flags->json, "The entry as JSON");
    common(show_cmd);
    auto* add_cmd = registry->add_subcommand("add", "Write a registry upstream into the configuration file");
    add_cmd->add_option("NAME", flags->name, "The server's name")->required();
    add_cmd->add_option("--version", flags->version, "An exact version (default: latest, pinned at first use)");
    add_cmd->add_option("--as", flags->as, "The upstream's name (default: the part of NAME after '/')");
    add_cmd->add_option("--run", flags->run, "auto, remote, npm, pypi or oci")
        ->check(CLI::IsMember({"auto", "remote", "npm", "pypi", "oci"}));
    common(add_cmd);
    auto* update_cmd = registry->add_subcommand("update", "Resolve the kept `latest` entries again");
    update_cmd->add_option("NAME", flags->name, "Only this server");
    common(update_cmd);
    return {registry, [=]() {
                try {
                    if (search_cmd->parsed()) return search(*flags);
                    if (show_cmd->parsed()) return show(*flags);
                    if (add_cmd->parsed()) return add(*flags);
                    if (update_cmd->parsed()) return update(*flags);
                } catch (const UsageError& e) {
                    fmt::print(stderr, "toolport registry: {}\n", e.what());
                    return 2;
                } catch (const RegistryFailure& e) {
                    fmt::print(stderr, "toolport registry: {}\n", e.what());
                    return 1;
                }
                return 2;
            }};
}

}  // namespace toolport::commands
