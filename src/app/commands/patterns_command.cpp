// toolport patterns: the operator's side of the context pack's pattern library.
//
//   toolport patterns list [--unreviewed] [--config FILE | --library DIR]
//   toolport patterns approve CATEGORY/NAME [--sha256 HEX] [--config FILE | --library DIR]
//
// Code a client writes with extractPattern is stored unreviewed (a hidden marker beside
// it, see providers/context/patterns/library.hpp) and executeSkill does not run it. After
// reading the code, the operator approves it here: the marker goes, and the next
// executeSkill runs it (no restart). `list` shows the SHA-256 of each unreviewed pattern's
// code, and `approve --sha256` approves only that code: a client that replaces it between
// the operator's reading and the approval gets nothing approved. The library is the one
// `serve` would use: the configuration's packs.context.patterns_root, else
// $TOOLPORT_CONTEXT_PATTERNS, else ~/.shared-patterns; --library names it directly.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "app/commands/commands.hpp"
#include "app/config.hpp"
#include "providers/context/context_settings.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/patterns/library.hpp"
#include "providers/context/roots.hpp"
#include "providers/source_settings.hpp"
#include "util/ascii.hpp"
#include "util/digest.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

namespace fs = std::filesystem;

struct PatternsFlags {
    std::string config;
    std::string library;
    std::string id;
    bool unreviewed_only = false;
    std::string sha256;  // approve only when the code has this digest
};

// The context pack's settings as `serve` reads them (throws ConfigError, SettingsError).
context::ContextSettings settings_of(const PatternsFlags& flags) {
    Config config = load_config(flags.config);
    auto section = config.pack_settings.find("context");
    context::ContextSettings settings = context::ContextSettings::from(
        section != config.pack_settings.end() ? section->second : providers::SourceSettings({}, "packs.context"));
    if (!flags.library.empty()) settings.patterns_root = fs::absolute(context::expand_home(flags.library));
    return settings;
}

std::string read_small(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::string text;
    char buffer[4096];
    while (in && text.size() < (4u << 20)) {
        in.read(buffer, sizeof buffer);
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
    }
    return text;
}

int list(const PatternsFlags& flags) {
    const auto settings = settings_of(flags);
    context::PatternLibrary library(context::Root("pattern library", settings.patterns_root), settings.categories);
    std::size_t shown = 0;
    for (const auto& p : library.list()) {
        if (flags.unreviewed_only && !p.unreviewed) continue;
        std::string line = fmt::format("{}\t{}\t{}", p.id(), p.unreviewed ? "unreviewed" : "reviewed",
                                       p.runnable_file.empty() ? std::string("no runnable code") : p.runnable_file);
        if (p.unreviewed && !p.runnable_file.empty())
            line += "\tsha256:" + util::sha256_hex(read_small(p.dir / p.runnable_file));
        fmt::print("{}\n", line);
        ++shown;
    }
    if (shown == 0)
        fmt::print(stderr, "no {}patterns in {}\n", flags.unreviewed_only ? "unreviewed " : "",
                   settings.patterns_root.string());
    return 0;
}

int approve(const PatternsFlags& flags) {
    const auto settings = settings_of(flags);
    const context::SkillId id = context::parse_skill_id(flags.id, "ID");
    if (std::find(settings.categories.begin(), settings.categories.end(), id.category) == settings.categories.end()) {
        fmt::print(stderr, "toolport patterns approve: \"{}\" is not a served category\n",
                   util::sanitize_for_message(id.category, 60));
        return 1;
    }
    context::PatternLibrary library(context::Root("pattern library", settings.patterns_root), settings.categories);
    const auto files = library.find(id.category, id.name);
    if (!files) {
        fmt::print(stderr, "toolport patterns approve: no pattern {} in {}\n", id.str(),
                   settings.patterns_root.string());
        return 1;
    }
    if (!files->unreviewed) {
        fmt::print(
            "{} is not waiting for approval (not written by a client, or approved already): executeSkill "
            "runs it\n",
            id.str());
        return 0;
    }
    const fs::path marker = files->dir / context::unreviewed_marker(id.name);
    const Json record = Json::parse(read_small(marker), nullptr, false);
    if (!files->runnable_file.empty()) {
        // What is approved is the code as it is now: its digest is shown, and a code file
        // changed since the client wrote it is pointed out.
        const std::string digest = util::sha256_hex(read_small(files->dir / files->runnable_file));
        fmt::print("code: {} (sha256 {})\n", (files->dir / files->runnable_file).string(), digest);
        const std::string expected = util::to_lower_ascii(flags.sha256);
        if (!expected.empty() && expected != digest) {
            fmt::print(
                stderr,
                "toolport patterns approve: the code is not the one you gave (--sha256 {}): it changed since you "
                "read it; nothing approved\n",
                util::sanitize_for_message(flags.sha256, 80));
            return 1;
        }
        if (record.is_object() && record.contains("codeSha256") && record["codeSha256"] != digest) {
            fmt::print("note: the code differs from what the client wrote (sha256 {})\n",
                       record["codeSha256"].get<std::string>());
        }
    }
    if (record.is_object() && record.contains("declaredScores")) {
        fmt::print("declared by the client (not a review): {}\n", record["declaredScores"].dump());
    }
    if (::unlink(marker.c_str()) != 0 && errno != ENOENT) {
        fmt::print(stderr, "toolport patterns approve: cannot remove {}: {}\n", marker.string(), std::strerror(errno));
        return 1;
    }
    fmt::print("approved {}: executeSkill runs it from now on\n", id.str());
    return 0;
}

int run(const CLI::App* list_cmd, const CLI::App* approve_cmd, const PatternsFlags& flags) {
    try {
        if (list_cmd->parsed()) return list(flags);
        if (approve_cmd->parsed()) return approve(flags);
    } catch (const ConfigError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
    } catch (const providers::SettingsError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
    } catch (const context::ContextError& e) {
        fmt::print(stderr, "toolport patterns: {}\n", e.what());
        return 1;
    }
    return 2;
}

}  // namespace

Command add_patterns(CLI::App& app) {
    auto flags = std::make_shared<PatternsFlags>();
    auto* patterns = app.add_subcommand("patterns", "Review the context pack's pattern library (client-written code)");
    patterns->require_subcommand(1);
    auto source = [flags](CLI::App* cmd) {
        auto* config = cmd->add_option("--config", flags->config, "The server's YAML configuration (packs.context)");
        cmd->add_option("--library", flags->library, "The pattern library's folder (instead of the configuration's)")
            ->excludes(config);
    };
    auto* list_cmd = patterns->add_subcommand("list", "List the library's patterns and whether each is reviewed");
    list_cmd->add_flag("--unreviewed", flags->unreviewed_only, "Only the patterns waiting for approval");
    source(list_cmd);
    auto* approve_cmd =
        patterns->add_subcommand("approve", "Let executeSkill run a pattern a client wrote, after reading its code");
    approve_cmd->add_option("ID", flags->id, "The pattern's id, CATEGORY/NAME")->required();
    approve_cmd->add_option("--sha256", flags->sha256,
                            "Approve only if the code has this SHA-256 (from `patterns list`)");
    source(approve_cmd);
    return {patterns, [list_cmd, approve_cmd, flags]() { return run(list_cmd, approve_cmd, *flags); }};
}

}  // namespace toolport::commands
