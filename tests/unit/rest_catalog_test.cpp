// REST tool catalogs, the parts without a network: settings and the agentpmt preset,
// reading catalog pages in the three formats, schema repair, safe and unique names, the
// execute request and the three answer shapes, errors with secrets stripped, event
// streams, and the tool set that only reports real changes.
#include <gtest/gtest.h>

#include "error_of.hpp"
#include "manual_executor.hpp"
#include "providers/rest/catalog_listing.hpp"
#include "providers/rest/catalog_settings.hpp"
#include "providers/rest/execute_answer.hpp"
#include "providers/rest/schema_repair.hpp"
#include "providers/rest/tool_names.hpp"
#include "providers/source.hpp"
#include "providers/tool_set.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::rest;
using providers::SourceSettings;

namespace {

using toolport::test_support::error_of;

Json agentpmt_entry(const std::string& id, const std::string& description, Json parameters) {
    return {{"type", "function"},
            {"function", {{"name", id}, {"description", description}, {"parameters", parameters}}}};
}

}  // namespace

// ---- settings ---------------------------------------------------------------------------

TEST(RestCatalogSettings, AgentpmtPresetIsTheRealApi) {
    unsetenv("AGENT_PAYMENT_API_URL");
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "rest.agentpmt"));
    EXPECT_EQ(s.base_url, "https://api.agentpmt.com");
    EXPECT_EQ(s.list.url, "/products/fetch");
    EXPECT_EQ(s.list.pagination, Pagination::page);
    EXPECT_EQ(s.list.has_next_path, "details.has_next_page");
    EXPECT_EQ(s.execute.url, "/products/purchase");
    EXPECT_EQ(s.execute.body, (Json{{"product_id", "{name}"}, {"parameters", "{arguments}"}}));
    EXPECT_EQ(s.headers_from_env.at("X-API-Key"), "AGENT_PAYMENT_API_KEY");
    EXPECT_EQ(s.headers_from_env.at("X-Budget-Key"), "AGENT_PAYMENT_BUDGET_KEY");
    setenv("AGENT_PAYMENT_API_URL", "http://127.0.0.1:9/", 1);
    EXPECT_EQ(CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "x")).base_url, "http://127.0.0.1:9");
    unsetenv("AGENT_PAYMENT_API_URL");
}

TEST(RestCatalogSettings, SectionKeysOverrideThePreset) {
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"},
                                                       {"base_url", "http://localhost:1"},
                                                       {"refresh_interval_s", "0"},
                                                       {"list", {{"page_size", "50"}}},
                                                       {"execute", {{"output_path", "data.text"}}}},
                                                  "rest.agentpmt"));
    EXPECT_EQ(s.base_url, "http://localhost:1");
    EXPECT_EQ(s.refresh_interval.count(), 0);
    EXPECT_EQ(s.list.page_size, 50);
    EXPECT_EQ(s.list.url, "/products/fetch");  // kept from the preset
    EXPECT_EQ(s.execute.output_paths, std::vector<std::string>{"data.text"});
}

TEST(RestCatalogSettings, RefusesWhatItCannotUse) {
    EXPECT_NE(error_of([] {
                  CatalogSettings::from(SourceSettings(Json::object(), "rest.x"));
              }).find("base_url: is required"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  CatalogSettings::from(SourceSettings(Json{{"preset", "other"}}, "rest.x"));
              }).find("unknown preset"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  CatalogSettings::from(SourceSettings(Json{{"base_url", "ftp://x"}}, "rest.x"));
              }).find("rest.x.base_url"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  CatalogSettings::from(
                      SourceSettings(Json{{"base_url", "http://x"}, {"list", {{"pagination", "cursor"}}}}, "rest.x"));
              }).find("must be none, page or next"),
              std::string::npos);
}

// ---- listing ----------------------------------------------------------------------------

