// Structured logs: configure_logging (json and text, stderr or an appended file), the JSON
// line formatter for ordinary spdlog calls, log_event and its redaction.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "async/log_ids.hpp"
#include "observability/events.hpp"

using namespace toolport::observability;
using nlohmann::json;
namespace fs = std::filesystem;

// ---- redaction ------------------------------------------------------------------------------

TEST(Redaction, SecretLookingKeysAtAnyDepthAndCase) {
    json in = {
        {"tool", "search"},
        {"Authorization", "Bearer abc"},
        {"access_token", "t1"},
        {"client_SECRET", "s1"},
        {"password", 1234},
        {"x-api-key", "k1"},
        {"apiKey", "k2"},
        {"api_key", "k3"},
        {"Cookie", "session=1"},
        {"monkey", "a word that merely ends in key"},
        {"tokens_estimate", 120},
        {"private_key", "pk"},
        {"keyboard", "does not end in key"},
        {"nested", {{"inner", {{"Token", {{"whole", "object"}}}}}, {"list", json::array({{{"secret", "x"}}, "plain"})}}},
        {"count", 3},
    };
    json out = redact_fields(in);
    EXPECT_EQ(out["tool"], "search");
    for (const char* key : {"Authorization", "access_token", "client_SECRET", "password", "x-api-key", "apiKey",
                            "api_key", "Cookie", "private_key"}) {
        EXPECT_EQ(out[key], "[redacted]") << key;
    }
    EXPECT_EQ(out["keyboard"], "does not end in key");
    EXPECT_EQ(out["monkey"], "a word that merely ends in key");
    EXPECT_EQ(out["tokens_estimate"], 120) << "a count of tokens is not a token";
    EXPECT_EQ(out["nested"]["inner"]["Token"], "[redacted]");
    EXPECT_EQ(out["nested"]["list"][0]["secret"], "[redacted]");
    EXPECT_EQ(out["nested"]["list"][1], "plain");
    EXPECT_EQ(out["count"], 3);
    EXPECT_EQ(in["access_token"], "t1") << "the input is not modified";
}

TEST(Redaction, StripsHomeDirectoriesAndControlCharacters) {
    json out = redact_fields({{"path", "/home/alice/projects/x.yaml"},
                              {"msg", "cannot read /root/.config/t: denied"},
                              {"deep", json::array({"/Users/bob/file"})},
                              {"lines", "one\ntwo"}});
    EXPECT_EQ(out["path"], "~/projects/x.yaml");
    EXPECT_EQ(out["msg"], "cannot read ~/.config/t: denied");
    EXPECT_EQ(out["deep"][0], "~/file");
    EXPECT_EQ(out["lines"], "one two");
}

TEST(Redaction, CapsLongStringsAndDeepNesting) {
    json out = redact_fields({{"big", std::string(10000, 'a')}});
    EXPECT_LE(out["big"].get<std::string>().size(), 4096u + 8);
    json deep = "leaf";
    for (int i = 0; i < 200; ++i) deep = json::array({deep});
    json cut;
    ASSERT_NO_THROW(cut = redact_fields({{"deep", deep}}));
    EXPECT_NE(cut.dump().find("[too deep]"), std::string::npos);
}

// ---- configure_logging and the line format --------------------------------------------------

