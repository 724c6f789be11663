// extractPattern: promotes a pattern found in a session into the library, in the
// three-file convention the readers expect —
//
//   <category>/<name>.md         its documentation (the pattern exists once this is there)
//   <category>/<name>.<ext>      its code, when given
//   <category>/<name>-SKILL.md   its metadata: seed 003's "Quality Score", a quality
//                                breakdown table over the five criteria, dependencies,
//                                provenance, and the input schema executeSkill checks
//
//   <category>/.<name>.unreviewed.json   the marker that it came from a client (library.hpp)
//
// The overall score is the mean of the five criteria; below the 7.0 extraction threshold
// the pattern is refused unless `force` is set. The scores are the client's own claim:
// written as declared ("**Declared Quality Score:**", which the readers do not take for a
// reviewed score) and kept in the marker, never a review. Code a client wrote is not run
// by executeSkill until the operator approves it (or trusts client code). An existing
// pattern is never replaced without `overwrite: true`. Each file is written beside its place, fsync'd and renamed in,
// the documentation last, so a search never sees a half-written pattern.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>

#include <fmt/format.h>

#include "observability/iso_time.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/durable_files.hpp"
#include "util/digest.hpp"
#include "util/random.hpp"

namespace toolport::context {

namespace {

constexpr double kExtractionThreshold = 7.0;

struct Criterion {
    const char* key;    // in the arguments
    const char* label;  // in the table
};
constexpr std::array<Criterion, 5> kCriteria = {{{"correctness", "Correctness"},
                                                 {"reusability", "Reusability"},
                                                 {"documentation", "Documentation"},
                                                 {"testCoverage", "Test Coverage"},
                                                 {"performance", "Performance"}}};

struct Language {
    const char* name;
    const char* label;
    const char* extension;
};
constexpr std::array<Language, 4> kLanguages = {{{"typescript", "TypeScript", ".ts"},
                                                 {"javascript", "JavaScript", ".js"},
                                                 {"python", "Python", ".py"},
                                                 {"bash", "Bash", ".sh"}}};
// Every file name a pattern's files may have, so a replaced pattern leaves no stale one.
constexpr std::array<const char*, 5> kCodeExtensions = {".ts", ".js", ".mjs", ".py", ".sh"};

struct Extraction {
    std::string category, name, title, description, documentation;
    std::string code;
    const Language* language = nullptr;
    std::array<double, kCriteria.size()> scores{};
    std::array<std::string, kCriteria.size()> notes;
    double overall = 0;
    std::vector<std::string> dependencies;
    std::string source_project, source_session;
    Json input_schema;  // null when not given
};

std::string score_text(double v) { return fmt::format("{:g}", v); }

// A table cell or a one-line field: no line breaks, no column separators.
std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\n' || c == '\r') out += ' ';
        else if (c == '|') out += "\\|";
        else out += c;
    }
    return out;
}

std::string title_from(const std::string& name) {
    std::string out;
    bool start = true;
    for (char c : name) {
        if (c == '-' || c == '_') {
            out += ' ';
            start = true;
        } else {
            out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
            start = false;
        }
    }
    return out;
}

std::string documentation_md(const Extraction& e) {
    // The readers take the description from "## Overview" and the title from the first
    // heading: a body that brings its own heading keeps it.
    std::string doc = e.documentation;
    const bool has_heading = doc.rfind("# ", 0) == 0;
    std::string out;
    if (!has_heading) out = fmt::format("# {}\n\n", cell(e.title));
    out += doc;
    if (!out.ends_with('\n')) out += '\n';
    return out;
}

// A client's text in SKILL.md, each '*' escaped: it must not read as a label of ours
// ("**Quality Score:**" would be taken for a reviewed score).
std::string field(const std::string& text) {
    std::string out;
    for (char c : cell(text)) {
        if (c == '*') out += "\\*";
        else out += c;
    }
    return out;
}

