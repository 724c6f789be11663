// Access rules by principal (auth/access_policy.hpp, util/glob.hpp) and McpServer applying
// them (server.cpp, server_methods.cpp): the glob matcher, first-match-wins evaluation with
// its default, each condition (principal, group, scope, profile, source, tool), listing
// filtered per caller, a denied call's MCP_TOOL_FORBIDDEN tool error, sources denied whole,
// and the stdio client's principal. The transports are in tests/integration/access.test.mjs.
#include <gtest/gtest.h>

#include "auth/access_policy.hpp"
#include "manual_executor.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "session_driver.hpp"
#include "util/glob.hpp"
#include "util/json.hpp"

using namespace toolport;
using auth::AccessEffect;
using auth::AccessRule;

TEST(GlobTest, StarAndQuestionMark) {
    using util::glob_match;
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("*", "anything"));
    EXPECT_TRUE(glob_match("github_*", "github_create_issue"));
    EXPECT_TRUE(glob_match("github_*", "github_"));
    EXPECT_FALSE(glob_match("github_*", "gitlab_create_issue"));
    EXPECT_TRUE(glob_match("*_delete", "repo_delete"));
    EXPECT_FALSE(glob_match("*_delete", "repo_delete_all"));
    EXPECT_TRUE(glob_match("*delete*", "repo_delete_all"));
    EXPECT_TRUE(glob_match("a?c", "abc"));
    EXPECT_FALSE(glob_match("a?c", "ac"));
    EXPECT_FALSE(glob_match("a?c", "abbc"));
    EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
    EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
    EXPECT_TRUE(glob_match("**", "x"));
    EXPECT_FALSE(glob_match("", "x"));
    EXPECT_TRUE(glob_match("", ""));
    // Case-sensitive, and every other character is literal.
    EXPECT_FALSE(glob_match("Deploy", "deploy"));
    EXPECT_TRUE(glob_match("a.b", "a.b"));
    EXPECT_FALSE(glob_match("a.b", "axb"));
    // The classic worst case stays linear-ish (one backtrack point).
    const std::string text(5000, 'a');
    EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*b", text));
}

TEST(GlobTest, ProblemsArePatternsThatCouldOnlyMislead) {
    EXPECT_FALSE(util::glob_problem("github_*").has_value());
    EXPECT_FALSE(util::glob_problem("a?c").has_value());
    EXPECT_TRUE(util::glob_problem("").has_value());
    EXPECT_NE(util::glob_problem("tool_[ab]")->find("only *"), std::string::npos);
    EXPECT_TRUE(util::glob_problem("{a,b}").has_value());
}

namespace {

AccessRule rule(AccessEffect effect, std::string name) {
    AccessRule r;
    r.effect = effect;
    r.name = std::move(name);
    return r;
}

const std::vector<std::string> kNoGroups;

}  // namespace

TEST(AccessPolicyTest, FirstMatchingRuleDecidesElseTheDefault) {
    auto allow_admins = rule(AccessEffect::allow, "admins");
    allow_admins.groups = {"admins"};
    allow_admins.tools = {"*_delete"};
    auto deny_delete = rule(AccessEffect::deny, "no-delete");
    deny_delete.tools = {"*_delete"};
    auth::AccessPolicy policy({allow_admins, deny_delete}, AccessEffect::allow);
    const std::vector<std::string> admins{"staff", "admins"};

    auto d = policy.for_tool({.principal = "alice", .groups = &admins}, "repo", "repo_delete");
    EXPECT_TRUE(d.allowed);
    EXPECT_EQ(d.rule->name, "admins");
    d = policy.for_tool({.principal = "bob", .groups = &kNoGroups}, "repo", "repo_delete");
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.rule->name, "no-delete");
    d = policy.for_tool({.principal = "bob"}, "repo", "repo_read");
    EXPECT_TRUE(d.allowed);
    EXPECT_EQ(d.rule, nullptr);  // the default

    // The same rules in the other order: the deny comes first and wins for everyone.
    auth::AccessPolicy reversed({deny_delete, allow_admins}, AccessEffect::allow);
    EXPECT_FALSE(reversed.for_tool({.principal = "alice", .groups = &admins}, "repo", "repo_delete").allowed);
}