namespace {

class LoggingTest : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = spdlog::default_logger();
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("toolport-events-test-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        file_ = (dir_ / "toolport.log").string();
    }
    void TearDown() override {
        // Back to the logger the other tests use; this also drops the events logger that
        // points at this test's file.
        configure_logging({"info", "text", ""});
        spdlog::set_default_logger(saved_);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    std::vector<std::string> lines() {
        spdlog::default_logger()->flush();
        std::ifstream in(file_);
        std::vector<std::string> out;
        for (std::string line; std::getline(in, line);) out.push_back(line);
        return out;
    }

    // Every line parsed as one JSON object (a failure names the line).
    std::vector<json> json_lines() {
        std::vector<json> out;
        for (const auto& line : lines()) {
            try {
                auto j = json::parse(line);
                EXPECT_TRUE(j.is_object()) << line;
                out.push_back(j);
            } catch (const json::exception& e) {
                ADD_FAILURE() << "not JSON: " << line << " (" << e.what() << ")";
            }
        }
        return out;
    }

    std::shared_ptr<spdlog::logger> saved_;
    fs::path dir_;
    std::string file_;
};

const std::regex kTimestamp(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");

}  // namespace

TEST_F(LoggingTest, JsonLinesForOrdinaryMessagesAndEvents) {
    configure_logging({"debug", "json", file_});
    spdlog::info("serving MCP on {}", "http://127.0.0.1:8080/mcp");
    spdlog::debug("a \"quoted\" message\nwith a second line\tand a tab");
    spdlog::warn("bytes that are not UTF-8: \xff\xfe end");
    spdlog::error("braces {} and a backslash {}", "{}", "\\");
    log_event(EventLevel::warn, "mcp_budget_warning",
              {{"scope", "session"}, {"percent_used", 80}, {"api_key", "sk-123"}, {"detail", {{"Cookie", "c"}}}});
    log_event(EventLevel::info, "tool_call", json::object());

    auto raw = lines();
    auto rows = json_lines();
    ASSERT_EQ(rows.size(), 6u);
    ASSERT_EQ(raw.size(), 6u) << "every message stays on one line";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(raw[i].rfind("{\"ts\":\"", 0), 0u) << "ts comes first: " << raw[i];
        ASSERT_TRUE(rows[i]["ts"].is_string());
        EXPECT_TRUE(std::regex_match(rows[i]["ts"].get<std::string>(), kTimestamp)) << rows[i]["ts"];
    }
    EXPECT_EQ(rows[0]["level"], "info");
    EXPECT_EQ(rows[0]["msg"], "serving MCP on http://127.0.0.1:8080/mcp");
    EXPECT_EQ(rows[0].size(), 3u) << raw[0];
    EXPECT_EQ(rows[1]["level"], "debug");
    EXPECT_EQ(rows[1]["msg"], "a \"quoted\" message\nwith a second line\tand a tab");
    EXPECT_EQ(rows[2]["level"], "warn");
    EXPECT_NE(rows[2]["msg"].get<std::string>().find(" end"), std::string::npos);
    EXPECT_EQ(rows[3]["level"], "error");
    EXPECT_EQ(rows[3]["msg"], "braces {} and a backslash \\");

    const auto& event = rows[4];
    EXPECT_EQ(event["level"], "warn");
    EXPECT_EQ(event["event"], "mcp_budget_warning");
    EXPECT_EQ(event["scope"], "session");
    EXPECT_EQ(event["percent_used"], 80);
    EXPECT_EQ(event["api_key"], "[redacted]");
    EXPECT_EQ(event["detail"]["Cookie"], "[redacted]");
    EXPECT_FALSE(event.contains("msg"));
    EXPECT_EQ(raw[4].find("sk-123"), std::string::npos) << "the secret never reaches the file";
    EXPECT_EQ(rows[5], (json{{"ts", rows[5]["ts"]}, {"level", "info"}, {"event", "tool_call"}}));
}

TEST_F(LoggingTest, EventFieldsNamedLikeTheEnvelopeAreRenamed) {
    configure_logging({"info", "json", file_});
    log_event(EventLevel::info, "orchestration_summary",
              {{"ts", "mine"}, {"level", 3}, {"event", "x"}, {"msg", "kept"}});
    log_event(EventLevel::info, "odd_fields", json::array({1, 2}));
    log_event(EventLevel::info, "no_fields", nullptr);
    auto rows = json_lines();
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["event"], "orchestration_summary");
    EXPECT_EQ(rows[0]["level"], "info");
    EXPECT_EQ(rows[0]["field_ts"], "mine");
    EXPECT_EQ(rows[0]["field_level"], 3);
    EXPECT_EQ(rows[0]["field_event"], "x");
    EXPECT_EQ(rows[0]["msg"], "kept");
    EXPECT_EQ(rows[1]["fields"], json::array({1, 2}));
    EXPECT_EQ(rows[2].size(), 3u);
}

TEST_F(LoggingTest, LevelFiltersMessagesAndEvents) {
    configure_logging({"warn", "json", file_});
    spdlog::info("hidden");
    log_event(EventLevel::info, "hidden_event", {});
    log_event(EventLevel::debug, "hidden_event", {});
    spdlog::warn("shown");
    log_event(EventLevel::error, "mcp_server_unhealthy", {{"service", "tango"}});
    auto rows = json_lines();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["msg"], "shown");
    EXPECT_EQ(rows[1]["event"], "mcp_server_unhealthy");
    EXPECT_EQ(rows[1]["level"], "error");

    // spdlog::set_level keeps working for events too.
    spdlog::set_level(spdlog::level::err);
    log_event(EventLevel::warn, "hidden_event", {});
    EXPECT_EQ(json_lines().size(), 2u);
}

