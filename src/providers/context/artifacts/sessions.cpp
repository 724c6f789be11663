#include "providers/context/artifacts/sessions.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "providers/context/durable_files.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/roots.hpp"
#include "util/ascii.hpp"
#include "util/json.hpp"
#include "util/utf8.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

constexpr const char* kArtifactsDir = ".agent-artifacts";
constexpr std::size_t kSummaryChars = 300;
// A session file larger than this is not a finalization pack (they aim at < 2000 tokens).
constexpr std::uintmax_t kMaxSessionBytes = 8u << 20;

std::string trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string_view> lines_of(const std::string& text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (end == text.size()) break;
        start = end + 1;
    }
    return lines;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Fenced blocks with a language tag: ```lang [file]\n...```. Untagged fences are prose.
std::vector<CodeBlock> code_blocks_of(const std::vector<std::string_view>& lines) {
    std::vector<CodeBlock> blocks;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (line.substr(0, 3) != "```") continue;
        std::string_view info = line.substr(3);
        std::size_t tag_end = 0;
        while (tag_end < info.size() && (is_word_char(info[tag_end]) || info[tag_end] == '+' || info[tag_end] == '#' ||
                                         info[tag_end] == '-' || info[tag_end] == '.')) {
            ++tag_end;
        }
        // The closing fence, wherever the block ends.
        std::size_t close = i + 1;
        while (close < lines.size() && lines[close].substr(0, 3) != "```") ++close;
        if (tag_end > 0 && close < lines.size()) {
            CodeBlock block;
            block.language = std::string(info.substr(0, tag_end));
            block.file = trim(info.substr(tag_end));
            std::string code;
            for (std::size_t k = i + 1; k < close; ++k) {
                code.append(lines[k]);
                code += '\n';
            }
            block.code = trim(code);
            blocks.push_back(std::move(block));
        }
        i = close;  // past the block, tagged or not
    }
    return blocks;
}

// Heading text of a "## " line (lower-cased), or nullopt.
std::optional<std::string> h2(std::string_view line) {
    if (line.substr(0, 3) != "## ") return std::nullopt;
    return util::to_lower_ascii(trim(line.substr(3)));
}

std::string item_text(const Json& item) {
    if (item.is_string()) return item.get<std::string>();
    if (item.is_object()) {
        for (const char* key : {"text", "title", "decision", "item", "description", "summary", "name"}) {
            if (auto it = item.find(key); it != item.end() && it->is_string()) return it->get<std::string>();
        }
    }
    return item.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::vector<std::string> items(const Json& pack, std::initializer_list<const char*> keys) {
    std::vector<std::string> out;
    for (const char* key : keys) {
        auto it = pack.find(key);
        if (it == pack.end() || !it->is_array()) continue;
        for (const auto& item : *it) out.push_back(item_text(item));
        break;
    }
    return out;
}

}  // namespace

std::string date_of(const std::string& id) {
    if (id.size() >= 10) {
        bool ok = true;
        for (int i = 0; i < 10; ++i) {
            const char c = id[i];
            ok = ok && ((i == 4 || i == 7) ? c == '-' : (c >= '0' && c <= '9'));
        }
        if (ok) return id.substr(0, 10);
    }
    return "unknown";
}

SessionRecord parse_session_markdown(const std::string& session_id, const std::string& text) {
    SessionRecord s;
    s.session_id = session_id;
    s.date = date_of(session_id);
    s.text = text;
    const auto lines = lines_of(text);
    std::size_t title_line = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].substr(0, 2) == "# ") {
            s.title = trim(lines[i].substr(2));
            title_line = i;
            break;
        }
    }
    if (s.title.empty()) s.title = "Untitled Session";

    std::string section;       // the current "## " heading, lower-cased
    std::string summary_text;  // the "## Summary" section
    bool in_fence = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string_view line = lines[i];
        if (line.substr(0, 3) == "```") in_fence = !in_fence;
        if (in_fence || line.substr(0, 3) == "```") continue;
        if (auto heading = h2(line)) {
            section = *heading;
            continue;
        }
        if (line.substr(0, 2) == "# ") {
            section.clear();
            continue;
        }
        if (section == "summary") {
            summary_text += std::string(line) + "\n";
            continue;
        }
        const std::string t = trim(line);
        if (t.size() < 2 || !((t[0] == '-' || t[0] == '*') && t[1] == ' ')) continue;
        std::string item = trim(std::string_view(t).substr(2));
        if (section == "decisions") s.decisions.push_back(std::move(item));
        else if (section == "implementations") s.implementations.push_back(std::move(item));
        else if (section == "challenges") s.challenges.push_back(std::move(item));
        else if (section == "next steps") s.next_steps.push_back(std::move(item));
    }
    s.summary = trim(summary_text);
    if (s.summary.empty() && title_line < lines.size()) {
        // The first paragraph after the title.
        std::string paragraph;
        for (std::size_t i = title_line + 1; i < lines.size(); ++i) {
            const std::string t = trim(lines[i]);
            if (t.empty()) {
                if (!paragraph.empty()) break;
                continue;
            }
            if (t[0] == '#' || t.substr(0, 3) == "```") {
                if (!paragraph.empty()) break;
                if (t[0] == '#') break;
                continue;
            }
            paragraph += (paragraph.empty() ? "" : " ") + t;
        }
        s.summary = paragraph;
    }
    if (s.summary.empty()) s.summary = "No summary available";
    s.summary = util::cut_utf8(s.summary, kSummaryChars);
    s.code_blocks = code_blocks_of(lines);
    s.has_code = text.find("```") != std::string::npos;
    return s;
}