TEST(AccessPolicyTest, DefaultDenyNeedsAnAllow) {
    auto readers = rule(AccessEffect::allow, "readers");
    readers.tools = {"*_read", "search"};
    auth::AccessPolicy policy({readers}, AccessEffect::deny);
    EXPECT_FALSE(policy.empty());
    EXPECT_TRUE(policy.for_tool({.principal = "x"}, "s", "doc_read").allowed);
    EXPECT_TRUE(policy.for_tool({.principal = "x"}, "s", "search").allowed);
    auto d = policy.for_tool({.principal = "x"}, "s", "doc_write");
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.rule, nullptr);
    // No rules and default allow: nothing to check at all.
    EXPECT_TRUE(auth::AccessPolicy({}, AccessEffect::allow).empty());
    EXPECT_FALSE(auth::AccessPolicy({}, AccessEffect::deny).empty());
}

TEST(AccessPolicyTest, EveryConditionOfARuleMustHoldAnyValueOfOne) {
    auto r = rule(AccessEffect::deny, "r");
    r.principals = {"bearer:*", "ci-*"};
    r.scopes = {"ops:write", "ops:admin"};
    r.profiles = {"ide"};
    r.sources = {"ops"};
    auth::AccessPolicy policy({r}, AccessEffect::allow);
    const std::vector<std::string> write{"openid", "ops:write"};
    const std::vector<std::string> read{"ops:read"};
    auth::AccessCaller match{.principal = "ci-runner", .scopes = &write, .profile = "ide"};
    EXPECT_FALSE(policy.for_tool(match, "ops", "deploy").allowed);
    auto other = match;
    other.principal = "alice";
    EXPECT_TRUE(policy.for_tool(other, "ops", "deploy").allowed);
    other = match;
    other.scopes = &read;
    EXPECT_TRUE(policy.for_tool(other, "ops", "deploy").allowed);
    other = match;
    other.scopes = nullptr;  // no OAuth token: never matches a rule that names scopes
    EXPECT_TRUE(policy.for_tool(other, "ops", "deploy").allowed);
    other = match;
    other.profile = "";
    EXPECT_TRUE(policy.for_tool(other, "ops", "deploy").allowed);
    EXPECT_TRUE(policy.for_tool(match, "wiki", "deploy").allowed);
    EXPECT_TRUE(policy.for_tool(match, "", "deploy").allowed);
}

TEST(AccessPolicyTest, RulesThatNameToolsDoNotDecideASourceAsAWhole) {
    auto allow_one = rule(AccessEffect::allow, "one");
    allow_one.tools = {"wiki_read"};
    auto deny_wiki = rule(AccessEffect::deny, "wiki");
    deny_wiki.sources = {"wiki"};
    auth::AccessPolicy policy({allow_one, deny_wiki}, AccessEffect::allow);
    EXPECT_TRUE(policy.for_tool({.principal = "a"}, "wiki", "wiki_read").allowed);
    EXPECT_FALSE(policy.for_tool({.principal = "a"}, "wiki", "wiki_write").allowed);
    auto d = policy.for_source({.principal = "a"}, "wiki");
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.rule->name, "wiki");
    EXPECT_TRUE(policy.for_source({.principal = "a"}, "ops").allowed);
    // The server's own resources and prompts: always.
    auth::AccessPolicy deny_all({}, AccessEffect::deny);
    EXPECT_TRUE(deny_all.for_source({.principal = "a"}, "").allowed);
    EXPECT_FALSE(deny_all.for_source({.principal = "a"}, "wiki").allowed);
}

