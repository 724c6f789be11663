// The `testing` pack: tools that misbehave on demand, for the pipeline's tests (timeouts,
// breakers, size caps, cache, budgets, validation). It is registered only when the
// environment says TOOLPORT_TEST_PACK=1, so a production server can never expose it.
//
//   test_sleep {ms}                      sleeps (cancellably), then answers
//   test_fail {code?, message?, crash?}  fails with that ToolError code, or throws a plain exception
//   test_large {bytes}                   answers with that many bytes of text (default 5 MiB)
//   test_counter {key?, downstream_calls?}  read-only (cacheable): counts its real invocations
//                                        and reports downstream_api_calls in _meta
//   test_validate {...}                  a schema with required, enum, formats, ranges
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "providers/source.hpp"
#include "server/request_context.hpp"
#include "server/tool_error.hpp"

namespace toolport::providers {

namespace {

ToolDeclaration make_tool(std::string name, std::string description, Json schema, ToolHandler handler) {
    return ToolDeclaration{.name = std::move(name),
                           .description = std::move(description),
                           .input_schema = std::move(schema),
                           .handler = std::move(handler)};
}

std::optional<ToolErrorCode> code_named(const std::string& name) {
    static const std::map<std::string, ToolErrorCode> codes = {
        {"MISSING_API_KEY", ToolErrorCode::missing_api_key},
        {"MISSING_PARAMETER", ToolErrorCode::missing_parameter},
        {"INVALID_ARGUMENT", ToolErrorCode::invalid_argument},
        {"INVALID_FORMAT", ToolErrorCode::invalid_format},
        {"NOT_FOUND", ToolErrorCode::not_found},
        {"RATE_LIMITED", ToolErrorCode::rate_limited},
        {"TIMEOUT", ToolErrorCode::timeout},
        {"UPSTREAM_ERROR", ToolErrorCode::upstream_error},
        {"INTERNAL_ERROR", ToolErrorCode::internal_error},
    };
    auto it = codes.find(name);
    if (it == codes.end()) return std::nullopt;
    return it->second;
}

void add_tools(SourceContext& context) {
    context.add_tool(make_tool("test_sleep", "Sleeps for `ms` milliseconds (cancellable), then answers",
                               Json{{"type", "object"},
                                    {"properties", {{"ms", {{"type", "integer"}, {"minimum", 0}, {"maximum", 600000}}}}},
                                    {"required", {"ms"}}},
                               [](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
                                   auto ms = args.value("ms", 0);
                                   co_await ctx.sleep(std::chrono::milliseconds(ms));
                                   co_return ToolResult::text(fmt::format("slept {} ms", ms));
                               }));

    context.add_tool(make_tool(
        "test_fail",
        "Fails on demand: with the ToolError `code` (default UPSTREAM_ERROR), or with a plain exception when `crash` "
        "is true",
        Json{{"type", "object"},
             {"properties",
              {{"code", {{"type", "string"}}}, {"message", {{"type", "string"}}}, {"crash", {{"type", "boolean"}}}}}},
        [](RequestContext&, const Json& args) -> Task<ToolResult> {
            const std::string message = args.value("message", "failure on demand");
            if (args.value("crash", false)) throw std::runtime_error(message);
            auto code = code_named(args.value("code", "UPSTREAM_ERROR"));
            if (!code) throw ToolError(ToolErrorCode::invalid_argument, "unknown code").parameter("code");
            throw ToolError(*code, message);
            co_return ToolResult{};
        }));

    context.add_tool(
        make_tool("test_large", "Answers with `bytes` bytes of text (default 5 MiB)",
                  Json{{"type", "object"},
                       {"properties", {{"bytes", {{"type", "integer"}, {"minimum", 0}, {"maximum", 67108864}}}}}},
                  [](RequestContext&, const Json& args) -> Task<ToolResult> {
                      std::size_t bytes = args.value("bytes", std::size_t{5} << 20);
                      co_return ToolResult::text(std::string(bytes, 'x'));
                  }));

    auto counters = std::make_shared<std::map<std::string, long long>>();
    ToolDeclaration counter =
        make_tool("test_counter", "Read-only and cacheable: answers with how many times it really ran for `key`",
                  Json{{"type", "object"},
                       {"properties",
                        {{"key", {{"type", "string"}}}, {"downstream_calls", {{"type", "integer"}, {"minimum", 0}}}}}},
                  [counters](RequestContext&, const Json& args) -> Task<ToolResult> {
                      const std::string key = args.value("key", "");
                      long long n = ++(*counters)[key];
                      ToolResult result = ToolResult::structured(Json{{"key", key}, {"invocation", n}});
                      if (args.contains("downstream_calls"))
                          result.meta = {{"downstream_api_calls", args["downstream_calls"]}};
                      co_return result;
                  });
    counter.annotations.read_only = true;
    context.add_tool(std::move(counter));

    context.add_tool(
        make_tool("test_validate", "Echoes its arguments; its schema exercises validation",
                  Json{{"type", "object"},
                       {"properties",
                        {{"award_date",
                          {{"type", "string"},
                           {"format", "date"},
                           {"pattern", "^\\d{4}-\\d{2}-\\d{2}$"},
                           {"description", "YYYY-MM-DD"}}},
                         {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 10}}},
                         {"kind", {{"enum", {"contract", "grant"}}}},
                         {"filters",
                          {{"type", "object"},
                           {"properties", {{"naics", {{"type", "string"}, {"examples", {"541511"}}}}}},
                           {"additionalProperties", false}}}}},
                       {"required", {"limit"}}},
                  [](RequestContext&, const Json& args) -> Task<ToolResult> { co_return ToolResult::structured(args); }));
}

// It takes no settings: `packs: {testing: }` or the name alone.
const config::Section kSettings{"testing",
                                "The testing pack (only with TOOLPORT_TEST_PACK=1): it takes no settings.",
                                {}};

class TestingSource final : public Source {
public:
    explicit TestingSource(const SourceSettings& settings) { settings.check_keys(kSettings); }
    void start(SourceContext& context) override { add_tools(context); }
};

}  // namespace

const config::Section& testing_settings_table() { return kSettings; }

std::unique_ptr<Source> make_testing_source(const SourceSettings& settings) {
    return std::make_unique<TestingSource>(settings);
}

}  // namespace toolport::providers
