#include "providers/gateway/skill_uris.hpp"

namespace toolport::gateway {

namespace {

constexpr std::string_view kSkillMd = "/SKILL.md";
constexpr std::string_view kSkillScheme = "skill://";

}  // namespace

std::optional<std::string> skill_root(const std::string& skill_md) {
    const auto scheme = skill_md.find("://");
    if (scheme == std::string::npos || skill_md.size() < kSkillMd.size()) return std::nullopt;
    if (skill_md.compare(skill_md.size() - kSkillMd.size(), kSkillMd.size(), kSkillMd) != 0) return std::nullopt;
    std::string root = skill_md.substr(0, skill_md.size() - kSkillMd.size());
    // At least one segment after the scheme, and none of them empty at the end.
    if (root.size() <= scheme + 3 || root.back() == '/') return std::nullopt;
    return root;
}

std::string skill_root_name(const std::string& root) {
    const auto slash = root.rfind('/');
    return slash == std::string::npos ? root : root.substr(slash + 1);
}

std::string namespaced_skill_root(const std::string& prefix, const std::string& root) {
    if (root.rfind(kSkillScheme, 0) == 0)
        return std::string(kSkillScheme) + prefix + "/" + root.substr(kSkillScheme.size());
    return prefix + "+" + root;
}

std::optional<std::string> rebase_uri(const std::string& uri, const std::string& from, const std::string& to) {
    if (uri == from) return to;
    if (uri.size() > from.size() && uri.compare(0, from.size(), from) == 0 && uri[from.size()] == '/') {
        return to + uri.substr(from.size());
    }
    return std::nullopt;
}

Json rebase_skill_entry(Json entry, const std::string& from, const std::string& to) {
    if (!entry.is_object() || from == to) return entry;
    auto move = [&](Json& holder) {
        auto uri = holder.find("uri");
        if (uri == holder.end() || !uri->is_string()) return;
        if (auto moved = rebase_uri(uri->get<std::string>(), from, to)) *uri = std::move(*moved);
    };
    move(entry);
    if (auto files = entry.find("resources"); files != entry.end() && files->is_array()) {
        for (auto& file : *files) {
            if (file.is_object()) move(file);
        }
    }
    return entry;
}

}  // namespace toolport::gateway
