// The JSON files of the JSON-Schema-Test-Suite (../shared/data), as test input for code that
// reads or writes any JSON: thousands of documents with unicode, floats, big numbers and
// nesting.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace toolport::test_support {

struct SuiteFile {
    std::filesystem::path path;
    std::string text;
};

// Every *.json file under the suite's tests/ folder; empty when the data is missing.
inline std::vector<SuiteFile> schema_suite_files() {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(TOOLPORT_SHARED_DATA_DIR) / "json-schema-test-suite" / "tests";
    std::vector<SuiteFile> files;
    if (!fs::is_directory(root)) return files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        files.push_back({entry.path(), text.str()});
    }
    return files;
}

}  // namespace toolport::test_support
