// The conformance pack's tools for the stateless revision (2026-07-28): multi round-trip
// requests (InputRequiredResult), capability checks, per-request logging, subscription
// triggers and Mcp-Param header mirroring. They use only the public handler API, so the
// same engine paths serve real packs.
#include <fmt/format.h>

#include "providers/conformance/conformance_tools.hpp"
#include "server/input_required.hpp"

namespace toolport::providers::conformance {

namespace {

Json elicit_params(const char* message, const char* property, const char* type) {
    return Json{{"message", message},
                {"requestedSchema",
                 {{"type", "object"}, {"properties", {{property, {{"type", type}}}}}, {"required", {property}}}}};
}

Json sampling_params(const char* text, int max_tokens) {
    return Json{{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}}},
                {"maxTokens", max_tokens}};
}

std::string sampled_text(const Json& answer) {
    if (answer.contains("content") && answer["content"].is_object()) return answer["content"].value("text", "");
    return "";
}

std::string content_field(const Json& answer, const char* field) {
    const Json c = answer.value("content", Json::object());
    if (!c.is_object() || !c.contains(field)) return "";
    return c[field].is_string() ? c[field].get<std::string>() : c[field].dump();
}

}  // namespace

void add_stateless_tools(SourceContext& c) {
    Registry& r = c.registry();
    c.add_tool(simple_tool("test_missing_capability", "Needs the client's sampling capability (-32021 without it)",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               ctx.require_client_capability("sampling");
                               co_return ToolResult::text("Success");
                           }));
    c.add_tool(
        simple_tool("test_input_required_result_elicitation", "Asks the user's name (MRTR elicitation)",
                    [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        Json answer = co_await ctx.ask_client(
                            {"elicitation/create", elicit_params("What is your name?", "name", "string"), "user_name"});
                        co_return ToolResult::text(fmt::format("Hello, {}!", content_field(answer, "name")));
                    }));
    c.add_tool(simple_tool("test_input_required_result_sampling", "Asks the client's model a question (MRTR sampling)",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               Json answer = co_await ctx.ask_client(
                                   {"sampling/createMessage", sampling_params("What is the capital of France?", 100),
                                    "sample_request"});
                               co_return ToolResult::text("Sampling result: " + sampled_text(answer));
                           }));
    c.add_tool(simple_tool("test_input_required_result_list_roots", "Asks for the client's roots (MRTR roots/list)",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               Json answer = co_await ctx.ask_client({"roots/list", Json::object(), "roots_request"});
                               co_return ToolResult::text(
                                   fmt::format("Found {} root(s)", answer.value("roots", Json::array()).size()));
                           }));
    c.add_tool(simple_tool("test_input_required_result_request_state", "Confirms through a signed requestState",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               Json answer = co_await ctx.ask_client(
                                   {"elicitation/create", elicit_params("Please confirm", "ok", "boolean"), "confirm"});
                               co_return ToolResult::text(
                                   "state-ok: requestState validated (ok=" + content_field(answer, "ok") + ")");
                           }));
    c.add_tool(simple_tool("test_input_required_result_tampered_state", "Rejects a modified requestState", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.ask_client({"elicitation/create", elicit_params("Please confirm", "ok", "boolean"), "confirm"});
        co_return ToolResult::text("integrity-ok: state verified");
    }));
    c.add_tool(simple_tool("test_input_required_result_multiple_inputs", "Asks three questions in one round trip", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        std::vector<ClientRequest> questions;
        questions.push_back({"elicitation/create", elicit_params("What is your name?", "name", "string"), "user_name"});
        questions.push_back({"sampling/createMessage", sampling_params("Generate a greeting", 50), "greeting"});
        questions.push_back({"roots/list", Json::object(), "client_roots"});
        auto answers = co_await ctx.ask_client_all(std::move(questions));
        co_return ToolResult::text(fmt::format("Name: {}; Greeting: {}; Roots: {}", content_field(answers[0], "name"),
                                               sampled_text(answers[1]),
                                               answers[2].value("roots", Json::array()).size()));
    }));
    c.add_tool(simple_tool("test_input_required_result_multi_round", "Asks two questions in two rounds",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               Json first = co_await ctx.ask_client(
                                   {"elicitation/create", elicit_params("Step 1: What is your name?", "name", "string"),
                                    "step1"});
                               Json second = co_await ctx.ask_client(
                                   {"elicitation/create",
                                    elicit_params("Step 2: What is your favorite color?", "color", "string"), "step2"});
                               co_return ToolResult::text(fmt::format("Multi-round complete for {} who likes {}",
                                                                      content_field(first, "name"),
                                                                      content_field(second, "color")));
                           }));
    c.add_tool(simple_tool(
        "test_input_required_result_capabilities", "Asks only what the client declared it can answer",
        [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
            std::vector<ClientRequest> questions;
            const Json& caps = ctx.client_capabilities();
            if (caps.contains("elicitation")) {
                questions.push_back(
                    {"elicitation/create", elicit_params("Provide input", "value", "string"), "elicit_input"});
            }
            if (caps.contains("sampling")) {
                questions.push_back({"sampling/createMessage", sampling_params("Sample request", 50), "sample_input"});
            }
            if (questions.empty()) co_return ToolResult::text("capabilities-ok: nothing to ask");
            auto answers = co_await ctx.ask_client_all(std::move(questions));
            co_return ToolResult::text(fmt::format("capabilities-ok: received {} answer(s)", answers.size()));
        }));
    c.add_tool(simple_tool("test_streaming_elicitation", "Streams notifications, then completes (no client requests)",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               ctx.progress(0, 1, "starting");
                               ctx.progress(1, 1, "done");
                               co_return ToolResult::text("Streaming complete");
                           }));
    c.add_tool(simple_tool("test_logging_tool", "Logs only when the request asks for a log level",
                           [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                               ctx.log(LogLevel::info, "Logging tool evaluated");
                               co_return ToolResult::text("Logging evaluated");
                           }));
    c.add_tool(simple_tool("test_trigger_tool_change", "Adds or removes a tool, so tools/list_changed is sent",
                           [context = &c](RequestContext&, const Json&) -> Task<ToolResult> {
                               toggle_dynamic_tool(*context);
                               co_return ToolResult::text("Mutation triggered");
                           }));
    c.add_tool(simple_tool("test_trigger_resource_update",
                           "Announces a change of test://watched-resource to the sessions subscribed to it",
                           [context = &c](RequestContext&, const Json&) -> Task<ToolResult> {
                               context->resource_updated("test://watched-resource");
                               co_return ToolResult::text("Update announced");
                           }));
    c.add_tool(simple_tool("test_trigger_prompt_change", "Adds or removes a prompt, so prompts/list_changed is sent",
                           [registry = &r, source = c.source_name()](RequestContext&, const Json&) -> Task<ToolResult> {
                               toggle_dynamic_prompt(*registry, source);
                               co_return ToolResult::text("Mutation triggered");
                           }));
    ToolDeclaration header_tool = simple_tool("test_custom_header",
                                              "Echoes the region, which clients mirror in an Mcp-Param-Region header",
                                              [](RequestContext&, const Json& args) -> Task<ToolResult> {
                                                  co_return ToolResult::text("Region: " + args.value("region", ""));
                                              });
    header_tool.input_schema = {
        {"type", "object"},
        {"properties",
         {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}, {"description", "Region to route to"}}}}},
        {"required", {"region"}}};
    c.add_tool(std::move(header_tool));

    PromptSpec prompt;
    prompt.name = "test_input_required_result_prompt";
    prompt.title = "Prompt With Input Required";
    prompt.description = "A prompt that asks the client for context first (MRTR)";
    prompt.handler = [](RequestContext& ctx, const Json&) -> Task<Json> {
        Json answer = co_await ctx.ask_client(
            {"elicitation/create", elicit_params("What context should the prompt use?", "context", "string"),
             "user_context"});
        co_return Json{
            {"messages",
             {{{"role", "user"},
               {"content", {{"type", "text"}, {"text", "Prompt with context: " + content_field(answer, "context")}}}}}}};
    };
    prompt.source = c.source_name();
    r.add_prompt(std::move(prompt));
}

}  // namespace toolport::providers::conformance