std::string skill_md(const Extraction& e) {
    std::string out = fmt::format("# Skill: {}\n\n", field(e.title));
    out += fmt::format("**Category:** {}\n", e.category);
    if (e.language) out += fmt::format("**Language:** {}\n", e.language->label);
    // Declared, not reviewed: parse_quality reads "**Quality Score:**" only.
    out += fmt::format("**Declared Quality Score:** {}/10 (the client's own scores, not a review)\n",
                       score_text(e.overall));
    out += fmt::format("**Last Verified:** {}\n",
                       observability::iso8601_utc(std::chrono::system_clock::now(), false).substr(0, 10));
    out += "**Reuse Count:** 0\n";
    if (!e.source_project.empty()) out += fmt::format("**Source Project:** {}\n", field(e.source_project));
    if (!e.source_session.empty()) out += fmt::format("**Source Session:** {}\n", field(e.source_session));
    out += fmt::format("\n## Overview\n\n{}\n", field(e.description));
    out += "\n## Declared Quality Breakdown\n\n| Criterion | Declared Score | Notes |\n|-----------|-------|-------|\n";
    for (std::size_t i = 0; i < kCriteria.size(); ++i) {
        out += fmt::format("| {} | {}/10 | {} |\n", kCriteria[i].label, score_text(e.scores[i]), field(e.notes[i]));
    }
    out += fmt::format("\n**Declared Overall Score:** {}/10\n", score_text(e.overall));
    if (!e.dependencies.empty()) {
        out += "\n## Dependencies\n\n";
        for (const auto& d : e.dependencies) out += fmt::format("- {}\n", field(d));
    }
    if (!e.input_schema.is_null()) {
        // executeSkill validates its input against the first ```json block (declared_input_schema).
        // '*' only occurs inside JSON strings, where \u002a is the same character.
        std::string schema;
        for (char c : e.input_schema.dump(2, ' ', false, Json::error_handler_t::replace)) {
            if (c == '*') schema += "\\u002a";
            else schema += c;
        }
        out += fmt::format("\n## Input Schema\n\n```json\n{}\n```\n", schema);
    }
    return out;
}

Extraction read_arguments(const ContextPack& pack, const Json& args) {
    Extraction e;
    e.category = string_arg(args, "category");
    e.name = string_arg(args, "name");
    check_name(e.name, "name");
    if (!pack.is_category(e.category)) {
        std::string list;
        for (const auto& c : pack.settings.categories) list += (list.empty() ? "" : ", ") + c;
        throw ContextError(ErrorCode::category_invalid,
                           fmt::format("Category \"{}\" is not one of: {}", e.category, list));
    }
    e.title = string_arg(args, "title");
    if (e.title.empty()) e.title = title_from(e.name);
    e.description = string_arg(args, "description");
    e.documentation = string_arg(args, "documentation");
    e.code = string_arg(args, "code");
    const std::string language = string_arg(args, "language");
    for (const auto& l : kLanguages) {
        if (language == l.name) e.language = &l;
    }
    if (!e.code.empty() && !e.language) {
        throw ContextError(ErrorCode::validation_error, "code needs its language",
                           "Pass language: typescript, javascript, python or bash.");
    }
    const Json& quality = args.at("quality");
    double sum = 0;
    for (std::size_t i = 0; i < kCriteria.size(); ++i) {
        const Json& c = quality.at(kCriteria[i].key);
        if (c.is_object()) {
            e.scores[i] = c.at("score").get<double>();
            if (auto n = c.find("notes"); n != c.end() && n->is_string()) e.notes[i] = n->get<std::string>();
        } else {
            e.scores[i] = c.get<double>();
        }
        sum += e.scores[i];
    }
    e.overall = std::round(sum / kCriteria.size() * 10.0) / 10.0;
    if (auto d = args.find("dependencies"); d != args.end()) {
        for (const auto& item : *d) e.dependencies.push_back(item.get<std::string>());
    }
    e.source_project = string_arg(args, "sourceProject");
    e.source_session = string_arg(args, "sourceSession");
    if (auto s = args.find("inputSchema"); s != args.end()) e.input_schema = *s;
    return e;
}

Json declared_scores(const Extraction& e) {
    Json scores = Json::object();
    for (std::size_t i = 0; i < kCriteria.size(); ++i) scores[kCriteria[i].key] = e.scores[i];
    return scores;
}