TEST(AccessPolicyTest, PrincipalNamesAndGroupClaims) {
    EXPECT_EQ(auth::access_principal("alice", "oauth:1234", false, "stdio"), "alice");
    EXPECT_EQ(auth::access_principal("", "bearer:abcd", false, "stdio"), "bearer:abcd");
    EXPECT_EQ(auth::access_principal("", "", true, "local-user"), "local-user");
    EXPECT_EQ(auth::access_principal("", "", false, "stdio"), "anonymous");
    EXPECT_EQ(auth::claim_groups(Json::array({"a", 3, "b"})), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(auth::claim_groups(Json("a b,c")), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_TRUE(auth::claim_groups(Json::object()).empty());
    auto g = rule(AccessEffect::deny, "g");
    g.groups = {"x"};
    EXPECT_TRUE(auth::AccessPolicy({g}, AccessEffect::allow).uses_groups());
    EXPECT_FALSE(auth::AccessPolicy({rule(AccessEffect::deny, "n")}, AccessEffect::allow).uses_groups());
}

namespace {

// A server with tools of two sources, a resource and a prompt of one of them.
class ServerAccessTest : public ::testing::Test {
protected:
    ServerAccessTest() : server(exec, ServerOptions{}) {
        add("search", "wiki");
        add("wiki_edit", "wiki");
        add("deploy", "ops");
        add("ops_status", "ops");
        ResourceSpec resource;
        resource.uri = "ops://runbook";
        resource.name = "runbook";
        resource.source = "ops";
        resource.reader = [](RequestContext&, const std::string& uri, const Json&) -> Task<Json> {
            co_return Json::array({{{"uri", uri}, {"text", "steps"}}});
        };
        server.registry().add_resource(std::move(resource));
        PromptSpec prompt;
        prompt.name = "incident";
        prompt.source = "ops";
        prompt.handler = [](RequestContext&, const Json&) -> Task<Json> {
            co_return Json{{"messages", Json::array()}};
        };
        server.registry().add_prompt(std::move(prompt));
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

    // Rules: the on-call group may deploy; nobody else may; interns reach the wiki only.
    void set_rules(AccessEffect default_effect = AccessEffect::allow) {
        auto oncall = rule(AccessEffect::allow, "oncall-deploys");
        oncall.groups = {"oncall"};
        oncall.tools = {"deploy"};
        auto nobody = rule(AccessEffect::deny, "no-deploy");
        nobody.tools = {"deploy"};
        auto interns = rule(AccessEffect::deny, "interns-off-ops");
        interns.principals = {"intern-*"};
        interns.sources = {"ops"};
        server.set_access_policy(
            std::make_shared<auth::AccessPolicy>(std::vector<AccessRule>{oncall, nobody, interns}, default_effect));
    }

    std::shared_ptr<ServerSession> open(std::string subject, std::vector<std::string> groups = {}) {
        CallerIdentity caller;
        caller.principal = "oauth:" + subject;
        caller.subject = std::move(subject);
        caller.groups = std::move(groups);
        caller.scopes = std::vector<std::string>{};
        return driver.open(std::move(caller));
    }

    std::vector<std::string> listed(ServerSession& session, const char* method = "tools/list",
                                    const char* field = "tools", const char* key = "name") {
        auto reply = driver.call(session, 1, method, Json::object());
        std::vector<std::string> names;
        for (const auto& t : reply["result"][field]) names.push_back(t[key]);
        std::sort(names.begin(), names.end());
        return names;
    }

    test_support::ManualExecutor exec;
    McpServer server;
    test_support::SessionDriver driver{exec, server};
};

using Names = std::vector<std::string>;

}  // namespace

TEST_F(ServerAccessTest, WithoutRulesNothingIsFiltered) {
    server.set_access_policy(std::make_shared<auth::AccessPolicy>(std::vector<AccessRule>{}, AccessEffect::allow));
    EXPECT_EQ(server.access_policy(), nullptr);  // an empty policy is no policy: no check per call
    auto s = open("bob");
    EXPECT_FALSE(server.filters(s->caller()));
    EXPECT_EQ(listed(*s), (Names{"deploy", "ops_status", "search", "wiki_edit"}));
    Json result = Json::object();
    mark_cacheable(result, server);
    EXPECT_EQ(result["cacheScope"], "public");
}

TEST_F(ServerAccessTest, TwoPrincipalsSeeDifferentTools) {
    set_rules();
    auto oncall = open("carol", {"oncall"});
    auto bob = open("bob");
    auto intern = open("intern-dave");
    EXPECT_EQ(listed(*oncall), (Names{"deploy", "ops_status", "search", "wiki_edit"}));
    EXPECT_EQ(listed(*bob), (Names{"ops_status", "search", "wiki_edit"}));
    EXPECT_EQ(listed(*intern), (Names{"search", "wiki_edit"}));
    // The lists differ per caller: no shared cache may keep one.
    Json result = Json::object();
    mark_cacheable(result, server);
    EXPECT_EQ(result["cacheScope"], "private");
}

TEST_F(ServerAccessTest, ADeniedCallIsTheForbiddenToolErrorNamingTheRule) {
    set_rules();
    auto bob = open("bob");
    auto result = driver.tool_call(*bob, 2, "deploy", Json::object());
    EXPECT_EQ(result["isError"], true) << result.dump();
    const auto& error = result["structuredContent"];
    EXPECT_EQ(error["error_code"], "MCP_TOOL_FORBIDDEN") << result.dump();
    EXPECT_EQ(error["rule"], "no-deploy");
    EXPECT_EQ(error["principal"], "bob");
    EXPECT_EQ(error["recoverable"], false);
    EXPECT_NE(error["error"].get<std::string>().find("\"no-deploy\" denies bob the tool deploy"), std::string::npos);
    EXPECT_NE(error["suggestion"].get<std::string>().find("operator"), std::string::npos);
    // An absent tool is still the protocol's unknown tool.
    auto unknown = driver.call(*bob, 3, "tools/call", {{"name", "nope"}, {"arguments", Json::object()}});
    EXPECT_EQ(unknown["error"]["code"], -32602) << unknown.dump();
    // Allowed calls run.
    EXPECT_EQ(driver.tool_call(*bob, 4, "ops_status", Json::object())["content"][0]["text"], "ran ops_status");
    auto oncall = open("carol", {"oncall"});
    EXPECT_EQ(driver.tool_call(*oncall, 5, "deploy", Json::object())["content"][0]["text"], "ran deploy");
}

TEST_F(ServerAccessTest, TheDefaultDenyIsNamedAsSuch) {
    set_rules(AccessEffect::deny);
    auto bob = open("bob");
    EXPECT_TRUE(listed(*bob).empty());
    auto result = driver.tool_call(*bob, 2, "search", Json::object());
    EXPECT_EQ(result["structuredContent"]["error_code"], "MCP_TOOL_FORBIDDEN");
    EXPECT_EQ(result["structuredContent"]["rule"], "access.default");
    EXPECT_NE(result["structuredContent"]["error"].get<std::string>().find("access.default is deny"), std::string::npos);
}

TEST_F(ServerAccessTest, ASourceDeniedWholeHidesItsResourcesAndPrompts) {
    set_rules();
    auto bob = open("bob");
    EXPECT_EQ(listed(*bob, "resources/list", "resources", "uri"), (Names{"ops://runbook"}));
    EXPECT_EQ(listed(*bob, "prompts/list", "prompts"), (Names{"incident"}));
    auto intern = open("intern-dave");
    EXPECT_TRUE(listed(*intern, "resources/list", "resources", "uri").empty());
    EXPECT_TRUE(listed(*intern, "prompts/list", "prompts").empty());
    auto read = driver.call(*intern, 2, "resources/read", {{"uri", "ops://runbook"}});
    EXPECT_TRUE(read.contains("error")) << read.dump();
    auto prompt = driver.call(*intern, 3, "prompts/get", {{"name", "incident"}});
    EXPECT_TRUE(prompt.contains("error")) << prompt.dump();
    auto ok = driver.call(*bob, 4, "resources/read", {{"uri", "ops://runbook"}});
    EXPECT_TRUE(ok.contains("result")) << ok.dump();
}

TEST_F(ServerAccessTest, TheStdioClientIsTheLocalPrincipal) {
    auto local = rule(AccessEffect::deny, "local-no-ops");
    local.principals = {"me"};
    local.sources = {"ops"};
    server.set_access_policy(
        std::make_shared<auth::AccessPolicy>(std::vector<AccessRule>{local}, AccessEffect::allow, "groups", "me"));
    auto stdio = driver.open(CallerIdentity{.session_id = "stdio"});
    EXPECT_EQ(listed(*stdio), (Names{"search", "wiki_edit"}));
    auto http = driver.open(CallerIdentity{.session_id = "abc"});  // anonymous HTTP
    EXPECT_EQ(listed(*http), (Names{"deploy", "ops_status", "search", "wiki_edit"}));
}

TEST_F(ServerAccessTest, RulesReplacedAtRunTimeTakeEffectAtOnce) {
    auto bob = open("bob");
    EXPECT_EQ(listed(*bob).size(), 4u);
    set_rules();
    EXPECT_EQ(listed(*bob), (Names{"ops_status", "search", "wiki_edit"}));
    server.set_access_policy(nullptr);
    EXPECT_EQ(listed(*bob).size(), 4u);
}
