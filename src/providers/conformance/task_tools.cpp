// The conformance pack's tools for tasks (the io.modelcontextprotocol/tasks extension,
// SEP-2663, and the 2025-11-25 task model, SEP-1686): a sync-only tool and task-supporting
// ones that sleep, fail as tools, fail as protocol errors, ask the user once or twice at a
// time, and ask before the task starts.
// Task support is declared the ordinary way (execution.taskSupport); the engine
// (server/tasks.hpp) decides the rest, so the same paths serve real packs.
#include <fmt/format.h>

#include "providers/conformance/conformance_tools.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"

namespace toolport::providers::conformance {

namespace {

ToolDeclaration task_tool(std::string name, std::string description, const char* support, Json schema,
                          ToolHandler handler) {
    ToolDeclaration t = simple_tool(std::move(name), std::move(description), std::move(handler));
    t.input_schema = std::move(schema);
    t.execution = Json{{"taskSupport", support}};
    // These tools exist to exercise the task machinery, which the suite expects of every
    // call of theirs: a task at once, whatever the call takes.
    t.meta = Json{{kTaskThresholdMeta, 0}};
    return t;
}

Json confirm_params(const std::string& message) {
    return Json{{"message", message},
                {"requestedSchema",
                 {{"type", "object"}, {"properties", {{"confirm", {{"type", "boolean"}}}}}, {"required", {"confirm"}}}}};
}

bool accepted(const Json& answer) { return answer.is_object() && answer.value("action", "") == "accept"; }

std::string content_text(const Json& answer, const char* field) {
    const Json content = answer.value("content", Json::object());
    if (!content.is_object() || !content.contains(field)) return "";
    return content[field].is_string() ? content[field].get<std::string>() : content[field].dump();
}

}  // namespace

void add_task_tools(SourceContext& c) {
    ToolDeclaration greet = simple_tool("greet", "Greets by name (sync-only: never a task)",
                                        [](RequestContext&, const Json& args) -> Task<ToolResult> {
                                            co_return ToolResult::text(
                                                fmt::format("Hello, {}!", args.value("name", std::string("World"))));
                                        });
    greet.input_schema = Json{{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}};
    c.add_tool(std::move(greet));

    c.add_tool(task_tool(
        "slow_compute", "Sleeps `seconds` seconds, then answers (a task for clients that support tasks)", "optional",
        Json{{"type", "object"},
             {"properties", {{"seconds", {{"type", "number"}, {"minimum", 0}}}, {"label", {{"type", "string"}}}}},
             {"required", {"seconds"}}},
        [](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            const double seconds = args.value("seconds", 0.0);
            if (seconds > 0) co_await ctx.sleep(std::chrono::milliseconds(static_cast<long long>(seconds * 1000)));
            co_return ToolResult::text(
                fmt::format("Computed {} after {} s", args.value("label", std::string("result")), seconds));
        }));

    c.add_tool(task_tool("failing_job", "Fails as a tool after about a second (requires tasks)", "required",
                         Json{{"type", "object"}}, [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                             co_await ctx.sleep(std::chrono::seconds(1));
                             throw ToolError(ToolErrorCode::upstream_error, "The job failed, as it always does");
                         }));

    c.add_tool(task_tool("protocol_error_job", "Ends in a protocol error instead of a result", "optional",
                         Json{{"type", "object"}}, [](RequestContext&, const Json&) -> Task<ToolResult> {
                             throw RpcError(protocol::error_code::kInternalError,
                                            "Internal error: protocol_error_job broke down, as it always does");
                             co_return ToolResult::text("unreachable");
                         }));

    c.add_tool(task_tool(
        "confirm_delete", "Asks the user to confirm, then deletes (pretends to) the file", "optional",
        Json{{"type", "object"}, {"properties", {{"filename", {{"type", "string"}}}}}, {"required", {"filename"}}},
        [](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            const std::string file = args.value("filename", std::string());
            Json answer = co_await ctx.ask_client(
                {"elicitation/create", confirm_params(fmt::format("Delete {}?", file)), "confirm_delete"});
            const bool yes = accepted(answer) && content_text(answer, "confirm") == "true";
            co_return ToolResult::text(yes ? fmt::format("Deleted {}", file) : fmt::format("Kept {}", file));
        }));

    c.add_tool(task_tool(
        "multi_input", "Asks two questions at once, then answers with both", "optional", Json{{"type", "object"}},
        [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
            std::vector<ClientRequest> questions;
            questions.push_back(
                {"elicitation/create",
                 Json{{"message", "Your name?"},
                      {"requestedSchema",
                       {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}, {"required", {"name"}}}}},
                 "name"});
            questions.push_back({"elicitation/create", confirm_params("Go ahead?"), "confirm"});
            auto answers = co_await ctx.ask_client_all(std::move(questions));
            co_return ToolResult::text(fmt::format("name={} confirm={}", content_text(answers[0], "name"),
                                                   content_text(answers[1], "confirm")));
        }));

    ToolDeclaration ask_first = task_tool(
        "test_tool_with_task", "Asks the user's name, then continues as a task (requires tasks)", "required",
        Json{{"type", "object"}}, [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
            Json answer = co_await ctx.ask_client(
                {"elicitation/create",
                 Json{{"message", "What is your name?"},
                      {"requestedSchema",
                       {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}, {"required", {"name"}}}}},
                 "user_name"});
            co_return ToolResult::text(fmt::format("Hello, {}! (from the task)", content_text(answer, "name")));
        });
    ask_first.meta[kInputBeforeTaskMeta] = true;
    c.add_tool(std::move(ask_first));
}

}  // namespace toolport::providers::conformance
