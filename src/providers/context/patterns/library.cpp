#include "providers/context/patterns/library.hpp"

#include <algorithm>
#include <string_view>
#include <fstream>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "providers/context/envelope.hpp"
#include "util/utf8.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxPatternFileBytes = 4u << 20;
constexpr std::size_t kDescriptionChars = 200;
constexpr const char* kSkillSuffix = "-SKILL.md";

std::string trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

bool regular(const fs::path& p) {
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    return !ec && fs::is_regular_file(st);
}

long long mtime_ns(const fs::path& p) {
    std::error_code ec;
    auto t = fs::last_write_time(p, ec);
    return ec ? 0
              : static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// The "## Overview" section's text.
std::string overview(const std::string& md) {
    std::size_t pos = 0;
    while (pos < md.size()) {
        auto end = md.find('\n', pos);
        if (end == std::string::npos) end = md.size();
        std::string_view line(md.data() + pos, end - pos);
        if (trim(line) == "## Overview") {
            std::string body;
            std::size_t p = end + 1;
            while (p < md.size()) {
                auto e = md.find('\n', p);
                if (e == std::string::npos) e = md.size();
                std::string_view l(md.data() + p, e - p);
                if (l.substr(0, 2) == "##" || (l.size() > 1 && l[0] == '#' && l[1] == ' ')) break;
                body.append(l);
                body += '\n';
                p = e + 1;
            }
            return trim(body);
        }
        pos = end + 1;
    }
    return {};
}

// The first line after the first "#" heading that is not empty, not another heading, and
// not bold metadata ("**Category:** ...") or a table (YAML frontmatter is skipped).
std::string first_paragraph(const std::string& md) {
    std::vector<std::string> lines;
    for (std::size_t pos = 0; pos <= md.size();) {
        auto end = md.find('\n', pos);
        if (end == std::string::npos) end = md.size();
        lines.push_back(trim(std::string_view(md.data() + pos, end - pos)));
        pos = end + 1;
    }
    std::size_t i = 0;
    if (!lines.empty() && lines[0] == "---") {
        for (i = 1; i < lines.size() && lines[i] != "---"; ++i) {}
        ++i;
    }
    bool after_heading = false;
    for (; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (!after_heading) {
            after_heading = !line.empty() && line[0] == '#';
            continue;
        }
        if (line.empty() || line[0] == '#' || line[0] == '*' || line[0] == '|' || line.rfind("---", 0) == 0) continue;
        return line;
    }
    return {};
}

}  // namespace

std::string unreviewed_marker(const std::string& name) { return "." + name + ".unreviewed.json"; }

std::string read_text_file(const fs::path& file, std::size_t max_bytes, const std::string& shown_name) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec)
        throw ContextError(ErrorCode::filesystem_error, fmt::format("cannot read {}: {}", shown_name, ec.message()));
    if (size > max_bytes) {
        throw ContextError(ErrorCode::filesystem_error,
                           fmt::format("{} is larger than {} KiB", shown_name, max_bytes >> 10));
    }
    std::ifstream in(file, std::ios::binary);
    std::string text(std::istreambuf_iterator<char>(in), {});
    if (in.bad() || !in.is_open())
        throw ContextError(ErrorCode::filesystem_error, fmt::format("cannot read {}", shown_name));
    return text;
}

