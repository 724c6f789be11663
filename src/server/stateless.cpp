#include "server/stateless.hpp"

#include <fmt/format.h>

#include "server/server.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using namespace protocol;

namespace {

const Json* meta_of(const Json& params) {
    if (!params.is_object()) return nullptr;
    // (Looked up by a view: a C-string key is measured at every comparison.)
    const auto& members = params.get_ref<const Json::object_t&>();
    auto it = members.find(std::string_view("_meta"));
    if (it == members.end() || !it->second.is_object()) return nullptr;
    return &it->second;
}

}  // namespace

StatelessMeta read_stateless_meta(const Json& params) {
    StatelessMeta m;
    const Json* meta = meta_of(params);
    if (!meta) return m;
    const auto& members = meta->get_ref<const Json::object_t&>();
    auto v = members.find(std::string_view(meta_key::kProtocolVersion));
    if (v == members.end()) return m;
    m.present = true;
    if (v->second.is_string()) {
        m.requested = v->second.get_ref<const std::string&>();
        m.revision = parse_revision(m.requested);
    } else {
        m.requested = v->second.dump();
    }
    auto caps = members.find(std::string_view(meta_key::kClientCapabilities));
    m.has_capabilities = caps != members.end() && caps->second.is_object();
    return m;
}

const Json& stateless_client_capabilities(const Json& params) {
    static const Json empty = Json::object();
    const Json* meta = meta_of(params);
    if (!meta) return empty;
    auto it = meta->find(meta_key::kClientCapabilities);
    return it != meta->end() && it->is_object() ? *it : empty;
}

std::optional<LogLevel> stateless_log_level(const Json* meta) {
    if (!meta) return std::nullopt;
    auto it = meta->find(meta_key::kLogLevel);
    if (it == meta->end() || !it->is_string()) return std::nullopt;
    return parse_log_level(it->get<std::string>());
}

Json unsupported_version_error(const RequestId& id, const std::string& requested) {
    Json supported = Json::array();
    for (auto n : kRevisionNames) supported.push_back(std::string(n));
    return make_error(id, error_code::kUnsupportedProtocolVersion,
                      fmt::format("Unsupported protocol version \"{}\"; supported: {}",
                                  util::sanitize_for_message(requested, 40), supported_revisions_list()),
                      Json{{"supported", std::move(supported)}, {"requested", requested}});
}

Json check_required_capabilities(const Request& request, const StatelessMeta& meta) {
    if (!meta.has_capabilities) {
        return make_error(request.id, error_code::kInvalidParams,
                          fmt::format("Invalid params: missing _meta keys: {}", meta_key::kClientCapabilities));
    }
    return nullptr;
}

void decorate_stateless_result(Json& result, const McpServer& server, bool raw_server_info) {
    if (!result.is_object()) return;
    // On every stateless reply: members looked up by views and inserted where the lookup
    // found their place, the serverInfo copied once, into its node.
    auto& members = result.get_ref<Json::object_t&>();
    constexpr std::string_view kResultType = "resultType";
    if (auto it = members.lower_bound(kResultType); it == members.end() || it->first != kResultType) {
        members.emplace_hint(it, kResultType, "complete");  // unless the result says otherwise
    }
    constexpr std::string_view kMeta = "_meta";
    auto meta_at = members.lower_bound(kMeta);
    if (meta_at == members.end() || meta_at->first != kMeta) meta_at = members.emplace_hint(meta_at, kMeta, nullptr);
    Json& meta = meta_at->second;
    if (!meta.is_object()) meta = Json::object();
    auto& meta_members = meta.get_ref<Json::object_t&>();
    const std::string_view key = meta_key::kServerInfo;
    const Json& info = raw_server_info ? server.server_info_raw() : server.server_info();
    if (auto it = meta_members.lower_bound(key); it != meta_members.end() && it->first == key) {
        it->second = info;
    } else {
        meta_members.emplace_hint(it, key, info);
    }
}

void mark_cacheable(Json& result, const McpServer& server) {
    // Catalogues can change at run time (providers), so the TTL is short. A shared cache may
    // keep one only when every caller gets the same: with views (gateway profiles, chosen by
    // path or by token at the same URL) callers get different lists, and a client that keys
    // its cache by server would hand one profile's list to another. Scopes per tool do the
    // same between tokens, and access rules between principals.
    result["ttlMs"] = server.options().list_ttl.count();
    const bool per_caller = server.has_views() || (server.scope_policy() && !server.scope_policy()->empty()) ||
                            server.access_policy();
    result["cacheScope"] = per_caller ? "private" : "public";
}

Json discover_result(const McpServer& server, const RequestContext& ctx) {
    Json versions = Json::array();
    for (auto n : kRevisionNames) versions.push_back(std::string(n));
    Json result = {{"supportedVersions", std::move(versions)},
                   {"capabilities", server.capabilities(kLatest, &ctx.caller())},
                   {"serverInfo", server.server_info()}};
    if (!server.options().instructions.empty()) result["instructions"] = server.options().instructions;
    mark_cacheable(result, server);
    return result;
}

}  // namespace toolport
