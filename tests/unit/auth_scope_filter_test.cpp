// McpServer with a scope policy (auth/scope_policy.hpp): a caller whose OAuth token lacks
// a tool's scopes (its own or its source's) does not see it in tools/list and gets the
// JSON-RPC insufficient_scope error if it calls it anyway; a caller without a token
// (CallerIdentity::scopes absent: static bearer tokens, stdio) sees and calls everything.
// The gateway's search_tools and call_tool answer within the same limits.
// The HTTP 403 step-up answer is in tests/integration/oauth_scopes.test.mjs.
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "providers/gateway/tool_search.hpp"
#include "providers/source.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "session_driver.hpp"
#include "util/json.hpp"

using namespace toolport;

namespace {

class ScopeFilterTest : public ::testing::Test {
protected:
    ScopeFilterTest() : server(exec, ServerOptions{}) {
        add("open_tool", "pack");
        add("deploy", "ops");
        add("restart", "ops");
        auto policy = std::make_shared<auth::ScopePolicy>();
        policy->tools["deploy"] = {"ops:write"};
        policy->sources["ops"] = {"ops:read"};
        server.set_scope_policy(policy);
    }

    void add(const std::string& name, const std::string& source) {
        ToolSpec spec;
        spec.name = name;
        spec.source = source;
        spec.handler = [name](RequestContext&, const Json&) -> Task<ToolResult> {
            co_return ToolResult::text("ran " + name);
        };
        server.registry().add_tool(std::move(spec));
    }

    std::shared_ptr<ServerSession> open(std::optional<std::vector<std::string>> scopes) {
        CallerIdentity caller;
        caller.principal = "oauth:test";
        caller.scopes = std::move(scopes);
        return driver.open(std::move(caller));
    }

    Json call(ServerSession& session, int id, const std::string& method, Json params) {
        return driver.call(session, id, method, std::move(params));
    }

    std::vector<std::string> listed(ServerSession& session) {
        auto reply = call(session, 1, "tools/list", Json::object());
        std::vector<std::string> names;
        for (const auto& t : reply["result"]["tools"]) names.push_back(t["name"]);
        std::sort(names.begin(), names.end());
        return names;
    }

    test_support::ManualExecutor exec;
    McpServer server;
    test_support::SessionDriver driver{exec, server};
};

}  // namespace

TEST_F(ScopeFilterTest, ToolsListShowsWhatTheTokensScopesAllow) {
    auto none = open(std::vector<std::string>{});
    EXPECT_EQ(listed(*none), (std::vector<std::string>{"open_tool"}));
    auto reader = open(std::vector<std::string>{"ops:read"});
    EXPECT_EQ(listed(*reader), (std::vector<std::string>{"open_tool", "restart"}));
    auto writer = open(std::vector<std::string>{"ops:read", "ops:write"});
    EXPECT_EQ(listed(*writer), (std::vector<std::string>{"deploy", "open_tool", "restart"}));
    // ops:write alone is not enough for deploy: its source's scope is needed too.
    auto write_only = open(std::vector<std::string>{"ops:write"});
    EXPECT_EQ(listed(*write_only), (std::vector<std::string>{"open_tool"}));
}

TEST_F(ScopeFilterTest, CallersWithoutATokenAreNotFiltered) {
    auto static_caller = open(std::nullopt);
    EXPECT_EQ(listed(*static_caller), (std::vector<std::string>{"deploy", "open_tool", "restart"}));
    auto reply = call(*static_caller, 2, "tools/call", {{"name", "deploy"}, {"arguments", Json::object()}});
    EXPECT_EQ(reply["result"]["content"][0]["text"], "ran deploy") << reply.dump();
}

