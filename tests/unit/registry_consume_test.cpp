// The consuming side of the MCP Registry: server.json read from each $schema release, an
// entry turned into a command or URL, the v0.1 API's URLs and answers, and the YAML edit
// of `toolport registry add`.
#include <algorithm>

#include <gtest/gtest.h>

#include "document/document.hpp"
#include "error_of.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "document/yaml_insert.hpp"
#include "providers/gateway/registry/registry_api.hpp"
#include "providers/gateway/registry/registry_launch.hpp"
#include "providers/gateway/registry/server_json.hpp"

using namespace toolport;
using namespace toolport::registry;
using toolport::test_support::error_of;

namespace {

// The same server as each release writes it.
const char* kCurrent = R"({
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  "name": "io.github.example/weather", "description": "Weather", "version": "1.4.2",
  "packages": [{
    "registryType": "npm", "identifier": "@example/weather", "version": "1.4.2",
    "transport": {"type": "stdio"},
    "runtimeArguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=256"}],
    "packageArguments": [
      {"type": "positional", "valueHint": "mode", "value": "stdio"},
      {"type": "named", "name": "--units", "isRequired": true, "default": "metric"},
      {"type": "positional", "valueHint": "city", "isRequired": true}
    ],
    "environmentVariables": [
      {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true, "description": "API key"},
      {"name": "LOG_LEVEL", "default": "info"}
    ]
  }]
})";

const char* k20250709 = R"({
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json",
  "name": "io.github.example/weather", "description": "Weather", "version": "1.4.2",
  "packages": [{
    "registry_type": "npm", "identifier": "@example/weather", "version": "1.4.2",
    "transport": {"type": "stdio"},
    "runtime_arguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=256"}],
    "package_arguments": [
      {"type": "positional", "value_hint": "mode", "value": "stdio"},
      {"type": "named", "name": "--units", "is_required": true, "default": "metric"},
      {"type": "positional", "value_hint": "city", "is_required": true}
    ],
    "environment_variables": [
      {"name": "WEATHER_API_KEY", "is_required": true, "is_secret": true, "description": "API key"},
      {"name": "LOG_LEVEL", "default": "info"}
    ]
  }]
})";

// The drafts before the first release: registry_name, a package's name, version_detail.
const char* kDraft = R"({
  "name": "io.github.example/weather", "description": "Weather",
  "version_detail": {"version": "1.4.2", "release_date": "2025-06-01T00:00:00Z"},
  "packages": [{
    "registry_name": "npm", "name": "@example/weather", "version": "1.4.2",
    "runtime_arguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=256"}],
    "package_arguments": [
      {"type": "positional", "value_hint": "mode", "value": "stdio"},
      {"type": "named", "name": "--units", "is_required": true, "default": "metric"},
      {"type": "positional", "value_hint": "city", "is_required": true}
    ],
    "environment_variables": [
      {"name": "WEATHER_API_KEY", "is_required": true, "is_secret": true, "description": "API key"},
      {"name": "LOG_LEVEL", "default": "info"}
    ]
  }]
})";

LaunchConfig config_with(std::map<std::string, std::string> environment) {
    LaunchConfig c;
    c.upstream = "weather";
    c.environment = [environment](const std::string& name) -> std::optional<std::string> {
        auto it = environment.find(name);
        if (it == environment.end()) return std::nullopt;
        return it->second;
    };
    c.installed = [](const std::string& program) { return program != "podman"; };
    return c;
}

TEST(ServerJson, EveryReleaseReadsTheSame) {
    for (const char* text : {kCurrent, k20250709, kDraft}) {
        SCOPED_TRACE(text);
        auto s = read_server_json(Json::parse(text));
        EXPECT_EQ(s.name, "io.github.example/weather");
        EXPECT_EQ(s.version, "1.4.2");
        ASSERT_EQ(s.packages.size(), 1u);
        const auto& p = s.packages[0];
        EXPECT_EQ(p.registry_type, "npm");
        EXPECT_EQ(p.identifier, "@example/weather");
        EXPECT_EQ(p.transport, "stdio");
        ASSERT_EQ(p.package_arguments.size(), 3u);
        EXPECT_EQ(p.package_arguments[0].value_hint, "mode");
        EXPECT_TRUE(p.package_arguments[1].required);
        ASSERT_EQ(p.environment_variables.size(), 2u);
        EXPECT_TRUE(p.environment_variables[0].secret);
        EXPECT_TRUE(p.environment_variables[0].required);
    }
}