TEST(RestCatalogListing, ReadsAgentpmtPagesAndSplitsTheDisplayName) {
    ListSettings list;
    list.pagination = Pagination::page;
    Json answer = {{"success", true},
                   {"tools", {agentpmt_entry("5f3a", "Weather Check \u2014 The weather now.", {{"type", "object"}})}},
                   {"details", {{"has_next_page", true}}}};
    auto page = parse_catalog_page(answer, list);
    ASSERT_EQ(page.tools.size(), 1u);
    EXPECT_EQ(page.tools[0].name, "5f3a");
    EXPECT_EQ(page.tools[0].title, "Weather Check");
    EXPECT_EQ(page.tools[0].description, "The weather now.");
    EXPECT_TRUE(page.has_next);
    answer["details"]["has_next_page"] = false;
    EXPECT_FALSE(parse_catalog_page(answer, list).has_next);
}

TEST(RestCatalogListing, ReadsBareAndMcpEntriesAndSkipsNonTools) {
    ListSettings list;
    list.tools_path = "data.items";
    list.pagination = Pagination::next;
    Json answer = {{"data",
                    {{"items",
                      {{{"name", "bare"}, {"description", "d"}, {"parameters", {{"type", "object"}}}},
                       {{"name", "mcp"},
                        {"title", "An MCP tool"},
                        {"inputSchema", {{"type", "object"}}},
                        {"annotations", {{"readOnlyHint", true}}}},
                       {{"description", "no name"}},
                       42}}}},
                   {"next", "/v1/tools?page=2"}};
    auto page = parse_catalog_page(answer, list);
    ASSERT_EQ(page.tools.size(), 2u);
    EXPECT_EQ(page.tools[0].name, "bare");
    EXPECT_EQ(page.tools[1].title, "An MCP tool");
    EXPECT_EQ(page.tools[1].annotations["readOnlyHint"], true);
    EXPECT_EQ(page.skipped.size(), 2u);
    EXPECT_EQ(page.next_url, "/v1/tools?page=2");
}

TEST(RestCatalogListing, RefusalsAndMissingArraysAreCatalogErrors) {
    ListSettings list;
    list.success_path = "success";
    EXPECT_EQ(error_of([&] {
                  parse_catalog_page(Json{{"success", false}, {"error", "bad key"}}, list);
              }),
              "the catalog API refused: bad key");
    EXPECT_NE(error_of([&] {
                  parse_catalog_page(Json{{"success", true}}, list);
              }).find("no tool array at \"tools\""),
              std::string::npos);
    EXPECT_NE(error_of([&] { parse_catalog_page(Json::array(), list); }).find("not a JSON object"), std::string::npos);
}

TEST(RestCatalogListing, FindPathWalksObjectsAndArrays) {
    Json v = {{"a", {{"b", {1, 2, {{"c", "x"}}}}}}};
    EXPECT_EQ(*find_path(v, "a.b.2.c"), "x");
    EXPECT_EQ(find_path(v, "a.z"), nullptr);
    EXPECT_EQ(find_path(v, "a.b.9"), nullptr);
    EXPECT_EQ(find_path(v, ""), &v);
}

// ---- schema repair -----------------------------------------------------------------------

TEST(RestSchemaRepair, MovesRequiredFlagsIntoTheObjectsRequiredList) {
    auto r = repair_input_schema(
        {{"type", "object"},
         {"properties",
          {{"key", {{"type", "string"}, {"required", true}}},
           {"opt", {{"type", "string"}, {"required", false}}},
           {"nested", {{"type", "object"}, {"properties", {{"inner", {{"type", "integer"}, {"required", true}}}}}}}}}});
    ASSERT_EQ(r.unrepairable, "");
    EXPECT_EQ(r.schema["required"], Json::array({"key"}));
    EXPECT_FALSE(r.schema["properties"]["key"].contains("required"));
    EXPECT_FALSE(r.schema["properties"]["opt"].contains("required"));
    EXPECT_EQ(r.schema["properties"]["nested"]["required"], Json::array({"inner"}));
    EXPECT_EQ(r.repairs.size(), 3u);
}

