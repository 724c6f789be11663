// executeSkill: runs a pattern's code in a sandboxed child process (skill_process.hpp,
// skill_sandbox.hpp), the input as JSON on stdin and the output read as JSON from stdout.
//
// It refuses (before anything runs, dry runs included):
//   - code a client wrote with extractPattern that the operator has not approved
//     (SKILL_NOT_APPROVED), unless packs.context.skill_trust_client_code is set;
//   - any skill where the sandbox cannot be made (SANDBOX_UNAVAILABLE), unless
//     packs.context.skill_allow_unsandboxed is set.
//
//   .js / .mjs   Node. A module in the original server's style (exporting the camelCased
//                skill name, `execute`, or a default function) is imported and called with
//                the input; a plain script reads stdin and writes stdout itself.
//   .py          python3, a script reading stdin and writing stdout
//   .sh          bash, likewise
//
// The input is checked against the schema the skill declares in its SKILL.md (the first
// fenced ```json block that is a JSON Schema); dryRun stops there and runs nothing.
// Progress notifications are sent while it runs; the client's cancellation kills it.
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "providers/context/context_pack.hpp"
#include "providers/context/patterns/skill_process.hpp"
#include "schema/json_schema.hpp"
#include "server/request_context.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

constexpr std::size_t kMaxSkillMdBytes = 1u << 20;

// Imports the module named by argv[1] and calls its skill function with stdin's JSON; a
// module that exports none ran as a script when imported.
constexpr const char* kNodeBootstrap = R"JS(
import { pathToFileURL } from 'node:url';
const file = process.argv[1];
const camel = file.replace(/^.*\//, '').replace(/\.(m?js)$/, '')
  .replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
const mod = await import(pathToFileURL(file).href);
const fn = [mod[camel], mod.execute, mod.default, mod.default && mod.default[camel], mod.default && mod.default.execute]
  .find((f) => typeof f === 'function');
if (fn) {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const result = await fn(text.trim() === '' ? {} : JSON.parse(text));
  process.stdout.write(JSON.stringify(result === undefined ? null : result));
}
)JS";

std::string camel_case(const std::string& name) {
    std::string out;
    bool upper = false;
    for (char c : name) {
        if (c == '-') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    return out;
}

}  // namespace

std::optional<Json> declared_input_schema(const std::string& skill_md) {
    std::size_t pos = 0;
    while ((pos = skill_md.find("```json", pos)) != std::string::npos) {
        const auto body = skill_md.find('\n', pos);
        if (body == std::string::npos) break;
        const auto end = skill_md.find("\n```", body);
        if (end == std::string::npos) break;
        Json candidate = Json::parse(skill_md.substr(body + 1, end - body), nullptr, false);
        pos = end + 4;
        if (candidate.is_object() &&
            (candidate.contains("type") || candidate.contains("properties") || candidate.contains("$schema"))) {
            return candidate;
        }
    }
    return std::nullopt;
}

