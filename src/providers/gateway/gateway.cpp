#include "providers/gateway/gateway.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "observability/health.hpp"
#include "pipeline/policy.hpp"
#include "pipeline/result_scan.hpp"
#include "providers/gateway/exposed_names.hpp"
#include "providers/gateway/skill_uris.hpp"
#include "providers/gateway/template_updates.hpp"
#include "providers/gateway/tool_changes.hpp"
#include "providers/gateway/tool_search.hpp"
#include "providers/pin_definition.hpp"
#include "providers/pin_guard.hpp"
#include "server/registry.hpp"
#include "server/request_context.hpp"
#include "server/tool_error.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

namespace {

std::string text_of(const Json& entry, const char* key) {
    auto it = entry.find(key);
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json member(const Json& entry, const char* key) {
    auto it = entry.find(key);
    return it != entry.end() ? *it : Json();
}

std::optional<bool> hint(const Json& annotations, const char* key) {
    if (!annotations.is_object()) return std::nullopt;
    auto it = annotations.find(key);
    if (it == annotations.end() || !it->is_boolean()) return std::nullopt;
    return it->get<bool>();
}

// The upstream's Tool object as our declaration, under `served` name.
providers::ToolDeclaration declaration_of(const Json& tool, const std::string& served, std::weak_ptr<Upstream> upstream,
                                          const std::string& original) {
    providers::ToolDeclaration d;
    d.name = served;
    const Json annotations = member(tool, "annotations");
    d.title = text_of(tool, "title");
    if (d.title.empty() && annotations.is_object()) d.title = text_of(annotations, "title");
    d.description = text_of(tool, "description");
    Json input = member(tool, "inputSchema");
    d.input_schema = input.is_object() ? input : Json{{"type", "object"}};
    Json output = member(tool, "outputSchema");
    if (output.is_object()) d.output_schema = output;
    d.annotations.read_only = hint(annotations, "readOnlyHint");
    d.annotations.destructive = hint(annotations, "destructiveHint");
    d.annotations.idempotent = hint(annotations, "idempotentHint");
    d.annotations.open_world = hint(annotations, "openWorldHint");
    Json meta = member(tool, "_meta");
    if (meta.is_object()) d.meta = meta;
    Json execution = member(tool, "execution");
    if (execution.is_object()) d.execution = execution;
    Json icons = member(tool, "icons");
    if (icons.is_array()) d.icons = icons;
    auto lock = upstream.lock();
    d.service = lock ? lock->name() : std::string();
    // Upstream schemas are checked when declared, compiled when first called: a gateway
    // may front hundreds of tools of which a session calls a few.
    d.compile_on_first_call = true;
    d.handler = [upstream, original](RequestContext& ctx, const Json& arguments) -> Task<ToolResult> {
        auto target = upstream.lock();
        if (!target) throw ToolError(ToolErrorCode::server_unhealthy, "the upstream of this tool has been removed");
        return target->call_tool(ctx, original, arguments);
    };
    return d;
}

// Who serves an upstream's tools, pinned with each of them (providers/pins): what runs
// (the command and its arguments, or the URL) and what it says it is (serverInfo's name
// and version). Headers and environment are left out: they hold secrets, and a rotated
// token is not a new server.
Json identity_of(const Upstream& upstream) {
    const auto& settings = upstream.settings();
    Json identity = Json::object();
    if (!settings.url.empty()) identity["url"] = settings.url;
    else identity["command"] = settings.argv;
    const Json& info = upstream.catalog().server_info;
    if (info.is_object()) {
        for (const char* key : {"name", "version"}) {
            if (auto it = info.find(key); it != info.end() && it->is_string())
                identity[std::string("server_") + key] = *it;
        }
    }
    return identity;
}

// An upstream's contents for `original`, under the URI the client asked for (`served`):
// a client matches contents to its request by URI, and a prefixed URI (two upstreams list
// the same one) is the only one it knows.
// (`scan`: the upstream's content scan, pipeline/result_scan.hpp.)
Task<Json> read_as_served(std::weak_ptr<Upstream> upstream, RequestContext& ctx, std::string original,
                          std::string served, pipeline::ContentScanPolicy scan) {
    auto target = upstream.lock();
    if (!target) throw RpcError(-32002, "the upstream of this resource has been removed");
    Json contents = co_await target->read_resource(ctx, original);
    pipeline::scan_resource_contents(contents, scan.results, scan.injection_on(), target->name());
    if (served != original) {
        for (auto& item : contents) {
            if (!item.is_object()) continue;
            if (auto uri = item.find("uri"); uri != item.end() && *uri == original) *uri = served;
        }
    }
    co_return contents;
}

// prompts/get of an upstream's prompt, through its content scan (pipeline/result_scan.hpp).
Task<Json> scanned_prompt(std::weak_ptr<Upstream> upstream, RequestContext& ctx, std::string original, Json arguments,
                          pipeline::ContentScanPolicy scan) {
    auto target = upstream.lock();
    if (!target) throw RpcError(-32603, "the upstream of this prompt has been removed");
    Json result = co_await target->get_prompt(ctx, original, arguments);
    pipeline::scan_prompt_result(result, scan.results, scan.injection_on(), target->name());
    co_return result;
}

}  // namespace

Gateway::Gateway(GatewaySettings settings, providers::SourceContext& context)
    : settings_(std::move(settings)), context_(context) {}

Gateway::~Gateway() {
    stop();
    // The guard may be gone already (this gateway kept alive by work queued on the loop).
    if (!guard_alive_.expired()) {
        for (int id : pin_watches_) guard_->unwatch(id);
    }
}

void Gateway::start() {
    auto& network = context_.network();
    std::weak_ptr<Gateway> weak = weak_from_this();
    for (const auto& upstream_settings : settings_.upstreams) {
        Part part;
        part.context = context_.part(upstream_settings.name);
        // In tool search mode the upstreams' tools are not registered: ToolSearch holds them.
        if (!settings_.tool_search) part.tool_set = std::make_unique<providers::ToolSet>(*part.context);
        // Per upstream: its own budget estimate and deadline, under any `sources:` entry.
        pipeline::PolicyOverride defaults;
        if (upstream_settings.downstream_calls_estimate) {
            defaults.default_downstream_per_call = *upstream_settings.downstream_calls_estimate;
        }
        defaults.timeout = upstream_settings.request_timeout;
        // An upstream's answers are not Toolport's to know fresh, nor the same for every
        // caller (server-everything's get-env): not cached unless the operator turns it on
        // (`sources: {<upstream>: {cache: {mode: read_only}}}`), and then per caller.
        defaults.cache_mode = pipeline::CacheMode::off;
        defaults.cache_per_user = true;
        part.context->set_call_defaults(defaults);
        part.context->set_strict_arguments(upstream_settings.strict_arguments);
        Upstream::Listener listener;
        listener.catalog_changed = [weak]() {
            if (auto self = weak.lock()) self->sync();
        };
        part.upstream = std::make_shared<Upstream>(upstream_settings, network);
        std::weak_ptr<Upstream> weak_upstream = part.upstream;
        listener.resource_updated = [weak, weak_upstream](const std::string& uri) {
            auto self = weak.lock();
            auto upstream = weak_upstream.lock();
            if (self && upstream) self->resource_updated(*upstream, uri);
        };
        part.upstream->set_listener(std::move(listener));
        part.context->add_health(upstream_settings.name, [weak_upstream]() -> observability::ComponentHealth {
            auto upstream = weak_upstream.lock();
            if (!upstream) return {"stopped", observability::Severity::degraded};
            const auto severity = upstream->state() == Upstream::State::connected ? observability::Severity::ok
                                                                                  : observability::Severity::degraded;
            return {upstream->describe_state(), severity};
        });
        if (auto* guard = context_.pins()) {
            // An approval (or reset) of the upstream's pins: its prompts and templates (and
            // in tool search mode its tools) are judged again.
            guard_ = guard;
            guard_alive_ = guard->alive();
            pin_watches_.push_back(guard->watch(upstream_settings.name, [weak]() {
                if (auto self = weak.lock()) self->sync();
            }));
        }
        parts_.push_back(std::move(part));
    }
    // The server's own Skills extension (the context pack's, started before the gateway):
    // served with the upstreams' skills once an upstream declares the extension.
    local_skills_.list = context_.extension_method("skills/list");
    local_skills_.get = context_.extension_method("skills/get");
    local_skills_.directory = context_.extension_method("resources/directory/read");
    if (local_skills_.list) local_skills_.source = local_skills_.list->source;
    // A skill the server's own sources add or drop may make an upstream's skill of that name
    // change its URI: the skills are served again (after the change, on the loop).
    registry_listener_ = context_.registry().add_change_listener([weak, this](const CatalogChange& change) {
        if (change.kind != CatalogKind::resources || skills_settings_.is_null() || resync_posted_) return;
        const bool local = std::any_of(change.resources.begin(), change.resources.end(), [&](const auto& r) {
            return r->uri.size() > 9 && r->uri.compare(r->uri.size() - 9, 9, "/SKILL.md") == 0 &&
                   !skill_files_.count(r->uri) && r->source != context_.source_name() &&
                   std::none_of(parts_.begin(), parts_.end(),
                                [&](const Part& p) { return p.upstream->name() == r->source; });
        });
        if (!local) return;
        resync_posted_ = true;
        context_.executor().post([weak] {
            if (auto self = weak.lock()) {
                self->resync_posted_ = false;
                self->sync();
            }
        });
    });
    context_.on_subscription([weak](const std::string& uri, bool subscribed) {
        if (auto self = weak.lock()) self->subscription_changed(uri, subscribed);
    });
    for (const auto& profile : settings_.profiles) {
        // In tool search mode every profile gets search_tools and call_tool, which answer
        // within the caller's profile (the tools they reach are judged by this same view).
        auto meta_tools = settings_.tool_search ? ToolSearch::meta_tool_names() : std::vector<std::string>{};
        context_.add_view(profile.name, profile_view(profile, std::move(meta_tools), context_.source_name()),
                          profile.tokens);
    }
    if (settings_.tool_search) {
        // search_tools answers from a catalog that changes under it (an upstream comes
        // back, re-lists): never from the cache. The tools call_tool reaches keep theirs.
        pipeline::PolicyOverride no_cache;
        no_cache.cache_enabled = false;
        context_.set_call_defaults(no_cache);
        search_ = std::make_unique<ToolSearch>(context_);
        search_->declare();
    }
    // Each connects on its own: a slow or dead one delays none of the others.
    for (auto& part : parts_) part.upstream->start();
}

void Gateway::stop() {
    if (stopped_) return;
    stopped_ = true;
    if (registry_listener_ >= 0) context_.registry().remove_listener(std::exchange(registry_listener_, -1));
    for (auto& part : parts_) part.upstream->stop();
}

bool Gateway::settled() const {
    for (const auto& part : parts_) {
        if (!part.upstream->settled()) return false;
    }
    return true;
}

bool Gateway::has_registry_upstreams() const {
    return std::any_of(parts_.begin(), parts_.end(),
                       [](const Part& part) { return part.upstream->settings().registry.has_value(); });
}

std::size_t Gateway::apply_registry_updates() {
    std::size_t restarted = 0;
    for (auto& part : parts_) {
        if (part.upstream->apply_registry_update()) ++restarted;
    }
    return restarted;
}

bool Gateway::allowed(const UpstreamSettings& upstream, const std::string& name) const {
    for (const auto& pattern : upstream.deny) {
        if (glob_match(pattern, name)) return false;
    }
    if (upstream.allow.empty()) return true;
    for (const auto& pattern : upstream.allow) {
        if (glob_match(pattern, name)) return true;
    }
    return false;
}

void Gateway::sync() {
    if (stopped_) return;
    context_.registry().batch([&] {
        sync_tools();
        sync_prompts();
        sync_skills();
        sync_resources();
    });
}

void Gateway::sync_tools() {
    // Every upstream's tools that pass its filters, named together.
    struct Entry {
        std::size_t part;
        const Json* tool;
        std::string original;
    };
    std::vector<Entry> entries;
    std::vector<NameRequest> requests;
    std::set<std::string> ours;
    for (std::size_t p = 0; p < parts_.size(); ++p) {
        const auto& upstream = *parts_[p].upstream;
        for (const auto& tool : upstream.catalog().tools) {
            auto name = text_of(tool, "name");
            if (name.empty() || !allowed(upstream.settings(), name)) continue;
            entries.push_back({p, &tool, name});
            requests.push_back({upstream.settings().prefix, name, static_cast<int>(p), upstream.name()});
        }
        ours.insert(upstream.name());
    }
    std::set<std::string> reserved;
    for (const auto& [name, spec] : context_.registry().tools()) {
        if (!ours.count(spec->source)) reserved.insert(name);
    }
    if (search_) {
        for (const auto& name : search_->meta_tool_names()) reserved.insert(name);
    }
    std::vector<std::size_t> yielded;
    auto names = expose_names(requests, settings_.prefix_mode, settings_.separator, reserved, &yielded);
    warn_of_collisions("tool", requests, names, yielded);

    std::map<std::string, Json> listed;  // upstream name + '\0' + original → its Tool object
    std::vector<std::vector<providers::SyncedTool>> per_part(parts_.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& entry = entries[i];
        auto& part = parts_[entry.part];
        const std::string key = part.upstream->name() + '\0' + entry.original;
        // A tool served before that the upstream now describes otherwise: the client is
        // served the new text, and the operator hears which tool changed and how.
        if (auto before = listed_tools_.find(key); before != listed_tools_.end() && before->second != *entry.tool) {
            if (auto change = describe_tool_change(before->second, *entry.tool); !change.empty()) {
                spdlog::warn("upstream {}: tool {} changed while served: {}", part.upstream->name(),
                             util::sanitize_for_message(entry.original, 128), change);
            }
        }
        listed[key] = *entry.tool;
        if (names[i].empty()) {
            // prefix_mode: never. Another upstream's name was warned of above.
            if (yielded[i] == kNoCollision) {
                spdlog::warn(
                    "upstream {}: tool {} is left out: another source of this server has that name "
                    "(gateway.prefix_mode: never)",
                    part.upstream->name(), util::sanitize_for_message(entry.original, 128));
            }
            continue;
        }
        per_part[entry.part].push_back({declaration_of(*entry.tool, names[i], part.upstream, entry.original),
                                        part.upstream->name() + '\0' + entry.original});
    }
    listed_tools_ = std::move(listed);
    if (search_) {
        // The tools search_tools finds are pinned and judged as listed tools are
        // (ToolSet): what the upstream's policy withholds is neither found nor called.
        std::vector<ToolSearch::Withheld> withheld;
        if (auto* guard = context_.pins()) {
            for (std::size_t p = 0; p < parts_.size(); ++p) {
                const Json identity = identity_of(*parts_[p].upstream);
                std::vector<stores::PinRecord> records;
                for (const auto& tool : per_part[p]) {
                    records.push_back(pins::make_pin(pins::kToolKind, tool.declaration.name,
                                                     pins::tool_definition(tool.declaration, identity)));
                }
                auto screening = guard->screen(parts_[p].upstream->name(), pins::kToolKind, records,
                                               parts_[p].upstream->catalog().listed);
                for (auto& w : screening.withheld) {
                    auto it = std::find_if(per_part[p].begin(), per_part[p].end(),
                                           [&](const auto& t) { return t.declaration.name == w.name; });
                    if (it == per_part[p].end()) continue;
                    withheld.push_back({std::move(*it), std::move(w.message), std::move(w.suggestion)});
                    per_part[p].erase(it);
                }
            }
        }
        search_->replace(std::move(per_part), std::move(withheld));
        return;
    }
    for (std::size_t p = 0; p < parts_.size(); ++p) {
        parts_[p].tool_set->set_identity(identity_of(*parts_[p].upstream));
        auto changes = parts_[p].tool_set->replace(std::move(per_part[p]), parts_[p].upstream->catalog().listed);
        if (changes.any()) {
            spdlog::info("upstream {}: {} tools served ({} added, {} changed, {} removed, {} left out)",
                         parts_[p].upstream->name(), parts_[p].tool_set->size(), changes.added, changes.changed,
                         changes.removed, changes.refused);
        }
    }
}

void Gateway::warn_of_collisions(const char* kind, const std::vector<NameRequest>& requests,
                                 const std::vector<std::string>& names, const std::vector<std::size_t>& yielded) {
    std::set<std::string> now;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (yielded[i] == kNoCollision) continue;
        const auto& keeper = requests[yielded[i]].upstream;
        const auto& other = requests[i].upstream;
        // Once per collision, not at every re-listing while it lasts.
        std::string key = std::string(kind) + '\0' + keeper + '\0' + other + '\0' + requests[i].original;
        if (!warned_collisions_.count(key)) {
            const std::string original = util::sanitize_for_message(requests[i].original, 128);
            if (names[i].empty()) {
                spdlog::warn(
                    "upstream {} lists {} {}, which upstream {} (configured earlier) already serves: {}'s "
                    "is left out (gateway.prefix_mode: never)",
                    other, kind, original, keeper, other);
            } else {
                spdlog::warn(
                    "upstream {} lists {} {}, which upstream {} (configured earlier) already serves under "
                    "that name: {}'s is served as {}",
                    other, kind, original, keeper, other, names[i]);
            }
        }
        now.insert(std::move(key));
    }
    // A collision that ended and comes back is told again.
    std::erase_if(warned_collisions_, [&](const std::string& key) {
        return key.rfind(std::string(kind) + '\0', 0) == 0 && !now.count(key);
    });
    warned_collisions_.insert(now.begin(), now.end());
}

