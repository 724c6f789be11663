#include "server/registry.hpp"

#include <algorithm>

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

ToolResult ToolSpec::error_result(const ToolError& error) const { return on_error ? on_error(error) : error.to_result(); }

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

void Registry::add_tool(ToolSpec spec) {
    auto name = spec.name;
    tools_[name] = std::make_shared<const ToolSpec>(std::move(spec));
    changed(CatalogKind::tools);
}

bool Registry::remove_tool(const std::string& name) {
    if (tools_.erase(name) == 0) return false;
    changed(CatalogKind::tools);
    return true;
}

void Registry::add_resource(ResourceSpec spec) {
    auto uri = spec.uri;
    resources_[uri] = std::make_shared<const ResourceSpec>(std::move(spec));
    changed(CatalogKind::resources);
}

bool Registry::remove_resource(const std::string& uri) {
    if (resources_.erase(uri) == 0) return false;
    changed(CatalogKind::resources);
    return true;
}

void Registry::add_resource_template(ResourceTemplateSpec spec) {
    if (!spec.parsed_template || spec.parsed_template->pattern() != spec.uri_template) {
        spec.parsed_template = std::make_shared<const UriTemplate>(spec.uri_template);
    }
    for (auto& existing : templates_) {
        if (existing->uri_template == spec.uri_template) {
            existing = std::make_shared<const ResourceTemplateSpec>(std::move(spec));
            changed(CatalogKind::resources);
            return;
        }
    }
    templates_.push_back(std::make_shared<const ResourceTemplateSpec>(std::move(spec)));
    changed(CatalogKind::resources);
}

bool Registry::remove_resource_template(const std::string& uri_template) {
    auto it = std::find_if(templates_.begin(), templates_.end(),
                           [&](const auto& t) { return t->uri_template == uri_template; });
    if (it == templates_.end()) return false;
    templates_.erase(it);
    changed(CatalogKind::resources);
    return true;
}

void Registry::add_prompt(PromptSpec spec) {
    auto name = spec.name;
    prompts_[name] = std::make_shared<const PromptSpec>(std::move(spec));
    changed(CatalogKind::prompts);
}

bool Registry::remove_prompt(const std::string& name) {
    if (prompts_.erase(name) == 0) return false;
    changed(CatalogKind::prompts);
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
            for (int k = 0; k < 3; ++k) {
                if (r.pending_[k]) {
                    r.pending_[k] = false;
                    r.changed(static_cast<CatalogKind>(k));
                }
            }
        }
    };
    ++batch_depth_;
    Flush flush{*this};
    fn();
}

void Registry::changed(CatalogKind kind) {
    if (batch_depth_ > 0) {
        pending_[static_cast<int>(kind)] = true;
        return;
    }
    // Copy: a listener may add or remove listeners.
    auto listeners = listeners_;
    for (auto& [id, l] : listeners) l(kind);
}

}  // namespace toolport
