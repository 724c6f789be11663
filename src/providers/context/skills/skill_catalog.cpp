#include "providers/context/skills/skill_catalog.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "providers/context/envelope.hpp"
#include "util/digest.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSkillFileBytes = 4u << 20;
constexpr std::string_view kScheme = "skill://";

std::string mime_type_of(const std::string& file) {
    const auto dot = file.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : file.substr(dot);
    if (ext == ".md") return "text/markdown";
    if (ext == ".ts") return "text/x-typescript";
    if (ext == ".js" || ext == ".mjs") return "text/javascript";
    if (ext == ".py") return "text/x-python";
    if (ext == ".sh") return "text/x-shellscript";
    if (ext == ".json") return "application/json";
    return "text/plain";
}

// RFC 3986 reg-name without percent-encoding: a category that needs it is not served as
// a URI authority.
bool valid_authority(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
               c == '_' || c == '~';
    });
}

// The documentation without a YAML frontmatter block of its own (SKILL.md gets ours).
std::string body_of(const std::string& doc) {
    if (doc.rfind("---\n", 0) != 0) return doc;
    const auto end = doc.find("\n---", 3);
    if (end == std::string::npos) return doc;
    auto after = doc.find('\n', end + 4);
    return after == std::string::npos ? std::string() : doc.substr(after + 1);
}

// A YAML scalar that reads back as exactly `s`: a JSON string is a YAML double-quoted one.
std::string yaml_string(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string file_signature(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "-";
    return fmt::format("{}.{}:{}", st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
}

std::vector<std::string> split_path(std::string_view s) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= s.size()) {
        auto slash = s.find('/', pos);
        if (slash == std::string_view::npos) slash = s.size();
        parts.emplace_back(s.substr(pos, slash - pos));
        pos = slash + 1;
    }
    return parts;
}

}  // namespace

bool SkillCatalog::valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || name.front() == '-' || name.back() == '-') return false;
    char prev = 0;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        if (!ok || (c == '-' && prev == '-')) return false;
        prev = c;
    }
    return true;
}

std::string SkillCatalog::skill_dir_uri(const std::string& category, const std::string& name) {
    return fmt::format("skill://{}/{}", category, name);
}

std::string SkillCatalog::skill_uri(const std::string& category, const std::string& name) {
    return skill_dir_uri(category, name) + "/SKILL.md";
}

std::vector<PatternFiles> SkillCatalog::skills() const {
    std::vector<PatternFiles> out;
    for (auto& p : library_.list()) {
        if (valid_name(p.name) && valid_authority(p.category)) out.push_back(std::move(p));
    }
    std::sort(out.begin(), out.end(), [](const PatternFiles& a, const PatternFiles& b) {
        return std::tie(a.category, a.name) < std::tie(b.category, b.name);
    });
    return out;
}

std::optional<SkillCatalog::Location> SkillCatalog::locate(const std::string& uri) const {
    std::string_view rest(uri);
    if (rest.substr(0, kScheme.size()) != kScheme) return std::nullopt;
    rest.remove_prefix(kScheme.size());
    while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    const auto parts = split_path(rest);
    if (parts.size() < 2) return std::nullopt;
    const std::string& category = parts[0];
    const std::string& name = parts[1];
    const auto& served = library_.categories();
    if (!valid_authority(category) || !valid_name(name) ||
        std::find(served.begin(), served.end(), category) == served.end()) {
        return std::nullopt;
    }
    auto pattern = library_.find(category, name);
    if (!pattern) return std::nullopt;
    std::string path;
    for (std::size_t i = 2; i < parts.size(); ++i) {
        if (parts[i].empty() || parts[i] == "." || parts[i] == "..") return std::nullopt;
        path += (path.empty() ? "" : "/") + parts[i];
    }
    return Location{std::move(*pattern), std::move(path)};
}

std::vector<SkillFile> SkillCatalog::files(const PatternFiles& p) const {
    std::vector<SkillFile> out;
    out.push_back({"SKILL.md", {}, "text/markdown"});
    if (!p.skill_file.empty()) out.push_back({"references/" + p.skill_file, p.dir / p.skill_file, "text/markdown"});
    for (const std::string* code : {&p.code_file, &p.runnable_file}) {
        if (code->empty()) continue;
        const std::string path = "scripts/" + *code;
        if (std::none_of(out.begin(), out.end(), [&](const SkillFile& f) { return f.path == path; })) {
            out.push_back({path, p.dir / *code, mime_type_of(*code)});
        }
    }
    return out;
}

Json SkillCatalog::frontmatter(const PatternInfo& info) const {
    // Agent Skills metadata is a map of strings.
    Json metadata = {{"category", info.files.category}, {"id", info.files.id()}};
    if (info.quality) metadata["quality"] = fmt::format("{:g}", *info.quality);
    // Written by a client and not approved by the operator: executeSkill does not run it.
    if (info.files.unreviewed) metadata["reviewed"] = "false";
    return {{"name", info.files.name}, {"description", info.description}, {"metadata", std::move(metadata)}};
}