void Gateway::sync_prompts() {
    struct Entry {
        std::size_t part;
        const Json* prompt;
        std::string original;
    };
    std::vector<Entry> entries;
    std::vector<NameRequest> requests;
    for (std::size_t p = 0; p < parts_.size(); ++p) {
        const auto& upstream = *parts_[p].upstream;
        for (const auto& prompt : upstream.catalog().prompts) {
            auto name = text_of(prompt, "name");
            if (name.empty() || !allowed(upstream.settings(), name)) continue;
            entries.push_back({p, &prompt, name});
            requests.push_back({upstream.settings().prefix, name, static_cast<int>(p), upstream.name()});
        }
    }
    std::set<std::string> reserved;
    for (const auto& [name, spec] : context_.registry().prompts()) {
        if (!prompts_.count(name)) reserved.insert(name);
    }
    std::vector<std::size_t> yielded;
    auto names = expose_names(requests, settings_.prefix_mode, settings_.separator, reserved, &yielded);
    warn_of_collisions("prompt", requests, names, yielded);

    // Pinning: each upstream's prompts, as served, against its pins.
    std::map<std::string, std::size_t> withheld;
    if (auto* guard = context_.pins()) {
        std::vector<std::vector<stores::PinRecord>> records(parts_.size());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (names[i].empty()) continue;
            const auto& entry = entries[i];
            records[entry.part].push_back(
                pins::make_pin(pins::kPromptKind, names[i],
                               pins::prompt_definition(*entry.prompt, identity_of(*parts_[entry.part].upstream))));
        }
        for (std::size_t p = 0; p < parts_.size(); ++p) {
            auto screening = guard->screen(parts_[p].upstream->name(), pins::kPromptKind, records[p],
                                           parts_[p].upstream->catalog().listed);
            for (auto& w : screening.withheld) {
                parts_[p].context->withhold_prompt(w.name, std::move(w.message), std::move(w.suggestion));
                withheld[w.name] = p;
            }
        }
    }
    for (const auto& [name, p] : withheld_prompts_) {
        if (!withheld.count(name) && p < parts_.size()) parts_[p].context->release_withheld_prompt(name);
    }
    withheld_prompts_ = withheld;

    std::map<std::string, Target> served;
    std::map<std::string, std::string> prints;
    auto& registry = context_.registry();
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (names[i].empty() || withheld.count(names[i])) continue;  // withheld: removed below if served
        const auto& entry = entries[i];
        auto upstream = parts_[entry.part].upstream;
        served[names[i]] = {upstream, entry.original};
        std::string print = upstream->name() + '\0' + entry.prompt->dump();
        prints[names[i]] = print;
        if (auto old = prompt_prints_.find(names[i]); old != prompt_prints_.end() && old->second == print) continue;

        PromptSpec spec;
        spec.name = names[i];
        spec.source = upstream->name();  // views and scopes judge it as the upstream's
        spec.title = text_of(*entry.prompt, "title");
        spec.description = text_of(*entry.prompt, "description");
        if (auto args = member(*entry.prompt, "arguments"); args.is_array()) {
            for (const auto& a : args) {
                if (!a.is_object() || text_of(a, "name").empty()) continue;
                spec.arguments.push_back(
                    {text_of(a, "name"), text_of(a, "title"), text_of(a, "description"), a.value("required", false)});
            }
        }
        spec.icons = member(*entry.prompt, "icons");
        std::weak_ptr<Upstream> weak = upstream;
        const std::string original = entry.original;
        spec.handler = [weak, original,
                        scan = parts_[entry.part].context->read_scan_policy()](RequestContext& ctx,
                                                                               const Json& arguments) -> Task<Json> {
            return scanned_prompt(weak, ctx, original, arguments, scan);
        };
        if (upstream->catalog().completions) {
            spec.completer = [weak, original](RequestContext& ctx, const std::string& argument,
                                              const std::string& value, const Json& context) -> Task<Json> {
                auto target = weak.lock();
                if (!target) throw RpcError(-32603, "the upstream of this prompt has been removed");
                return target->complete(ctx, {{"type", "ref/prompt"}, {"name", original}}, argument, value, context);
            };
        }
        registry.add_prompt(std::move(spec));
    }
    for (const auto& [name, print] : prompt_prints_) {
        if (!prints.count(name)) registry.remove_prompt(name);
    }
    prompts_ = std::move(served);
    prompt_prints_ = std::move(prints);
}

