// The source interface: settings read with file:line:key errors, tools declared with their
// schemas compiled up front, the table of sources, and the configuration's `packs:`
// section in both of its forms.
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "app/config.hpp"
#include "app/runtime.hpp"
#include "manual_executor.hpp"
#include "pipeline/policy.hpp"
#include "providers/source_table.hpp"
#include "schema/json_schema.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::providers;

namespace {

using toolport::test_support::error_of;

std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

Task<ToolResult> answer(RequestContext&, const Json&) { co_return ToolResult::text("ok"); }

}  // namespace

// ---- settings --------------------------------------------------------------------------

TEST(SourceSettings, ReadsTypedValuesFromStringsAsYamlGivesThem) {
    SourceSettings s(Json{{"url", "https://x"}, {"pages", "20"}, {"ratio", "0.5"}, {"on", "yes"}, {"names", {"a", "b"}}},
                     "packs.demo");
    EXPECT_EQ(s.string("url"), "https://x");
    EXPECT_EQ(s.integer("pages", 1, 100), 20);
    EXPECT_EQ(s.number("ratio", 0, 1), 0.5);
    EXPECT_EQ(s.boolean("on"), true);
    EXPECT_EQ(s.list("names"), (std::vector<std::string>{"a", "b"}));
    EXPECT_FALSE(s.string("absent"));
    EXPECT_FALSE(s.integer("absent", 0, 1));
}

TEST(SourceSettings, ErrorsNameTheFileTheLineAndTheKey) {
    SourceSettings s(Json{{"pages", "lots"}, {"limit", 500}, {"bogus", 1}}, "packs.demo", "/etc/toolport.yaml",
                     {{"", 4}, {"pages", 5}, {"limit", 6}, {"bogus", 7}});
    EXPECT_EQ(error_of([&] { s.integer("pages", 1, 10); }),
              "/etc/toolport.yaml:5: packs.demo.pages: must be an integer, got \"lots\"");
    EXPECT_EQ(error_of([&] { s.integer("limit", 1, 100); }),
              "/etc/toolport.yaml:6: packs.demo.limit: must be between 1 and 100");
    EXPECT_EQ(error_of([&] {
                  s.only_keys({"pages", "limit"});
              }),
              "/etc/toolport.yaml:7: packs.demo.bogus: unknown key (expected one of: pages, limit)");
    EXPECT_EQ(error_of([&] { s.boolean("pages"); }),
              "/etc/toolport.yaml:5: packs.demo.pages: must be true or false, got \"lots\"");
}

TEST(SourceSettings, NestedSectionsKeepTheirLines) {
    SourceSettings s(Json{{"http", {{"timeout_ms", "x"}}}}, "packs.demo", "f.yaml",
                     {{"http", 3}, {"http.timeout_ms", 4}});
    auto http = s.section("http");
    EXPECT_EQ(error_of([&] { http.integer("timeout_ms", 1, 10); }),
              "f.yaml:4: packs.demo.http.timeout_ms: must be an integer, got \"x\"");
    EXPECT_TRUE(s.section("absent").empty());
    EXPECT_EQ(error_of([&] { SourceSettings(Json{{"http", 5}}, "p").section("http"); }), "p.http: must be a mapping");
}

// ---- declaring tools -------------------------------------------------------------------

TEST(ToolDeclaration, FillsTheSpecAndCompilesTheSchemaUpFront) {
    auto spec = make_tool_spec({.name = "search",
                                .title = "Search",
                                .description = "Finds things",
                                .input_schema = {{"type", "object"}, {"properties", {{"q", {{"type", "string"}}}}}},
                                .output_schema = {{"type", "object"}},
                                .annotations = {.read_only = true, .open_world = true},
                                .handler = answer,
                                .service = "api"},
                               "demo");
    EXPECT_EQ(spec.source, "demo");
    EXPECT_EQ(spec.service, "api");
    EXPECT_EQ(spec.annotations, (Json{{"title", "Search"}, {"readOnlyHint", true}, {"openWorldHint", true}}));
    ASSERT_TRUE(spec.compiled_input_schema);
    EXPECT_TRUE(spec.compiled_input_schema->is_valid(Json{{"q", "x"}}));
    EXPECT_FALSE(spec.compiled_input_schema->is_valid(Json{{"q", 1}}));
    EXPECT_EQ(spec.definition()["outputSchema"], (Json{{"type", "object"}}));
}

