// Views (gateway profiles) and OAuth scopes over every primitive, not only tools: a caller
// in a profile of the upstream "alpha", or with an OAuth token that lacks the scope of the
// source "beta", lists, reads, gets, completes and subscribes to nothing of beta's, is
// answered for beta's entries exactly as for entries that do not exist, hears no
// resources/updated of beta's resources and no list_changed caused by beta alone, and is
// not offered beta's extension. Callers outside a view and without a token see it all.
// The same through the real binary, the SDK client and every HTTP wire is in
// tests/integration/views_primitives.test.mjs.
#include <gtest/gtest.h>

#include <algorithm>

#include "manual_executor.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "server/session.hpp"
#include "session_driver.hpp"
#include "util/json.hpp"

using namespace toolport;

namespace {

class ViewPrimitivesTest : public ::testing::Test {
protected:
    ViewPrimitivesTest() : server(exec, ServerOptions{}) {
        for (const std::string source : {"alpha", "beta"}) add_source(source);
        // What every caller sees: entries of no source are the server's own.
        ResourceSpec own;
        own.uri = "server://about";
        own.name = "about";
        own.reader = reader();
        server.registry().add_resource(std::move(own));

        auto policy = std::make_shared<auth::ScopePolicy>();
        policy->sources["beta"] = {"beta:read"};
        server.set_scope_policy(policy);

        gateway::ProfileSettings profile;
        profile.name = "alpha";
        profile.upstreams = {"alpha"};
        server.add_view("alpha", gateway::profile_view(profile, {}, "gateway"));
        gateway::ProfileSettings by_tools;  // tools only: the sources of its tools
        by_tools.name = "alpha_tools";
        by_tools.tools = {"alpha_*"};
        server.add_view("alpha_tools", gateway::profile_view(by_tools, {}, "gateway"));
        gateway::ProfileSettings everything;  // neither list: everything
        everything.name = "all";
        server.add_view("all", gateway::profile_view(everything, {}, "gateway"));

        std::map<std::string, ExtensionMethod> methods;
        methods["beta/hello"] = {[](RequestContext&) -> Task<Json> { co_return Json{{"hello", "beta"}}; }, false};
        server.add_extension("com.example/beta", Json::object(), std::move(methods), "beta");
    }

    static ResourceReader reader() {
        return [](RequestContext&, const std::string& uri, const Json&) -> Task<Json> {
            co_return Json::array({{{"uri", uri}, {"text", "content of " + uri}}});
        };
    }

    static Completer completer(const std::string& source) {
        return [source](RequestContext&, const std::string&, const std::string& value, const Json&) -> Task<Json> {
            co_return Json{{"values", {source + "-" + value}}};
        };
    }

    // Each source: a tool <s>_tool, a resource <s>://doc, a template <s>://item/{id} and a
    // prompt <s>_greet, the last two with completions.
    void add_source(const std::string& s) {
        ToolSpec tool;
        tool.name = s + "_tool";
        tool.source = s;
        tool.handler = [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("ran"); };
        server.registry().add_tool(std::move(tool));
        add_resource(s, s + "://doc");
        ResourceTemplateSpec t;
        t.uri_template = s + "://item/{id}";
        t.name = s + "-item";
        t.source = s;
        t.reader = reader();
        t.completer = completer(s);
        server.registry().add_resource_template(std::move(t));
        add_prompt(s, s + "_greet");
    }

    void add_resource(const std::string& source, const std::string& uri) {
        ResourceSpec r;
        r.uri = uri;
        r.name = uri;
        r.source = source;
        r.reader = reader();
        server.registry().add_resource(std::move(r));
    }