providers::ToolDeclaration execute_skill_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "executeSkill";
    spec.title = "Execute a skill";
    spec.description =
        "Run a pattern's code (.js/.mjs with Node, .py with python3, .sh with bash) in a sandbox (no network, no view "
        "of "
        "the server, a small scratch directory) with the given input as JSON. Code a client wrote with extractPattern "
        "runs once the operator has approved it. Returns the skill's JSON output; dryRun only checks the input against "
        "the schema in its SKILL.md. Use it after loadSkill, when a pattern has an executable implementation.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"skillId",
           {{"type", "string"},
            {"maxLength", 300},
            {"description",
             "The pattern's id, \"category/skill-name\", e.g. \"database/rls-policy-generator\" (its bare "
             "name will do where only one category has it)"}}},
          {"input",
           {{"type", "object"}, {"description", "Skill-specific input parameters (JSON on the skill's stdin)"}}},
          {"dryRun", {{"type", "boolean"}, {"default", false}, {"description", "Validate input without executing"}}}}},
        {"required", {"skillId", "input"}}};
    spec.data_schema = Json::object();  // whatever the skill returns
    spec.extra_metadata = {{"skillId", {{"type", "string"}}},
                           {"runtime", {{"type", "string"}}},
                           {"exitCode", {{"type", "integer"}}},
                           {"sandboxed", {{"type", "boolean"}}}};
    spec.annotations = {.read_only = false, .destructive = false, .idempotent = false, .open_world = true};
    auto declaration = context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string given = string_arg(args, "skillId");
        const Json input = args.contains("input") ? args["input"] : Json::object();
        const bool dry_run = bool_arg(args, "dryRun", false);
        struct Prepared {
            SkillId id;
            PatternFiles files;
            std::optional<Json> schema;
        };
        Prepared prepared = co_await pack.workers.run(ctx.executor(), [&pack, given] {
            const SkillId id = resolve_skill_id(pack, given);
            Prepared p{id, find_pattern(pack, id), std::nullopt};
            if (!p.files.skill_file.empty()) {
                p.schema = declared_input_schema(read_text_file(p.files.dir / p.files.skill_file, kMaxSkillMdBytes,
                                                                id.category + "/" + p.files.skill_file));
            }
            return p;
        });
        const SkillId id = prepared.id;
        const PatternFiles& files = prepared.files;
        if (files.runnable_file.empty()) {
            throw ContextError(ErrorCode::skill_not_found,
                               fmt::format("Skill {} has no runnable code ({}.js, .mjs, .py or .sh){}", id.str(), id.name,
                                           files.code_file.empty()
                                               ? ""
                                               : fmt::format("; compile {} to {}.js", files.code_file, id.name)),
                               "loadSkill shows the pattern; not every pattern is executable.");
        }
        if (prepared.schema) {
            try {
                auto compiled = schema::compile(*prepared.schema);
                auto result = compiled.validate(input);
                if (!result.valid) {
                    const auto& e = result.errors.front();
                    throw ContextError(ErrorCode::validation_error,
                                       fmt::format("input{} does not match the skill's schema: {}",
                                                   e.instance_location.empty() ? "" : " at " + e.instance_location,
                                                   e.message),
                                       "See the input schema in the skill's SKILL.md (loadSkill).");
                }
            } catch (const schema::SchemaError& e) {
                throw ContextError(ErrorCode::validation_error,
                                   fmt::format("the input schema in {}'s SKILL.md does not compile: {}", id.str(),
                                               e.what()));
            }
        }
        if (files.unreviewed && !pack.settings.skill_policy.trust_client_code) {
            throw ContextError(
                ErrorCode::skill_not_approved,
                fmt::format("Skill {} was written by a client (extractPattern) and is unreviewed: its code "
                            "does not run until the operator approves it",
                            id.str()),
                fmt::format("The operator reviews its code and runs `toolport patterns approve {} --config "
                            "FILE` (or sets packs.context.skill_trust_client_code: true).",
                            id.str()));
        }
        const bool sandboxed = pack.sandbox.available;
        if (!sandboxed && !pack.settings.skill_policy.allow_unsandboxed) {
            throw ContextError(
                ErrorCode::sandbox_unavailable,
                fmt::format("executeSkill cannot run {}: skills run only in a sandbox, and {}", id.str(),
                            pack.sandbox.reason),
                "The operator installs bubblewrap (bwrap) on a kernel that allows user namespaces, or "
                "sets packs.context.skill_allow_unsandboxed: true to run skills without one; GET /health "
                "shows the sandbox's state.");
        }
        const std::string ext = files.runnable_file.substr(files.runnable_file.rfind('.'));
        const std::string runtime = ext == ".py" ? "python3" : ext == ".sh" ? "bash" : "node";
        if (dry_run) {
            co_return Answer{{{"message", "Dry run successful - input is valid"},
                              {"skillId", id.str()},
                              {"functionName", camel_case(id.name)},
                              {"runtime", runtime},
                              {"schemaChecked", prepared.schema.has_value()},
                              {"input", input}},
                             {{"skillId", id.str()}, {"runtime", runtime}}};
        }

        SkillProcessSpec process;
        // Sandboxed, the pattern's folder is the sandbox's read-only /skill.
        const std::string file = sandboxed ? std::string(kSandboxSkillDir) + "/" + files.runnable_file
                                           : (files.dir / files.runnable_file).string();
        if (sandboxed) {
            process.sandbox = SandboxLayout{};
            process.sandbox->bwrap = pack.sandbox.bwrap;
            process.sandbox->skill_dir = files.dir;
            process.sandbox->scratch_bytes = pack.settings.skill.scratch_bytes;
        }
        if (runtime == "node") process.argv = {"node", "--input-type=module", "-e", kNodeBootstrap, file};
        else process.argv = {runtime, file};
        process.stdin_data = input.dump(-1, ' ', false, Json::error_handler_t::replace);
        process.limits = pack.settings.skill;
        process.timeout = pack.settings.skill.timeout;
        if (auto deadline = ctx.deadline()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline -
                                                                                    std::chrono::steady_clock::now());
            process.timeout = std::max(std::chrono::milliseconds(1), std::min(process.timeout, left));
        }

        // Shared with the worker thread and the callbacks posted from it.
        struct Shared {
            std::atomic<bool> cancel{false};
            bool answered = false;  // loop thread only
        };
        auto shared = std::make_shared<Shared>();
        const auto cancel_id = ctx.cancel_token().on_cancel([shared] { shared->cancel = true; });
        Executor& loop = ctx.executor();
        const auto limit_s = std::chrono::duration<double>(process.timeout).count();
        RequestContext* request = &ctx;
        auto tick = [shared, &loop, request, limit_s](std::chrono::milliseconds elapsed) {
            loop.post([shared, request, limit_s, elapsed] {
                if (shared->answered) return;
                const double s = std::chrono::duration<double>(elapsed).count();
                request->progress(s, limit_s, fmt::format("running for {:.0f} s", s));
            });
        };
        SkillProcessResult run;
        try {
            run = co_await pack.skill_runners.run(loop, [process, shared, tick] {
                return run_skill_process(process, shared->cancel, tick);
            });
        } catch (...) {
            shared->answered = true;
            ctx.cancel_token().remove(cancel_id);
            throw;
        }
        shared->answered = true;
        ctx.cancel_token().remove(cancel_id);

        auto failed = [&](const std::string& what) -> ContextError {
            std::string message = fmt::format("Skill {} {}", id.str(), what);
            if (!run.err.empty()) message += "; stderr: " + util::sanitize_for_message(run.err, 600);
            return ContextError(ErrorCode::skill_execution_failed, message);
        };
        using End = SkillProcessResult::End;
        switch (run.end) {
            case End::cancelled: throw OperationCancelled(ctx.cancel_token().reason());
            case End::failed_to_start: throw failed("could not start: " + run.start_error);
            case End::timed_out:
                throw failed(fmt::format("ran past its {} ms limit and was killed", process.timeout.count()));
            case End::output_too_large:
                throw failed(
                    fmt::format("wrote more than {} bytes to stdout and was killed", process.limits.output_bytes));
            case End::signaled:
                throw failed(run.signal == SIGXCPU
                                 ? fmt::format("used more than {} s of CPU and was stopped", process.limits.cpu_seconds)
                                 : fmt::format("was killed by signal {} ({}){}", run.signal, strsignal(run.signal),
                                               run.signal == SIGKILL ? " — possibly over its CPU or memory limit"
                                               : run.signal == SIGABRT || run.signal == SIGSEGV
                                                   ? " — possibly over its memory limit"
                                                   : ""));
            case End::exited: break;
        }
        if (run.exit_code != 0) throw failed(fmt::format("exited with status {}", run.exit_code));
        const auto first = run.out.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) throw failed("wrote nothing to stdout (it must write its result as JSON)");
        Json output = Json::parse(run.out, nullptr, false);
        if (output.is_discarded()) {
            throw failed(
                fmt::format("did not write JSON to stdout (it began: {})", util::sanitize_for_message(run.out, 80)));
        }
        co_return Answer{
            std::move(output),
            {{"skillId", id.str()}, {"runtime", runtime}, {"exitCode", run.exit_code}, {"sandboxed", sandboxed}}};
    });
    // A skill may run for minutes (its process's timeout): a client that declared the tasks
    // extension may run it as a task and poll instead of holding the request open.
    declaration.execution = {{"taskSupport", "optional"}};
    return declaration;
}

}  // namespace toolport::context
