// The configuration keys of observability: http.metrics_endpoint, http.health_endpoint,
// http.public_health, log.format, log.file (and log.level's validation).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/config.hpp"

using namespace toolport;
namespace fs = std::filesystem;

namespace {

std::string write_config(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    auto path = fs::temp_directory_path() /
                ("toolport-obs-config-" + std::to_string(::getpid()) + "-" + info->name() + ".yaml");
    std::ofstream(path) << text;
    return path.string();
}

std::string error_of(const std::string& text) {
    auto path = write_config(text);
    try {
        (void)load_config(path);
    } catch (const ConfigError& e) {
        fs::remove(path);
        return e.what();
    }
    fs::remove(path);
    ADD_FAILURE() << "expected ConfigError for:\n" << text;
    return {};
}

}  // namespace

TEST(ObservabilityConfig, Defaults) {
    auto c = load_config("");
    EXPECT_TRUE(c.http.metrics_endpoint);
    EXPECT_TRUE(c.http.health_endpoint);
    EXPECT_TRUE(c.http.public_health);
    EXPECT_EQ(c.log_format, "json");
    EXPECT_EQ(c.log_file, "");
}

TEST(ObservabilityConfig, ReadsEveryKey) {
    auto path = write_config(
        "http:\n  metrics_endpoint: false\n  health_endpoint: no\n  public_health: off\n"
        "log:\n  level: warn\n  format: text\n  file: /var/log/toolport.log\n");
    auto c = load_config(path);
    fs::remove(path);
    EXPECT_FALSE(c.http.metrics_endpoint);
    EXPECT_FALSE(c.http.health_endpoint);
    EXPECT_FALSE(c.http.public_health);
    EXPECT_EQ(c.log_level, "warn");
    EXPECT_EQ(c.log_format, "text");
    EXPECT_EQ(c.log_file, "/var/log/toolport.log");
}

TEST(ObservabilityConfig, BadValuesNameTheKeyAndLine) {
    auto msg = error_of("log:\n  format: xml\n");
    EXPECT_NE(msg.find(":2: log.format: must be json or text"), std::string::npos) << msg;
    msg = error_of("log:\n  level: loud\n");
    EXPECT_NE(msg.find(":2: log.level: must be one of"), std::string::npos) << msg;
    msg = error_of("http:\n  public_health: maybe\n");
    EXPECT_NE(msg.find("http.public_health: must be true or false"), std::string::npos) << msg;
    msg = error_of("http:\n  metrics_endpoint: [1]\n");
    EXPECT_NE(msg.find("http.metrics_endpoint"), std::string::npos) << msg;
    msg = error_of("log:\n  files: x\n");
    EXPECT_NE(msg.find("log.files: unknown key"), std::string::npos) << msg;
}