namespace {

// The number after the first "<label>" that is followed by one (blanks between):
// `\*\*Quality Score:\*\*\s*(\d+(\.\d+)?)` without a regex engine: it runs on every
// SKILL.md when the index is built, and std::regex is slow.
std::optional<double> number_after(const std::string& text, std::string_view label) {
    for (auto at = text.find(label); at != std::string::npos; at = text.find(label, at + 1)) {
        std::size_t p = at + label.size();
        while (p < text.size() && std::string_view(" \t\r\n\f\v").find(text[p]) != std::string_view::npos) ++p;
        const std::size_t digits = p;
        while (p < text.size() && text[p] >= '0' && text[p] <= '9') ++p;
        if (p == digits) continue;
        if (p + 1 < text.size() && text[p] == '.' && text[p + 1] >= '0' && text[p + 1] <= '9') {
            ++p;
            while (p < text.size() && text[p] >= '0' && text[p] <= '9') ++p;
        }
        try {
            return std::stod(text.substr(digits, p - digits));
        } catch (const std::exception&) {
            return std::nullopt;  // too large for a double
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<double> parse_quality(const std::string& skill_md) {
    // "**Quality Score:** 8.5/10" (the later format) or "**Overall Score:** 8.5/10" (v1.0.0).
    if (auto q = number_after(skill_md, "**Quality Score:**")) return q;
    return number_after(skill_md, "**Overall Score:**");
}

std::string parse_description(const std::string& skill_md, const std::string& doc_md) {
    for (const std::string* md : {&skill_md, &doc_md}) {
        if (md->empty()) continue;
        std::string d = overview(*md);
        if (d.empty()) d = first_paragraph(*md);
        if (!d.empty()) {
            for (char& c : d) {
                if (c == '\n' || c == '\r') c = ' ';
            }
            return util::cut_utf8(d, kDescriptionChars);
        }
    }
    return "No description available";
}

PatternLibrary::PatternLibrary(const Root& root, std::vector<std::string> categories)
    : root_(root), categories_(std::move(categories)) {}

std::vector<fs::path> PatternLibrary::category_dirs(const std::string& category) const {
    std::vector<fs::path> dirs;
    for (const fs::path& rel : {fs::path(category), fs::path("patterns") / category}) {
        if (rel.begin()->string() == "patterns" &&
            std::find(categories_.begin(), categories_.end(), "patterns") != categories_.end()) {
            continue;  // "patterns" is itself a category here
        }
        fs::path dir;
        try {
            dir = root_.resolve(rel);  // a category folder linked out of the library is not served
        } catch (const ContextError&) {
            continue;
        }
        std::error_code ec;
        if (fs::is_directory(dir, ec)) dirs.push_back(dir);
    }
    return dirs;
}

namespace {

// A pattern's files in `dir`, given which file names exist there as regular files (not
// symlinks); nullopt without <name>.md.
template <typename Exists>
std::optional<PatternFiles> assemble(const std::string& category, const std::string& name, const fs::path& dir,
                                     Exists exists) {
    if (!exists(name + ".md")) return std::nullopt;
    PatternFiles f;
    f.category = category;
    f.name = name;
    f.dir = dir;
    f.doc_file = name + ".md";
    if (exists(name + kSkillSuffix)) f.skill_file = name + kSkillSuffix;
    for (const char* ext : {".js", ".mjs", ".py", ".sh"}) {
        if (exists(name + ext)) {
            f.runnable_file = name + ext;
            break;
        }
    }
    if (exists(name + ".ts")) f.code_file = name + ".ts";
    else f.code_file = f.runnable_file;
    f.unreviewed = exists(unreviewed_marker(name));
    return f;
}

}  // namespace

std::optional<PatternFiles> PatternLibrary::find(const std::string& category, const std::string& name) const {
    for (const auto& dir : category_dirs(category)) {
        if (auto f = assemble(category, name, dir, [&dir](const std::string& file) { return regular(dir / file); }))
            return f;
    }
    return std::nullopt;
}

std::vector<PatternFiles> PatternLibrary::list() const {
    // One directory read per category folder, and no stat per file: the entries' types come
    // with the listing (a library of 10,000 patterns is listed at every start).
    std::vector<PatternFiles> out;
    std::unordered_set<std::string> seen;
    for (const auto& category : categories_) {
        for (const auto& dir : category_dirs(category)) {
            std::set<std::string> files;  // sorted: the list comes out in name order
            std::error_code ec;
            for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
                std::error_code type_ec;
                if (fs::is_regular_file(it->symlink_status(type_ec)) && !type_ec)
                    files.insert(it->path().filename().string());
            }
            for (const auto& file : files) {
                if (file.size() <= 3 || !file.ends_with(".md") || file.ends_with(kSkillSuffix) || file[0] == '.')
                    continue;
                const std::string name = file.substr(0, file.size() - 3);
                if (!seen.insert(category + "/" + name).second) continue;  // an earlier folder has it
                out.push_back(
                    *assemble(category, name, dir, [&files](const std::string& f) { return files.count(f) > 0; }));
            }
        }
    }
    return out;
}

bool PatternLibrary::unreviewed(const std::string& category, const std::string& name) const {
    for (const auto& dir : category_dirs(category)) {
        if (!regular(dir / (name + ".md"))) continue;
        std::error_code ec;
        return fs::exists(fs::symlink_status(dir / unreviewed_marker(name), ec));
    }
    return false;
}

PatternInfo PatternLibrary::read(const PatternFiles& files) const {
    PatternInfo info;
    info.files = files;
    info.document = read_text_file(files.dir / files.doc_file, kMaxPatternFileBytes,
                                   files.category + "/" + files.doc_file);
    info.modified_ns = mtime_ns(files.dir / files.doc_file);
    if (!files.skill_file.empty()) {
        info.skill_text = read_text_file(files.dir / files.skill_file, kMaxPatternFileBytes,
                                         files.category + "/" + files.skill_file);
        info.quality = parse_quality(info.skill_text);
        info.modified_ns = std::max(info.modified_ns, mtime_ns(files.dir / files.skill_file));
    }
    if (!files.code_file.empty()) info.modified_ns = std::max(info.modified_ns, mtime_ns(files.dir / files.code_file));
    info.description = parse_description(info.skill_text, info.document);
    return info;
}

std::vector<std::string> PatternLibrary::unserved_dirs() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(root_.path(), ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::error_code type_ec;
        if (name.empty() || name[0] == '.' || !it->is_directory(type_ec)) continue;
        if (name == "patterns" || std::find(categories_.begin(), categories_.end(), name) != categories_.end())
            continue;
        out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace toolport::context
