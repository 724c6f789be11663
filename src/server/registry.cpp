#include "server/registry.hpp"

#include <algorithm>
#include <utility>

#include "server/error_result_guard.hpp"
#include "server/tool_error.hpp"
#include "server/uri_template.hpp"

namespace toolport {

namespace {
void put_if(Json& j, const char* key, const std::string& value) {
    if (!value.empty()) j[key] = value;
}
void put_if(Json& j, const char* key, const Json& value) {
    if (!value.is_null()) j[key] = value;
}
}  // namespace

ToolResult ToolSpec::error_result(const ToolError& error) const {
    // The engine's own shape (ToolError::to_result) goes to _meta["toolport/error"] wherever it
    // does not fit the tool's outputSchema (tango's, every declared success envelope); a
    // source's own error shape (on_error) that does not fit its schema is reported.
    ToolResult result = on_error ? on_error(error) : error.to_result();
    guard_error_result(*this, result, static_cast<bool>(on_error));
    return result;
}

Json ToolSpec::definition() const {
    Json j = {{"name", name}};
    put_if(j, "title", title);
    put_if(j, "description", description);
    j["inputSchema"] = input_schema;
    put_if(j, "outputSchema", output_schema);
    put_if(j, "annotations", annotations);
    put_if(j, "icons", icons);
    put_if(j, "execution", execution);
    put_if(j, "_meta", meta);
    return j;
}

Json ResourceSpec::definition() const {
    Json j = {{"uri", uri}, {"name", name}};
    put_if(j, "title", title);
    put_if(j, "description", description);
    put_if(j, "mimeType", mime_type);
    if (size) j["size"] = *size;
    put_if(j, "annotations", annotations);
    put_if(j, "icons", icons);
    return j;
}

Json ResourceTemplateSpec::definition() const {
    Json j = {{"uriTemplate", uri_template}, {"name", name}};
    put_if(j, "title", title);
    put_if(j, "description", description);
    put_if(j, "mimeType", mime_type);
    put_if(j, "annotations", annotations);
    put_if(j, "icons", icons);
    return j;
}

std::optional<Json> ResourceTemplateSpec::match(const std::string& uri) const {
    if (parsed_template && parsed_template->pattern() == uri_template) return parsed_template->match(uri);
    return UriTemplate(uri_template).match(uri);
}

Json PromptSpec::definition() const {
    Json j = {{"name", name}};
    put_if(j, "title", title);
    put_if(j, "description", description);
    if (!arguments.empty()) {
        Json args = Json::array();
        for (const auto& a : arguments) {
            Json arg = {{"name", a.name}};
            put_if(arg, "title", a.title);
            put_if(arg, "description", a.description);
            if (a.required) arg["required"] = true;
            args.push_back(std::move(arg));
        }
        j["arguments"] = std::move(args);
    }
    put_if(j, "icons", icons);
    return j;
}

namespace {

// One change of a kind, with the entries it touched (nulls left out).
template <typename Spec>
CatalogChange change_of(CatalogKind kind, std::vector<std::shared_ptr<const Spec>> CatalogChange::*entries,
                        std::initializer_list<std::shared_ptr<const Spec>> touched) {
    CatalogChange change;
    change.kind = kind;
    for (const auto& e : touched) {
        if (e) (change.*entries).push_back(e);
    }
    return change;
}

template <typename Map>
typename Map::mapped_type entry_of(const Map& map, const std::string& key) {
    auto it = map.find(key);
    return it == map.end() ? nullptr : it->second;
}

}  // namespace

void Registry::add_tool(ToolSpec spec) {
    auto name = spec.name;
    auto added = std::make_shared<const ToolSpec>(std::move(spec));
    auto old = entry_of(tools_, name);
    tools_[name] = added;
    changed(change_of(CatalogKind::tools, &CatalogChange::tools, {old, added}));
}

bool Registry::remove_tool(const std::string& name) {
    auto old = entry_of(tools_, name);
    if (!old) return false;
    tools_.erase(name);
    changed(change_of(CatalogKind::tools, &CatalogChange::tools, {old}));
    return true;
}

void Registry::add_resource(ResourceSpec spec) {
    auto uri = spec.uri;
    auto added = std::make_shared<const ResourceSpec>(std::move(spec));
    auto old = entry_of(resources_, uri);
    resources_[uri] = added;
    changed(change_of(CatalogKind::resources, &CatalogChange::resources, {old, added}));
}

bool Registry::remove_resource(const std::string& uri) {
    auto old = entry_of(resources_, uri);
    if (!old) return false;
    resources_.erase(uri);
    changed(change_of(CatalogKind::resources, &CatalogChange::resources, {old}));
    return true;
}

void Registry::add_resource_template(ResourceTemplateSpec spec) {
    if (!spec.parsed_template || spec.parsed_template->pattern() != spec.uri_template) {
        spec.parsed_template = std::make_shared<const UriTemplate>(spec.uri_template);
    }
    auto added = std::make_shared<const ResourceTemplateSpec>(std::move(spec));
    for (auto& existing : templates_) {
        if (existing->uri_template == added->uri_template) {
            auto old = std::exchange(existing, added);
            changed(change_of(CatalogKind::resources, &CatalogChange::templates, {old, added}));
            return;
        }
    }
    templates_.push_back(added);
    changed(change_of(CatalogKind::resources, &CatalogChange::templates, {added}));
}

bool Registry::remove_resource_template(const std::string& uri_template) {
    auto it = std::find_if(templates_.begin(), templates_.end(),
                           [&](const auto& t) { return t->uri_template == uri_template; });
    if (it == templates_.end()) return false;
    auto old = *it;
    templates_.erase(it);
    changed(change_of(CatalogKind::resources, &CatalogChange::templates, {old}));
    return true;
}

void Registry::add_prompt(PromptSpec spec) {
    auto name = spec.name;
    auto added = std::make_shared<const PromptSpec>(std::move(spec));
    auto old = entry_of(prompts_, name);
    prompts_[name] = added;
    changed(change_of(CatalogKind::prompts, &CatalogChange::prompts, {old, added}));
}

bool Registry::remove_prompt(const std::string& name) {
    auto old = entry_of(prompts_, name);
    if (!old) return false;
    prompts_.erase(name);
    changed(change_of(CatalogKind::prompts, &CatalogChange::prompts, {old}));
    return true;
}

const ToolSpec* Registry::find_tool(const std::string& name) const {
    auto it = tools_.find(name);
    return it == tools_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const ToolSpec> Registry::tool_ptr(const std::string& name) const {
    auto it = tools_.find(name);
    return it == tools_.end() ? nullptr : it->second;
}

const ResourceSpec* Registry::find_resource(const std::string& uri) const {
    auto it = resources_.find(uri);
    return it == resources_.end() ? nullptr : it->second.get();
}

std::optional<std::pair<std::shared_ptr<const ResourceTemplateSpec>, Json>> Registry::match_template(
    const std::string& uri) const {
    for (const auto& t : templates_) {
        if (auto vars = t->match(uri)) return std::make_pair(t, std::move(*vars));
    }
    return std::nullopt;
}

std::optional<std::pair<std::shared_ptr<const ResourceTemplateSpec>, Json>> Registry::match_template(
    const std::string& uri, const std::function<bool(const ResourceTemplateSpec&)>& accept) const {
    for (const auto& t : templates_) {
        if (!accept(*t)) continue;
        if (auto vars = t->match(uri)) return std::make_pair(t, std::move(*vars));
    }
    return std::nullopt;
}

const ResourceTemplateSpec* Registry::find_template(const std::string& uri_template) const {
    for (const auto& t : templates_) {
        if (t->uri_template == uri_template) return t.get();
    }
    return nullptr;
}

const PromptSpec* Registry::find_prompt(const std::string& name) const {
    auto it = prompts_.find(name);
    return it == prompts_.end() ? nullptr : it->second.get();
}

int Registry::add_listener(Listener listener) {
    return add_change_listener([listener = std::move(listener)](const CatalogChange& change) { listener(change.kind); });
}

int Registry::add_change_listener(ChangeListener listener) {
    listeners_.emplace(++next_listener_, std::move(listener));
    return next_listener_;
}

void Registry::remove_listener(int id) { listeners_.erase(id); }

void Registry::batch(const std::function<void()>& fn) {
    // Whatever fn managed to change before it threw is still announced.
    struct Flush {
        Registry& r;
        ~Flush() {
            if (--r.batch_depth_ > 0) return;
            for (auto& pending : r.pending_) {
                if (!pending) continue;
                CatalogChange change = std::move(*pending);
                pending.reset();
                r.changed(std::move(change));
            }
        }
    };
    ++batch_depth_;
    Flush flush{*this};
    fn();
}

void Registry::changed(CatalogChange change) {
    if (batch_depth_ > 0) {
        auto& pending = pending_[static_cast<int>(change.kind)];
        if (!pending) {
            pending = std::move(change);
            return;
        }
        auto append = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
        append(pending->tools, change.tools);
        append(pending->resources, change.resources);
        append(pending->templates, change.templates);
        append(pending->prompts, change.prompts);
        return;
    }
    // Copy: a listener may add or remove listeners.
    auto listeners = listeners_;
    for (auto& [id, l] : listeners) l(change);
}

}  // namespace toolport
