// Runs the official JSON-Schema-Test-Suite (draft-07 and draft 2020-12) against
// toolport::schema. The suite is read from the shared data directory, never copied into the
// repository.
//
// Required tests (the top-level files of each draft directory) must all pass. The optional/
// tests (ECMA-262 regex details, formats, bignums, cross-draft references, ...) are run and
// their pass rate is printed, but they do not fail the build.
//
// Each test is checked with both is_valid() and validate(), which must agree.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "schema/json_schema.hpp"
#include "util/json.hpp"

namespace {

namespace fs = std::filesystem;
using toolport::Json;
using toolport::schema::CompiledSchema;
using toolport::schema::Dialect;
using toolport::schema::Options;
using toolport::schema::SchemaError;

const fs::path& suite_root() {
    static const fs::path root = fs::path(TOOLPORT_SHARED_DATA_DIR) / "json-schema-test-suite";
    return root;
}

Json load_json(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return Json::parse(in);
}

// The suite's remotes/ documents, registered the way the suite expects: the file
// remotes/<path> is the document http://localhost:1234/<path>.
const std::map<std::string, Json>& remote_documents() {
    static const std::map<std::string, Json> documents = [] {
        std::map<std::string, Json> docs;
        const fs::path remotes = suite_root() / "remotes";
        for (const auto& entry : fs::recursive_directory_iterator(remotes)) {
            if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
            std::string relative = fs::relative(entry.path(), remotes).generic_string();
            docs.emplace("http://localhost:1234/" + relative, load_json(entry.path()));
        }
        return docs;
    }();
    return documents;
}

struct Failure {
    std::string file;
    std::string test_case;
    std::string test;
    std::string detail;
};

struct Tally {
    std::size_t passed = 0;
    std::size_t total = 0;
    std::vector<Failure> failures;
    double seconds = 0;
};

std::vector<fs::path> json_files(const fs::path& dir, bool recursive) {
    std::vector<fs::path> files;
    auto add = [&](const fs::directory_entry& e) {
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    };
    if (recursive) {
        for (const auto& e : fs::recursive_directory_iterator(dir)) add(e);
    } else {
        for (const auto& e : fs::directory_iterator(dir)) add(e);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// Runs every test case of every file; `required` turns mismatches into test failures.
Tally run_files(const std::vector<fs::path>& files, const fs::path& base, Dialect dialect, bool required) {
    Tally tally;
    auto start = std::chrono::steady_clock::now();
    for (const fs::path& file : files) {
        const std::string file_name = fs::relative(file, base).generic_string();
        // The suite asks runners to turn format assertion on for optional/format.
        const bool assert_format = file_name.starts_with("optional/format/");
        const Json cases = load_json(file);
        for (const Json& test_case : cases) {
            const std::string case_description = test_case.at("description").get<std::string>();
            Options options;
            options.default_dialect = dialect;
            options.documents = remote_documents();
            options.assert_format = assert_format;
            CompiledSchema schema;
            std::string compile_error;
            try {
                schema = toolport::schema::compile(test_case.at("schema"), options);
            } catch (const SchemaError& e) {
                compile_error = e.what();
            }
            for (const Json& test : test_case.at("tests")) {
                const std::string test_description = test.at("description").get<std::string>();
                SCOPED_TRACE(file_name + " / " + case_description + " / " + test_description);
                const bool expected = test.at("valid").get<bool>();
                ++tally.total;
                std::string detail;
                if (!compile_error.empty()) {
                    detail = "SchemaError: " + compile_error;
                } else {
                    const bool quick = schema.is_valid(test.at("data"));
                    const auto full = schema.validate(test.at("data"));
                    if (quick != full.valid) {
                        detail = "is_valid() and validate() disagree";
                    } else if (quick != expected) {
                        detail = std::string("expected ") + (expected ? "valid" : "invalid") + ", got " +
                                 (quick ? "valid" : "invalid");
                        if (!full.errors.empty()) detail += " (first error: " + full.errors.front().message + ")";
                    } else if (!quick && full.errors.empty() && !full.truncated) {
                        detail = "invalid, but validate() reported no error";
                    }
                }
                if (detail.empty()) {
                    ++tally.passed;
                } else {
                    tally.failures.push_back({file_name, case_description, test_description, detail});
                    if (required) ADD_FAILURE() << detail;
                }
            }
        }
    }
    tally.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return tally;
}

void print(const char* label, const Tally& t, bool list_failures) {
    std::printf("%s: %zu/%zu tests pass (%.1f%%) in %.2f s\n", label, t.passed, t.total,
                t.total ? 100.0 * static_cast<double>(t.passed) / static_cast<double>(t.total) : 100.0, t.seconds);
    if (!list_failures) return;
    for (const Failure& f : t.failures) {
        std::printf("  FAIL %s / %s / %s: %s\n", f.file.c_str(), f.test_case.c_str(), f.test.c_str(), f.detail.c_str());
    }
}

void run_required(const char* draft, Dialect dialect) {
    const fs::path dir = suite_root() / "tests" / draft;
    ASSERT_TRUE(fs::is_directory(dir)) << "JSON-Schema-Test-Suite not found at " << dir;
    // No skip list: every required test of the suite must pass.
    Tally t = run_files(json_files(dir, /*recursive=*/false), dir, dialect, /*required=*/true);
    print((std::string(draft) + " required").c_str(), t, true);
    EXPECT_GT(t.total, 500u);
    EXPECT_EQ(t.passed, t.total);
}

void run_optional(const char* draft, Dialect dialect, bool list_failures) {
    const fs::path dir = suite_root() / "tests" / draft;
    ASSERT_TRUE(fs::is_directory(dir / "optional")) << "JSON-Schema-Test-Suite not found at " << dir;
    Tally t = run_files(json_files(dir / "optional", /*recursive=*/true), dir, dialect, /*required=*/false);
    print((std::string(draft) + " optional").c_str(), t, list_failures);
    // Reported, not enforced: optional tests cover behaviour the specification leaves open.
}

bool list_optional_failures() { return std::getenv("TOOLPORT_SCHEMA_LIST_OPTIONAL") != nullptr; }

TEST(JsonSchemaSuite, Draft7Required) { run_required("draft7", Dialect::draft7); }

TEST(JsonSchemaSuite, Draft202012Required) { run_required("draft2020-12", Dialect::draft2020_12); }

TEST(JsonSchemaSuite, Draft7Optional) { run_optional("draft7", Dialect::draft7, list_optional_failures()); }

TEST(JsonSchemaSuite, Draft202012Optional) {
    run_optional("draft2020-12", Dialect::draft2020_12, list_optional_failures());
}

}  // namespace