std::string SkillCatalog::skill_md(const PatternInfo& info) const {
    const Json fm = frontmatter(info);
    std::string out = "---\n";
    out += "name: " + yaml_string(fm["name"].get<std::string>()) + "\n";
    out += "description: " + yaml_string(fm["description"].get<std::string>()) + "\n";
    out += "metadata:\n";
    for (const auto& [key, value] : fm["metadata"].items()) {
        out += "  " + key + ": " + yaml_string(value.get<std::string>()) + "\n";
    }
    out += "---\n";
    out += body_of(info.document);
    if (!out.ends_with('\n')) out += '\n';
    return out;
}

Json SkillCatalog::compute_entry(const PatternFiles& p) const {
    const PatternInfo info = library_.read(p);
    const std::string base = skill_dir_uri(p.category, p.name) + "/";
    Json resources = Json::array();
    for (const auto& f : files(p)) {
        const std::string bytes = f.source.empty()
                                      ? skill_md(info)
                                      : read_text_file(f.source, kMaxSkillFileBytes, p.category + "/" + f.path);
        resources.push_back(
            {{"uri", base + f.path}, {"digest", "sha256:" + util::sha256_hex(bytes)}, {"size", bytes.size()}});
    }
    return {{"uri", skill_uri(p.category, p.name)},
            {"frontmatter", frontmatter(info)},
            {"resources", std::move(resources)}};
}

Json SkillCatalog::entry(const PatternFiles& p) const {
    std::string signature;
    for (const std::string* f : {&p.doc_file, &p.skill_file, &p.code_file, &p.runnable_file}) {
        signature += f->empty() ? std::string("|") : *f + "=" + file_signature(p.dir / *f) + "|";
    }
    {
        std::lock_guard lock(mutex_);
        if (auto it = entries_.find(p.id()); it != entries_.end() && it->second.signature == signature)
            return it->second.entry;
    }
    Json e = compute_entry(p);
    std::lock_guard lock(mutex_);
    entries_[p.id()] = {signature, e};
    return e;
}

std::optional<SkillContent> SkillCatalog::read(const std::string& uri) const {
    auto where = locate(uri);
    if (!where || where->path.empty()) return std::nullopt;
    for (const auto& f : files(where->pattern)) {
        if (f.path != where->path) continue;
        if (f.source.empty()) return SkillContent{skill_md(library_.read(where->pattern)), f.mime_type};
        const auto& p = where->pattern;
        return SkillContent{read_text_file(f.source, kMaxSkillFileBytes, p.category + "/" + f.path), f.mime_type};
    }
    return std::nullopt;
}

std::optional<Json> SkillCatalog::directory(const std::string& uri) const {
    std::string_view rest(uri);
    if (rest.substr(0, kScheme.size()) != kScheme) return std::nullopt;
    rest.remove_prefix(kScheme.size());
    while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    Json children = Json::array();
    auto dir_child = [&](const std::string& child_uri, const std::string& name) {
        children.push_back({{"uri", child_uri}, {"name", name}, {"mimeType", kDirectoryMimeType}});
    };

    if (rest.find('/') == std::string_view::npos) {  // skill://<category>: its skills
        const std::string category(rest);
        const auto& served = library_.categories();
        if (std::find(served.begin(), served.end(), category) == served.end() || !valid_authority(category))
            return std::nullopt;
        for (const auto& p : skills()) {
            if (p.category == category) dir_child(skill_dir_uri(category, p.name), p.name);
        }
        return children;
    }

    auto where = locate(uri);
    if (!where) return std::nullopt;
    const auto& p = where->pattern;
    const std::string base = skill_dir_uri(p.category, p.name);
    const std::string prefix = where->path.empty() ? "" : where->path + "/";
    std::vector<std::string> folders_seen;
    bool any = where->path.empty();
    for (const auto& f : files(p)) {
        if (f.path.rfind(prefix, 0) != 0) continue;
        any = true;
        const std::string rest_path = f.path.substr(prefix.size());
        const auto slash = rest_path.find('/');
        if (slash != std::string::npos) {  // a folder below this one
            const std::string folder = rest_path.substr(0, slash);
            if (std::find(folders_seen.begin(), folders_seen.end(), folder) != folders_seen.end()) continue;
            folders_seen.push_back(folder);
            dir_child(base + "/" + prefix + folder, folder);
            continue;
        }
        Json child = {{"uri", base + "/" + f.path}, {"name", rest_path}, {"mimeType", f.mime_type}};
        if (!f.source.empty()) {
            std::error_code ec;
            const auto size = fs::file_size(f.source, ec);
            if (!ec) child["size"] = size;
        }
        children.push_back(std::move(child));
    }
    if (!any) return std::nullopt;  // a file, or nothing
    return children;
}

}  // namespace toolport::context
