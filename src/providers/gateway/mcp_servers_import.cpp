#include "providers/gateway/mcp_servers_import.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "providers/gateway/gateway_settings.hpp"
#include "providers/source_settings.hpp"
#include "util/json.hpp"

namespace toolport::gateway {

namespace {

using providers::SettingsError;

// ${env:NAME} / ${NAME} from the environment; ${input:...} refused.
std::string expanded(const std::string& text, const std::string& where) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$' || i + 1 >= text.size() || text[i + 1] != '{') {
            out += text[i];
            continue;
        }
        auto close = text.find('}', i + 2);
        if (close == std::string::npos) throw SettingsError(fmt::format("{}: unclosed ${{ in \"{}\"", where, text));
        std::string name = text.substr(i + 2, close - i - 2);
        if (name.rfind("input:", 0) == 0) {
            throw SettingsError(
                fmt::format("{}: ${{{}}} is asked of the user by VS Code; put the value in an "
                            "environment variable and write ${{env:NAME}}",
                            where, name));
        }
        if (name.rfind("env:", 0) == 0) name = name.substr(4);
        const char* value = std::getenv(name.c_str());
        if (!value) throw SettingsError(fmt::format("{}: environment variable {} is not set", where, name));
        out += value;
        i = close;
    }
    return out;
}

Json string_map(const Json& value, const std::string& where) {
    if (!value.is_object()) throw SettingsError(fmt::format("{}: must be an object of strings", where));
    Json out = Json::object();
    for (const auto& [key, v] : value.items()) {
        if (v.is_string()) out[key] = expanded(v.get<std::string>(), where + "." + key);
        else if (v.is_number() || v.is_boolean()) out[key] = v.dump();
        else throw SettingsError(fmt::format("{}.{}: must be a string", where, key));
    }
    return out;
}

std::string upstream_name(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (out.size() == 64) break;
        out += valid_upstream_name(std::string(1, c)) ? c : '_';
    }
    return out.empty() ? "server" : out;
}

Json upstream_of(const Json& server, const std::string& where) {
    if (!server.is_object()) throw SettingsError(fmt::format("{}: must be an object", where));
    Json u = Json::object();
    std::string type = server.value("type", server.value("transport", std::string()));
    if (server.contains("command")) {
        if (!server["command"].is_string()) throw SettingsError(fmt::format("{}.command: must be a string", where));
        if (!type.empty() && type != "stdio") {
            throw SettingsError(fmt::format("{}: has a command but type \"{}\"", where, type));
        }
        u["command"] = expanded(server["command"].get<std::string>(), where + ".command");
        Json args = Json::array();
        if (server.contains("args")) {
            if (!server["args"].is_array()) throw SettingsError(fmt::format("{}.args: must be an array", where));
            for (const auto& a : server["args"]) {
                if (!a.is_string()) throw SettingsError(fmt::format("{}.args: must hold strings", where));
                args.push_back(expanded(a.get<std::string>(), where + ".args"));
            }
        }
        u["args"] = std::move(args);  // present even when empty: the command is not split
        if (server.contains("env")) u["env"] = string_map(server["env"], where + ".env");
        if (server.contains("cwd") && server["cwd"].is_string())
            u["cwd"] = expanded(server["cwd"].get<std::string>(), where + ".cwd");
    } else if (server.contains("url")) {
        if (!server["url"].is_string()) throw SettingsError(fmt::format("{}.url: must be a string", where));
        u["url"] = expanded(server["url"].get<std::string>(), where + ".url");
        if (type == "sse") u["transport"] = "sse";
        else if (!type.empty() && type != "http" && type != "streamable-http" && type != "streamableHttp") {
            throw SettingsError(fmt::format("{}: unknown type \"{}\" (stdio, http or sse)", where, type));
        }
        if (server.contains("headers")) u["headers"] = string_map(server["headers"], where + ".headers");
    } else {
        throw SettingsError(fmt::format("{}: has neither a command nor a url", where));
    }
    return u;
}

}  // namespace

Json upstreams_from_mcp_servers(const std::string& text, const std::string& origin) {
    Json doc = Json::parse(text, nullptr, false, true);  // comments allowed: VS Code's files have them
    if (doc.is_discarded() || !doc.is_object()) throw SettingsError(fmt::format("{}: not a JSON object", origin));
    const char* key = doc.contains("mcpServers") ? "mcpServers" : doc.contains("servers") ? "servers" : nullptr;
    if (!key || !doc[key].is_object()) {
        throw SettingsError(
            fmt::format("{}: has no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) object", origin));
    }
    Json upstreams = Json::object();
    for (const auto& [name, server] : doc[key].items()) {
        if (server.is_object() && server.value("disabled", false)) continue;
        std::string base = upstream_name(name), unique = base;
        for (int n = 2; upstreams.contains(unique); ++n) unique = base + "_" + std::to_string(n);
        upstreams[unique] = upstream_of(server, fmt::format("{}: {}.{}", origin, key, name));
    }
    return upstreams;
}

}  // namespace toolport::gateway
