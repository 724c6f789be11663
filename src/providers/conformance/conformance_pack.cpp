// The `conformance` pack: exactly the tools, resources and prompts the official MCP
// conformance suite drives (`toolport serve --packs conformance`). It exists to prove
// protocol conformance end to end through the real engine and transports; nothing else
// depends on it.
#include <fmt/format.h>

#include "providers/conformance/conformance_tools.hpp"
#include "providers/source.hpp"
#include "server/request_context.hpp"

namespace toolport::providers {

namespace {

// A 1x1 red PNG and a minimal WAV, as the suite expects them.
constexpr const char* kPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr const char* kWav = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

Json empty_schema() { return Json{{"type", "object"}, {"properties", Json::object()}}; }

Json string_arg_schema(const char* name, const char* description) {
    return Json{{"type", "object"},
                {"properties", {{name, {{"type", "string"}, {"description", description}}}}},
                {"required", {name}}};
}

ToolDeclaration tool(std::string name, std::string description, ToolHandler handler, Json schema = empty_schema()) {
    ToolDeclaration t = conformance::simple_tool(std::move(name), std::move(description), std::move(handler));
    t.input_schema = std::move(schema);
    return t;
}

Task<ToolResult> elicitation_tool(RequestContext& ctx, Json params, const char* prefix) {
    Json answer;
    try {
        answer = co_await ctx.elicit(std::move(params));
    } catch (const std::exception& e) {
        co_return ToolResult::text(fmt::format("Elicitation not supported or error: {}", e.what()));
    }
    co_return ToolResult::text(fmt::format("{}: action={}, content={}", prefix, answer.value("action", ""),
                                           answer.value("content", Json::object()).dump()));
}

void add_tools(SourceContext& c) {
    c.add_tool(tool("test_simple_text", "Tests simple text content response",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        co_return ToolResult::text("This is a simple text response for testing.");
                    }));
    c.add_tool(tool("test_image_content", "Tests image content response",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        co_return ToolResult{}.add(content::image(kPng, "image/png"));
                    }));
    c.add_tool(tool("test_audio_content", "Tests audio content response",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        co_return ToolResult{}.add(content::audio(kWav, "audio/wav"));
                    }));
    c.add_tool(tool("test_embedded_resource", "Tests embedded resource content response",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        co_return ToolResult{}.add(
                            content::embedded_text_resource("test://embedded-resource",
                                                            "This is an embedded resource content.", "text/plain"));
                    }));
    c.add_tool(tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        ToolResult result;
                        result.add(content::text("Multiple content types test:"));
                        result.add(content::image(kPng, "image/png"));
                        result.add(content::embedded_text_resource("test://mixed-content-resource",
                                                                   Json{{"test", "data"}, {"value", 123}}.dump(),
                                                                   "application/json"));
                        co_return result;
                    }));
    c.add_tool(tool("test_tool_with_logging", "Tests tool that emits log messages during execution",
                    [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        ctx.log(LogLevel::info, "Tool execution started");
                        co_await ctx.sleep(std::chrono::milliseconds(50));
                        ctx.log(LogLevel::info, "Tool processing data");
                        co_await ctx.sleep(std::chrono::milliseconds(50));
                        ctx.log(LogLevel::info, "Tool execution completed");
                        co_return ToolResult::text("Tool with logging executed successfully");
                    }));
    c.add_tool(tool("test_tool_with_progress", "Tests tool that reports progress notifications",
                    [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        for (int step : {0, 50, 100}) {
                            ctx.progress(step, 100, fmt::format("Completed step {} of 100", step));
                            if (step < 100) co_await ctx.sleep(std::chrono::milliseconds(50));
                        }
                        Json token = ctx.params().value("_meta", Json::object()).value("progressToken", Json(0));
                        co_return ToolResult::text(token.is_string() ? token.get<std::string>() : token.dump());
                    }));
    c.add_tool(tool("test_error_handling", "Tests error response handling",
                    [](RequestContext&, const Json&) -> Task<ToolResult> {
                        throw std::runtime_error("This tool intentionally returns an error for testing");
                        co_return ToolResult{};
                    }));
    c.add_tool(tool("test_reconnection",
                    "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the "
                    "stream mid-call and the client resumes it",
                    [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        ctx.close_stream();
                        co_await ctx.sleep(std::chrono::milliseconds(100));
                        co_return ToolResult::text(
                            "Reconnection test completed successfully. If you received this, the client properly "
                            "reconnected after stream closure.");
                    }));
    c.add_tool(tool(
        "test_sampling", "Tests server-initiated sampling (LLM completion request)",
        [](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            Json params = {{"messages",
                            {{{"role", "user"}, {"content", {{"type", "text"}, {"text", args.value("prompt", "")}}}}}},
                           {"maxTokens", 100}};
            Json reply;
            try {
                reply = co_await ctx.sample(std::move(params));
            } catch (const std::exception& e) {
                co_return ToolResult::text(fmt::format("Sampling not supported or error: {}", e.what()));
            }
            std::string text = "No response";
            if (reply.contains("content") && reply["content"].is_object() && reply["content"].contains("text")) {
                text = reply["content"]["text"].get<std::string>();
            }
            co_return ToolResult::text("LLM response: " + text);
        },
        string_arg_schema("prompt", "The prompt to send to the LLM")));
    c.add_tool(tool(
        "test_elicitation", "Tests server-initiated elicitation (user input request)",
        [](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            Json params = {{"mode", "form"},
                           {"message", args.value("message", "")},
                           {"requestedSchema",
                            {{"type", "object"},
                             {"properties", {{"response", {{"type", "string"}, {"description", "User's response"}}}}},
                             {"required", {"response"}}}}};
            co_return co_await elicitation_tool(ctx, std::move(params), "User response");
        },
        string_arg_schema("message", "The message to show the user")));
    c.add_tool(
        tool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034",
             [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                 Json properties = {
                     {"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
                     {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
                     {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
                     {"status",
                      {{"type", "string"},
                       {"description", "User status"},
                       {"enum", {"active", "inactive", "pending"}},
                       {"default", "active"}}},
                     {"verified", {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}},
                 };
                 Json params = {{"mode", "form"},
                                {"message", "Please review and update the form fields with defaults"},
                                {"requestedSchema",
                                 {{"type", "object"}, {"properties", properties}, {"required", Json::array()}}}};
                 co_return co_await elicitation_tool(ctx, std::move(params), "Elicitation completed");
             }));
    c.add_tool(tool(
        "test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330",
        [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
            auto titled = [](const char* prefix) {
                return Json::array({{{"const", "value1"}, {"title", std::string("First ") + prefix}},
                                    {{"const", "value2"}, {"title", std::string("Second ") + prefix}},
                                    {{"const", "value3"}, {"title", std::string("Third ") + prefix}}});
            };
            Json properties = {
                {"untitledSingle",
                 {{"type", "string"},
                  {"description", "Select one option"},
                  {"enum", {"option1", "option2", "option3"}}}},
                {"titledSingle",
                 {{"type", "string"}, {"description", "Select one option with titles"}, {"oneOf", titled("Option")}}},
                {"legacyEnum",
                 {{"type", "string"},
                  {"description", "Select one option (legacy)"},
                  {"enum", {"opt1", "opt2", "opt3"}},
                  {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
                {"untitledMulti",
                 {{"type", "array"},
                  {"description", "Select multiple options"},
                  {"minItems", 1},
                  {"maxItems", 3},
                  {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
                {"titledMulti",
                 {{"type", "array"},
                  {"description", "Select multiple options with titles"},
                  {"minItems", 1},
                  {"maxItems", 3},
                  {"items", {{"anyOf", titled("Choice")}}}}},
            };
            Json params = {{"mode", "form"},
                           {"message", "Please select options from the enum fields"},
                           {"requestedSchema",
                            {{"type", "object"}, {"properties", properties}, {"required", Json::array()}}}};
            co_return co_await elicitation_tool(ctx, std::move(params), "Elicitation completed");
        }));
    c.add_tool(tool(
        "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        [](RequestContext&, const Json& args) -> Task<ToolResult> {
            co_return ToolResult::text("JSON Schema 2020-12 tool called with: " + args.dump());
        },
        Json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
             {"type", "object"},
             {"$defs",
              {{"address",
                {{"$anchor", "addressDef"},
                 {"type", "object"},
                 {"properties", {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
             {"properties",
              {{"name", {{"type", "string"}}},
               {"address", {{"$ref", "#/$defs/address"}}},
               {"contactMethod", {{"type", "string"}, {"enum", {"phone", "email"}}}},
               {"phone", {{"type", "string"}}},
               {"email", {{"type", "string"}}}}},
             {"allOf", {{{"anyOf", {{{"required", {"phone"}}}, {{"required", {"email"}}}}}}}},
             {"if", {{"properties", {{"contactMethod", {{"const", "phone"}}}}}, {"required", {"contactMethod"}}}},
             {"then", {{"required", {"phone"}}}},
             {"else", {{"required", {"email"}}}},
             {"additionalProperties", false}}));
}

ResourceSpec text_resource(std::string uri, std::string name, std::string title, std::string description,
                           std::string text) {
    ResourceSpec r;
    r.uri = uri;
    r.name = std::move(name);
    r.title = std::move(title);
    r.description = std::move(description);
    r.mime_type = "text/plain";
    r.reader = [uri, text](RequestContext&, const std::string&, const Json&) -> Task<Json> {
        co_return Json::array({{{"uri", uri}, {"mimeType", "text/plain"}, {"text", text}}});
    };
    return r;
}

// The pack's resources and prompts are its source's (ResourceSpec::source): views and
// `sources.<name>.scopes` apply to them as to its tools.
void add_resources(Registry& registry, const std::string& source) {
    auto add = [&](auto spec) {
        spec.source = source;
        if constexpr (std::is_same_v<decltype(spec), ResourceSpec>) registry.add_resource(std::move(spec));
        else registry.add_resource_template(std::move(spec));
    };
    add(text_resource("test://static-text", "static-text", "Static Text Resource", "A static text resource for testing",
                      "This is the content of the static text resource."));
    ResourceSpec binary;
    binary.uri = "test://static-binary";
    binary.name = "static-binary";
    binary.title = "Static Binary Resource";
    binary.description = "A static binary resource (image) for testing";
    binary.mime_type = "image/png";
    binary.reader = [](RequestContext&, const std::string&, const Json&) -> Task<Json> {
        co_return Json::array({{{"uri", "test://static-binary"}, {"mimeType", "image/png"}, {"blob", kPng}}});
    };
    add(std::move(binary));
    add(text_resource("test://watched-resource", "watched-resource", "Watched Resource",
                      "A resource that auto-updates every 3 seconds", "Watched resource content"));

    ResourceTemplateSpec tmpl;
    tmpl.uri_template = "test://template/{id}/data";
    tmpl.name = "template";
    tmpl.title = "Resource Template";
    tmpl.description = "A resource template with parameter substitution";
    tmpl.mime_type = "application/json";
    tmpl.reader = [](RequestContext&, const std::string& uri, const Json& vars) -> Task<Json> {
        std::string id = vars.value("id", "");
        Json body = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
        co_return Json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", body.dump()}}});
    };
    add(std::move(tmpl));
}

Json user_text(std::string text) {
    return {{"role", "user"}, {"content", {{"type", "text"}, {"text", std::move(text)}}}};
}

void add_prompts(Registry& registry, const std::string& source) {
    auto add = [&](PromptSpec spec) {
        spec.source = source;
        registry.add_prompt(std::move(spec));
    };
    PromptSpec simple;
    simple.name = "test_simple_prompt";
    simple.title = "Simple Test Prompt";
    simple.description = "A simple prompt without arguments";
    simple.handler = [](RequestContext&, const Json&) -> Task<Json> {
        co_return Json{{"messages", {user_text("This is a simple prompt for testing.")}}};
    };
    add(std::move(simple));

    PromptSpec with_args;
    with_args.name = "test_prompt_with_arguments";
    with_args.title = "Prompt With Arguments";
    with_args.description = "A prompt with required arguments";
    with_args.arguments = {{"arg1", "", "First test argument", true}, {"arg2", "", "Second test argument", true}};
    with_args.handler = [](RequestContext&, const Json& args) -> Task<Json> {
        co_return Json{{"messages",
                        {user_text(fmt::format("Prompt with arguments: arg1='{}', arg2='{}'", args.value("arg1", ""),
                                               args.value("arg2", "")))}}};
    };
    add(std::move(with_args));

    PromptSpec embedded;
    embedded.name = "test_prompt_with_embedded_resource";
    embedded.title = "Prompt With Embedded Resource";
    embedded.description = "A prompt that includes an embedded resource";
    embedded.arguments = {{"resourceUri", "", "URI of the resource to embed", true}};
    embedded.handler = [](RequestContext&, const Json& args) -> Task<Json> {
        Json resource = {{"role", "user"},
                         {"content",
                          {{"type", "resource"},
                           {"resource",
                            {{"uri", args.value("resourceUri", "")},
                             {"mimeType", "text/plain"},
                             {"text", "Embedded resource content for testing."}}}}}};
        co_return Json{{"messages", {resource, user_text("Please process the embedded resource above.")}}};
    };
    add(std::move(embedded));

    PromptSpec image;
    image.name = "test_prompt_with_image";
    image.title = "Prompt With Image";
    image.description = "A prompt that includes image content";
    image.handler = [](RequestContext&, const Json&) -> Task<Json> {
        Json picture = {{"role", "user"}, {"content", {{"type", "image"}, {"data", kPng}, {"mimeType", "image/png"}}}};
        co_return Json{{"messages", {picture, user_text("Please analyze the image above.")}}};
    };
    add(std::move(image));
}

}  // namespace

namespace conformance {

ToolDeclaration simple_tool(std::string name, std::string description, ToolHandler handler) {
    return ToolDeclaration{.name = std::move(name),
                           .description = std::move(description),
                           .input_schema = empty_schema(),
                           .handler = std::move(handler)};
}

void toggle_dynamic_tool(SourceContext& context) {
    if (context.remove_tool("test_dynamic_tool")) return;
    context.add_tool(simple_tool("test_dynamic_tool", "Appears and disappears with test_trigger_tool_change",
                                 [](RequestContext&, const Json&) -> Task<ToolResult> {
                                     co_return ToolResult::text("dynamic tool");
                                 }));
}

void toggle_dynamic_prompt(Registry& registry, const std::string& source) {
    if (registry.remove_prompt("test_dynamic_prompt")) return;
    PromptSpec p;
    p.name = "test_dynamic_prompt";
    p.description = "Appears and disappears with test_trigger_prompt_change";
    p.source = source;
    p.handler = [](RequestContext&, const Json&) -> Task<Json> {
        co_return Json{{"messages", {user_text("dynamic prompt")}}};
    };
    registry.add_prompt(std::move(p));
}

}  // namespace conformance

namespace {

// It takes no settings: `packs: {conformance: }` or the name alone.
const config::Section kSettings{"conformance", "The conformance pack: it takes no settings.", {}};

class ConformanceSource final : public Source {
public:
    explicit ConformanceSource(const SourceSettings& settings) { settings.check_keys(kSettings); }
    void start(SourceContext& context) override {
        add_tools(context);
        add_resources(context.registry(), context.source_name());
        add_prompts(context.registry(), context.source_name());
        conformance::add_stateless_tools(context);
        conformance::add_task_tools(context);
    }
};

}  // namespace

const config::Section& conformance_settings_table() { return kSettings; }

std::unique_ptr<Source> make_conformance_source(const SourceSettings& settings) {
    return std::make_unique<ConformanceSource>(settings);
}

}  // namespace toolport::providers