void Gateway::sync_resources() {
    // URIs are kept, unless two upstreams list the same one, or another source of this
    // server (or a skill file, sync_skills) has it: then each gets its prefix as a scheme
    // prefix ("github+file:///README.md"), which reads map back. The files of an upstream's
    // skills are served by sync_skills, under their skills' URIs.
    auto& registry = context_.registry();
    auto skill_file = [&](const Upstream& upstream, const std::string& uri) {
        return std::any_of(skill_roots_.begin(), skill_roots_.end(), [&](const auto& root) {
            return root.second.upstream.get() == &upstream &&
                   rebase_uri(uri, root.second.original, root.second.original);
        });
    };
    std::map<std::string, int> holders;
    std::map<std::string, int> template_holders;
    for (const auto& [uri, spec] : registry.resources()) {
        if (!resource_prints_.count(uri)) holders[uri] = 1;
    }
    for (const auto& t : registry.resource_templates()) {
        if (!template_prints_.count(t->uri_template)) template_holders[t->uri_template] = 1;
    }
    for (const auto& part : parts_) {
        for (const auto& r : part.upstream->catalog().resources) {
            if (!skill_file(*part.upstream, text_of(r, "uri"))) ++holders[text_of(r, "uri")];
        }
        for (const auto& t : part.upstream->catalog().resource_templates) ++template_holders[text_of(t, "uriTemplate")];
    }
    // Pinning: each upstream's templates, under the URI templates they are served as.
    std::map<std::string, std::size_t> withheld;
    if (auto* guard = context_.pins()) {
        std::set<std::string> taken;
        for (std::size_t p = 0; p < parts_.size(); ++p) {
            const auto& upstream = *parts_[p].upstream;
            const Json identity = identity_of(upstream);
            std::vector<stores::PinRecord> records;
            for (const auto& t : upstream.catalog().resource_templates) {
                const std::string pattern = text_of(t, "uriTemplate");
                if (pattern.empty()) continue;
                const std::string exposed = template_holders[pattern] > 1 ? upstream.settings().prefix + "+" + pattern
                                                                          : pattern;
                if (!taken.insert(exposed).second) continue;  // served once, as below
                records.push_back(pins::make_pin(pins::kTemplateKind, exposed, pins::template_definition(t, identity)));
            }
            auto screening = guard->screen(upstream.name(), pins::kTemplateKind, records, upstream.catalog().listed);
            for (auto& w : screening.withheld) {
                parts_[p].context->withhold_template(w.name, std::move(w.message), std::move(w.suggestion));
                withheld[w.name] = p;
            }
        }
    }
    for (const auto& [pattern, p] : withheld_templates_) {
        if (!withheld.count(pattern) && p < parts_.size()) parts_[p].context->release_withheld_template(pattern);
    }
    withheld_templates_ = withheld;

    std::map<std::string, Target> served, served_templates;
    std::map<std::string, std::string> prints, template_prints;
    std::set<std::string> held;  // withheld templates met below
    for (const auto& part : parts_) {
        auto upstream = part.upstream;
        std::weak_ptr<Upstream> weak = upstream;
        const std::string& prefix = upstream->settings().prefix;
        const pipeline::ContentScanPolicy scan = part.context->read_scan_policy();
        for (const auto& r : upstream->catalog().resources) {
            const std::string uri = text_of(r, "uri");
            if (uri.empty() || skill_file(*upstream, uri)) continue;
            const std::string exposed = holders[uri] > 1 ? prefix + "+" + uri : uri;
            if (served.count(exposed)) continue;
            served[exposed] = {upstream, uri};
            std::string print = upstream->name() + '\0' + r.dump();
            prints[exposed] = print;
            if (auto old = resource_prints_.find(exposed); old != resource_prints_.end() && old->second == print)
                continue;
            ResourceSpec spec;
            spec.uri = exposed;
            spec.source = upstream->name();  // views and scopes judge it as the upstream's
            spec.name = text_of(r, "name");
            spec.title = text_of(r, "title");
            spec.description = text_of(r, "description");
            spec.mime_type = text_of(r, "mimeType");
            if (auto size = member(r, "size"); size.is_number_integer()) spec.size = size.get<long long>();
            spec.annotations = member(r, "annotations");
            spec.icons = member(r, "icons");
            spec.reader = [weak, uri, exposed, scan](RequestContext& ctx, const std::string&, const Json&) -> Task<Json> {
                return read_as_served(weak, ctx, uri, exposed, scan);
            };
            registry.add_resource(std::move(spec));
        }
        for (const auto& t : upstream->catalog().resource_templates) {
            const std::string pattern = text_of(t, "uriTemplate");
            if (pattern.empty()) continue;
            const std::string exposed = template_holders[pattern] > 1 ? prefix + "+" + pattern : pattern;
            if (served_templates.count(exposed) || held.count(exposed)) continue;
            if (withheld.count(exposed)) {
                held.insert(exposed);  // removed below if it was served
                continue;
            }
            served_templates[exposed] = {upstream, pattern};
            std::string print = upstream->name() + '\0' + t.dump();
            template_prints[exposed] = print;
            if (auto old = template_prints_.find(exposed); old != template_prints_.end() && old->second == print)
                continue;
            ResourceTemplateSpec spec;
            spec.uri_template = exposed;
            spec.source = upstream->name();
            spec.name = text_of(t, "name");
            spec.title = text_of(t, "title");
            spec.description = text_of(t, "description");
            spec.mime_type = text_of(t, "mimeType");
            spec.annotations = member(t, "annotations");
            spec.icons = member(t, "icons");
            const std::size_t strip = exposed.size() - pattern.size();  // the "prefix+" put before
            spec.reader = [weak, strip, scan](RequestContext& ctx, const std::string& asked, const Json&) -> Task<Json> {
                return read_as_served(weak, ctx, asked.substr(strip), asked, scan);
            };
            if (upstream->catalog().completions) {
                spec.completer = [weak, pattern](RequestContext& ctx, const std::string& argument,
                                                 const std::string& value, const Json& context) -> Task<Json> {
                    auto target = weak.lock();
                    if (!target) throw RpcError(-32603, "the upstream of this resource has been removed");
                    return target->complete(ctx, {{"type", "ref/resource"}, {"uri", pattern}}, argument, value, context);
                };
            }
            registry.add_resource_template(std::move(spec));
        }
    }
    for (const auto& [uri, print] : resource_prints_) {
        if (!prints.count(uri)) registry.remove_resource(uri);
    }
    for (const auto& [pattern, print] : template_prints_) {
        if (!template_prints.count(pattern)) registry.remove_resource_template(pattern);
    }
    resources_ = std::move(served);
    templates_ = std::move(served_templates);
    resource_prints_ = std::move(prints);
    template_prints_ = std::move(template_prints);
}