    void add_prompt(const std::string& source, const std::string& name) {
        PromptSpec p;
        p.name = name;
        p.source = source;
        p.handler = [name](RequestContext&, const Json&) -> Task<Json> {
            co_return Json{{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", name}}}}}}};
        };
        p.completer = completer(source);
        server.registry().add_prompt(std::move(p));
    }

    std::shared_ptr<ServerSession> in_view(const std::string& view) {
        CallerIdentity caller;
        caller.view = view;
        return driver.open(std::move(caller));
    }

    std::shared_ptr<ServerSession> with_scopes(std::optional<std::vector<std::string>> scopes) {
        CallerIdentity caller;
        caller.principal = "oauth:test";
        caller.scopes = std::move(scopes);
        return driver.open(std::move(caller));
    }

    Json call(ServerSession& session, const std::string& method, Json params) {
        return driver.call(session, ++next_id, method, std::move(params));
    }

    // The `field` of every entry of a list method's result, sorted.
    std::vector<std::string> listed(ServerSession& session, const std::string& method, const char* list,
                                    const char* field) {
        auto reply = call(session, method, Json::object());
        EXPECT_TRUE(reply.contains("result")) << reply.dump();
        std::vector<std::string> out;
        for (const auto& e : reply["result"][list]) out.push_back(e[field]);
        std::sort(out.begin(), out.end());
        return out;
    }

    // The error of a reply, with `name` written as NAME wherever it appears: a hidden
    // entry's error and a missing entry's are then the same.
    static Json error_without(const Json& reply, const std::string& name) {
        EXPECT_TRUE(reply.contains("error")) << reply.dump();
        std::string text = reply.value("error", Json::object()).dump();
        for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + 4))
            text.replace(at, name.size(), "NAME");
        return Json::parse(text);
    }

    // Every list and every use of one entry, for a caller that sees alpha and not beta:
    // beta's entries are as absent as "gamma" ones that exist nowhere.
    void expect_only_alpha(ServerSession& s) {
        EXPECT_EQ(listed(s, "resources/list", "resources", "uri"),
                  (std::vector<std::string>{"alpha://doc", "server://about"}));
        EXPECT_EQ(listed(s, "resources/templates/list", "resourceTemplates", "uriTemplate"),
                  (std::vector<std::string>{"alpha://item/{id}"}));
        EXPECT_EQ(listed(s, "prompts/list", "prompts", "name"), (std::vector<std::string>{"alpha_greet"}));

        EXPECT_EQ(call(s, "resources/read", {{"uri", "alpha://doc"}})["result"]["contents"][0]["text"],
                  "content of alpha://doc");
        EXPECT_EQ(call(s, "resources/read", {{"uri", "alpha://item/7"}})["result"]["contents"][0]["text"],
                  "content of alpha://item/7");
        for (const std::string hidden : {"beta://doc", "beta://item/7"}) {
            const std::string missing = "gamma" + hidden.substr(4);
            EXPECT_EQ(error_without(call(s, "resources/read", {{"uri", hidden}}), hidden),
                      error_without(call(s, "resources/read", {{"uri", missing}}), missing));
            EXPECT_EQ(error_without(call(s, "resources/read", {{"uri", hidden}}), hidden)["code"], -32002);
            EXPECT_EQ(error_without(call(s, "resources/subscribe", {{"uri", hidden}}), hidden),
                      error_without(call(s, "resources/subscribe", {{"uri", missing}}), missing));
        }
        EXPECT_EQ(call(s, "resources/subscribe", {{"uri", "alpha://doc"}})["result"], Json::object());
        EXPECT_EQ(call(s, "resources/subscribe", {{"uri", "alpha://item/3"}})["result"], Json::object());

        EXPECT_EQ(call(s, "prompts/get", {{"name", "alpha_greet"}})["result"]["messages"][0]["content"]["text"],
                  "alpha_greet");
        EXPECT_EQ(error_without(call(s, "prompts/get", {{"name", "beta_greet"}}), "beta_greet"),
                  error_without(call(s, "prompts/get", {{"name", "gamma_greet"}}), "gamma_greet"));

        auto complete = [&](Json ref) {
            return call(s, "completion/complete",
                        {{"ref", std::move(ref)}, {"argument", {{"name", "id"}, {"value", "x"}}}});
        };
        EXPECT_EQ(complete({{"type", "ref/prompt"}, {"name", "alpha_greet"}})["result"]["completion"]["values"][0],
                  "alpha-x");
        EXPECT_EQ(complete({{"type", "ref/resource"}, {"uri", "alpha://item/{id}"}})["result"]["completion"]["values"][0],
                  "alpha-x");
        EXPECT_EQ(error_without(complete({{"type", "ref/prompt"}, {"name", "beta_greet"}}), "beta_greet"),
                  error_without(complete({{"type", "ref/prompt"}, {"name", "gamma_greet"}}), "gamma_greet"));
        EXPECT_EQ(error_without(complete({{"type", "ref/resource"}, {"uri", "beta://item/{id}"}}), "beta://item/{id}"),
                  error_without(complete({{"type", "ref/resource"}, {"uri", "gamma://item/{id}"}}),
                                "gamma://item/{id}"));
        EXPECT_EQ(error_without(complete({{"type", "ref/resource"}, {"uri", "beta://doc"}}), "beta://doc"),
                  error_without(complete({{"type", "ref/resource"}, {"uri", "gamma://doc"}}), "gamma://doc"));

        // beta's extension: not offered, and its method is as unknown as any.
        EXPECT_FALSE(driver.initialize_reply(s)["result"]["capabilities"].contains("extensions"))
            << driver.initialize_reply(s).dump();
        EXPECT_EQ(error_without(call(s, "beta/hello", Json::object()), "beta/hello"),
                  error_without(call(s, "gamma/hello", Json::object()), "gamma/hello"));
    }

