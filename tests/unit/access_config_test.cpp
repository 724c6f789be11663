// `access:` in the configuration file (src/app/access_config.cpp): rules read in order with
// their defaults, refusals that name the file, line and key, warnings for sources and
// gateway profiles nothing configures, and the declaration in the schema and the docs.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "app/access_config.hpp"
#include "app/config.hpp"
#include "app/config_reference.hpp"

using namespace toolport;
namespace fs = std::filesystem;

namespace {

class AccessConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("toolport-access-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    Config load(const std::string& text) {
        path_ = (dir_ / "toolport.yaml").string();
        std::ofstream(path_, std::ios::binary) << text;
        return load_config(path_);
    }
    std::string error_of(const std::string& text) {
        try {
            load(text);
        } catch (const ConfigError& e) {
            return e.what();
        }
        ADD_FAILURE() << "no error for:\n" << text;
        return {};
    }

    fs::path dir_;
    std::string path_;
};

}  // namespace

TEST_F(AccessConfigTest, WithoutTheSectionThereIsNoPolicy) {
    Config c = load("packs: [conformance]\n");
    EXPECT_EQ(c.access, nullptr);
    EXPECT_TRUE(access_warnings(c).empty());
}

TEST_F(AccessConfigTest, RulesAreReadInOrderWithTheirConditions) {
    Config c = load(R"(packs: [conformance]
access:
  default: deny
  groups_claim: roles
  stdio_principal: me
  rules:
    - name: admins
      effect: allow
      groups: [admins]
    - effect: deny
      tools: ["*_delete", "drop_?"]
      principals: ["bearer:*"]
    - {effect: allow, sources: [conformance], scopes: ["weather:read"], profiles: [small]}
)");
    ASSERT_NE(c.access, nullptr);
    const auto& p = *c.access;
    EXPECT_EQ(p.default_effect(), auth::AccessEffect::deny);
    EXPECT_EQ(p.groups_claim(), "roles");
    EXPECT_EQ(p.local_principal(), "me");
    ASSERT_EQ(p.rules().size(), 3u);
    EXPECT_EQ(p.rules()[0].name, "admins");
    EXPECT_EQ(p.rules()[0].effect, auth::AccessEffect::allow);
    EXPECT_EQ(p.rules()[0].groups, (std::vector<std::string>{"admins"}));
    EXPECT_EQ(p.rules()[1].name, "access.rules[1]");  // unnamed: where it is
    EXPECT_EQ(p.rules()[1].effect, auth::AccessEffect::deny);
    EXPECT_EQ(p.rules()[1].tools, (std::vector<std::string>{"*_delete", "drop_?"}));
    EXPECT_EQ(p.rules()[1].principals, (std::vector<std::string>{"bearer:*"}));
    EXPECT_EQ(p.rules()[2].sources, (std::vector<std::string>{"conformance"}));
    EXPECT_EQ(p.rules()[2].scopes, (std::vector<std::string>{"weather:read"}));
    EXPECT_EQ(p.rules()[2].profiles, (std::vector<std::string>{"small"}));
    // "small" is no gateway profile here: a warning with the rule's line, not a refusal.
    auto warnings = access_warnings(c);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].rfind(path_ + ":13: access.rules[2].profiles: \"small\" is not a gateway profile", 0), 0u)
        << warnings[0];
}

TEST_F(AccessConfigTest, DefaultsAreAllowGroupsAndStdio) {
    Config c = load("access:\n  rules:\n    - {effect: deny, tools: [x]}\n");
    ASSERT_NE(c.access, nullptr);
    EXPECT_EQ(c.access->default_effect(), auth::AccessEffect::allow);
    EXPECT_EQ(c.access->groups_claim(), "groups");
    EXPECT_EQ(c.access->local_principal(), "stdio");
}

TEST_F(AccessConfigTest, UnknownSourcesAreWarnedAboutKnownOnesAreNot) {
    Config c = load(R"(packs: [conformance]
upstreams:
  github: {command: github-mcp}
access:
  rules:
    - {effect: deny, sources: [conformance, github, gitlab]}
)");
    auto warnings = access_warnings(c);
    ASSERT_EQ(warnings.size(), 1u) << (warnings.empty() ? "" : warnings[0]);
    EXPECT_NE(warnings[0].find("access.rules[0].sources: \"gitlab\" is not a configured source"), std::string::npos)
        << warnings[0];
}

TEST_F(AccessConfigTest, MistakesAreRefusedWithFileLineAndKey) {
    auto e = error_of("access:\n  rules:\n    - tools: [a]\n");
    EXPECT_NE(e.find(":3: access.rules[0]: needs effect: allow or deny"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - {effect: permit}\n");
    EXPECT_NE(e.find("access.rules[0].effect: must be allow or deny"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - effect: deny\n      tools: [\"tool_[ab]\"]\n");
    EXPECT_NE(e.find(":4: access.rules[0].tools: \"tool_[ab]\": brackets and braces are not wildcards"), std::string::npos)
        << e;
    e = error_of("access:\n  rules:\n    - effect: deny\n      tools: []\n");
    EXPECT_NE(e.find("access.rules[0].tools: is empty"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - effect: deny\n      tool: [a]\n");
    EXPECT_NE(e.find("access.rules[0].tool: unknown key; did you mean \"tools\"?"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - deny\n");
    EXPECT_NE(e.find("access.rules: must be a mapping"), std::string::npos) << e;
    e = error_of("access:\n  rules: {effect: deny}\n");
    EXPECT_NE(e.find("access.rules: must be a list"), std::string::npos) << e;
    e = error_of("access:\n  default: block\n");
    EXPECT_NE(e.find("access.default: must be allow or deny"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - {effect: deny, scopes: [\"a b\"]}\n");
    EXPECT_NE(e.find("\"a b\": is not a scope"), std::string::npos) << e;
    e = error_of("access:\n  rules:\n    - {name: x, effect: deny}\n    - {name: x, effect: allow}\n");
    EXPECT_NE(e.find("access.rules[1].name: \"x\" names another rule too"), std::string::npos) << e;
    e = error_of("acess:\n  rules: []\n");
    EXPECT_NE(e.find("did you mean \"access\""), std::string::npos) << e;
}

TEST_F(AccessConfigTest, TheSectionIsInTheSchemaAndTheDocs) {
    auto schema = nlohmann::json::parse(configuration_schema());
    const auto& access = schema["properties"]["access"];
    EXPECT_EQ(access["properties"]["rules"]["type"], "array");
    EXPECT_EQ(access["properties"]["rules"]["items"]["properties"]["effect"]["anyOf"][0]["enum"],
              (nlohmann::json{"allow", "deny"}));
    EXPECT_EQ(access["properties"]["rules"]["items"]["additionalProperties"], false);
    auto docs = configuration_docs();
    EXPECT_NE(docs.find("## `access.rules[]`"), std::string::npos);
    EXPECT_NE(docs.find("| `rules` | list of sections |"), std::string::npos);
}
