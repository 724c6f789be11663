// The one configuration reader (config::Settings) read against declarations: the unknown
// key refusal comes from the section's table, a secret's `_env` spelling is handled once,
// environment overrides are checked against the key's range, and the file's tree keeps
// the lines of keys and values.
#include <cstdlib>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/generate.hpp"
#include "config/settings.hpp"
#include "config/yaml_file.hpp"

namespace toolport::config {
namespace {

const Key kPort = integer_key("port", 1, 65535, "The port.", "8080");
const Key kMode = one_of_key("mode", {"fast", "safe"}, "How.", "safe");
const Key kSecret = as_secret(string_key("password", "The password."), Secret::inline_or_env);
const Key kLimit = with_env(integer_key("limit", 0, 10, "A limit."), "TOOLPORT_UT_SETTINGS_LIMIT");
const Section kSection{"demo", "A demo section.", {&kPort, &kMode, &kSecret, &kLimit}, true, true};
const Key kDemo = section_key("demo", kSection, kSection.doc);
const Section kFile{"", "A file.", {&kDemo}, true, true};

Settings from_text(const std::string& text) { return Settings(tree_from_yaml(YAML::Load(text), "f.yaml")); }

std::string error_of(const std::function<void()>& read) {
    try {
        read();
    } catch (const SettingsError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ConfigSettings, ReadsTypedValuesThroughTheirDeclarations) {
    auto root = from_text("demo:\n  port: 9000\n  mode: fast\n");
    root.check_keys(kFile);
    auto demo = root.section(kDemo);
    demo.check_keys(kSection);
    EXPECT_EQ(demo.integer(kPort), 9000);
    EXPECT_EQ(demo.one_of(kMode), "fast");
    EXPECT_FALSE(demo.secret(kSecret));
}

TEST(ConfigSettings, RefusalsNameFileLineAndDottedKey) {
    auto demo = from_text("demo:\n  port: 9000\n  mdoe: fast\n").section(kDemo);
    EXPECT_EQ(error_of([&] { demo.check_keys(kSection); }),
              "f.yaml:3: demo.mdoe: unknown key; did you mean \"mode\"? (expected one of: limit, mode, password, "
              "password_env, port)");
    auto bad = from_text("demo:\n  port: 70000\n  mode: slow\n").section(kDemo);
    EXPECT_EQ(error_of([&] { (void)bad.integer(kPort); }), "f.yaml:2: demo.port: must be between 1 and 65535");
    EXPECT_EQ(error_of([&] { (void)bad.one_of(kMode); }), "f.yaml:3: demo.mode: must be fast or safe");
    auto null_value = from_text("demo:\n  port:\n").section(kDemo);
    EXPECT_EQ(error_of([&] { (void)null_value.integer(kPort); }).find("demo.port: must be a string") != std::string::npos,
              true);
}

TEST(ConfigSettings, ASecretMayComeFromTheEnvironmentOnce) {
    ::setenv("TOOLPORT_UT_SETTINGS_PW", "s3cret", 1);
    auto demo = from_text("demo:\n  password_env: TOOLPORT_UT_SETTINGS_PW\n").section(kDemo);
    EXPECT_EQ(demo.secret(kSecret), "s3cret");
    auto both = from_text("demo:\n  password: x\n  password_env: TOOLPORT_UT_SETTINGS_PW\n").section(kDemo);
    EXPECT_EQ(error_of([&] { (void)both.secret(kSecret); }),
              "f.yaml:3: demo.password_env: give password or password_env, not both");
    auto unset = from_text("demo:\n  password_env: TOOLPORT_UT_SETTINGS_UNSET\n").section(kDemo);
    EXPECT_EQ(error_of([&] { (void)unset.secret(kSecret); }),
              "f.yaml:2: demo.password_env: environment variable TOOLPORT_UT_SETTINGS_UNSET is not set");
    ::unsetenv("TOOLPORT_UT_SETTINGS_PW");
}

TEST(ConfigSettings, EnvironmentOverridesAreCheckedAgainstTheKey) {
    ::setenv("TOOLPORT_UT_SETTINGS_LIMIT", "7", 1);
    EXPECT_EQ(Settings::integer_from_env(kLimit), 7);
    ::setenv("TOOLPORT_UT_SETTINGS_LIMIT", "11", 1);
    EXPECT_EQ(error_of([] { (void)Settings::integer_from_env(kLimit); }),
              "environment variable TOOLPORT_UT_SETTINGS_LIMIT must be an integer from 0 to 10");
    ::unsetenv("TOOLPORT_UT_SETTINGS_LIMIT");
    EXPECT_FALSE(Settings::integer_from_env(kLimit));
}

TEST(ConfigSettings, ASourceSectionArrivesExpandedWithItsLines) {
    ::setenv("TOOLPORT_UT_SETTINGS_URL", "https://x.example", 1);
    auto root = from_text("packs:\n  demo:\n    url: ${TOOLPORT_UT_SETTINGS_URL}\n    pages: [1, 2]\n");
    auto packs = root.section(Key{.name = "packs"});
    auto settings = packs.source_section("demo", "packs.demo");
    EXPECT_EQ(settings.string("url"), "https://x.example");
    EXPECT_EQ(settings.line_of("url"), 3);
    EXPECT_EQ(error_of([&] { settings.only_keys({"url"}); }),
              "f.yaml:4: packs.demo.pages: unknown key (expected one of: url)");
    ::unsetenv("TOOLPORT_UT_SETTINGS_URL");
}

TEST(ConfigSettings, TheSchemaFollowsTheDeclarations) {
    auto schema = json_schema(kFile, "t", "");
    const auto& demo = schema["properties"]["demo"];
    EXPECT_EQ(demo["additionalProperties"], false);
    EXPECT_TRUE(demo["properties"].contains("password_env"));
    EXPECT_EQ(demo["properties"]["port"]["default"], 8080);
    EXPECT_EQ(demo["properties"]["mode"]["anyOf"][0]["enum"], (nlohmann::json{"fast", "safe"}));
}

}  // namespace
}  // namespace toolport::config