TEST(ServerJson, RemotesOfEachRelease) {
    auto now = read_server_json(Json::parse(R"({"name": "a.b/c", "version": "1",
        "remotes": [{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                     "variables": {"tenant": {"isRequired": true}},
                     "headers": [{"name": "X-Key", "isRequired": true, "isSecret": true}]}]})"));
    ASSERT_EQ(now.remotes.size(), 1u);
    EXPECT_EQ(now.remotes[0].type, "streamable-http");
    EXPECT_TRUE(now.remotes[0].variables.at("tenant").required);
    EXPECT_TRUE(now.remotes[0].headers[0].secret);
    auto draft = read_server_json(
        Json::parse(R"({"name": "a.b/c", "remotes": [{"transport_type": "streamable", "url": "https://x/mcp"}]})"));
    EXPECT_EQ(draft.remotes[0].type, "streamable-http");
    auto docker = read_server_json(
        Json::parse(R"({"name": "a.b/c", "packages": [{"registry_name": "docker", "name": "ghcr.io/a/b:1"}]})"));
    EXPECT_EQ(docker.packages[0].registry_type, "oci");
}

TEST(ServerJson, BadInputIsNamed) {
    EXPECT_THROW(read_server_json(Json::parse("[]")), ServerJsonError);
    EXPECT_THROW(read_server_json(Json::parse(R"({"description": "no name"})")), ServerJsonError);
    try {
        read_server_json(Json::parse(R"({"name": "a.b/c", "packages": [{"registryType": "npm"}]})"));
        FAIL();
    } catch (const ServerJsonError& e) {
        EXPECT_STREQ(e.what(), "server.packages[0].identifier is missing");
    }
    try {
        read_server_json(Json::parse(R"({"name": "a.b/c", "remotes": [{"type": "websocket", "url": "wss://x"}]})"));
        FAIL();
    } catch (const ServerJsonError& e) {
        EXPECT_NE(std::string(e.what()).find("neither streamable-http nor sse"), std::string::npos);
    }
}

TEST(RegistryLaunch, NpmPackageWithArgumentsAndEnvironment) {
    auto c = config_with({{"WEATHER_API_KEY", "k-123"}});
    c.arguments = {{"city", "Oslo"}, {"units", "imperial"}};
    for (const char* text : {kCurrent, k20250709, kDraft}) {
        auto launch = plan_launch(read_server_json(Json::parse(text)), c);
        EXPECT_EQ(launch.transport, "stdio");
        EXPECT_EQ(launch.argv,
                  (std::vector<std::string>{"npx", "-y", "--node-options", "--max-old-space-size=256",
                                            "@example/weather@1.4.2", "stdio", "--units", "imperial", "Oslo"}));
        EXPECT_EQ(launch.env.at("WEATHER_API_KEY"), "k-123");
        EXPECT_EQ(launch.env.at("LOG_LEVEL"), "info");
        EXPECT_EQ(launch.secrets, std::vector<std::string>{"k-123"});
    }
}

TEST(RegistryLaunch, MissingRequiredInputsAreNamed) {
    const auto server = read_server_json(Json::parse(kCurrent));
    auto c = config_with({});
    c.arguments = {{"city", "Oslo"}};
    try {
        plan_launch(server, c);
        FAIL();
    } catch (const LaunchError& e) {
        EXPECT_NE(std::string(e.what()).find("requires the environment variable WEATHER_API_KEY (API key)"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("upstreams.weather.env.WEATHER_API_KEY"), std::string::npos);
    }
    c = config_with({{"WEATHER_API_KEY", "k"}});
    try {
        plan_launch(server, c);
        FAIL();
    } catch (const LaunchError& e) {
        EXPECT_NE(std::string(e.what()).find("requires the argument <city>"), std::string::npos) << e.what();
    }
    // Given in env: (the configuration's value wins over Toolport's environment).
    c.env = {{"WEATHER_API_KEY", "from-config"}};
    c.arguments = {{"city", "Oslo"}};
    EXPECT_EQ(plan_launch(server, c).env.at("WEATHER_API_KEY"), "from-config");
}

TEST(RegistryLaunch, PypiOciAndRunners) {
    auto server = read_server_json(Json::parse(R"({"name": "a.b/c", "version": "2.0.0", "packages": [
        {"registryType": "pypi", "identifier": "weather-mcp", "version": "2.0.0"},
        {"registryType": "oci", "identifier": "ghcr.io/a/weather:2.0.0",
         "environmentVariables": [{"name": "TOKEN", "isRequired": true}]}]})"));
    auto c = config_with({{"TOKEN", "t"}});
    auto launch = plan_launch(server, c);
    EXPECT_EQ(launch.argv, (std::vector<std::string>{"uvx", "weather-mcp==2.0.0"}));
    c.run = "oci";
    launch = plan_launch(server, c);
    // The value goes through the environment, never on the command line.
    EXPECT_EQ(launch.argv,
              (std::vector<std::string>{"docker", "run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/a/weather:2.0.0"}));
    EXPECT_EQ(launch.env.at("TOKEN"), "t");
    c.run = "auto";
    c.installed = [](const std::string& program) { return program == "podman"; };
    launch = plan_launch(server, c);
    EXPECT_EQ(launch.argv.front(), "podman");
    c.installed = [](const std::string&) { return false; };
    try {
        plan_launch(server, c);
        FAIL();
    } catch (const LaunchError& e) {
        EXPECT_NE(std::string(e.what()).find("needs uvx, not found on PATH"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("needs docker or podman"), std::string::npos);
    }
}

TEST(RegistryLaunch, RemoteWithVariablesAndHeaders) {
    auto server = read_server_json(Json::parse(R"({"name": "a.b/c", "version": "1", "remotes": [
        {"type": "sse", "url": "https://old.example.com/sse"},
        {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
         "variables": {"tenant": {"isRequired": true}},
         "headers": [{"name": "Authorization", "value": "Bearer {token}",
                      "variables": {"token": {"isRequired": true, "isSecret": true}}}]}],
        "packages": [{"registryType": "npm", "identifier": "x", "version": "1"}]})"));
    auto c = config_with({});
    try {
        plan_launch(server, c);
        FAIL();
    } catch (const LaunchError& e) {
        EXPECT_NE(std::string(e.what()).find("the variable \"tenant\""), std::string::npos) << e.what();
    }
    c.arguments = {{"tenant", "acme"}, {"token", "s3cret"}};
    auto launch = plan_launch(server, c);
    EXPECT_EQ(launch.transport, "streamable-http");
    EXPECT_EQ(launch.url, "https://acme.example.com/mcp");
    ASSERT_EQ(launch.headers.size(), 1u);
    EXPECT_EQ(launch.headers[0].second, "Bearer s3cret");
    EXPECT_NE(std::find(launch.secrets.begin(), launch.secrets.end(), "s3cret"), launch.secrets.end());
    c.run = "npm";
    EXPECT_EQ(plan_launch(server, c).argv, (std::vector<std::string>{"npx", "-y", "x@1"}));
}

TEST(RegistryApi, UrlsEncodeNamesAndVersions) {
    EXPECT_EQ(version_url("https://r.example", "io.github.x/weather", "1.0.0+build.1"),
              "https://r.example/v0.1/servers/io.github.x%2Fweather/versions/1.0.0%2Bbuild.1");
    EXPECT_EQ(versions_url("https://r.example", "a.b/c"), "https://r.example/v0.1/servers/a.b%2Fc/versions");
    ListQuery q;
    q.search = "weather api";
    q.limit = 5;
    q.cursor = "a/b";
    q.updated_since = "2025-08-07T13:15:04Z";
    q.version = "latest";
    EXPECT_EQ(list_url("https://r.example", q),
              "https://r.example/v0.1/servers?cursor=a%2Fb&limit=5&search=weather%20api&updated_since=2025-08-07T13%"
              "3A15%3A04Z&version=latest");
    EXPECT_EQ(normalized_base("https://r.example//"), "https://r.example");
    EXPECT_THROW(normalized_base("ftp://r.example"), std::invalid_argument);
}

TEST(RegistryApi, AnswersAreRead) {
    auto page = parse_page(R"({"servers": [{"server": {"name": "a.b/c", "version": "1"},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}],
        "metadata": {"nextCursor": "n1", "count": 1}})");
    ASSERT_EQ(page.entries.size(), 1u);
    EXPECT_EQ(page.entries[0].official["status"], "active");
    EXPECT_EQ(page.next_cursor, "n1");
    EXPECT_EQ(parse_page(R"({"servers": [], "metadata": {}})").next_cursor, "");
    EXPECT_THROW(parse_page("<html>"), RegistryError);
    EXPECT_THROW(parse_page(R"({"servers": {}})"), RegistryError);
    EXPECT_THROW(parse_entry(R"({"name": "a.b/c"})"), RegistryError);
}

gateway::GatewaySettings gateway_of(Json values) {
    return gateway::GatewaySettings::from(providers::SourceSettings(std::move(values), "gateway"));
}

TEST(RegistryUpstreamSettings, ReadAndChecked) {
    auto g = gateway_of({{"registry", {{"url", "http://127.0.0.1:9/"}, {"timeout_ms", 500}}},
                         {"upstreams",
                          {{"weather",
                            {{"registry", "io.github.example/weather"},
                             {"arguments", {{"city", "Oslo"}}},
                             {"env", {{"WEATHER_API_KEY", "k"}}}}}}}});
    ASSERT_EQ(g.upstreams.size(), 1u);
    const auto& r = *g.upstreams[0].registry;
    EXPECT_EQ(r.name, "io.github.example/weather");
    EXPECT_EQ(r.version, "latest");
    EXPECT_EQ(r.url, "http://127.0.0.1:9");
    EXPECT_EQ(r.timeout, std::chrono::milliseconds(500));
    EXPECT_EQ(r.arguments.at("city"), "Oslo");
    EXPECT_EQ(g.upstreams[0].env.at("WEATHER_API_KEY"), "k");
    EXPECT_EQ(g.upstreams[0].describe(), "registry entry io.github.example/weather@latest");
    EXPECT_EQ(
        gateway_of({{"upstreams", {{"w", {{"registry", "a.b/c"}, {"version", "1.0.0"}}}}}}).upstreams[0].registry->url,
        kDefaultRegistryUrl);
    EXPECT_NE(error_of([] {
                  gateway_of({{"upstreams", {{"w", {{"registry", "weather"}}}}}});
              }).find("must be a registry name like io.github.example/weather"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  gateway_of({{"upstreams", {{"w", {{"registry", "a.b/c"}, {"command", "x"}}}}}});
              }).find("give either command (stdio), url (HTTP) or registry"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  gateway_of({{"upstreams", {{"w", {{"command", "x"}, {"version", "1"}}}}}});
              }).find("applies to registry upstreams only"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  gateway_of({{"registry", {{"url", "ftp://x"}}}, {"upstreams", Json::object()}});
              }).find("must be http:// or https://"),
              std::string::npos);
}