TEST_F(ScopeFilterTest, ACallWithoutTheScopesIsTheInsufficientScopeError) {
    auto reader = open(std::vector<std::string>{"ops:read", "openid"});
    auto reply = call(*reader, 2, "tools/call", {{"name", "deploy"}, {"arguments", Json::object()}});
    ASSERT_TRUE(reply.contains("error")) << reply.dump();
    EXPECT_EQ(reply["error"]["code"], -32600);
    EXPECT_NE(reply["error"]["message"].get<std::string>().find("ops:write"), std::string::npos) << reply.dump();
    // Every scope needed, the token's own first: what a client asks for to step up.
    EXPECT_EQ(reply["error"]["data"], (Json{{"error", "insufficient_scope"}, {"scope", "ops:read openid ops:write"}}));
    auto ok = call(*reader, 3, "tools/call", {{"name", "restart"}, {"arguments", Json::object()}});
    EXPECT_EQ(ok["result"]["content"][0]["text"], "ran restart") << ok.dump();
    // A new token's scopes (the transport sets them per request) take effect at once.
    reader->caller().scopes = std::vector<std::string>{"ops:read", "ops:write"};
    auto stepped = call(*reader, 4, "tools/call", {{"name", "deploy"}, {"arguments", Json::object()}});
    EXPECT_EQ(stepped["result"]["content"][0]["text"], "ran deploy") << stepped.dump();
}

TEST_F(ScopeFilterTest, ScopedListsAreNotSharedBetweenCallers) {
    Json result = Json::object();
    mark_cacheable(result, server);
    EXPECT_EQ(result["cacheScope"], "private");
}

namespace {

// The gateway in tool search mode: search_tools and call_tool over two upstreams' tools.
class ScopedToolSearchTest : public ScopeFilterTest {
protected:
    ScopedToolSearchTest() : context("gateway", server), search(context) {
        search.declare();
        std::vector<std::vector<providers::SyncedTool>> parts(1);
        parts[0].push_back(tool("ops_deploy", "ops"));
        parts[0].push_back(tool("wiki_read", "wiki"));
        search.replace(std::move(parts));
    }

    static providers::SyncedTool tool(const std::string& name, const std::string& upstream) {
        providers::ToolDeclaration d;
        d.name = name;
        d.description = "Does " + name;
        d.service = upstream;
        d.handler = [name](RequestContext&, const Json&) -> Task<ToolResult> {
            co_return ToolResult::text("ran " + name);
        };
        return {std::move(d), upstream + '\0' + name};
    }

    Json tool_call(ServerSession& session, int id, const std::string& name, Json arguments) {
        return driver.tool_call(session, id, name, std::move(arguments));
    }

    static std::vector<std::string> found(const Json& result) {
        std::vector<std::string> names;
        for (const auto& t : result["structuredContent"]["tools"]) names.push_back(t["name"]);
        std::sort(names.begin(), names.end());
        return names;
    }

    providers::SourceContext context;
    gateway::ToolSearch search;
};

}  // namespace

TEST_F(ScopedToolSearchTest, SearchAndCallToolKeepToTheTokensScopes) {
    // ops_deploy's source "ops" needs ops:read (the fixture's policy).
    auto reader = open(std::vector<std::string>{});
    EXPECT_EQ(found(tool_call(*reader, 1, "search_tools", {{"query", ""}, {"limit", 10}})),
              (std::vector<std::string>{"wiki_read"}));
    auto refused = tool_call(*reader, 2, "call_tool", {{"name", "ops_deploy"}});
    EXPECT_EQ(refused["structuredContent"]["error_code"], "NOT_FOUND") << refused.dump();
    auto ok = tool_call(*reader, 3, "call_tool", {{"name", "wiki_read"}});
    EXPECT_EQ(ok["content"][0]["text"], "ran wiki_read") << ok.dump();

    auto ops = open(std::vector<std::string>{"ops:read"});
    EXPECT_EQ(found(tool_call(*ops, 4, "search_tools", {{"query", ""}, {"limit", 10}})),
              (std::vector<std::string>{"ops_deploy", "wiki_read"}));
    auto reached = tool_call(*ops, 5, "call_tool", {{"name", "ops_deploy"}});
    EXPECT_EQ(reached["content"][0]["text"], "ran ops_deploy") << reached.dump();
}
