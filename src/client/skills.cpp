#include "client/skills.hpp"

#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "util/base64.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

std::string shown(std::string_view text) { return util::sanitize_for_message(std::string(text), 120); }

// Whether the YAML `node` holds the value `expected` (JSON): scalars compared as text
// (a JSON number or boolean by its JSON spelling), maps by the expected keys, sequences
// element by element.
bool same_value(const Json& expected, const YAML::Node& node) {
    if (expected.is_object()) {
        if (!node.IsMap()) return false;
        for (const auto& [key, value] : expected.items()) {
            const YAML::Node child = node[key];
            if (!child || !same_value(value, child)) return false;
        }
        return true;
    }
    if (expected.is_array()) {
        if (!node.IsSequence() || node.size() != expected.size()) return false;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            if (!same_value(expected[i], node[i])) return false;
        }
        return true;
    }
    if (expected.is_null()) return node.IsNull();
    if (!node.IsScalar()) return false;
    const std::string text = node.Scalar();
    if (expected.is_string()) return text == expected.get<std::string>();
    return text == expected.dump();
}

// The text of the one content resources/read returned for `uri`.
std::string content_of(const Json& result, const std::string& uri, const std::string& server) {
    const Json contents = result.is_object() ? result.value("contents", Json::array()) : Json::array();
    const Json* chosen = nullptr;
    if (contents.is_array()) {
        for (const auto& item : contents) {
            if (item.is_object() && item.value("uri", std::string()) == uri) {
                chosen = &item;
                break;
            }
        }
        if (!chosen && contents.size() == 1 && contents[0].is_object()) chosen = &contents[0];
    }
    if (!chosen)
        throw ClientError(fmt::format("{} answered resources/read of {} without its content", server, shown(uri)));
    if (auto text = chosen->find("text"); text != chosen->end() && text->is_string()) return text->get<std::string>();
    if (auto blob = chosen->find("blob"); blob != chosen->end() && blob->is_string()) {
        if (auto bytes = util::base64_decode(blob->get<std::string>())) return *bytes;
        throw ClientError(
            fmt::format("{} answered resources/read of {} with a blob that is not base64", server, shown(uri)));
    }
    throw ClientError(fmt::format("{} answered resources/read of {} with neither text nor blob", server, shown(uri)));
}

// The entry of `uri` in the skill's resources, if listed.
const Json* listed_file(const Json& entry, const std::string& uri) {
    auto resources = entry.find("resources");
    if (resources == entry.end() || !resources->is_array()) return nullptr;
    for (const auto& file : *resources) {
        if (file.is_object() && file.value("uri", std::string()) == uri) return &file;
    }
    return nullptr;
}

Task<std::string> read_verified(McpClient& client, const Json& entry, std::string uri, RequestOptions options) {
    Json result = co_await client.request("resources/read", {{"uri", uri}}, options);
    std::string content = content_of(result, uri, client.describe_server());
    if (const Json* listed = listed_file(entry, uri)) {
        if (auto problem = skill_file_mismatch(*listed, content)) {
            throw SkillVerificationError(fmt::format("{}: {}; the skill is not loaded", shown(uri), *problem));
        }
    }
    co_return content;
}

}  // namespace

std::optional<std::string> skill_file_mismatch(const Json& listed, std::string_view content) {
    if (!listed.is_object()) return std::nullopt;
    if (auto size = listed.find("size"); size != listed.end() && size->is_number_unsigned()) {
        if (size->get<std::uint64_t>() != content.size()) {
            return fmt::format("{} bytes read where the skill's entry lists {}", content.size(),
                               size->get<std::uint64_t>());
        }
    }
    if (auto digest = listed.find("digest"); digest != listed.end() && digest->is_string()) {
        const std::string expected = digest->get<std::string>();
        constexpr std::string_view kPrefix = "sha256:";
        if (expected.rfind(kPrefix, 0) != 0) {
            return fmt::format("the skill's entry lists digest \"{}\", which is not sha256:<hex>", shown(expected));
        }
        std::string hex = expected.substr(kPrefix.size());
        for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (util::sha256_hex(content) != hex)
            return "the content's SHA-256 differs from the digest the skill's entry lists";
    }
    return std::nullopt;
}

std::optional<std::string> frontmatter_mismatch(std::string_view skill_md, const Json& expected) {
    std::string_view text = skill_md;
    if (text.substr(0, 3) != "---") return "SKILL.md has no YAML frontmatter";
    auto first_line_end = text.find('\n');
    if (first_line_end == std::string_view::npos) return "SKILL.md has no YAML frontmatter";
    auto close = text.find("\n---", first_line_end);
    if (close == std::string_view::npos) return "SKILL.md's frontmatter does not end";
    const std::string block(text.substr(first_line_end + 1, close - first_line_end));
    YAML::Node node;
    try {
        node = YAML::Load(block);
    } catch (const YAML::Exception& e) {
        return fmt::format("SKILL.md's frontmatter is not YAML: {}", shown(e.what()));
    }
    if (!node.IsMap()) return "SKILL.md's frontmatter is not a mapping";
    if (!expected.is_object()) return std::nullopt;
    for (const auto& [key, value] : expected.items()) {
        const YAML::Node field = node[key];
        if (!field)
            return fmt::format("SKILL.md's frontmatter has no \"{}\", which the skill's entry lists", shown(key));
        if (!same_value(value, field)) {
            return fmt::format("SKILL.md's frontmatter \"{}\" differs from the skill's entry", shown(key));
        }
    }
    return std::nullopt;
}

