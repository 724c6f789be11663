// Shared by the spec runner's tests: a scripted Target with a fake clock, and a temporary
// folder to write spec files into.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spec/spec.hpp"
#include "util/json.hpp"

#define EXPECT_CONTAINS(haystack, needle)                            \
    EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
        << "looked for: " << (needle) << "\nin: " << (haystack)
#define EXPECT_NOT_CONTAINS(haystack, needle)                        \
    EXPECT_EQ(std::string(haystack).find(needle), std::string::npos) \
        << "did not expect: " << (needle) << "\nin: " << (haystack)

namespace spec_test {

namespace fs = std::filesystem;
using toolport::Json;

inline Json text_result(const std::string& text, bool is_error = false) {
    Json result = {{"content", Json::array({{{"type", "text"}, {"text", text}}})}};
    if (is_error) result["isError"] = true;
    return result;
}

// Answers from scripts; every call advances the fake clock by `call_duration`.
class FakeTarget : public toolport::spec::Target {
public:
    using Handler = std::function<Json(const Json& arguments)>;

    std::map<std::string, Handler> tools;
    std::map<std::string, Handler> prompts;
    std::map<std::string, Json> resources;
    std::chrono::milliseconds call_duration{5};
    std::chrono::steady_clock::time_point clock{};
    std::vector<std::string> calls;  // "tool:name", "prompt:name", "resource:uri", "list_tools"
    std::vector<std::chrono::milliseconds> timeouts;

    void tool_text(const std::string& name, const std::string& text, bool is_error = false) {
        tools[name] = [text, is_error](const Json&) { return text_result(text, is_error); };
    }

    toolport::spec::RunOptions options() {
        toolport::spec::RunOptions o;
        o.now = [this] { return clock; };
        return o;
    }

    Json list_tools() override {
        calls.push_back("list_tools");
        Json list = Json::array();
        for (const auto& [name, handler] : tools)
            list.push_back({{"name", name}, {"inputSchema", {{"type", "object"}}}});
        return list;
    }
    Json call_tool(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) override {
        calls.push_back("tool:" + name);
        timeouts.push_back(timeout);
        clock += call_duration;
        auto it = tools.find(name);
        if (it == tools.end()) throw toolport::spec::TargetError(-32602, "Unknown tool: " + name);
        return it->second(arguments);
    }
    Json get_prompt(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) override {
        calls.push_back("prompt:" + name);
        timeouts.push_back(timeout);
        clock += call_duration;
        auto it = prompts.find(name);
        if (it == prompts.end()) throw toolport::spec::TargetError(-32602, "Unknown prompt: " + name);
        return it->second(arguments);
    }
    Json read_resource(const std::string& uri, std::chrono::milliseconds timeout) override {
        calls.push_back("resource:" + uri);
        timeouts.push_back(timeout);
        clock += call_duration;
        auto it = resources.find(uri);
        if (it == resources.end()) throw toolport::spec::TargetError(-32002, "Resource not found: " + uri);
        return it->second;
    }
};

// A fresh folder per test, removed afterwards.
class SpecFilesTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("toolport-spec-test-" + std::to_string(::getpid()) + "-" +
                                            info->test_suite_name() + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    fs::path write(const std::string& name, const std::string& text) {
        fs::path path = dir_ / name;
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    std::string read(const std::string& name) {
        std::ifstream in(dir_ / name, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    toolport::spec::LoadedSpecs load(const std::string& name, const std::string& text) {
        return toolport::spec::load_spec_files(std::vector<fs::path>{write(name, text)});
    }

    // Loads one spec file that must be valid.
    toolport::spec::Spec load_one(const std::string& text, const std::string& name = "spec.yaml") {
        auto loaded = load(name, text);
        EXPECT_EQ(loaded.entries.size(), 1u);
        if (loaded.entries.empty()) return {};
        if (auto* error = std::get_if<toolport::spec::LoadError>(&loaded.entries[0])) {
            std::string all;
            for (const auto& p : error->problems) all += p + "\n";
            ADD_FAILURE() << "unexpected load error:\n" << all;
            return {};
        }
        return std::get<toolport::spec::Spec>(loaded.entries[0]);
    }

    // Loads one spec file that must be invalid; returns its problems joined with "\n".
    std::string load_error(const std::string& text, const std::string& name = "spec.yaml") {
        auto loaded = load(name, text);
        EXPECT_EQ(loaded.entries.size(), 1u);
        if (loaded.entries.empty()) return {};
        auto* error = std::get_if<toolport::spec::LoadError>(&loaded.entries[0]);
        if (!error) {
            ADD_FAILURE() << "expected a load error for:\n" << text;
            return {};
        }
        std::string all;
        for (const auto& p : error->problems) all += (all.empty() ? "" : "\n") + p;
        return all;
    }

    // Runs one spec file against `target` and returns its only result.
    toolport::spec::SpecResult run_one(const std::string& text, FakeTarget& target, toolport::spec::RunOptions options) {
        auto loaded = load("spec.yaml", text);
        auto summary = toolport::spec::run_specs(
            loaded, [&](const std::string&) -> toolport::spec::Target& { return target; }, options);
        EXPECT_EQ(summary.results.size(), 1u);
        if (summary.results.empty()) return {};
        return summary.results[0];
    }
    toolport::spec::SpecResult run_one(const std::string& text, FakeTarget& target) {
        return run_one(text, target, target.options());
    }

    fs::path dir_;
};

// The failure messages of a result, one per line (for EXPECT_THAT-style substring checks).
inline std::string failures(const toolport::spec::SpecResult& result) {
    std::string all;
    for (const auto& p : result.problems) all += p + "\n";
    for (const auto& a : result.assertions) {
        if (!a.passed) all += a.type + ": " + a.message + "\n";
    }
    return all;
}

}  // namespace spec_test