    void expect_everything(ServerSession& s) {
        EXPECT_EQ(listed(s, "resources/list", "resources", "uri"),
                  (std::vector<std::string>{"alpha://doc", "beta://doc", "server://about"}));
        EXPECT_EQ(listed(s, "resources/templates/list", "resourceTemplates", "uriTemplate"),
                  (std::vector<std::string>{"alpha://item/{id}", "beta://item/{id}"}));
        EXPECT_EQ(listed(s, "prompts/list", "prompts", "name"),
                  (std::vector<std::string>{"alpha_greet", "beta_greet"}));
        EXPECT_EQ(call(s, "resources/read", {{"uri", "beta://item/7"}})["result"]["contents"][0]["text"],
                  "content of beta://item/7");
        EXPECT_EQ(call(s, "prompts/get", {{"name", "beta_greet"}})["result"]["messages"][0]["content"]["text"],
                  "beta_greet");
        EXPECT_EQ(call(s, "resources/subscribe", {{"uri", "beta://doc"}})["result"], Json::object());
        EXPECT_EQ(call(s, "beta/hello", Json::object())["result"]["hello"], "beta");
        EXPECT_TRUE(driver.initialize_reply(s)["result"]["capabilities"]["extensions"].contains("com.example/beta"));
    }

    int count(ServerSession& s, const std::string& method) {
        auto methods = driver.heard_methods(s);
        return static_cast<int>(std::count(methods.begin(), methods.end(), method));
    }

    test_support::ManualExecutor exec;
    McpServer server;
    test_support::SessionDriver driver{exec, server};
    int next_id = 10;
};

}  // namespace

TEST_F(ViewPrimitivesTest, AProfileOfOneUpstreamServesOnlyThatUpstreamsPrimitives) {
    auto alpha = in_view("alpha");
    expect_only_alpha(*alpha);
}

TEST_F(ViewPrimitivesTest, AProfileOfToolsServesThePrimitivesOfItsToolsSources) {
    auto by_tools = in_view("alpha_tools");
    expect_only_alpha(*by_tools);
    // beta gets a tool the profile's patterns select: beta's primitives come into it.
    ToolSpec tool;
    tool.name = "alpha_like_beta";
    tool.source = "beta";
    tool.handler = [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("ran"); };
    server.registry().add_tool(std::move(tool));
    EXPECT_EQ(listed(*by_tools, "prompts/list", "prompts", "name"),
              (std::vector<std::string>{"alpha_greet", "beta_greet"}));
}

TEST_F(ViewPrimitivesTest, ATokenWithoutASourcesScopeIsServedNoneOfItsPrimitives) {
    auto scoped = with_scopes(std::vector<std::string>{"openid"});
    expect_only_alpha(*scoped);
}

TEST_F(ViewPrimitivesTest, CallersThatMaySeeEverythingAreServedEverything) {
    auto plain = in_view("");
    expect_everything(*plain);
    auto all = in_view("all");
    expect_everything(*all);
    auto beta_reader = with_scopes(std::vector<std::string>{"beta:read"});
    expect_everything(*beta_reader);
    auto static_token = with_scopes(std::nullopt);
    expect_everything(*static_token);
}