void Gateway::resource_updated(const Upstream& upstream, const std::string& uri) {
    // The URI as served: kept, or with the upstream's prefix when it was rewritten.
    for (const auto* served : {&resources_, &skill_files_}) {
        for (const auto& [exposed, target] : *served) {
            if (target.upstream.get() == &upstream && target.original == uri) return context_.resource_updated(exposed);
        }
    }
    // A URI of a template (not listed): served as it is, or with the prefix of the upstream's
    // template that matches it, when that pattern collided with another upstream's.
    std::vector<ServedTemplate> own;
    for (const auto& [exposed, target] : templates_) {
        if (target.upstream.get() == &upstream) own.push_back({exposed, target.original});
    }
    auto served = served_uris_of_update(uri, own);
    if (served.empty()) served.push_back(uri);  // none matches: the URI as the upstream named it
    for (const auto& u : served) context_.resource_updated(u);
}

void Gateway::subscription_changed(const std::string& uri, bool subscribed) {
    auto apply = [&](Upstream& upstream, const std::string& original) {
        if (subscribed) upstream.subscribe(original);
        else upstream.unsubscribe(original);
    };
    if (auto it = resources_.find(uri); it != resources_.end()) return apply(*it->second.upstream, it->second.original);
    if (auto it = skill_files_.find(uri); it != skill_files_.end())
        return apply(*it->second.upstream, it->second.original);
    auto match = context_.registry().match_template(uri);
    if (!match) return;
    if (auto it = templates_.find(match->first->uri_template); it != templates_.end()) {
        const std::size_t strip = it->first.size() - it->second.original.size();
        apply(*it->second.upstream, uri.substr(strip));
    }
}

}  // namespace toolport::gateway