SessionRecord parse_finalization_pack(const std::string& session_id, const std::string& text) {
    Json pack = Json::parse(text, nullptr, false);
    if (!pack.is_object()) {
        throw ContextError(ErrorCode::filesystem_error,
                           fmt::format("the finalization pack of session {} is not a JSON object", session_id));
    }
    SessionRecord s;
    s.session_id = session_id;
    s.text = text;
    s.date = date_of(session_id);
    if (auto meta = pack.find("metadata"); meta != pack.end() && meta->is_object()) {
        if (auto d = meta->find("date"); d != meta->end() && d->is_string()) s.date = date_of(d->get<std::string>());
    }
    if (s.date == "unknown") {
        if (auto d = pack.find("date"); d != pack.end() && d->is_string()) s.date = date_of(d->get<std::string>());
    }
    // summary: a string, or {one_line, key_achievement, ...} in the companion scripts' packs.
    if (auto sum = pack.find("summary"); sum != pack.end()) {
        if (sum->is_string()) s.summary = sum->get<std::string>();
        else if (sum->is_object()) s.summary = item_text(sum->contains("one_line") ? (*sum)["one_line"] : *sum);
    }
    if (auto t = pack.find("title"); t != pack.end() && t->is_string()) s.title = t->get<std::string>();
    if (s.title.empty() && pack.contains("summary") && pack["summary"].is_object() &&
        pack["summary"].contains("one_line") && pack["summary"]["one_line"].is_string()) {
        s.title = pack["summary"]["one_line"].get<std::string>();
    }
    if (s.title.empty()) s.title = session_id;
    s.summary = util::cut_utf8(s.summary.empty() ? std::string("No summary available") : trim(s.summary), kSummaryChars);
    s.decisions = items(pack, {"decisions"});
    s.implementations = items(pack, {"implementations"});
    s.challenges = items(pack, {"challenges"});
    s.next_steps = items(pack, {"nextSteps", "next_steps"});
    for (const char* key : {"codeBlocks", "code_blocks"}) {
        auto it = pack.find(key);
        if (it == pack.end() || !it->is_array()) continue;
        for (const auto& b : *it) {
            if (!b.is_object() || !b.contains("code") || !b["code"].is_string()) continue;
            CodeBlock block;
            block.language = b.value("language", "");
            block.code = b["code"].get<std::string>();
            if (auto f = b.find("file"); f != b.end() && f->is_string()) block.file = f->get<std::string>();
            s.code_blocks.push_back(std::move(block));
        }
        break;
    }
    s.has_code = !s.code_blocks.empty() || text.find("```") != std::string::npos;
    return s;
}

std::vector<std::string> list_sessions(const fs::path& project) {
    std::vector<std::string> ids;
    const fs::path dir = project / kArtifactsDir;
    std::error_code ec;
    if (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec)) return ids;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        std::error_code type_ec;
        if (it->is_symlink(type_ec)) continue;  // never followed out of the project
        if (it->is_directory(type_ec)) {
            if (fs::is_regular_file(it->path() / "session-summary.md", type_ec) ||
                fs::is_regular_file(it->path() / "finalization-pack.json", type_ec)) {
                ids.push_back(name);
            }
        } else if (it->is_regular_file(type_ec) && name.size() > 3 && name.ends_with(".md")) {
            ids.push_back(name.substr(0, name.size() - 3));
        }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());  // both layouts: one session
    return ids;
}

std::optional<SessionRecord> load_session(const fs::path& project, const std::string& session_id) {
    check_name(session_id, "sessionId");
    const Root artifacts("project's artifacts", project / kArtifactsDir);
    if (!artifacts.exists()) return std::nullopt;
    struct Candidate {
        fs::path relative;
        bool json;
    };
    const Candidate candidates[] = {{fs::path(session_id) / "session-summary.md", false},
                                    {fs::path(session_id) / "finalization-pack.json", true},
                                    {fs::path(session_id + ".md"), false}};
    for (const auto& c : candidates) {
        const fs::path file = artifacts.resolve(c.relative);  // refuses symlinks out of the project
        std::error_code ec;
        if (fs::symlink_status(file, ec).type() == fs::file_type::not_found) continue;
        // Whatever is there is read as a regular file or refused (a FIFO would block the read).
        const std::string text = read_regular_file(file, kMaxSessionBytes,
                                                   std::string(kArtifactsDir) + "/" + c.relative.generic_string());
        SessionRecord s = c.json ? parse_finalization_pack(session_id, text) : parse_session_markdown(session_id, text);
        s.relative = std::string(kArtifactsDir) + "/" + c.relative.generic_string();
        return s;
    }
    return std::nullopt;
}

nlohmann::json to_json(const CodeBlock& block) {
    Json j = {{"language", block.language}, {"code", block.code}};
    if (!block.file.empty()) j["file"] = block.file;
    return j;
}

}  // namespace toolport::context