TEST_F(ViewPrimitivesTest, ResourcesUpdatedReachesOnlySessionsThatSeeTheResource) {
    auto plain = in_view("");
    auto alpha = in_view("alpha");
    auto scoped = with_scopes(std::vector<std::string>{"beta:read"});
    ASSERT_EQ(call(*plain, "resources/subscribe", {{"uri", "beta://doc"}})["result"], Json::object());
    ASSERT_EQ(call(*scoped, "resources/subscribe", {{"uri", "beta://doc"}})["result"], Json::object());
    ASSERT_TRUE(call(*alpha, "resources/subscribe", {{"uri", "beta://doc"}}).contains("error"));
    ASSERT_EQ(call(*alpha, "resources/subscribe", {{"uri", "alpha://doc"}})["result"], Json::object());

    // The token of the next request lacks beta:read: its earlier subscription hears no more.
    scoped->caller().scopes = std::vector<std::string>{"openid"};
    server.resource_updated("beta://doc");
    server.resource_updated("alpha://doc");
    exec.run();
    EXPECT_EQ(count(*plain, "notifications/resources/updated"), 1);
    EXPECT_EQ(count(*scoped, "notifications/resources/updated"), 0);
    ASSERT_EQ(count(*alpha, "notifications/resources/updated"), 1);
    EXPECT_EQ(driver.heard(*alpha).back()["params"]["uri"], "alpha://doc");
}

TEST_F(ViewPrimitivesTest, ListChangedOfWhatACallerCannotSeeIsNotSentToIt) {
    auto plain = in_view("");
    auto alpha = in_view("alpha");
    auto scoped = with_scopes(std::vector<std::string>{"openid"});
    auto heard_by = [&](ServerSession& s) {
        auto methods = driver.heard_methods(s);
        driver.heard(s).clear();
        return methods;
    };
    const std::vector<std::string> nothing;
    const std::vector<std::string> resources{"notifications/resources/list_changed"};
    const std::vector<std::string> prompts{"notifications/prompts/list_changed"};

    add_resource("beta", "beta://new");
    exec.run();
    EXPECT_EQ(heard_by(*plain), resources);
    EXPECT_EQ(heard_by(*alpha), nothing);
    EXPECT_EQ(heard_by(*scoped), nothing);

    server.registry().remove_prompt("beta_greet");
    exec.run();
    EXPECT_EQ(heard_by(*plain), prompts);
    EXPECT_EQ(heard_by(*alpha), nothing);
    EXPECT_EQ(heard_by(*scoped), nothing);

    ToolSpec tool;
    tool.name = "beta_more";
    tool.source = "beta";
    tool.handler = [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("ran"); };
    server.registry().add_tool(std::move(tool));
    exec.run();
    EXPECT_EQ(heard_by(*plain), (std::vector<std::string>{"notifications/tools/list_changed"}));
    EXPECT_EQ(heard_by(*alpha), nothing);

    // One batch that touches both sources is one notice, for each who sees either.
    server.registry().batch([&] {
        add_resource("beta", "beta://newer");
        add_resource("alpha", "alpha://new");
    });
    exec.run();
    EXPECT_EQ(heard_by(*plain), resources);
    EXPECT_EQ(heard_by(*alpha), resources);
    EXPECT_EQ(heard_by(*scoped), resources);

    add_prompt("alpha", "alpha_more");
    exec.run();
    EXPECT_EQ(heard_by(*alpha), prompts);
    EXPECT_EQ(heard_by(*scoped), prompts);
}

TEST_F(ViewPrimitivesTest, ManyProbesOfHiddenNamesAreAllNotFoundAndTheSessionGoesOn) {
    auto alpha = in_view("alpha");
    for (int i = 0; i < 50; ++i) {
        const std::string n = std::to_string(i);
        EXPECT_EQ(call(*alpha, "resources/read", {{"uri", "beta://item/" + n}})["error"]["code"], -32002);
        EXPECT_EQ(call(*alpha, "resources/subscribe", {{"uri", "beta://doc" + n}})["error"]["code"], -32002);
        EXPECT_EQ(call(*alpha, "prompts/get", {{"name", "beta_greet" + n}})["error"]["code"], -32602);
    }
    EXPECT_TRUE(alpha->subscriptions().empty());
    EXPECT_EQ(call(*alpha, "resources/read", {{"uri", "alpha://doc"}})["result"]["contents"][0]["text"],
              "content of alpha://doc");
}
