// saveSession: writes a finalization pack into <project>/.agent-artifacts/<sessionId>/ —
// finalization-pack.json, session-summary.md (which loadSession and searchArtifacts read
// back), and compression-metrics.json when token counts are given — atomically: the files
// are written and flushed in a hidden directory beside it, which is then renamed into
// place (swapped with the old one when overwriting), so a reader or a crash sees the old
// pack or the new one, never half of one.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "observability/iso_time.hpp"
#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/durable_files.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;

// One line of Markdown: a list item cannot span lines.
std::string one_line(const std::string& text) {
    std::string out = text;
    for (char& c : out) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return out;
}

std::vector<std::string> strings(const Json& args, const char* key) {
    std::vector<std::string> out;
    if (auto it = args.find(key); it != args.end() && it->is_array()) {
        for (const auto& v : *it) {
            if (v.is_string()) out.push_back(v.get<std::string>());
        }
    }
    return out;
}

struct Pack {
    std::string session_id, title, summary, date, project;
    std::vector<std::string> decisions, implementations, challenges, next_steps;
    std::vector<CodeBlock> code;
    std::optional<std::pair<long long, long long>> tokens;  // original, compressed
};

std::string summary_markdown(const Pack& p) {
    std::string md = fmt::format("# {}\n\n## Summary\n\n{}\n", one_line(p.title), p.summary);
    auto section = [&md](const char* heading, const std::vector<std::string>& items) {
        md += fmt::format("\n## {}\n\n", heading);
        for (const auto& item : items) md += "- " + one_line(item) + "\n";
    };
    section("Decisions", p.decisions);
    section("Implementations", p.implementations);
    section("Challenges", p.challenges);
    section("Next Steps", p.next_steps);
    if (!p.code.empty()) {
        md += "\n## Code\n";
        for (const auto& b : p.code) {
            md += fmt::format("\n```{}{}{}\n{}\n```\n", b.language, b.file.empty() ? "" : " ", one_line(b.file), b.code);
        }
    }
    return md;
}

Json pack_json(const Pack& p) {
    Json blocks = Json::array();
    for (const auto& b : p.code) blocks.push_back(to_json(b));
    return {{"sessionId", p.session_id},
            {"title", p.title},
            {"summary", p.summary},
            {"decisions", p.decisions},
            {"implementations", p.implementations},
            {"challenges", p.challenges},
            {"nextSteps", p.next_steps},
            {"codeBlocks", std::move(blocks)},
            {"metadata",
             {{"date", p.date},
              {"project", p.project},
              {"createdAt", observability::iso8601_utc(std::chrono::system_clock::now(), true)},
              {"generator", "toolport saveSession"}}}};
}