TEST(RestSchemaRepair, CoercesOrDropsDefaultsOfTheWrongTypeOrOutsideTheEnum) {
    auto r = repair_input_schema({{"type", "object"},
                                  {"properties",
                                   {{"ttl", {{"type", "integer"}, {"default", "3600"}}},
                                    {"ratio", {{"type", "number"}, {"default", "0.5"}}},
                                    {"on", {{"type", "boolean"}, {"default", "true"}}},
                                    {"name", {{"type", "string"}, {"default", 7}}},
                                    {"bad", {{"type", "integer"}, {"default", "soon"}}},
                                    {"unit", {{"type", "string"}, {"enum", {"m", "ft"}}, {"default", "yards"}}},
                                    {"fine", {{"type", "string"}, {"enum", {"m", "ft"}}, {"default", "m"}}}}}});
    ASSERT_EQ(r.unrepairable, "");
    const auto& p = r.schema["properties"];
    EXPECT_EQ(p["ttl"]["default"], 3600);
    EXPECT_EQ(p["ratio"]["default"], 0.5);
    EXPECT_EQ(p["on"]["default"], true);
    EXPECT_EQ(p["name"]["default"], "7");
    EXPECT_FALSE(p["bad"].contains("default"));
    EXPECT_FALSE(p["unit"].contains("default"));
    EXPECT_EQ(p["fine"]["default"], "m");
    EXPECT_EQ(r.repairs.size(), 6u);
}

TEST(RestSchemaRepair, FixesTypeSpellingsAndMissingParameters) {
    auto none = repair_input_schema(nullptr);
    EXPECT_EQ(none.schema, (Json{{"type", "object"}, {"properties", Json::object()}}));
    EXPECT_TRUE(none.repairs.empty());
    auto r = repair_input_schema({{"properties", {{"n", {{"type", "int"}}}, {"x", {{"type", "Whatever"}}}}}});
    ASSERT_EQ(r.unrepairable, "");
    EXPECT_EQ(r.schema["type"], "object");
    EXPECT_EQ(r.schema["properties"]["n"]["type"], "integer");
    EXPECT_FALSE(r.schema["properties"]["x"].contains("type"));
}

TEST(RestSchemaRepair, SchemasThatCannotBeArgumentsAreUnrepairable) {
    EXPECT_NE(repair_input_schema("query: string").unrepairable, "");
    EXPECT_NE(repair_input_schema({{"type", "array"}}).unrepairable, "");
    Json deep = {{"type", "object"}};
    for (int i = 0; i < 60; ++i) deep = {{"type", "object"}, {"properties", {{"p", deep}}}};
    EXPECT_NE(repair_input_schema(deep).unrepairable.find("nested more than"), std::string::npos);
}

// ---- names ------------------------------------------------------------------------------

TEST(RestToolNames, SafeNamesFitWhatClientsAccept) {
    EXPECT_EQ(safe_tool_name("weather.check v2"), "weather_check_v2");
    EXPECT_EQ(safe_tool_name("--café!!"), "caf");
    EXPECT_EQ(safe_tool_name("!!!"), "tool");
    EXPECT_EQ(safe_tool_name(std::string(100, 'a')).size(), 64u);
    EXPECT_EQ(name_from_title("Weather Check (US)"), "weather-check-us");
    EXPECT_EQ(name_from_title("Currency  Convert"), "currency-convert");
}

TEST(RestToolNames, CollisionsGetSuffixesThatDoNotDependOnOrder) {
    auto a = unique_tool_names({"echo", "echo", "other"}, {"id-b", "id-a", "id-c"});
    auto b = unique_tool_names({"other", "echo", "echo"}, {"id-c", "id-a", "id-b"});
    EXPECT_EQ(a[1], "echo");  // the smaller catalog name keeps the name
    EXPECT_EQ(a[0], b[2]);
    EXPECT_EQ(a[0].rfind("echo_", 0), 0u);
    EXPECT_EQ(a[0].size(), 11u);
    auto long_names = unique_tool_names({std::string(64, 'x'), std::string(64, 'x')}, {"1", "2"});
    EXPECT_EQ(long_names[1].size(), 64u);
    EXPECT_NE(long_names[0], long_names[1]);
}

// ---- execute ----------------------------------------------------------------------------