std::string skill_id(const Json& entry) {
    std::string_view uri = entry.is_object() && entry.contains("uri") && entry["uri"].is_string()
                               ? entry["uri"].get_ref<const std::string&>()
                               : std::string_view();
    constexpr std::string_view scheme = "skill://", file = "/SKILL.md";
    if (uri.starts_with(scheme) && uri.ends_with(file) && uri.size() > scheme.size() + file.size()) {
        return std::string(uri.substr(scheme.size(), uri.size() - scheme.size() - file.size()));
    }
    return std::string(uri);
}

const Json& choose_skill(const std::vector<Json>& entries, std::string_view wanted, const std::string& server) {
    std::vector<const Json*> by_name;
    for (const auto& entry : entries) {
        if (entry.value("uri", std::string()) == wanted || skill_id(entry) == wanted) return entry;
        const Json front = entry.value("frontmatter", Json::object());
        if (front.is_object() && front.value("name", std::string()) == wanted) by_name.push_back(&entry);
    }
    if (by_name.size() == 1) return *by_name.front();
    auto join = [](const std::vector<std::string>& ids) {
        std::string out;
        for (const auto& id : ids) out += (out.empty() ? "" : ", ") + shown(id);
        return out;
    };
    if (by_name.size() > 1) {
        std::vector<std::string> ids;
        for (const Json* entry : by_name) ids.push_back(skill_id(*entry));
        throw ClientError(fmt::format("{} lists {} skills named {}: give the full id, one of: {}", server, ids.size(),
                                      shown(wanted), join(ids)));
    }
    // Nothing by that name: the ids that contain it (a part of a name, a category), if any.
    std::vector<std::string> close;
    for (const auto& entry : entries) {
        const std::string id = skill_id(entry);
        if (!wanted.empty() && id.find(wanted) != std::string::npos && close.size() < 10) close.push_back(id);
    }
    throw ClientError(fmt::format("{} lists no skill {}{}", server, shown(wanted),
                                  close.empty() ? std::string("; `toolport skills` without a name lists them")
                                                : fmt::format("; did you mean {}?", join(close))));
}

Task<std::vector<Json>> list_skills(McpClient& client, RequestOptions options) {
    std::vector<Json> skills;
    std::set<std::string> cursors_seen;
    std::string cursor;
    for (;;) {
        Json params = Json::object();
        if (!cursor.empty()) params["cursor"] = cursor;
        Json page = co_await client.request("skills/list", std::move(params), options);
        if (!page.is_object() || !page.contains("skills") || !page["skills"].is_array()) {
            throw ClientError(
                fmt::format("{} answered skills/list without a \"skills\" array", client.describe_server()));
        }
        for (auto& skill : page["skills"]) skills.push_back(std::move(skill));
        auto next = page.find("nextCursor");
        if (next == page.end() || !next->is_string() || next->get<std::string>().empty()) break;
        cursor = next->get<std::string>();
        if (!cursors_seen.insert(cursor).second) {
            throw ClientError(fmt::format("{} repeated a skills/list cursor; stopped paging", client.describe_server()));
        }
    }
    co_return skills;
}

Task<Json> load_skill(McpClient& client, Json entry, bool with_files, RequestOptions options) {
    if (!entry.is_object() || !entry.contains("uri") || !entry["uri"].is_string()) {
        throw ClientError("a skill entry without a \"uri\" cannot be loaded");
    }
    const std::string uri = entry["uri"];
    std::string text = co_await read_verified(client, entry, uri, options);
    if (auto problem = frontmatter_mismatch(text, entry.value("frontmatter", Json::object()))) {
        throw SkillVerificationError(fmt::format("{}: {}; the skill is not loaded", shown(uri), *problem));
    }
    Json loaded = {{"uri", uri}, {"text", std::move(text)}, {"files", Json::array()}};
    if (with_files && entry.contains("resources") && entry["resources"].is_array()) {
        for (const auto& file : entry["resources"]) {
            if (!file.is_object() || !file.contains("uri") || !file["uri"].is_string() || file["uri"] == uri) continue;
            std::string content = co_await read_verified(client, entry, file["uri"].get<std::string>(), options);
            loaded["files"].push_back({{"uri", file["uri"]}, {"text", std::move(content)}});
        }
    }
    co_return loaded;
}

}  // namespace toolport::client