// The unreviewed marker: who wrote the pattern and what they claimed of it.
std::string marker_json(const Extraction& e, const std::string& code_name) {
    Json marker = {{"writtenBy", "client (extractPattern)"},
                   {"extractedAt", observability::iso8601_utc(std::chrono::system_clock::now(), false)},
                   {"declaredQuality", e.overall},
                   {"declaredScores", declared_scores(e)},
                   {"approve", fmt::format("toolport patterns approve {}/{} --config FILE", e.category, e.name)}};
    if (!code_name.empty()) {
        marker["codeFile"] = code_name;
        marker["codeSha256"] = util::sha256_hex(e.code.ends_with('\n') ? e.code : e.code + "\n");
    }
    if (!e.source_project.empty()) marker["sourceProject"] = e.source_project;
    if (!e.source_session.empty()) marker["sourceSession"] = e.source_session;
    return marker.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

bool exists_at(int dir_fd, const std::string& name) {
    struct stat st {};
    return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// The category folder new patterns go to: the one the library already has for it, else
// <library>/<category> (created, with the library, when missing).
fs::path category_dir(const ContextPack& pack, const std::string& category) {
    auto dirs = pack.library->category_dirs(category);
    if (!dirs.empty()) return dirs.front();
    const fs::path dir = pack.patterns.resolve(category);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw ContextError(ErrorCode::filesystem_error,
                           fmt::format("cannot create the category folder {}: {}", category, ec.message()));
    return pack.patterns.resolve(category);  // again: nothing may have linked it elsewhere meanwhile
}

Json extract(const ContextPack& pack, const Extraction& e, bool overwrite) {
    const fs::path dir = category_dir(pack, e.category);
    OwnedFd dir_fd{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (dir_fd.fd < 0) io_failure(fmt::format("open the category folder {}", e.category));

    const std::string doc_name = e.name + ".md";
    const std::string skill_name = e.name + "-SKILL.md";
    const std::string code_name = e.language && !e.code.empty() ? e.name + e.language->extension : std::string();
    std::vector<std::string> existing;
    for (const std::string& f : {doc_name, skill_name}) {
        if (exists_at(dir_fd.fd, f)) existing.push_back(f);
    }
    for (const char* ext : kCodeExtensions) {
        if (exists_at(dir_fd.fd, e.name + ext)) existing.push_back(e.name + ext);
    }
    if (!existing.empty() && !overwrite) {
        throw ContextError(ErrorCode::validation_error,
                           fmt::format("pattern {}/{} already exists ({})", e.category, e.name, existing.front()),
                           "Pass overwrite: true to replace it, or choose another name.");
    }

    // Written under hidden names first (the library never lists hidden files).
    const std::string tag = util::random_hex(6);
    std::vector<std::pair<std::string, std::string>> staged;  // hidden name → final name
    auto stage = [&](const std::string& final_name, const std::string& text) {
        const std::string hidden = fmt::format(".{}.{}.tmp", final_name, tag);
        write_new_file_at(dir_fd.fd, hidden.c_str(), text);
        staged.emplace_back(hidden, final_name);
    };
    try {
        // The marker goes in first: no moment where the client's code is in place unmarked.
        const std::string marker = unreviewed_marker(e.name);
        const std::string hidden_marker = fmt::format("{}.{}.tmp", marker, tag);
        write_new_file_at(dir_fd.fd, hidden_marker.c_str(), marker_json(e, code_name));
        if (::renameat(dir_fd.fd, hidden_marker.c_str(), dir_fd.fd, marker.c_str()) != 0) {
            ::unlinkat(dir_fd.fd, hidden_marker.c_str(), 0);
            io_failure("mark the pattern unreviewed");
        }
        if (!code_name.empty()) stage(code_name, e.code.ends_with('\n') ? e.code : e.code + "\n");
        stage(skill_name, skill_md(e));
        stage(doc_name, documentation_md(e));  // last: renamed in last
        for (const auto& [hidden, final_name] : staged) {
            const bool is_doc = final_name == doc_name;
            const unsigned flags = overwrite || !is_doc ? 0u : RENAME_NOREPLACE;
            if (is_doc) {
                // Files of the old pattern the new one does not have go before it appears.
                for (const auto& old : existing) {
                    const bool kept = old == doc_name || old == skill_name || old == code_name;
                    if (!kept && ::unlinkat(dir_fd.fd, old.c_str(), 0) != 0 && errno != ENOENT)
                        io_failure("remove " + old);
                }
            }
            if (::renameat2(dir_fd.fd, hidden.c_str(), dir_fd.fd, final_name.c_str(), flags) != 0) {
                if (errno == EEXIST) {
                    throw ContextError(ErrorCode::validation_error,
                                       fmt::format("pattern {}/{} was created by someone else meanwhile", e.category,
                                                   e.name),
                                       "Pass overwrite: true to replace it, or choose another name.");
                }
                io_failure("move " + final_name + " into place");
            }
        }
    } catch (...) {
        for (const auto& [hidden, final_name] : staged) ::unlinkat(dir_fd.fd, hidden.c_str(), 0);
        throw;
    }
    if (::fsync(dir_fd.fd) != 0) io_failure("flush the category folder");

    Json files = Json::array();
    for (const auto& [hidden, final_name] : staged) files.push_back(pack.patterns.display(dir / final_name));
    return {{"id", e.category + "/" + e.name},
            {"files", std::move(files)},
            {"quality", e.overall},
            {"qualityBreakdown", declared_scores(e)},
            {"declaredScores", declared_scores(e)},
            {"reviewed", false},
            {"hasExecutable", !code_name.empty()},
            {"replaced", !existing.empty()}};
}

Json criterion_schema(const char* what) {
    return {{"oneOf",
             {{{"type", "number"}, {"minimum", 0}, {"maximum", 10}},
              {{"type", "object"},
               {"properties",
                {{"score", {{"type", "number"}, {"minimum", 0}, {"maximum", 10}}},
                 {"notes", {{"type", "string"}, {"maxLength", 500}}}}},
               {"required", {"score"}},
               {"additionalProperties", false}}}},
            {"description", fmt::format("{} (0-10), or {{score, notes}}", what)}};
}

}  // namespace

providers::ToolDeclaration extract_pattern_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "extractPattern";
    spec.title = "Promote a pattern into the library";
    spec.description =
        "Promote a reusable pattern into the shared library as <name>.md, an optional code file and <name>-SKILL.md "
        "with a quality breakdown over correctness, reusability, documentation, test coverage and performance. "
        "Patterns scoring below 7.0 are refused unless force is true, and an existing pattern is only replaced with "
        "overwrite: true. The scores are recorded as declared, and its code is stored unreviewed: executeSkill runs it "
        "once the operator approves it. Use it at the end of a session for a solution worth reusing; searchPatterns "
        "finds it at once.";
    Json quality_properties = Json::object();
    std::vector<std::string> criteria;
    for (const auto& c : kCriteria) {
        quality_properties[c.key] = criterion_schema(c.label);
        criteria.emplace_back(c.key);
    }
    std::vector<std::string> languages;
    for (const auto& l : kLanguages) languages.emplace_back(l.name);
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"name",
           {{"type", "string"},
            {"pattern", "^[a-z0-9]+(-[a-z0-9]+)*$"},
            {"maxLength", 64},
            {"description", "The pattern's name in kebab-case, e.g. \"rls-policy-generator\""}}},
          {"category",
           {{"type", "string"}, {"enum", pack.settings.categories}, {"description", "The library category"}}},
          {"title", {{"type", "string"}, {"maxLength", 200}, {"description", "Human title (default: from the name)"}}},
          {"description",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", 1000},
            {"description", "One or two sentences: what the pattern does and when to use it"}}},
          {"documentation",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", 1000000},
            {"description", "The pattern's documentation in Markdown (usage, examples, caveats)"}}},
          {"code", {{"type", "string"}, {"maxLength", 1000000}, {"description", "The implementation, if any"}}},
          {"language",
           {{"type", "string"}, {"enum", languages}, {"description", "The code's language (needed with code)"}}},
          {"quality",
           {{"type", "object"},
            {"properties", quality_properties},
            {"required", criteria},
            {"additionalProperties", false},
            {"description", "Scores 0-10 per criterion; the overall score is their mean"}}},
          {"dependencies", {{"type", "array"}, {"items", {{"type", "string"}, {"maxLength", 200}}}, {"maxItems", 100}}},
          {"inputSchema",
           {{"type", "object"}, {"description", "JSON Schema of the code's input (checked by executeSkill)"}}},
          {"sourceProject", {{"type", "string"}, {"maxLength", 200}, {"description", "The project it came from"}}},
          {"sourceSession", {{"type", "string"}, {"maxLength", 200}, {"description", "The session it came from"}}},
          {"force", {{"type", "boolean"}, {"default", false}, {"description", "Extract even below the 7.0 threshold"}}},
          {"overwrite", {{"type", "boolean"}, {"default", false}, {"description", "Replace an existing pattern"}}}}},
        {"required", {"name", "category", "description", "documentation", "quality"}}};
    spec.data_schema = {
        {"type", "object"},
        {"properties",
         {{"id", {{"type", "string"}}},
          {"files",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description", "The files written, relative to the library"}}},
          {"quality", {{"type", "number"}, {"description", "The mean of the declared scores"}}},
          {"qualityBreakdown", {{"type", "object"}, {"description", "The declared scores (as declaredScores)"}}},
          {"declaredScores",
           {{"type", "object"}, {"description", "The scores as the caller declared them: not a review"}}},
          {"reviewed",
           {{"type", "boolean"},
            {"description", "false: the operator has not approved it; executeSkill does not run its code until then"}}},
          {"hasExecutable", {{"type", "boolean"}}},
          {"replaced", {{"type", "boolean"}}}}},
        {"required", {"id", "files", "quality", "qualityBreakdown", "hasExecutable", "replaced"}}};
    spec.annotations = {.read_only = false, .destructive = true, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        Extraction e = read_arguments(pack, args);
        if (e.overall < kExtractionThreshold && !bool_arg(args, "force", false)) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("quality {}/10 is below the extraction threshold of {}/10",
                                           score_text(e.overall), score_text(kExtractionThreshold)),
                               "Improve the pattern, or pass force: true to extract it anyway.");
        }
        const bool overwrite = bool_arg(args, "overwrite", false);
        co_return co_await pack.workers.run(ctx.executor(), [&pack, e = std::move(e), overwrite] {
            Json data = extract(pack, e, overwrite);
            pack.index->update(e.category, e.name);  // searchable now, not after the watcher's turn
            return Answer{std::move(data)};
        });
    });
}

}  // namespace toolport::context
