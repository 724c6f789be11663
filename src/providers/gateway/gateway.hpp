// Gateway: the upstream MCP servers' tools, resources, resource templates and prompts
// served as this server's own. Whenever an upstream's catalog changes (first listing,
// list_changed, a reconnect), the whole aggregate is computed again — names (see
// exposed_names.hpp), filters, URI collisions — and only what changed is replaced in the
// registry, in one batch: clients hear one list_changed per real change.
//
// Each upstream registers under its own name (its tools' source and service), so the
// pipeline's per-source settings, per-service breaker and budget apply per upstream, and
// /health shows it as a component ("connected (2025-06-18)", "reconnecting in 2 s: ...").
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "providers/gateway/exposed_names.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/gateway/upstream.hpp"
#include "providers/source.hpp"
#include "providers/tool_set.hpp"

namespace toolport::gateway {

class ToolSearch;

class Gateway : public std::enable_shared_from_this<Gateway> {
public:
    Gateway(GatewaySettings settings, providers::SourceContext& context);
    ~Gateway();

    void start();
    void stop();
    // Whether every upstream's first connection attempt is over.
    bool settled() const;
    // Whether any upstream is named by its registry entry.
    bool has_registry_upstreams() const;
    // Each registry upstream whose kept entry moved (`toolport registry update`) runs the
    // new one (Upstream::apply_registry_update); on the loop. Returns how many restarted.
    std::size_t apply_registry_updates();

private:
    // Where a served name or URI leads.
    struct Target {
        std::shared_ptr<Upstream> upstream;
        std::string original;  // the upstream's own prompt name, URI or URI template
    };
    struct Part {
        std::shared_ptr<Upstream> upstream;
        std::unique_ptr<providers::SourceContext> context;
        std::unique_ptr<providers::ToolSet> tool_set;
    };

    void sync();
    void sync_tools();
    void sync_prompts();
    void sync_resources();
    // The Skills extension (gateway_skills.cpp): the upstreams' skills under the URIs
    // skill_uris.hpp gives them, each file a resource of its upstream, and skills/list,
    // skills/get and resources/directory/read served for the server's own skills and the
    // upstreams' together, once an upstream declares the extension.
    void sync_skills();
    void declare_skills();
    Task<Json> list_skills(RequestContext& ctx);
    Task<Json> get_skill(RequestContext& ctx);
    Task<Json> read_skill_directory(RequestContext& ctx);
    // The skill entry an upstream answered with, under its served URIs (noted in its
    // cache first); null when the gateway does not serve that skill (prefix_mode: never).
    Json served_skill(Upstream& upstream, const Json& entry);
    struct SkillRoute {
        std::shared_ptr<Upstream> upstream;
        std::string original;  // the skill's root as the upstream serves it
        std::string served;    // and as the gateway does
    };
    // The served skill `uri` lies in (its root or a file under it).
    const SkillRoute* skill_route(const std::string& uri) const;
    bool visible(const RequestContext& ctx, const Upstream& upstream) const;
    bool allowed(const UpstreamSettings& upstream, const std::string& name) const;
    // Warns (once per collision while it lasts) of each name an upstream wanted that an
    // earlier upstream keeps (exposed_names.hpp).
    void warn_of_collisions(const char* kind, const std::vector<NameRequest>& requests,
                            const std::vector<std::string>& names, const std::vector<std::size_t>& yielded);
    void resource_updated(const Upstream& upstream, const std::string& uri);
    void subscription_changed(const std::string& uri, bool subscribed);

    GatewaySettings settings_;
    providers::SourceContext& context_;
    std::vector<Part> parts_;
    std::unique_ptr<ToolSearch> search_;

    std::map<std::string, Target> prompts_;    // served prompt name → target
    std::map<std::string, Target> resources_;  // served URI → target
    std::map<std::string, Target> templates_;  // served URI template → target
    // What each served entry was registered from, to replace only what changed.
    std::map<std::string, std::string> prompt_prints_, resource_prints_, template_prints_;
    // Each served tool as its upstream last listed it (upstream name + '\0' + its name), to
    // tell the operator which tool changed and how.
    std::map<std::string, Json> listed_tools_;
    std::set<std::string> warned_collisions_;

    // Skills: served root → its upstream; the upstreams' skill files registered as
    // resources (served URI → upstream and its own URI) and what each was registered from.
    std::map<std::string, SkillRoute> skill_roots_;
    std::map<std::string, Target> skill_files_;
    std::map<std::string, std::string> skill_file_prints_;
    // The Skills extension of the server's other sources (the context pack), as it was
    // when the gateway started: served alongside the upstreams' skills.
    struct LocalSkills {
        std::optional<ExtensionMethod> list, get, directory;
        std::string source;
    } local_skills_;
    Json skills_settings_;  // what the gateway declared (null: not yet)
    int registry_listener_ = -1;
    bool resync_posted_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    // Pinning (providers/pin_guard.hpp): the prompts and templates it withholds (served
    // name or URI template → the part that withholds it), and the guard's watches, which
    // sync again after an approval.
    std::map<std::string, std::size_t> withheld_prompts_, withheld_templates_;
    std::vector<int> pin_watches_;
    pins::PinGuard* guard_ = nullptr;
    std::weak_ptr<bool> guard_alive_;
    bool stopped_ = false;
};

}  // namespace toolport::gateway
