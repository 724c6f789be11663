// Gateway profiles chosen by bearer token: the settings (token_env / token_envs read from
// the environment, refused with the key when missing, empty or shared by two profiles),
// and tool search within a caller's profile (search_tools lists, and call_tool reaches,
// only what the caller's view shows). The HTTP side of profile tokens is in
// http_endpoint_test.cpp.
#include <gtest/gtest.h>

#include <cstdlib>

#include "error_of.hpp"
#include "manual_executor.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/gateway/tool_search.hpp"
#include "providers/source.hpp"
#include "server/session.hpp"
#include "session_driver.hpp"
#include "util/json.hpp"

using namespace toolport;
using toolport::gateway::GatewaySettings;
using toolport::providers::SourceSettings;

namespace {

using toolport::test_support::error_of;

GatewaySettings settings_of(Json values) { return GatewaySettings::from(SourceSettings(std::move(values), "gateway")); }

Json with_profiles(Json profiles) {
    return {{"upstreams", {{"gh", {{"command", "gh-mcp"}}}}}, {"profiles", std::move(profiles)}};
}

// Sets environment variables for one test and removes them after.
class ScopedEnv {
public:
    ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> values) {
        for (const auto& [name, value] : values) {
            names_.push_back(name);
            if (value) ::setenv(name, value, 1);
            else ::unsetenv(name);
        }
    }
    ~ScopedEnv() {
        for (const auto& name : names_) ::unsetenv(name.c_str());
    }

private:
    std::vector<std::string> names_;
};

}  // namespace

TEST(GatewayProfileTokens, ReadFromTheNamedEnvironmentVariables) {
    ScopedEnv env{{"TP_TEST_CURSOR_TOKEN", "cursor-secret"},
                  {"TP_TEST_IDE_A", "ide-a\n"},  // a trailing newline from a .env file is not part of it
                  {"TP_TEST_IDE_B", "ide-b"}};
    auto g = settings_of(with_profiles({{"cursor", {{"tools", {"gh_*"}}, {"token_env", "TP_TEST_CURSOR_TOKEN"}}},
                                        {"ide", {{"token_envs", {"TP_TEST_IDE_A", "TP_TEST_IDE_B"}}}},
                                        {"plain", {{"tools", {"x"}}}}}));
    ASSERT_EQ(g.profiles.size(), 3u);
    auto profile = [&](const std::string& name) {
        for (const auto& p : g.profiles) {
            if (p.name == name) return p;
        }
        ADD_FAILURE() << "no profile " << name;
        return gateway::ProfileSettings{};
    };
    EXPECT_EQ(profile("cursor").tokens, (std::vector<std::string>{"cursor-secret"}));
    EXPECT_EQ(profile("cursor").tools, (std::vector<std::string>{"gh_*"}));
    EXPECT_EQ(profile("ide").tokens, (std::vector<std::string>{"ide-a", "ide-b"}));
    EXPECT_TRUE(profile("plain").tokens.empty());
}

