// Gateway: the Skills extension (io.modelcontextprotocol/skills, SEP-2640) of its upstreams,
// served with the server's own skills (the context pack's) as one extension.
//
// Each upstream that declares the extension has its skills listed (upstream.hpp) and served
// under the URIs skill_uris.hpp gives them; every file a skill's entry lists is a resource of
// that upstream, read from it under its own URI, the bytes as they came (so the digests and
// sizes the entry lists, passed on as the upstream gave them, still verify). skills/list
// pages through the server's own skills and then each upstream's, one source per page, the
// upstream's own cursor inside ours; skills/get and resources/directory/read go to the
// skill's owner. Nothing is cached between a client and an upstream: each answer is the
// upstream's current one, and what it says of a skill keeps the gateway's routes current.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "pipeline/policy.hpp"
#include "pipeline/result_scan.hpp"
#include "protocol/jsonrpc.hpp"
#include "providers/gateway/gateway.hpp"
#include "providers/gateway/skill_uris.hpp"
#include "server/registry.hpp"
#include "server/request_context.hpp"
#include "util/base64.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

namespace {

constexpr int kInvalidParams = -32602;
// Our cursors of the upstreams' pages start with this (the server's own skills' cursors are
// passed on as they are, and base64url never holds a ':').
constexpr std::string_view kCursorTag = "gateway-skills:";

std::string text_at(const Json& object, const char* key) {
    if (!object.is_object()) return {};
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string uri_param(const RequestContext& ctx) {
    const Json& params = ctx.params();
    if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
        throw RpcError(kInvalidParams, "Invalid params: \"uri\" must be a string");
    }
    return params["uri"].get<std::string>();
}

[[noreturn]] void no_skill(const std::string& uri) {
    throw RpcError(kInvalidParams,
                   fmt::format("Invalid params: no skill is served at {}; skills/list names the skills and their "
                               "SKILL.md URIs",
                               util::sanitize_for_message(uri, 300)),
                   Json{{"uri", uri}});
}

using SkillsMethod = Task<Json> (Gateway::*)(RequestContext&);

// A method of the gateway's, kept alive while it runs.
Task<Json> run_method(std::shared_ptr<Gateway> self, SkillsMethod method, RequestContext& ctx) {
    co_return co_await ((*self).*method)(ctx);
}

std::string cursor_of(std::size_t upstream, const Json& inner) {
    return std::string(kCursorTag) + util::base64url_encode(Json{{"u", upstream}, {"c", inner}}.dump());
}

// The skill's name: its frontmatter's, else its root's last segment.
std::string skill_name(const Json& entry, const std::string& root) {
    std::string name = text_at(entry.is_object() ? entry.value("frontmatter", Json()) : Json(), "name");
    return name.empty() ? skill_root_name(root) : name;
}

}  // namespace

bool Gateway::visible(const RequestContext& ctx, const Upstream& upstream) const {
    return context_.source_visible(ctx.caller(), upstream.name());
}

const Gateway::SkillRoute* Gateway::skill_route(const std::string& uri) const {
    const SkillRoute* best = nullptr;
    for (const auto& [served, route] : skill_roots_) {
        if (rebase_uri(uri, served, served) && (!best || served.size() > best->served.size())) best = &route;
    }
    return best;
}