const Json kEntry = {{"registry", "io.github.x/weather"}, {"version", "latest"}};
const std::vector<std::string> kBody = {"registry: \"io.github.x/weather\"", "# required: env: {KEY: ...}",
                                        "version: \"latest\""};

TEST(YamlInsert, AddsUnderUpstreamsKeepingComments) {
    const std::string text =
        "# my server\n"
        "server:\n"
        "  transport: http   # for the IDE\n"
        "upstreams:\n"
        "    # the first one\n"
        "    everything:\n"
        "        command: npx\n"
        "        args: [\"-y\", \"pkg\"]\n"
        "\n"
        "# trailing comment\n"
        "gateway:\n"
        "  separator: \"_\"\n";
    auto edited = document::insert_mapping_entry(text, "upstreams", "weather", kBody, kEntry);
    EXPECT_EQ(edited,
              "# my server\n"
              "server:\n"
              "  transport: http   # for the IDE\n"
              "upstreams:\n"
              "    # the first one\n"
              "    everything:\n"
              "        command: npx\n"
              "        args: [\"-y\", \"pkg\"]\n"
              "    weather:\n"
              "        registry: \"io.github.x/weather\"\n"
              "        # required: env: {KEY: ...}\n"
              "        version: \"latest\"\n"
              "\n"
              "# trailing comment\n"
              "gateway:\n"
              "  separator: \"_\"\n");
}