TEST(ToolDeclaration, ABadSchemaOrNameIsReportedWithTheToolsName) {
    auto bad_schema = error_of([] {
        make_tool_spec({.name = "broken",
                        .input_schema = {{"type", "object"}, {"properties", {{"q", {{"type", 42}}}}}},
                        .handler = answer},
                       "demo");
    });
    EXPECT_NE(bad_schema.find("source demo: tool broken: inputSchema does not compile"), std::string::npos)
        << bad_schema;
    auto not_object = error_of([] {
        make_tool_spec({.name = "t", .input_schema = {{"type", "string"}}, .handler = answer}, "demo");
    });
    EXPECT_NE(not_object.find("inputSchema must be a JSON Schema object"), std::string::npos) << not_object;
    auto bad_output = error_of([] {
        make_tool_spec({.name = "t", .output_schema = {{"type", "object"}, {"minProperties", -1}}, .handler = answer},
                       "demo");
    });
    EXPECT_NE(bad_output.find("tool t: outputSchema does not compile"), std::string::npos) << bad_output;
    EXPECT_NE(error_of([] {
                  make_tool_spec({.name = "has space", .handler = answer}, "demo");
              }).find("not a valid tool name"),
              std::string::npos);
    EXPECT_NE(error_of([] { make_tool_spec({.name = "no_handler"}, "demo"); }).find("has no handler"),
              std::string::npos);
}

TEST(SourceContext, AddsAndRemovesOnlyItsOwnTools) {
    test_support::ManualExecutor exec;
    McpServer server(exec, ServerOptions{});
    SourceContext mine("mine", server);
    SourceContext other("other", server);
    mine.add_tool({.name = "a", .handler = answer});
    other.add_tool({.name = "b", .handler = answer});
    EXPECT_FALSE(mine.remove_tool("b"));
    EXPECT_TRUE(server.registry().find_tool("b"));
    EXPECT_TRUE(mine.remove_tool("a"));
    EXPECT_FALSE(server.registry().find_tool("a"));
    EXPECT_FALSE(mine.has_http());
    EXPECT_NE(error_of([&] { mine.http(); }).find("no downstream HTTP client"), std::string::npos);
}

// ---- the table and the configuration ---------------------------------------------------

TEST(SourceTable, ListsTheSourcesAndHidesTheTestingPackUnlessAsked) {
    ::unsetenv("TOOLPORT_TEST_PACK");
    EXPECT_TRUE(find_source_kind("conformance"));
    EXPECT_FALSE(find_source_kind("testing"));
    EXPECT_EQ(source_names().find("testing"), std::string::npos);
    ::setenv("TOOLPORT_TEST_PACK", "1", 1);
    EXPECT_TRUE(find_source_kind("testing"));
    ::unsetenv("TOOLPORT_TEST_PACK");
    EXPECT_NE(error_of([] {
                  test_support::ManualExecutor exec;
                  McpServer server(exec, ServerOptions{});
                  start_source("nonexistent", server);
              }).find("unknown source"),
              std::string::npos);
}

TEST(SourceTable, StartingASourceAnnouncesItsToolsOnce) {
    test_support::ManualExecutor exec;
    McpServer server(exec, ServerOptions{});
    int changes = 0;
    server.registry().add_listener([&](CatalogKind kind) { changes += kind == CatalogKind::tools; });
    auto running = start_source("conformance", server);
    EXPECT_EQ(changes, 1);
    EXPECT_TRUE(server.registry().find_tool("test_simple_text"));
    EXPECT_EQ(server.registry().find_tool("test_simple_text")->source, "conformance");
}

TEST(PacksConfig, AListOrAMappingWithSettings) {
    auto list = load_config(write_file("packs_list.yaml", "packs: [conformance]\n"));
    EXPECT_EQ(list.packs, (std::vector<std::string>{"conformance"}));
    EXPECT_TRUE(list.pack_settings.empty());
    auto map = load_config(write_file("packs_map.yaml", "packs:\n  conformance:\n"));
    EXPECT_EQ(map.packs, (std::vector<std::string>{"conformance"}));
    ASSERT_TRUE(map.pack_settings.count("conformance"));
    EXPECT_TRUE(map.pack_settings.at("conformance").empty());
}