void Gateway::sync_skills() {
    // Who has which skill name first: the server's own skills (listed as their SKILL.md
    // resources by the sources that serve them), then the upstreams in configuration order.
    std::set<std::string> ours;
    for (const auto& part : parts_) ours.insert(part.upstream->name());
    std::map<std::string, std::string> holder;  // skill name → who has it ("": the server's own)
    auto& registry = context_.registry();
    for (const auto& [uri, spec] : registry.resources()) {
        if (ours.count(spec->source) || skill_files_.count(uri)) continue;
        if (auto root = skill_root(uri)) holder.emplace(skill_root_name(*root), std::string());
    }
    std::map<std::string, SkillRoute> roots;
    std::map<std::string, Target> files;
    std::map<std::string, std::string> prints;
    bool any = false;
    for (const auto& part : parts_) {
        auto upstream = part.upstream;
        const auto& catalog = upstream->catalog();
        if (catalog.skills_extension.is_null()) continue;
        any = true;
        std::map<std::string, const Json*> listed;  // the upstream's resources/list, by URI
        for (const auto& r : catalog.resources) listed.emplace(text_at(r, "uri"), &r);
        std::weak_ptr<Upstream> weak = upstream;
        const pipeline::ContentScanPolicy scan = part.context->read_scan_policy();
        for (const auto& entry : catalog.skills) {
            auto root = skill_root(text_at(entry, "uri"));
            if (!root) continue;
            const std::string name = skill_name(entry, *root);
            auto [first, kept] = holder.emplace(name, upstream->name());
            const bool collides = !kept && first->second != upstream->name();
            if (collides && settings_.prefix_mode == PrefixMode::never) {
                const std::string key = std::string("skill") + '\0' + upstream->name() + '\0' + *root;
                if (warned_collisions_.insert(key).second) {
                    spdlog::warn(
                        "upstream {}: skill {} is left out: {} serves a skill of that name "
                        "(gateway.prefix_mode: never)",
                        upstream->name(), util::sanitize_for_message(*root, 200),
                        first->second.empty() ? std::string("this server") : "upstream " + first->second);
                }
                continue;
            }
            const bool prefixed = settings_.prefix_mode == PrefixMode::always || collides;
            const std::string served = prefixed ? namespaced_skill_root(upstream->settings().prefix, *root) : *root;
            if (collides &&
                warned_collisions_.insert(std::string("skill") + '\0' + upstream->name() + '\0' + *root).second) {
                spdlog::warn("upstream {} lists skill {}, whose name {} already serves: it is served as {}",
                             upstream->name(), util::sanitize_for_message(*root, 200),
                             first->second.empty() ? std::string("this server") : "upstream " + first->second,
                             util::sanitize_for_message(served, 200));
            }
            if (roots.count(served)) continue;  // the upstream lists one skill twice
            roots[served] = {upstream, *root, served};
            const Json& frontmatter = entry.value("frontmatter", Json::object());
            const Json& resources = entry.value("resources", Json());
            if (!resources.is_array()) continue;  // "dynamic": its files are unknown
            for (const auto& file : resources) {
                const std::string original = text_at(file, "uri");
                auto exposed = rebase_uri(original, *root, served);
                if (!exposed || files.count(*exposed)) continue;
                const auto it = listed.find(original);
                const Json* as_listed = it != listed.end() ? it->second : nullptr;
                files[*exposed] = {upstream, original};
                std::string print = upstream->name() + '\0' + file.dump() + '\0' +
                                    (as_listed ? as_listed->dump() : std::string()) + '\0' + frontmatter.dump();
                prints[*exposed] = print;
                if (auto old = skill_file_prints_.find(*exposed);
                    old != skill_file_prints_.end() && old->second == print)
                    continue;
                ResourceSpec spec;
                spec.uri = *exposed;
                spec.source = upstream->name();  // views, access rules and scopes judge it as the upstream's
                const bool skill_md = original == text_at(entry, "uri");
                if (as_listed) {
                    spec.name = text_at(*as_listed, "name");
                    spec.title = text_at(*as_listed, "title");
                    spec.description = text_at(*as_listed, "description");
                    spec.mime_type = text_at(*as_listed, "mimeType");
                    spec.annotations = as_listed->value("annotations", Json());
                    spec.icons = as_listed->value("icons", Json());
                }
                if (spec.name.empty()) spec.name = skill_md ? name : skill_root_name(original);
                if (skill_md && spec.description.empty()) spec.description = text_at(frontmatter, "description");
                if (skill_md && spec.mime_type.empty()) spec.mime_type = "text/markdown";
                if (auto size = file.find("size"); size != file.end() && size->is_number_integer())
                    spec.size = size->get<long long>();
                const std::string served_uri = *exposed;
                spec.reader = [weak, original, served_uri, scan](RequestContext& ctx, const std::string&,
                                                                 const Json&) -> Task<Json> {
                    auto target = weak.lock();
                    if (!target) throw RpcError(-32002, "the upstream of this skill has been removed");
                    Json contents = co_await target->read_resource(ctx, original);
                    // The bytes as they came (an injection label goes in each content's _meta;
                    // only a redaction the operator asked for changes them, and the digest then
                    // says so); only the URI the client asked by is put back.
                    for (auto& item : contents) {
                        if (!item.is_object()) continue;
                        if (auto uri = item.find("uri"); uri != item.end() && *uri == original) *uri = served_uri;
                    }
                    pipeline::scan_resource_contents(contents, scan.results, scan.injection_on(), target->name());
                    co_return contents;
                };
                registry.add_resource(std::move(spec));
            }
        }
    }
    for (const auto& [uri, print] : skill_file_prints_) {
        if (!prints.count(uri)) registry.remove_resource(uri);
    }
    skill_roots_ = std::move(roots);
    skill_files_ = std::move(files);
    skill_file_prints_ = std::move(prints);
    if (any) declare_skills();
}