TEST_F(LoggingTest, FileIsAppendedTo) {
    { std::ofstream(file_) << "an earlier line\n"; }
    configure_logging({"info", "json", file_});
    spdlog::info("new");
    auto all = lines();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0], "an earlier line");
    EXPECT_EQ(json::parse(all[1])["msg"], "new");
}

TEST_F(LoggingTest, TextFormatIsTheHumanOne) {
    configure_logging({"info", "text", file_});
    spdlog::info("plain message");
    log_event(EventLevel::warn, "mcp_budget_exceeded", {{"scope", "tool"}, {"token", "abc"}});
    auto all = lines();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_TRUE(
        std::regex_search(all[0], std::regex(R"(^\[\d{4}-\d{2}-\d{2} [\d:.]+\] \[toolport\] \[info\] plain message$)")))
        << all[0];
    EXPECT_NE(all[1].find("[warning] mcp_budget_exceeded {\"scope\":\"tool\",\"token\":\"[redacted]\"}"), std::string::npos)
        << all[1];
    EXPECT_EQ(all[1].find("abc"), std::string::npos);
}

TEST_F(LoggingTest, BadOptionsAreClearErrors) {
    auto message_of = [](const LogOptions& options) -> std::string {
        try {
            configure_logging(options);
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        ADD_FAILURE() << "expected an error";
        return {};
    };
    EXPECT_NE(message_of({"loud", "json", ""}).find("log level \"loud\""), std::string::npos);
    EXPECT_NE(message_of({"info", "xml", ""}).find("log format \"xml\""), std::string::npos);
    // A log file under a regular file cannot be created.
    { std::ofstream(dir_ / "plain") << "x"; }
    auto msg = message_of({"info", "json", (dir_ / "plain" / "toolport.log").string()});
    EXPECT_NE(msg.find("cannot open the log file"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);

    EXPECT_TRUE(is_log_level("warn"));
    EXPECT_TRUE(is_log_level("off"));
    EXPECT_FALSE(is_log_level("WARN"));
    EXPECT_TRUE(is_log_format("text"));
    EXPECT_FALSE(is_log_format(""));
}

// A line logged while a request's code runs names its trace and span (async/log_ids.hpp);
// others do not.
TEST_F(LoggingTest, LinesOfARequestCarryItsTraceAndSpanIds) {
    toolport::LogIds ids;
    for (std::size_t i = 0; i < ids.trace_id.size(); ++i) ids.trace_id[i] = static_cast<std::uint8_t>(0xa0 + i);
    for (std::size_t i = 0; i < ids.span_id.size(); ++i) ids.span_id[i] = static_cast<std::uint8_t>(0x10 + i);
    ids.set = true;
    const std::string trace_hex = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", span_hex = "1011121314151617";

    configure_logging({"info", "json", file_});
    spdlog::info("before");
    {
        toolport::LogIdsScope scope(ids);
        spdlog::warn("inside");
        log_event(EventLevel::warn, "tool_call", {{"tool", "t"}});
        log_event(EventLevel::warn, "tool_call", {{"tool", "t"}, {"trace_id", "given"}});
    }
    spdlog::info("after");
    auto rows = json_lines();
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_FALSE(rows[0].contains("trace_id"));
    EXPECT_EQ(rows[1]["trace_id"], trace_hex);
    EXPECT_EQ(rows[1]["span_id"], span_hex);
    EXPECT_EQ(rows[2]["trace_id"], trace_hex);
    EXPECT_EQ(rows[2]["span_id"], span_hex);
    EXPECT_EQ(rows[3]["trace_id"], "given") << "an event's own ids win";
    EXPECT_FALSE(rows[4].contains("trace_id"));

    configure_logging({"info", "text", file_});
    {
        toolport::LogIdsScope scope(ids);
        spdlog::warn("text inside");
    }
    spdlog::warn("text after");
    auto all = lines();
    ASSERT_EQ(all.size(), 7u);
    EXPECT_NE(all[5].find("[toolport] [warning] text inside trace_id=" + trace_hex + " span_id=" + span_hex),
              std::string::npos)
        << all[5];
    EXPECT_EQ(all[6].find("trace_id"), std::string::npos) << all[6];
}