TEST(PacksConfig, ASourceChecksItsSectionWhenTheFileIsLoaded) {
    const auto path = write_file("packs_bad_key.yaml", "packs:\n  conformance:\n    colour: blue\n");
    EXPECT_EQ(error_of([&] { load_config(path); }),
              path + ":3: packs.conformance.colour: unknown key (this section takes no settings)");
    const auto unknown = write_file("packs_unknown.yaml", "packs:\n  nonexistent: {}\n");
    auto message = error_of([&] { load_config(unknown); });
    EXPECT_NE(message.find(unknown + ":2: packs: unknown pack \"nonexistent\" (known: conformance"), std::string::npos)
        << message;
    const auto scalar = write_file("packs_scalar.yaml", "packs:\n  conformance: yes\n");
    EXPECT_NE(error_of([&] { load_config(scalar); }).find(":2: packs.conformance: must be a mapping"),
              std::string::npos);
}

// Values in a section go through ${ENV} expansion like the rest of the file.
TEST(PacksConfig, SettingsExpandEnvironmentVariables) {
    ::unsetenv("TOOLPORT_UT_UNSET_SOURCE_KEY");
    auto path = write_file("packs_env.yaml", "packs:\n  conformance:\n    key: ${TOOLPORT_UT_UNSET_SOURCE_KEY}\n");
    auto message = error_of([&] { load_config(path); });
    EXPECT_NE(message.find("environment variable TOOLPORT_UT_UNSET_SOURCE_KEY is not set"), std::string::npos)
        << message;
}

TEST(PacksConfig, TheRuntimeStartsTheConfiguredSources) {
    test_support::ManualExecutor exec;
    Config config;
    config.packs = {"conformance"};
    Runtime runtime(config, exec);
    EXPECT_TRUE(runtime.server().registry().find_tool("test_simple_text"));
    config.packs = {"nonexistent"};
    EXPECT_NE(error_of([&] { Runtime r(config, exec); }).find("unknown pack \"nonexistent\""), std::string::npos);
    // --packs with a typo: the closest pack, as for the file's packs:.
    config.packs = {"tnago"};
    EXPECT_NE(error_of([&] { Runtime r(config, exec); }).find("unknown pack \"tnago\" (did you mean \"tango\"?)"),
              std::string::npos);
}

// A source brings defaults for the service it calls (Tango's 100 ms spacing); the
// configuration's own entry for a service still wins.
TEST(SourceContext, ServiceDefaultsApplyUnlessTheConfigurationSaysOtherwise) {
    test_support::ManualExecutor exec;
    McpServer server(exec, ServerOptions{});
    pipeline::PipelineConfig config;
    config.services["configured"].rate_limit.min_spacing = std::chrono::milliseconds(5);
    pipeline::PolicyResolver policies(config);
    SourceContext context("demo", server, SourceServices{.policies = &policies});
    pipeline::ServicePolicy defaults;
    defaults.rate_limit.min_spacing = std::chrono::milliseconds(100);
    context.set_service_defaults("api", defaults);
    context.set_service_defaults("configured", defaults);
    context.add_tool({.name = "uses_api", .handler = answer, .service = "api"});
    context.add_tool({.name = "uses_configured", .handler = answer, .service = "configured"});
    EXPECT_EQ(policies.resolve(*server.registry().find_tool("uses_api"))->service_policy.rate_limit.min_spacing,
              std::chrono::milliseconds(100));
    EXPECT_EQ(policies.resolve(*server.registry().find_tool("uses_configured"))->service_policy.rate_limit.min_spacing,
              std::chrono::milliseconds(5));
}

// The downstream HTTP client's settings come from the `downstream:` section.
TEST(DownstreamConfig, ReadsTheClientsSettingsWithFileLineErrors) {
    auto config = load_config(
        write_file("downstream.yaml",
                   "downstream:\n  ca_file: /etc/corp-ca.pem\n  connect_timeout_ms: 2500\n"
                   "  max_idle_per_origin: 4\n  max_connections_per_origin: 6\n  max_response_bytes: 2097152\n"));
    EXPECT_EQ(config.downstream.ca_file, "/etc/corp-ca.pem");
    EXPECT_EQ(config.downstream.connect_timeout, std::chrono::milliseconds(2500));
    EXPECT_EQ(config.downstream.max_idle_per_origin, 4u);
    EXPECT_EQ(config.downstream.max_connections_per_origin, 6u);
    EXPECT_EQ(config.downstream.max_response_bytes, 2097152u);
    EXPECT_FALSE(config.downstream.insecure_skip_verify);
    const auto bad = write_file("downstream_bad.yaml", "downstream:\n  insecure_skip_verify: maybe\n");
    EXPECT_EQ(error_of([&] { load_config(bad); }),
              bad + ":2: downstream.insecure_skip_verify: must be true or false, got \"maybe\"");
}