void Gateway::declare_skills() {
    // directoryRead when some source reads directories (the others' are -32602).
    bool directories = local_skills_.directory.has_value();
    for (const auto& part : parts_) {
        const Json& ext = part.upstream->catalog().skills_extension;
        if (ext.is_object() && ext.value("directoryRead", false) == true) directories = true;
    }
    Json settings = Json::object();
    if (directories) settings["directoryRead"] = true;
    if (settings == skills_settings_) return;
    skills_settings_ = settings;
    std::weak_ptr<Gateway> weak = weak_from_this();
    auto method = [weak](SkillsMethod fn) {
        return [weak, fn](RequestContext& ctx) -> Task<Json> {
            auto self = weak.lock();
            if (!self) throw RpcError(-32603, "the gateway is stopping");
            return run_method(std::move(self), fn, ctx);
        };
    };
    std::map<std::string, ExtensionMethod> methods;
    methods["skills/list"] = {method(&Gateway::list_skills), true};
    methods["skills/get"] = {method(&Gateway::get_skill), true};
    if (directories) methods["resources/directory/read"] = {method(&Gateway::read_skill_directory), false};
    context_.add_extension(kSkillsExtensionId, std::move(settings), std::move(methods));
    spdlog::info("gateway: serving the Skills extension of {} (directoryRead: {})",
                 local_skills_.list ? "this server and its upstreams" : "its upstreams", directories);
}

Json Gateway::served_skill(Upstream& upstream, const Json& entry) {
    const std::string uri = text_at(entry, "uri");
    if (uri.empty()) return Json();  // not an entry: nothing to serve or to note
    if (upstream.note_skill(uri, &entry)) sync();
    auto root = skill_root(uri);
    if (!root) return Json();
    for (const auto& [served, route] : skill_roots_) {
        if (route.upstream.get() == &upstream && route.original == *root) {
            return rebase_skill_entry(entry, *root, served);
        }
    }
    return Json();
}