TEST(RestExecute, UrlAndBodyComeFromTheTemplatesWithTheNameEncoded) {
    CatalogSettings s;
    s.base_url = "https://api.example.com";
    s.execute.url = "/tools/{name}/run";
    s.execute.stream_query = "stream=true";
    EXPECT_EQ(execute_url(s, "../admin?x=1#y", false), "https://api.example.com/tools/..%2Fadmin%3Fx%3D1%23y/run");
    EXPECT_EQ(execute_url(s, "a", true), "https://api.example.com/tools/a/run?stream=true");
    Json args = {{"q", "x"}};
    EXPECT_EQ(execute_body(Json{{"product_id", "{name}"}, {"parameters", "{arguments}"}, {"note", "for {name}"}}, "p1",
                           args),
              (Json{{"product_id", "p1"}, {"parameters", args}, {"note", "for p1"}}));
    EXPECT_EQ(execute_body("{arguments}", "p1", args), args);
}

TEST(RestExecute, ReadsTheThreeAgentpmtAnswerShapes) {
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "rest.agentpmt")).execute;
    auto shipped = read_execute_answer(
        {{"success", true},
         {"response",
          {{"status_code", 200}, {"data", {{"success", true}, {"output", {{"temp", 21}}}}}, {"success", true}}},
         {"purchase_result", "charged 0.01"}},
        s, {});
    EXPECT_EQ(shipped.structured_content, (Json{{"temp", 21}}));
    EXPECT_EQ(shipped.content[0]["text"], "{\"temp\":21}");
    EXPECT_EQ(shipped.meta["catalog"]["purchase_result"], "charged 0.01");
    auto router = read_execute_answer({{"success", true}, {"output", "3 words"}}, s, {});
    EXPECT_EQ(router.content[0]["text"], "3 words");
    EXPECT_TRUE(router.structured_content.is_null());
    auto design = read_execute_answer({{"success", true}, {"result", "ok"}, {"cost", 0.01}, {"balance", 9.99}}, s, {});
    EXPECT_EQ(design.content[0]["text"], "ok");
    EXPECT_EQ(design.meta["catalog"]["balance"], 9.99);
}

TEST(RestExecute, FailuresKeepTheApisMessageWithoutSecrets) {
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "rest.agentpmt")).execute;
    try {
        read_execute_answer({{"success", false}, {"error", "insufficient budget for key budget-secret-123"}}, s,
                            {"budget-secret-123"});
        FAIL() << "no error";
    } catch (const ToolError& e) {
        EXPECT_EQ(e.code(), ToolErrorCode::upstream_error);
        EXPECT_EQ(std::string(e.what()),
                  "The API reported that the tool failed: insufficient budget for key [redacted]");
        EXPECT_FALSE(e.is_transient());  // the API answered: the same call is refused again
    }
    try {
        read_execute_answer({{"success", true}, {"response", {{"success", true}, {"data", {{"success", false}}}}}}, s,
                            {});
        FAIL() << "no error";
    } catch (const ToolError& e) {
        EXPECT_NE(std::string(e.what()).find("no reason given"), std::string::npos);
    }
}

TEST(RestExecute, ASuccessfulAnswerThatEchoesTheKeysHasThemRedacted) {
    // A catalog that echoes the operator's key in a JSON success answer: redacted in the
    // text, in structuredContent and in _meta, with the JSON's shape unchanged.
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "rest.agentpmt")).execute;
    s.meta_paths = {"receipt"};
    const std::vector<std::string> secrets = {"sk-live-abcdef", "budget-secret-123"};
    auto echoed = read_execute_answer({{"success", true},
                                       {"output",
                                        {{"account", {{"api_key", "sk-live-abcdef"}, {"keys", {"budget-secret-123", 7}}}},
                                         {"note", "key sk-live-abcdef is valid"},
                                         {"sk-live-abcdef", true}}},
                                       {"receipt", "charged to budget-secret-123"}},
                                      s, secrets);
    const Json expected = {{"account", {{"api_key", "[redacted]"}, {"keys", {"[redacted]", 7}}}},
                           {"note", "key [redacted] is valid"},
                           {"[redacted]", true}};
    EXPECT_EQ(echoed.structured_content, expected);
    EXPECT_EQ(Json::parse(echoed.content[0]["text"].get<std::string>()), expected);
    EXPECT_EQ(echoed.meta["catalog"]["receipt"], "charged to [redacted]");
    const std::string all = echoed.to_json().dump();
    for (const auto& secret : secrets) EXPECT_EQ(all.find(secret), std::string::npos) << all;

    // A string output (text only) too, and a secret JSON escapes in the text ("a/b" as "a\/b").
    EXPECT_EQ(
        read_execute_answer({{"success", true}, {"output", "your key: sk-live-abcdef"}}, s, secrets).content[0]["text"],
        "your key: [redacted]");
    auto escaped = read_execute_answer({{"success", true}, {"output", {{"k", "tok\"en/1234"}}}}, s, {"tok\"en/1234"});
    EXPECT_EQ(escaped.structured_content, (Json{{"k", "[redacted]"}}));
    EXPECT_EQ(escaped.content[0]["text"], "{\"k\":\"[redacted]\"}");
}

