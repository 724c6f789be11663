#include "providers/context/skills/skills_extension.hpp"

#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "server/registry.hpp"
#include "util/base64.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

using protocol::error_code::kInternalError;
using protocol::error_code::kInvalidParams;

namespace {

// Entries per skills/list page: each costs reading and hashing the skill's files.
constexpr std::size_t kSkillsPerPage = 50;

std::string uri_param(const Json& params) {
    const Json* uri = params.is_object() && params.contains("uri") ? &params["uri"] : nullptr;
    if (!uri || !uri->is_string()) {
        throw RpcError(kInvalidParams, "Invalid params: \"uri\" must be a string");
    }
    return uri->get<std::string>();
}

std::optional<std::string> cursor_param(const Json& params) {
    if (!params.is_object() || !params.contains("cursor") || params["cursor"].is_null()) return std::nullopt;
    if (!params["cursor"].is_string()) throw RpcError(kInvalidParams, "Invalid params: \"cursor\" must be a string");
    return params["cursor"].get<std::string>();
}

// A file the catalog cannot read is the server's failure, not the client's.
[[noreturn]] void internal_failure(const std::exception& e) {
    throw RpcError(kInternalError, std::string("Internal error: ") + e.what());
}

}  // namespace

SkillsExtension::SkillsExtension(ContextPack& pack) : pack_(pack), catalog_(*pack.library) {}

void SkillsExtension::serve(providers::SourceContext& context) {
    registry_ = &context.registry();
    executor_ = &context.executor();
    // The skills are the context pack's: a caller whose view or scopes leave the pack out
    // sees neither its skill:// resources nor the extension's methods (McpServer::visible).
    source_ = context.source_name();
    std::map<std::string, ExtensionMethod> methods;

    methods["skills/list"] = {[this](RequestContext& ctx) -> Task<Json> {
                                  std::string after;
                                  if (auto cursor = cursor_param(ctx.params())) {
                                      auto decoded = util::base64url_decode(*cursor);
                                      if (!decoded) throw RpcError(kInvalidParams, "Invalid params: unknown cursor");
                                      after = std::move(*decoded);
                                  }
                                  co_return co_await pack_.workers.run(ctx.executor(), ctx.cancel_token(), [this, after] {
                                      Json page = Json::array();
                                      std::string last;
                                      bool more = false;
                                      try {
                                          for (const auto& p : catalog_.skills()) {
                                              const std::string uri = SkillCatalog::skill_uri(p.category, p.name);
                                              if (!after.empty() && uri <= after) continue;
                                              if (page.size() == kSkillsPerPage) {
                                                  more = true;
                                                  break;
                                              }
                                              page.push_back(catalog_.entry(p));
                                              last = uri;
                                          }
                                      } catch (const ContextError& e) {
                                          internal_failure(e);
                                      }
                                      Json result = {{"skills", std::move(page)}};
                                      if (more) result["nextCursor"] = util::base64url_encode(last);
                                      return result;
                                  });
                              },
                              true};

    methods["skills/get"] = {[this](RequestContext& ctx) -> Task<Json> {
                                 const std::string uri = uri_param(ctx.params());
                                 co_return co_await pack_.workers.run(ctx.executor(), ctx.cancel_token(), [this, uri] {
                                     auto where = catalog_.locate(uri);
                                     if (!where || where->path != "SKILL.md") {
                                         throw RpcError(
                                             kInvalidParams,
                                             fmt::format("Invalid params: no skill is served at {}; skills/list "
                                                         "names the skills and their SKILL.md URIs",
                                                         util::sanitize_for_message(uri, 300)),
                                             Json{{"uri", uri}});
                                     }
                                     try {
                                         return Json{{"skill", catalog_.entry(where->pattern)}};
                                     } catch (const ContextError& e) {
                                         internal_failure(e);
                                     }
                                 });
                             },
                             true};

    methods["resources/directory/read"] = {
        [this](RequestContext& ctx) -> Task<Json> {
            const std::string uri = uri_param(ctx.params());
            if (cursor_param(ctx.params())) {
                // Directories are answered in one page: no cursor was ever given out.
                throw RpcError(kInvalidParams, "Invalid params: unknown cursor");
            }
            co_return co_await pack_.workers.run(ctx.executor(), ctx.cancel_token(), [this, uri] {
                auto children = catalog_.directory(uri);
                if (!children) {
                    throw RpcError(kInvalidParams,
                                   fmt::format("Invalid params: {} is not a directory of "
                                               "this server's skills",
                                               util::sanitize_for_message(uri, 300)),
                                   Json{{"uri", uri}});
                }
                return Json{{"resources", std::move(*children)}};
            });
        },
        false};
    context.add_extension(kSkillsExtension, {{"directoryRead", true}}, std::move(methods));

    // Every file of a skill is readable; SKILL.md files are also listed (sync_resources).
    reader_ = [this](RequestContext& ctx, const std::string& uri, const Json&) -> Task<Json> {
        auto content = co_await pack_.workers.run(ctx.executor(), ctx.cancel_token(),
                                                  [this, uri]() -> std::optional<SkillContent> {
                                                      try {
                                                          return catalog_.read(uri);
                                                      } catch (const ContextError& e) {
                                                          internal_failure(e);
                                                      }
                                                  });
        if (!content) {
            throw RpcError(protocol::resource_not_found_code(ctx.revision()),
                           fmt::format("Resource not found: {}", util::sanitize_for_message(uri, 300)),
                           Json{{"uri", uri}});
        }
        co_return Json::array({{{"uri", uri}, {"mimeType", content->mime_type}, {"text", std::move(content->bytes)}}});
    };
    for (const char* pattern : {"skill://{category}/{skill}/{file}", "skill://{category}/{skill}/{folder}/{file}"}) {
        ResourceTemplateSpec t;
        t.uri_template = pattern;
        t.name = std::string(pattern).find("{folder}") == std::string::npos ? "skill-file" : "skill-folder-file";
        t.title = "A file of a pattern-library skill";
        t.description = "SKILL.md, references/<name>-SKILL.md or scripts/<code file> of a skill (MCP Skills extension)";
        t.reader = reader_;
        t.source = source_;
        registry_->add_resource_template(std::move(t));
    }
    // The library as indexed at start; the watcher's news keeps it current from here.
    PatternQuery all;
    all.limit = std::numeric_limits<std::size_t>::max() / 2;
    IndexChanges everything{true, {}, {}};
    try {
        everything.patterns = pack_.index->search(all);
    } catch (const std::exception& e) {
        spdlog::warn("context: skills could not be listed: {}", e.what());
    }
    {
        std::lock_guard lock(pending_mutex_);
        for (auto& hit : everything.patterns) {
            std::string id = hit.id;
            pending_[std::move(id)] = std::move(hit);
        }
        pending_complete_ = true;
    }
    apply_pending();
}