TEST(YamlInsert, MakesTheSectionAndRefusesDuplicates) {
    auto made = document::insert_mapping_entry("server:\n  transport: http\n", "upstreams", "weather", kBody, kEntry);
    EXPECT_EQ(made,
              "server:\n  transport: http\n\nupstreams:\n  weather:\n    registry: \"io.github.x/weather\"\n"
              "    # required: env: {KEY: ...}\n    version: \"latest\"\n");
    auto empty = document::insert_mapping_entry("upstreams: {}   # none yet\n", "upstreams", "weather", kBody, kEntry);
    EXPECT_EQ(document::parse_yaml(empty).value["upstreams"]["weather"], kEntry);
    EXPECT_NE(empty.find("# none yet"), std::string::npos);
    EXPECT_EQ(document::parse_yaml(document::insert_mapping_entry("", "upstreams", "weather", kBody, kEntry))
                  .value["upstreams"]["weather"],
              kEntry);
    EXPECT_THROW(document::insert_mapping_entry("upstreams:\n  weather:\n    url: https://x\n", "upstreams", "weather",
                                                kBody, kEntry),
                 document::YamlEditError);
    EXPECT_THROW(document::insert_mapping_entry("upstreams: {a: {url: https://x}}\n", "upstreams", "weather", kBody,
                                                kEntry),
                 document::YamlEditError);
    EXPECT_THROW(document::insert_mapping_entry("- a\n", "upstreams", "weather", kBody, kEntry),
                 document::YamlEditError);
}

}  // namespace
