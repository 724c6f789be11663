// Every key as it takes effect: from the file, an environment variable over it, or its
// default; sections, named sections, a section written as a string, open keys, and secrets
// never shown.
#include <gtest/gtest.h>

#include "config/effective.hpp"

using namespace toolport::config;
using Json = nlohmann::json;

namespace {

const Key url = string_key("url", "Where.");
const Key timeout_ms = duration_key("timeout_ms", "ms", 1, 60000, "How long.", "500");
const Section store_section{"store", "The store.", {&url, &timeout_ms}};
const Key store = [] {
    auto key = section_key("store", store_section, "The store.");
    key.also_string = true;
    return key;
}();
const Key command = string_key("command", "What to run.");
const Key api_token = as_secret(string_key("api_token", "A token."), Secret::inline_or_env);
const Key headers = map_key("headers", "Headers.");
const Section upstream_section{"upstream", "An upstream.", {&command, &api_token, &headers}};
const Key upstreams = named_sections_key("upstreams", upstream_section, "Upstreams.");
const Key level = with_env(one_of_key("level", {"info", "debug"}, "Level.", "info"), "TEST_LEVEL");
const Key retries = with_env(integer_key("retries", 0, 10, "Retries.", "3"), "TEST_RETRIES");
const Key verbose = boolean_key("verbose", "Verbose.", "false");
const Key ratio = number_key("ratio", 0, 1, "A share.", "0.25");
const Key packs = any_key("packs", "Packs.");
const Key pack_depth = integer_key("depth", 1, 9, "Depth.", "2");
const Section pack_section{"packs.deep", "A pack.", {&pack_depth}};
const Section file{"", "The file.", {&level, &retries, &verbose, &ratio, &store, &upstreams, &packs}};

EnvReader env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

Json rows_json(const std::vector<EffectiveRow>& rows) {
    Json out = Json::object();
    for (const auto& r : rows) out[r.path] = {r.value, r.from};
    return out;
}

}  // namespace

TEST(EffectiveConfig, DefaultsTypedAsTheKeyEnvironmentOverTheFile) {
    const Json written = Json::parse(R"({"retries": 5, "verbose": true})");
    auto rows = rows_json(effective_rows(file, written, {}, env_of({{"TEST_RETRIES", "7"}})));
    EXPECT_EQ(rows["level"], Json::parse(R"(["info", "default"])"));
    EXPECT_EQ(rows["retries"], Json::parse(R"([7, "env TEST_RETRIES"])"));
    EXPECT_EQ(rows["verbose"], Json::parse(R"([true, "file"])"));
    EXPECT_EQ(rows["ratio"], Json::parse(R"([0.25, "default"])"));
    EXPECT_EQ(rows["store.timeout_ms"], Json::parse(R"([500, "default"])"));
    EXPECT_FALSE(rows.contains("store.url")) << "no value and no default: not listed";
    EXPECT_FALSE(rows.contains("packs"));
}

TEST(EffectiveConfig, SectionsNamedSectionsAndASectionWrittenAsAString) {
    const Json written = Json::parse(R"({
        "store": "redis://:pw@localhost:6379",
        "upstreams": {"a": {"command": "npx thing"}, "b": {"api_token": "t0k3n", "headers": {"Authorization": "Bearer x", "X-Trace": "on"}}}
    })");
    auto rows = rows_json(effective_rows(file, written, {}, env_of({})));
    EXPECT_EQ(rows["store.url"], Json::parse(R"(["redis://***@localhost:6379", "file"])"));
    EXPECT_EQ(rows["upstreams.a.command"], Json::parse(R"(["npx thing", "file"])"));
    EXPECT_EQ(rows["upstreams.b.api_token"], Json::parse(R"(["***", "file"])"));
    EXPECT_EQ(rows["upstreams.b.headers"], Json::parse(R"([{"Authorization": "***", "X-Trace": "on"}, "file"])"));
    EXPECT_FALSE(rows.contains("upstreams.a.api_token"));
}

TEST(EffectiveConfig, ASecretGivenThroughTheEnvironmentNamesTheVariableNeverTheValue) {
    const Json written = Json::parse(R"({"upstreams": {"a": {"api_token_env": "A_TOKEN"}}})");
    auto rows = rows_json(effective_rows(file, written, {}, env_of({{"A_TOKEN", "s3cr3t"}})));
    EXPECT_EQ(rows["upstreams.a.api_token"], Json::parse(R"(["***", "env A_TOKEN"])"));
    EXPECT_EQ(rows.dump().find("s3cr3t"), std::string::npos);
}

TEST(EffectiveConfig, AnOpenKeyIsWalkedByTheSectionItsNameGivesElseListedAsWritten) {
    const auto more = [](const std::string& path, const std::string& name) -> const Section* {
        return path == "packs" && name == "deep" ? &pack_section : nullptr;
    };
    auto rows = rows_json(effective_rows(file, Json::parse(R"({"packs": {"deep": {}}})"), {}, env_of({}), more));
    EXPECT_EQ(rows["packs.deep.depth"], Json::parse(R"([2, "default"])"));
    rows = rows_json(effective_rows(file, Json::parse(R"({"packs": ["deep", "other"]})"), {}, env_of({}), more));
    EXPECT_EQ(rows["packs"], Json::parse(R"([["deep", "other"], "file"])"));
}

TEST(EffectiveConfig, SecretsByNameAndUrlUserInformation) {
    EXPECT_TRUE(secret_by_name("client_secret"));
    EXPECT_TRUE(secret_by_name("Authorization"));
    EXPECT_TRUE(secret_by_name("X-API-Key"));
    EXPECT_TRUE(secret_by_name("bearer_tokens"));
    EXPECT_FALSE(secret_by_name("bearer_tokens_env"));
    EXPECT_FALSE(secret_by_name("ca_file"));
    EXPECT_FALSE(secret_by_name("url"));
    EXPECT_EQ(redact_secrets(Json("see https://u:p@a.example/x and redis://:pw@b:6379")),
              Json("see https://***@a.example/x and redis://***@b:6379"));
    EXPECT_EQ(redact_secrets(Json("mailto@host https://a.example/@me")), Json("mailto@host https://a.example/@me"));
    EXPECT_EQ(redact_secrets(Json::parse(R"({"nested": {"password": [1, "x"]}})")),
              Json::parse(R"({"nested": {"password": ["***", "***"]}})"));
}