void SkillsExtension::library_changed(IndexChanges changes) {
    {
        std::lock_guard lock(pending_mutex_);
        if (changes.complete) {
            pending_.clear();
            pending_complete_ = true;
        }
        for (auto& hit : changes.patterns) {
            std::string id = hit.id;
            pending_[std::move(id)] = std::move(hit);
        }
        for (auto& id : changes.removed) pending_[std::move(id)] = std::nullopt;
        if (!executor_ || apply_posted_) return;  // one application catches up with a burst
        apply_posted_ = true;
    }
    executor_->post([this, alive = std::weak_ptr<bool>(alive_)] {
        if (!alive.expired()) apply_pending();
    });
}

void SkillsExtension::apply_pending() {
    std::map<std::string, std::optional<PatternHit>> changes;
    bool complete = false;
    {
        std::lock_guard lock(pending_mutex_);
        changes.swap(pending_);
        complete = std::exchange(pending_complete_, false);
        apply_posted_ = false;
    }
    auto uri_of = [](const std::string& id) {
        const auto slash = id.find('/');
        return SkillCatalog::skill_uri(id.substr(0, slash),
                                       slash == std::string::npos ? std::string() : id.substr(slash + 1));
    };
    registry_->batch([&] {
        if (complete) {
            // The whole library came: what is listed and not in it is gone.
            std::set<std::string> present;
            for (const auto& [id, hit] : changes) {
                if (hit && SkillCatalog::valid_name(hit->name)) present.insert(uri_of(id));
            }
            for (auto it = listed_.begin(); it != listed_.end();) {
                if (present.count(it->first)) {
                    ++it;
                } else {
                    registry_->remove_resource(it->first);
                    it = listed_.erase(it);
                }
            }
        }
        for (const auto& [id, hit] : changes) {
            const std::string uri = uri_of(id);
            if (!hit || !SkillCatalog::valid_name(hit->name)) {
                if (listed_.erase(uri)) registry_->remove_resource(uri);
                continue;
            }
            auto known = listed_.find(uri);
            if (known != listed_.end() && known->second == hit->description) continue;
            ResourceSpec r;
            r.uri = uri;
            r.name = hit->name;  // the frontmatter's name, as SEP-2640 asks
            r.title = hit->id;
            r.description = hit->description;
            r.mime_type = "text/markdown";
            r.reader = reader_;
            r.source = source_;
            registry_->add_resource(std::move(r));
            listed_[uri] = hit->description;
        }
    });
}

}  // namespace toolport::context