Task<Json> Gateway::list_skills(RequestContext& ctx) {
    std::size_t next = 0;  // the first upstream (by position) whose page comes next
    Json inner;            // its cursor
    std::string cursor;
    if (auto it = ctx.params().find("cursor"); ctx.params().is_object() && it != ctx.params().end()) {
        if (!it->is_null() && !it->is_string())
            throw RpcError(kInvalidParams, "Invalid params: \"cursor\" must be a string");
        if (it->is_string()) cursor = it->get<std::string>();
    }
    const bool upstream_phase = cursor.rfind(kCursorTag, 0) == 0;
    if (upstream_phase) {
        auto decoded = util::base64url_decode(std::string_view(cursor).substr(kCursorTag.size()));
        Json state = decoded ? Json::parse(*decoded, nullptr, false) : Json();
        if (!state.is_object() || !state.contains("u") || !state["u"].is_number_unsigned()) {
            throw RpcError(kInvalidParams, "Invalid params: unknown cursor");
        }
        next = state["u"].get<std::size_t>();
        inner = state.value("c", Json());
    }
    // The upstreams whose skills this caller is served, from `from` on.
    auto serving = [&](std::size_t from) {
        for (std::size_t i = from; i < parts_.size(); ++i) {
            const auto& upstream = *parts_[i].upstream;
            if (!upstream.catalog().skills_extension.is_null() && upstream.state() == Upstream::State::connected &&
                visible(ctx, upstream))
                return i;
        }
        return parts_.size();
    };
    if (!upstream_phase && local_skills_.list && context_.source_visible(ctx.caller(), local_skills_.source)) {
        // The server's own skills first, their cursors as they are.
        Json page = co_await local_skills_.list->handler(ctx);
        Json skills = page.value("skills", Json::array());
        if (page.contains("nextCursor") && page["nextCursor"].is_string()) {
            co_return Json{{"skills", std::move(skills)}, {"nextCursor", page["nextCursor"]}};
        }
        if (!skills.empty()) {
            Json result = {{"skills", std::move(skills)}};
            if (serving(0) < parts_.size()) result["nextCursor"] = cursor_of(serving(0), nullptr);
            co_return result;
        }
    } else if (!upstream_phase && !cursor.empty()) {
        throw RpcError(kInvalidParams, "Invalid params: unknown cursor");
    }
    if (serving(next) != next) inner = nullptr;  // that upstream is gone: the next from its start
    for (std::size_t i = serving(next); i < parts_.size(); i = serving(i + 1), inner = nullptr) {
        auto upstream = parts_[i].upstream;
        Json params = Json::object();
        if (inner.is_string()) params["cursor"] = inner;
        Json page;
        try {
            page = co_await upstream->forward(ctx, "skills/list", std::move(params));
        } catch (const RpcError& e) {
            // One upstream's failure leaves its skills out of this listing, not the others'.
            spdlog::warn("upstream {}: skills/list failed ({}): {}", upstream->name(), e.code,
                         util::sanitize_for_message(e.what(), 300));
            continue;
        }
        Json skills = Json::array();
        if (auto listed = page.find("skills"); listed != page.end() && listed->is_array()) {
            for (const auto& entry : *listed) {
                if (Json served = served_skill(*upstream, entry); !served.is_null())
                    skills.push_back(std::move(served));
            }
        }
        Json result = {{"skills", std::move(skills)}};
        if (auto more = page.find("nextCursor"); more != page.end() && more->is_string() && !more->empty()) {
            result["nextCursor"] = cursor_of(i, *more);
            co_return result;
        }
        if (result["skills"].empty()) continue;
        if (serving(i + 1) < parts_.size()) result["nextCursor"] = cursor_of(serving(i + 1), nullptr);
        co_return result;
    }
    co_return Json{{"skills", Json::array()}};
}