TEST(GatewayProfileTokens, RefusedWithTheKeyAndVariableButNeverTheValue) {
    ScopedEnv env{{"TP_TEST_MISSING", nullptr}, {"TP_TEST_EMPTY", "  "}, {"TP_TEST_SHARED", "shared-secret"}};
    auto missing = error_of([] { settings_of(with_profiles({{"p", {{"token_env", "TP_TEST_MISSING"}}}})); });
    EXPECT_NE(missing.find("token_env"), std::string::npos) << missing;
    EXPECT_NE(missing.find("TP_TEST_MISSING is not set"), std::string::npos) << missing;

    auto empty = error_of([] { settings_of(with_profiles({{"p", {{"token_envs", {"TP_TEST_EMPTY"}}}}})); });
    EXPECT_NE(empty.find("token_envs"), std::string::npos) << empty;
    EXPECT_NE(empty.find("TP_TEST_EMPTY is not set"), std::string::npos) << empty;

    auto none = error_of([] { settings_of(with_profiles({{"p", {{"token_envs", Json::array()}}}})); });
    EXPECT_NE(none.find("names no environment variable"), std::string::npos) << none;

    auto unknown = error_of([] { settings_of(with_profiles({{"p", {{"token", "literal-secret"}}}})); });
    EXPECT_NE(unknown.find("token"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("unknown key"), std::string::npos) << unknown;
    EXPECT_EQ(unknown.find("literal-secret"), std::string::npos) << unknown;

    auto shared = error_of([] {
        settings_of(with_profiles({{"a", {{"token_env", "TP_TEST_SHARED"}}}, {"b", {{"token_env", "TP_TEST_SHARED"}}}}));
    });
    EXPECT_NE(shared.find("selects one profile"), std::string::npos) << shared;
    EXPECT_EQ(shared.find("shared-secret"), std::string::npos) << "the token itself is never in a message: " << shared;

    auto wrong_type = error_of([] { settings_of(with_profiles({{"p", {{"token_env", {"A", "B"}}}}})); });
    EXPECT_NE(wrong_type.find("token_env"), std::string::npos) << wrong_type;
}

namespace {

// search_tools and call_tool over two upstreams' tools, called by sessions in and out of
// a view that shows only the upstream "alpha" (as a profile with upstreams: [alpha] does).
class ToolSearchInAViewTest : public ::testing::Test {
protected:
    ToolSearchInAViewTest() : server(exec, ServerOptions{}), context("gateway", server), search(context) {
        search.declare();
        std::vector<std::vector<providers::SyncedTool>> parts(2);
        parts[0].push_back(tool("alpha_add", "Adds two numbers", "alpha"));
        parts[0].push_back(tool("alpha_sub", "Subtracts two numbers", "alpha"));
        parts[1].push_back(tool("beta_add", "Adds numbers; adds them exactly", "beta"));  // ranks first for "adds"
        search.replace(std::move(parts));
        server.add_view("alpha_only", [](const ToolSpec& t) {
            return t.source == "alpha" ||
                   (t.source == "gateway" && (t.name == "search_tools" || t.name == "call_tool"));
        });
    }

    static providers::SyncedTool tool(const std::string& name, const std::string& description,
                                      const std::string& upstream) {
        providers::ToolDeclaration d;
        d.name = name;
        d.description = description;
        d.input_schema = {{"type", "object"},
                          {"properties", {{"a", {{"type", "number"}}}, {"b", {{"type", "number"}}}}}};
        d.service = upstream;
        d.handler = [name](RequestContext&, const Json&) -> Task<ToolResult> {
            co_return ToolResult::text("ran " + name);
        };
        return {std::move(d), upstream + '\0' + name};
    }

    // A session in `view` ("" for none), initialized.
    std::shared_ptr<ServerSession> open(const std::string& view) {
        CallerIdentity caller;
        caller.view = view;
        return driver.open(std::move(caller));
    }

    Json call(ServerSession& session, int id, const std::string& method, Json params) {
        return driver.call(session, id, method, std::move(params));
    }

    Json tool_call(ServerSession& session, int id, const std::string& name, Json arguments) {
        return driver.tool_call(session, id, name, std::move(arguments));
    }

    static std::vector<std::string> names_found(const Json& result) {
        std::vector<std::string> names;
        for (const auto& t : result["structuredContent"]["tools"]) names.push_back(t["name"]);
        return names;
    }

    test_support::ManualExecutor exec;
    McpServer server;
    providers::SourceContext context;
    gateway::ToolSearch search;
    test_support::SessionDriver driver{exec, server};
};

}  // namespace

TEST_F(ToolSearchInAViewTest, SearchToolsListsOnlyTheViewsTools) {
    auto everyone = open("");
    auto all = tool_call(*everyone, 1, "search_tools", {{"query", "adds"}});
    EXPECT_EQ(names_found(all), (std::vector<std::string>{"beta_add", "alpha_add"})) << all.dump();
    EXPECT_EQ(all["structuredContent"]["total_tools"], 3);

    auto alpha = open("alpha_only");
    auto listed = call(*alpha, 2, "tools/list", Json::object());
    ASSERT_TRUE(listed.contains("result")) << listed.dump();
    EXPECT_EQ(listed["result"]["tools"].size(), 2u) << "search_tools and call_tool are in every profile";

    auto found = tool_call(*alpha, 3, "search_tools", {{"query", "adds"}});
    EXPECT_EQ(names_found(found), (std::vector<std::string>{"alpha_add"})) << found.dump();
    EXPECT_EQ(found["structuredContent"]["total_tools"], 2);
    // The view applies before the limit: beta_add ranks first, yet the one result is alpha's.
    auto one = tool_call(*alpha, 4, "search_tools", {{"query", "adds"}, {"limit", 1}});
    EXPECT_EQ(names_found(one), (std::vector<std::string>{"alpha_add"})) << one.dump();
    auto by_name = tool_call(*alpha, 5, "search_tools", {{"query", ""}, {"limit", 10}});
    EXPECT_EQ(names_found(by_name), (std::vector<std::string>{"alpha_add", "alpha_sub"})) << by_name.dump();
}

TEST_F(ToolSearchInAViewTest, CallToolRefusesAToolOutsideTheViewAsUnknown) {
    auto alpha = open("alpha_only");
    auto inside = tool_call(*alpha, 1, "call_tool", {{"name", "alpha_add"}, {"arguments", {{"a", 1}, {"b", 2}}}});
    EXPECT_FALSE(inside.value("isError", false)) << inside.dump();
    EXPECT_EQ(inside["content"][0]["text"], "ran alpha_add");

    auto outside = tool_call(*alpha, 2, "call_tool", {{"name", "beta_add"}, {"arguments", {{"a", 1}, {"b", 2}}}});
    EXPECT_TRUE(outside.value("isError", false)) << outside.dump();
    EXPECT_EQ(outside["structuredContent"]["error_code"], "NOT_FOUND") << outside.dump();
    EXPECT_NE(outside["structuredContent"]["suggestion"].get<std::string>().find("search_tools"), std::string::npos);
    // Answered exactly as a name that exists nowhere: the view's holder learns nothing more.
    auto nowhere = tool_call(*alpha, 3, "call_tool", {{"name", "gamma_add"}});
    auto without_name = [](Json error, const std::string& name) {
        auto message = error["structuredContent"]["error"].get<std::string>();
        message.replace(message.find(name), name.size(), "NAME");
        error["structuredContent"]["error"] = message;
        return error["structuredContent"];
    };
    auto a = without_name(outside, "beta_add"), b = without_name(nowhere, "gamma_add");
    a.erase("provided");
    b.erase("provided");
    EXPECT_EQ(a, b);

    auto everyone = open("");
    auto reached = tool_call(*everyone, 4, "call_tool", {{"name", "beta_add"}, {"arguments", {{"a", 1}, {"b", 2}}}});
    EXPECT_EQ(reached["content"][0]["text"], "ran beta_add") << reached.dump();
}