TEST(RestExecute, ARedactedAnswerThatNoLongerMatchesTheOutputSchemaIsAnError) {
    auto s = CatalogSettings::from(SourceSettings(Json{{"preset", "agentpmt"}}, "rest.agentpmt")).execute;
    const Json schema = {{"type", "object"}, {"properties", {{"api_key", {{"type", "string"}, {"pattern", "^sk-"}}}}}};
    const Json answer = {{"success", true}, {"output", {{"api_key", "sk-live-abcdef"}}}};
    try {
        read_execute_answer(answer, s, {"sk-live-abcdef"}, schema);
        FAIL() << "no error";
    } catch (const ToolError& e) {
        EXPECT_EQ(e.code(), ToolErrorCode::upstream_error);
        EXPECT_NE(std::string(e.what()).find("no longer matches the outputSchema"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("sk-live"), std::string::npos);
    }
    // Still valid once redacted (a plain string): the redacted answer is the result.
    const Json loose = {{"type", "object"}, {"properties", {{"api_key", {{"type", "string"}}}}}};
    EXPECT_EQ(read_execute_answer(answer, s, {"sk-live-abcdef"}, loose).structured_content["api_key"], "[redacted]");
}

TEST(RestExecute, StatusCodesMapToStructuredErrors) {
    auto e401 = error_for_status(401, std::nullopt, R"({"error":"key sk-live-abcdef is invalid"})", {"sk-live-abcdef"},
                                 "X-API-Key from AGENT_PAYMENT_API_KEY");
    EXPECT_EQ(std::string(e401.what()), "The API refused the credentials (HTTP 401): key [redacted] is invalid");
    EXPECT_NE(e401.to_json()["suggestion"].get<std::string>().find("AGENT_PAYMENT_API_KEY"), std::string::npos);
    auto e429 = error_for_status(429, std::string("7"), "{}", {}, "");
    EXPECT_EQ(e429.code(), ToolErrorCode::rate_limited);
    EXPECT_EQ(e429.retry_after_ms(), 7000);
    EXPECT_EQ(error_for_status(422, std::nullopt, R"({"detail":"amount must be > 0"})", {}, "").code(),
              ToolErrorCode::invalid_argument);
    auto e503 = error_for_status(503, std::nullopt, "<html>down</html>", {}, "");
    EXPECT_EQ(e503.code(), ToolErrorCode::upstream_error);
    EXPECT_TRUE(e503.is_transient());
    EXPECT_EQ(error_for_status(404, std::nullopt, "", {}, "").code(), ToolErrorCode::not_found);
}

TEST(RestExecute, StreamsAreAssembledChunkByChunk) {
    StreamedOutput out({}, 1024);
    auto first = out.feed("event: data\ndata: {\"chunk\": \"part 1. \"}\n\nevent: da");
    ASSERT_EQ(first, std::vector<std::string>{"part 1. "});
    auto rest = out.feed("ta\ndata: part 2.\n\n: heartbeat\n\nevent: done\ndata: {}\n\nevent: data\ndata: late\n\n");
    EXPECT_EQ(rest, std::vector<std::string>{"part 2."});
    EXPECT_TRUE(out.done());
    EXPECT_EQ(out.result().content[0]["text"], "part 1. part 2.");

    StreamedOutput failing({"secret-token-1"}, 1024);
    // The chunk before the error in the same bytes is still returned, then the error.
    auto before = failing.feed(
        "data: a\n\nevent: error\ndata: {\"error\": \"denied for secret-token-1\"}\n\ndata: b\n\n");
    EXPECT_EQ(before, std::vector<std::string>{"a"});
    EXPECT_TRUE(failing.done());
    ASSERT_TRUE(failing.error());
    EXPECT_EQ(std::string(failing.error()->what()),
              "The API reported that the tool failed: {\"error\": \"denied for [redacted]\"}");
    EXPECT_TRUE(failing.feed("data: c\n\n").empty());
    // A chunk echoing a key is redacted in its progress message and in the result, and so
    // is a key the stream cut between two chunks.
    StreamedOutput echoing({"secret-token-1"}, 1024);
    EXPECT_EQ(echoing.feed("data: key secret-token-1 ok\n\ndata: then secret-\n\ndata: token-1\n\n"),
              (std::vector<std::string>{"key [redacted] ok", "then secret-", "token-1"}));
    EXPECT_EQ(echoing.result().content[0]["text"], "key [redacted] okthen [redacted]");
    StreamedOutput small({}, 4);
    EXPECT_TRUE(small.feed("data: 12345\n\n").empty());
    ASSERT_TRUE(small.error());
    EXPECT_EQ(small.error()->code(), ToolErrorCode::response_too_large);
}

// ---- the tool set -----------------------------------------------------------------------

namespace {

Task<ToolResult> ok(RequestContext&, const Json&) { co_return ToolResult::text("ok"); }

providers::SyncedTool synced(const std::string& name, const std::string& description, const std::string& target = "t") {
    providers::ToolDeclaration d;
    d.name = name;
    d.description = description;
    d.handler = ok;
    return {std::move(d), target};
}

}  // namespace

TEST(RestToolSet, OnlyRealChangesReachTheRegistry) {
    test_support::ManualExecutor exec;
    McpServer server(exec, ServerOptions{});
    int notices = 0;
    server.registry().add_listener([&](CatalogKind kind) { notices += kind == CatalogKind::tools; });
    providers::SourceContext context("catalog", server);
    providers::ToolSet tools(context);

    auto first = tools.replace({synced("a", "A"), synced("b", "B")});
    EXPECT_EQ(first.added, 2);
    EXPECT_EQ(notices, 1);
    auto same = tools.replace({synced("b", "B"), synced("a", "A")});
    EXPECT_FALSE(same.any());
    EXPECT_EQ(notices, 1);
    auto changed = tools.replace({synced("a", "A, better"), synced("b", "B", "other endpoint"), synced("c", "C")});
    EXPECT_EQ(changed.changed, 2);
    EXPECT_EQ(changed.added, 1);
    EXPECT_EQ(notices, 2);
    auto removed = tools.replace({synced("c", "C")});
    EXPECT_EQ(removed.removed, 2);
    EXPECT_EQ(server.registry().tools().size(), 1u);
    EXPECT_EQ(notices, 3);

    providers::SyncedTool bad = synced("bad", "B");
    bad.declaration.input_schema = {{"type", "object"}, {"properties", {{"x", {{"type", 5}}}}}};
    auto refused = tools.replace({synced("c", "C"), bad, synced("c", "again")});
    EXPECT_EQ(refused.refused, 2);
    EXPECT_FALSE(server.registry().find_tool("bad"));
    EXPECT_EQ(notices, 3);
}

TEST(RestToolSet, SchemasCompiledOnFirstCallAreStillCheckedWhenDeclared) {
    test_support::ManualExecutor exec;
    McpServer server(exec, ServerOptions{});
    providers::SourceContext context("catalog", server);
    providers::ToolSet tools(context);
    auto lazy = synced("lazy", "L");
    lazy.declaration.compile_on_first_call = true;
    auto broken = synced("broken", "B");
    broken.declaration.compile_on_first_call = true;
    broken.declaration.input_schema = {{"type", "object"}, {"properties", {{"x", {{"minimum", "one"}}}}}};
    auto changes = tools.replace({lazy, broken});
    EXPECT_EQ(changes.added, 1);
    EXPECT_EQ(changes.refused, 1);
    ASSERT_TRUE(server.registry().find_tool("lazy"));
    // Nothing kept: the validation stage compiles it when the tool is first called.
    EXPECT_EQ(server.registry().find_tool("lazy")->compiled_input_schema, nullptr);
}