Task<Json> Gateway::get_skill(RequestContext& ctx) {
    const std::string uri = uri_param(ctx);
    // An upstream's skill the gateway knows, or one under an upstream's prefix it does not
    // list (SEP-2640: a skill is served by its URI whether or not it is listed).
    std::shared_ptr<Upstream> owner;
    std::string original;
    if (const SkillRoute* route = skill_route(uri)) {
        owner = route->upstream;
        original = *rebase_uri(uri, route->served, route->original);
    } else {
        for (const auto& part : parts_) {
            if (part.upstream->catalog().skills_extension.is_null()) continue;
            const std::string space = namespaced_skill_root(part.upstream->settings().prefix, "skill://");
            if (uri.rfind(space, 0) == 0 && uri.size() > space.size()) {
                owner = part.upstream;
                original = "skill://" + uri.substr(space.size());
                break;
            }
        }
    }
    if (owner) {
        if (!visible(ctx, *owner)) no_skill(uri);
        Json answer;
        try {
            answer = co_await owner->forward(ctx, "skills/get", {{"uri", original}});
        } catch (const RpcError& e) {
            if (e.code == kInvalidParams && owner->note_skill(original, nullptr)) sync();
            if (e.code == kInvalidParams) no_skill(uri);
            throw;
        }
        Json served = served_skill(*owner, answer.value("skill", Json()));
        if (served.is_null() || text_at(served, "uri") != uri) no_skill(uri);
        co_return Json{{"skill", std::move(served)}};
    }
    if (local_skills_.get && context_.source_visible(ctx.caller(), local_skills_.source)) {
        try {
            co_return co_await local_skills_.get->handler(ctx);
        } catch (const RpcError& e) {
            if (e.code != kInvalidParams) throw;
        }
    }
    // A skill an upstream serves under its own URI without listing it.
    for (const auto& part : parts_) {
        auto upstream = part.upstream;
        if (upstream->catalog().skills_extension.is_null() || upstream->state() != Upstream::State::connected ||
            !visible(ctx, *upstream))
            continue;
        Json answer;
        try {
            answer = co_await upstream->forward(ctx, "skills/get", {{"uri", uri}});
        } catch (const RpcError&) {
            continue;
        }
        // Served here only under that same URI (not when its name makes it another's).
        Json served = served_skill(*upstream, answer.value("skill", Json()));
        if (!served.is_null() && text_at(served, "uri") == uri) co_return Json{{"skill", std::move(served)}};
    }
    no_skill(uri);
}

Task<Json> Gateway::read_skill_directory(RequestContext& ctx) {
    const std::string uri = uri_param(ctx);
    if (const SkillRoute* route = skill_route(uri); route && visible(ctx, *route->upstream)) {
        auto upstream = route->upstream;
        const Json& ext = upstream->catalog().skills_extension;
        if (!ext.is_object() || ext.value("directoryRead", false) != true) {
            throw RpcError(kInvalidParams,
                           fmt::format("Invalid params: {} is a skill of upstream {}, which does not read directories "
                                       "(it did not declare directoryRead); its skill entry lists its files",
                                       util::sanitize_for_message(uri, 300), upstream->name()),
                           Json{{"uri", uri}});
        }
        Json params = {{"uri", *rebase_uri(uri, route->served, route->original)}};
        if (ctx.params().contains("cursor")) params["cursor"] = ctx.params()["cursor"];
        const std::string original = route->original, served = route->served;
        Json answer = co_await upstream->forward(ctx, "resources/directory/read", std::move(params));
        Json children = Json::array();
        if (auto listed = answer.find("resources"); listed != answer.end() && listed->is_array()) {
            for (auto child : *listed) {
                if (child.is_object()) {
                    if (auto at = child.find("uri"); at != child.end() && at->is_string()) {
                        if (auto moved = rebase_uri(at->get<std::string>(), original, served)) *at = *moved;
                    }
                }
                children.push_back(std::move(child));
            }
        }
        Json result = {{"resources", std::move(children)}};
        if (answer.contains("nextCursor") && answer["nextCursor"].is_string())
            result["nextCursor"] = answer["nextCursor"];
        co_return result;
    }
    if (local_skills_.directory && context_.source_visible(ctx.caller(), local_skills_.source)) {
        co_return co_await local_skills_.directory->handler(ctx);
    }
    throw RpcError(kInvalidParams,
                   fmt::format("Invalid params: {} is not a directory of this server's skills",
                               util::sanitize_for_message(uri, 300)),
                   Json{{"uri", uri}});
}

}  // namespace toolport::gateway
