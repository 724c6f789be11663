// The settings of an `openapi:` instance: what is required, what is checked before
// anything is read, and the defaults.
#include <gtest/gtest.h>

#include "providers/openapi/openapi_settings.hpp"

using namespace toolport;
using namespace toolport::openapi;
using providers::SettingsError;
using providers::SourceSettings;

namespace {

OpenApiSettings read(Json values) { return OpenApiSettings::from(SourceSettings(std::move(values), "openapi.pets")); }

std::string refusal(Json values) {
    try {
        read(std::move(values));
    } catch (const SettingsError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(OpenApiSettings, ReadsEverySetting) {
    auto s = read({{"document", "./pets.yaml"},
                   {"base_url", "https://api.test/v2"},
                   {"tool_prefix", "pets_"},
                   {"include_tags", {"a"}},
                   {"exclude_tags", {"b"}},
                   {"include_operations", {"getPet"}},
                   {"exclude_operations", {"deletePet"}},
                   {"credentials", {{"api_key", "PETS_KEY"}}},
                   {"refresh_interval_s", 300},
                   {"max_response_bytes", 65536}});
    EXPECT_EQ(s.document, "./pets.yaml");
    EXPECT_EQ(s.base_url, "https://api.test/v2");
    EXPECT_EQ(s.tool_prefix, "pets_");
    EXPECT_EQ(s.filter.include_tags, std::vector<std::string>{"a"});
    EXPECT_EQ(s.filter.exclude_operations, std::vector<std::string>{"deletePet"});
    EXPECT_EQ(s.credentials.at("api_key"), "PETS_KEY");
    EXPECT_EQ(s.refresh_interval.count(), 300);
    EXPECT_EQ(s.max_response_bytes, 65536u);

    auto defaults = read({{"document", "https://api.test/openapi.json"}});
    EXPECT_TRUE(defaults.base_url.empty());
    EXPECT_EQ(defaults.refresh_interval.count(), 0);
    EXPECT_TRUE(defaults.credentials.empty());
    EXPECT_EQ(defaults.max_response_bytes, 8u << 20);
}

TEST(OpenApiSettings, RefusesWhatCannotWork) {
    EXPECT_NE(refusal(Json::object()).find("document"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"colour", "red"}}).find("colour"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"base_url", "ftp://x"}}).find("base_url"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"base_url", "https://x/v1?key=1"}}).find("base_url"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"tool_prefix", "bad prefix"}}).find("tool_prefix"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"credentials", {{"api_key", "the key itself!"}}}}).find("credentials"),
              std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"refresh_interval_s", -1}}).find("refresh_interval_s"),
              std::string::npos);
    EXPECT_NE(refusal({{"document", "http://"}}).find("document"), std::string::npos);
    EXPECT_NE(refusal({{"document", "a.yaml"}, {"max_response_bytes", 10}}).find("max_response_bytes"),
              std::string::npos);
}

}  // namespace