// Writes the pack; returns the files written (relative to the project).
Json save(const fs::path& project, const Pack& p, bool overwrite) {
    const fs::path artifacts = project / ".agent-artifacts";
    if (::mkdir(artifacts.c_str(), 0755) != 0 && errno != EEXIST) io_failure("create .agent-artifacts");
    OwnedFd dir{::open(artifacts.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (dir.fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
            throw ContextError(ErrorCode::validation_error,
                               ".agent-artifacts in the project is a symlink or not a directory; nothing is written "
                               "through it");
        }
        io_failure("open .agent-artifacts");
    }
    struct stat st {};
    const bool flat_exists = ::fstatat(dir.fd, (p.session_id + ".md").c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    const bool dir_exists = ::fstatat(dir.fd, p.session_id.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (dir_exists && !S_ISDIR(st.st_mode)) {
        throw ContextError(ErrorCode::validation_error,
                           fmt::format("{} in .agent-artifacts is not a directory", p.session_id));
    }
    if ((flat_exists || dir_exists) && !overwrite) {
        throw ContextError(ErrorCode::validation_error, fmt::format("session {} already exists", p.session_id),
                           "Pass overwrite: true to replace it, or choose another sessionId.");
    }

    const std::string staging = ".saving-" + p.session_id.substr(0, 100) + "-" + util::random_hex(8);
    if (::mkdirat(dir.fd, staging.c_str(), 0755) != 0) io_failure("create a staging directory");
    auto discard = [&](const std::string& name) {
        std::error_code ec;
        fs::remove_all(artifacts / name, ec);
    };
    try {
        OwnedFd out{::openat(dir.fd, staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
        if (out.fd < 0) io_failure("open the staging directory");
        write_new_file_at(out.fd, "finalization-pack.json",
                          pack_json(p).dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
        write_new_file_at(out.fd, "session-summary.md", summary_markdown(p));
        if (p.tokens) {
            write_new_file_at(out.fd, "compression-metrics.json",
                              Json{{"tokens", {{"original", p.tokens->first}, {"compressed", p.tokens->second}}}}.dump(2) +
                                  "\n");
        }
        if (::fsync(out.fd) != 0) io_failure("flush the staging directory");
    } catch (...) {
        discard(staging);
        throw;
    }
    if (dir_exists) {
        // Swap the new pack in; the old one, now under the staging name, goes.
        if (::renameat2(dir.fd, staging.c_str(), dir.fd, p.session_id.c_str(), RENAME_EXCHANGE) != 0) {
            const int saved = errno;
            discard(staging);
            errno = saved;
            io_failure("replace the session's directory");
        }
    } else if (::renameat2(dir.fd, staging.c_str(), dir.fd, p.session_id.c_str(), RENAME_NOREPLACE) != 0) {
        const int saved = errno;
        discard(staging);
        if (saved == EEXIST) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("session {} was created by someone else meanwhile", p.session_id),
                               "Pass overwrite: true to replace it, or choose another sessionId.");
        }
        errno = saved;
        io_failure("move the session into place");
    }
    if (dir_exists) discard(staging);
    // The flat file of the first layout would otherwise shadow nothing but confuse readers.
    if (flat_exists && overwrite) ::unlinkat(dir.fd, (p.session_id + ".md").c_str(), 0);
    if (::fsync(dir.fd) != 0) io_failure("flush .agent-artifacts");

    const std::string base = ".agent-artifacts/" + p.session_id + "/";
    Json files = {base + "finalization-pack.json", base + "session-summary.md"};
    if (p.tokens) files.push_back(base + "compression-metrics.json");
    return files;
}

}  // namespace

providers::ToolDeclaration save_session_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "saveSession";
    spec.title = "Save a session's finalization pack";
    spec.description =
        "Save the end-of-session finalization pack — summary, decisions, implementations, challenges, next steps and "
        "code — into the project's .agent-artifacts/<sessionId>/ as finalization-pack.json and session-summary.md, "
        "atomically. Returns the files written. Use it when finishing a session so the next one can loadSession it.";
    Json strings_schema = {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 10000}}}, {"maxItems", 200}};
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"project", project_property(false)},
          {"projectPath", project_path_alias_property()},
          {"sessionId",
           {{"type", "string"},
            {"maxLength", 200},
            {"description", "The session id, conventionally YYYY-MM-DD-topic, e.g. 2025-11-05-auth-flow"}}},
          {"title", {{"type", "string"}, {"minLength", 1}, {"maxLength", 300}}},
          {"summary", {{"type", "string"}, {"minLength", 1}, {"maxLength", 20000}}},
          {"decisions", strings_schema},
          {"implementations", strings_schema},
          {"challenges", strings_schema},
          {"nextSteps", strings_schema},
          {"codeBlocks",
           {{"type", "array"},
            {"maxItems", 100},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"language", {{"type", "string"}, {"pattern", "^[A-Za-z0-9_+#.-]{1,40}$"}}},
                {"code", {{"type", "string"}, {"maxLength", 200000}}},
                {"file", {{"type", "string"}, {"maxLength", 500}}}}},
              {"required", {"language", "code"}},
              {"additionalProperties", false}}}}},
          {"originalTokens",
           {{"type", "integer"},
            {"minimum", 0},
            {"description", "Tokens of the session's context before finalization (for getCompressionRatio)"}}},
          {"compressedTokens", {{"type", "integer"}, {"minimum", 0}, {"description", "Tokens of this pack"}}},
          {"overwrite", {{"type", "boolean"}, {"default", false}, {"description", "Replace an existing session"}}}}},
        {"required", {"sessionId", "title", "summary"}}};
    spec.data_schema = {{"type", "object"},
                        {"properties",
                         {{"sessionId", {{"type", "string"}}},
                          {"project", {{"type", "string"}}},
                          {"files", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
                        {"required", {"sessionId", "project", "files"}}};
    declare_deprecation(spec.extra_metadata);
    spec.annotations = {.read_only = false, .destructive = true, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        Pack p;
        p.session_id = string_arg(args, "sessionId");
        check_name(p.session_id, "sessionId");
        p.title = string_arg(args, "title");
        p.summary = string_arg(args, "summary");
        p.date = date_of(p.session_id);
        if (p.date == "unknown")
            p.date = observability::iso8601_utc(std::chrono::system_clock::now(), false).substr(0, 10);
        p.decisions = strings(args, "decisions");
        p.implementations = strings(args, "implementations");
        p.challenges = strings(args, "challenges");
        p.next_steps = strings(args, "nextSteps");
        if (auto blocks = args.find("codeBlocks"); blocks != args.end() && blocks->is_array()) {
            for (const auto& b : *blocks) {
                CodeBlock block{b.value("language", ""), b.value("code", ""), b.value("file", "")};
                if (block.code.find("\n```") != std::string::npos || block.code.rfind("```", 0) == 0) {
                    throw ContextError(ErrorCode::validation_error,
                                       "a code block contains a ``` fence line, which would end the block early",
                                       "Indent or remove the inner fence.");
                }
                p.code.push_back(std::move(block));
            }
        }
        const bool has_original = args.contains("originalTokens"), has_compressed = args.contains("compressedTokens");
        if (has_original != has_compressed) {
            throw ContextError(ErrorCode::validation_error, "originalTokens and compressedTokens go together",
                               "Pass both, or neither.");
        }
        if (has_original)
            p.tokens = std::make_pair(int_arg(args, "originalTokens", 0), int_arg(args, "compressedTokens", 0));
        const ProjectArg project = project_arg(args);
        const bool overwrite = bool_arg(args, "overwrite", false);
        auto [files,
              name] = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(),
                                                [&pack, p, project, overwrite]() mutable {
                                                    const Project where = resolve_project(project.value, pack.projects);
                                                    p.project = where.name;
                                                    return std::make_pair(save(where.dir, p, overwrite), where.name);
                                                });
        Answer answer{{{"sessionId", p.session_id}, {"project", std::move(name)}, {"files", std::move(files)}}};
        note_deprecation(answer, project);
        co_return answer;
    });
}

}  // namespace toolport::context
